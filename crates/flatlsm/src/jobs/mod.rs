//! Background work: flushes (write buffers into level 0 or a design's store), compactions
//! (the tree's and the design's store's), value-log GC, the purge of obsolete files, the
//! threads that run them, and checkpoints (which flush first).
//!
//! Room: `background.rs` (the threads, flush jobs, waits for room), `purge.rs` (deleting
//! obsolete files), `compact.rs` (tree compactions and `compact_range`), `store_jobs.rs`
//! (flushes into and compactions out of a design's store), `vlog_gc_job.rs`, `host.rs` (the
//! `JobHost` a job sees of the database), `checkpoint.rs`. Every job ends through the one commit protocol
//! (`DbInner::install`, in `db/state.rs`).
//!
//! Layering: above `db` (jobs run on its state); `db` reaches the two jobs it needs in its own
//! threads — a stalled writer's inline flush when no background thread runs, and the flushes
//! due at close — through `DbInner::jobs` ([`HOOKS`]), which recovery sets when it builds the
//! state.

pub(crate) mod background;
mod checkpoint;
#[cfg(test)]
mod checkpoint_tests;
pub(crate) mod compact;
mod host;
pub(crate) mod purge;
pub(crate) mod store_jobs;
pub(crate) mod vlog_gc_job;
#[cfg(test)]
mod vlog_gc_tests;

pub use checkpoint::CheckpointOptions;

use crate::db::state::JobHooks;
use crate::db::Db;
use crate::error::Result;

/// The jobs `db` runs in its own threads (see the module docs).
pub(crate) const HOOKS: JobHooks = JobHooks {
    flush_one: background::flush_one,
    finish_due_flushes: background::finish_due_flushes,
};

impl Db {
    /// Seals the mutable PMTable and waits until every PMTable is flushed to the Ordered-L1.
    pub fn flush(&self) -> Result<()> {
        self.check_open()?;
        self.inner.check_writable()?;
        background::flush_all(&self.inner)
    }

    /// Flushes, then compacts the L1 files overlapping `[begin, end]` (all if `None`) into L2.
    pub fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        self.flush()?;
        compact::compact_range(&self.inner, begin, end)
    }

    /// Waits until no flush, compaction or value-log GC is due (for benchmarks' "settled").
    /// The caller waits rather than writes, so the value-log GC works to the quiet target
    /// (`Options::vlog_gc_quiet_garbage_ratio`), as it would once writes are quiet.
    pub fn wait_for_background_work(&self) -> Result<()> {
        if self.inner.files.read_only() {
            return self.check_open(); // no background work in a read-only database
        }
        background::wait_idle(&self.inner)
    }
}
