//! Writes paced by value-log garbage: RocksDB's pending-compaction-bytes slowdown, for the
//! value logs.
//!
//! Value-log GC frees the space of overwritten values, one job at a time. A writer that
//! overwrites large values faster than that job reclaims them left logs of three times the
//! live data after 35 s at 16 KB (docs/results/2026-11-28/session9.md), and nothing bounded
//! them but the disk. So while garbage exceeds `Options::vlog_gc_slowdown_garbage_ratio` of
//! all value-log bytes, writes are paced as in a flush slowdown (`stall.rs`): at the flush
//! pace's base (what flushes drain per second) times a share that falls linearly from 1 at
//! that ratio to `MIN_PACE_SHARE` halfway from it to 1. A proportional controller: the
//! garbage settles where paced writes make it as fast as the GC frees it, higher the slower
//! the GC is next to the writers, and the pace changes by small steps as the share moves, so
//! writes slow down smoothly. Pacing at the GC's own rate instead (the bytes a job frees per
//! second of its work) cut a 16 KB writer from 1.1 GB/s to a tenth at once: four seconds under
//! half the mean in 35 s (docs/results/2026-11-28/session13.md).
//!
//! The GC itself never rests for this slowdown (it rests only while flushes are behind,
//! `compaction/vlog_gc.rs`): it is what ends it.
//!
//! Invariant: `share_ppm` is the garbage share of the current version's value logs, updated
//! with every version installed (`state.rs`), read by writers without a lock.

use super::stall::MIN_PACE_SHARE;
use super::state::DbInner;
use crate::compaction::vlog_gc::garbage_of_all;
use crate::options::MIN_DELAYED_WRITE_RATE;
use crate::version::Version;
use std::sync::atomic::{AtomicU64, Ordering};

/// The garbage share of the value logs, as writers see it.
#[derive(Debug, Default)]
pub(crate) struct GarbageWatch {
    /// Garbage share of all value-log bytes in the current version, in millionths.
    share_ppm: AtomicU64,
}

impl GarbageWatch {
    /// Records the garbage share of `version`'s value logs.
    pub fn note_version(&self, version: &Version) {
        let (garbage, total) = garbage_of_all(version, &version.vlog_live_bytes());
        let ppm = garbage.saturating_mul(1_000_000) / total.max(1);
        self.share_ppm.store(ppm, Ordering::Relaxed);
    }

    /// The garbage share of all value-log bytes (0..=1).
    pub fn share(&self) -> f64 {
        self.share_ppm.load(Ordering::Relaxed) as f64 / 1e6
    }

    /// Sets the share as if a version with that much garbage had been installed.
    #[cfg(test)]
    pub fn set_share_for_test(&self, share: f64) {
        self.share_ppm
            .store((share * 1e6) as u64, Ordering::Relaxed);
    }
}

impl DbInner {
    /// True while value-log garbage exceeds `vlog_gc_slowdown_garbage_ratio` of the logs.
    pub(crate) fn garbage_slowdown_due(&self) -> bool {
        let limit = self.opts.vlog_gc_slowdown_garbage_ratio;
        limit < 1.0 && self.stall.garbage.share() > limit
    }

    /// The pace of writes while garbage slows them, in PM Log bytes per second (module docs):
    /// `flush_base`, the flush pace's base (what flushes drain), times the garbage share's
    /// step down.
    pub(crate) fn garbage_write_rate(&self, flush_base: u64) -> u64 {
        let start = self.opts.vlog_gc_slowdown_garbage_ratio;
        let stop = start + (1.0 - start) / 2.0;
        let share = garbage_pace_share(self.stall.garbage.share(), start, stop);
        ((flush_base as f64 * share) as u64).max(MIN_DELAYED_WRITE_RATE)
    }
}

/// The share of the reclaim rate writes get at a garbage share of `garbage`, for a slowdown
/// starting at `start` and deepest at `stop`: linear from 1 to 0, kept within
/// `MIN_PACE_SHARE..=1`.
fn garbage_pace_share(garbage: f64, start: f64, stop: f64) -> f64 {
    let share = (stop - garbage) / (stop - start).max(f64::EPSILON);
    share.clamp(MIN_PACE_SHARE, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::{VersionEdit, VlogMeta};

    #[test]
    fn the_share_counts_log_bytes_no_table_references() {
        let edit = VersionEdit {
            new_vlogs: vec![VlogMeta {
                number: 7,
                total_bytes: 1000,
            }],
            ..VersionEdit::default()
        };
        let version = Version::default().apply(&edit).unwrap();
        let watch = GarbageWatch::default();
        assert_eq!(watch.share(), 0.0);
        watch.note_version(&version);
        assert_eq!(
            watch.share(),
            1.0,
            "a log no table references is all garbage"
        );
    }

    #[test]
    fn the_pace_falls_linearly_from_the_slowdown_ratio_to_halfway_to_one() {
        assert_eq!(garbage_pace_share(0.5, 0.5, 0.75), 1.0);
        assert!((garbage_pace_share(0.625, 0.5, 0.75) - 0.5).abs() < 1e-9);
        assert_eq!(garbage_pace_share(0.9, 0.5, 0.75), MIN_PACE_SHARE);
    }
}
