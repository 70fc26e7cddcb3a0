//! Write-ahead log scenarios: round trips, every cut of the file, damage before the tail,
//! crashes of the process and of the power under a crash-simulating file system.

use super::*;
use crate::error::Error;
use crate::fs::{CrashFs, FileSystem, OsFileSystem};
use crate::types::ValueKind;
use std::path::Path;

pub(super) type Entry = (u64, ValueKind, Vec<u8>, Vec<u8>);

/// Writes batches `sizes[i]` entries long; returns every entry in order.
pub(super) fn write_batches(
    fs: &dyn FileSystem,
    dir: &Path,
    sizes: &[usize],
    sync: bool,
) -> Vec<Entry> {
    let mut w = WalWriter::create(fs, dir, 7, 0).unwrap();
    let mut all = Vec::new();
    let mut seq = 1;
    for (b, &n) in sizes.iter().enumerate() {
        let batch: Vec<Entry> = (0..n)
            .map(|i| {
                let kind = if i % 3 == 2 {
                    ValueKind::Deletion
                } else {
                    ValueKind::Value
                };
                let value = if kind == ValueKind::Value {
                    vec![b as u8; i * 7]
                } else {
                    Vec::new()
                };
                (
                    seq + i as u64,
                    kind,
                    format!("key{b}-{i}").into_bytes(),
                    value,
                )
            })
            .collect();
        let it = batch
            .iter()
            .map(|(_, k, key, v)| (*k, key.as_slice(), v.as_slice()));
        w.add_batch(seq, it, sync).unwrap();
        seq += n as u64;
        all.extend(batch);
    }
    all
}

pub(super) fn replay_all(
    fs: &dyn FileSystem,
    dir: &Path,
) -> crate::error::Result<(Vec<Entry>, WalReplay)> {
    let mut got = Vec::new();
    let r = replay(fs, dir, 7, |seq, kind, k, v| {
        got.push((seq, kind, k.to_vec(), v.to_vec()));
        Ok(())
    })?;
    Ok((got, r))
}

#[test]
fn batches_replay_in_order_with_their_sequences() {
    let dir = tempfile::tempdir().unwrap();
    let written = write_batches(&OsFileSystem, dir.path(), &[1, 5, 0, 3], false);
    let (got, r) = replay_all(&OsFileSystem, dir.path()).unwrap();
    assert_eq!(got, written);
    assert_eq!((r.records, r.entries, r.max_sequence), (4, 9, 9));
    assert_eq!(r.torn_tail, None);
}

/// Every prefix of the file after the marker (a crash may cut the unsynced tail anywhere)
/// replays the whole records it holds and reports the cut, never an error; a cut inside the
/// header and marker (synced at creation) is damage.
#[test]
fn every_cut_of_the_file_replays_the_whole_records_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let written = write_batches(&OsFileSystem, dir.path(), &[2, 1, 3], false);
    let path = dir.path().join("000007.log");
    let full = std::fs::read(&path).unwrap();
    let all_ends = record_ends(&full);
    let (marker_end, ends) = (all_ends[0], &all_ends[1..]);
    for cut in WAL_HEADER_LEN..marker_end {
        std::fs::write(&path, &full[..cut]).unwrap();
        let err = replay_all(&OsFileSystem, dir.path()).unwrap_err();
        assert!(err.is_corruption(), "cut at {cut}: {err}");
    }
    for cut in marker_end..full.len() {
        std::fs::write(&path, &full[..cut]).unwrap();
        let (got, r) = replay_all(&OsFileSystem, dir.path()).unwrap();
        let whole = ends.iter().filter(|&&e| e <= cut).count();
        let expected: usize = [2, 1, 3][..whole].iter().sum();
        assert_eq!(got, written[..expected], "cut at {cut}");
        let clean = ends.contains(&cut) || cut == marker_end;
        assert_eq!(r.torn_tail.is_some(), !clean, "cut at {cut}");
    }
}

/// Where each record of a well-formed log ends.
pub(super) fn record_ends(data: &[u8]) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut pos = WAL_HEADER_LEN;
    while pos < data.len() {
        let len = u32::from_le_bytes(data[pos..pos + 4].try_into().unwrap()) as usize;
        pos += WAL_RECORD_HEADER_LEN + len;
        ends.push(pos);
    }
    ends
}

/// Where the record holding byte `at` starts (records end at `ends`), and its index.
fn record_of(at: usize, ends: &[usize]) -> (usize, usize) {
    let record = ends.iter().position(|&e| at < e).unwrap();
    let start = match record {
        0 => WAL_HEADER_LEN,
        _ => ends[record - 1],
    };
    (record, start)
}

/// With every batch synced: a flipped byte in the marker or in any record but the last is
/// refused with the file and the record's offset (a later record was written after a sync
/// covering it); in the last record it cannot be told from a torn write and drops that record.
#[test]
fn damage_before_a_synced_record_is_corruption_at_the_record() {
    let dir = tempfile::tempdir().unwrap();
    write_batches(&OsFileSystem, dir.path(), &[2, 2, 2], true);
    let path = dir.path().join("000007.log");
    let full = std::fs::read(&path).unwrap();
    let ends = record_ends(&full);
    for at in WAL_HEADER_LEN..full.len() {
        let mut bad = full.clone();
        bad[at] ^= 0x20;
        std::fs::write(&path, &bad).unwrap();
        let (record, start) = record_of(at, &ends);
        match replay_all(&OsFileSystem, dir.path()) {
            Err(Error::Corruption { offset, .. }) => {
                assert!(record < 3, "byte {at}: the last record is a torn tail");
                assert_eq!(offset, start as u64, "byte {at}");
            }
            Ok((got, r)) => {
                assert_eq!(record, 3, "byte {at} of record {record} was accepted");
                assert_eq!((got.len(), r.torn_tail.is_some()), (4, true), "byte {at}");
            }
            Err(e) => panic!("byte {at}: {e}"),
        }
    }
}

/// Without sync, no record says a later one's bytes were synced: a flipped byte in any batch
/// is where a power cut's unsynced tail starts (the batches before it replay, the note names
/// the offset and the bytes dropped); in the marker (synced at creation) it is damage.
#[test]
fn damage_in_the_unsynced_tail_is_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    write_batches(&OsFileSystem, dir.path(), &[2, 2, 2], false);
    let path = dir.path().join("000007.log");
    let full = std::fs::read(&path).unwrap();
    let ends = record_ends(&full);
    for at in WAL_HEADER_LEN..full.len() {
        let mut bad = full.clone();
        bad[at] ^= 0x20;
        std::fs::write(&path, &bad).unwrap();
        let (record, start) = record_of(at, &ends);
        let replayed = replay_all(&OsFileSystem, dir.path());
        if record == 0 {
            assert!(replayed.unwrap_err().is_corruption(), "byte {at}");
            continue;
        }
        let (got, r) = replayed.unwrap();
        assert_eq!(
            (got.len(), r.end),
            (2 * (record - 1), start as u64),
            "byte {at}"
        );
        let note = r.torn_tail.unwrap();
        let dropped = format!("offset {start}: ");
        assert!(note.contains(&dropped), "byte {at}: {note}");
        let bytes = format!("{} bytes dropped", full.len() - start);
        assert!(note.contains(&bytes), "byte {at}: {note}");
    }
}

/// The sequence marker written at creation is read back (not as a batch), and `end` is where
/// the whole records end.
#[test]
fn the_sequence_marker_and_the_end_of_the_whole_records_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = WalWriter::create(&OsFileSystem, dir.path(), 7, 41).unwrap();
    assert!(w.is_empty());
    let one = [(ValueKind::Value, &b"k"[..], &b"v"[..])];
    w.add_batch(42, one.into_iter(), true).unwrap();
    let len = w.len();
    let (_, r) = replay_all(&OsFileSystem, dir.path()).unwrap();
    assert_eq!((r.after, r.records, r.max_sequence), (Some(41), 1, 42));
    assert_eq!((r.end, r.len), (len, len));
    let path = dir.path().join("000007.log");
    let full = std::fs::read(&path).unwrap();
    std::fs::write(&path, &full[..full.len() - 1]).unwrap();
    let (got, r) = replay_all(&OsFileSystem, dir.path()).unwrap();
    let marker_end = (WAL_HEADER_LEN + WAL_MARKER_LEN) as u64;
    assert_eq!((got.len(), r.end, r.after), (0, marker_end, Some(41)));
    assert!(r.torn_tail.is_some());
}

/// `replay_prefix` applies the whole batches before damage and returns the damage beside them.
#[test]
fn replay_prefix_stops_at_the_damage_and_keeps_what_came_before() {
    let dir = tempfile::tempdir().unwrap();
    let written = write_batches(&OsFileSystem, dir.path(), &[2, 3, 1], true);
    let path = dir.path().join("000007.log");
    let mut data = std::fs::read(&path).unwrap();
    let ends = record_ends(&data);
    data[ends[1] + 20] ^= 1; // the second batch's payload, with a synced batch after it
    std::fs::write(&path, &data).unwrap();
    let mut got = Vec::new();
    let (r, damage) = replay_prefix(&OsFileSystem, dir.path(), 7, |seq, kind, k, v| {
        got.push((seq, kind, k.to_vec(), v.to_vec()));
        Ok(())
    })
    .unwrap();
    assert_eq!(got, written[..2]);
    assert_eq!(r.end, ends[1] as u64);
    let Some(Error::Corruption { offset, .. }) = damage else {
        panic!("expected damage, got {damage:?}");
    };
    assert_eq!(offset, ends[1] as u64);
}

#[test]
fn a_wrong_header_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_batches(&OsFileSystem, dir.path(), &[1], false);
    let path = dir.path().join("000007.log");
    let mut data = std::fs::read(&path).unwrap();
    data[8] = 9; // the number of another log
    std::fs::write(&path, &data).unwrap();
    let err = replay_all(&OsFileSystem, dir.path())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("000007.log") && err.contains("names log 9"),
        "{err}"
    );
    std::fs::write(&path, b"FLSMWAL").unwrap();
    assert!(replay_all(&OsFileSystem, dir.path())
        .unwrap_err()
        .is_corruption());
}

/// A process crash keeps every record handed to the OS; a power loss keeps at least the
/// synced records (and whole records only) under every image the crash file system can leave.
#[test]
fn crashes_keep_what_was_handed_over_or_synced() {
    let dir = Path::new("/wal");
    let fs = CrashFs::new();
    fs.create_dir_all(dir).unwrap();
    let written = write_batches(&*fs, dir, &[3, 1, 2], false);
    let process = CrashFs::from_image(&fs.capture_process());
    assert_eq!(replay_all(&*process, dir).unwrap().0, written);
    let fs = CrashFs::new();
    fs.create_dir_all(dir).unwrap();
    let synced = write_batches(&*fs, dir, &[3, 1], true);
    let mut w = reopen_for_append(&*fs, dir);
    let extra = [(ValueKind::Value, &b"k"[..], &b"v"[..])];
    w.add_batch(5, extra.into_iter(), false).unwrap();
    for seed in 0..64 {
        let image = CrashFs::from_image(&fs.capture(seed));
        let (got, _) = replay_all(&*image, dir).unwrap();
        assert!(
            got.len() == synced.len() || got.len() == synced.len() + 1,
            "seed {seed}"
        );
        assert_eq!(got[..synced.len()], synced[..], "seed {seed}");
    }
}

/// The writer continued after `write_batches` (tests only: a log is never reopened).
pub(super) fn reopen_for_append(fs: &dyn FileSystem, dir: &Path) -> WalWriter {
    let path = dir.join("000007.log");
    let synced = fs.read_all(&path).unwrap().len() as u64;
    WalWriter {
        number: 7,
        file: fs.open_append(&path).unwrap(),
        path,
        buf: Vec::new(),
        failed: false,
        synced,
    }
}
