//! Cursors over a PMTable in internal-key order, in both directions. Neither copies a value:
//! values are borrowed from the PM Log, whose entries never change once readable, and read
//! without a crc check (every index slot is an `EntryOffset`, see `log.rs`).
//!
//! - [`PmTableCursor`] borrows the table and holds a skiplist entry, so `next`/`prev` follow the
//!   skiplist's links (no search) and keys are borrowed from the index. Flushes use it: they
//!   run while the caller holds the table.
//! - [`PmTableIterator`] owns an `Arc` of the table, as the database iterator needs (a `'static`
//!   cursor that outlives any borrow), and re-seeks by its current key on every step: it cannot
//!   hold a skiplist entry, which borrows the skiplist. It keeps one reused key buffer.
//!
//! Both are correct while a writer inserts into a mutable table: the skiplist is lock-free and
//! entries are never removed, so a held entry stays linked and a re-seek finds the next key.
//! They see entries inserted after they started that sort after their position; the database
//! iterator filters those by sequence.

use super::log::ValueSpan;
use super::table::{PmTable, Slot};
use crate::error::{Error, Result};
use crate::iter::{copy_error, InternalIterator};
use crate::types::InternalKey;
use crossbeam_skiplist::map::Entry;
use std::ops::Bound;
use std::sync::Arc;

/// One index entry of a table.
type IndexEntry<'a> = Entry<'a, InternalKey, Slot>;

/// A cursor borrowing a PMTable: walks the skiplist and borrows keys and values.
pub struct PmTableCursor<'a> {
    table: &'a PmTable,
    /// The current index entry; `None` = invalid.
    entry: Option<IndexEntry<'a>>,
    /// The current entry's value, borrowed from the PM Log (empty when invalid).
    value: &'a [u8],
    error: Option<Error>,
}

impl<'a> PmTableCursor<'a> {
    pub(super) fn new(table: &'a PmTable) -> Self {
        PmTableCursor {
            table,
            entry: None,
            value: &[],
            error: None,
        }
    }

    /// Makes `found` the current entry (invalid if `None` or if its value cannot be read).
    fn settle(&mut self, found: Option<IndexEntry<'a>>) {
        self.entry = None;
        self.value = &[];
        let Some(e) = found else { return };
        match self.table.value_of(e.value()) {
            Ok(v) => {
                self.value = v;
                self.entry = Some(e);
            }
            Err(err) => self.error = Some(err),
        }
    }
}

impl InternalIterator for PmTableCursor<'_> {
    fn valid(&self) -> bool {
        self.entry.is_some()
    }
    fn seek_to_first(&mut self) {
        self.settle(self.table.index().front());
    }
    fn seek(&mut self, target: &[u8]) {
        let t = InternalKey(target.to_vec());
        self.settle(self.table.index().lower_bound(Bound::Included(&t)));
    }
    fn next(&mut self) {
        let next = self.entry.take().and_then(|e| e.next());
        self.settle(next);
    }
    fn seek_to_last(&mut self) {
        self.settle(self.table.index().back());
    }
    fn prev(&mut self) {
        let prev = self.entry.take().and_then(|e| e.prev());
        self.settle(prev);
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        let t = InternalKey(target.to_vec());
        self.settle(self.table.index().upper_bound(Bound::Included(&t)));
    }
    fn key(&self) -> &[u8] {
        self.entry.as_ref().map_or(&[], |e| e.key().as_bytes())
    }
    fn value(&self) -> &[u8] {
        self.value
    }
    fn status(&self) -> Result<()> {
        self.error.as_ref().map_or(Ok(()), |e| Err(copy_error(e)))
    }
}

/// Where a [`PmTableIterator`] stands: kept apart from the table handle so a search of the
/// table (which borrows it) can update the position.
#[derive(Default)]
struct Position {
    /// The current internal key (the buffer is reused from step to step).
    key: InternalKey,
    value: ValueSpan,
    valid: bool,
    error: Option<Error>,
}

impl Position {
    /// Moves to `found`, a search result of `table`; invalid if `None`.
    fn set(&mut self, table: &PmTable, found: Option<IndexEntry<'_>>) {
        self.valid = false;
        let Some(e) = found else { return };
        match table.value_span(e.value()) {
            Ok(span) => {
                self.key.0.clear();
                self.key.0.extend_from_slice(e.key().as_bytes());
                self.value = span;
                self.valid = true;
            }
            Err(err) => self.error = Some(err),
        }
    }
}

/// A `'static` cursor over a PMTable that re-seeks by key on every step (module documentation).
pub struct PmTableIterator {
    table: Arc<PmTable>,
    pos: Position,
}

impl PmTableIterator {
    pub(super) fn new(table: Arc<PmTable>) -> Self {
        PmTableIterator {
            table,
            pos: Position::default(),
        }
    }

    /// Moves to the first entry within `bound` (from below).
    fn load(&mut self, bound: Bound<&InternalKey>) {
        let found = self.table.index().lower_bound(bound);
        self.pos.set(&self.table, found);
    }

    /// Moves to the last entry within `bound` (from above).
    fn load_back(&mut self, bound: Bound<&InternalKey>) {
        let found = self.table.index().upper_bound(bound);
        self.pos.set(&self.table, found);
    }
}

impl InternalIterator for PmTableIterator {
    fn valid(&self) -> bool {
        self.pos.valid
    }
    fn seek_to_first(&mut self) {
        self.load(Bound::Unbounded);
    }
    fn seek(&mut self, target: &[u8]) {
        self.load(Bound::Included(&InternalKey(target.to_vec())));
    }
    fn next(&mut self) {
        let found = self
            .table
            .index()
            .lower_bound(Bound::Excluded(&self.pos.key));
        self.pos.set(&self.table, found);
    }
    fn seek_to_last(&mut self) {
        self.load_back(Bound::Unbounded);
    }
    fn prev(&mut self) {
        let found = self
            .table
            .index()
            .upper_bound(Bound::Excluded(&self.pos.key));
        self.pos.set(&self.table, found);
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.load_back(Bound::Included(&InternalKey(target.to_vec())));
    }
    fn key(&self) -> &[u8] {
        if self.pos.valid {
            self.pos.key.as_bytes()
        } else {
            &[]
        }
    }
    fn value(&self) -> &[u8] {
        if self.pos.valid {
            self.table.log().value_bytes(self.pos.value)
        } else {
            &[]
        }
    }
    fn status(&self) -> Result<()> {
        self.pos
            .error
            .as_ref()
            .map_or(Ok(()), |e| Err(copy_error(e)))
    }
}
