//! The targets of MatrixKV's PM structures: one RowTable (`rowtable`) and a whole matrix
//! container (`matrix_container`: its header, then every page holding a row header, as
//! repair's salvage probes them). Accepted rows are walked as the engine reads them: each row
//! iterated, the rows merged and sought through the cross-row hints, point lookups both ways,
//! and the sizes and pages a column compaction asks of a row.

use super::pm::{region, PROBES};
use super::u64_at;
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::rowtable::container_header::read_container_header;
use crate::rowtable::search::{hint_get, hint_positions, naive_get, MatrixIter, RowIter};
use crate::rowtable::{RowTable, ROW_MAGIC};
use crate::types::{make_internal_key, user_key_of, KIND_FOR_SEEK, MAX_SEQUENCE};
use std::sync::Arc;

/// Page size of the `rowtable` target (the smallest a container has).
pub const ROW_PAGE_SIZE: usize = 4096;

/// Rows, newest first, each with its first live entry.
type Rows = Vec<(Arc<RowTable>, u64)>;

/// One row whose header starts the input (page 0 of a container of 4 KiB pages), numbered as
/// its header says.
pub(super) fn rowtable(data: &[u8]) -> Result<()> {
    let region = region("matrix.pmc", data)?;
    let table = RowTable::open(region, ROW_PAGE_SIZE, 0, u64_at(data, 8))?;
    walk(vec![(Arc::new(table), 0)])
}

/// A container: its header, then the row of every page that starts with a row header (each
/// must open), newest first (one row per number).
pub(super) fn matrix_container(data: &[u8]) -> Result<()> {
    let region = region("matrix.pmc", data)?;
    let page_size = read_container_header(&*region)?;
    let mut rows = Vec::new();
    for page in (1..data.len() / page_size).filter(|p| is_row(data, p * page_size)) {
        let number = u64_at(data, page * page_size + 8);
        let table = RowTable::open(region.clone(), page_size, page as u32, number)?;
        rows.push(table);
    }
    rows.sort_by_key(|t| std::cmp::Reverse(t.number()));
    rows.dedup_by_key(|t| t.number());
    walk(rows.into_iter().map(|t| (Arc::new(t), 0)).collect())
}

/// True if a row header starts at `at`.
fn is_row(data: &[u8], at: usize) -> bool {
    data[at..].starts_with(ROW_MAGIC)
}

/// Every row alone, then the rows merged.
fn walk(rows: Rows) -> Result<()> {
    for (table, _) in &rows {
        row_sizes(table);
        let mut it = RowIter::new(table.clone(), 0);
        scan(&mut it, table.len())?;
    }
    walk_merged(&rows)
}

/// The rows merged: iterated, each probed key sought through the hints and looked up both
/// ways, then steps backwards from the end.
fn walk_merged(rows: &Rows) -> Result<()> {
    let entries = rows.iter().map(|(t, _)| t.len()).sum();
    let mut merged = MatrixIter::new(rows.clone());
    for key in scan(&mut merged, entries)? {
        let user_key = user_key_of(&key);
        merged.seek(&make_internal_key(user_key, MAX_SEQUENCE, KIND_FOR_SEEK));
        merged.status()?;
        hint_get(rows, user_key, MAX_SEQUENCE)?;
        naive_get(rows, user_key, MAX_SEQUENCE)?;
        hint_positions(rows, user_key)?;
    }
    merged.seek_to_last();
    for _ in 0..PROBES {
        merged.prev();
    }
    merged.status()
}

/// What a column compaction and the page accounting ask of a recovered row, from its first
/// entry and from its middle one.
fn row_sizes(table: &RowTable) {
    for first in [0, table.len() / 2] {
        std::hint::black_box((table.bytes_from(first), table.live_pages(first)));
    }
    std::hint::black_box(table.used_pages());
}

/// Iterates `it` from the first entry (at most `limit` + 1 steps: a row holds `limit`); the
/// first [`PROBES`] keys.
fn scan(it: &mut dyn InternalIterator, limit: u64) -> Result<Vec<Vec<u8>>> {
    let (mut keys, mut n) = (Vec::new(), 0u64);
    it.seek_to_first();
    while it.valid() && n <= limit {
        if keys.len() < PROBES {
            keys.push(it.key().to_vec());
        }
        n += 1;
        it.next();
    }
    it.status()?;
    Ok(keys)
}
