//! Tests of value-log writing, reading, scanning and corruption handling.

use super::*;
use crate::error::Error;
use crate::fs::{OsFileSystem, ReadAhead};
use proptest::prelude::*;
use std::path::Path;
use std::time::Duration;

type Records = Vec<(Vec<u8>, Vec<u8>)>;

fn write(dir: &Path, number: u64, records: &Records) -> (Vec<ValuePointer>, u64) {
    let io = VlogIo {
        direct: true,
        cache_written: true,
    };
    let mut w = VlogWriter::create(&OsFileSystem, dir, number, io).unwrap();
    assert!(w.is_empty());
    let ptrs = records
        .iter()
        .map(|(k, v)| w.append(k, v).unwrap())
        .collect();
    assert_eq!(w.number(), number);
    let len = w.len();
    let size = w.finish().unwrap();
    assert_eq!(size, len);
    (ptrs, size)
}

fn many_records() -> Records {
    let mut recs: Records = (0..300u32)
        .map(|i| {
            let key = format!("key{i:05}").into_bytes();
            let value = vec![(i % 251) as u8; (i as usize * 37) % 3000];
            (key, value)
        })
        .collect();
    recs.push((b"empty-value".to_vec(), Vec::new()));
    recs.push((Vec::new(), b"empty-key".to_vec()));
    recs.push((
        b"big".to_vec(),
        (0..1 << 20).map(|i| (i % 253) as u8).collect(),
    ));
    recs.push((Vec::new(), Vec::new()));
    recs
}

fn corruption_at(err: Error) -> (std::path::PathBuf, u64) {
    match err {
        Error::Corruption { file, offset, .. } => (file, offset),
        e => panic!("expected corruption, got {e}"),
    }
}

#[test]
fn file_names_round_trip() {
    assert_eq!(vlog_file_name(42), "000042.vlog");
    assert_eq!(parse_vlog_file_name("000042.vlog"), Some(42));
    assert_eq!(parse_vlog_file_name("1234567.vlog"), Some(1234567));
    for bad in [".vlog", "x1.vlog", "000042.sst", "000042.vlog.tmp"] {
        assert_eq!(parse_vlog_file_name(bad), None, "{bad}");
    }
}

#[test]
fn round_trip_of_many_records_including_empty_and_one_mib_values() {
    let dir = tempfile::tempdir().unwrap();
    let recs = many_records();
    let (ptrs, size) = write(dir.path(), 7, &recs);
    let r = VlogReader::open(&OsFileSystem, dir.path(), 7).unwrap();
    let mut expected_offset = VLOG_HEADER_LEN;
    for ((k, v), p) in recs.iter().zip(&ptrs) {
        assert_eq!(p.file_number, 7);
        assert_eq!(p.offset, expected_offset);
        assert_eq!(p.value_len as usize, v.len());
        assert_eq!(p.record_len as usize, RECORD_HEADER_LEN + k.len() + v.len());
        expected_offset += u64::from(p.record_len);
        assert_eq!(&r.read_value(p).unwrap(), v);
        assert_eq!(r.read_record(p).unwrap(), (k.clone(), v.clone()));
    }
    assert_eq!(expected_offset, size);
    let mut scanned = Vec::new();
    r.for_each_record(|p, k, v| {
        scanned.push((p, k.to_vec(), v.to_vec()));
        Ok(())
    })
    .unwrap();
    assert_eq!(scanned.len(), recs.len());
    for ((p, k, v), ((rk, rv), rp)) in scanned.iter().zip(recs.iter().zip(&ptrs)) {
        assert_eq!((p, k, v), (rp, rk, rv));
    }
}

#[test]
fn a_scan_reads_values_through_read_ahead_windows_as_point_reads_see_them() {
    let dir = tempfile::tempdir().unwrap();
    let recs = many_records();
    let (ptrs, _) = write(dir.path(), 7, &recs);
    let set = VlogSet::new(Arc::new(OsFileSystem), dir.path().to_path_buf());
    let mut ahead = ReadAhead::default();
    for ((_, v), p) in recs.iter().zip(&ptrs) {
        assert_eq!(&set.read_value_ahead(p, &mut ahead).unwrap(), v);
    }
    for ((_, v), p) in recs.iter().zip(&ptrs).rev().step_by(7) {
        assert_eq!(&set.read_value_ahead(p, &mut ahead).unwrap(), v, "backward");
    }
    let past_end = ValuePointer {
        offset: ptrs[300].offset + 10,
        ..ptrs[300]
    };
    let err = set.read_value_ahead(&past_end, &mut ahead).unwrap_err();
    assert!(err.is_corruption(), "{err}");
}

#[test]
fn a_mapped_reader_reads_every_value_as_pread_does_and_refuses_pointers_past_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let recs = many_records();
    let (ptrs, size) = write(dir.path(), 7, &recs);
    let (set, unmapped) = mapped_and_unmapped(dir.path());
    assert!(set.reader(7).unwrap().is_mapped());
    for ((_, v), p) in recs.iter().zip(&ptrs) {
        assert_eq!(&set.read_value(p).unwrap(), v, "{p:?}");
    }
    let past_end = ValuePointer {
        offset: size,
        ..ptrs[0]
    };
    assert!(set.read_value(&past_end).unwrap_err().is_corruption());
    assert!(!unmapped.reader(7).unwrap().is_mapped());
}

/// The logs in `dir` through a set whose readers map them and through one whose do not.
fn mapped_and_unmapped(dir: &Path) -> (VlogSet, VlogSet) {
    let set =
        |mapped| VlogSet::new(Arc::new(OsFileSystem), dir.to_path_buf()).with_mapped_reads(mapped);
    (set(true), set(false))
}

/// `many_records` written to log 7 of a temporary directory: the directory, the records, their
/// pointers, and the log through mapped and unmapped sets.
fn many_records_logged() -> (
    tempfile::TempDir,
    Records,
    Vec<ValuePointer>,
    (VlogSet, VlogSet),
) {
    let dir = tempfile::tempdir().unwrap();
    let recs = many_records();
    let (ptrs, _) = write(dir.path(), 7, &recs);
    let sets = mapped_and_unmapped(dir.path());
    (dir, recs, ptrs, sets)
}

/// How long a timed read took: one that waited for the device, or one from memory.
fn read_time(waited_for_device: bool) -> Duration {
    Duration::from_micros(if waited_for_device { 500 } else { 1 })
}

#[test]
fn records_across_pages_come_from_the_mapping_only_while_timed_reads_find_the_log_in_memory() {
    let (_dir, recs, ptrs, (set, unmapped)) = many_records_logged();
    let reader = set.reader(7).unwrap();
    let across = |p: &ValuePointer| p.offset / 4096 != (p.offset + p.record_len as u64 - 1) / 4096;
    assert!(ptrs.iter().any(across), "the records cross pages");
    for waited_for_device in [false, true, false] {
        reader.note_timed_read(read_time(waited_for_device));
        assert_eq!(reader.reads_across_pages_mapped(), !waited_for_device);
        for ((_, v), p) in recs.iter().zip(&ptrs) {
            assert_eq!(&reader.read_value(p).unwrap(), v, "{p:?}");
        }
    }
    assert!(!unmapped.reader(7).unwrap().reads_across_pages_mapped());
}

#[test]
fn a_prefetch_goes_to_the_device_only_while_the_log_is_not_found_in_memory() {
    let (_dir, recs, ptrs, (set, _)) = many_records_logged();
    let reader = set.reader(7).unwrap();
    for waited_for_device in [false, true, false] {
        reader.note_timed_read(read_time(waited_for_device));
        assert_eq!(reader.prefetch(&ptrs[3]), waited_for_device);
        // A scan reads the same values either way (mapping or windows).
        let mut ahead = ReadAhead::default();
        for ((_, v), p) in recs.iter().zip(&ptrs) {
            assert_eq!(&reader.read_value_ahead(p, &mut ahead).unwrap(), v, "{p:?}");
        }
    }
    let outside = ValuePointer {
        offset: reader.size() + 10,
        ..ptrs[0]
    };
    assert!(
        !reader.prefetch(&outside),
        "no hint for a pointer outside the log"
    );
}

#[test]
fn vlog_set_shares_readers_and_evicts() {
    let dir = tempfile::tempdir().unwrap();
    let recs = vec![(b"k".to_vec(), b"v".to_vec())];
    let (ptrs, _) = write(dir.path(), 3, &recs);
    let set = VlogSet::new(Arc::new(OsFileSystem), dir.path().to_path_buf());
    let a = set.reader(3).unwrap();
    let b = set.reader(3).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(set.read_value(&ptrs[0]).unwrap(), b"v");
    set.evict(3);
    assert!(!Arc::ptr_eq(&a, &set.reader(3).unwrap()));
    assert!(set.reader(99).is_err(), "missing file");
}

/// Regression (issue 26): a point read that dropped the last handle of a log the GC had deleted
/// paid for the file's truncate and discard (kernel stacks sampled during YCSB-F).
#[test]
fn an_evicted_reader_is_closed_by_close_retired_not_by_its_last_user() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), 3, &vec![(b"k".to_vec(), b"v".to_vec())]);
    let set = VlogSet::new(Arc::new(OsFileSystem), dir.path().to_path_buf());
    let in_use = set.reader(3).unwrap();
    let watch = Arc::downgrade(&in_use);
    set.evict(3);
    assert_eq!(set.close_retired(), 1, "still in use");
    drop(in_use);
    assert!(
        watch.upgrade().is_some(),
        "the user's drop did not close it"
    );
    assert_eq!(set.close_retired(), 0);
    assert!(watch.upgrade().is_none(), "closed by close_retired");
}

/// A hint (a scan's look-ahead) is never an error: a bad pointer or a missing log is left to
/// the read that follows, which reports it.
#[test]
fn a_prefetch_hint_never_fails_and_the_read_after_it_reports_a_bad_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let (ptrs, size) = write(dir.path(), 3, &vec![(b"k".to_vec(), b"v".to_vec())]);
    let set = VlogSet::new(Arc::new(OsFileSystem), dir.path().to_path_buf());
    set.prefetch(&ptrs[0]);
    assert_eq!(set.read_value(&ptrs[0]).unwrap(), b"v");
    let past_end = ValuePointer {
        offset: size,
        ..ptrs[0]
    };
    set.prefetch(&past_end);
    assert!(matches!(
        set.read_value(&past_end),
        Err(Error::Corruption { .. })
    ));
    let missing = ValuePointer {
        file_number: 99,
        ..ptrs[0]
    };
    set.prefetch(&missing);
    assert!(set.read_value(&missing).is_err());
}

#[test]
fn wrong_pointer_is_corruption_naming_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let recs = vec![
        (b"alpha".to_vec(), b"one".to_vec()),
        (b"beta".to_vec(), b"two-two".to_vec()),
    ];
    let (ptrs, size) = write(dir.path(), 1, &recs);
    let path = dir.path().join("000001.vlog");
    let r = VlogReader::open(&OsFileSystem, dir.path(), 1).unwrap();
    let p = ptrs[1];
    let cases = [
        ValuePointer {
            offset: p.offset + 1,
            ..p
        },
        ValuePointer {
            offset: ptrs[0].offset + 3,
            ..ptrs[0]
        },
        ValuePointer {
            value_len: p.value_len - 1,
            ..p
        },
        ValuePointer {
            value_len: p.value_len + 1,
            record_len: p.record_len + 1,
            ..p
        },
        ValuePointer {
            record_len: p.record_len - 1,
            ..p
        },
        ValuePointer {
            record_len: p.record_len + 1,
            ..p
        },
        ValuePointer { offset: size, ..p },
        ValuePointer {
            offset: u64::MAX - 3,
            ..p
        },
        ValuePointer {
            record_len: u32::MAX,
            ..p
        },
        ValuePointer {
            value_len: p.record_len,
            ..p
        },
        ValuePointer { offset: 0, ..p },
    ];
    for bad in cases {
        let err = r.read_value(&bad).unwrap_err();
        assert_eq!(corruption_at(err), (path.clone(), bad.offset), "{bad:?}");
    }
    let other_file = ValuePointer {
        file_number: 2,
        ..p
    };
    assert!(matches!(
        r.read_value(&other_file),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn bad_header_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), 1, &Vec::new());
    let path = dir.path().join("000001.vlog");
    let good = std::fs::read(&path).unwrap();
    assert_eq!(good.len() as u64, VLOG_HEADER_LEN);
    for (at, want_offset) in [(0, 0), (7, 0), (8, 8)] {
        let mut bad = good.clone();
        bad[at] ^= 1;
        std::fs::write(&path, &bad).unwrap();
        let err = VlogReader::open(&OsFileSystem, dir.path(), 1).unwrap_err();
        assert_eq!(corruption_at(err), (path.clone(), want_offset));
    }
    std::fs::write(&path, &good[..5]).unwrap();
    assert!(VlogReader::open(&OsFileSystem, dir.path(), 1)
        .unwrap_err()
        .is_corruption());
}

#[test]
fn truncated_file_scan_is_corruption_at_last_record() {
    let dir = tempfile::tempdir().unwrap();
    let recs = vec![(b"a".to_vec(), vec![1; 100]), (b"b".to_vec(), vec![2; 100])];
    let (ptrs, size) = write(dir.path(), 1, &recs);
    let path = dir.path().join("000001.vlog");
    let full = std::fs::read(&path).unwrap();
    for cut in ptrs[1].offset + 1..size {
        std::fs::write(&path, &full[..cut as usize]).unwrap();
        let r = VlogReader::open(&OsFileSystem, dir.path(), 1).unwrap();
        let mut seen = 0;
        let err = r
            .for_each_record(|_, _, _| {
                seen += 1;
                Ok(())
            })
            .unwrap_err();
        assert_eq!(corruption_at(err), (path.clone(), ptrs[1].offset));
        assert_eq!(seen, 1);
        assert!(r.read_value(&ptrs[1]).unwrap_err().is_corruption());
    }
}

#[test]
fn flipping_any_byte_gives_corruption_or_correct_data() {
    let dir = tempfile::tempdir().unwrap();
    let recs = vec![
        (b"k1".to_vec(), b"value-one".to_vec()),
        (Vec::new(), b"v".to_vec()),
        (b"key-three".to_vec(), Vec::new()),
    ];
    let (ptrs, _) = write(dir.path(), 1, &recs);
    let path = dir.path().join("000001.vlog");
    let full = std::fs::read(&path).unwrap();
    for at in 0..full.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut bad = full.clone();
            bad[at] ^= mask;
            std::fs::write(&path, &bad).unwrap();
            check_flipped(dir.path(), &recs, &ptrs, at);
        }
    }
}

/// Every read either fails with corruption or returns exactly the original data.
fn check_flipped(dir: &Path, recs: &Records, ptrs: &[ValuePointer], at: usize) {
    let r = match VlogReader::open(&OsFileSystem, dir, 1) {
        Ok(r) => r,
        Err(e) => return assert!(e.is_corruption(), "byte {at}: {e}"),
    };
    let mapped = VlogReader::open_mapped(&OsFileSystem, dir, 1).expect("it opened unmapped");
    assert!(mapped.is_mapped());
    let mut ahead = ReadAhead::default();
    for ((k, v), p) in recs.iter().zip(ptrs) {
        match mapped.read_value(p) {
            Ok(got) => assert_eq!(&got, v, "byte {at}, through the mapping"),
            Err(e) => assert!(e.is_corruption(), "byte {at}, through the mapping: {e}"),
        }
        match r.read_record(p) {
            Ok(got) => assert_eq!(got, (k.clone(), v.clone()), "byte {at}"),
            Err(e) => assert!(e.is_corruption(), "byte {at}: {e}"),
        }
        match r.read_value_ahead(p, &mut ahead) {
            Ok(got) => assert_eq!(&got, v, "byte {at}, through read-ahead"),
            Err(e) => assert!(e.is_corruption(), "byte {at}, through read-ahead: {e}"),
        }
    }
    let mut scanned = Vec::new();
    let res = r.for_each_record(|p, k, v| {
        scanned.push((p, k.to_vec(), v.to_vec()));
        Ok(())
    });
    if let Err(e) = res {
        assert!(e.is_corruption(), "byte {at}: {e}");
    }
    for (i, (p, k, v)) in scanned.into_iter().enumerate() {
        assert_eq!(
            (p, k, v),
            (ptrs[i], recs[i].0.clone(), recs[i].1.clone()),
            "byte {at}"
        );
    }
}

#[test]
fn callback_error_stops_the_scan() {
    let dir = tempfile::tempdir().unwrap();
    let recs = vec![
        (b"a".to_vec(), b"1".to_vec()),
        (b"b".to_vec(), b"2".to_vec()),
    ];
    write(dir.path(), 1, &recs);
    let r = VlogReader::open(&OsFileSystem, dir.path(), 1).unwrap();
    let mut calls = 0;
    let err = r
        .for_each_record(|_, _, _| {
            calls += 1;
            Err(Error::InvalidState("stop".into()))
        })
        .unwrap_err();
    assert!(matches!(err, Error::InvalidState(_)));
    assert_eq!(calls, 1);
}

#[test]
fn failed_write_poisons_the_writer() {
    let dir = tempfile::tempdir().unwrap();
    let fault = crate::fs::FaultFs::default();
    let io = VlogIo {
        direct: true,
        cache_written: false,
    };
    let mut w = VlogWriter::create(&fault, dir.path(), 1, io).unwrap();
    w.append(b"a", b"1").unwrap();
    fault
        .fail_writes
        .store(true, std::sync::atomic::Ordering::SeqCst);
    // Appends are buffered: the failure surfaces when the buffer is written.
    w.append(b"b", b"2").unwrap();
    assert!(matches!(w.sync(), Err(Error::Io { .. })));
    fault
        .fail_writes
        .store(false, std::sync::atomic::Ordering::SeqCst);
    assert!(matches!(w.append(b"c", b"3"), Err(Error::InvalidState(_))));
    assert!(w.finish().is_err());
}

proptest! {
    #[test]
    fn decode_record_never_panics_on_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        if let Ok((k, v, n)) = decode_record(&bytes, Path::new("f"), 16) {
            prop_assert_eq!(n, RECORD_HEADER_LEN + k.len() + v.len());
            prop_assert!(n <= bytes.len());
        }
    }

    #[test]
    fn decode_record_round_trips_encoded_records(
        key in proptest::collection::vec(any::<u8>(), 0..40),
        value in proptest::collection::vec(any::<u8>(), 0..200),
        tail in proptest::collection::vec(any::<u8>(), 0..8),
    ) {
        let mut bytes = record::encode_record_header(&key, &value).to_vec();
        bytes.extend_from_slice(&key);
        bytes.extend_from_slice(&value);
        let len = bytes.len();
        bytes.extend_from_slice(&tail);
        let (k, v, n) = decode_record(&bytes, Path::new("f"), 16).unwrap();
        prop_assert_eq!((k, v, n), (&key[..], &value[..], len));
    }
}
