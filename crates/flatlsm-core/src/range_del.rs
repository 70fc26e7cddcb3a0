//! Range tombstones: `delete_range(start, end)` as the tree records it, and the fragmented view
//! reads use to tell whether a version of a key is covered.
//!
//! A [`RangeTombstone`] deletes every version of every user key in `[start, end)` whose sequence
//! is below the tombstone's own. The set is kept with the tree (the manifest records it, see
//! `version/edit.rs`); [`RangeTombstones`] splits overlapping tombstones into disjoint
//! fragments, each with the sequences of the tombstones over it, so that a lookup is one binary
//! search.
//!
//! Invariants: fragments are sorted by `start`, pairwise disjoint and non-empty
//! (`start < end`); each fragment's `seqs` are sorted ascending and non-empty; a tombstone's
//! sequence is unique in the set (it is the sequence number the write took).
//!
//! Thread-safety: immutable once built; share as `Arc<RangeTombstones>`.

use crate::types::SequenceNumber;
use std::collections::BTreeSet;

/// One `delete_range`: every version below `seq` of the keys in `[start, end)` is deleted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeTombstone {
    /// First user key deleted.
    pub start: Vec<u8>,
    /// First user key after the range (exclusive).
    pub end: Vec<u8>,
    /// The tombstone's sequence number; versions older than it are deleted.
    pub seq: SequenceNumber,
}

impl RangeTombstone {
    /// True if the tombstone's range meets the user-key range `[smallest, largest]`.
    pub fn overlaps(&self, smallest: &[u8], largest: &[u8]) -> bool {
        self.start.as_slice() <= largest && smallest < self.end.as_slice()
    }
}

/// A piece of the key space with the sequences of every tombstone over all of it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Fragment {
    start: Vec<u8>,
    end: Vec<u8>,
    seqs: Vec<SequenceNumber>,
}

/// The range tombstones of a version, as recorded and as fragments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeTombstones {
    tombstones: Vec<RangeTombstone>,
    fragments: Vec<Fragment>,
}

impl RangeTombstones {
    /// The set holding `tombstones` (in any order; empty ranges are ignored).
    pub fn new(mut tombstones: Vec<RangeTombstone>) -> Self {
        tombstones.retain(|t| t.start < t.end);
        tombstones.sort_by_key(|t| t.seq);
        let fragments = fragment(&tombstones);
        RangeTombstones {
            tombstones,
            fragments,
        }
    }

    /// True if the set holds no tombstone.
    pub fn is_empty(&self) -> bool {
        self.tombstones.is_empty()
    }

    /// The tombstones, oldest first.
    pub fn tombstones(&self) -> &[RangeTombstone] {
        &self.tombstones
    }

    /// The newest sequence at or below `read_seq` of a tombstone over `key`, if any: a version
    /// of `key` older than it is deleted for a reader at `read_seq`.
    pub fn covering_seq(&self, key: &[u8], read_seq: SequenceNumber) -> Option<SequenceNumber> {
        let f = self.fragment_at(key)?;
        let visible = f.seqs.partition_point(|&s| s <= read_seq);
        visible.checked_sub(1).map(|i| f.seqs[i])
    }

    /// True if the version of `key` at `entry_seq` is deleted for a reader at `read_seq`.
    pub fn covers(&self, key: &[u8], entry_seq: SequenceNumber, read_seq: SequenceNumber) -> bool {
        self.covering_seq(key, read_seq)
            .is_some_and(|s| entry_seq < s)
    }

    /// The end of the fragment holding `key` (every key from `key` up to it is covered by the
    /// same tombstones), if a fragment holds it.
    pub fn fragment_end(&self, key: &[u8]) -> Option<&[u8]> {
        self.fragment_at(key).map(|f| &f.end[..])
    }

    /// The start of the fragment holding `key`, if a fragment holds it.
    pub fn fragment_start(&self, key: &[u8]) -> Option<&[u8]> {
        self.fragment_at(key).map(|f| &f.start[..])
    }

    /// The largest tombstone sequence at or below `oldest_snapshot`: a merge that every reader
    /// sees the result of applies every tombstone up to it; 0 if none.
    pub fn applied_through(&self, oldest_snapshot: SequenceNumber) -> SequenceNumber {
        let n = self
            .tombstones
            .partition_point(|t| t.seq <= oldest_snapshot);
        n.checked_sub(1).map_or(0, |i| self.tombstones[i].seq)
    }

    fn fragment_at(&self, key: &[u8]) -> Option<&Fragment> {
        let i = self
            .fragments
            .partition_point(|f| f.start.as_slice() <= key);
        let f = &self.fragments[i.checked_sub(1)?];
        (key < f.end.as_slice()).then_some(f)
    }
}

/// Cuts the tombstones at every start and end, keeping the pieces some tombstone covers.
fn fragment(tombstones: &[RangeTombstone]) -> Vec<Fragment> {
    let bounds: BTreeSet<&[u8]> = tombstones
        .iter()
        .flat_map(|t| [&t.start[..], &t.end[..]])
        .collect();
    let bounds: Vec<&[u8]> = bounds.into_iter().collect();
    bounds
        .windows(2)
        .filter_map(|w| piece(tombstones, w[0], w[1]))
        .collect()
}

/// The fragment `[start, end)` with the tombstones over it; `None` if none is.
fn piece(tombstones: &[RangeTombstone], start: &[u8], end: &[u8]) -> Option<Fragment> {
    let seqs: Vec<SequenceNumber> = tombstones
        .iter()
        .filter(|t| t.start.as_slice() <= start && end <= t.end.as_slice())
        .map(|t| t.seq)
        .collect();
    (!seqs.is_empty()).then(|| Fragment {
        start: start.to_vec(),
        end: end.to_vec(),
        seqs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(start: &str, end: &str, seq: u64) -> RangeTombstone {
        RangeTombstone {
            start: start.into(),
            end: end.into(),
            seq,
        }
    }

    #[test]
    fn a_key_is_covered_only_inside_the_range_and_below_the_tombstone() {
        let set = RangeTombstones::new(vec![t("b", "d", 10)]);
        assert!(set.covers(b"b", 9, 10));
        assert!(set.covers(b"c", 9, 100));
        assert!(!set.covers(b"d", 9, 100), "the end is exclusive");
        assert!(!set.covers(b"a", 9, 100));
        assert!(!set.covers(b"c", 10, 100), "not a version at or above it");
        assert!(
            !set.covers(b"c", 9, 9),
            "a reader before it does not see it"
        );
    }

    #[test]
    fn overlapping_tombstones_are_fragmented_with_every_sequence() {
        let set = RangeTombstones::new(vec![t("a", "m", 5), t("f", "z", 20), t("h", "j", 12)]);
        assert_eq!(set.covering_seq(b"b", 100), Some(5));
        assert_eq!(set.covering_seq(b"g", 100), Some(20));
        assert_eq!(set.covering_seq(b"g", 19), Some(5));
        assert_eq!(set.covering_seq(b"i", 15), Some(12));
        assert_eq!(set.covering_seq(b"i", 4), None);
        assert_eq!(set.covering_seq(b"y", 100), Some(20));
        assert_eq!(set.fragment_end(b"g"), Some(&b"h"[..]));
        assert_eq!(set.fragment_start(b"i"), Some(&b"h"[..]));
    }

    #[test]
    fn empty_ranges_and_gaps_cover_nothing() {
        let set = RangeTombstones::new(vec![t("c", "c", 5), t("a", "b", 6), t("x", "y", 7)]);
        assert_eq!(set.tombstones().len(), 2);
        assert_eq!(set.covering_seq(b"c", 100), None);
        assert_eq!(set.covering_seq(b"m", 100), None);
        assert_eq!(set.fragment_end(b"m"), None);
    }

    #[test]
    fn applied_through_is_the_newest_tombstone_every_reader_sees() {
        let set = RangeTombstones::new(vec![t("a", "b", 5), t("a", "b", 9)]);
        assert_eq!(set.applied_through(4), 0);
        assert_eq!(set.applied_through(8), 5);
        assert_eq!(set.applied_through(9), 9);
    }
}
