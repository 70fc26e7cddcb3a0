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
use crate::error::{Error, Result};
use crate::options::{Options, Placement};
use crate::pm::{DramPmDevice, PmDeviceRef};
use crate::sst::SstDir;
use crate::version::Version;
use std::path::Path;

/// Options of the `leveled` profile, named as db_bench names them.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct LeveledOptions {
    /// Target size of level 1 in bytes (RocksDB's default 256 MiB).
    pub max_bytes_for_level_base: u64,
    /// Each level's target size over the previous one's (default 10).
    pub max_bytes_for_level_multiplier: f64,
    /// Level-0 runs that start an L0 → L1 compaction (default 4).
    pub level0_file_num_compaction_trigger: usize,
    /// Level-0 runs from which writes are delayed (default 20).
    pub level0_slowdown_writes_trigger: usize,
    /// Level-0 runs at which flushes wait, and writers stop once memtables are full
    /// (default 36).
    pub level0_stop_writes_trigger: usize,
    /// Level-0 files are kept in the PM directory (RocksDB's `db_paths` with a PM path for
    /// level 0; the MatrixKV paper's RocksDB-L0-NVM); compactions write level 1 and above to
    /// the database directory. Default false. Each file's directory is recorded in the
    /// manifest, so a database reopens whatever this option then says. Ignored by `matrixkv`,
    /// whose level 0 is its container.
    pub level0_in_pm: bool,
}

impl Default for LeveledOptions {
    fn default() -> Self {
        LeveledOptions {
            max_bytes_for_level_base: 256 << 20,
            max_bytes_for_level_multiplier: 10.0,
            level0_file_num_compaction_trigger: 4,
            level0_slowdown_writes_trigger: 20,
            level0_stop_writes_trigger: 36,
            level0_in_pm: false,
        }
    }
}

impl LeveledOptions {
    /// Checks ranges and that the triggers are ordered (compaction <= slowdown <= stop).
    pub fn validate(&self) -> Result<()> {
        let o = self;
        let multiplier_ok = (1.0..=f64::MAX).contains(&o.max_bytes_for_level_multiplier);
        if o.max_bytes_for_level_base == 0 || !multiplier_ok {
            return Err(Error::InvalidArgument(format!(
                "max_bytes_for_level_base = {} must be > 0 and max_bytes_for_level_multiplier = {} \
                 at least 1",
                o.max_bytes_for_level_base, o.max_bytes_for_level_multiplier
            )));
        }
        let (c, s, t) = (
            o.level0_file_num_compaction_trigger,
            o.level0_slowdown_writes_trigger,
            o.level0_stop_writes_trigger,
        );
        if c == 0 || c > s || s > t {
            return Err(Error::InvalidArgument(format!(
                "level-0 triggers must satisfy 1 <= level0_file_num_compaction_trigger ({c}) <= \
                 level0_slowdown_writes_trigger ({s}) <= level0_stop_writes_trigger ({t})"
            )));
        }
        Ok(())
    }
}

/// The leveled SSD tree under a memtable: the `leveled` design (a DRAM memtable and its WAL,
/// `BufferKind::DramWithWal`) and the `novelsm` design (NoveLSM's persistent PM skiplist,
/// `BufferKind::PmSkiplist`: durable by itself, no WAL; its room is `buffer/skiplist.rs` and
/// `db/skiplist_recovery.rs`). Both share the tree, its options, policy and stall triggers, so
/// comparing them isolates the memtable.
pub(crate) struct LeveledDesign {
    pub options: LeveledOptions,
    pub memtable: BufferKind,
}

impl Design for LeveledDesign {
    /// DRAM, or with `memtable_placement = Pm` the PM directory used volatile (its regions are
    /// cleared at open by the WAL recovery and at close).
    fn write_buffer_device(&self, path: &Path, opts: &Options) -> Result<PmDeviceRef> {
        let in_pm = self.memtable == BufferKind::PmSkiplist;
        match (in_pm, opts.memtable_placement) {
            (false, Placement::Dram) => Ok(DramPmDevice::new(path.join("[dram]"))),
            _ => crate::db::open_pm_device(path, opts),
        }
    }

    fn buffer_kind(&self) -> BufferKind {
        self.memtable
    }

    /// A PM skiplist lives there, and so does level 0 with `level0_in_pm`.
    fn uses_pm_dir(&self) -> bool {
        !self.uses_wal() || self.options.level0_in_pm
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
