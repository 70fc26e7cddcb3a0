//! Quiet writes: no write buffer was sealed for [`QUIET_AFTER`] and none waits for its flush.
//!
//! Background work that a write burst would compete with for the device waits for quiet
//! writes (`Options::quiet_cleanup`): FlatLSM's policy merges the level-0 runs into L1
//! (`compaction/policy/flat.rs`), which lets compaction see the older versions the runs hid;
//! the value-log GC collects down to `Options::vlog_gc_quiet_garbage_ratio`
//! (`jobs/vlog_gc_job.rs`); and files still naming a collected log are rewritten
//! (`compaction/policy/redirects.rs`). What a burst left behind then stops taking page cache
//! and time from reads, as RocksDB's compactions go on after a load. The signal is the switch
//! of the mutable buffer, not each write: a writer steadily filling buffers never looks quiet,
//! and no shared state is touched on the write path (the switch takes the write lock anyway).
//!
//! Invariant: `last_switch` only moves forward; it starts at open, so a database opened for a
//! load is not quiet before its first switch (a load's first buffer fills within a second).

use super::state::DbInner;
use crate::pmtable::pool::QUIET_AFTER;
use parking_lot::Mutex;
use std::time::{Duration, Instant};

/// When the mutable write buffer was last switched (or the database opened).
#[derive(Debug)]
pub(crate) struct QuietWatch {
    last_switch: Mutex<Instant>,
    quiet_after: Duration,
}

impl Default for QuietWatch {
    fn default() -> Self {
        Self::new(QUIET_AFTER)
    }
}

impl QuietWatch {
    /// A watch that calls writes quiet once no switch happened for `quiet_after`.
    pub fn new(quiet_after: Duration) -> Self {
        QuietWatch {
            last_switch: Mutex::new(Instant::now()),
            quiet_after,
        }
    }

    /// Records a switch of the mutable write buffer.
    pub fn note_switch(&self) {
        *self.last_switch.lock() = Instant::now();
    }

    /// True once no switch happened for `quiet_after` (the caller checks the flush backlog).
    pub fn quiet(&self) -> bool {
        self.last_switch.lock().elapsed() >= self.quiet_after
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
    /// [`Writers::Quiet`] once no buffer switched for [`QUIET_AFTER`] and none waits to be
    /// flushed; always [`Writers::Busy`] with `Options::quiet_cleanup` off.
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
}
