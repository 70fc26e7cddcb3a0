//! A failing background job (disk full) puts the database in a clear error state: writes are
//! refused, reads keep working, nothing acknowledged is lost, and a reopen recovers.

mod common;

use flatlsm::{Db, Error, WriteOptions};
use flatlsm_core::fs::FaultFs;
use flatlsm_core::pm::simulated::SimulatedPmDevice;
use std::sync::atomic::Ordering;
use std::sync::Arc;

#[test]
/// Regression: a flush failing in the foreground used to return the I/O error without setting
/// the error state, so every later write retried the failing flush.
fn disk_full_during_flush_refuses_writes_keeps_reads_and_recovers_on_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let fs = Arc::new(FaultFs::default());
    let device = SimulatedPmDevice::new();
    let mut opts = common::tiny_options(2);
    opts.pm_device = Some(device.clone());
    opts.file_system = Some(fs.clone());
    opts.background_work = false;
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let w = WriteOptions {
        sync: true,
        ..WriteOptions::default()
    };
    for i in 0..100u32 {
        db.put_opt(format!("k{i:03}").as_bytes(), [i as u8; 300], &w)
            .unwrap();
    }
    fs.disk_full.store(true, Ordering::SeqCst);
    let err = db.flush().unwrap_err();
    assert!(
        err.to_string().contains("No space left") || err.to_string().contains("os error 28"),
        "{err}"
    );
    // Reads keep working from the PMTables.
    assert_eq!(db.get(b"k042").unwrap(), Some(vec![42; 300]));
    // Later writes report the failure instead of losing data silently.
    let mut saw_error = false;
    for i in 0..2000u32 {
        match db.put_opt(format!("x{i:04}").as_bytes(), [1; 300], &w) {
            Ok(()) => {}
            Err(Error::Background(cause)) => {
                // The failure keeps its kind: an I/O error, out of space.
                let Error::Io { source, .. } = &*cause else {
                    panic!("the cause lost its kind: {cause:?}");
                };
                let msg = source.to_string();
                assert!(
                    msg.contains("No space") || msg.contains("os error 28"),
                    "{msg}"
                );
                saw_error = true;
                break;
            }
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    assert!(saw_error, "writes never reported the background failure");
    drop(db);
    fs.disk_full.store(false, Ordering::SeqCst);
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..100u32 {
        assert_eq!(
            db.get(format!("k{i:03}").as_bytes()).unwrap(),
            Some(vec![i as u8; 300])
        );
    }
    db.flush().unwrap();
    assert_eq!(db.get(b"k099").unwrap(), Some(vec![99; 300]));
}
