//! PMTable GC on the write path (paper 4.2.2): a full mutable PMTable is garbage-collected only
//! when that frees room, otherwise sealed, so every write returns.
//!
//! Regressions (issue 9, item 1): live bytes were counted without the 21-byte entry headers the
//! log holds, so a table without any garbage could exceed `pmtable_gc_ratio`; the GC rewrote the
//! same entries, the write still did not fit, and the writer spun forever holding the write lock.
//! An open snapshot that keeps every version did the same. Each test runs its writes in a thread
//! with a deadline, so a livelock fails the test instead of hanging the run. Item 7: a failed GC
//! left its new PM Log behind on every retry.

mod common;

use flatlsm::{Db, Options, ReadOptions, WriteOptions};
use flatlsm_core::pm::simulated::SimulatedPmDevice;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

/// How long any of these workloads may take (they need well under a second when they work).
const DEADLINE: Duration = Duration::from_secs(20);

/// Options with 64 KiB PMTables on simulated PM, no background threads (the writer seals,
/// GCs and flushes itself), and the given GC ratio.
fn options(device: &Arc<SimulatedPmDevice>, gc_ratio: f64) -> Options {
    let mut o = common::tiny_options(1);
    o.pm_device = Some(device.clone());
    o.background_work = false;
    o.pmtable_gc_ratio = gc_ratio;
    o
}

/// Runs `work` on `db` in a thread and fails the test if it does not return within `DEADLINE`.
fn completes<T: Send + 'static>(
    db: &Arc<Db>,
    what: &str,
    work: impl FnOnce(&Db) -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    let db = db.clone();
    std::thread::spawn(move || {
        let _ = tx.send(work(&db));
    });
    rx.recv_timeout(DEADLINE)
        .unwrap_or_else(|_| panic!("{what}: no return within {DEADLINE:?} (write livelock?)"))
}

fn two_byte_key(i: u32) -> [u8; 2] {
    (i as u16).to_be_bytes()
}

/// The reported reproduction: default ratio 8, distinct 2-byte keys with empty values (23-byte
/// entries, 2 live bytes each before the fix): write #2846 never returned.
#[test]
fn write_with_tiny_entries_and_default_ratio_completes() {
    let dir = tempfile::tempdir().unwrap();
    let device = SimulatedPmDevice::new();
    let db = Arc::new(Db::open(dir.path(), options(&device, 8.0)).unwrap());
    completes(&db, "8,000 puts of 2-byte keys", |db| {
        for i in 0..8_000u32 {
            db.put(two_byte_key(i), b"").unwrap();
        }
    });
    completes(&db, "8,000 deletes of 2-byte keys", |db| {
        for i in 8_000..16_000u32 {
            db.delete(two_byte_key(i)).unwrap();
        }
    });
    let r = ReadOptions::default();
    assert_eq!(
        db.get_opt(two_byte_key(7_999), &r).unwrap(),
        Some(Vec::new())
    );
    assert_eq!(db.get_opt(two_byte_key(0), &r).unwrap(), Some(Vec::new()));
    assert_eq!(db.stats().pmtable_gcs, 0, "no table had garbage to collect");
}

/// The second reproduction, at a ratio the options accept: ratio 2, 8-byte keys and values
/// (37-byte entries, 16 live bytes each before the fix), 4 MiB PMTables: the write after about
/// 113,000 distinct keys never returned.
#[test]
fn gc_of_table_without_garbage_does_not_livelock() {
    let dir = tempfile::tempdir().unwrap();
    let device = SimulatedPmDevice::new();
    let mut o = options(&device, 2.0);
    o.pmtable_size = 4 << 20;
    let db = Arc::new(Db::open(dir.path(), o).unwrap());
    completes(&db, "120,000 puts of distinct 8-byte keys", |db| {
        for i in 0..120_000u64 {
            db.put(i.to_be_bytes(), i.to_le_bytes()).unwrap();
        }
    });
    let r = ReadOptions::default();
    for i in (0..120_000u64).step_by(9_973) {
        let got = db.get_opt(i.to_be_bytes(), &r).unwrap();
        assert_eq!(got.as_deref(), Some(&i.to_le_bytes()[..]));
    }
    let stats = db.stats();
    assert_eq!(stats.pmtable_gcs, 0, "no table had garbage to collect");
    assert!(stats.pmtables > 1, "the first table was sealed: {stats:?}");
}

/// A table that is mostly overwritten entries is still garbage-collected in place (the paper's
/// GC), not sealed: overwriting one key never needs a second PMTable.
#[test]
fn table_of_overwrites_is_garbage_collected_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let device = SimulatedPmDevice::new();
    let db = Arc::new(Db::open(dir.path(), options(&device, 8.0)).unwrap());
    completes(&db, "5,000 overwrites of one key", |db| {
        for i in 0..5_000u32 {
            db.put(b"hot", i.to_le_bytes()).unwrap();
        }
    });
    let stats = db.stats();
    assert!(stats.pmtable_gcs > 0, "{stats:?}");
    assert_eq!((stats.pmtables, stats.flushes), (1, 0), "{stats:?}");
    let got = db.get(b"hot").unwrap();
    assert_eq!(got.as_deref(), Some(&4_999u32.to_le_bytes()[..]));
}

/// An open snapshot older than every entry makes GC keep every version, so it frees nothing:
/// the writer must seal instead of collecting the same table again and again.
#[test]
fn gc_blocked_by_a_snapshot_still_makes_progress() {
    let dir = tempfile::tempdir().unwrap();
    let device = SimulatedPmDevice::new();
    let db = Arc::new(Db::open(dir.path(), options(&device, 8.0)).unwrap());
    db.put(b"hot", b"before").unwrap();
    let snapshot = db.snapshot();
    completes(&db, "5,000 overwrites under a snapshot", |db| {
        for i in 0..5_000u32 {
            db.put(b"hot", i.to_le_bytes()).unwrap();
        }
    });
    let at_snapshot = ReadOptions {
        snapshot: Some(&snapshot),
        ..ReadOptions::default()
    };
    let got = db.get_opt(b"hot", &at_snapshot).unwrap();
    assert_eq!(got.as_deref(), Some(&b"before"[..]));
    let got = db.get(b"hot").unwrap();
    assert_eq!(got.as_deref(), Some(&4_999u32.to_le_bytes()[..]));
}

/// Regression (issue 9, item 7): a PMTable GC that failed (here: a damaged live entry) left its
/// new PM Log behind, one more on every retry of the write. Now each failed attempt removes it.
#[test]
fn failed_pmtable_gc_leaves_no_region_across_retries() {
    let dir = tempfile::tempdir().unwrap();
    let device = SimulatedPmDevice::new();
    let db = Db::open(dir.path(), options(&device, 8.0)).unwrap();
    let w = WriteOptions::default();
    db.put_opt(b"a", [1; 300], &w).unwrap(); // 256 bytes or more: written to PM at once
    let regions = device.region_names();
    assert_eq!(regions.len(), 1, "{regions:?}");
    // Damage a value byte of the live entry of "a", the first entry (offset 64) of the log.
    device.corrupt(&regions[0], 64 + 21 + 1 + 10, b"X").unwrap();
    let failure = (0..1_000).find_map(|_| db.put_opt(b"b", [2; 300], &w).err());
    let failure = failure.expect("the table filled up and its GC read the damaged entry");
    assert!(failure.is_corruption(), "{failure}");
    for retry in 0..3 {
        assert!(db.put_opt(b"b", [2; 300], &w).is_err(), "retry {retry}");
        assert_eq!(device.region_names(), regions, "retry {retry}");
    }
}
