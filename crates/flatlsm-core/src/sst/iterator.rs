//! Two-level iterator over a table: a position in the in-memory index, then in one data block.
//! It moves in both directions; a decoded [`Block`] gives random access to its entries, so
//! stepping back within a block is an index decrement (LevelDB re-scans from a restart point
//! instead because it decodes entries lazily).
//!
//! Invariant: when valid, `block` is the loaded data block `block_idx` and `pos < block.len()`.
//! On a read or corruption error the iterator becomes invalid and keeps the first error for
//! [`InternalIterator::status`]. Single owner (`Send`); it holds the table and its current
//! block through `Arc`s, so it stays usable while the table cache evicts the table.

use super::block::Block;
use super::table::Table;
use crate::error::{Error, Result};
use crate::iter::{copy_error, InternalIterator};
use std::sync::Arc;

/// Cursor over the entries of one [`Table`].
pub struct TableIterator {
    table: Arc<Table>,
    block: Option<Arc<Block>>,
    block_idx: usize,
    pos: usize,
    error: Option<Error>,
}

impl TableIterator {
    pub(crate) fn new(table: Arc<Table>) -> Self {
        TableIterator {
            table,
            block: None,
            block_idx: 0,
            pos: 0,
            error: None,
        }
    }

    /// Positions at the first entry of the first non-empty data block from `idx` on
    /// (invalid at the end of the table or on error).
    fn enter_block(&mut self, mut idx: usize) {
        self.block = None;
        while self.error.is_none() && idx < self.table.num_blocks() {
            match self.table.load_block(idx) {
                Ok(b) if !b.is_empty() => {
                    (self.block, self.block_idx, self.pos) = (Some(b), idx, 0);
                    return;
                }
                Ok(_) => idx += 1,
                Err(e) => self.error = Some(e),
            }
        }
    }

    /// Positions at the last entry of the last non-empty data block at or before `idx`
    /// (invalid before the start of the table or on error). Blocks are decoded whole, so the
    /// last entry is found by index; no restart-point scan is needed.
    fn enter_block_backward(&mut self, idx: Option<usize>) {
        self.block = None;
        let mut idx = idx;
        while let Some(i) = idx.filter(|_| self.error.is_none()) {
            match self.table.load_block(i) {
                Ok(b) if !b.is_empty() => {
                    let last = b.len() - 1;
                    (self.block, self.block_idx, self.pos) = (Some(b), i, last);
                    return;
                }
                Ok(_) => idx = i.checked_sub(1),
                Err(e) => self.error = Some(e),
            }
        }
    }

    fn current(&self) -> &Block {
        self.block.as_deref().expect("iterator is valid")
    }
}

impl InternalIterator for TableIterator {
    fn valid(&self) -> bool {
        self.block.is_some()
    }

    fn seek_to_first(&mut self) {
        self.enter_block(0);
    }

    fn seek(&mut self, target: &[u8]) {
        self.block = None;
        let idx = self.table.find_block(target);
        if self.error.is_some() || idx >= self.table.num_blocks() {
            return;
        }
        match self.table.load_block(idx) {
            Ok(b) => {
                let pos = b.seek(target);
                if pos < b.len() {
                    (self.block, self.block_idx, self.pos) = (Some(b), idx, pos);
                } else {
                    self.enter_block(idx + 1);
                }
            }
            Err(e) => self.error = Some(e),
        }
    }

    fn next(&mut self) {
        let len = self.current().len();
        if self.pos + 1 < len {
            self.pos += 1;
        } else {
            self.enter_block(self.block_idx + 1);
        }
    }

    fn seek_to_last(&mut self) {
        self.enter_block_backward(self.table.num_blocks().checked_sub(1));
    }

    fn prev(&mut self) {
        if self.pos > 0 {
            self.pos -= 1;
        } else {
            self.enter_block_backward(self.block_idx.checked_sub(1));
        }
    }

    fn key(&self) -> &[u8] {
        self.current().key(self.pos)
    }

    fn value(&self) -> &[u8] {
        self.current().value(self.pos)
    }

    fn status(&self) -> Result<()> {
        match &self.error {
            None => Ok(()),
            Some(e) => Err(copy_error(e)),
        }
    }
}
