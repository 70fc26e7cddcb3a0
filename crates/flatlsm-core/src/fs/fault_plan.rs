//! [`FaultPlan`]: which calls of a [`super::CrashFs`] fail, and how.
//!
//! Calls are numbered in the order they reach the file system (0, 1, ...); only calls that
//! change something count (create, open for append, append, sync, rename, remove, directory
//! sync). A plan fails one chosen call, every call from some point on, or each call with a
//! seeded probability, so a failing test can be replayed exactly.

use std::io;

/// The error an injected fault produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// `ENOSPC`, as on a full disk.
    NoSpace,
    /// `EIO`, as on a failing device.
    Io,
    /// An append writes only the first half of its bytes, then fails with `EIO`; on other calls
    /// the same as [`FaultKind::Io`].
    ShortWrite,
}

impl FaultKind {
    /// The `io::Error` this fault reports.
    pub fn error(self) -> io::Error {
        match self {
            FaultKind::NoSpace => io::Error::from_raw_os_error(libc::ENOSPC),
            FaultKind::Io | FaultKind::ShortWrite => io::Error::from_raw_os_error(libc::EIO),
        }
    }
}

/// Which calls fail.
#[derive(Clone, Debug, Default)]
pub enum FaultPlan {
    /// No call fails.
    #[default]
    Never,
    /// Exactly call number `call` fails.
    At {
        /// The call number (as counted by [`super::CrashFs::call_count`]).
        call: u64,
        /// The fault.
        kind: FaultKind,
    },
    /// Every call numbered `from` or later fails (a device that died).
    From {
        /// The first failing call.
        from: u64,
        /// The fault.
        kind: FaultKind,
    },
    /// Each call fails with probability `1 / one_in`, chosen by a PRNG seeded with `seed`.
    Random {
        /// Inverse of the failure probability (at least 1).
        one_in: u64,
        /// PRNG seed.
        seed: u64,
        /// The fault.
        kind: FaultKind,
    },
}

impl FaultPlan {
    /// The fault (if any) for call number `call`.
    pub fn fault_for(&self, call: u64) -> Option<FaultKind> {
        match *self {
            FaultPlan::Never => None,
            FaultPlan::At { call: c, kind } => (c == call).then_some(kind),
            FaultPlan::From { from, kind } => (call >= from).then_some(kind),
            FaultPlan::Random { one_in, seed, kind } => {
                mix(seed ^ call.wrapping_mul(0xD6E8_FEB8_6659_FD93))
                    .is_multiple_of(one_in.max(1))
                    .then_some(kind)
            }
        }
    }
}

/// SplitMix64 finaliser: a well-spread hash of `x`.
pub(crate) fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_pick_the_documented_calls() {
        let k = FaultKind::Io;
        assert_eq!(FaultPlan::Never.fault_for(3), None);
        let at = FaultPlan::At { call: 3, kind: k };
        assert_eq!((at.fault_for(2), at.fault_for(3)), (None, Some(k)));
        let from = FaultPlan::From { from: 3, kind: k };
        assert_eq!((from.fault_for(2), from.fault_for(9)), (None, Some(k)));
        let random = FaultPlan::Random {
            one_in: 4,
            seed: 1,
            kind: k,
        };
        let hits = (0..4000).filter(|c| random.fault_for(*c).is_some()).count();
        assert!((700..1300).contains(&hits), "{hits}");
        assert_eq!(
            FaultKind::NoSpace.error().raw_os_error(),
            Some(libc::ENOSPC)
        );
    }
}
