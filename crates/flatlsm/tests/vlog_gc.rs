//! Value-log GC by redirect tables (docs/design-decisions.md, "Value-log garbage collection"):
//! reads through a redirect, snapshots from before the GC, the lazy fix-up by flush and
//! compaction that lets the redirect go, and refusal of a damaged or missing redirect table.

mod common;

use flatlsm::inspect::{check_database, dump_file, DumpFormat};
use flatlsm::{Db, Error, Options, ReadOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// One flush thread (one value log per flush), no background threads, GC at 30% garbage, an
/// L1 that never fills (compactions only when the test asks), no quiet cleanup; PM on msync in
/// `dir`. No timer
/// commits either: the timer thread briefly holds the current version, and a purge running
/// then keeps the files that version names (deleted by the next purge).
fn options(dir: &Path) -> Options {
    let mut o = common::msync(dir, 1);
    o.background_work = false;
    o.pm_persist_interval_ms = 3_600_000;
    o.vlog_gc_garbage_ratio = 0.3;
    o.l1_capacity = 1 << 40;
    o.l1_merge_trigger = 1; // each flush's run merges into L1, which drops the overwritten values
    o.target_file_size = 8 << 10;
    // Settling would rewrite the files naming a collected log (the redirects these tests read
    // through) as a quiet database does.
    o.quiet_cleanup = false;
    o
}

fn key(i: u32) -> Vec<u8> {
    format!("k{i:04}").into_bytes()
}

fn value(round: u8, i: u32) -> Vec<u8> {
    let mut v = format!("{}-{i:04}-", round as char).into_bytes();
    v.resize(300, round);
    v
}

fn put_round(db: &Db, model: &mut Model, round: u8, keys: std::ops::Range<u32>) {
    for i in keys {
        db.put(key(i), value(round, i)).unwrap();
        model.insert(key(i), value(round, i));
    }
}

fn read_all(db: &Db, opts: &ReadOptions<'_>) -> Model {
    db.iter_opt(opts).unwrap().map(|r| r.unwrap()).collect()
}

fn check(db: &Db, want: &Model) {
    assert!(&read_all(db, &ReadOptions::default()) == want, "iterator");
    for (k, v) in want {
        let got = db.get(k).unwrap();
        assert_eq!(got.as_ref(), Some(v), "{}", String::from_utf8_lossy(k));
    }
}

fn files_with(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    v.sort();
    v
}

/// Rounds `a` over keys 0..100 and `b` over 0..60, each flushed: a's log is 60% garbage.
/// Returns the model and the number of a's log (the GC's victim).
fn log_with_garbage(db: &Db) -> (Model, u64) {
    let mut m = Model::new();
    put_round(db, &mut m, b'a', 0..100);
    db.flush().unwrap();
    let victim = db.stats().vlogs.iter().map(|v| v.number).max().unwrap();
    put_round(db, &mut m, b'b', 0..60);
    db.flush().unwrap();
    (m, victim)
}

fn vlog_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("{n:06}.vlog"))
}

#[test]
fn reads_through_a_redirect_return_the_right_values_also_from_a_snapshot_taken_before_the_gc() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(dir.path())).unwrap();
    let (before, victim) = log_with_garbage(&db);
    let snapshot = db.snapshot();
    let at_snapshot = ReadOptions {
        snapshot: Some(&snapshot),
        ..ReadOptions::default()
    };
    let mut now = before.clone();
    put_round(&db, &mut now, b'c', 60..80); // in the PMTable: the snapshot reads a's values
    db.wait_for_background_work().unwrap();
    let st = db.stats();
    assert_eq!((st.vlog_gcs, st.vlog_redirects), (1, 1), "{st}");
    assert!(
        !vlog_path(dir.path(), victim).exists(),
        "the victim's data file is deleted"
    );
    assert!(read_all(&db, &at_snapshot) == before);
    check(&db, &now);
    db.flush().unwrap(); // keeps a's versions for the snapshot, rewritten to the new log
    assert!(read_all(&db, &at_snapshot) == before);
    for i in 60..100 {
        let got = db.get_opt(key(i), &at_snapshot).unwrap();
        assert_eq!(got, Some(value(b'a', i)));
    }
    check(&db, &now);
    drop(snapshot);
    drop(db);
    let db = Db::open(dir.path(), options(dir.path())).unwrap();
    check(&db, &now);
    let report = check_database(dir.path(), &dir.path().join("pmdir")).unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
}

#[test]
fn compaction_drops_the_redirect_once_no_sst_names_the_victim_and_its_files_are_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(dir.path())).unwrap();
    let (mut want, victim) = log_with_garbage(&db);
    db.compact_range(None, None).unwrap(); // every SST in L2, pointing into the victim
    db.wait_for_background_work().unwrap();
    assert_eq!(db.stats().vlog_redirects, 1);
    let table = files_with(dir.path(), ".vredir");
    assert_eq!(table.len(), 1);
    assert!(!vlog_path(dir.path(), victim).exists());
    // An L1 file spanning every key: its compaction into L2 rewrites every L2 file.
    for k in [&b"k"[..], b"l"] {
        db.put(k, b"end").unwrap();
        want.insert(k.to_vec(), b"end".to_vec());
    }
    db.compact_range(None, None).unwrap();
    assert_eq!(
        db.stats().vlog_redirects,
        1,
        "dropped at the next background pass"
    );
    db.wait_for_background_work().unwrap();
    assert_eq!(db.stats().vlog_redirects, 0);
    assert!(
        !table[0].exists(),
        "the redirect table is deleted with the redirect"
    );
    check(&db, &want);
    drop(db);
    let db = Db::open(dir.path(), options(dir.path())).unwrap();
    check(&db, &want);
    let manifest = files_with(dir.path(), "")
        .into_iter()
        .find(|p| p.to_string_lossy().contains("MANIFEST-"))
        .unwrap();
    let mut text = Vec::new();
    dump_file(&manifest, DumpFormat::Text, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(
        !text.contains("redirect"),
        "the snapshot names no redirect: {text}"
    );
}

/// Runs a GC, closes the database and returns its redirect table's path and bytes.
fn closed_after_gc(dir: &Path) -> (PathBuf, Vec<u8>, Model) {
    let db = Db::open(dir, options(dir)).unwrap();
    let (want, _) = log_with_garbage(&db);
    db.wait_for_background_work().unwrap();
    assert_eq!(db.stats().vlog_redirects, 1);
    drop(db);
    let table = files_with(dir, ".vredir").remove(0);
    let bytes = std::fs::read(&table).unwrap();
    (table, bytes, want)
}

fn refused_naming(dir: &Path, file: &Path) -> String {
    let err = Db::open(dir, options(dir)).err().expect("open must refuse");
    match &err {
        Error::Corruption { file: f, .. } => assert_eq!(f, file, "{err}"),
        other => panic!("expected corruption naming {}, got {other}", file.display()),
    }
    err.to_string()
}

#[test]
fn damaged_or_missing_redirect_file_is_refused_at_open_with_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (table, good, want) = closed_after_gc(dir.path());
    let mut flipped = good.clone();
    flipped[45] ^= 0x40;
    std::fs::write(&table, &flipped).unwrap();
    let e = refused_naming(dir.path(), &table);
    assert!(e.contains("checksum"), "{e}");
    let report = check_database(dir.path(), &dir.path().join("pmdir")).unwrap();
    assert!(
        report.problems.iter().any(|p| p.file == table),
        "{:?}",
        report.problems
    );
    std::fs::write(&table, &good[..good.len() - 24]).unwrap();
    let e = refused_naming(dir.path(), &table);
    assert!(e.contains("records"), "{e}");
    std::fs::remove_file(&table).unwrap();
    let e = refused_naming(dir.path(), &table);
    assert!(e.contains("missing"), "{e}");
    std::fs::write(&table, &good).unwrap();
    let db = Db::open(dir.path(), options(dir.path())).unwrap();
    check(&db, &want);
}

#[test]
fn dump_prints_a_redirect_table_and_the_manifest_edit_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let (table, _, _) = closed_after_gc(dir.path());
    let mut out = Vec::new();
    let n = dump_file(&table, DumpFormat::Text, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(n, 40, "the victim's 40 live records: {text}");
    assert!(
        text.contains("entries") && text.contains("record_len 3"),
        "{text}"
    );
    let manifest = files_with(dir.path(), "")
        .into_iter()
        .find(|p| p.to_string_lossy().contains("MANIFEST-"))
        .unwrap();
    let mut out = Vec::new();
    dump_file(&manifest, DumpFormat::Text, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("redirect value log"), "{text}");
}
