//! Cursors over a PMTable in internal-key order, in both directions. Neither copies a value:
//! values are borrowed from the PM Log, whose entries never change once readable, and read
//! without a crc check (every index slot is an `EntryOffset`, see `log.rs`).
//!
//! - [`PmTableCursor`] borrows the table and holds a skiplist node, so `next` follows the
//!   skiplist's link (no search) and values are borrowed from the log. Flushes use it: they
//!   run while the caller holds the table.
//! - [`PmTableIterator`] owns an `Arc` of the table, as the database iterator needs (a `'static`
//!   cursor that outlives any borrow); it holds a node address too (nodes live as long as the
//!   table it owns).
//!
//! Both unpack the current internal key into one reused buffer (the index packs keys into
//! words). Both are correct while a writer inserts into a mutable table: nodes are never
//! removed or changed, so a held node stays linked and its successor is always the next key.
//! They see entries inserted after they started that sort after their position; the database
//! iterator filters those by sequence.

use super::index::NodeRef;
use super::log::ValueSpan;
use super::table::PmTable;
use crate::error::{Error, Result};
use crate::iter::{copy_error, InternalIterator};
use crate::types::split_internal_key;
use std::sync::Arc;

/// A cursor borrowing a PMTable: walks the skiplist and borrows values.
pub struct PmTableCursor<'a> {
    table: &'a PmTable,
    /// The current node; `None` = invalid.
    node: Option<NodeRef>,
    /// The current internal key (empty when invalid).
    key: Vec<u8>,
    /// The current entry's value, borrowed from the PM Log (empty when invalid).
    value: &'a [u8],
    error: Option<Error>,
}

impl<'a> PmTableCursor<'a> {
    pub(super) fn new(table: &'a PmTable) -> Self {
        PmTableCursor {
            table,
            node: None,
            key: Vec::new(),
            value: &[],
            error: None,
        }
    }

    /// Makes `found` the current entry (invalid if `None` or if its value cannot be read).
    fn settle(&mut self, found: Option<NodeRef>) {
        self.node = None;
        self.value = &[];
        self.key.clear();
        let Some(node) = found else { return };
        let index = self.table.index();
        index.touch_next(node);
        match self.table.value_of(&index.info(node)) {
            Ok(v) => {
                self.value = v;
                self.node = Some(node);
                index.append_internal_key(node, &mut self.key);
            }
            Err(err) => self.error = Some(err),
        }
    }
}

impl InternalIterator for PmTableCursor<'_> {
    fn valid(&self) -> bool {
        self.node.is_some()
    }
    fn seek_to_first(&mut self) {
        self.settle(self.table.index().first());
    }
    fn seek(&mut self, target: &[u8]) {
        let (user_key, trailer) = split_internal_key(target);
        self.settle(self.table.index().lower_bound(user_key, trailer));
    }
    fn next(&mut self) {
        let next = self.node.take().and_then(|n| self.table.index().next(n));
        self.settle(next);
    }
    fn seek_to_last(&mut self) {
        self.settle(self.table.index().last());
    }
    fn prev(&mut self) {
        let prev = self.node.take().and_then(|n| self.table.index().prev(n));
        self.settle(prev);
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        let (user_key, trailer) = split_internal_key(target);
        self.settle(self.table.index().at_or_before(user_key, trailer));
    }
    fn key(&self) -> &[u8] {
        &self.key
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
    /// The current node (meaningful while `valid`).
    node: NodeRef,
    /// The current internal key (the buffer is reused from step to step).
    key: Vec<u8>,
    value: ValueSpan,
    valid: bool,
    error: Option<Error>,
}

impl Position {
    /// Moves to `found`, a search result of `table`; invalid if `None`.
    fn set(&mut self, table: &PmTable, found: Option<NodeRef>) {
        self.valid = false;
        let Some(node) = found else { return };
        let index = table.index();
        index.touch_next(node);
        match table.value_span(&index.info(node)) {
            Ok(span) => {
                self.key.clear();
                index.append_internal_key(node, &mut self.key);
                self.node = node;
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

    /// Moves to `found`, a search result of the table.
    fn load(&mut self, found: Option<NodeRef>) {
        self.pos.set(&self.table, found);
    }

    /// The node a step from the current one would start from (`None` when invalid).
    fn current(&self) -> Option<NodeRef> {
        self.pos.valid.then_some(self.pos.node)
    }
}

impl InternalIterator for PmTableIterator {
    fn valid(&self) -> bool {
        self.pos.valid
    }
    fn seek_to_first(&mut self) {
        self.load(self.table.index().first());
    }
    fn seek(&mut self, target: &[u8]) {
        let (user_key, trailer) = split_internal_key(target);
        self.load(self.table.index().lower_bound(user_key, trailer));
    }
    fn next(&mut self) {
        let found = self.current().and_then(|n| self.table.index().next(n));
        self.load(found);
    }
    fn seek_to_last(&mut self) {
        self.load(self.table.index().last());
    }
    fn prev(&mut self) {
        let found = self.current().and_then(|n| self.table.index().prev(n));
        self.load(found);
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        let (user_key, trailer) = split_internal_key(target);
        self.load(self.table.index().at_or_before(user_key, trailer));
    }
    fn key(&self) -> &[u8] {
        if self.pos.valid {
            &self.pos.key
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
