//! Merges several sorted [`InternalIterator`]s into one sorted stream.
//!
//! Children are ordered newest source first; when two children are on equal internal keys the
//! lower index wins, so a newer source shadows an older one deterministically. The number of
//! children is small (PMTables + one per level), so the minimum is found by a linear scan, which
//! is faster than a heap at this size and keeps no extra state to invalidate.

use super::InternalIterator;
use crate::error::Result;
use crate::types::compare_internal_keys;
use std::cmp::Ordering;

/// The merged view of several sorted sources.
pub struct MergingIterator {
    children: Vec<Box<dyn InternalIterator>>,
    current: Option<usize>,
}

impl MergingIterator {
    /// Merges `children`, newest source first.
    pub fn new(children: Vec<Box<dyn InternalIterator>>) -> Self {
        MergingIterator {
            children,
            current: None,
        }
    }

    fn find_smallest(&mut self) {
        let mut best: Option<usize> = None;
        for (i, child) in self.children.iter().enumerate() {
            if !child.valid() {
                continue;
            }
            best = match best {
                Some(b)
                    if compare_internal_keys(child.key(), self.children[b].key())
                        != Ordering::Less =>
                {
                    Some(b)
                }
                _ => Some(i),
            };
        }
        self.current = best;
    }
}

impl InternalIterator for MergingIterator {
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
        if let Some(i) = self.current {
            self.children[i].next();
            self.find_smallest();
        }
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
