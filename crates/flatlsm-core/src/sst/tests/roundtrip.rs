//! Round trips: what the builder writes, the reader returns, for many shapes of tables.

use super::*;
use crate::error::Error;
use crate::sst::{parse_sst_file_name, sst_file_name};
use crate::types::{make_internal_key, ValueKind};
use rand::{Rng, SeedableRng};

/// Sorted entries with long shared prefixes; every 7th is a tombstone with an empty value.
fn prefixed_entries(n: usize, value_len: impl Fn(usize) -> usize) -> Entries {
    (0..n)
        .map(|i| {
            let user = format!("tenant-{:04}/user/{i:08}", i / 1000);
            let kind = if i % 7 == 3 {
                ValueKind::Deletion
            } else {
                ValueKind::Value
            };
            let key = make_internal_key(user.as_bytes(), 1_000_000 - i as u64, kind);
            let value = match kind {
                ValueKind::Deletion => Vec::new(),
                _ => vec![(i % 251) as u8; value_len(i)],
            };
            (key, value)
        })
        .collect()
}

fn assert_round_trip(entries: &Entries, opts: TableBuildOptions) {
    let (bytes, summary) = build(entries, opts.clone());
    assert_eq!(summary.num_entries, entries.len() as u64);
    if let (Some(first), Some(last)) = (entries.first(), entries.last()) {
        assert_eq!(summary.smallest, first.0);
        assert_eq!(summary.largest, last.0);
    }
    let table = open(bytes, None).unwrap();
    assert_eq!(table.num_entries(), entries.len() as u64);
    assert_eq!(table.verify().unwrap(), entries.len() as u64);
    let (got, status) = scan(&table);
    status.unwrap();
    assert!(got == *entries, "scan differs with {opts:?}");
    let step = (entries.len() / 500).max(1);
    for (k, v) in entries.iter().step_by(step) {
        assert_eq!(table.get(k).unwrap(), Some((k.clone(), v.clone())));
    }
}

#[test]
fn round_trip_many_entries_across_block_sizes_and_table_sizes() {
    for &block_size in &[64, 1024, 4096, 65536] {
        for &n in &[1, 2, 17, 1000, 20_000] {
            let entries = prefixed_entries(n, |i| i % 40);
            assert_round_trip(
                &entries,
                TableBuildOptions {
                    block_size,
                    bloom_bits_per_key: 10,
                    ..TableBuildOptions::default()
                },
            );
        }
    }
}

#[test]
fn round_trip_one_hundred_thousand_entries_with_default_options() {
    let entries = prefixed_entries(100_000, |i| i % 24);
    assert_round_trip(&entries, TableBuildOptions::default());
}

#[test]
fn round_trip_values_from_zero_bytes_to_64_kib() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let sizes: Vec<usize> = (0..300)
        .map(|i| match i % 5 {
            0 => 0,
            1 => 65536,
            _ => rng.gen_range(0..=65536),
        })
        .collect();
    let entries = prefixed_entries(300, |i| sizes[i]);
    for &block_size in &[64, 4096, 1 << 20] {
        assert_round_trip(
            &entries,
            TableBuildOptions {
                block_size,
                bloom_bits_per_key: 10,
                ..TableBuildOptions::default()
            },
        );
    }
}

#[test]
fn round_trip_without_bloom_filter_and_with_random_binary_keys() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let mut keys: Vec<Vec<u8>> = (0..3000)
        .map(|_| {
            let len = rng.gen_range(0..40);
            (0..len).map(|_| rng.gen_range(0..4u8)).collect()
        })
        .collect();
    keys.sort();
    keys.dedup();
    let entries: Entries = keys.iter().map(|u| (ik(u, 5), u.repeat(3))).collect();
    assert_round_trip(
        &entries,
        TableBuildOptions {
            block_size: 512,
            bloom_bits_per_key: 0,
            ..TableBuildOptions::default()
        },
    );
    assert_round_trip(
        &entries,
        TableBuildOptions {
            block_size: 512,
            bloom_bits_per_key: 20,
            ..TableBuildOptions::default()
        },
    );
}

#[test]
fn empty_table_round_trips_with_no_entries() {
    let (bytes, summary) = build(&[], TableBuildOptions::default());
    assert_eq!(summary.num_entries, 0);
    assert!(summary.smallest.is_empty() && summary.largest.is_empty());
    let table = open(bytes, None).unwrap();
    assert_eq!(table.verify().unwrap(), 0);
    assert!(scan(&table).0.is_empty());
    assert_eq!(table.get(&ik(b"a", 1)).unwrap(), None);
    assert!(!table.may_contain(b"a"));
}

#[test]
fn builder_rejects_out_of_order_duplicate_and_short_keys() {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let file = MemWritable {
        buf,
        fail_after: None,
        synced: Arc::default(),
    };
    let mut b = TableBuilder::new(Box::new(file), test_path(), TableBuildOptions::default());
    b.add(&ik(b"b", 5), b"x").unwrap();
    let invalid = |r: crate::Result<()>| matches!(r, Err(Error::InvalidArgument(_)));
    assert!(invalid(b.add(&ik(b"a", 9), b"")));
    assert!(invalid(b.add(&ik(b"b", 5), b"")));
    assert!(
        invalid(b.add(&ik(b"b", 6), b"")),
        "newer version must come first"
    );
    assert!(invalid(b.add(b"short", b"")));
    b.add(&ik(b"b", 4), b"y").unwrap();
    assert_eq!(b.num_entries(), 2);
    assert!(b.estimated_size() > 0);
    assert_eq!(b.finish().unwrap().num_entries, 2);
}

#[test]
fn builder_reports_write_failures_and_then_refuses_work() {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let file = MemWritable {
        buf,
        fail_after: Some(100),
        synced: Arc::default(),
    };
    let opts = TableBuildOptions {
        block_size: 64,
        bloom_bits_per_key: 10,
        ..TableBuildOptions::default()
    };
    let mut b = TableBuilder::new(Box::new(file), test_path(), opts);
    let mut first_err = None;
    for i in 0..100u32 {
        if let Err(e) = b.add(&ik(&i.to_be_bytes(), 1), b"0123456789") {
            first_err = Some(e);
            break;
        }
    }
    assert!(matches!(first_err, Some(Error::Io { .. })));
    assert!(matches!(
        b.add(&ik(b"zz", 1), b""),
        Err(Error::InvalidState(_))
    ));
    assert!(b.finish().is_err());
}

#[test]
fn estimated_size_tracks_the_final_file_size() {
    let entries = prefixed_entries(5000, |_| 100);
    let buf = Arc::new(Mutex::new(Vec::new()));
    let file = MemWritable {
        buf,
        fail_after: None,
        synced: Arc::default(),
    };
    let mut b = TableBuilder::new(Box::new(file), test_path(), TableBuildOptions::default());
    for (k, v) in &entries {
        b.add(k, v).unwrap();
    }
    let est = b.estimated_size();
    let size = b.finish().unwrap().file_size;
    assert!(
        est.abs_diff(size) < size / 20,
        "estimate {est}, actual {size}"
    );
}

#[test]
fn sst_file_names_round_trip_and_reject_other_names() {
    assert_eq!(sst_file_name(42), "000042.sst");
    assert_eq!(sst_file_name(12_345_678), "12345678.sst");
    assert_eq!(parse_sst_file_name("000042.sst"), Some(42));
    assert_eq!(parse_sst_file_name("12345678.sst"), Some(12_345_678));
    for bad in [
        "42.sst",
        "000042.log",
        "0000042.sst",
        "00004a.sst",
        "+00042.sst",
        ".sst",
        "",
    ] {
        assert_eq!(parse_sst_file_name(bad), None, "{bad}");
    }
}
