//! Quiet: no write buffer was sealed for [`QUIET_AFTER`], none waits for its flush, and the
//! foreground (reads and writes) ran below [`IDLE_OPS_PER_SEC`] for as long.
//!
//! Background work that a burst would compete with for the device and the cores waits for
//! quiet (`Options::quiet_cleanup`): FlatLSM's policy merges the level-0 runs into L1
//! (`compaction/policy/flat.rs`), which lets compaction see the older versions the runs hid;
//! the value-log GC collects down to `Options::vlog_gc_quiet_garbage_ratio`
//! (`jobs/vlog_gc_job.rs`); and files still naming a collected log are rewritten
//! (`compaction/policy/redirects.rs`). What a burst left behind then stops taking page cache
//! and time from reads, as RocksDB's compactions go on after a load. The signal is the switch
//! of the mutable buffer, not each write: a writer steadily filling buffers never looks quiet,
//! and no shared state is touched on the write path (the switch takes the write lock anyway).
//!
//! The foreground counts too: this work is optional (the busy targets already bound space and
//! level 0), and on a machine of few cores it took a core from a read phase right after a
//! load (a server's GETs after its SETs: the merge, GC and redirect rewrites ran in the middle
//! of them, docs/design-decisions.md "Cleanup waits for an idle foreground"). Reads that
//! search level 0 in vain still merge it early (`read_charges.rs`): that work pays for itself.
//! Operations are counted by sampling, one in [`SAMPLE_ONE_IN`] per thread, so the read path
//! touches no shared line on most calls.
//!
//! Invariants: `last_switch` and `last_busy` only move forward; both start at open, so a
//! database opened for a load is not quiet before its first switch (a load's first buffer
//! fills within a second).

use super::read_charges::{sampled, SAMPLE_ONE_IN};
use super::state::DbInner;
use crate::pmtable::pool::QUIET_AFTER;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Foreground operations per second below which the foreground counts as idle: about 1% of
/// a core at a few microseconds per operation.
pub(crate) const IDLE_OPS_PER_SEC: f64 = 2_000.0;

/// Least time between two measurements of the foreground's rate (fewer samples are noise).
const RATE_WINDOW: Duration = Duration::from_millis(100);

/// When the mutable write buffer was last switched (or the database opened), and when the
/// foreground was last seen busy.
#[derive(Debug)]
pub(crate) struct QuietWatch {
    last_switch: Mutex<Instant>,
    quiet_after: Duration,
    /// Foreground operations, estimated from samples.
    ops: AtomicU64,
    rate: Mutex<Rate>,
}

/// The last measurement of the foreground's rate.
#[derive(Debug)]
struct Rate {
    measured_at: Instant,
    ops_then: u64,
    last_busy: Instant,
}

impl Default for QuietWatch {
    fn default() -> Self {
        Self::new(QUIET_AFTER)
    }
}

impl QuietWatch {
    /// A watch that calls all quiet once no switch happened, and the foreground idled, for
    /// `quiet_after`.
    pub fn new(quiet_after: Duration) -> Self {
        let now = Instant::now();
        QuietWatch {
            last_switch: Mutex::new(now),
            quiet_after,
            ops: AtomicU64::new(0),
            rate: Mutex::new(Rate {
                measured_at: now,
                ops_then: 0,
                last_busy: now,
            }),
        }
    }

    /// Records a foreground operation (a read's pin, a write): one call in
    /// [`SAMPLE_ONE_IN`] counts for that many.
    pub fn note_op(&self) {
        if sampled() {
            self.ops.fetch_add(SAMPLE_ONE_IN, Ordering::Relaxed);
        }
    }

    /// Records a switch of the mutable write buffer.
    pub fn note_switch(&self) {
        *self.last_switch.lock() = Instant::now();
    }

    /// True once no switch happened for `quiet_after` and the foreground was idle as long
    /// (the caller checks the flush backlog).
    pub fn quiet(&self) -> bool {
        let idle_since = self.foreground_idle_since();
        self.last_switch.lock().elapsed() >= self.quiet_after
            && idle_since.elapsed() >= self.quiet_after
    }

    /// When the foreground was last measured busy (or the watch started): measures its rate
    /// since the previous measurement once [`RATE_WINDOW`] has passed.
    fn foreground_idle_since(&self) -> Instant {
        let mut rate = self.rate.lock();
        let now = Instant::now();
        let span = now.duration_since(rate.measured_at);
        if span >= RATE_WINDOW {
            let ops = self.ops.load(Ordering::Relaxed);
            let per_sec = (ops - rate.ops_then) as f64 / span.as_secs_f64();
            if per_sec >= IDLE_OPS_PER_SEC {
                rate.last_busy = now;
            }
            (rate.measured_at, rate.ops_then) = (now, ops);
        }
        rate.last_busy
    }
}

/// What the writers are doing, as a background job sees it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Writers {
    /// Writing: jobs keep to the targets that let flushes keep up.
    Busy,
    /// Quiet, or the caller waits for the background work (`Db::wait_for_background_work`)
    /// rather than writes: level-0 runs are merged, the value-log GC works to
    /// `vlog_gc_quiet_garbage_ratio`, and files naming collected logs are rewritten.
    Quiet,
}

impl DbInner {
    /// True once no write buffer was switched for [`QUIET_AFTER`] and the foreground idled as
    /// long (and quiet cleanup is on), whatever waits for its flush: then the flush threads
    /// flush a lone immutable buffer.
    pub(crate) fn quiet_buffers(&self) -> bool {
        self.opts.quiet_cleanup && self.quiet.quiet()
    }

    /// [`Writers::Quiet`] once no buffer switched and the foreground idled for [`QUIET_AFTER`],
    /// and none waits to be flushed; always [`Writers::Busy`] with `Options::quiet_cleanup`
    /// off.
    pub(crate) fn writers(&self) -> Writers {
        let quiet = self.quiet.quiet() && self.versions.sv().imms.is_empty();
        self.quiet_unless_turned_off(quiet)
    }

    /// The writers as `Db::wait_for_background_work` sees them: its caller waits rather than
    /// writes, so quiet, unless `Options::quiet_cleanup` is off.
    pub(crate) fn writers_while_settling(&self) -> Writers {
        self.quiet_unless_turned_off(true)
    }

    fn quiet_unless_turned_off(&self, quiet: bool) -> Writers {
        match quiet && self.opts.quiet_cleanup {
            true => Writers::Quiet,
            false => Writers::Busy,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_quiet_only_once_no_buffer_was_switched_for_the_quiet_time() {
        let watch = QuietWatch::new(Duration::from_millis(50));
        assert!(!watch.quiet(), "not quiet right after open");
        std::thread::sleep(Duration::from_millis(60));
        assert!(watch.quiet());
        watch.note_switch();
        assert!(!watch.quiet(), "a switch ends the quiet");
        assert!(QuietWatch::new(Duration::ZERO).quiet());
    }

    #[test]
    fn a_busy_foreground_keeps_writes_from_looking_quiet_until_it_idles_as_long() {
        let watch = QuietWatch::new(Duration::from_millis(300));
        let busy_until = Instant::now() + Duration::from_millis(400);
        while Instant::now() < busy_until {
            (0..1000).for_each(|_| watch.note_op());
            assert!(!watch.quiet(), "busy: reads at millions per second");
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(150));
        assert!(!watch.quiet(), "idle for less than the quiet time");
        std::thread::sleep(Duration::from_millis(400));
        assert!(watch.quiet(), "idle for longer than the quiet time");
    }
}
