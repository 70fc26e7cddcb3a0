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
use std::borrow::Borrow;
use std::sync::Arc;

/// The newest version of a key visible at a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// Its internal key (the trailer says whether it is a value, pointer or tombstone).
    pub ikey: Vec<u8>,
    /// Its value.
    pub value: Vec<u8>,
}

/// The search functions take the rows as a version sees them, newest first: each row (an
/// `Arc<RowTable>`, a `&RowTable`, ...) with its first live entry (entries before it were
/// compacted away).
pub type Rows<T> = [(T, u64)];

/// The newest version of `user_key` with a sequence <= `snapshot` in `rows`, each older row
/// searched only where the forward pointers allow.
pub fn hint_get<T: Borrow<RowTable>>(
    rows: &Rows<T>,
    user_key: &[u8],
    snapshot: SequenceNumber,
) -> Result<Option<Found>> {
    let mut found = None;
    walk_hints(rows, user_key, |(t, _), p| {
        found = visible_at(t.borrow(), p, user_key, snapshot)?;
        Ok(found.is_none())
    })?;
    Ok(found)
}

/// The same answer as [`hint_get`], found by a full binary search of every row (the reference
/// the property test holds the hint search to).
pub fn naive_get<T: Borrow<RowTable>>(
    rows: &Rows<T>,
    user_key: &[u8],
    snapshot: SequenceNumber,
) -> Result<Option<Found>> {
    for (t, first) in rows {
        let t = t.borrow();
        let p = t.lower_bound(user_key, *first, t.len())?;
        if let Some(found) = visible_at(t, p, user_key, snapshot)? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// Per row, the first live entry with user key >= `user_key`, found through the hints (where
/// a scan's row iterators start).
pub fn hint_positions<T: Borrow<RowTable>>(rows: &Rows<T>, user_key: &[u8]) -> Result<Vec<u64>> {
    let mut out = Vec::with_capacity(rows.len());
    walk_hints(rows, user_key, |_, p| {
        out.push(p);
        Ok(true)
    })?;
    Ok(out)
}

/// Finds `user_key`'s lower bound in each row, newest first, each older row searched only in
/// the range its newer neighbour's forward pointers give; `visit` gets each row and position
/// and returns whether to go on.
fn walk_hints<T: Borrow<RowTable>>(
    rows: &Rows<T>,
    user_key: &[u8],
    mut visit: impl FnMut(&(T, u64), u64) -> Result<bool>,
) -> Result<()> {
    let mut range = None;
    for (k, row) in rows.iter().enumerate() {
        let (t, first) = (row.0.borrow(), row.1);
        let (lo, hi) = clamp(range, t, first);
        let p = t.lower_bound(user_key, lo, hi)?;
        if !visit(row, p)? {
            return Ok(());
        }
        range = rows
            .get(k + 1)
            .and_then(|older| narrowed(t, first, p, older.0.borrow()));
    }
    Ok(())
}

/// A hint range clamped to the live entries `first..` of `t` (the whole live row without a
/// hint).
fn clamp(range: Option<(u64, u64)>, t: &RowTable, first: u64) -> (u64, u64) {
    let n = t.len();
    let first = first.min(n);
    let (lo, hi) = range.unwrap_or((first, n));
    let lo = lo.clamp(first, n);
    (lo, hi.clamp(lo, n))
}

/// Where `older` holds the lower bound of the key whose lower bound in `row` (live from
/// `first`) is `p`; `None` when `row`'s pointers index another row.
fn narrowed(row: &RowTable, first: u64, p: u64, older: &RowTable) -> Option<(u64, u64)> {
    if row.prev_row() != older.number() {
        return None;
    }
    let lo = match p > first {
        true => row.meta(p - 1).forward as u64,
        false => 0,
    };
    let hi = match p < row.len() {
        true => row.meta(p).forward as u64,
        false => u64::MAX,
    };
    Some((lo, hi))
}

/// The first version of `user_key` in `t` from entry `p` on with a sequence <= `snapshot`.
fn visible_at(
    t: &RowTable,
    mut p: u64,
    user_key: &[u8],
    snapshot: SequenceNumber,
) -> Result<Option<Found>> {
    // Most rows lack the key: their entry at `p` is a greater key, which its metadata prefix
    // usually shows without a read of the data.
    if p < t.len() && !t.may_hold(p, user_key) {
        return Ok(None);
    }
    while p < t.len() {
        let ikey = t.ikey(p)?;
        let (uk, trailer) = split_internal_key(&ikey);
        if uk != user_key {
            return Ok(None);
        }
        if trailer >> 8 <= snapshot {
            let e = t.entry(p)?;
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
        match hint_positions(&self.rows, user_key_of(target)) {
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
