//! Which versions a merge (flush, compaction, PMTable GC) may drop.
//!
//! Rule (LevelDB's): entries arrive sorted by internal key, so the versions of one user key
//! arrive newest first. A version is dropped when a newer version of the same key is already
//! visible to every reader (its sequence <= the oldest live snapshot). A tombstone is dropped
//! when it is visible to every reader and no older data for its key can exist below the merge
//! output (`bottommost`). A version a range tombstone visible to every reader covers is
//! dropped too (`delete_range`: the tombstone stays with the tree until no covered version is
//! left, so nothing older comes back). Everything else is kept, so every snapshot still reads
//! what it read.

use crate::range_del::RangeTombstones;
use crate::types::{
    parse_internal_key, ParsedInternalKey, SequenceNumber, ValueKind, MAX_SEQUENCE,
};
use std::sync::Arc;

/// Streaming decision for one sorted merge.
pub struct VersionFilter {
    oldest_snapshot: SequenceNumber,
    range_dels: Arc<RangeTombstones>,
    /// The user key of the previous entry (buffer reused; meaningful once `has_key`).
    current_key: Vec<u8>,
    has_key: bool,
    last_seq_for_key: SequenceNumber,
}

impl VersionFilter {
    /// `oldest_snapshot`: the smallest sequence any reader may still read at; `range_dels`:
    /// the range tombstones of the tree the merge's output joins.
    pub fn new(oldest_snapshot: SequenceNumber, range_dels: &Arc<RangeTombstones>) -> Self {
        VersionFilter {
            oldest_snapshot,
            range_dels: range_dels.clone(),
            current_key: Vec::new(),
            has_key: false,
            last_seq_for_key: MAX_SEQUENCE,
        }
    }

    /// Decides for the next entry of the stream. `bottommost` tells whether older data for
    /// this user key may exist below the output (then tombstones must stay).
    pub fn keep(&mut self, internal_key: &[u8], bottommost: impl FnOnce(&[u8]) -> bool) -> bool {
        match parse_internal_key(internal_key) {
            Some(p) => self.keep_parsed(&p, bottommost),
            None => true, // never drop what we cannot parse; the reader reports it
        }
    }

    /// [`VersionFilter::keep`] for a key the caller has parsed already.
    pub fn keep_parsed(
        &mut self,
        p: &ParsedInternalKey<'_>,
        bottommost: impl FnOnce(&[u8]) -> bool,
    ) -> bool {
        if !self.has_key || self.current_key != p.user_key {
            self.current_key.clear();
            self.current_key.extend_from_slice(p.user_key);
            self.has_key = true;
            self.last_seq_for_key = MAX_SEQUENCE;
        }
        let hidden = self.last_seq_for_key <= self.oldest_snapshot;
        self.last_seq_for_key = p.seq;
        if hidden
            || self
                .range_dels
                .covers(p.user_key, p.seq, self.oldest_snapshot)
        {
            return false;
        }
        !(p.kind == ValueKind::Deletion && p.seq <= self.oldest_snapshot && bottommost(p.user_key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::make_internal_key;

    fn run(entries: &[(&str, u64, ValueKind)], oldest: u64, bottom: bool) -> Vec<(String, u64)> {
        let mut f = VersionFilter::new(oldest, &Arc::default());
        entries
            .iter()
            .filter(|(k, s, kind)| f.keep(&make_internal_key(k.as_bytes(), *s, *kind), |_| bottom))
            .map(|(k, s, _)| (k.to_string(), *s))
            .collect()
    }

    #[test]
    fn older_versions_hidden_from_every_reader_are_dropped() {
        let v = ValueKind::Value;
        let got = run(
            &[("a", 9, v), ("a", 5, v), ("a", 2, v), ("b", 1, v)],
            100,
            false,
        );
        assert_eq!(got, [("a".into(), 9), ("b".into(), 1)]);
    }

    #[test]
    fn versions_a_snapshot_can_read_are_kept() {
        let v = ValueKind::Value;
        // Snapshot at 6 reads a@5; a@2 is hidden from it by a@5.
        let got = run(&[("a", 9, v), ("a", 5, v), ("a", 2, v)], 6, false);
        assert_eq!(got, [("a".into(), 9), ("a".into(), 5)]);
    }

    #[test]
    fn tombstones_stay_unless_bottommost() {
        let d = ValueKind::Deletion;
        let v = ValueKind::Value;
        assert_eq!(
            run(&[("a", 9, d), ("a", 3, v)], 100, false),
            [("a".into(), 9)]
        );
        assert!(run(&[("a", 9, d), ("a", 3, v)], 100, true).is_empty());
        // A tombstone newer than the oldest snapshot stays even at the bottom.
        assert_eq!(run(&[("a", 9, d)], 5, true), [("a".into(), 9)]);
    }
}
