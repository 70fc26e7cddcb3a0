//! Regression tests for issue 9 (items 2, 3 and 9): open and `check` must refuse a database
//! whose manifest lost records, whose PM Logs went missing or whose identity files were deleted
//! or damaged, naming the file and modifying nothing; a torn final manifest record after a
//! real crash and the formats written before these checks must keep opening.

mod common;

use flatlsm::inspect::check_database;
use flatlsm::{Db, Error, Options, PmModeOption, WriteOptions};
use flatlsm_core::fs::{CrashFs, FaultKind, FaultPlan, FsCall, OsFileSystem};
use flatlsm_core::pm::simulated::SimulatedPmDevice;
use flatlsm_core::version::{read_manifest_records, Manifest, ManifestState};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

fn opts(db: &Path) -> Options {
    let mut o = common::tiny_options(1);
    o.pm_path = Some(db.join("pm"));
    o.pm_mode = PmModeOption::Msync;
    o.background_work = false;
    o.max_write_buffer_number = 8;
    o
}

fn key(i: usize) -> Vec<u8> {
    format!("key{i:04}").into_bytes()
}

/// Values of rounds 2 and later are larger, so round 2 fills several PM Logs.
fn value(i: usize, round: u8) -> Vec<u8> {
    vec![round; 150 + i % 300 + 300 * usize::from(round >= 2)]
}

/// A closed database: round 0 and round 1 (overwrites and deletes) flushed to L1 and value logs,
/// round 2 (overwrites of every other key) unflushed in several PM Logs.
fn build(db: &Path) {
    let d = Db::open(db, opts(db)).unwrap();
    let w = WriteOptions::default();
    for i in 0..300 {
        d.put_opt(key(i), value(i, 0), &w).unwrap();
    }
    d.flush().unwrap();
    for i in (0..300).step_by(3) {
        d.put_opt(key(i), value(i, 1), &w).unwrap();
        d.delete_opt(key(i + 1), &w).unwrap();
    }
    d.flush().unwrap();
    for i in (0..300).step_by(2) {
        d.put_opt(key(i), value(i, 2), &w).unwrap();
    }
    d.close().unwrap();
}

/// Reopens the database and flushes everything, so the manifest's last record is a flush.
fn flush_and_close(db: &Path) {
    let d = Db::open(db, opts(db)).unwrap();
    d.flush().unwrap();
    d.close().unwrap();
}

/// Every file below `dir` (but the LOCK file) with its contents: to show nothing changed.
fn contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(contents(&p));
        } else if p.file_name().is_some_and(|n| n != "LOCK") {
            out.insert(p.clone(), std::fs::read(&p).unwrap());
        }
    }
    out
}

fn files_named(dir: &Path, pred: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&pred))
        .collect();
    v.sort();
    v
}

fn manifest_of(db: &Path) -> PathBuf {
    files_named(db, |n| n.starts_with("MANIFEST-")).remove(0)
}

fn truncate(path: &Path, len: usize) {
    let bytes = std::fs::read(path).unwrap();
    std::fs::write(path, &bytes[..len]).unwrap();
}

/// Opens `db` with the test options, expecting a refusal: returns the file the `Corruption`
/// names and the message, after checking that the refused open modified no file.
fn refused_open(db: &Path) -> (PathBuf, String) {
    let before = contents(db);
    let err = Db::open(db, opts(db)).err().expect("open must be refused");
    let msg = err.to_string();
    let Error::Corruption { file, .. } = err else {
        panic!("expected corruption, got: {msg}");
    };
    assert!(
        contents(db) == before,
        "a refused open modified files: {msg}"
    );
    (file, msg)
}

/// `check` must report a problem naming `file`.
fn check_names(db: &Path, file: &Path) {
    let r = check_database(db, &db.join("pm")).unwrap();
    assert!(
        r.problems.iter().any(|p| p.file == file),
        "check does not report {}: {:?}",
        file.display(),
        r.problems
    );
}

fn get(d: &Db, i: usize) -> Option<Vec<u8>> {
    d.get(key(i)).unwrap()
}

#[test]
fn open_refuses_manifest_cut_by_one_byte_and_deletes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    build(&db);
    flush_and_close(&db);
    let manifest = manifest_of(&db);
    truncate(
        &manifest,
        std::fs::metadata(&manifest).unwrap().len() as usize - 1,
    );
    let (file, msg) = refused_open(&db);
    assert!(!file.exists(), "names a missing file: {msg}");
    assert!(msg.contains("cut"), "says the manifest was cut: {msg}");
    check_names(&db, &file);
}

#[test]
fn open_refuses_manifest_cut_to_half_and_deletes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    build(&db);
    flush_and_close(&db);
    let manifest = manifest_of(&db);
    truncate(
        &manifest,
        std::fs::metadata(&manifest).unwrap().len() as usize / 2,
    );
    let (file, msg) = refused_open(&db);
    check_names(&db, &file);
    assert!(
        !file.exists() || file == manifest,
        "names a missing file or the manifest: {msg}"
    );
}

#[test]
fn open_refuses_truncated_sst_named_by_the_manifest() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    build(&db);
    let sst = files_named(&db, |n| n.ends_with(".sst")).remove(0);
    truncate(&sst, std::fs::metadata(&sst).unwrap().len() as usize - 1);
    let (file, msg) = refused_open(&db);
    assert_eq!(file, sst, "{msg}");
    check_names(&db, &sst);
}

/// A crash tore the flush's manifest record after its outputs were written (the append was cut
/// half way): the flushed PM Log is still there, so the state without the record is
/// consistent: open recovers every write and removes the outputs as orphans.
#[test]
fn open_accepts_torn_final_manifest_record_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let manifest_append = flush_calls(dir.path())
        .into_iter()
        .rev()
        .find(|(_, kind)| *kind == FsCall::Append)
        .expect("the flush appends to the manifest")
        .0;
    let dir = tempfile::tempdir().unwrap();
    let (device, fs) = (SimulatedPmDevice::new(), CrashFs::new());
    let o = crash_opts(&device, &fs);
    let d = Db::open(dir.path(), o.clone()).unwrap();
    write_keys(&d);
    fs.set_fault_plan(FaultPlan::At {
        call: fs.call_count() + manifest_append,
        kind: FaultKind::ShortWrite,
    });
    assert!(
        d.flush().is_err(),
        "the torn manifest append fails the flush"
    );
    drop(d);
    fs.set_fault_plan(FaultPlan::Never);
    let manifest = Manifest::load(&*fs, dir.path(), &flatlsm::tool_support::version_extension)
        .unwrap()
        .path;
    let bytes = fs.live_contents(&manifest).unwrap();
    let (_, torn) = read_manifest_records(&bytes, &manifest).unwrap();
    assert!(torn.is_some(), "the manifest ends in a torn record");
    let d = Db::open(dir.path(), o).unwrap();
    for i in 0..200 {
        assert_eq!(get(&d, i), Some(value(i, 0)), "key {i}");
    }
    assert_eq!(
        d.stats().levels[1].files,
        0,
        "the torn flush's outputs are orphans"
    );
}

fn crash_opts(device: &Arc<SimulatedPmDevice>, fs: &Arc<CrashFs>) -> Options {
    let mut o = common::tiny_options(1);
    o.pm_device = Some(device.clone());
    o.file_system = Some(fs.clone());
    o.background_work = false;
    o
}

fn write_keys(d: &Db) {
    for i in 0..200 {
        d.put_opt(
            key(i),
            value(i, 0),
            &WriteOptions {
                sync: true,
                ..WriteOptions::default()
            },
        )
        .unwrap();
    }
}

/// The file-system calls of a flush (numbered from its start) in a run without faults.
fn flush_calls(dir: &Path) -> Vec<(u64, FsCall)> {
    let (device, fs) = (SimulatedPmDevice::new(), CrashFs::new());
    let d = Db::open(dir, crash_opts(&device, &fs)).unwrap();
    write_keys(&d);
    let start = fs.call_count();
    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = calls.clone();
    fs.set_call_hook(Some(Box::new(move |n, kind| {
        seen.lock().unwrap().push((n - start, kind))
    })));
    d.flush().unwrap();
    fs.set_call_hook(None);
    let calls = calls.lock().unwrap().clone();
    calls
}

#[test]
fn open_refuses_missing_pm_log() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    build(&db);
    let logs = files_named(&db.join("pm"), |n| n.ends_with(".pmlog"));
    assert!(logs.len() >= 2, "the fixture has several unflushed PM Logs");
    std::fs::remove_file(&logs[0]).unwrap();
    let (file, msg) = refused_open(&db);
    assert_eq!(file, logs[0], "{msg}");
    assert!(
        msg.contains("allow_missing_pm"),
        "says how to accept: {msg}"
    );
    check_names(&db, &logs[0]);
    let mut o = opts(&db);
    o.allow_missing_pm = true;
    let d = Db::open(&db, o).expect("allow_missing_pm accepts the loss");
    assert_eq!(get(&d, 298), Some(value(298, 2)), "a key of the other logs");
}

/// The manifest lost the record naming a PM Log that holds writes, below the next file number
/// it records (so not a record a crash left in flight, `db/buffer_records.rs`): refused, as
/// the log's data would otherwise be kept or dropped on a guess.
#[test]
fn open_refuses_pm_log_the_manifest_does_not_record() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    build(&db);
    let state = Manifest::recover(
        &OsFileSystem,
        &db,
        &flatlsm::tool_support::version_extension,
    )
    .unwrap();
    let mut lost = state.clone();
    let logs = lost.pm_logs.as_mut().unwrap();
    let newest = *logs.last().expect("the fixture has unflushed PM Logs");
    logs.remove(&newest);
    assert!(newest < lost.next_file_number);
    let number = state.next_file_number + 100;
    Manifest::create(Arc::new(OsFileSystem), &db, number, &lost).unwrap();
    let (file, msg) = refused_open(&db);
    assert!(
        file.extension().is_some_and(|e| e == "pmlog") && file.exists(),
        "{msg}"
    );
    assert!(msg.contains("does not record"), "{msg}");
    assert!(file.ends_with(format!("{newest:06}.pmlog")), "{msg}");
    check_names(&db, &file);
}

/// A switch queues its PM Log's record (`db/buffer_records.rs`); a crash before the next
/// manifest append leaves logs the manifest does not name, numbered at or above its next file
/// number. Open keeps their writes. (The manifest of a database closed cleanly, put back
/// after more writes went into new PM Logs, looks the same and opens with every write.)
#[test]
fn pm_logs_whose_record_was_in_flight_keep_their_writes() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    build(&db);
    let old = (manifest_of(&db), std::fs::read(manifest_of(&db)).unwrap());
    let current = std::fs::read(db.join("CURRENT")).unwrap();
    // No flush due at close (it would move the new PM Logs' data into SSTs).
    let mut o = opts(&db);
    o.flush_immutable_num = o.max_write_buffer_number - 1;
    let d = Db::open(&db, o.clone()).unwrap();
    for i in 0..300 {
        d.put(key(i), value(i, 3)).unwrap();
    }
    d.close().unwrap();
    std::fs::remove_file(manifest_of(&db)).unwrap();
    std::fs::write(&old.0, &old.1).unwrap();
    std::fs::write(db.join("CURRENT"), current).unwrap();
    let d = Db::open(&db, o).expect("the logs in flight are kept");
    for i in 0..300 {
        assert_eq!(get(&d, i), Some(value(i, 3)), "key {i}");
    }
    d.close().unwrap();
}

#[test]
fn check_and_open_refuse_manifest_truncated_to_zero_bytes() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    build(&db);
    let manifest = manifest_of(&db);
    truncate(&manifest, 0);
    let (file, msg) = refused_open(&db);
    assert_eq!(file, manifest, "{msg}");
    check_names(&db, &manifest);
}

#[test]
fn check_and_open_refuse_deleted_identity_naming_it() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    build(&db);
    let identity = db.join("IDENTITY");
    std::fs::remove_file(&identity).unwrap();
    let (file, msg) = refused_open(&db);
    assert_eq!(file, identity, "{msg}");
    assert!(msg.contains("missing"), "{msg}");
    assert!(
        !msg.contains("belongs to another"),
        "does not blame the PM directory: {msg}"
    );
    check_names(&db, &identity);
}

#[test]
fn flipped_bit_in_identity_is_damage_not_another_database() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    build(&db);
    let identity = db.join("pm").join("IDENTITY");
    let mut bytes = std::fs::read(&identity).unwrap();
    bytes[15] ^= 0x01;
    std::fs::write(&identity, bytes).unwrap();
    let (file, msg) = refused_open(&db);
    assert_eq!(file, identity, "{msg}");
    check_names(&db, &identity);
}

/// Identity files of the first format (no checksum) are read, and rewritten with one.
#[test]
fn identity_file_without_checksum_is_read_and_rewritten() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    build(&db);
    let id = "0123456789abcdef0123456789abcdef";
    for dir in [db.clone(), db.join("pm")] {
        let text = format!("flatlsm-id {id}\npm-path {}\n", db.join("pm").display());
        std::fs::write(dir.join("IDENTITY"), text).unwrap();
    }
    // The manifest records the identity now: give it the same one by rewriting it as an
    // older manifest (no identity, no PM Log records), which must open too.
    rewrite_as_old_manifest(&db);
    assert!(check_database(&db, &db.join("pm")).unwrap().is_ok());
    let d = Db::open(&db, opts(&db)).unwrap();
    assert_eq!(get(&d, 298), Some(value(298, 2)));
    d.close().unwrap();
    let text = std::fs::read_to_string(db.join("IDENTITY")).unwrap();
    assert!(text.contains(id) && text.contains("crc32c "), "{text}");
}

/// Manifests written before PM Logs were recorded open (without the PM checks) and are
/// replaced by a snapshot that records them.
#[test]
fn manifest_without_pm_log_records_opens_and_is_upgraded() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    build(&db);
    rewrite_as_old_manifest(&db);
    let d = Db::open(&db, opts(&db)).unwrap();
    assert_eq!(get(&d, 298), Some(value(298, 2)));
    assert_eq!(get(&d, 1), None);
    d.close().unwrap();
    let state = Manifest::recover(
        &OsFileSystem,
        &db,
        &flatlsm::tool_support::version_extension,
    )
    .unwrap();
    assert!(state.pm_logs.is_some_and(|l| !l.is_empty()));
    assert!(state.identity.is_some());
}

/// Replaces the manifest by one holding the same state without tags 8–10, as an older build
/// wrote it.
fn rewrite_as_old_manifest(db: &Path) {
    let state =
        Manifest::recover(&OsFileSystem, db, &flatlsm::tool_support::version_extension).unwrap();
    let old = ManifestState {
        pm_logs: None,
        identity: None,
        ..state.clone()
    };
    let number = state.next_file_number + 100;
    Manifest::create(Arc::new(OsFileSystem), db, number, &old).unwrap();
}
