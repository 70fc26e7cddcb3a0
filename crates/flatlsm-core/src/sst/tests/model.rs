//! Property test: a table behaves like the sorted vector it was built from
//! ([`crate::iter::VecIterator`] is the reference model for scans, seeks and gets).

use super::*;
use crate::iter::VecIterator;
use crate::types::{compare_internal_keys, user_key_of};
use proptest::prelude::*;
use std::cmp::Ordering;

/// Sorted, unique entries from arbitrary (user key, seq, value) triples.
fn sorted(raw: Vec<(Vec<u8>, u64, Vec<u8>)>) -> Entries {
    let mut e: Entries = raw.into_iter().map(|(u, s, v)| (ik(&u, s), v)).collect();
    e.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
    e.dedup_by(|a, b| compare_internal_keys(&a.0, &b.0) == Ordering::Equal);
    e
}

fn model_get(entries: &Entries, lookup: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut it = VecIterator::new(entries.clone());
    it.seek(lookup);
    (it.valid() && user_key_of(it.key()) == user_key_of(lookup))
        .then(|| (it.key().to_vec(), it.value().to_vec()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn table_matches_sorted_vector_model(
        raw in proptest::collection::vec(
            (proptest::collection::vec(0u8..4, 0..6), 0u64..6, proptest::collection::vec(any::<u8>(), 0..40)),
            0..300),
        targets in proptest::collection::vec((proptest::collection::vec(0u8..4, 0..6), 0u64..7), 1..40),
        block_size in 16usize..600,
        bits in 0usize..16,
    ) {
        let entries = sorted(raw);
        let (bytes, _) = build(&entries, TableBuildOptions { block_size, bloom_bits_per_key: bits, ..TableBuildOptions::default() });
        let table = open(bytes, None).unwrap();
        let (all, status) = scan(&table);
        prop_assert!(status.is_ok());
        prop_assert!(all == entries);
        let mut it = table.iter();
        let mut model = VecIterator::new(entries.clone());
        for (u, s) in targets {
            let t = ik(&u, s);
            it.seek(&t);
            model.seek(&t);
            prop_assert_eq!(it.valid(), model.valid());
            if model.valid() {
                prop_assert_eq!(it.key(), model.key());
                prop_assert_eq!(it.value(), model.value());
                it.next();
                model.next();
                prop_assert_eq!(it.valid(), model.valid());
            }
            prop_assert_eq!(table.get(&t).unwrap(), model_get(&entries, &t));
        }
    }
}
