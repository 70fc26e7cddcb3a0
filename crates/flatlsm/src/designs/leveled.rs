//! The `leveled` profile: the RocksDB/LevelDB baseline of the papers. A DRAM memtable (the
//! same arena-skiplist table as a PMTable, on a [`DramPmDevice`]) made durable by a
//! write-ahead log (`wal`), flushed into level 0 as one sorted run of SSTables per flush;
//! levels 1..6 leveled, each `max_bytes_for_level_multiplier` times the one above it, from
//! `max_bytes_for_level_base`. With `kv_separation_threshold` set, large values go to value
//! logs at flush, as Titan and RocksDB's BlobDB do.
//!
//! A flush writes its memtables in one pass into one level-0 file, as RocksDB's does, so level
//! 0's files are its sorted runs.
//!
//! Stalls (RocksDB's L0 triggers, counted in level-0 files, i.e. flushes not yet compacted):
//! writes are delayed from `level0_slowdown_writes_trigger` runs, and flushes wait (so writers
//! stop once every memtable is full) at `level0_stop_writes_trigger`.

use super::{BufferKind, Design, FlushShape};
use crate::compaction::policy::leveled::LeveledPolicy;
use crate::compaction::policy::CompactionPolicy;
use crate::error::Result;
use crate::options::LeveledOptions;
use crate::options::{Options, Placement};
use crate::pm::{DramPmDevice, PmDeviceRef};
use crate::sst::SstDir;
use crate::version::Version;
use std::path::Path;

/// The leveled SSD tree under a DRAM memtable and its WAL (`BufferKind::DramWithWal`). The
/// `novelsm` design (`novelsm.rs`) puts NoveLSM's persistent PM skiplist over the same tree:
/// both share its options, policy and stall triggers, so comparing them isolates the memtable.
pub(crate) struct LeveledDesign {
    pub options: LeveledOptions,
}

impl Design for LeveledDesign {
    /// DRAM, or with `memtable_placement = Pm` the PM directory used volatile (its regions are
    /// cleared at open by the WAL recovery and at close).
    fn write_buffer_device(&self, path: &Path, opts: &Options) -> Result<PmDeviceRef> {
        match opts.memtable_placement {
            Placement::Dram => Ok(DramPmDevice::new(path.join("[dram]"))),
            Placement::Pm => crate::layout::open_pm_device(path, opts),
        }
    }

    fn buffer_kind(&self) -> BufferKind {
        BufferKind::DramWithWal
    }

    /// Level 0 lives there with `level0_in_pm`.
    fn uses_pm_dir(&self) -> bool {
        self.options.level0_in_pm
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

    /// One file per flush, as RocksDB's: level 0's files are its runs.
    fn level0_runs(&self, v: &Version) -> usize {
        v.num_files(0)
    }

    /// RocksDB flushes a memtable in one pass into one level-0 file, kept in the PM directory
    /// with `level0_in_pm`.
    fn flush_shape(&self, _opts: &Options) -> FlushShape {
        let sst_dir = match self.options.level0_in_pm {
            true => SstDir::Pm,
            false => SstDir::Data,
        };
        FlushShape {
            sst_dir,
            ..FlushShape::ONE_FILE
        }
    }
}
