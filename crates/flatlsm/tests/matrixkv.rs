//! The `matrixkv` profile through the public API: memtables flushed into RowTables of a PM
//! matrix container, column compactions into L1, reads through cross-row hints, recovery.

mod common;

use flatlsm::Db;
use flatlsm_core::version::{no_extension, Manifest};
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
            db.put(&key, value(i, round)).unwrap();
            model.insert(key, value(i, round));
        }
    }
    db.wait_for_background_work().unwrap();
    let stats = db.stats();
    assert!(
        !stats.store_compactions.is_empty(),
        "no column compaction ran: {stats:?}"
    );
    // Rows are written to PM: a flush writes nothing to SSD.
    assert!(
        stats.flush_pm_bytes > 0 && stats.flush_sst_bytes == 0,
        "{stats:?}"
    );
    for (k, v) in model.iter().step_by(7) {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
    }
    drop(db);
    let db = Db::open(dir.path(), opts).unwrap();
    let it = db.iter().unwrap();
    let scanned: Vec<(Vec<u8>, Vec<u8>)> = it.map(|r| r.unwrap()).collect();
    assert_eq!(scanned.len(), model.len());
    assert!(scanned
        .iter()
        .zip(&model)
        .all(|(a, b)| a.0 == *b.0 && a.1 == *b.1));
}

fn msync_options(dir: &std::path::Path) -> flatlsm::Options {
    let mut o = common::matrixkv();
    o.pm_device = None;
    o.pm_path = Some(dir.join("pm"));
    o.pm_mode = flatlsm::PmModeOption::Msync;
    o
}

/// On msync PM (a fresh PM directory, created by open): the container and the write-ahead
/// logs live in the PM directory; reopening with another container geometry or as another
/// profile is refused with the reason, and the database still opens as it was made.
#[test]
fn a_container_is_reopened_only_with_its_own_geometry_and_profile() {
    let dir = tempfile::tempdir().unwrap();
    let opts = msync_options(dir.path());
    let db = Db::open(dir.path().join("db"), opts.clone()).unwrap();
    for i in 0..3000u32 {
        let key = format!("key{i:06}");
        db.put(key.as_bytes(), value(i, 0)).unwrap();
    }
    db.flush().unwrap();
    drop(db);
    assert!(dir.path().join("pm/matrix.pmc").exists());
    assert!(dir.path().join("pm/wal").is_dir());
    let mut other = opts.clone();
    other.matrixkv.page_size = 8 << 10;
    let err = Db::open(dir.path().join("db"), other)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("page_size = 8192"), "{err}");
    let mut leveled = opts.clone();
    leveled.profile = flatlsm::Profile::Leveled;
    let err = Db::open(dir.path().join("db"), leveled)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("'matrixkv'"), "{err}");
    let db = Db::open(dir.path().join("db"), opts).unwrap();
    assert_eq!(db.get(b"key000042").unwrap(), Some(value(42, 0)));
}

/// Regression of issue 27 (the rows left core's `Version` for MatrixKV's version extension):
/// a database written, closed and reopened replays its rows through the extension the engine
/// chooses for its recorded profile, reads them, and records the same rows again; replayed
/// without an extension, its manifest is refused, not read as a database without rows.
#[test]
fn rows_survive_close_and_reopen_through_the_version_extension() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = msync_options(dir.path());
    opts.background_work = false; // no column compaction: the rows stay as flushed
    let path = dir.path().join("db");
    let db = Db::open(&path, opts.clone()).unwrap();
    for i in 0..3000u32 {
        db.put(format!("key{i:06}").as_bytes(), value(i, 0))
            .unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    let fs = flatlsm::fs::OsFileSystem;
    let recorded = || {
        let m = Manifest::load(&fs, &path, &flatlsm::tool_support::version_extension).unwrap();
        m.state.version.extension
    };
    let rows = recorded();
    assert!(!rows.state().is_empty(), "no row recorded: {rows:?}");
    let err = Manifest::load(&fs, &path, &no_extension).unwrap_err();
    assert!(
        err.is_corruption() && err.to_string().contains("design record 14"),
        "{err}"
    );
    let db = Db::open(&path, opts).unwrap();
    for i in (0..3000u32).step_by(97) {
        let key = format!("key{i:06}");
        assert_eq!(db.get(key.as_bytes()).unwrap(), Some(value(i, 0)));
    }
    db.close().unwrap();
    assert_eq!(recorded(), rows);
}

/// Write buffers whose rows the container pages cannot list, or a container that cannot hold
/// four of them, are refused when the database opens, not by a failing flush later.
#[test]
fn write_buffers_too_large_for_the_container_are_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = common::matrixkv();
    o.pmtable_size = 4 << 20; // a row of up to 8 MiB: 4 KiB pages list only ~4 MiB
    let err = Db::open(dir.path(), o.clone()).err().unwrap().to_string();
    assert!(err.contains("pmtable_size = 4194304"), "{err}");
    o.matrixkv.page_size = 64 << 10;
    o.matrixkv.container_size = 8 << 20; // holds only two such write buffers
    let err = Db::open(dir.path(), o).err().unwrap().to_string();
    assert!(err.contains("container_size of at least 16777216"), "{err}");
}
