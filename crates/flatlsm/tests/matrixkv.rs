//! The `matrixkv` profile through the public API: memtables flushed into RowTables of a PM
//! matrix container, column compactions into L1, reads through cross-row hints, recovery.

mod common;

use flatlsm::{Db, ReadOptions, WriteOptions};
use std::collections::BTreeMap;

fn value(i: u32, round: u32) -> Vec<u8> {
    format!("v{round}-{i}-{}", "x".repeat((i * 7 % 300) as usize)).into_bytes()
}

/// Writes overwrite keys across many flushes; every key reads back its newest value before and
/// after a reopen, and column compactions moved rows into L1.
#[test]
fn rows_fill_the_container_and_columns_drain_it_without_losing_a_write() {
    let dir = tempfile::tempdir().unwrap();
    let opts = common::matrixkv();
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let mut model = BTreeMap::new();
    for round in 0..4u32 {
        for i in (0..3000u32).map(|i| (i * 7919) % 3000) {
            let key = format!("key{i:06}").into_bytes();
            db.put(&WriteOptions::default(), &key, &value(i, round))
                .unwrap();
            model.insert(key, value(i, round));
        }
    }
    db.wait_for_background_work().unwrap();
    let stats = db.stats();
    assert!(
        !stats.store_compactions.is_empty(),
        "no column compaction ran: {stats:?}"
    );
    for (k, v) in model.iter().step_by(7) {
        assert_eq!(
            db.get(&ReadOptions::default(), k).unwrap().as_ref(),
            Some(v)
        );
    }
    drop(db);
    let db = Db::open(dir.path(), opts).unwrap();
    let it = db.iter(&ReadOptions::default()).unwrap();
    let scanned: Vec<(Vec<u8>, Vec<u8>)> = it.map(|r| r.unwrap()).collect();
    assert_eq!(scanned.len(), model.len());
    assert!(scanned
        .iter()
        .zip(&model)
        .all(|(a, b)| a.0 == *b.0 && a.1 == *b.1));
}
