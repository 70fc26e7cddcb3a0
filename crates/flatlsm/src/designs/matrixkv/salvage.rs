//! Repair's reading of the matrix container: the rows whose entries a repaired database must
//! keep, as sorted runs repair writes into level-0 SSTs (after its commit the manifest records
//! no row, so every page of the container is free).
//!
//! Which rows: with a readable old manifest, exactly the rows it records, from their first
//! live entries (the entries before were merged into L1 by column compactions). Without one,
//! every page is probed for a row header that checks (`RowTable::open`); a row some of whose
//! pages a newer row that checks also uses was freed and partly overwritten, and is left out.
//! Rows found this way are read whole: entries already merged into L1 appear twice (the same
//! versions, written once by repair), and a row fully merged but not yet overwritten is read
//! again (older versions, shadowed by the newer ones L1 holds — unless a compaction dropped a
//! key's tombstone at the last level, the limit of repairing without the manifest).
//!
//! A row is kept only if every entry verifies (key and value checksums); the others are
//! reported, and the container is then copied aside by repair for manual salvage.

use super::rows::row_set;
use crate::designs::Salvage;
use crate::error::Result;
use crate::file_names::CONTAINER_REGION;
use crate::iter::InternalIterator;
use crate::pm::{PmDevice, PmRegion};
use crate::rowtable::container_header::read_container_header;
use crate::rowtable::search::RowIter;
use crate::rowtable::{RowTable, ROW_MAGIC};
use crate::version::Version;
use std::collections::HashSet;
use std::sync::Arc;

/// The rows of the container on `device` that `recorded` names (every row found without it).
pub(super) fn salvage_rows(device: &dyn PmDevice, recorded: Option<&Version>) -> Result<Salvage> {
    let mut salvage = Salvage::default();
    if !device.has_region(CONTAINER_REGION)? {
        if recorded.is_some_and(|v| !row_set(v).rows.is_empty()) {
            salvage.notes.push(format!(
                "the matrix container {CONTAINER_REGION} is missing: the rows the old manifest \
                 records are lost"
            ));
        }
        return Ok(salvage);
    }
    let region = device.open_region(CONTAINER_REGION)?;
    let page_size = match read_container_header(&*region) {
        Ok(p) => p,
        Err(e) => return Ok(unreadable(salvage, region, e.to_string())),
    };
    let rows = match recorded {
        Some(v) => recorded_rows(&region, page_size, v, &mut salvage),
        None => found_rows(&region, page_size, &mut salvage),
    };
    for (table, first) in rows {
        keep_if_whole(&region, table, first, &mut salvage);
    }
    Ok(salvage)
}

/// A container whose header does not check: nothing read, the region kept aside.
fn unreadable(mut salvage: Salvage, region: Arc<dyn PmRegion>, why: String) -> Salvage {
    let note = format!("the matrix container cannot be read: {why}");
    damaged(&mut salvage, &region, note);
    salvage
}

/// The rows `version` records, each from its first live entry; a row that does not open is
/// reported.
fn recorded_rows(
    region: &Arc<dyn PmRegion>,
    page_size: usize,
    version: &Version,
    salvage: &mut Salvage,
) -> Vec<(Arc<RowTable>, u64)> {
    let mut rows = Vec::new();
    for row in row_set(version).rows.values() {
        let (page, number) = (row.meta.first_page, row.meta.number);
        match RowTable::open(region.clone(), page_size, page, number) {
            Ok(t) => rows.push((Arc::new(t), row.first)),
            Err(e) => damaged(salvage, region, format!("row {number} cannot be read: {e}")),
        }
    }
    rows
}

/// Every row whose header checks and whose pages no newer such row uses, read whole.
fn found_rows(
    region: &Arc<dyn PmRegion>,
    page_size: usize,
    salvage: &mut Salvage,
) -> Vec<(Arc<RowTable>, u64)> {
    let mut found: Vec<RowTable> = (1..region.len() / page_size)
        .filter_map(|page| row_at(region, page_size, page as u32))
        .collect();
    found.sort_by_key(|t| std::cmp::Reverse(t.number()));
    let (mut used, mut rows, mut overwritten) = (HashSet::new(), Vec::new(), Vec::new());
    for table in found {
        match claim_pages(&table, &mut used) {
            true => rows.push((Arc::new(table), 0)),
            false => overwritten.push(table.number()),
        }
    }
    if !overwritten.is_empty() {
        salvage.notes.push(format!(
            "rows {overwritten:?} of the matrix container were freed and partly overwritten by \
             newer rows: left out"
        ));
    }
    rows
}

/// Adds the pages `table` uses to `used` unless a newer row already uses one of them.
fn claim_pages(table: &RowTable, used: &mut HashSet<u32>) -> bool {
    let pages = &table.pages().pages[..table.used_pages()];
    if pages.iter().any(|p| used.contains(p)) {
        return false;
    }
    used.extend(pages.iter().copied());
    true
}

/// The row whose header starts page `page`, if one checks.
fn row_at(region: &Arc<dyn PmRegion>, page_size: usize, page: u32) -> Option<RowTable> {
    let base = page as usize * page_size;
    let head = region.read(base, 16);
    if &head[..8] != ROW_MAGIC {
        return None;
    }
    let number = u64::from_le_bytes(head[8..16].try_into().ok()?);
    RowTable::open(region.clone(), page_size, page, number).ok()
}

/// Adds the row's entries from `first` as a run if every one verifies, else reports it.
fn keep_if_whole(
    region: &Arc<dyn PmRegion>,
    table: Arc<RowTable>,
    first: u64,
    salvage: &mut Salvage,
) {
    let number = table.number();
    let mut check = RowIter::new(table.clone(), first);
    check.seek_to_first();
    while check.valid() {
        check.next();
    }
    match check.status() {
        Ok(()) => {
            salvage.max_number = salvage.max_number.max(number);
            let run: Box<dyn InternalIterator> = Box::new(RowIter::new(table, first));
            salvage.runs.push(run);
        }
        Err(e) => damaged(
            salvage,
            region,
            format!("row {number} has an entry that fails its check: {e}"),
        ),
    }
}

/// Reports what could not be read; the container is then kept aside (`Salvage::copy`).
fn damaged(salvage: &mut Salvage, region: &Arc<dyn PmRegion>, note: String) {
    salvage.notes.push(note);
    salvage.copy = Some(region.clone());
}
