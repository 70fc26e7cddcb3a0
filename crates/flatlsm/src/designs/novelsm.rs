//! The `novelsm` profile: NoveLSM's persistent memtable (the FlatLSM paper's "PM Memtable",
//! Figs. 18–19). Write buffers are persistent skiplists in PM (`pmskiplist`, one region
//! `NNNNNN.pmskl` each): every insert is durable by itself through the 8-byte atomic link
//! order, so there is no write-ahead log. Flushed buffers go to level 0, and the SSD levels are
//! leveled exactly as in the `leveled` profile (same options, same policy, same stall
//! triggers), so a comparison with `leveled` isolates the memtable.

use super::{BufferKind, Design, FlushShape};
use crate::compaction::policy::leveled::LeveledPolicy;
use crate::compaction::policy::CompactionPolicy;
use crate::designs::leveled::LeveledOptions;
use crate::error::Result;
use crate::options::Options;
use crate::pm::PmDeviceRef;
use crate::version::Version;
use std::path::Path;

/// The `novelsm` design.
pub(crate) struct NovelsmDesign {
    pub options: LeveledOptions,
}

impl Design for NovelsmDesign {
    fn write_buffer_device(&self, path: &Path, opts: &Options) -> Result<PmDeviceRef> {
        crate::db::open_pm_device(path, opts)
    }

    fn buffer_kind(&self) -> BufferKind {
        BufferKind::PmSkiplist
    }

    fn compaction_policy(&self, _opts: &Options) -> Box<dyn CompactionPolicy> {
        Box::new(LeveledPolicy {
            options: self.options,
        })
    }

    fn level0_stop_runs(&self, _opts: &Options) -> usize {
        self.options.level0_stop_writes_trigger
    }

    fn level0_slowdown_runs(&self, _opts: &Options) -> Option<usize> {
        Some(self.options.level0_slowdown_writes_trigger)
    }

    fn level0_runs(&self, v: &Version) -> usize {
        v.num_files(0)
    }

    fn flush_shape(&self, _opts: &Options) -> FlushShape {
        FlushShape {
            threads: 1,
            target_file_size: u64::MAX,
        }
    }
}
