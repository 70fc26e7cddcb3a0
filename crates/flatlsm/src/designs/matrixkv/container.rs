//! [`Container`]: the PM matrix container of a `matrixkv` database — one region of pages, the
//! RowTables in it, and the free pages.
//!
//! Persist order and recovery rule: a row is written and persisted whole (`rowtable::build`)
//! before the flush's manifest edit records it; at open every recorded row is reopened and
//! checked (`RowTable::open`), and every page no recorded row needs is free. A row a crash
//! interrupted before its record is therefore garbage whose pages are reused, and its memtable
//! is replayed from the write-ahead log. Nothing else in the container is persisted.
//!
//! Thread-safety: `Send + Sync`. Flushes (one at a time) add rows; installs refresh the view;
//! readers take views (`Arc<MatrixRows>`) and never lock while searching.

use super::rows::{row_set, Epoch, MatrixRows, RowMeta};
use crate::error::{Error, Result};
use crate::file_names::CONTAINER_REGION;
use crate::iter::InternalIterator;
use crate::options::MatrixKvOptions;
use crate::pm::{PmDevice, PmRegion};
use crate::rowtable::build::{build_row, RowBound, RowTarget};
use crate::rowtable::container_header::{read_container_header, write_container_header};
use crate::rowtable::{PageAllocator, RowTable};
use crate::version::Version;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The matrix container.
pub(crate) struct Container {
    region: Arc<dyn PmRegion>,
    allocator: Arc<PageAllocator>,
    options: MatrixKvOptions,
    /// Every recorded row, and the rows built but not yet installed, by number.
    tables: Mutex<BTreeMap<u64, Arc<RowTable>>>,
    /// The rows built but not yet installed (a flush's, until its edit is).
    pending: Mutex<std::collections::BTreeSet<u64>>,
    /// The view of the current version.
    view: Mutex<Arc<MatrixRows>>,
}

impl Container {
    /// Opens the container on `device` with the rows `version` records (creating it when the
    /// version records none), checking every row.
    pub fn open(
        device: &dyn PmDevice,
        options: MatrixKvOptions,
        version: &Version,
    ) -> Result<Self> {
        let region = open_region(device, &options, version)?;
        let mut tables = BTreeMap::new();
        for row in row_set(version).rows.values() {
            let table = reopen_row(&region, &options, &row.meta)?;
            tables.insert(row.meta.number, Arc::new(table));
        }
        let pages = (options.container_size / options.page_size as u64) as u32;
        // Page 0 holds the container header.
        let rows = row_set(version).rows.values();
        let used = rows.flat_map(|r| tables[&r.meta.number].live_pages(r.first));
        let used: Vec<u32> = std::iter::once(0).chain(used).collect();
        let allocator = Arc::new(PageAllocator::with_used(pages, used)?);
        let view = MatrixRows::new(rows_of(version, &tables), Epoch::first(allocator.clone()));
        Ok(Container {
            region,
            allocator,
            options,
            tables: Mutex::new(tables),
            pending: Mutex::new(std::collections::BTreeSet::new()),
            view: Mutex::new(view),
        })
    }

    /// The view of the current version.
    pub fn view(&self) -> Arc<MatrixRows> {
        self.view.lock().clone()
    }

    /// The view of `version` once it is installed: a successor of the previous view when its
    /// rows changed (pages the old rows needed return once no reader holds them).
    pub fn refresh(&self, version: &Version) -> Arc<MatrixRows> {
        let mut tables = self.tables.lock();
        let mut pending = self.pending.lock();
        let recorded = &row_set(version).rows;
        pending.retain(|n| !recorded.contains_key(n));
        tables.retain(|n, _| recorded.contains_key(n) || pending.contains(n));
        let rows = rows_of(version, &tables);
        let mut view = self.view.lock();
        if !same_rows(view.rows(), &rows) {
            *view = view.successor(rows);
        }
        view.clone()
    }

    /// Writes `source` (at most `bound`) as row `number` after the newest row of the current
    /// view; `Ok(None)` if the container has too few free pages for the bound (a column
    /// compaction must free some first).
    pub fn add_row(
        &self,
        number: u64,
        bound: RowBound,
        source: &mut dyn InternalIterator,
    ) -> Result<Option<RowMeta>> {
        let view = self.view();
        let prev = self.newest_row(&view);
        let prev = prev.as_ref().map(|(t, first)| (&**t, *first));
        let target = RowTarget {
            region: &self.region,
            allocator: &self.allocator,
            page_size: self.options.page_size,
        };
        let Some(table) = build_row(&target, number, prev, bound, source)? else {
            return Ok(None);
        };
        let meta = RowMeta {
            number,
            first_page: table.pages().pages[0],
            entries: table.len(),
            bytes: table.bytes_from(0),
        };
        self.tables.lock().insert(number, Arc::new(table));
        self.pending.lock().insert(number);
        Ok(Some(meta))
    }

    /// The newest row built (recorded in `view`, or built and not yet installed), with its
    /// first live entry: the row a new row's forward pointers index.
    fn newest_row(&self, view: &MatrixRows) -> Option<(Arc<RowTable>, u64)> {
        let built = self.pending.lock().last().copied();
        let built = built.and_then(|n| self.tables.lock().get(&n).cloned());
        let recorded = view.rows().first().cloned();
        match (built, recorded) {
            (Some(b), Some(r)) if r.0.number() > b.number() => Some(r),
            (Some(b), _) => Some((b, 0)),
            (None, r) => r,
        }
    }

    /// Forgets a row built but never recorded (its flush failed) and frees its pages.
    pub fn discard_row(&self, number: u64) {
        self.pending.lock().remove(&number);
        if let Some(t) = self.tables.lock().remove(&number) {
            let used = &t.pages().pages[..t.used_pages()]; // the rest went back when built
            self.allocator.release(used.iter().copied());
        }
    }
}

/// The rows of `version`, newest first, with their first live entries.
fn rows_of(version: &Version, tables: &BTreeMap<u64, Arc<RowTable>>) -> Vec<(Arc<RowTable>, u64)> {
    let rows = row_set(version).rows.values().rev();
    rows.filter_map(|r| tables.get(&r.meta.number).map(|t| (t.clone(), r.first)))
        .collect()
}

fn same_rows(a: &[(Arc<RowTable>, u64)], b: &[(Arc<RowTable>, u64)]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| Arc::ptr_eq(&x.0, &y.0) && x.1 == y.1)
}

/// The container region: opened, or created when the version records no row.
fn open_region(
    device: &dyn PmDevice,
    options: &MatrixKvOptions,
    version: &Version,
) -> Result<Arc<dyn PmRegion>> {
    let exists = device.has_region(CONTAINER_REGION)?;
    if row_set(version).rows.is_empty() {
        // No row recorded: the container holds nothing. One with the options' geometry is
        // reused (creating one preallocates every byte); any other — a creation a crash
        // interrupted, other options — is made afresh.
        if exists {
            let region = device.open_region(CONTAINER_REGION)?;
            if fits(&*region, options) {
                return Ok(region);
            }
            drop(region);
            device.remove_region(CONTAINER_REGION)?;
        }
        let region = device.create_region(CONTAINER_REGION, options.container_size as usize)?;
        write_container_header(&*region, options.page_size)?;
        return Ok(region);
    }
    let region = device.open_region(CONTAINER_REGION)?;
    let page_size = read_container_header(&*region)?;
    if region.len() as u64 != options.container_size || page_size != options.page_size {
        return Err(Error::InvalidArgument(format!(
            "{}: the matrix container holds {} bytes in pages of {page_size}, but the options say \
             container_size = {} and page_size = {} (a container cannot be resized)",
            region.path().display(),
            region.len(),
            options.container_size,
            options.page_size
        )));
    }
    Ok(region)
}

/// True if `region` is a container of the options' size and page size.
fn fits(region: &dyn PmRegion, options: &MatrixKvOptions) -> bool {
    let page_size = read_container_header(region).ok();
    region.len() as u64 == options.container_size && page_size == Some(options.page_size)
}

/// Reopens a recorded row and checks it against its record.
fn reopen_row(
    region: &Arc<dyn PmRegion>,
    options: &MatrixKvOptions,
    meta: &RowMeta,
) -> Result<RowTable> {
    let table = RowTable::open(
        region.clone(),
        options.page_size,
        meta.first_page,
        meta.number,
    )?;
    if table.len() != meta.entries {
        let at = meta.first_page as u64 * options.page_size as u64 + 16;
        let what = format!(
            "row {}: {} entries, the manifest records {}",
            meta.number,
            table.len(),
            meta.entries
        );
        return Err(Error::corruption(region.path(), at, what));
    }
    Ok(table)
}
