//! Range queries of the `slmdb` profile: the B+-tree cursor merged with the write buffers reads
//! the database as it was when the scan began — also when a flush changes the tree under it —
//! backward steps and snapshots read the level-0 files, and a scan over scattered files makes
//! them compaction candidates (SLM-DB's sequentiality degree per range query).

mod common;

use flatlsm::{Db, ReadOptions, WriteOptions};
use std::collections::BTreeMap;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// Keys `0..n` in `files` flushes, key i in flush i % files: every file spans the whole range.
fn interleaved(db: &Db, n: u32, files: u32, tag: &str) -> Model {
    let mut model = Model::new();
    for f in 0..files {
        for i in (f..n).step_by(files as usize) {
            let v = format!("{tag}-{i}").into_bytes();
            db.put(key(i), &v).unwrap();
            model.insert(key(i), v);
        }
        db.flush().unwrap();
    }
    model
}

fn scan_all(db: &Db) -> Vec<(Vec<u8>, Vec<u8>)> {
    let it = db.iter().unwrap();
    it.map(|r| r.unwrap()).collect()
}

fn quiet() -> flatlsm::Options {
    let mut opts = common::slmdb();
    opts.background_work = false;
    opts
}

/// A scan reads part of the database, then a flush overwrites, deletes and adds keys ahead of
/// it and changes the tree: the rest of the scan still shows the database as it began.
#[test]
fn a_scan_sees_its_start_state_when_a_flush_changes_the_index_mid_scan() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), quiet()).unwrap();
    let before = interleaved(&db, 600, 3, "a");
    let mut it = db.iter().unwrap();
    let mut seen: Vec<_> = it.by_ref().take(100).map(|r| r.unwrap()).collect();
    let w = WriteOptions::default();
    let mut after = before.clone();
    for i in 200..300 {
        db.put_opt(key(i), b"new", &w).unwrap();
        after.insert(key(i), b"new".to_vec());
    }
    for i in 300..350 {
        db.delete_opt(key(i), &w).unwrap();
        after.remove(&key(i));
    }
    db.put_opt(b"key00400x", b"added", &w).unwrap();
    after.insert(b"key00400x".to_vec(), b"added".to_vec());
    db.flush().unwrap();
    seen.extend(it.map(|r| r.unwrap()));
    assert_eq!(seen, before.into_iter().collect::<Vec<_>>());
    assert_eq!(scan_all(&db), after.into_iter().collect::<Vec<_>>());
}

/// Seeks land on the first key at or after the target, values come from the right file after
/// overwrites in later flushes and in the write buffer, and deleted keys stay hidden.
#[test]
fn seeks_and_scans_through_the_index_answer_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), quiet()).unwrap();
    let mut model = interleaved(&db, 500, 4, "a");
    let w = WriteOptions::default();
    for i in (0..500).step_by(7) {
        db.delete_opt(key(i), &w).unwrap();
        model.remove(&key(i));
    }
    db.flush().unwrap();
    for i in (0..500).step_by(5) {
        db.put_opt(key(i), b"buffered", &w).unwrap();
        model.insert(key(i), b"buffered".to_vec());
    }
    assert_eq!(scan_all(&db), model.clone().into_iter().collect::<Vec<_>>());
    for start in [0u32, 7, 133, 498, 700] {
        let mut it = db.iter().unwrap();
        it.seek(&key(start));
        let got: Vec<_> = it.take(20).map(|r| r.unwrap()).collect();
        let want = model.range(key(start)..).take(20);
        let want: Vec<_> = want.map(|(k, v)| (k.clone(), v.clone())).collect();
        assert_eq!(got, want, "seek to {start}");
    }
}

/// Backward steps (which read the level-0 files) and a turn from forward to backward agree
/// with the model.
#[test]
fn backward_scans_and_direction_changes_answer_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), quiet()).unwrap();
    let model = interleaved(&db, 300, 3, "a");
    let rev: Vec<_> = db.iter().unwrap().rev().map(|r| r.unwrap()).collect();
    let want: Vec<_> = model.clone().into_iter().rev().collect();
    assert_eq!(rev, want);
    let mut it = db.iter().unwrap();
    it.seek(&key(150));
    it.advance();
    it.advance();
    assert_eq!(it.key(), &key(152)[..]);
    it.prev();
    assert_eq!(it.key(), &key(151)[..]);
    it.prev();
    it.prev();
    assert_eq!(
        (it.key(), it.value()),
        (&key(149)[..], &model[&key(149)][..])
    );
}

/// A snapshot's scan shows the values of its time after they are overwritten and flushed.
#[test]
fn a_snapshot_scan_reads_overwritten_values() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), quiet()).unwrap();
    let old = interleaved(&db, 200, 2, "old");
    let snap = db.snapshot();
    interleaved(&db, 200, 2, "new");
    let at = ReadOptions {
        snapshot: Some(&snap),
        ..ReadOptions::default()
    };
    let got: Vec<_> = db.iter_opt(&at).unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(got, old.into_iter().collect::<Vec<_>>());
}

/// Twelve files each holding every twelfth key: no file is a candidate by its live keys or by
/// leaf scans (turned off), but a scan meets twelve files in every sub-range of 30 keys (more
/// than 8): they become candidates and the next compaction merges them.
#[test]
fn a_scan_over_scattered_files_makes_them_compaction_candidates() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = quiet();
    opts.slmdb.leaf_node_threshold = usize::MAX;
    opts.slmdb.compaction_trigger = 0;
    let db = Db::open(dir.path(), opts).unwrap();
    let model = interleaved(&db, 360, 12, "a");
    db.wait_for_background_work().unwrap();
    assert_eq!(db.stats().compactions, 0, "{:?}", db.stats());
    let mut it = db.iter().unwrap();
    it.seek(&key(100));
    let got: Vec<_> = it.take(100).map(|r| r.unwrap()).collect();
    assert_eq!(got.len(), 100);
    db.wait_for_background_work().unwrap();
    assert!(db.stats().compactions > 0, "{:?}", db.stats());
    assert_eq!(scan_all(&db), model.into_iter().collect::<Vec<_>>());
}
