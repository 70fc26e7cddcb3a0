//! `inspect::check_database` finds planted damage in every file kind and names the file and
//! offset; `inspect::dump_file` prints every kind of file record by record.

mod common;

use flatlsm::inspect::{check_database, dump_file, DumpFormat, FileKind};
use flatlsm::{Db, WriteOptions};
use std::path::{Path, PathBuf};

/// A database in `dir/db` with its PM in `dir/db/pm`: SSTs in L1 and L2, value logs, a
/// manifest, and writes still in PM Logs.
fn build_db(dir: &Path) -> PathBuf {
    let db = dir.join("db");
    let opts = {
        let mut o = common::tiny_options(2);
        o.pm_mode = flatlsm::PmModeOption::Msync;
        o
    };
    let d = Db::open(&db, opts).unwrap();
    let w = WriteOptions::default();
    for i in 0..3000u32 {
        let value = if i % 3 == 0 {
            vec![b'L'; 300]
        } else {
            format!("small-{i}").into_bytes()
        };
        d.put_opt(format!("key{i:05}").as_bytes(), &value, &w)
            .unwrap();
    }
    d.compact_range(None, None).unwrap();
    for i in 0..200u32 {
        d.put_opt(format!("late{i:04}").as_bytes(), b"in-pm", &w)
            .unwrap();
    }
    d.close().unwrap();
    db
}

fn files_of(dir: &Path, pred: impl Fn(FileKind) -> bool) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| FileKind::of(p).is_some_and(&pred))
        .collect();
    v.sort();
    v
}

fn flip_byte(path: &Path, offset: u64) {
    let mut data = std::fs::read(path).unwrap();
    data[offset as usize] ^= 0x40;
    std::fs::write(path, data).unwrap();
}

#[test]
fn check_passes_on_a_healthy_database_with_every_file_kind() {
    let t = tempfile::tempdir().unwrap();
    let db = build_db(t.path());
    let r = check_database(&db, &db.join("pm")).unwrap();
    assert!(r.is_ok(), "{:?}", r.problems);
    assert!(!files_of(&db, |k| matches!(k, FileKind::Sst(_))).is_empty());
    assert!(!files_of(&db, |k| matches!(k, FileKind::Vlog(_))).is_empty());
    assert!(!files_of(&db.join("pm"), |k| matches!(k, FileKind::PmLog(_))).is_empty());
    assert!(r.files_checked >= 4, "{r:?}");
    assert!(r.records_checked > 3000, "{r:?}");
}

#[test]
fn check_reports_damage_in_each_file_kind_with_file_and_offset() {
    let t = tempfile::tempdir().unwrap();
    let db = build_db(t.path());
    let sst = files_of(&db, |k| matches!(k, FileKind::Sst(_)))[0].clone();
    let vlog = files_of(&db, |k| matches!(k, FileKind::Vlog(_)))[0].clone();
    let pmlog = files_of(&db.join("pm"), |k| matches!(k, FileKind::PmLog(_)))[0].clone();
    flip_byte(&sst, 20);
    flip_byte(&vlog, 100);
    flip_byte(&pmlog, 64 + 30);
    let r = check_database(&db, &db.join("pm")).unwrap();
    for damaged in [&sst, &vlog, &pmlog] {
        let p = r.problems.iter().find(|p| &p.file == damaged);
        let p =
            p.unwrap_or_else(|| panic!("no problem reported for {damaged:?}: {:?}", r.problems));
        assert!(p.offset.is_some(), "{p}");
        assert!(p.to_string().contains("offset"), "{p}");
    }
}

#[test]
fn check_reports_a_missing_sst_named_by_the_manifest() {
    let t = tempfile::tempdir().unwrap();
    let db = build_db(t.path());
    let sst = files_of(&db, |k| matches!(k, FileKind::Sst(_)))[0].clone();
    std::fs::remove_file(&sst).unwrap();
    let r = check_database(&db, &db.join("pm")).unwrap();
    assert!(
        r.problems
            .iter()
            .any(|p| p.file == sst && p.detail.contains("missing")),
        "{:?}",
        r.problems
    );
}

#[test]
fn dump_prints_every_file_kind_record_by_record() {
    let t = tempfile::tempdir().unwrap();
    let db = build_db(t.path());
    let mut files = files_of(&db, |_| true);
    files.extend(files_of(&db.join("pm"), |_| true));
    let mut kinds = std::collections::BTreeSet::new();
    for f in files {
        let mut out = Vec::new();
        let n = dump_file(&f, DumpFormat::Text, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(n > 0, "{f:?} printed nothing");
        assert!(text.lines().count() as u64 >= n, "{text}");
        kinds.insert(
            format!("{:?}", FileKind::of(&f).unwrap())
                .split('(')
                .next()
                .unwrap()
                .to_string(),
        );
    }
    // SST, value log, manifest, CURRENT, OPTIONS and PM Log.
    assert_eq!(kinds.len(), 6, "dumped kinds: {kinds:?}");
    let sst = files_of(&db, |k| matches!(k, FileKind::Sst(_)))[0].clone();
    let mut out = Vec::new();
    dump_file(&sst, DumpFormat::Hex, &mut out).unwrap();
    assert!(
        String::from_utf8(out).unwrap().contains("6b6579"),
        "hex of \"key\""
    );
}

#[test]
fn dump_of_a_damaged_file_names_file_and_offset() {
    let t = tempfile::tempdir().unwrap();
    let db = build_db(t.path());
    let pmlog = files_of(&db.join("pm"), |k| matches!(k, FileKind::PmLog(_)))[0].clone();
    flip_byte(&pmlog, 64 + 30);
    let err = dump_file(&pmlog, DumpFormat::Text, &mut Vec::new()).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    assert!(
        err.to_string().contains(&pmlog.display().to_string()),
        "{err}"
    );
    let other = t.path().join("notes.txt");
    std::fs::write(&other, b"x").unwrap();
    let err = dump_file(&other, DumpFormat::Text, &mut Vec::new()).unwrap_err();
    assert!(err.to_string().contains("not a FlatLSM file name"), "{err}");
}
