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
                db.delete(&w, &key).unwrap();
                model.remove(&key);
            } else {
                db.put(&w, &key, &value(i, round)).unwrap();
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
            let got = db.get(&ReadOptions::default(), &key).unwrap();
            assert_eq!(got.as_ref(), model.get(&key), "key{i:06}");
        }
        let scanned: Vec<_> = db
            .iter(&ReadOptions::default())
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
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
    db.put(&w, b"k", b"old").unwrap();
    db.flush().unwrap();
    let snap = db.snapshot();
    db.put(&w, b"k", b"new").unwrap();
    db.flush().unwrap();
    let at_snap = ReadOptions {
        snapshot: Some(&snap),
        ..ReadOptions::default()
    };
    assert_eq!(
        db.get(&at_snap, b"k").unwrap().as_deref(),
        Some(&b"old"[..])
    );
    assert_eq!(
        db.get(&ReadOptions::default(), b"k").unwrap().as_deref(),
        Some(&b"new"[..])
    );
    assert_eq!(db.get(&ReadOptions::default(), b"nope").unwrap(), None);
}

/// The index is part of the database: once SSTs exist, a missing B+-tree is refused at open.
#[test]
fn a_missing_index_is_refused_once_ssts_exist() {
    let dir = tempfile::tempdir().unwrap();
    let opts = common::slmdb();
    let device = opts.pm_device.clone().unwrap();
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    db.put(&WriteOptions::default(), b"a", b"1").unwrap();
    db.flush().unwrap();
    drop(db);
    device.remove_region("index.pmbt").unwrap();
    let err = Db::open(dir.path(), opts).err().expect("refused");
    assert!(err.to_string().contains("missing: the B+-tree"), "{err}");
}
