//! Two flushes in flight at once (SLM-DB's pipelined flush): the younger writes its SST while
//! the older is held at a sync point, and installs after it.
//!
//! Regressions guarded:
//! - a flush drops a tombstone when no file of its version holds the key, but the older flush
//!   in flight, not yet in that version, may hold it; the younger flush then dropped the
//!   deletion and the key came back once both installed.
//! - (issue 29, item 2) a failed older flush served the next ticket before its failure was
//!   recorded, so the younger flush installed first: reads found the older table's stale
//!   versions, and after a reopen the older table flushed last over the newer one.

use super::Db;
use crate::error::Error;
use crate::fs::FaultFs;
use crate::options::Profile;
use crate::options::{Options, WriteOptions};
use crate::pm::simulated::SimulatedPmDevice;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// SLM-DB (two flush jobs in flight) on simulated PM and `fs`, no background threads: the
/// test's own threads run the flushes.
fn options(fs: Arc<FaultFs>) -> Options {
    let mut o = Options {
        profile: Profile::SlmDb,
        pm_device: Some(SimulatedPmDevice::new()),
        pmtable_size: 64 << 10,
        kv_separation_threshold: usize::MAX,
        background_work: false,
        file_system: Some(fs),
        ..Options::default()
    };
    o.slmdb.btree_size = 1 << 20;
    o
}

fn open(dir: &std::path::Path) -> Db {
    Db::open(dir, options(Arc::default())).unwrap()
}

#[test]
fn a_tombstone_flushed_behind_an_older_flush_in_flight_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let w = WriteOptions::default();
    db.put_opt(b"k", b"v", &w).unwrap();
    let pause = db.inner.sync_points.pause_once("flush:inputs_reserved");
    std::thread::scope(|s| {
        let older = s.spawn(|| db.flush());
        pause.wait_reached(Duration::from_secs(10));
        db.delete_opt(b"k", &w).unwrap();
        let younger = s.spawn(|| db.flush());
        // The younger job writes its SST, then waits for the older one's turn.
        std::thread::sleep(Duration::from_millis(200));
        pause.resume();
        older.join().unwrap().unwrap();
        younger.join().unwrap().unwrap();
    });
    assert_eq!(db.stats().flushes, 2);
    assert_eq!(db.get(b"k").unwrap(), None);
    let keys: Vec<_> = db.iter().unwrap().collect();
    assert!(keys.is_empty(), "{keys:?}");
}

/// Job 1 (the older table, `k = old`) fails writing its SST while job 2 (the newer table,
/// `k = new`) has written its own and waits for its turn; job 1 is then held right after its
/// job returned the error, before anything else records it. Job 2 must not install: its
/// turn comes from a failed job. Reads and a reopen both see `new`.
#[test]
fn a_failed_older_flush_never_lets_a_newer_flush_install_first() {
    let dir = tempfile::tempdir().unwrap();
    let fs = Arc::new(FaultFs::default());
    let opts = options(fs.clone());
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let points = &db.inner.sync_points;
    db.put(b"k", b"old").unwrap();
    let older_held = points.pause_once("flush:inputs_reserved");
    std::thread::scope(|s| {
        let older = s.spawn(|| db.flush());
        older_held.wait_reached(Duration::from_secs(10));
        db.put(b"k", b"new").unwrap();
        let younger_written = points.pause_once("flush:sst_written");
        let younger = s.spawn(|| db.flush());
        younger_written.wait_reached(Duration::from_secs(10));
        fs.fail_writes.store(true, Ordering::SeqCst);
        let older_failed = points.pause_once("flush:failed");
        older_held.resume();
        older_failed.wait_reached(Duration::from_secs(10));
        fs.fail_writes.store(false, Ordering::SeqCst);
        younger_written.resume();
        let younger = younger.join().unwrap();
        assert!(matches!(younger, Err(Error::Background(_))), "{younger:?}");
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
        older_failed.resume();
        assert!(older.join().unwrap().is_err());
    });
    assert_eq!(db.stats().flushes, 0, "no flush installed");
    drop(db);
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
    db.flush().unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
}
