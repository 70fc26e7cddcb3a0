//! Quiet cleanup waits for an idle foreground (`quiet.rs`): a lone immutable PMTable (parallel
//! flush waits for a second one) stays unflushed while reads go on, and is flushed once
//! writes and reads have been quiet for `QUIET_AFTER`.
//!
//! Regression guarded (twelfth and thirteenth sessions): with writes alone deciding, the
//! merge, GC and redirect rewrites of quiet cleanup ran in the middle of a server's GET
//! phase right after its SETs, and a lone immutable table waited for company for good.

use super::Db;
use crate::options::Options;
use crate::pm::simulated::SimulatedPmDevice;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn options() -> Options {
    Options {
        pm_device: Some(SimulatedPmDevice::new()),
        pmtable_size: 256 << 10,
        ..Options::default()
    }
}

/// Writes until exactly one immutable table waits for its flush.
fn seal_one_table(db: &Db) {
    let value = vec![7u8; 1000];
    for i in 0u32.. {
        db.put(i.to_be_bytes(), &value).unwrap();
        if !db.inner.versions.sv().imms.is_empty() {
            return;
        }
    }
}

fn immutables(db: &Db) -> usize {
    db.inner.versions.sv().imms.len()
}

#[test]
fn a_lone_immutable_table_waits_while_reads_go_on_and_is_flushed_once_they_stop() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    seal_one_table(&db);
    let reading = AtomicBool::new(true);
    std::thread::scope(|s| {
        s.spawn(|| {
            while reading.load(Ordering::Relaxed) {
                db.get(1u32.to_be_bytes()).unwrap();
            }
        });
        std::thread::sleep(Duration::from_secs(4));
        assert_eq!(immutables(&db), 1, "flushed in the middle of a read phase");
        reading.store(false, Ordering::Relaxed);
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while immutables(&db) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(immutables(&db), 0, "the lone table was never flushed");
    assert_eq!(db.get(1u32.to_be_bytes()).unwrap(), Some(vec![7u8; 1000]));
}
