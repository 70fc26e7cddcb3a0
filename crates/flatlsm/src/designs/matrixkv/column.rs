//! Column compaction (MatrixKV 3.2): merge one key range of every compactor row with the L1
//! files it overlaps, instead of all of level 0 with all of L1.
//!
//! Planning ([`plan`]): columns sweep the key space from left to right within one compactor, so
//! a column starts at the smallest live key of the compactor rows (everything before it already
//! reached L1). Candidate ends are the largest keys of the L1 files (the paper's L1 key ranges)
//! and, for granularity when L1 has few files, keys sampled from the biggest row. The column
//! widens over the candidates until its row data reaches `column_lower_bound`; a step that would
//! jump past `column_upper_bound` stops at the previous candidate. Each candidate is measured in
//! every row by a binary search, the rows split over `column_threads` threads (the paper's k
//! threads fetching a column's part of the rows).
//!
//! The job ([`ColumnJob`]) merges each row's part `first..end` with the overlapping L1 files into
//! new L1 files, and its edit records the new L1 files and every row's new first live entry (a
//! row consumed to its end is deleted) together — one manifest edit, the commit point. Pages
//! the rows no longer need are returned only after that (`rows.rs`).

use super::rows::RowEdit;
use crate::compaction::job::Compaction;
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::options::MatrixKvOptions;
use crate::rowtable::search::RowIter;
use crate::rowtable::RowTable;
use crate::types::user_key_of;
use crate::version::{DesignRecord, FileMeta, Version};
use std::sync::Arc;

/// One compactor row's part of a column.
#[derive(Clone)]
pub(crate) struct RowCut {
    pub table: Arc<RowTable>,
    /// Its first live entry.
    pub first: u64,
    /// The first entry after the column.
    pub end: u64,
}

/// A planned column compaction.
pub(crate) struct ColumnJob {
    /// The L1 files it rewrites (as a compaction from level 0 without input files).
    pub compaction: Compaction,
    /// The rows' parts.
    pub cuts: Vec<RowCut>,
    /// Row bytes in the column.
    pub bytes: u64,
}

impl ColumnJob {
    /// One iterator per row part.
    pub fn sources(&self) -> Vec<Box<dyn InternalIterator>> {
        let one = |c: &RowCut| -> Box<dyn InternalIterator> {
            Box::new(RowIter::bounded(c.table.clone(), c.first, c.end))
        };
        self.cuts.iter().map(one).collect()
    }

    /// The design records of the rows' new first entries (or deletions), for the job's edit.
    pub fn row_records(&self) -> Vec<DesignRecord> {
        let mut edit = RowEdit::default();
        for c in self.cuts.iter().filter(|c| c.end > c.first) {
            match c.end >= c.table.len() {
                true => edit.deleted_rows.push(c.table.number()),
                false => edit.row_firsts.push((c.table.number(), c.end)),
            }
        }
        edit.records()
    }
}

/// Each row's end, the column's bytes, and its last key (`None`: unbounded).
type Column = (Vec<u64>, u64, Option<Vec<u8>>);

/// The next column of `compactor` (rows with their first live entries), or `None` if the
/// compactor is empty.
pub(crate) fn plan(
    compactor: &[(Arc<RowTable>, u64)],
    version: &Version,
    opts: &MatrixKvOptions,
) -> Result<Option<ColumnJob>> {
    let rows: Vec<(Arc<RowTable>, u64)> = compactor
        .iter()
        .filter(|(t, f)| *f < t.len())
        .cloned()
        .collect();
    if rows.is_empty() {
        return Ok(None);
    }
    let start = smallest_live_key(&rows)?;
    let candidates = candidate_ends(&rows, &version.levels[1], &start, opts)?;
    let (ends, bytes, last) = widen(&rows, &candidates, opts)?;
    let cuts = rows
        .iter()
        .zip(ends)
        .map(|((t, f), end)| RowCut {
            table: t.clone(),
            first: *f,
            end,
        })
        .collect();
    let hi = last.unwrap_or_else(|| vec![0xff; crate::options::MAX_KEY_SIZE + 1]);
    let overlapping = version.overlapping_files(1, &start, &hi);
    let compaction = Compaction {
        level: 0,
        inputs: Vec::new(),
        output_level: 1,
        overlapping,
        shadows: Vec::new(),
    };
    Ok(Some(ColumnJob {
        compaction,
        cuts,
        bytes,
    }))
}

/// The smallest user key among the rows' first live entries.
fn smallest_live_key(rows: &[(Arc<RowTable>, u64)]) -> Result<Vec<u8>> {
    let mut smallest: Option<Vec<u8>> = None;
    for (t, first) in rows {
        let key = user_key_of(&t.ikey(*first)?).to_vec();
        if smallest.as_ref().is_none_or(|s| key < *s) {
            smallest = Some(key);
        }
    }
    Ok(smallest.unwrap_or_default())
}

/// Sorted, distinct candidate ends at or after `start`: L1 files' largest keys and keys sampled
/// from the biggest row about every quarter of the lower bound.
fn candidate_ends(
    rows: &[(Arc<RowTable>, u64)],
    l1: &[Arc<FileMeta>],
    start: &[u8],
    opts: &MatrixKvOptions,
) -> Result<Vec<Vec<u8>>> {
    let mut ends: Vec<Vec<u8>> = l1
        .iter()
        .map(|f| user_key_of(&f.largest).to_vec())
        .collect();
    let (table, first) = rows
        .iter()
        .max_by_key(|(t, f)| t.bytes_from(*f))
        .expect("rows is not empty");
    let (entries, bytes) = (table.len() - first, table.bytes_from(*first).max(1));
    let stride = (entries as u128 * (opts.column_lower_bound / 4).max(1) as u128 / bytes as u128)
        .max(1) as u64;
    let mut i = first + stride;
    while i < table.len() {
        ends.push(user_key_of(&table.ikey(i)?).to_vec());
        i += stride;
    }
    ends.retain(|e| e.as_slice() >= start);
    ends.sort();
    ends.dedup();
    Ok(ends)
}

/// Widens the column over `candidates`; returns each row's end, the bytes, and the last key
/// in the column (`None`: every remaining entry, when no candidate reaches the lower bound).
fn widen(
    rows: &[(Arc<RowTable>, u64)],
    candidates: &[Vec<u8>],
    opts: &MatrixKvOptions,
) -> Result<Column> {
    let mut best: Option<Column> = None;
    for end in candidates {
        let ends = ends_after(rows, end, opts.column_threads)?;
        let bytes = column_bytes(rows, &ends);
        let jumped = bytes > opts.column_upper_bound;
        if let Some(b) = best.take().filter(|b| jumped && b.1 > 0) {
            return Ok(b);
        }
        best = Some((ends, bytes, Some(end.clone())));
        if bytes >= opts.column_lower_bound {
            return Ok(best.expect("just set"));
        }
    }
    let ends: Vec<u64> = rows.iter().map(|(t, _)| t.len()).collect();
    let bytes = column_bytes(rows, &ends);
    Ok((ends, bytes, None))
}

/// Row bytes between each row's first entry and its end.
fn column_bytes(rows: &[(Arc<RowTable>, u64)], ends: &[u64]) -> u64 {
    rows.iter()
        .zip(ends)
        .map(|((t, f), e)| t.bytes_from(*f) - t.bytes_from(*e))
        .sum()
}

/// Per row, the first live entry whose user key is greater than `end`, the rows split over
/// `threads` threads.
fn ends_after(rows: &[(Arc<RowTable>, u64)], end: &[u8], threads: usize) -> Result<Vec<u64>> {
    let mut after = end.to_vec();
    after.push(0); // the smallest key greater than `end`
    let chunk = rows.len().div_ceil(threads.max(1));
    let search = |part: &[(Arc<RowTable>, u64)]| -> Result<Vec<u64>> {
        part.iter()
            .map(|(t, f)| t.lower_bound(&after, *f, t.len()))
            .collect()
    };
    if chunk >= rows.len() {
        return search(rows);
    }
    let parts: Vec<Result<Vec<u64>>> = std::thread::scope(|s| {
        let handles: Vec<_> = rows
            .chunks(chunk)
            .map(|p| s.spawn(move || search(p)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a column search thread panicked"))
            .collect()
    });
    let mut out = Vec::with_capacity(rows.len());
    for p in parts {
        out.extend(p?);
    }
    Ok(out)
}
