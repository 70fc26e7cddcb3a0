//! Tests of [`Manifest`] creation, appends and recovery.

use super::tests::file;
use super::*;
use crate::error::Error;
use crate::fs::{FileSystem, OsFileSystem};
use std::path::Path;
use std::sync::Arc;

fn fs() -> Arc<dyn FileSystem> {
    Arc::new(OsFileSystem)
}

/// A few edits that touch every field; each applies to the state after the previous ones.
fn edits() -> Vec<VersionEdit> {
    let mut with_ref = file(11, "k", "m");
    with_ref.vlog_refs = vec![(20, 300)];
    vec![
        VersionEdit {
            next_file_number: Some(12),
            last_sequence: Some(100),
            new_files: vec![(1, file(10, "a", "c"))],
            ..VersionEdit::default()
        },
        VersionEdit {
            new_vlogs: vec![VlogMeta {
                number: 20,
                total_bytes: 4096,
            }],
            new_files: vec![(1, with_ref)],
            min_unflushed_pmlog: Some(3),
            ..VersionEdit::default()
        },
        VersionEdit {
            deleted_files: vec![(1, 10)],
            new_files: vec![(2, file(13, "a", "c"))],
            next_file_number: Some(14),
            last_sequence: Some(250),
            ..VersionEdit::default()
        },
        VersionEdit {
            deleted_files: vec![(1, 11)],
            deleted_vlogs: vec![20],
            new_files: vec![(2, file(15, "k", "m"))],
            next_file_number: Some(16),
            ..VersionEdit::default()
        },
    ]
}

fn initial_state() -> ManifestState {
    let mut s = ManifestState {
        next_file_number: 2,
        ..ManifestState::default()
    };
    s.apply(&VersionEdit {
        new_files: vec![(2, file(1, "x", "z"))],
        ..VersionEdit::default()
    })
    .unwrap();
    s
}

/// Creates MANIFEST-000005 with all edits; returns the states after 0..=n edits and the offset
/// of each appended record.
fn write_manifest(dir: &Path) -> (Vec<ManifestState>, Vec<u64>) {
    let mut state = initial_state();
    let mut m = Manifest::create(fs(), dir, 5, &state).unwrap();
    let mut states = vec![state.clone()];
    let mut offsets = Vec::new();
    for e in edits() {
        offsets.push(m.file_size());
        m.append(&e).unwrap();
        state.apply(&e).unwrap();
        states.push(state.clone());
    }
    (states, offsets)
}

fn manifest_path(dir: &Path) -> std::path::PathBuf {
    dir.join("MANIFEST-000005")
}

fn corruption_at(err: Error) -> (std::path::PathBuf, u64) {
    match err {
        Error::Corruption { file, offset, .. } => (file, offset),
        e => panic!("expected corruption, got {e}"),
    }
}

#[test]
fn create_append_recover_equals_applied_state() {
    let dir = tempfile::tempdir().unwrap();
    assert!(!Manifest::exists(&OsFileSystem, dir.path()));
    let (states, _) = write_manifest(dir.path());
    assert!(Manifest::exists(&OsFileSystem, dir.path()));
    let got = Manifest::recover(&OsFileSystem, dir.path(), &no_extension).unwrap();
    let want = states.last().unwrap();
    assert_eq!(&got, want);
    assert_eq!(got.next_file_number, 16);
    assert_eq!(got.last_sequence, 250);
    assert_eq!(got.min_unflushed_pmlog, 3);
    assert_eq!(got.version.file_numbers(), vec![1, 13, 15]);
}

#[test]
fn torn_final_record_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let (states, offsets) = write_manifest(dir.path());
    let path = manifest_path(dir.path());
    let full = std::fs::read(&path).unwrap();
    let last = *offsets.last().unwrap() as usize;
    for cut in last + 1..full.len() {
        std::fs::write(&path, &full[..cut]).unwrap();
        let got = Manifest::recover(&OsFileSystem, dir.path(), &no_extension).unwrap();
        assert_eq!(&got, &states[states.len() - 2], "cut at {cut}");
    }
    // A crash that leaves a zero-filled tail is a torn write too (no record starts with zeros).
    assert_ne!(crate::types::crc32c(&[0; 4]), 0);
    let mut zeros = full.clone();
    zeros.extend_from_slice(&[0; 40]);
    std::fs::write(&path, &zeros).unwrap();
    let got = Manifest::recover(&OsFileSystem, dir.path(), &no_extension).unwrap();
    assert_eq!(&got, states.last().unwrap());
}

#[test]
fn bit_flip_in_final_manifest_record_is_corruption_not_a_torn_write() {
    let dir = tempfile::tempdir().unwrap();
    let (states, offsets) = write_manifest(dir.path());
    let path = manifest_path(dir.path());
    let full = std::fs::read(&path).unwrap();
    let last = *offsets.last().unwrap() as usize;
    // Payload, crc and length (larger: claims to run past the end) of the final record.
    for (at, mask) in [(full.len() - 1, 0x01), (last, 0x10), (last + 6, 0x01)] {
        let mut bad = full.clone();
        bad[at] ^= mask;
        std::fs::write(&path, &bad).unwrap();
        let err = Manifest::recover(&OsFileSystem, dir.path(), &no_extension).unwrap_err();
        assert_eq!(
            corruption_at(err),
            (path.clone(), last as u64),
            "flip at {at}"
        );
    }
    // A final record whose last sector was never written (zeros from a 512-byte boundary to
    // the end it claims) is a torn write.
    let end = (last + 8).next_multiple_of(512) + 512;
    let mut torn = full[..last].to_vec();
    torn.extend_from_slice(&0x1234_5678u32.to_le_bytes());
    torn.extend_from_slice(&((end - last - 8) as u32).to_le_bytes());
    torn.resize(end - 512, 0x5a);
    torn.resize(end, 0);
    std::fs::write(&path, &torn).unwrap();
    let got = Manifest::recover(&OsFileSystem, dir.path(), &no_extension).unwrap();
    assert_eq!(&got, &states[states.len() - 2]);
    // ... also when a middle sector is the unwritten one (write-back order is not guaranteed).
    let end = end + 512;
    let mut hole = full[..last].to_vec();
    hole.extend_from_slice(&0x1234_5678u32.to_le_bytes());
    hole.extend_from_slice(&((end - last - 8) as u32).to_le_bytes());
    hole.resize(end - 1024, 0x5a);
    hole.resize(end - 512, 0);
    hole.resize(end, 0x5a);
    std::fs::write(&path, &hole).unwrap();
    let got = Manifest::recover(&OsFileSystem, dir.path(), &no_extension).unwrap();
    assert_eq!(&got, &states[states.len() - 2]);
}

#[test]
fn corrupted_middle_record_is_corruption_at_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let (_, offsets) = write_manifest(dir.path());
    let path = manifest_path(dir.path());
    let full = std::fs::read(&path).unwrap();
    let rec = offsets[1] as usize;
    for at in [rec, rec + 9, offsets[2] as usize - 1] {
        let mut bad = full.clone();
        bad[at] ^= 0x40;
        std::fs::write(&path, &bad).unwrap();
        let err = Manifest::recover(&OsFileSystem, dir.path(), &no_extension).unwrap_err();
        assert_eq!(
            corruption_at(err),
            (path.clone(), rec as u64),
            "flip at {at}"
        );
    }
}

#[test]
fn middle_record_with_huge_length_is_not_mistaken_for_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let (_, offsets) = write_manifest(dir.path());
    let path = manifest_path(dir.path());
    let mut bad = std::fs::read(&path).unwrap();
    bad[offsets[1] as usize + 7] = 0x7f; // high byte of the length field
    std::fs::write(&path, &bad).unwrap();
    let err = Manifest::recover(&OsFileSystem, dir.path(), &no_extension).unwrap_err();
    assert_eq!(corruption_at(err), (path, offsets[1]));
}

#[test]
fn flipping_any_manifest_byte_gives_corruption_or_correct_state() {
    let dir = tempfile::tempdir().unwrap();
    let (states, offsets) = write_manifest(dir.path());
    let path = manifest_path(dir.path());
    let full = std::fs::read(&path).unwrap();
    let _ = (states, offsets);
    // Damage to the final record too: it is complete, so it is not a torn write (the engine may
    // already have acted on it, e.g. deleted flushed PM logs).
    for at in 0..full.len() {
        for mask in [0x01, 0x80, 0xff] {
            let mut bad = full.clone();
            bad[at] ^= mask;
            std::fs::write(&path, &bad).unwrap();
            match Manifest::recover(&OsFileSystem, dir.path(), &no_extension) {
                Err(e) => assert!(e.is_corruption(), "byte {at}: {e}"),
                Ok(s) => panic!("byte {at} mask {mask:#x}: wrong state accepted: {s:?}"),
            }
        }
    }
}

#[test]
fn current_switch_leaves_only_the_new_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let (states, _) = write_manifest(dir.path());
    let state = states.last().unwrap().clone();
    std::fs::write(
        dir.path().join("MANIFEST-000009"),
        b"junk from a crashed create",
    )
    .unwrap();
    let m = Manifest::create(fs(), dir.path(), 16, &state).unwrap();
    assert_eq!(m.number(), 16);
    assert_eq!(
        m.file_size(),
        std::fs::metadata(dir.path().join("MANIFEST-000016"))
            .unwrap()
            .len()
    );
    let mut names = OsFileSystem.list_dir(dir.path()).unwrap();
    names.sort();
    assert_eq!(names, vec!["CURRENT", "MANIFEST-000016"]);
    let current = std::fs::read_to_string(dir.path().join(CURRENT_FILE_NAME)).unwrap();
    assert_eq!(current, "MANIFEST-000016\n");
    assert_eq!(
        Manifest::recover(&OsFileSystem, dir.path(), &no_extension).unwrap(),
        state
    );
}

#[test]
fn recreating_the_live_manifest_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_manifest(dir.path());
    let err = Manifest::create(fs(), dir.path(), 5, &initial_state()).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert!(Manifest::recover(&OsFileSystem, dir.path(), &no_extension).is_ok());
}

#[test]
fn missing_or_garbled_current_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let current = dir.path().join(CURRENT_FILE_NAME);
    let err = Manifest::recover(&OsFileSystem, dir.path(), &no_extension).unwrap_err();
    assert_eq!(corruption_at(err), (current.clone(), 0));
    write_manifest(dir.path());
    for garbage in [
        &b"MANIFEST-00000x\n"[..],
        b"MANIFEST-000005",
        b"",
        b"\xff\xfe\n",
    ] {
        std::fs::write(&current, garbage).unwrap();
        let err = Manifest::recover(&OsFileSystem, dir.path(), &no_extension).unwrap_err();
        assert_eq!(corruption_at(err), (current.clone(), 0), "{garbage:?}");
    }
}

#[test]
fn current_naming_a_missing_manifest_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    write_manifest(dir.path());
    std::fs::write(dir.path().join(CURRENT_FILE_NAME), "MANIFEST-000777\n").unwrap();
    let err = Manifest::recover(&OsFileSystem, dir.path(), &no_extension).unwrap_err();
    assert!(err.to_string().contains("MANIFEST-000777"), "{err}");
    assert_eq!(corruption_at(err), (dir.path().join(CURRENT_FILE_NAME), 0));
}

#[test]
fn manifest_without_a_complete_record_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    write_manifest(dir.path());
    let path = manifest_path(dir.path());
    std::fs::write(&path, [1, 2, 3]).unwrap();
    assert!(Manifest::recover(&OsFileSystem, dir.path(), &no_extension)
        .unwrap_err()
        .is_corruption());
}

#[test]
fn manifest_file_names_round_trip() {
    assert_eq!(manifest_file_name(7), "MANIFEST-000007");
    assert_eq!(parse_manifest_file_name("MANIFEST-000007"), Some(7));
    assert_eq!(
        parse_manifest_file_name("MANIFEST-12345678"),
        Some(12345678)
    );
    for bad in [
        "MANIFEST-",
        "MANIFEST-+1",
        "MANIFEST-1.tmp",
        "CURRENT",
        "manifest-1",
    ] {
        assert_eq!(parse_manifest_file_name(bad), None, "{bad}");
    }
}

#[test]
fn failed_append_poisons_the_writer_and_recovery_sees_prior_state() {
    let dir = tempfile::tempdir().unwrap();
    let fault = Arc::new(crate::fs::FaultFs::default());
    let fail = Arc::clone(&fault.fail_writes);
    let state = initial_state();
    let mut m = Manifest::create(fault, dir.path(), 5, &state).unwrap();
    fail.store(true, std::sync::atomic::Ordering::SeqCst);
    let err = m.append(&edits()[0]).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");
    fail.store(false, std::sync::atomic::Ordering::SeqCst);
    let err = m.append(&edits()[0]).unwrap_err();
    assert!(matches!(err, Error::InvalidState(_)), "{err}");
    assert_eq!(
        Manifest::recover(&OsFileSystem, dir.path(), &no_extension).unwrap(),
        state
    );
}

fn pm_log(number: u64, replaces: u64) -> VersionEdit {
    VersionEdit {
        new_pm_logs: vec![PmLogMeta { number, replaces }],
        ..VersionEdit::default()
    }
}

/// The PM Log set: started by the snapshot, extended by records, GC replacements swap a log,
/// flushes prune; the snapshot (with the identity and the profile) recreates it.
#[test]
fn pm_log_set_follows_records_replacements_and_flushes() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = initial_state();
    state.pm_logs = Some([4].into_iter().collect());
    state.identity = Some("ab".repeat(16));
    state.profile = Some("flatlsm".to_string());
    let mut m = Manifest::create(fs(), dir.path(), 5, &state).unwrap();
    let flush = VersionEdit {
        min_unflushed_pmlog: Some(6),
        ..VersionEdit::default()
    };
    for e in [pm_log(6, 0), pm_log(7, 0), pm_log(8, 7), flush] {
        m.append(&e).unwrap();
        state.apply(&e).unwrap();
    }
    assert_eq!(state.pm_logs, Some([6, 8].into_iter().collect()));
    assert_eq!(
        Manifest::recover(&OsFileSystem, dir.path(), &no_extension).unwrap(),
        state
    );
    Manifest::create(fs(), dir.path(), 9, &state).unwrap();
    assert_eq!(
        Manifest::recover(&OsFileSystem, dir.path(), &no_extension).unwrap(),
        state
    );
}

#[test]
fn pm_log_record_in_a_manifest_that_does_not_track_them_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = Manifest::create(fs(), dir.path(), 5, &initial_state()).unwrap();
    m.append(&pm_log(6, 0)).unwrap();
    let err = Manifest::recover(&OsFileSystem, dir.path(), &no_extension).unwrap_err();
    assert!(err.is_corruption(), "{err}");
}
