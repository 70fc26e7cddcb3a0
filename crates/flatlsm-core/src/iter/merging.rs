//! Merges several sorted [`InternalIterator`]s into one sorted stream, in either direction.
//!
//! Children are ordered newest source first; when two children are on equal internal keys the
//! lower index comes first in forward order, so a newer source shadows an older one
//! deterministically, and reverse order is exactly forward order reversed. The number of
//! children is small (PMTables + one per level), so the minimum (or maximum) is found by a
//! linear scan, which is faster than a heap at this size and keeps no extra state to invalidate.
//!
//! Errors: the merge is valid only while every child's status is Ok. The first error of any
//! child (a damaged block, a file that will not open, a failed PM read) makes the merge invalid
//! with that error in `status()`, before any further entry — it never skips the failed child
//! and goes on merging the others (RocksDB: the iterator turns invalid, `status()` holds the
//! error). A later positioning call repositions every child; the merge is valid again only if
//! every child then reports Ok (most children keep their first error, so it stays invalid).
//!
//! Invariant (as in LevelDB's MergingIterator): moving forward, every child is on its first
//! entry that comes after the merged position, or on the current entry itself for the current
//! child; moving backward, every child is on its last entry that comes before it. Switching
//! direction re-seeks all non-current children to restore the invariant for the new direction.

use super::InternalIterator;
use crate::error::Result;
use crate::types::compare_internal_keys;
use std::cmp::Ordering;

/// Which way the children are positioned relative to the current entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Direction {
    Forward,
    Reverse,
}

/// The merged view of several sorted sources. `'a` bounds what the children may borrow (a
/// flush merges a cursor that borrows its PMTable; the database iterator's are `'static`).
pub struct MergingIterator<'a> {
    children: Vec<Box<dyn InternalIterator + 'a>>,
    current: Option<usize>,
    direction: Direction,
}

impl<'a> MergingIterator<'a> {
    /// Merges `children`, newest source first.
    pub fn new(children: Vec<Box<dyn InternalIterator + 'a>>) -> Self {
        MergingIterator {
            children,
            current: None,
            direction: Direction::Forward,
        }
    }

    /// Seeks to `target` with a per-child hint (`InternalIterator::seek_with_hint`): child `i`
    /// starts no earlier than `hints[i]`.
    pub fn seek_with_hints(&mut self, target: &[u8], hints: &[u64]) {
        for (c, &hint) in self.children.iter_mut().zip(hints) {
            c.seek_with_hint(target, hint);
        }
        self.find_smallest();
    }

    /// Does child `a` come before child `b` in merged order? Both must be valid.
    fn comes_before(&self, a: usize, b: usize) -> bool {
        match compare_internal_keys(self.children[a].key(), self.children[b].key()) {
            Ordering::Less => true,
            Ordering::Equal => a < b,
            Ordering::Greater => false,
        }
    }

    fn find_smallest(&mut self) {
        self.direction = Direction::Forward;
        self.current = self.pick(|m, i, best| m.comes_before(i, best));
    }

    fn find_largest(&mut self) {
        self.direction = Direction::Reverse;
        self.current = self.pick(|m, i, best| m.comes_before(best, i));
    }

    /// The valid child that `better` prefers over all others; none once any child has met an
    /// error. A scan must stop at the first damage: merging on without the failed child would
    /// let the older versions (and deleted keys) it shadows surface from the other children.
    fn pick(&self, better: impl Fn(&Self, usize, usize) -> bool) -> Option<usize> {
        if self.children.iter().any(|c| c.status().is_err()) {
            return None;
        }
        let mut best: Option<usize> = None;
        for (i, child) in self.children.iter().enumerate() {
            if child.valid() && best.is_none_or(|b| better(self, i, b)) {
                best = Some(i);
            }
        }
        best
    }

    /// Puts every non-current child on its first entry after the current one (merged order).
    fn switch_to_forward(&mut self, cur: usize) {
        let key = self.children[cur].key().to_vec();
        for i in (0..self.children.len()).filter(|&i| i != cur) {
            let child = &mut self.children[i];
            child.seek(&key);
            // An equal key in a lower-index child precedes the current entry: skip it.
            if i < cur && child.valid() && compare_internal_keys(child.key(), &key).is_eq() {
                child.next();
            }
        }
    }

    /// Puts every non-current child on its last entry before the current one (merged order).
    fn switch_to_reverse(&mut self, cur: usize) {
        let key = self.children[cur].key().to_vec();
        for i in (0..self.children.len()).filter(|&i| i != cur) {
            let child = &mut self.children[i];
            child.seek(&key);
            if !child.valid() {
                // No entry >= key (or an error, which status() reports): the last one precedes.
                if child.status().is_ok() {
                    child.seek_to_last();
                }
                continue;
            }
            // An equal key in a lower-index child precedes the current entry: keep it.
            let keep_equal = i < cur && compare_internal_keys(child.key(), &key).is_eq();
            if !keep_equal {
                child.prev();
            }
        }
    }
}

impl InternalIterator for MergingIterator<'_> {
    fn valid(&self) -> bool {
        self.current.is_some()
    }
    fn seek_to_first(&mut self) {
        for c in &mut self.children {
            c.seek_to_first();
        }
        self.find_smallest();
    }
    fn seek(&mut self, target: &[u8]) {
        for c in &mut self.children {
            c.seek(target);
        }
        self.find_smallest();
    }
    fn next(&mut self) {
        let Some(cur) = self.current else { return };
        if self.direction == Direction::Reverse {
            self.switch_to_forward(cur);
        }
        self.children[cur].next();
        self.find_smallest();
    }
    fn seek_to_last(&mut self) {
        for c in &mut self.children {
            c.seek_to_last();
        }
        self.find_largest();
    }
    fn prev(&mut self) {
        let Some(cur) = self.current else { return };
        if self.direction == Direction::Forward {
            self.switch_to_reverse(cur);
        }
        self.children[cur].prev();
        self.find_largest();
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        for c in &mut self.children {
            c.seek_for_prev(target);
        }
        self.find_largest();
    }
    fn key(&self) -> &[u8] {
        self.children[self.current.expect("valid iterator")].key()
    }
    fn value(&self) -> &[u8] {
        self.children[self.current.expect("valid iterator")].value()
    }
    fn status(&self) -> Result<()> {
        for c in &self.children {
            c.status()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iter::VecIterator;
    use crate::types::{make_internal_key, ValueKind};

    fn source(entries: &[(&str, u64)]) -> Box<dyn InternalIterator> {
        let v = entries
            .iter()
            .map(|(k, s)| {
                (
                    make_internal_key(k.as_bytes(), *s, ValueKind::Value),
                    format!("{k}@{s}").into_bytes(),
                )
            })
            .collect();
        Box::new(VecIterator::new(v))
    }

    #[test]
    fn merged_stream_is_sorted_with_newest_version_first() {
        let mut it = MergingIterator::new(vec![
            source(&[("b", 9), ("d", 8)]),
            source(&[("a", 1), ("b", 2), ("c", 3)]),
        ]);
        it.seek_to_first();
        let mut got = Vec::new();
        while it.valid() {
            got.push(String::from_utf8(it.value().to_vec()).unwrap());
            it.next();
        }
        assert_eq!(got, ["a@1", "b@9", "b@2", "c@3", "d@8"]);
    }

    #[test]
    fn seek_positions_every_child() {
        let mut it = MergingIterator::new(vec![source(&[("a", 1), ("c", 1)]), source(&[("b", 1)])]);
        it.seek(&make_internal_key(
            b"b",
            u64::MAX >> 8,
            ValueKind::ValuePointer,
        ));
        assert_eq!(it.value(), b"b@1");
        it.next();
        assert_eq!(it.value(), b"c@1");
        it.next();
        assert!(!it.valid());
    }
}
