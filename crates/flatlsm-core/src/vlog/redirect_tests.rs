//! Tests of redirect tables: round trip, translation, and refusal of every kind of damage.

use super::redirect::{decode, encode, REDIRECT_ENTRY_LEN, REDIRECT_HEADER_LEN};
use super::*;
use crate::error::Error;
use crate::fs::OsFileSystem;
use proptest::prelude::*;
use std::path::Path;

fn entries(n: u64) -> Vec<RedirectEntry> {
    (0..n)
        .map(|i| RedirectEntry {
            old_offset: 16 + i * 100,
            new_offset: 16 + i * 40,
            record_len: 40,
            value_len: 20,
        })
        .collect()
}

fn ptr(file_number: u64, offset: u64) -> ValuePointer {
    ValuePointer {
        file_number,
        offset,
        value_len: 20,
        record_len: 40,
    }
}

fn corruption_at(err: Error) -> (std::path::PathBuf, u64) {
    match err {
        Error::Corruption { file, offset, .. } => (file, offset),
        e => panic!("expected corruption, got {e}"),
    }
}

#[test]
fn written_table_loads_back_and_translates_every_entry() {
    let dir = tempfile::tempdir().unwrap();
    let written = RedirectTable::write(&OsFileSystem, dir.path(), 9, (3, 7), entries(50)).unwrap();
    let loaded = RedirectTable::load(&OsFileSystem, dir.path(), 9).unwrap();
    assert_eq!(loaded.entries(), written.entries());
    assert_eq!(
        (loaded.victim(), loaded.target(), loaded.number()),
        (3, 7, 9)
    );
    let size = std::fs::metadata(dir.path().join("000009.vredir"))
        .unwrap()
        .len();
    assert_eq!((written.file_size(), loaded.file_size()), (size, size));
    for e in entries(50) {
        let moved = loaded.translate(&ptr(3, e.old_offset)).unwrap();
        assert_eq!(
            moved,
            ValuePointer {
                file_number: 7,
                offset: e.new_offset,
                ..ptr(7, 0)
            }
        );
    }
    loaded.expect(3, 7).unwrap();
    assert_eq!(corruption_at(loaded.expect(3, 8).unwrap_err()).1, 16);
}

#[test]
fn pointer_without_an_entry_is_corruption_naming_the_victim_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let t = RedirectTable::write(&OsFileSystem, dir.path(), 9, (3, 7), entries(5)).unwrap();
    for offset in [0, 17, 115, 10_000] {
        let (file, at) = corruption_at(t.translate(&ptr(3, offset)).unwrap_err());
        assert_eq!((file, at), (dir.path().join("000003.vlog"), offset));
    }
    let other_len = ValuePointer {
        record_len: 41,
        ..ptr(3, 116)
    };
    let e = t.translate(&other_len).unwrap_err();
    assert!(e.to_string().contains("record_len 41"), "{e}");
    let wrong_log = t.translate(&ptr(4, 16)).unwrap_err();
    assert!(
        matches!(wrong_log, Error::InvalidArgument(_)),
        "{wrong_log}"
    );
}

#[test]
fn empty_table_round_trips() {
    let bytes = encode(1, 2, &[]);
    let t = decode(&bytes, Path::new("000005.vredir"), 5).unwrap();
    assert!(t.entries().is_empty());
    assert!(t.translate(&ptr(1, 16)).unwrap_err().is_corruption());
}

/// Re-encodes `bytes` with a valid crc (to reach the checks behind the checksum).
fn reseal(mut bytes: Vec<u8>) -> Vec<u8> {
    let end = bytes.len() - 4;
    let crc = crate::types::crc32c(&bytes[..end]);
    bytes[end..].copy_from_slice(&crc.to_le_bytes());
    bytes
}

#[test]
fn every_kind_of_damage_is_corruption_at_its_offset() {
    let good = encode(3, 7, &entries(4));
    let path = Path::new("000009.vredir");
    let at = |bytes: &[u8]| corruption_at(decode(bytes, path, 9).unwrap_err()).1;
    assert_eq!(at(&good[..20]), 0, "short");
    assert_eq!(at(&[b"FLATVLOG", &good[8..]].concat()), 0, "magic");
    let mut v = good.clone();
    v[8] = 2;
    assert_eq!(at(&v), 8, "version");
    let mut v = good.clone();
    v[32] = 5;
    assert_eq!(at(&v), 32, "count");
    assert_eq!(at(&good[..good.len() - 1]), 32, "truncated");
    let mut v = good.clone();
    v[50] ^= 1;
    assert_eq!(at(&v), good.len() as u64 - 4, "crc");
    let second = (REDIRECT_HEADER_LEN + REDIRECT_ENTRY_LEN) as u64;
    let mut v = good.clone();
    v[second as usize..second as usize + 8].copy_from_slice(&16u64.to_le_bytes());
    assert_eq!(at(&reseal(v)), second, "unsorted");
    let mut v = good.clone();
    v[REDIRECT_HEADER_LEN + 16] = 5;
    assert_eq!(
        at(&reseal(v)),
        REDIRECT_HEADER_LEN as u64,
        "record_len below value_len"
    );
    let mut v = good.clone();
    v[REDIRECT_HEADER_LEN..REDIRECT_HEADER_LEN + 8].copy_from_slice(&3u64.to_le_bytes());
    assert_eq!(at(&reseal(v)), REDIRECT_HEADER_LEN as u64, "header offset");
    assert_eq!(at(&encode(3, 3, &[])), 24, "into itself");
}

#[test]
fn set_loads_on_a_miss_and_forgets_evicted_tables() {
    let dir = tempfile::tempdir().unwrap();
    let set = RedirectSet::new(Arc::new(OsFileSystem), dir.path().to_path_buf());
    RedirectTable::write(&OsFileSystem, dir.path(), 9, (3, 7), entries(2)).unwrap();
    assert_eq!(set.get(9).unwrap().victim(), 3);
    std::fs::remove_file(dir.path().join("000009.vredir")).unwrap();
    assert_eq!(set.get(9).unwrap().target(), 7, "cached");
    set.evict(9);
    assert!(set.get(9).is_err());
}

proptest! {
    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        if let Err(e) = decode(&bytes, Path::new("x.vredir"), 1) {
            prop_assert!(e.is_corruption());
        }
        let mut framed = encode(1, 2, &entries(2));
        framed.splice(REDIRECT_HEADER_LEN..REDIRECT_HEADER_LEN, bytes);
        prop_assert!(decode(&framed, Path::new("x.vredir"), 1).map_err(|e| e.is_corruption()).err() != Some(false));
    }
}
