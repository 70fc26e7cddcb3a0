//! The options of each design's profile ([`LeveledOptions`], [`MatrixKvOptions`],
//! [`SlmDbOptions`]): plain values and their checks, below the designs that read them, so
//! `options` never imports `designs` (docs/architecture.md, layers).

use crate::error::{Error, Result};
use crate::pmbtree::NODE_SIZE;

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

/// Options of the `matrixkv` profile, under MatrixKV's names; defaults are the paper's scaled to
/// this machine (an 8 GB container with 64 MB SSTables becomes 1 GiB with 8 MiB column units).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct MatrixKvOptions {
    /// Bytes of the PM matrix container (the paper: 8 GB). L1's target size is the same.
    pub container_size: u64,
    /// The receiver turns into the compactor once it holds this share of the container and
    /// the compactor is empty (the paper: 60 %).
    pub receiver_limit: f64,
    /// Bytes per container page.
    pub page_size: usize,
    /// A column holds at least this many bytes of rows (the paper: ½·AF·S_sst), unless the
    /// compactor holds less.
    pub column_lower_bound: u64,
    /// A column stops growing once it would exceed this (the paper: AF·S_sst).
    pub column_upper_bound: u64,
    /// Threads fetching a column's part of the rows (the paper's k = 8; default min(8, cores)).
    pub column_threads: usize,
}

impl Default for MatrixKvOptions {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        MatrixKvOptions {
            container_size: 1 << 30,
            receiver_limit: 0.6,
            page_size: 64 << 10,
            column_lower_bound: 40 << 20,
            column_upper_bound: 80 << 20,
            column_threads: cores.min(8),
        }
    }
}

impl MatrixKvOptions {
    /// Checks ranges: a container of at least 16 pages, pages of 4 KiB..=16 MiB that are a power
    /// of two, a receiver limit in (0, 1], ordered column bounds, 1..=64 threads.
    pub fn validate(&self) -> Result<()> {
        let pages = self.container_size / self.page_size.max(1) as u64;
        let checks = [
            (
                self.page_size.is_power_of_two() && (4 << 10..=16 << 20).contains(&self.page_size),
                "page_size must be a power of two in 4 KiB..=16 MiB",
            ),
            (
                (16..=u32::MAX as u64).contains(&pages),
                "container_size must hold 16..=2^32-1 pages",
            ),
            (
                self.receiver_limit > 0.0 && self.receiver_limit <= 1.0,
                "receiver_limit must lie in (0, 1]",
            ),
            (
                0 < self.column_lower_bound && self.column_lower_bound <= self.column_upper_bound,
                "column bounds must satisfy 0 < lower <= upper",
            ),
            (
                (1..=64).contains(&self.column_threads),
                "column_threads must lie in 1..=64",
            ),
        ];
        match checks.iter().find(|(ok, _)| !ok) {
            Some((_, why)) => Err(Error::InvalidArgument(format!(
                "matrixkv options {self:?}: {why}"
            ))),
            None => Ok(()),
        }
    }

    /// Checks that a row of one write buffer of `pmtable_size` bytes fits the container and
    /// its pages: a row takes at most twice the buffer's bytes (16 bytes of metadata and 3 of
    /// header per entry of at least 21), its page list must fit one page, and the container
    /// must hold four of them.
    pub(crate) fn validate_for(&self, pmtable_size: usize) -> Result<()> {
        self.validate()?;
        let row = 2 * pmtable_size as u64;
        let listable = ((self.page_size - 64) / 4) as u64 * self.page_size as u64;
        if row > listable || 4 * pmtable_size as u64 > self.container_size {
            return Err(Error::InvalidArgument(format!(
                "matrixkv: pmtable_size = {pmtable_size} needs container pages of which one can \
                 list a row of {row} bytes (page_size = {} lists {listable}) and a container_size \
                 of at least {} (is {})",
                self.page_size,
                4 * pmtable_size as u64,
                self.container_size
            )));
        }
        Ok(())
    }

    /// The leveled tree above the container: L1 as large as the container.
    pub(crate) fn tree(&self, leveled: LeveledOptions) -> LeveledOptions {
        LeveledOptions {
            max_bytes_for_level_base: self.container_size,
            ..leveled
        }
    }
}

/// Options of the `slmdb` profile, with SLM-DB's defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct SlmDbOptions {
    /// Bytes of PM for the B+-tree (default 1 GiB: about 8 million keys of up to 32 bytes).
    /// A tree cannot be resized.
    pub btree_size: u64,
    /// An SST whose live keys fall below this share of its entries is a compaction candidate
    /// (default 0.7).
    pub live_key_threshold: f64,
    /// A leaf-node scan flags the files behind its window of keys (two SSTs' worth) when there
    /// are more than this many (default 10). Outputs of selective compactions are not flagged
    /// until a flush moves a key out of them: a window spans about three files even over
    /// merged outputs, so any value converges.
    pub leaf_node_threshold: usize,
    /// Selective compaction runs once more SSTs than this are candidates (default 4).
    pub compaction_trigger: usize,
    /// Files one selective compaction merges at most (default 15).
    pub max_compaction_files: usize,
    /// Candidates from which writes are delayed (default 15).
    pub slowdown_candidates: usize,
    /// Candidates at which flushes wait, and writers stop once memtables are full (35).
    pub stop_candidates: usize,
    /// A range query's keys are cut into sub-ranges of this many (default 30)...
    pub range_subrange_keys: usize,
    /// ...and the files behind its most scattered one become candidates when there are more
    /// than this many (SLM-DB's sequentiality degree threshold, default 8).
    pub sequentiality_threshold: usize,
}

impl Default for SlmDbOptions {
    fn default() -> Self {
        SlmDbOptions {
            btree_size: 1 << 30,
            live_key_threshold: 0.7,
            leaf_node_threshold: 10,
            compaction_trigger: 4,
            max_compaction_files: 15,
            slowdown_candidates: 15,
            stop_candidates: 35,
            range_subrange_keys: 30,
            sequentiality_threshold: 8,
        }
    }
}

impl SlmDbOptions {
    /// The tree needs at least a header and a leaf, in whole nodes; the thresholds must be
    /// ordered (trigger < slowdown <= stop) and the live share within 0..=1.
    pub fn validate(&self) -> Result<()> {
        let o = self;
        let share_ok = (0.0..=1.0).contains(&o.live_key_threshold);
        let order_ok = o.compaction_trigger < o.slowdown_candidates
            && o.slowdown_candidates <= o.stop_candidates
            && o.max_compaction_files >= 1
            && o.range_subrange_keys >= 1;
        if !share_ok || !order_ok {
            return Err(Error::InvalidArgument(format!(
                "slmdb: live_key_threshold = {} must be within 0..=1, and compaction_trigger \
                 ({}) < slowdown_candidates ({}) <= stop_candidates ({}), \
                 max_compaction_files ({}) >= 1, range_subrange_keys ({}) >= 1",
                o.live_key_threshold,
                o.compaction_trigger,
                o.slowdown_candidates,
                o.stop_candidates,
                o.max_compaction_files,
                o.range_subrange_keys
            )));
        }
        self.validate_size()
    }

    fn validate_size(&self) -> Result<()> {
        let nodes = self.btree_size / NODE_SIZE as u64;
        let whole = self.btree_size.is_multiple_of(NODE_SIZE as u64);
        match nodes >= 2 && whole && nodes <= u32::MAX as u64 {
            true => Ok(()),
            false => Err(Error::InvalidArgument(format!(
                "slmdb.btree_size = {}: must be a multiple of {NODE_SIZE} bytes, at least 2 and \
                 at most 2^32 nodes",
                self.btree_size
            ))),
        }
    }
}
