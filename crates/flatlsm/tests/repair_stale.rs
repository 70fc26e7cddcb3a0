//! `flatlsm::repair` with a stale manifest: CURRENT names an older copy of the manifest, taken
//! before flushes and compactions that the database went on to run. Every SST those jobs wrote
//! is unknown to the old manifest and the write buffers it records are gone. Repair must place
//! every such SST (as without a manifest) instead of leaving it for open to delete, and report
//! the missing files (not complete), for every profile.
//!
//! Regression: repair trusted any readable manifest as current, left the SSTs it does not record
//! "for the next open to remove", and reported success: every write after the old manifest was
//! lost (the `flatlsm` profile lost all 2000 keys written after it).

mod common;

use flatlsm::{repair, Db, Options, Profile};
use flatlsm_core::fs::OsFileSystem;
use flatlsm_core::version::Manifest;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// The manifest files and CURRENT of `dir`: (name, contents).
fn manifest_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n == "CURRENT" || n.starts_with("MANIFEST-"))
        .map(|n| (n.clone(), std::fs::read(dir.join(&n)).unwrap()))
        .collect();
    v.sort();
    v
}

/// Puts the saved manifest files back in place of the current ones (CURRENT then names the old
/// manifest, as after restoring a backup of those two files).
fn restore_manifest_files(dir: &Path, saved: &[(String, Vec<u8>)]) {
    for (name, _) in manifest_files(dir) {
        std::fs::remove_file(dir.join(name)).unwrap();
    }
    for (name, bytes) in saved {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

/// A database whose manifest is an old copy: taken after the first 300 writes, before 4300
/// more that went through flushes and compactions into SSTs it does not record.
fn database_with_a_stale_manifest(dir: &Path, opts: &Options) -> Model {
    let mut model = Model::new();
    let db = Db::open(dir, opts.clone()).unwrap();
    common::write_rounds(&db, &mut model, "a", 300, 0);
    db.close().unwrap();
    let saved = manifest_files(dir);
    let db = Db::open(dir, opts.clone()).unwrap();
    common::write_rounds(&db, &mut model, "k", 2000, 0);
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    common::write_rounds(&db, &mut model, "k", 2000, 1);
    db.flush().unwrap();
    common::write_rounds(&db, &mut model, "k", 300, 2); // stays in write buffers
    db.close().unwrap();
    restore_manifest_files(dir, &saved);
    model
}

/// Every key of `model` reads its value, a scan returns exactly `model`, and so again after a
/// writable open (whose orphan purge must find nothing the repaired manifest needs).
fn assert_contents(dir: &Path, opts: &Options, model: &Model, what: &str) {
    for round in 0..2 {
        let db = Db::open(dir, opts.clone()).unwrap_or_else(|e| panic!("{what}: open: {e}"));
        let wrong = model
            .iter()
            .filter(|(k, v)| db.get(k).unwrap().as_ref() != Some(*v))
            .count();
        assert_eq!(wrong, 0, "{what}: wrong or missing values (open {round})");
        let scanned: Model = db.iter().unwrap().map(|r| r.unwrap()).collect();
        assert_eq!(scanned.len(), model.len(), "{what}: scan (open {round})");
        db.close().unwrap();
    }
}

fn a_stale_manifest_is_repaired_without_losing_a_write(profile: Profile) {
    let dir = tempfile::tempdir().unwrap();
    let opts = common::for_profile(dir.path(), profile);
    let model = database_with_a_stale_manifest(dir.path(), &opts);
    let report = repair(dir.path(), opts.clone()).unwrap();
    let what = format!("{profile}: {report}");
    assert!(!report.stale_manifest.is_empty(), "{what}");
    assert!(!report.files_missing.is_empty(), "{what}");
    assert!(
        !report.is_complete(),
        "the missing files are not accounted for: {what}"
    );
    assert!(report.files_lost.is_empty(), "{what}");
    let left_out = report.notes.iter().any(|n| n.contains("left out"));
    assert!(!left_out, "{what}");
    assert_contents(dir.path(), &opts, &model, &what);
}

#[test]
fn a_flatlsm_repair_with_a_stale_manifest_places_every_unrecorded_sst() {
    a_stale_manifest_is_repaired_without_losing_a_write(Profile::FlatLsm);
}

#[test]
fn a_leveled_repair_with_a_stale_manifest_places_every_unrecorded_sst() {
    a_stale_manifest_is_repaired_without_losing_a_write(Profile::Leveled);
}

#[test]
fn a_novelsm_repair_with_a_stale_manifest_places_every_unrecorded_sst() {
    a_stale_manifest_is_repaired_without_losing_a_write(Profile::NoveLsm);
}

#[test]
fn an_slmdb_repair_with_a_stale_manifest_places_every_unrecorded_sst() {
    a_stale_manifest_is_repaired_without_losing_a_write(Profile::SlmDb);
}

#[test]
fn a_matrixkv_repair_with_a_stale_manifest_places_every_unrecorded_sst() {
    a_stale_manifest_is_repaired_without_losing_a_write(Profile::MatrixKv);
}

/// A write buffer holding writes that the manifest does not record, numbered below the next
/// file number it records, means the manifest lost records (a buffer's record comes before or
/// with the first edit recording a higher next file number, `db/buffer_records.rs`), even
/// though every file it records is present.
#[test]
fn a_write_buffer_whose_record_the_manifest_lost_marks_it_stale() {
    let dir = tempfile::tempdir().unwrap();
    let opts = common::for_profile(dir.path(), Profile::FlatLsm);
    let mut model = Model::new();
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    common::write_rounds(&db, &mut model, "a", 100, 0);
    db.close().unwrap();
    let fs = OsFileSystem;
    let state = Manifest::recover(&fs, dir.path(), &flatlsm::tool_support::version_extension);
    let state = state.unwrap();
    let mut lost = state.clone();
    let logs = lost.pm_logs.as_mut().unwrap();
    let newest = *logs.last().expect("an unflushed write buffer");
    logs.remove(&newest);
    let number = state.next_file_number + 100;
    Manifest::create(Arc::new(OsFileSystem), dir.path(), number, &lost).unwrap();
    let report = repair(dir.path(), opts.clone()).unwrap();
    let unrecorded = report
        .stale_manifest
        .iter()
        .any(|s| s.contains("not record"));
    assert!(unrecorded, "{report}");
    assert_contents(dir.path(), &opts, &model, &report.to_string());
}
