//! Cross-row hint search (MatrixKV 3.4): a lookup binary-searches the newest row, then each
//! older row only between the forward pointers of the two entries around the key, instead of
//! the whole row. Also a per-row iterator for scans and compactions.
//!
//! Why the narrowing is exact: in a row R whose pointers index row S, let `p` be the first entry
//! of R with user key >= k. Entry `p - 1` has a key < k, so S's first key >= k is at or after
//! `forward[p - 1]`; entry `p` has a key >= k, so it is at or before `forward[p]`. Rows are
//! truncated from the front (column compactions consume key ranges in order), so every range is
//! clamped to the row's live entries; `p - 1` is only used when it is live and known below `k`.
//! When a row's pointers index a row that is gone, the next row is searched whole.

use super::{RowTable, ENTRY_HEADER_LEN};
use crate::error::{Error, Result};
use crate::iter::{copy_error, InternalIterator, MergingIterator};
use crate::types::{compare_internal_keys, split_internal_key, user_key_of, SequenceNumber};
use std::sync::Arc;

/// A row as a version sees it: the table and its first live entry.
#[derive(Clone, Copy)]
pub struct LiveRow<'a> {
    /// The row.
    pub table: &'a RowTable,
    /// Entries before this one were compacted away.
    pub first: u64,
}

/// Rows (newest first, each with its first live entry) as [`LiveRow`]s.
pub fn live_rows(rows: &[(Arc<RowTable>, u64)]) -> Vec<LiveRow<'_>> {
    let live = rows.iter().map(|(t, first)| LiveRow {
        table: t,
        first: *first,
    });
    live.collect()
}

/// The newest version of a key visible at a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// Its internal key (the trailer says whether it is a value, pointer or tombstone).
    pub ikey: Vec<u8>,
    /// Its value.
    pub value: Vec<u8>,
}

/// The newest version of `user_key` with a sequence <= `snapshot` in `rows` (newest row
/// first), each older row searched only where the forward pointers allow.
pub fn hint_get(
    rows: &[LiveRow<'_>],
    user_key: &[u8],
    snapshot: SequenceNumber,
) -> Result<Option<Found>> {
    let mut range = None;
    for (k, row) in rows.iter().enumerate() {
        let (lo, hi) = clamp(range, row);
        let p = row.table.lower_bound(user_key, lo, hi)?;
        if let Some(found) = visible_at(row, p, user_key, snapshot)? {
            return Ok(Some(found));
        }
        range = rows.get(k + 1).and_then(|older| narrowed(row, p, older));
    }
    Ok(None)
}

/// The same answer as [`hint_get`], found by a full binary search of every row (the reference
/// the property test holds the hint search to).
pub fn naive_get(
    rows: &[LiveRow<'_>],
    user_key: &[u8],
    snapshot: SequenceNumber,
) -> Result<Option<Found>> {
    for row in rows {
        let p = row
            .table
            .lower_bound(user_key, row.first, row.table.len())?;
        if let Some(found) = visible_at(row, p, user_key, snapshot)? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// Per row, the first live entry with user key >= `user_key`, found through the hints (where
/// a scan's row iterators start).
pub fn hint_positions(rows: &[LiveRow<'_>], user_key: &[u8]) -> Result<Vec<u64>> {
    let mut range = None;
    let mut out = Vec::with_capacity(rows.len());
    for (k, row) in rows.iter().enumerate() {
        let (lo, hi) = clamp(range, row);
        let p = row.table.lower_bound(user_key, lo, hi)?;
        out.push(p);
        range = rows.get(k + 1).and_then(|older| narrowed(row, p, older));
    }
    Ok(out)
}

/// A hint range clamped to the row's live entries (the whole live row without a hint).
fn clamp(range: Option<(u64, u64)>, row: &LiveRow<'_>) -> (u64, u64) {
    let n = row.table.len();
    let first = row.first.min(n);
    let (lo, hi) = range.unwrap_or((first, n));
    let lo = lo.clamp(first, n);
    (lo, hi.clamp(lo, n))
}

/// Where `older` holds the lower bound of the key whose lower bound in `row` is `p`; `None`
/// when `row`'s pointers index another row.
fn narrowed(row: &LiveRow<'_>, p: u64, older: &LiveRow<'_>) -> Option<(u64, u64)> {
    if row.table.prev_row() != older.table.number() {
        return None;
    }
    let lo = match p > row.first {
        true => row.table.meta(p - 1).forward as u64,
        false => 0,
    };
    let hi = match p < row.table.len() {
        true => row.table.meta(p).forward as u64,
        false => u64::MAX,
    };
    Some((lo, hi))
}

/// The first version of `user_key` from entry `p` on with a sequence <= `snapshot`.
fn visible_at(
    row: &LiveRow<'_>,
    mut p: u64,
    user_key: &[u8],
    snapshot: SequenceNumber,
) -> Result<Option<Found>> {
    while p < row.table.len() {
        let ikey = row.table.ikey(p)?;
        let (uk, trailer) = split_internal_key(&ikey);
        if uk != user_key {
            return Ok(None);
        }
        if trailer >> 8 <= snapshot {
            let e = row.table.entry(p)?;
            let (ikey, value) = (e.ikey.into_owned(), e.value.into_owned());
            return Ok(Some(Found { ikey, value }));
        }
        p += 1;
    }
    Ok(None)
}

/// An iterator over entries `first..end` of one row (its live entries, or a column's part of
/// them), owning a handle to it. Keys and values are copied out of PM (an entry may span pages).
pub struct RowIter {
    table: Arc<RowTable>,
    first: u64,
    end: u64,
    pos: u64,
    key: Vec<u8>,
    value: Vec<u8>,
    error: Option<Error>,
}

impl RowIter {
    /// An unpositioned iterator over entries `first..` of `table`.
    pub fn new(table: Arc<RowTable>, first: u64) -> Self {
        let end = table.len();
        Self::bounded(table, first, end)
    }

    /// An unpositioned iterator over entries `first..end` of `table`.
    pub fn bounded(table: Arc<RowTable>, first: u64, end: u64) -> Self {
        let end = end.min(table.len());
        RowIter {
            pos: end,
            end,
            table,
            first,
            key: Vec::new(),
            value: Vec::new(),
            error: None,
        }
    }

    /// Moves to the first entry >= `target` at or after `from` (a position from
    /// [`hint_positions`], which already lies at the target's user key).
    fn seek_from(&mut self, target: &[u8], from: u64) {
        self.pos = from.max(self.first);
        self.load();
        while self.valid() && compare_internal_keys(&self.key, target).is_lt() {
            self.next();
        }
    }

    /// Reads the entry at `pos` (invalid past the end or on a checksum failure).
    fn load(&mut self) {
        if self.pos >= self.end {
            return;
        }
        match self.table.entry(self.pos) {
            Ok(e) => {
                self.key.clear();
                self.key.extend_from_slice(&e.ikey);
                self.value.clear();
                self.value.extend_from_slice(&e.value);
            }
            Err(err) => {
                self.error = Some(err);
                self.pos = self.end;
            }
        }
    }
}

impl InternalIterator for RowIter {
    fn seek_with_hint(&mut self, target: &[u8], hint: u64) {
        self.seek_from(target, hint);
    }

    fn valid(&self) -> bool {
        self.pos < self.end && self.pos >= self.first
    }

    fn seek_to_first(&mut self) {
        self.pos = self.first;
        self.load();
    }

    fn seek(&mut self, target: &[u8]) {
        let n = self.end;
        match self.table.lower_bound(user_key_of(target), self.first, n) {
            Ok(p) => self.seek_from(target, p),
            Err(e) => {
                self.error = Some(e);
                self.pos = n;
            }
        }
    }

    fn next(&mut self) {
        self.pos += 1;
        self.load();
    }

    fn seek_to_last(&mut self) {
        self.pos = match self.end > self.first {
            true => self.end - 1,
            false => self.end,
        };
        self.load();
    }

    fn prev(&mut self) {
        self.pos = match self.pos > self.first {
            true => self.pos - 1,
            false => self.end,
        };
        self.load();
    }

    fn key(&self) -> &[u8] {
        &self.key
    }

    fn value(&self) -> &[u8] {
        &self.value
    }

    fn status(&self) -> Result<()> {
        self.error.as_ref().map_or(Ok(()), |e| Err(copy_error(e)))
    }
}

/// Bytes an entry of `key_len` + `value_len` takes in a row (without its metadata).
pub fn entry_bytes(key_len: usize, value_len: usize) -> u64 {
    (ENTRY_HEADER_LEN + key_len + value_len) as u64
}

/// The rows of a container merged into one sorted stream whose seeks find every row's start
/// through the cross-row hints (one binary search in the newest row, narrowed ones below).
pub struct MatrixIter {
    rows: Vec<(Arc<RowTable>, u64)>,
    merged: MergingIterator<'static>,
    error: Option<Error>,
}

impl MatrixIter {
    /// Merges `rows` (newest first, each with its first live entry).
    pub fn new(rows: Vec<(Arc<RowTable>, u64)>) -> Self {
        let one = |(t, f): &(Arc<RowTable>, u64)| -> Box<dyn InternalIterator> {
            Box::new(RowIter::new(t.clone(), *f))
        };
        let merged = MergingIterator::new(rows.iter().map(one).collect());
        MatrixIter {
            rows,
            merged,
            error: None,
        }
    }
}

impl InternalIterator for MatrixIter {
    fn valid(&self) -> bool {
        self.error.is_none() && self.merged.valid()
    }

    fn seek_to_first(&mut self) {
        self.merged.seek_to_first();
    }

    fn seek(&mut self, target: &[u8]) {
        match hint_positions(&live_rows(&self.rows), user_key_of(target)) {
            Ok(hints) => self.merged.seek_with_hints(target, &hints),
            Err(e) => self.error = Some(e),
        }
    }

    fn next(&mut self) {
        self.merged.next();
    }

    fn seek_to_last(&mut self) {
        self.merged.seek_to_last();
    }

    fn prev(&mut self) {
        self.merged.prev();
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.merged.seek_for_prev(target);
    }

    fn key(&self) -> &[u8] {
        self.merged.key()
    }

    fn value(&self) -> &[u8] {
        self.merged.value()
    }

    fn status(&self) -> Result<()> {
        match &self.error {
            Some(e) => Err(copy_error(e)),
            None => self.merged.status(),
        }
    }
}
