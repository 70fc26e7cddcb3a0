//! Two flushes in flight at once (SLM-DB's pipelined flush): the younger writes its SST while
//! the older is held at a sync point, and installs after it.
//!
//! Regression guarded: a flush drops a tombstone when no file of its version holds the key,
//! but the older flush in flight, not yet in that version, may hold it; the younger flush then
//! dropped the deletion and the key came back once both installed.

use super::Db;
use crate::designs::Profile;
use crate::options::{Options, WriteOptions};
use crate::pm::simulated::SimulatedPmDevice;
use std::time::Duration;

fn open(dir: &std::path::Path) -> Db {
    let mut o = Options {
        profile: Profile::SlmDb,
        pm_device: Some(SimulatedPmDevice::new()),
        pmtable_size: 64 << 10,
        kv_separation_threshold: usize::MAX,
        background_work: false,
        ..Options::default()
    };
    o.slmdb.btree_size = 1 << 20;
    Db::open(dir, o).unwrap()
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
