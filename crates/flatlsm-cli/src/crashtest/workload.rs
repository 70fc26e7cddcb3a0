//! What the crash-test child writes: key names, self-describing values and random operations.
//!
//! A value starts with a 24-byte tag (run, operation index, thread, key) followed by filler
//! derived from the tag, so the parent can tell from recovered bytes alone which operation
//! wrote them and whether every byte is intact.

use rand::Rng;

/// Bytes of the tag at the start of every value.
pub const TAG_LEN: usize = 24;

/// Identifies one write: the child run that issued it and its index in the thread's journal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// Child run (0-based) that issued the operation.
    pub run: u32,
    /// Index of the operation in that run's journal of its thread.
    pub op: u64,
}

/// One update inside an operation (a single put/delete is a batch of one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Update {
    /// Put of `len` bytes on key index `key`.
    Put {
        /// Key index within the thread's key range.
        key: u32,
        /// Value length in bytes.
        len: usize,
    },
    /// Delete of key index `key`.
    Delete {
        /// Key index within the thread's key range.
        key: u32,
    },
}

impl Update {
    /// The key index this update touches.
    pub fn key(&self) -> u32 {
        match self {
            Update::Put { key, .. } | Update::Delete { key } => *key,
        }
    }
}

/// The user key of key index `key` of `thread` (threads own disjoint key ranges).
pub fn user_key(thread: u32, key: u32) -> Vec<u8> {
    format!("t{thread:03}k{key:08}").into_bytes()
}

/// Parses a user key written by [`user_key`].
pub fn parse_user_key(k: &[u8]) -> Option<(u32, u32)> {
    let s = std::str::from_utf8(k).ok()?;
    let rest = s.strip_prefix('t')?;
    let (t, key) = rest.split_once('k')?;
    if t.len() != 3 || key.len() != 8 {
        return None;
    }
    Some((t.parse().ok()?, key.parse().ok()?))
}

/// The value `version` writes on key `key` of `thread`, `len` bytes long (`len >= TAG_LEN`).
pub fn make_value(version: Version, thread: u32, key: u32, len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len);
    v.extend_from_slice(&u64::from(version.run).to_le_bytes());
    v.extend_from_slice(&version.op.to_le_bytes());
    v.extend_from_slice(&thread.to_le_bytes());
    v.extend_from_slice(&key.to_le_bytes());
    let mut x = version.op ^ (u64::from(version.run) << 40) ^ (u64::from(key) << 20) ^ 0x9e37;
    while v.len() < len {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        v.push((x >> 56) as u8);
    }
    v.truncate(len.max(TAG_LEN));
    v
}

/// The version recorded in a recovered value, if every byte is what that version wrote.
pub fn parse_value(v: &[u8], thread: u32, key: u32) -> Option<Version> {
    if v.len() < TAG_LEN {
        return None;
    }
    let u64_at = |o: usize| u64::from_le_bytes(v[o..o + 8].try_into().unwrap_or([0; 8]));
    let version = Version {
        run: u32::try_from(u64_at(0)).ok()?,
        op: u64_at(8),
    };
    (make_value(version, thread, key, v.len()) == v).then_some(version)
}

/// Shape of the random workload.
#[derive(Clone, Copy, Debug)]
pub struct WorkloadShape {
    /// Keys per thread.
    pub keys_per_thread: u32,
    /// Smallest value length.
    pub min_value: usize,
    /// Largest value length.
    pub max_value: usize,
    /// Percentage of operations written with `sync: true`.
    pub sync_percent: u32,
}

/// A random operation: 70% single update, 30% batch of 2..=8 updates; each update is a delete
/// with probability 20%, otherwise a put. Returns the updates
/// and whether the operation is synced.
pub fn random_op(rng: &mut impl Rng, shape: &WorkloadShape) -> (Vec<Update>, bool) {
    let n = match rng.gen_range(0..100) {
        0..=69 => 1,
        _ => rng.gen_range(2..=8),
    };
    let updates = (0..n)
        .map(|_| {
            let key = rng.gen_range(0..shape.keys_per_thread);
            if rng.gen_range(0..100) < 20 {
                Update::Delete { key }
            } else {
                let len = rng.gen_range(shape.min_value..=shape.max_value);
                Update::Put { key, len }
            }
        })
        .collect();
    (updates, rng.gen_range(0..100) < shape.sync_percent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_keys_round_trip() {
        let v = Version { run: 3, op: 77 };
        let val = make_value(v, 2, 9, 600);
        assert_eq!(val.len(), 600);
        assert_eq!(parse_value(&val, 2, 9), Some(v));
        assert_eq!(parse_value(&val, 2, 8), None);
        let mut bad = val.clone();
        bad[300] ^= 1;
        assert_eq!(parse_value(&bad, 2, 9), None);
        assert_eq!(parse_user_key(&user_key(5, 1234)), Some((5, 1234)));
    }
}
