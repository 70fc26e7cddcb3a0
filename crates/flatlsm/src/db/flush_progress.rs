//! [`FlushProgress`]: how far the running flushes have got, for the slowdown's pace
//! (`stall.rs`).
//!
//! Why: a flush removes its tables from the backlog only when it installs, and the first
//! flush's rate is known only then. On a disk slower than a writer filling PM (335 MB/s
//! against 0.6–1.2 GB/s), the first second of a load filled three or four PMTables, the
//! first flush of two took 1.2 s, and meanwhile the backlog counted in whole tables rose
//! towards the stop: the pace fell to a third of the drain rate and that second ran below half
//! of the run's mean (Fig. 9a at 4, 16 and 64 KB on such a disk). With the bytes the running
//! flushes have read counted as they go, the backlog falls while a flush runs and the drain
//! rate is measured before the first flush ends, so the pace follows the disk smoothly.
//!
//! Invariant: `in_flight` is the sum of what the flushes not yet installed reported (each
//! install subtracts its own job's total, [`FlushProgress::installed`]); `total` only grows.
//! Bytes are the entries' key and value bytes (a lower bound of their PM Log bytes).
//!
//! Thread-safety: atomics only; reports come every `compaction::flush::REPORT_BYTES` from each
//! flush thread.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Progress is measured as a rate only after this long, so the first report's burst (entries
/// read from DRAM and PM before the first output block reaches the disk) does not count alone.
const MIN_MEASURED: Duration = Duration::from_millis(250);

/// The running flushes' progress.
#[derive(Default)]
pub(crate) struct FlushProgress {
    /// Bytes read by flushes not yet installed.
    in_flight: AtomicU64,
    /// Bytes read by every flush since open.
    total: AtomicU64,
    /// When the first flush started.
    first_start: OnceLock<Instant>,
}

impl FlushProgress {
    /// A flush job starts (the first one starts the clock of [`FlushProgress::early_rate`]).
    pub fn started(&self) {
        self.first_start.get_or_init(Instant::now);
    }

    /// A flush thread read `bytes` more.
    pub fn read(&self, bytes: u64) {
        self.in_flight.fetch_add(bytes, Ordering::Relaxed);
        self.total.fetch_add(bytes, Ordering::Relaxed);
    }

    /// A flush job that reported `reported` bytes in all was installed (or gave up).
    pub fn installed(&self, reported: u64) {
        let sub = |v: u64| Some(v.saturating_sub(reported));
        let _ = self
            .in_flight
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, sub);
    }

    /// Bytes the flushes not yet installed have read: they leave the backlog as they go.
    pub fn in_flight(&self) -> u64 {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Bytes per second the flushes have read since the first one started, once measured for
    /// [`MIN_MEASURED`]: the drain rate before any flush finished.
    pub fn early_rate(&self) -> Option<u64> {
        let elapsed = self.first_start.get()?.elapsed();
        let total = self.total.load(Ordering::Relaxed);
        if elapsed < MIN_MEASURED || total == 0 {
            return None;
        }
        Some((total as f64 / elapsed.as_secs_f64()) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_leave_the_backlog_as_they_go_and_installs_take_their_own() {
        let p = FlushProgress::default();
        p.started();
        p.read(3 << 20);
        p.read(1 << 20);
        assert_eq!(p.in_flight(), 4 << 20);
        p.installed(3 << 20);
        assert_eq!(p.in_flight(), 1 << 20);
        p.installed(5 << 20);
        assert_eq!(p.in_flight(), 0, "never below zero");
    }

    #[test]
    fn the_early_rate_needs_a_start_and_a_quarter_second() {
        let p = FlushProgress::default();
        p.read(1 << 20);
        assert_eq!(p.early_rate(), None, "no flush started");
        p.started();
        assert_eq!(p.early_rate(), None, "too early to tell");
        std::thread::sleep(MIN_MEASURED);
        let rate = p.early_rate().unwrap();
        assert!(rate > 0 && rate <= 4 << 20, "{rate}");
    }
}
