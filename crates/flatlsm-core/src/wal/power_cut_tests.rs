//! Format 2's recovery rule (`mod.rs`) under power cuts: the unsynced tail written back out of
//! order is a torn tail, damage in bytes a later record says were synced is corruption, a
//! record's bytes copied elsewhere prove nothing, close's seal covers the whole log, and
//! format-1 logs keep format 1's rule.

use super::tests::{record_ends, replay_all, write_batches, Entry};
use super::*;
use crate::error::Error;
use crate::fs::{CrashFs, FileSystem, OsFileSystem, PAGE_SIZE};
use crate::types::{crc32c, ValueKind};
use std::path::Path;

/// Appends batch `i` (one 500-byte value, sequence `i + 1`) to `w`; returns its entry.
fn add(w: &mut WalWriter, i: u64, sync: bool) -> Entry {
    let value = vec![(i as u8) | 1; 500];
    let key = format!("key{i}").into_bytes();
    let one = [(ValueKind::Value, &key[..], &value[..])];
    w.add_batch(i + 1, one.into_iter(), sync).unwrap();
    (i + 1, ValueKind::Value, key, value)
}

/// True if a page of `data` after the one holding offset `end` holds a non-zero byte: a page
/// written back after a lost one.
fn kept_after_loss(data: &[u8], end: u64) -> bool {
    let next_page = (end as usize / PAGE_SIZE + 1) * PAGE_SIZE;
    data.get(next_page..)
        .is_some_and(|d| d.iter().any(|&b| b != 0))
}

/// Regression (issue 29): a power cut whose write-back of the unsynced tail lost a page and
/// kept a later one left zeros followed by a record; format 1 read it as damage ("record header
/// checksum mismatch with data after it") and the open was refused. Now every image keeps every
/// synced batch and a prefix of the rest.
#[test]
fn a_power_cut_writing_unsynced_pages_back_out_of_order_keeps_every_synced_batch() {
    let dir = Path::new("/wal");
    let fs = CrashFs::new();
    fs.create_dir_all(dir).unwrap();
    let mut w = WalWriter::create(&*fs, dir, 7, 0).unwrap();
    let written: Vec<Entry> = (0..40).map(|i| add(&mut w, i, i == 5 || i == 11)).collect();
    let mut out_of_order = 0;
    for seed in 0..128 {
        let image = CrashFs::from_image(&fs.capture_pages(seed));
        let (got, r) = replay_all(&*image, dir).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert!(got.len() >= 12, "seed {seed}: synced batches lost");
        assert_eq!(got, written[..got.len()], "seed {seed}");
        let data = image.read_all(&dir.join("000007.log")).unwrap();
        out_of_order += (r.torn_tail.is_some() && kept_after_loss(&data, r.end)) as u32;
    }
    assert!(out_of_order > 10, "only {out_of_order} out-of-order images");
}

/// A lost page followed by a record written after the sync that covered it is damage (the
/// page was synced): refused at the first record the page held.
#[test]
fn a_lost_page_before_a_record_written_after_a_sync_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = WalWriter::create(&OsFileSystem, dir.path(), 7, 0).unwrap();
    (0..20).for_each(|i| drop(add(&mut w, i, i == 15)));
    let path = dir.path().join("000007.log");
    let mut data = std::fs::read(&path).unwrap();
    let ends = record_ends(&data);
    data[PAGE_SIZE..2 * PAGE_SIZE].fill(0);
    std::fs::write(&path, &data).unwrap();
    let damaged = ends.iter().rev().find(|&&e| e <= PAGE_SIZE).unwrap();
    match replay_all(&OsFileSystem, dir.path()) {
        Err(Error::Corruption { offset, detail, .. }) => {
            assert_eq!(offset, *damaged as u64, "{detail}");
            assert!(detail.contains("synced up to offset"), "{detail}");
        }
        other => panic!("expected corruption, got {other:?}"),
    }
}

/// The same page lost with no record after the last sync's: the sync may have been cut by
/// the power (its record's page written back before the earlier one): a torn tail.
#[test]
fn a_lost_page_with_no_record_after_the_last_sync_is_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = WalWriter::create(&OsFileSystem, dir.path(), 7, 0).unwrap();
    (0..20).for_each(|i| drop(add(&mut w, i, i == 19)));
    let path = dir.path().join("000007.log");
    let mut data = std::fs::read(&path).unwrap();
    data[PAGE_SIZE..2 * PAGE_SIZE].fill(0);
    std::fs::write(&path, &data).unwrap();
    let (got, r) = replay_all(&OsFileSystem, dir.path()).unwrap();
    assert!(got.len() < 20 && r.torn_tail.is_some(), "{r:?}");
}

/// Close's seal attests the whole log: damage anywhere before it is refused, where without
/// it (non-sync writes only) the same damage is a torn tail.
#[test]
fn the_seal_makes_damage_anywhere_before_it_corruption() {
    for seal in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        write_batches(&OsFileSystem, dir.path(), &[3, 2, 4], false);
        let path = dir.path().join("000007.log");
        let mut w = super::tests::reopen_for_append(&OsFileSystem, dir.path());
        w.synced = 0; // as written by `write_batches`: nothing synced since creation
        if seal {
            w.seal().unwrap();
        }
        let mut data = std::fs::read(&path).unwrap();
        let ends = record_ends(&data);
        data[ends[1] + 15] ^= 4; // the first batch's payload
        std::fs::write(&path, &data).unwrap();
        let replayed = replay_all(&OsFileSystem, dir.path());
        assert_eq!(replayed.is_err(), seal, "seal {seal}: {replayed:?}");
    }
}

/// The bytes of a record whose synced length covers the damage, copied into a value of an
/// unsynced batch, are no proof: they check only at the offset they were written at.
#[test]
fn a_record_copied_inside_a_value_is_no_proof_of_a_sync() {
    let src = tempfile::tempdir().unwrap();
    let mut w = WalWriter::create(&OsFileSystem, src.path(), 7, 0).unwrap();
    (0..20).for_each(|i| drop(add(&mut w, i, true)));
    let data = std::fs::read(src.path().join("000007.log")).unwrap();
    let ends = record_ends(&data);
    let last = data[ends[ends.len() - 2]..].to_vec(); // records ~10 KB synced
    let dir = tempfile::tempdir().unwrap();
    let mut w = WalWriter::create(&OsFileSystem, dir.path(), 7, 0).unwrap();
    let one = [(ValueKind::Value, &b"copy"[..], &last[..])];
    w.add_batch(1, one.into_iter(), false).unwrap();
    let path = dir.path().join("000007.log");
    let mut bad = std::fs::read(&path).unwrap();
    let start = WAL_HEADER_LEN + WAL_MARKER_LEN;
    bad[start] ^= 1; // its header: the copy inside is the only whole record after it
    std::fs::write(&path, &bad).unwrap();
    let (got, r) = replay_all(&OsFileSystem, dir.path()).unwrap();
    assert_eq!((got.len(), r.end), (0, start as u64));
}

/// A format-1 log (`FLSMWAL1`): the marker, then one record per `(seq, key)`.
fn format_1_log(records: &[(u64, &[u8])]) -> Vec<u8> {
    let mut log = b"FLSMWAL1".to_vec();
    log.extend_from_slice(&7u64.to_le_bytes());
    let mut push = |first: u64, entry: Option<&[u8]>| {
        let mut p = first.to_le_bytes().to_vec();
        p.extend_from_slice(&(entry.is_some() as u32).to_le_bytes());
        if let Some(key) = entry {
            p.extend_from_slice(&[1, key.len() as u8]);
            p.extend_from_slice(key);
            p.extend_from_slice(&[2, b'v', b'1']);
        }
        let len = (p.len() as u32).to_le_bytes();
        log.extend_from_slice(&len);
        log.extend_from_slice(&crc32c(&len).to_le_bytes());
        log.extend_from_slice(&crc32c(&p).to_le_bytes());
        log.extend_from_slice(&p);
    };
    push(1, None);
    records.iter().for_each(|&(seq, key)| push(seq, Some(key)));
    log
}

/// Logs written before format 2 replay by format 1's rule: damage with records after it is
/// refused, a damaged last record is a torn tail.
#[test]
fn format_1_logs_keep_format_1_rules() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000007.log");
    let log = format_1_log(&[(1, b"a"), (2, b"b"), (3, b"c")]);
    std::fs::write(&path, &log).unwrap();
    let (got, r) = replay_all(&OsFileSystem, dir.path()).unwrap();
    assert_eq!((got.len(), r.after, r.torn_tail), (3, Some(0), None));
    assert_eq!(got[1], (2, ValueKind::Value, b"b".to_vec(), b"v1".to_vec()));
    let ends = record_ends(&log);
    for (record, torn) in [(1, false), (3, true)] {
        let mut bad = log.clone();
        bad[ends[record] - 1] ^= 1;
        std::fs::write(&path, &bad).unwrap();
        let replayed = replay_all(&OsFileSystem, dir.path());
        assert_eq!(replayed.is_ok(), torn, "record {record}: {replayed:?}");
    }
}

/// Arbitrary bytes after a valid header (and mutations of a real log) are replayed or refused
/// as damage, never a panic: the scan for later records tries every offset of garbage.
#[test]
fn arbitrary_bytes_are_replayed_or_refused_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    write_batches(&OsFileSystem, dir.path(), &[3, 1, 2], true);
    let path = dir.path().join("000007.log");
    let real = std::fs::read(&path).unwrap();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for round in 0..300 {
        let mut data = real.clone();
        match round % 2 {
            0 => (0..1 + next() % 8).for_each(|_| {
                let at = WAL_HEADER_LEN + (next() as usize) % (data.len() - WAL_HEADER_LEN);
                data[at] = next() as u8;
            }),
            _ => {
                data.truncate(WAL_HEADER_LEN);
                data.extend((0..next() % 300).map(|_| next() as u8));
            }
        }
        std::fs::write(&path, &data).unwrap();
        if let Err(e) = replay_all(&OsFileSystem, dir.path()) {
            assert!(e.is_corruption(), "round {round}: {e}");
        }
    }
}
