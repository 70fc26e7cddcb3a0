//! Process crashes and failed persists through the public API: an interrupted creation, a
//! failed sync commit (issue 9, items 4 and 6). The persist-point crash tests are in
//! `pm_crash.rs`; real SIGKILLs in the CLI's `crashtest`.

mod common;

use flatlsm::{Db, Error, Options, WriteOptions};
use flatlsm_core::pm::simulated::SimulatedPmDevice;
use std::sync::Arc;

fn options(device: Arc<SimulatedPmDevice>) -> Options {
    let mut o = common::tiny_options(2);
    o.pm_device = Some(device);
    o.background_work = false;
    o.pm_persist_interval_ms = 3_600_000;
    o
}

fn get(db: &Db, key: &[u8]) -> Option<Vec<u8>> {
    db.get(key).unwrap()
}

const SYNC: WriteOptions = WriteOptions {
    sync: true,
    no_slowdown: false,
};

#[test]
fn failed_sync_commit_stops_writes_and_never_reuses_sequence_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let device = SimulatedPmDevice::with_group_commit();
    let db = Db::open(dir.path(), options(device.clone())).unwrap();
    db.put_opt(b"k", b"v1", &SYNC).unwrap();
    device.fail_persists_after(Some(device.persist_count()));
    assert!(db.put_opt(b"k", b"v2", &SYNC).is_err(), "the commit failed");
    assert_eq!(
        get(&db, b"k"),
        Some(b"v1".to_vec()),
        "a failed write is invisible"
    );
    let later = db.put_opt(b"k", b"v3", &SYNC).unwrap_err();
    assert!(matches!(later, Error::Background(_)), "{later}");
    assert_eq!(get(&db, b"k"), Some(b"v1".to_vec()));
    drop(db);
    // The process dies; the failed batch is in the mapping and may come back, whole.
    let after = device.crash_process();
    let db = Db::open(dir.path(), options(after.clone())).unwrap();
    let recovered = get(&db, b"k");
    assert!(
        recovered == Some(b"v1".to_vec()) || recovered == Some(b"v2".to_vec()),
        "{recovered:?}"
    );
    db.put_opt(b"k", b"v4", &SYNC).unwrap();
    drop(db);
    let db = Db::open(dir.path(), options(after)).unwrap();
    assert_eq!(
        get(&db, b"k"),
        Some(b"v4".to_vec()),
        "a reused sequence lost v4"
    );
}

#[test]
fn interrupted_creation_with_a_manifest_but_no_current_opens_as_a_new_database() {
    // A process crash between writing the first manifest and CURRENT (found by
    // `process_crash_on_cache_line_pm_loses_no_acknowledged_write`).
    let dir = tempfile::tempdir().unwrap();
    let db_dir = dir.path().join("db");
    std::fs::create_dir_all(db_dir.join("pm")).unwrap();
    std::fs::write(db_dir.join("MANIFEST-000001"), b"half a snapshot").unwrap();
    std::fs::write(db_dir.join("CURRENT.tmp"), b"MANIFEST-0").unwrap();
    let mut o = common::tiny_options(2);
    o.pm_mode = flatlsm::PmModeOption::Msync;
    let db = Db::open(&db_dir, o.clone()).unwrap();
    db.put_opt(b"a", b"1", &SYNC).unwrap();
    drop(db);
    let db = Db::open(&db_dir, o).unwrap();
    assert_eq!(get(&db, b"a"), Some(b"1".to_vec()));
}

#[test]
fn directory_with_tables_but_no_current_is_still_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("MANIFEST-000001"), b"x").unwrap();
    std::fs::write(dir.path().join("000007.sst"), b"table").unwrap();
    let err = Db::open(dir.path(), common::tiny_options(2)).err().unwrap();
    assert!(err.to_string().contains("not a FlatLSM database"), "{err}");
}
