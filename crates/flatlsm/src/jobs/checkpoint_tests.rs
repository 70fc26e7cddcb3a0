//! A checkpoint racing a flush, held at sync points: a buffer sealed after the checkpoint's own
//! flush is not flushed while the copy is made (the flush would change SLM-DB's B+-tree, or
//! MatrixKV's container, under the byte copy of its region).

use super::Db;
use crate::options::{Options, PmModeOption, Profile};
use parking_lot::Mutex;
use std::sync::mpsc::channel;
use std::sync::Arc;
use std::time::Duration;

/// How long the test waits for the engine to reach a sync point (a hang fails instead).
const REACH: Duration = Duration::from_secs(20);

/// SLM-DB with 128 KiB PMTables, PM in `pm` (a directory, so its tree can be copied), and a
/// flush due at each sealed buffer.
fn slmdb(pm: &std::path::Path) -> Options {
    let mut o = Options::default()
        .pm_path(pm)
        .pm_mode(PmModeOption::Emulated);
    o.profile = Profile::SlmDb;
    o.pmtable_size = 128 << 10;
    o.flush_immutable_num = 1;
    o.kv_separation_threshold = usize::MAX;
    o.block_cache_size = 1 << 20;
    o.slmdb.btree_size = 4 << 20;
    o
}

/// Regression (CI at c9b4af3: a checkpoint copy's B+-tree refused, "next leaf 7 is outside
/// the list"): the flush thread, woken for a buffer sealed after the checkpoint's flush, must
/// not claim it once the checkpoint has frozen the tree.
#[test]
fn a_buffer_sealed_after_the_checkpoint_flushed_is_not_flushed_during_the_copy() {
    let (t, pm) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let db = Arc::new(Db::open(t.path().join("db"), slmdb(pm.path())).unwrap());
    let points = &db.inner.sync_points;
    let checkpoint_flushed = points.pause_once("checkpoint:flushed");
    let checkpoint = {
        let (db, copy) = (db.clone(), t.path().join("copy"));
        std::thread::spawn(move || db.checkpoint(copy))
    };
    checkpoint_flushed.wait_reached(REACH);
    let flush = Arc::new(Mutex::new(Some(points.pause_once("flush:before_claim"))));
    for i in 0..400u32 {
        db.put(format!("k{i:05}"), [i as u8; 1000]).unwrap(); // seals two buffers or more
    }
    flush.lock().as_ref().unwrap().wait_reached(REACH);
    let (tx, first) = channel();
    let first = Mutex::new(first);
    let (tx, tx2) = (Mutex::new(tx.clone()), Mutex::new(tx));
    points.set("flush:nothing_claimed", move || {
        let _ = tx.lock().send("held off");
    });
    points.set("flush:sst_written", move || {
        let _ = tx2.lock().send("flushed during the copy");
    });
    let seen = Arc::new(Mutex::new(None));
    let seen_in_copy = seen.clone();
    points.set("checkpoint:frozen", move || {
        let first = first.lock();
        while first.try_recv().is_ok() {} // flushes that ended before the freeze
        flush.lock().take().unwrap().resume();
        *seen_in_copy.lock() = first.recv_timeout(REACH).ok();
    });
    checkpoint_flushed.resume();
    checkpoint.join().unwrap().unwrap();
    assert_eq!(*seen.lock(), Some("held off"));
    let mut copy_opts = slmdb(pm.path()).pm_mode(PmModeOption::Msync);
    copy_opts.pm_path = None; // the copy's own `<copy>/pm`
    drop(Db::open(t.path().join("copy"), copy_opts).unwrap());
    db.flush().unwrap(); // the held buffers are flushed once the checkpoint is made
    assert_eq!(
        db.get("k00399").unwrap().as_deref(),
        Some(&[143u8; 1000][..])
    );
}
