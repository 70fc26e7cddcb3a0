//! Seek and point-lookup semantics over multiple versions of each user key.

use super::*;
use crate::sst::FilterCounters;
use crate::types::{make_internal_key, ValueKind, MAX_SEQUENCE};

/// User keys `k0000..k0199`, each with versions 30, 20 (tombstone), 10 in newest-first order.
fn versioned_entries() -> Entries {
    let mut out = Vec::new();
    for u in 0..200 {
        let user = format!("k{u:04}");
        for seq in [30, 20, 10] {
            let kind = if seq == 20 {
                ValueKind::Deletion
            } else {
                ValueKind::Value
            };
            let value = if seq == 20 {
                Vec::new()
            } else {
                format!("{user}@{seq}").into_bytes()
            };
            out.push((make_internal_key(user.as_bytes(), seq, kind), value));
        }
    }
    out
}

fn versioned_table() -> Arc<Table> {
    let opts = TableBuildOptions {
        block_size: 128,
        bloom_bits_per_key: 10,
        ..TableBuildOptions::default()
    };
    open(build(&versioned_entries(), opts).0, None).unwrap()
}

fn seek_key(table: &Arc<Table>, target: &[u8]) -> Option<Vec<u8>> {
    let mut it = table.iter();
    it.seek(target);
    it.status().unwrap();
    it.valid().then(|| it.key().to_vec())
}

#[test]
fn seek_lands_on_first_entry_greater_or_equal() {
    let table = versioned_table();
    let entries = versioned_entries();
    for (i, (k, _)) in entries.iter().enumerate() {
        assert_eq!(seek_key(&table, k).as_ref(), Some(k), "exact seek {i}");
    }
    let k = |u: &str, s| ik(u.as_bytes(), s);
    assert_eq!(
        seek_key(&table, &k("k0005", MAX_SEQUENCE)),
        Some(k("k0005", 30))
    );
    assert_eq!(
        seek_key(&table, &k("k0005", 25)),
        Some(make_internal_key(b"k0005", 20, ValueKind::Deletion))
    );
    assert_eq!(seek_key(&table, &k("k0005", 15)), Some(k("k0005", 10)));
    assert_eq!(seek_key(&table, &k("k0005", 5)), Some(k("k0006", 30)));
    assert_eq!(seek_key(&table, &k("k0005a", 99)), Some(k("k0006", 30)));
    assert_eq!(seek_key(&table, &k("", 1)), Some(k("k0000", 30)));
}

#[test]
fn seek_past_the_end_is_invalid() {
    let table = versioned_table();
    assert_eq!(seek_key(&table, &ik(b"k0199", 9)), None);
    assert_eq!(seek_key(&table, &ik(b"z", MAX_SEQUENCE)), None);
}

#[test]
fn iteration_after_seek_visits_versions_newest_first_across_blocks() {
    let table = versioned_table();
    let mut it = table.iter();
    it.seek(&ik(b"k0100", MAX_SEQUENCE));
    let mut seen = Vec::new();
    while it.valid() && seen.len() < 30 {
        seen.push(it.key().to_vec());
        it.next();
    }
    it.status().unwrap();
    let expected: Vec<Vec<u8>> = versioned_entries()
        .into_iter()
        .skip(300)
        .take(30)
        .map(|e| e.0)
        .collect();
    assert_eq!(seen, expected);
}

#[test]
fn get_finds_newest_version_at_or_below_the_lookup_sequence() {
    let table = versioned_table();
    let get = |u: &str, s| table.get(&ik(u.as_bytes(), s)).unwrap();
    let (k, v) = get("k0042", MAX_SEQUENCE).unwrap();
    assert_eq!((k, v), (ik(b"k0042", 30), b"k0042@30".to_vec()));
    assert_eq!(get("k0042", 30).unwrap().0, ik(b"k0042", 30));
    let (k, v) = get("k0042", 29).unwrap();
    assert_eq!(k, make_internal_key(b"k0042", 20, ValueKind::Deletion));
    assert!(v.is_empty(), "tombstones have empty values");
    assert_eq!(get("k0042", 19).unwrap().1, b"k0042@10".to_vec());
    assert_eq!(get("k0042", 9), None, "no version old enough");
    assert_eq!(
        get("k0199", 9),
        None,
        "no version old enough at the end of the table"
    );
}

#[test]
fn get_misses_absent_keys() {
    let table = versioned_table();
    for absent in ["", "a", "k", "k0042a", "k00420", "k0200", "zzz"] {
        assert_eq!(
            table.get(&ik(absent.as_bytes(), MAX_SEQUENCE)).unwrap(),
            None,
            "{absent}"
        );
    }
}

#[test]
fn table_bloom_false_positive_rate_is_below_two_percent() {
    let entries: Entries = (0..10_000u32)
        .map(|i| (ik(format!("user{i:06}").as_bytes(), 1), vec![]))
        .collect();
    let table = open(build(&entries, TableBuildOptions::default()).0, None).unwrap();
    assert!((0..10_000u32).all(|i| table.may_contain(format!("user{i:06}").as_bytes())));
    let fp = (0..10_000u32)
        .filter(|i| table.may_contain(format!("other{i:06}").as_bytes()))
        .count();
    assert!(fp < 200, "{fp} false positives in 10000");
}

#[test]
fn bloom_counts_each_user_key_once_across_versions() {
    let table = versioned_table();
    assert!((0..200).all(|u| table.may_contain(format!("k{u:04}").as_bytes())));
}

/// A table opened with filter counters counts every filter answer of `get`: "absent" as
/// useful, "maybe" followed by no entry as a false positive; a table without a filter counts
/// nothing.
#[test]
fn filter_counters_count_what_the_filter_answered() {
    let entries: Entries = (0..1000u32)
        .map(|i| (ik(format!("user{i:06}").as_bytes(), 1), vec![b'v'; 8]))
        .collect();
    let counted = |opts: TableBuildOptions| {
        let bytes = build(&entries, opts).0;
        let (size, counters) = (bytes.len() as u64, Arc::new(FilterCounters::default()));
        let file = Arc::new(MemFile(bytes));
        let t = Table::open_counted(file, test_path(), 7, size, None, Some(counters.clone()));
        (t.unwrap(), counters)
    };
    let (table, c) = counted(TableBuildOptions::default());
    for i in 0..100u32 {
        assert!(table
            .get(&ik(format!("user{i:06}").as_bytes(), 1))
            .unwrap()
            .is_some());
        assert!(table
            .get(&ik(format!("gone{i:06}").as_bytes(), 1))
            .unwrap()
            .is_none());
    }
    assert_eq!(c.checked(), 200);
    assert_eq!(
        c.useful() + c.false_positives(),
        100,
        "every absent key is one or the other"
    );
    assert!(c.useful() >= 90, "10 bits per key: few false positives");
    let unfiltered = TableBuildOptions {
        bloom_bits_per_key: 0,
        ..Default::default()
    };
    let (table, c) = counted(unfiltered);
    assert!(table.get(&ik(b"gone", 1)).unwrap().is_none());
    assert_eq!((c.checked(), c.useful(), c.false_positives()), (0, 0, 0));
}
