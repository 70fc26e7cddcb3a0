//! PMTable cursors in both directions, over a simulated PM device: values still in the DRAM
//! Buffer Log and values already on PM, several versions per key, tombstones. The borrowing
//! cursor (flushes) must produce exactly what the owning, re-seeking iterator produces.

use super::{LogEntry, PmTable};
use crate::iter::InternalIterator;
use crate::pm::simulated::SimulatedPmDevice;
use crate::testing::walk_check::{check_random_walk, check_reverse_scan};
use crate::types::{compare_internal_keys, make_internal_key, ValueKind};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;

/// (internal key, value).
type Entry = (Vec<u8>, Vec<u8>);

/// A table filled with random batches; returns it and its entries in internal-key order.
fn filled_table(seed: u64) -> (Arc<PmTable>, Vec<Entry>) {
    filled_table_of(seed, 150)
}

/// A table filled with `batches` random batches (see [`filled_table`]).
fn filled_table_of(seed: u64, batches: usize) -> (Arc<PmTable>, Vec<Entry>) {
    let device = SimulatedPmDevice::new();
    let table = PmTable::create(&*device, 1, 1 << 20, None).unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut model = Vec::new();
    let mut seq = 0;
    for _ in 0..batches {
        let batch: Vec<(String, u64, ValueKind, Vec<u8>)> = (0..rng.gen_range(1..4))
            .map(|_| {
                seq += 1;
                let key = format!("k{:04}", rng.gen_range(0..200));
                if rng.gen_bool(0.2) {
                    (key, seq, ValueKind::Deletion, Vec::new())
                } else {
                    // Small values stay in the Buffer Log for a while; large ones go to PM.
                    let len = if rng.gen_bool(0.5) { 8 } else { 600 };
                    (key, seq, ValueKind::Value, vec![seq as u8; len])
                }
            })
            .collect();
        let entries: Vec<LogEntry<'_>> = batch
            .iter()
            .map(|(key, seq, kind, value)| LogEntry {
                seq: *seq,
                kind: *kind,
                key: key.as_bytes(),
                value,
            })
            .collect();
        assert!(table.append_batch(&entries).unwrap());
        for (key, seq, kind, value) in batch {
            model.push((make_internal_key(key.as_bytes(), seq, kind), value));
        }
    }
    model.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
    (table, model)
}

#[test]
fn pmtable_iterator_reverse_scan_is_forward_scan_reversed() {
    let (table, model) = filled_table(1);
    check_reverse_scan(&mut table.iter(), &model);
}

#[test]
fn pmtable_iterator_random_walk_in_both_directions_matches_model() {
    for seed in 2..5 {
        let (table, model) = filled_table(seed);
        check_random_walk(&mut table.iter(), &model, seed, 1500);
    }
}

#[test]
fn pmtable_iterator_on_an_empty_table_is_invalid_in_both_directions() {
    let device = SimulatedPmDevice::new();
    let table = PmTable::create(&*device, 1, 1 << 16, None).unwrap();
    let mut it = table.iter();
    it.seek_to_last();
    assert!(!it.valid());
    it.seek_for_prev(&make_internal_key(b"z", 0, ValueKind::Deletion));
    assert!(!it.valid());
    it.status().unwrap();
}

/// The bloom filter of an immutable PMTable must never hide a key it holds (every version,
/// tombstones included), and is refused while the table still accepts writes.
#[test]
fn pmtable_filter_is_built_only_when_sealed_and_never_hides_a_key() {
    let (table, model) = filled_table(7);
    assert!(!table.build_filter(10), "a mutable table gets no filter");
    let before: Vec<_> = (0..200)
        .map(|i| {
            table
                .get(format!("k{i:04}").as_bytes(), u64::MAX >> 8)
                .unwrap()
        })
        .collect();
    table.seal().unwrap();
    assert!(table.build_filter(10));
    for (i, expected) in before.iter().enumerate() {
        let got = table
            .get(format!("k{i:04}").as_bytes(), u64::MAX >> 8)
            .unwrap();
        assert_eq!(format!("{got:?}"), format!("{expected:?}"), "key k{i:04}");
    }
    assert!(!model.is_empty());
    let absent = (0..1000)
        .filter(|i| {
            table
                .get(format!("absent{i}").as_bytes(), u64::MAX >> 8)
                .unwrap()
                .is_none()
        })
        .count();
    assert_eq!(absent, 1000);
}

/// Every (key, value) a full forward pass yields.
fn forward(it: &mut dyn InternalIterator) -> Vec<Entry> {
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    out
}

#[test]
fn pmtable_cursor_reverse_scan_and_random_walk_match_the_model() {
    let (table, model) = filled_table(11);
    check_reverse_scan(&mut table.cursor(), &model);
    for seed in 12..15 {
        let (table, model) = filled_table(seed);
        check_random_walk(&mut table.cursor(), &model, seed, 1500);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Borrowed iteration equals the owning iterator's on random tables, sealed or not.
    #[test]
    fn borrowed_cursor_equals_owning_iterator(seed in any::<u64>(), batches in 0usize..120, seal: bool) {
        let (table, model) = filled_table_of(seed, batches);
        if seal {
            table.seal().unwrap();
        }
        let owned = forward(&mut table.iter());
        let borrowed = forward(&mut table.cursor());
        prop_assert!(owned == model);
        prop_assert!(borrowed == owned);
    }
}

/// A cursor on a mutable table stays valid and sorted while a writer inserts, and sees every
/// entry that was there when it started.
#[test]
fn pmtable_cursor_walks_a_table_a_writer_is_filling() {
    let (table, before) = filled_table(21);
    let writer = {
        let table = table.clone();
        std::thread::spawn(move || {
            for i in 0..2000u64 {
                let key = format!("k{:04}", i % 300);
                let e = LogEntry {
                    seq: 10_000 + i,
                    kind: ValueKind::Value,
                    key: key.as_bytes(),
                    value: b"new",
                };
                assert!(table.append_batch(&[e]).unwrap());
            }
        })
    };
    let seen = forward(&mut table.cursor());
    writer.join().unwrap();
    assert!(seen
        .windows(2)
        .all(|w| compare_internal_keys(&w[0].0, &w[1].0).is_lt()));
    assert!(before.iter().all(|e| seen.contains(e)));
}

/// Split points (flush thread ranges) equal those of a straightforward reference: the last key
/// of each run of about n/parts entries, moved to the end of its user key's versions.
#[test]
fn split_points_fall_on_user_key_boundaries_like_the_reference() {
    for seed in 30..34 {
        let (table, model) = filled_table(seed);
        for parts in 1..6 {
            let per = model.len().div_ceil(parts);
            let mut want: Vec<Vec<u8>> = Vec::new();
            let (mut count, mut prev): (usize, Option<&[u8]>) = (0, None);
            for (k, _) in &model {
                let uk = crate::types::user_key_of(k);
                if count >= per && prev != Some(uk) && want.len() + 1 < parts {
                    want.push(prev.unwrap().to_vec());
                    count = 0;
                }
                prev = Some(uk);
                count += 1;
            }
            assert_eq!(table.split_points(parts), want, "seed {seed} parts {parts}");
        }
    }
}
