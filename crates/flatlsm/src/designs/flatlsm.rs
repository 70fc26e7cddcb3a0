//! The `flatlsm` profile (the paper's design): PMTables — a DRAM index over a PM Log, durable
//! without a WAL — as L0; a flush writes one L1 run; runs merge into the Ordered-L1 at
//! `l1_merge_trigger`; L1 → L2 when L1's data exceeds its target, `l1_data_ratio` of all the
//! data within `[4 × target_file_size, l1_capacity]` (`policy/flat.rs`).
//! Writes slow down from `4 × l1_merge_trigger` runs and flushes wait at `6 ×` (the merge is
//! behind). Not at two times, as before: a merge of runs rewrites L1, so it slows down as L1
//! grows (20 s at 256 B in Fig. 9a's 35 s); runs that pile up meanwhile make the next merge
//! cheaper per byte, and a flush that waits fills every PMTable and paces writes to a
//! twentieth (docs/design-decisions.md, "Room for runs").

use super::{BufferKind, Design, FlushShape};
use crate::compaction::policy::flat::FlatPolicy;
use crate::compaction::policy::CompactionPolicy;
use crate::error::Result;
use crate::options::Options;
use crate::pm::PmDeviceRef;
use crate::sst::SstDir;
use crate::version::Version;
use std::path::Path;

/// L1's least target, in SST files of `target_file_size`: a database smaller than this keeps
/// its data in L1 (no L2, so no stale versions in it), however small its share.
const L1_FLOOR_FILES: u64 = 4;

/// Writes slow down from this many times `l1_merge_trigger` runs in level 0 (`stall.rs`).
const RUNS_SLOWDOWN_FACTOR: usize = 4;

/// Flushes wait at this many times `l1_merge_trigger` runs in level 0.
const RUNS_STOP_FACTOR: usize = 6;

/// The `flatlsm` design.
pub(crate) struct FlatLsmDesign;

impl Design for FlatLsmDesign {
    fn write_buffer_device(&self, path: &Path, opts: &Options) -> Result<PmDeviceRef> {
        crate::layout::open_pm_device(path, opts)
    }

    fn buffer_kind(&self) -> BufferKind {
        BufferKind::PmTable
    }

    fn compaction_policy(&self, opts: &Options) -> Box<dyn CompactionPolicy> {
        Box::new(FlatPolicy {
            l1_merge_trigger: opts.l1_merge_trigger,
            l1_capacity: opts.l1_capacity,
            l1_data_ratio: opts.l1_data_ratio,
            l1_floor: L1_FLOOR_FILES.saturating_mul(opts.target_file_size),
        })
    }

    fn level0_stop_runs(&self, opts: &Options) -> usize {
        RUNS_STOP_FACTOR * opts.l1_merge_trigger
    }

    fn level0_slowdown_runs(&self, opts: &Options) -> Option<usize> {
        Some(RUNS_SLOWDOWN_FACTOR * opts.l1_merge_trigger)
    }

    /// A flush's files never overlap each other: runs are found by overlap.
    fn level0_runs(&self, v: &Version) -> usize {
        v.level0_runs()
    }

    /// The paper's parallel flush takes the `flush_immutable_num` tables that made it due. A
    /// backlog then leaves in batches of that size, each freeing its PM a batch's time sooner
    /// than one job over the whole backlog would (docs/design-decisions.md, "A flush takes the
    /// oldest `flush_immutable_num` PMTables").
    fn flush_batch_limit(&self, opts: &Options) -> Option<usize> {
        Some(opts.flush_immutable_num)
    }

    fn flush_shape(&self, opts: &Options) -> FlushShape {
        FlushShape {
            threads: opts.flush_threads,
            target_file_size: opts.target_file_size,
            sst_dir: SstDir::Data,
        }
    }
}
