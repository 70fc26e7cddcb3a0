//! `batch_get::get_all` against `Table::get` table by table: the same entries, the same
//! filter counts, with keys present, absent, deleted, hidden by newer tables, and with a
//! damaged block.

use super::*;
use crate::sst::batch_get::{get_all, Probe};
use crate::sst::FilterCounters;
use crate::types::{make_internal_key, KIND_FOR_SEEK};

/// Three tables over overlapping keys: table `t` holds every key `k{i}` with `i % (t + 2)
/// == 0`, each at sequence `10 * (t + 1)`, every seventh as a tombstone.
fn tables(counters: &Arc<FilterCounters>) -> Vec<Arc<Table>> {
    (0..3u64)
        .map(|t| {
            let seq = 10 * (t + 1);
            let entries: Entries = (0..600u32)
                .filter(|i| i % (t as u32 + 2) == 0)
                .map(|i| {
                    let user = format!("k{i:05}");
                    let kind = match i % 7 {
                        0 => ValueKind::Deletion,
                        _ => ValueKind::Value,
                    };
                    let value = format!("{user}@{seq}").into_bytes();
                    (make_internal_key(user.as_bytes(), seq, kind), value)
                })
                .collect();
            let opts = TableBuildOptions {
                block_size: 256,
                ..TableBuildOptions::default()
            };
            let bytes = build(&entries, opts).0;
            let (size, file) = (bytes.len() as u64, Arc::new(MemFile(bytes)));
            Table::open_counted(file, test_path(), 7 + t, size, None, Some(counters.clone()))
                .unwrap()
        })
        .collect()
}

/// What `Table::get` finds walking `order`: the position of the first table holding a
/// version, and that entry.
fn one_by_one(tables: &[Arc<Table>], lookup: &[u8], order: &[usize]) -> Option<(usize, Entries)> {
    for (position, &t) in order.iter().enumerate() {
        if let Some(entry) = tables[t].get(lookup).unwrap() {
            return Some((position, vec![entry]));
        }
    }
    None
}

#[test]
fn a_batch_finds_what_table_gets_find_one_by_one_and_counts_the_same() {
    let (batch_counts, single_counts) = Default::default();
    let (batch_tables, single_tables) = (tables(&batch_counts), tables(&single_counts));
    let orders: [&[usize]; 4] = [&[2, 1, 0], &[0, 1, 2], &[1], &[]];
    let lookups: Vec<(Vec<u8>, &[usize])> = (0..700u32)
        .flat_map(|i| {
            let user = format!("k{i:05}");
            [5, 15, 25, 35].map(|seq| {
                (
                    make_internal_key(user.as_bytes(), seq, KIND_FOR_SEEK),
                    orders[(i as usize + seq as usize) % 4],
                )
            })
        })
        .collect();
    for batch in lookups.chunks(16) {
        let probes: Vec<Probe> = batch
            .iter()
            .map(|(lookup, tables)| Probe { lookup, tables })
            .collect();
        let found = get_all(&batch_tables, &probes);
        for ((lookup, order), found) in batch.iter().zip(found) {
            let found = found
                .unwrap()
                .map(|f| (f.position, vec![(f.ikey().to_vec(), f.value().to_vec())]));
            assert_eq!(
                found,
                one_by_one(&single_tables, lookup, order),
                "{lookup:?}"
            );
        }
    }
    let counts = |c: &FilterCounters| (c.checked(), c.useful(), c.false_positives());
    assert_eq!(counts(&batch_counts), counts(&single_counts));
    assert!(batch_counts.checked() > 0 && batch_counts.useful() > 0);
}

#[test]
fn a_damaged_block_fails_its_key_only() {
    let entries: Entries = (0..400u32)
        .map(|i| (ik(format!("k{i:05}").as_bytes(), 5), vec![b'v'; 20]))
        .collect();
    let opts = TableBuildOptions {
        block_size: 256,
        ..TableBuildOptions::default()
    };
    let mut bytes = build(&entries, opts).0;
    bytes[10] ^= 0xff; // inside the first data block
    let table = open(bytes, None).unwrap();
    let lookups: Vec<Vec<u8>> = ["k00000", "k00399"]
        .iter()
        .map(|k| make_internal_key(k.as_bytes(), 9, KIND_FOR_SEEK))
        .collect();
    let probes: Vec<Probe> = lookups
        .iter()
        .map(|lookup| Probe {
            lookup,
            tables: &[0],
        })
        .collect();
    let found = get_all(std::slice::from_ref(&table), &probes);
    let first = found[0].as_ref().unwrap_err();
    assert_corruption_at(first, &test_path());
    let last = found[1].as_ref().unwrap().as_ref().unwrap();
    assert_eq!(last.value(), &[b'v'; 20][..]);
    assert!(table.get(&lookups[0]).is_err(), "Table::get refuses it too");
}
