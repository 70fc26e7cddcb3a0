//! Iterators over internal keys, and the user-facing iterator built on them.
//!
//! [`InternalIterator`] is the LevelDB-style cursor every sorted source implements (PMTables,
//! SSTables, levels); merges and the database iterator are built on top of it. Cursors report
//! I/O and corruption errors through [`InternalIterator::status`] and become invalid on error.

mod db_iter;
mod level;
mod merging;

pub use db_iter::{DbIterator, ValueResolver};
pub use level::LevelIterator;
pub use merging::MergingIterator;

use crate::error::Result;

/// A cursor over entries sorted by [`crate::types::compare_internal_keys`].
pub trait InternalIterator: Send {
    /// True if the cursor is on an entry.
    fn valid(&self) -> bool;
    /// Moves to the first entry.
    fn seek_to_first(&mut self);
    /// Moves to the first entry whose internal key is >= `target` (an internal key).
    fn seek(&mut self, target: &[u8]);
    /// Moves to the next entry. Requires `valid()`.
    fn next(&mut self);
    /// The current internal key. Requires `valid()`.
    fn key(&self) -> &[u8];
    /// The current value (inline bytes, an encoded value pointer, or empty for a tombstone).
    fn value(&self) -> &[u8];
    /// The first error met, if any.
    fn status(&self) -> Result<()>;
}

/// An iterator over a sorted in-memory vector of (internal key, value), for tests and small sources.
pub struct VecIterator {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    pos: usize,
}

impl VecIterator {
    /// Takes entries that are already sorted by internal key.
    pub fn new(entries: Vec<(Vec<u8>, Vec<u8>)>) -> Self {
        let pos = entries.len();
        VecIterator { entries, pos }
    }
}

impl InternalIterator for VecIterator {
    fn valid(&self) -> bool {
        self.pos < self.entries.len()
    }
    fn seek_to_first(&mut self) {
        self.pos = 0;
    }
    fn seek(&mut self, target: &[u8]) {
        self.pos = self.entries.partition_point(|(k, _)| {
            crate::types::compare_internal_keys(k, target) == std::cmp::Ordering::Less
        });
    }
    fn next(&mut self) {
        self.pos += 1;
    }
    fn key(&self) -> &[u8] {
        &self.entries[self.pos].0
    }
    fn value(&self) -> &[u8] {
        &self.entries[self.pos].1
    }
    fn status(&self) -> Result<()> {
        Ok(())
    }
}
