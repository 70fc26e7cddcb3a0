//! The `matrixkv` profile (MatrixKV, ATC 2020): a DRAM memtable whose write-ahead log lives in
//! PM, flushed into a *matrix container* in PM — RowTables (`crate::rowtable`) received by a
//! receiver that turns into the compactor at `receiver_limit` of the container — and merged into
//! L1 on SSD by fine-grained *column compactions*; L1 is as large as the container and the
//! levels above grow by the same factor (a flattened tree), compacted as in `leveled`.
//!
//! Room: `container.rs` (the container region, its pages and rows, recovery), `rows.rs` (the
//! rows a version records — MatrixKV's version extension, manifest tags 14–17 — and sees,
//! searched with cross-row hints, and when freed pages return), `column.rs`
//! (picking and running a column compaction), `salvage.rs` (what repair reads of the rows).

use crate::error::{Error, Result};
use crate::file_names::CONTAINER_REGION;
use crate::options::LeveledOptions;
use crate::options::MatrixKvOptions;

pub(crate) mod column;
pub(crate) mod container;
pub(crate) mod rows;
mod salvage;

use super::{store_device, BufferKind, Design, DesignStore, FlushShape, Level0Store, Salvage};
use super::{StoreCompaction, StoreFlush, StorePart};
use crate::compaction::policy::leveled::LeveledPolicy;
use crate::compaction::policy::CompactionPolicy;
use crate::options::{Options, Placement};
use crate::pm::{DramPmDevice, PmDeviceRef};
use crate::sst::TableCache;
use crate::version::{Version, VersionEdit};
use container::Container;
use rows::{row_set, RowEdit, RowMeta};
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
        let rows = row_set(v);
        rows.rows.range(..=rows.compactor_through).next().is_none()
    }

    /// Bytes of the receiver's rows (those above the compactor boundary).
    fn receiver_bytes(v: &Version) -> u64 {
        let rows = row_set(v);
        let receiver = rows.rows.range(rows.compactor_through + 1..);
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

    /// The boundary that turns the receiver into the compactor (no data moves) when it
    /// reached its limit and the compactor is empty; `added` are the rows the edit adds.
    fn maybe_promote(&self, v: &Version, added: &[RowMeta]) -> Option<u64> {
        let limit = self.options.receiver_limit * self.options.container_size as f64;
        let receiver = Self::receiver_bytes(v) + added.iter().map(|m| m.bytes).sum::<u64>();
        if (receiver as f64) < limit {
            return None;
        }
        Self::promotion(v, added.last().map(|m| m.number))
    }
}

impl Design for MatrixKvDesign {
    /// DRAM (the memtable is made durable by its write-ahead log in PM), or the PM directory
    /// used volatile with `memtable_placement = Pm`.
    fn write_buffer_device(&self, path: &Path, opts: &Options) -> Result<PmDeviceRef> {
        match opts.memtable_placement {
            Placement::Dram => Ok(DramPmDevice::new(path.join("[dram]"))),
            Placement::Pm => crate::layout::open_pm_device(path, opts),
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

    fn store(&self) -> &dyn DesignStore {
        self
    }
}

impl DesignStore for MatrixKvDesign {
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
        let edit = RowEdit {
            compactor_through: self.maybe_promote(version, &metas),
            new_rows: metas,
            ..RowEdit::default()
        };
        Ok(StoreFlush::Written(edit.into_edit(), bytes))
    }

    fn discard_store_flush(&self, numbers: &[u64]) {
        if let Some(c) = self.container.get() {
            numbers.iter().for_each(|&n| c.discard_row(n));
        }
    }

    /// With an empty compactor, every row becomes the compactor.
    fn drain_store_edit(&self, version: &Version) -> Option<VersionEdit> {
        let newest = row_set(version).rows.keys().next_back().copied();
        let through = Self::promotion(version, newest)?;
        let edit = RowEdit {
            compactor_through: Some(through),
            ..RowEdit::default()
        };
        Some(edit.into_edit())
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
        let through = row_set(version).compactor_through;
        let compactor: Vec<_> = view
            .rows()
            .iter()
            .filter(|(t, _)| t.number() <= through)
            .cloned()
            .collect();
        let Some(job) = column::plan(&compactor, version, &self.options)? else {
            return Ok(None);
        };
        Ok(Some(StoreCompaction {
            sources: job.sources(),
            records: job.row_records(),
            compaction: job.compaction,
            bytes: job.bytes,
            pin: view,
            retire: Vec::new(),
        }))
    }
}
