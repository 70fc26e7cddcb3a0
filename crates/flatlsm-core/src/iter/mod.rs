//! Iterators over internal keys, and the user-facing iterator built on them.
//!
//! [`InternalIterator`] is the LevelDB-style cursor every sorted source implements (PMTables,
//! SSTables, levels); merges and the database iterator are built on top of it. Cursors report
//! I/O and corruption errors through [`InternalIterator::status`] and become invalid on error.

mod db_iter;
#[cfg(test)]
mod db_iter_tests;
mod error_copy;
mod merging;
mod scout;
#[cfg(test)]
mod scout_tests;
#[cfg(test)]
mod tests;
mod version_filter;

pub use db_iter::{DbIterator, IterLatency, ValueResolver};
pub use error_copy::copy_error;
pub use merging::MergingIterator;
pub use scout::SLOW_VALUE_READ;
pub use version_filter::VersionFilter;

use crate::error::Result;
use crate::types::compare_internal_keys;
use std::cmp::Ordering;

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
    /// Moves to the last entry (invalid if there is none).
    fn seek_to_last(&mut self);
    /// Moves to the previous entry in internal-key order (invalid before the first one).
    /// Requires `valid()`.
    fn prev(&mut self);
    /// Moves to the last entry whose internal key is <= `target` (an internal key); invalid if
    /// every entry is greater.
    ///
    /// Moves to the first entry >= `target`, given that no entry before position `hint` of
    /// the source can be (a position a caller found by other means, such as MatrixKV's
    /// cross-row hints). The default ignores the hint and seeks.
    fn seek_with_hint(&mut self, target: &[u8], _hint: u64) {
        self.seek(target);
    }
    /// The default seeks forward and steps back; sources that can find the position directly
    /// may override it.
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.seek(target);
        if !self.valid() {
            // Everything is < target, unless the seek failed: then stay invalid with the error.
            if self.status().is_ok() {
                self.seek_to_last();
            }
            return;
        }
        if compare_internal_keys(self.key(), target) == Ordering::Greater {
            self.prev();
        }
    }
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
    fn seek_to_last(&mut self) {
        // An empty vector leaves pos == len == 0: invalid.
        self.pos = self.entries.len().saturating_sub(1);
    }
    fn prev(&mut self) {
        // Stepping back from the first entry parks on the invalid position `len`.
        self.pos = self.pos.checked_sub(1).unwrap_or(self.entries.len());
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

/// A boxed iterator is an iterator (adapters generic over `I: InternalIterator` take boxes).
impl<T: InternalIterator + ?Sized> InternalIterator for Box<T> {
    fn valid(&self) -> bool {
        (**self).valid()
    }
    fn seek_to_first(&mut self) {
        (**self).seek_to_first()
    }
    fn seek(&mut self, target: &[u8]) {
        (**self).seek(target)
    }
    fn seek_with_hint(&mut self, target: &[u8], hint: u64) {
        (**self).seek_with_hint(target, hint)
    }
    fn next(&mut self) {
        (**self).next()
    }
    fn seek_to_last(&mut self) {
        (**self).seek_to_last()
    }
    fn prev(&mut self) {
        (**self).prev()
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        (**self).seek_for_prev(target)
    }
    fn key(&self) -> &[u8] {
        (**self).key()
    }
    fn value(&self) -> &[u8] {
        (**self).value()
    }
    fn status(&self) -> Result<()> {
        (**self).status()
    }
}
