//! Damaged files: every reader path returns `Error::Corruption` naming the file, or exactly the
//! original data; never a panic, never different data.

use super::*;
use crate::sst::{decode_footer, Block, FOOTER_LEN};
use rand::{Rng, SeedableRng};

/// A small table with several data blocks, a filter and an index.
fn small_table() -> (Entries, Vec<u8>) {
    let entries: Entries = (0..120u32)
        .map(|i| {
            let v = if i % 9 == 0 {
                Vec::new()
            } else {
                format!("value-{i}").into_bytes()
            };
            (
                ik(format!("key/{:04}", i * 3).as_bytes(), u64::from(i) + 1),
                v,
            )
        })
        .collect();
    let (bytes, _) = build(
        &entries,
        TableBuildOptions {
            block_size: 256,
            bloom_bits_per_key: 10,
            ..TableBuildOptions::default()
        },
    );
    (entries, bytes)
}

/// Asserts `e` is corruption in `path`; returns true so callers can record it.
fn is_corruption_at(e: &crate::Error, path: &std::path::Path) -> bool {
    assert_corruption_at(e, path);
    true
}

/// Exercises open, verify, scan and gets on `bytes` (claimed to be `size` bytes long).
/// Returns true if any of them reported corruption; fails on a wrong answer or another error.
pub(super) fn check_damaged(bytes: Vec<u8>, size: u64, entries: &Entries) -> bool {
    let path = test_path();
    let table = match Table::open(Arc::new(MemFile(bytes)), path.clone(), 7, size, None) {
        Ok(t) => t,
        Err(e) => {
            assert_corruption_at(&e, &path);
            return true;
        }
    };
    let mut corrupt = false;
    match table.verify() {
        Ok(n) => assert_eq!(n, entries.len() as u64),
        Err(e) => corrupt |= is_corruption_at(&e, &path),
    }
    let (got, status) = scan(&table);
    match status {
        Ok(()) => assert!(got == *entries, "scan returned different data"),
        Err(e) => {
            assert_corruption_at(&e, &path);
            assert!(
                entries.starts_with(&got),
                "entries before the error must be correct"
            );
            corrupt = true;
        }
    }
    for (i, (k, v)) in entries.iter().enumerate().step_by(7) {
        match table.get(k) {
            Ok(found) => assert_eq!(found, Some((k.clone(), v.clone())), "get of entry {i}"),
            Err(e) => corrupt |= is_corruption_at(&e, &path),
        }
        let absent = ik(format!("key/{:04}", i * 3 + 1).as_bytes(), 5);
        match table.get(&absent) {
            Ok(found) => assert_eq!(found, None),
            Err(e) => corrupt |= is_corruption_at(&e, &path),
        }
    }
    corrupt
}

#[test]
fn undamaged_small_table_reads_back_exactly() {
    let (entries, bytes) = small_table();
    let size = bytes.len() as u64;
    assert!(!check_damaged(bytes, size, &entries));
}

#[test]
fn every_single_byte_flip_is_detected_as_corruption() {
    let (entries, bytes) = small_table();
    assert!(
        bytes.len() > 2000,
        "table has several blocks ({} bytes)",
        bytes.len()
    );
    for pos in 0..bytes.len() {
        let mut damaged = bytes.clone();
        damaged[pos] ^= 1 << (pos % 8);
        let size = damaged.len() as u64;
        assert!(
            check_damaged(damaged, size, &entries),
            "flip at {pos} went unnoticed"
        );
    }
}

#[test]
fn random_multi_byte_damage_never_returns_wrong_data() {
    let (entries, bytes) = small_table();
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    for _ in 0..400 {
        let mut damaged = bytes.clone();
        let start = rng.gen_range(0..damaged.len());
        let len = rng.gen_range(1..=16).min(damaged.len() - start);
        rng.fill(&mut damaged[start..start + len]);
        let size = damaged.len() as u64;
        check_damaged(damaged, size, &entries);
    }
}

#[test]
fn truncated_files_are_corruption_at_every_length() {
    let (entries, bytes) = small_table();
    for len in 0..bytes.len() {
        let cut = bytes[..len].to_vec();
        assert!(
            check_damaged(cut.clone(), len as u64, &entries),
            "truncation to {len}"
        );
        let full = bytes.len() as u64;
        assert!(
            check_damaged(cut, full, &entries),
            "truncation to {len}, manifest size kept"
        );
    }
}

#[test]
fn corruption_errors_name_the_file_and_the_damaged_offset() {
    let (_, mut bytes) = small_table();
    let footer_at = (bytes.len() - FOOTER_LEN) as u64;
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    let e = open(bytes.clone(), None).expect_err("bad magic must fail");
    assert_corruption_at(&e, &test_path());
    assert!(matches!(e, crate::Error::Corruption { offset, .. } if offset == footer_at + 48));
    bytes[last] ^= 0xff;
    bytes[10] ^= 0x80;
    let table = open(bytes, None).unwrap();
    let e = table.verify().unwrap_err();
    assert!(
        matches!(e, crate::Error::Corruption { offset, .. } if offset < 300),
        "{e}"
    );
}

#[test]
fn pure_decoders_reject_garbage_without_panicking() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    let path = test_path();
    for len in 0..300 {
        let junk: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        if let Err(e) = decode_footer(&junk, &path, 1000) {
            assert_corruption_at(&e, &path);
        }
        if let Err(e) = Block::decode(junk, &path, 1000) {
            assert_corruption_at(&e, &path);
        }
    }
}
