//! The `novelsm` profile (NoveLSM, ATC 2018; the FlatLSM paper's "PM Memtable", Figs. 18–19):
//! persistent skiplists in PM as memtables, durable by themselves (no write-ahead log), over
//! the leveled SSD tree of `leveled.rs`, whose options, policy and stall triggers it shares.
//!
//! Room: this file (the design), `buffer/skiplist.rs` (the skiplist as a write buffer),
//! `buffer/recover/skiplist.rs` (reopening the skiplists at open) and
//! `recovery/skiplist_recovery.rs` (which of them open keeps or refuses); the skiplist itself is
//! core's `pmskiplist`.

use super::leveled::LeveledDesign;
use super::{BufferKind, Design, FlushShape};
use crate::compaction::policy::CompactionPolicy;
use crate::error::Result;
use crate::options::Options;
use crate::pm::PmDeviceRef;
use crate::version::Version;
use std::path::Path;

/// NoveLSM: PM skiplists over the leveled tree.
pub(crate) struct NoveLsmDesign {
    pub tree: LeveledDesign,
}

impl Design for NoveLsmDesign {
    /// The PM directory: the skiplists are the durable copy.
    fn write_buffer_device(&self, path: &Path, opts: &Options) -> Result<PmDeviceRef> {
        crate::layout::open_pm_device(path, opts)
    }

    fn buffer_kind(&self) -> BufferKind {
        BufferKind::PmSkiplist
    }

    fn uses_pm_dir(&self) -> bool {
        true
    }

    fn compaction_policy(&self, opts: &Options) -> Box<dyn CompactionPolicy> {
        self.tree.compaction_policy(opts)
    }

    fn level0_stop_runs(&self, opts: &Options) -> usize {
        self.tree.level0_stop_runs(opts)
    }

    fn level0_slowdown_runs(&self, opts: &Options) -> Option<usize> {
        self.tree.level0_slowdown_runs(opts)
    }

    fn level0_runs(&self, v: &Version) -> usize {
        self.tree.level0_runs(v)
    }

    fn flush_shape(&self, opts: &Options) -> FlushShape {
        self.tree.flush_shape(opts)
    }
}
