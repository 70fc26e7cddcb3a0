//! The `slmdb` profile through the public API: flushes index every key in the PM B+-tree, gets
//! read one block through it (absent keys without a disk read), snapshots fall back to the SSTs,
//! and the tree survives reopens.

mod common;

use flatlsm::{Db, ReadOptions, WriteOptions};
use std::collections::BTreeMap;

fn value(i: u32, round: u32) -> Vec<u8> {
    format!("v{round}-{i}-{}", "s".repeat((i * 13 % 200) as usize)).into_bytes()
}

/// Overwrites and deletes across many flushes: every get answers the model, before and after a
/// reopen, and a scan lists the model.
#[test]
fn flushed_keys_are_found_through_the_index_across_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = common::slmdb();
    opts.pmtable_size = 64 << 10;
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let w = WriteOptions::default();
    let mut model = BTreeMap::new();
    for round in 0..6u32 {
        for i in (0..2000u32).map(|i| (i * 7919) % 2000) {
            let key = format!("key{i:06}").into_bytes();
            if (i + round) % 7 == 0 {
                db.delete_opt(&key, &w).unwrap();
                model.remove(&key);
            } else {
                db.put_opt(&key, value(i, round), &w).unwrap();
                model.insert(key, value(i, round));
            }
        }
    }
    db.flush().unwrap();
    db.wait_for_background_work().unwrap();
    let stats = db.stats();
    assert!(stats.flushes >= 3, "{stats:?}");
    // Overwrites leave older SSTs with few live keys: selective compaction merged them.
    assert!(
        stats.compactions > 0,
        "no selective compaction ran: {stats:?}"
    );
    let check = |db: &Db| {
        for i in 0..2100u32 {
            let key = format!("key{i:06}").into_bytes();
            let got = db.get(&key).unwrap();
            assert_eq!(got.as_ref(), model.get(&key), "key{i:06}");
        }
        let scanned: Vec<_> = db.iter().unwrap().map(|r| r.unwrap()).collect();
        let want: Vec<_> = model.clone().into_iter().collect();
        assert_eq!(scanned, want);
    };
    check(&db);
    drop(db);
    let db = Db::open(dir.path(), opts).unwrap();
    check(&db);
}

/// A snapshot taken before an overwrite still reads the old value after both are flushed: the
/// index points at the newest block, so the read falls back to the older SST.
#[test]
fn a_snapshot_reads_an_overwritten_value_from_an_older_sst() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = common::slmdb();
    opts.background_work = false;
    let db = Db::open(dir.path(), opts).unwrap();
    let w = WriteOptions::default();
    db.put_opt(b"k", b"old", &w).unwrap();
    db.flush().unwrap();
    let snap = db.snapshot();
    db.put_opt(b"k", b"new", &w).unwrap();
    db.flush().unwrap();
    let at_snap = ReadOptions {
        snapshot: Some(&snap),
        ..ReadOptions::default()
    };
    assert_eq!(
        db.get_opt(b"k", &at_snap).unwrap().as_deref(),
        Some(&b"old"[..])
    );
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
    assert_eq!(db.get(b"nope").unwrap(), None);
}

/// The index is part of the database: once SSTs exist, a missing B+-tree is refused at open.
#[test]
fn a_missing_index_is_refused_once_ssts_exist() {
    let dir = tempfile::tempdir().unwrap();
    let opts = common::slmdb();
    let device = opts.pm_device.clone().unwrap();
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    db.put(b"a", b"1").unwrap();
    db.flush().unwrap();
    drop(db);
    device.remove_region("index.pmbt").unwrap();
    let err = Db::open(dir.path(), opts).err().expect("refused");
    assert!(err.to_string().contains("missing: the B+-tree"), "{err}");
}

/// Tiny `slmdb` options compacting as soon as one file is a candidate.
fn eager_compaction() -> flatlsm::Options {
    let mut opts = common::slmdb();
    opts.slmdb.compaction_trigger = 0;
    opts.slmdb.slowdown_candidates = 2;
    opts.slmdb.stop_candidates = 4;
    opts
}

/// Writes `{prefix}000` .. `{prefix}099`, each with value `tag`.
fn put_hundred(db: &Db, prefix: &str, tag: &[u8]) {
    for i in 0..100u32 {
        let key = format!("{prefix}{i:03}");
        db.put(key.as_bytes(), tag).unwrap();
    }
}

/// Regression: a selective compaction dropped the tombstone of a deleted key whose older
/// version lay in a file outside the group, and scans (which merge the level-0 files) showed
/// the key again. Then, once the tombstone was kept, its output was a candidate again at once
/// and compactions never ended. Here file B (a tombstone and fillers, its fillers overwritten
/// later) is the only candidate; file A keeps the deleted key's older version.
#[test]
fn a_deleted_key_stays_deleted_after_its_tombstones_file_is_compacted_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), eager_compaction()).unwrap();
    let w = WriteOptions::default();
    let put_all = |prefix: &str, tag: &[u8]| put_hundred(&db, prefix, tag);
    put_all("k", b"a");
    db.flush().unwrap(); // file A
    db.delete_opt(b"k005", &w).unwrap();
    put_all("f", b"b");
    db.flush().unwrap(); // file B: the tombstone and the fillers
    put_all("f", b"c");
    db.flush().unwrap(); // file C: B's fillers overwritten, B a candidate
    let db = std::sync::Arc::new(db);
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = db.clone();
    std::thread::spawn(move || tx.send(waiter.wait_for_background_work().is_ok()));
    let settled = rx.recv_timeout(std::time::Duration::from_secs(60));
    assert_eq!(settled, Ok(true), "compactions never settled");
    assert!(db.stats().compactions >= 1, "{:?}", db.stats());
    assert_eq!(db.get(b"k005").unwrap(), None);
    let keys: Vec<Vec<u8>> = db.iter().unwrap().map(|r| r.unwrap().0).collect();
    assert!(
        !keys.contains(&b"k005".to_vec()),
        "the deleted key came back in a scan"
    );
    assert_eq!(keys.len(), 199);
}

/// `check` verifies the B+-tree (from a copy: the file is left alone) and names it when a slot
/// is damaged.
#[test]
fn check_verifies_the_index_and_names_a_damaged_slot() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, pm_dir) = (dir.path().join("db"), dir.path().join("pm"));
    let mut opts = common::slmdb();
    opts.pm_device = None;
    opts.pm_path = Some(pm_dir.clone());
    opts.pm_mode = flatlsm::PmModeOption::Msync;
    opts.slmdb.btree_size = 1 << 20;
    let db = Db::open(&db_dir, opts).unwrap();
    for i in 0..300u32 {
        db.put(format!("k{i:04}").as_bytes(), b"v").unwrap();
    }
    db.flush().unwrap();
    drop(db);
    let report = flatlsm::inspect::check_database(&db_dir, &pm_dir).unwrap();
    assert!(
        report.is_ok() && report.records_checked >= 300,
        "{report:?}"
    );
    let index = pm_dir.join("index.pmbt");
    let mut bytes = std::fs::read(&index).unwrap();
    bytes[4096 + 64 + 40] ^= 0x20; // a key byte of the head leaf's first slot
    std::fs::write(&index, bytes).unwrap();
    let report = flatlsm::inspect::check_database(&db_dir, &pm_dir).unwrap();
    let problem = format!("{:?}", report.problems);
    assert!(
        problem.contains("index.pmbt") && problem.contains("checksum"),
        "{problem}"
    );
}

/// Regression: a snapshot read that fell back to the SSTs took the first file holding a version
/// at or below its sequence, in level-0 order — but a compaction's output, appended last, holds
/// older data than the flushes before it, so the read returned an older value than the
/// snapshot's (found by the model test in CI).
#[test]
fn a_snapshot_read_takes_the_newest_version_not_the_last_written_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), eager_compaction()).unwrap();
    let w = WriteOptions::default();
    let fill = |prefix: &str, tag: &[u8]| put_hundred(&db, prefix, tag);
    db.put_opt(b"k", b"1", &w).unwrap();
    fill("f", b"a");
    db.flush().unwrap(); // A: k=1 and fillers
    db.put_opt(b"k", b"2", &w).unwrap();
    fill("g", b"x");
    db.flush().unwrap(); // B: k=2 and keys that stay live
    let snap = db.snapshot();
    db.put_opt(b"k", b"3", &w).unwrap();
    fill("f", b"b");
    db.flush().unwrap(); // C: k=3, A's fillers overwritten: A alone is a candidate
    db.wait_for_background_work().unwrap();
    assert!(db.stats().compactions >= 1, "{:?}", db.stats());
    let at_snap = ReadOptions {
        snapshot: Some(&snap),
        ..ReadOptions::default()
    };
    assert_eq!(
        db.get_opt(b"k", &at_snap).unwrap().as_deref(),
        Some(&b"2"[..])
    );
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"3"[..]));
}

/// Insert-if-absent and update-if-present answer from the index alone: with the SST's data
/// block damaged, a get fails naming it, but the conditional writes still decide correctly.
#[test]
fn conditional_writes_answer_existence_from_the_index_without_reading_a_block() {
    let dir = tempfile::tempdir().unwrap();
    let opts = common::slmdb();
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let w = WriteOptions::default();
    db.put_opt(b"present", b"v1", &w).unwrap();
    db.flush().unwrap();
    drop(db);
    let sst = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "sst"))
        .unwrap();
    let mut bytes = std::fs::read(&sst).unwrap();
    bytes[10] ^= 0x55; // inside the only data block
    std::fs::write(&sst, bytes).unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    let err = db.get(b"present").unwrap_err();
    assert!(err.is_corruption(), "{err}");
    assert!(!db.put_if_opt(b"present", b"x", false, &w).unwrap());
    assert!(db.put_if_opt(b"present", b"v2", true, &w).unwrap());
    assert!(db.put_if_opt(b"absent", b"a", false, &w).unwrap());
    assert!(!db.put_if_opt(b"missing", b"m", true, &w).unwrap());
    assert_eq!(db.get(b"present").unwrap().as_deref(), Some(&b"v2"[..]));
}
