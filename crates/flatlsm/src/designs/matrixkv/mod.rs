//! The `matrixkv` profile (MatrixKV, ATC 2020): a DRAM memtable whose write-ahead log lives in
//! PM, flushed into a *matrix container* in PM — RowTables (`crate::rowtable`) received by a
//! receiver that turns into the compactor at `receiver_limit` of the container — and merged into
//! L1 on SSD by fine-grained *column compactions*; L1 is as large as the container and the
//! levels above grow by the same factor (a flattened tree), compacted as in `leveled`.
//!
//! Room: `container.rs` (the container region, its pages and rows, recovery), `rows.rs` (the
//! rows a version sees, searched with cross-row hints, and when freed pages return), `column.rs`
//! (picking and running a column compaction), `salvage.rs` (what repair reads of the rows).

use super::leveled::LeveledOptions;
use crate::error::{Error, Result};

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

pub(crate) mod column;
pub(crate) mod container;
pub(crate) mod rows;
mod salvage;

pub(crate) use container::CONTAINER_REGION;

use super::{store_device, BufferKind, Design, FlushShape, Level0Store, Salvage};
use super::{StoreCompaction, StoreFlush, StorePart};
use crate::compaction::policy::leveled::LeveledPolicy;
use crate::compaction::policy::CompactionPolicy;
use crate::options::{Options, Placement};
use crate::pm::{DramPmDevice, PmDeviceRef};
use crate::sst::TableCache;
use crate::version::{RowMeta, Version, VersionEdit};
use container::Container;
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The `matrixkv` design; its container is opened with the database.
pub(crate) struct MatrixKvDesign {
    pub leveled: LeveledOptions,
    pub options: MatrixKvOptions,
    pub container: OnceLock<Arc<Container>>,
}

impl MatrixKvDesign {
    fn container(&self) -> Result<&Arc<Container>> {
        let missing = || Error::InvalidState("the matrix container is not open".into());
        self.container.get().ok_or_else(missing)
    }

    /// Rows numbered at or below the boundary that still hold entries: the compactor.
    fn compactor_is_empty(v: &Version) -> bool {
        v.rows
            .rows
            .range(..=v.rows.compactor_through)
            .next()
            .is_none()
    }

    /// Bytes of the receiver's rows (those above the compactor boundary).
    fn receiver_bytes(v: &Version) -> u64 {
        let receiver = v.rows.rows.range(v.rows.compactor_through + 1..);
        receiver.map(|(_, r)| r.meta.bytes).sum()
    }

    /// What a flush that found no room needs: a compactor to drain. With an empty compactor
    /// the receiver becomes it at once (it is full before its limit, e.g. rows are large); an
    /// empty container that cannot take the row is an error (the row is larger than it).
    fn no_room(&self, v: &Version) -> Result<StoreFlush> {
        if !Self::compactor_is_empty(v) {
            return Ok(StoreFlush::NoRoom(None));
        }
        match self.drain_store_edit(v) {
            Some(promote) => Ok(StoreFlush::NoRoom(Some(promote))),
            None => Err(Error::InvalidArgument(format!(
                "flushed write buffers do not fit in an empty matrix container of {} bytes (raise container_size)",
                self.options.container_size
            ))),
        }
    }

    /// The compactor boundary that makes every row up to `newest` the compactor: only while
    /// the compactor is empty (one compactor at a time).
    fn promotion(v: &Version, newest: Option<u64>) -> Option<u64> {
        newest.filter(|_| Self::compactor_is_empty(v))
    }

    /// Turns the receiver into the compactor (no data moves) when it reached its limit and the
    /// compactor is empty; `added` are the rows the edit adds.
    fn maybe_promote(&self, v: &Version, added: &[RowMeta], edit: &mut VersionEdit) {
        let limit = self.options.receiver_limit * self.options.container_size as f64;
        let receiver = Self::receiver_bytes(v) + added.iter().map(|m| m.bytes).sum::<u64>();
        if receiver as f64 >= limit {
            edit.compactor_through = Self::promotion(v, added.last().map(|m| m.number));
        }
    }
}

impl Design for MatrixKvDesign {
    /// DRAM (the memtable is made durable by its write-ahead log in PM), or the PM directory
    /// used volatile with `memtable_placement = Pm`.
    fn write_buffer_device(&self, path: &Path, opts: &Options) -> Result<PmDeviceRef> {
        match opts.memtable_placement {
            Placement::Dram => Ok(DramPmDevice::new(path.join("[dram]"))),
            Placement::Pm => crate::db::open_pm_device(path, opts),
        }
    }

    fn buffer_kind(&self) -> BufferKind {
        BufferKind::DramWithWal
    }

    /// Leveled from L1 up, L1 as large as the container; level 0 is never used (the container
    /// is), so the policy never picks it.
    fn compaction_policy(&self, _opts: &Options) -> Box<dyn CompactionPolicy> {
        Box::new(LeveledPolicy {
            options: self.options.tree(self.leveled),
        })
    }

    /// Flushes wait for container room instead (`store_flush`).
    fn level0_stop_runs(&self, _opts: &Options) -> usize {
        usize::MAX
    }

    fn level0_runs(&self, _v: &Version) -> usize {
        0
    }

    /// Unused: flushes write rows.
    fn flush_shape(&self, _opts: &Options) -> FlushShape {
        FlushShape::ONE_FILE
    }

    fn level0_slowdown_runs(&self, _opts: &Options) -> Option<usize> {
        None
    }

    fn uses_pm_dir(&self) -> bool {
        true
    }

    fn store_regions(&self) -> &'static [&'static str] {
        &[CONTAINER_REGION]
    }

    /// The container lives on the PM device (`Options::pm_device`, else the PM directory).
    fn open_store(&self, path: &Path, opts: &Options, version: &Version) -> Result<()> {
        let pm = store_device(path, opts)?;
        let c = Container::open(&*pm, self.options, version)?;
        self.container
            .set(Arc::new(c))
            .map_err(|_| Error::InvalidState("the matrix container was opened twice".into()))
    }

    /// The rows, to be written as level-0 SSTs (`salvage.rs`).
    fn salvage_store(
        &self,
        path: &Path,
        opts: &Options,
        recorded: Option<&Version>,
    ) -> Result<Salvage> {
        salvage::salvage_rows(&*store_device(path, opts)?, recorded)
    }

    fn level0_store(&self, version: &Version) -> Option<Arc<dyn Level0Store>> {
        let view = self.container.get()?.refresh(version);
        Some(view)
    }

    /// Writes each flushed memtable as one row (MatrixKV's "one row per MemTable"), all or
    /// none; promotes the receiver when it is full.
    fn store_flush(&self, version: &Version, parts: Vec<StorePart<'_>>) -> Result<StoreFlush> {
        let container = self.container()?;
        let mut metas: Vec<RowMeta> = Vec::new();
        for mut part in parts {
            let added = container.add_row(part.number, part.bound, &mut *part.source);
            let meta = match added {
                Ok(Some(meta)) => meta,
                other => {
                    metas.iter().for_each(|m| container.discard_row(m.number));
                    return other.and_then(|_| self.no_room(version));
                }
            };
            metas.push(meta);
        }
        let bytes = metas.iter().map(|m| m.bytes).sum();
        let mut edit = VersionEdit::default();
        self.maybe_promote(version, &metas, &mut edit);
        edit.new_rows = metas;
        Ok(StoreFlush::Written(edit, bytes))
    }

    fn discard_store_flush(&self, numbers: &[u64]) {
        if let Some(c) = self.container.get() {
            numbers.iter().for_each(|&n| c.discard_row(n));
        }
    }

    /// With an empty compactor, every row becomes the compactor.
    fn drain_store_edit(&self, version: &Version) -> Option<VersionEdit> {
        let newest = version.rows.rows.keys().next_back().copied();
        let through = Self::promotion(version, newest)?;
        Some(VersionEdit {
            compactor_through: Some(through),
            ..VersionEdit::default()
        })
    }

    /// The next column compaction, if the compactor holds rows.
    fn store_compaction(
        &self,
        version: &Version,
        _tables: &Arc<TableCache>,
        _snapshots: &dyn Fn() -> bool,
    ) -> Result<Option<StoreCompaction>> {
        let container = self.container()?;
        let view = container.view();
        let through = version.rows.compactor_through;
        let compactor: Vec<_> = view
            .rows()
            .iter()
            .filter(|(t, _)| t.number() <= through)
            .cloned()
            .collect();
        let Some(job) = column::plan(&compactor, version, &self.options)? else {
            return Ok(None);
        };
        let mut rows = VersionEdit::default();
        job.record_rows(&mut rows);
        Ok(Some(StoreCompaction {
            sources: job.sources(),
            compaction: job.compaction,
            rows,
            bytes: job.bytes,
            pin: view,
            retire: Vec::new(),
        }))
    }
}
