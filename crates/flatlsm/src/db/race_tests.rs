//! Deterministic interleavings of readers with the jobs that drop old versions (PMTable GC and
//! flush), using sync points to hold a reader right after it chose the sequence it reads at.
//!
//! Regression (issue 9, item 5): `pin` read the visible sequence and then loaded the super
//! version without a lock, and `Db::snapshot` read the sequence before registering it. A GC or
//! flush that computed the oldest readable sequence inside either window dropped the version
//! the reader needed, and a read at S returned an older value (here: none).

use super::Db;
use crate::options::{Options, ReadOptions, WriteOptions};
use crate::pm::simulated::SimulatedPmDevice;
use std::time::Duration;

const KEY: &[u8] = b"key";

/// 64 KiB PMTables on simulated PM; no background threads, so only the test's job runs.
fn open(dir: &std::path::Path) -> Db {
    let o = Options {
        pm_device: Some(SimulatedPmDevice::new()),
        pmtable_size: 64 << 10,
        flush_immutable_num: 2,
        max_write_buffer_number: 4,
        flush_threads: 1,
        block_cache_size: 1 << 20,
        background_work: false,
        ..Options::default()
    };
    let db = Db::open(dir, o).unwrap();
    db.put(KEY, b"old").unwrap();
    db
}

/// Runs `read` in a thread held at sync point `point` while `job` runs in this one, then lets
/// the reader finish; returns what it read.
fn read_across_job(
    db: &Db,
    point: &'static str,
    read: impl FnOnce(&Db) -> Option<Vec<u8>> + Send,
    job: impl FnOnce(&Db),
) -> Option<Vec<u8>> {
    let pause = db.inner.sync_points.pause_once(point);
    std::thread::scope(|s| {
        let reader = s.spawn(|| read(db));
        pause.wait_reached(Duration::from_secs(10));
        job(db);
        pause.resume();
        reader.join().unwrap()
    })
}

/// Overwrites `KEY`, then fills the mutable PMTable with overwrites of another key until it
/// is replaced: by a GC (that drops the old `KEY` unless a reader is known to need it) or,
/// when a snapshot keeps every version, by a seal.
fn overwrite_then_gc(db: &Db) {
    let w = WriteOptions::default();
    db.put_opt(KEY, b"new", &w).unwrap();
    let mem = db.inner.versions.sv().mem.number();
    for i in 0..10_000u32 {
        if db.inner.versions.sv().mem.number() != mem {
            return;
        }
        db.put_opt(b"filler", [i as u8; 100], &w).unwrap();
    }
    panic!("the mutable PMTable was never replaced");
}

/// Overwrites `KEY`, then flushes every PMTable (the flush drops the old `KEY` unless a reader
/// is known to need it).
fn overwrite_then_flush(db: &Db) {
    db.put(KEY, b"new").unwrap();
    db.flush().unwrap();
}

fn latest_read(db: &Db) -> Option<Vec<u8>> {
    db.get(KEY).unwrap()
}

fn snapshot_read(db: &Db) -> Option<Vec<u8>> {
    let snapshot = db.snapshot();
    let at = ReadOptions {
        snapshot: Some(&snapshot),
        ..ReadOptions::default()
    };
    db.get_opt(KEY, &at).unwrap()
}

#[test]
fn read_pinned_during_gc_reads_its_version() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let got = read_across_job(&db, "read:seq_chosen", latest_read, overwrite_then_gc);
    assert_eq!(got.as_deref(), Some(&b"old"[..]));
    assert!(db.stats().pmtable_gcs > 0, "the job ran no GC");
}

#[test]
fn read_pinned_during_flush_reads_its_version() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let got = read_across_job(&db, "read:seq_chosen", latest_read, overwrite_then_flush);
    assert_eq!(got.as_deref(), Some(&b"old"[..]));
}

#[test]
fn snapshot_taken_during_gc_reads_its_version() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let got = read_across_job(&db, "snapshot:seq_chosen", snapshot_read, overwrite_then_gc);
    assert_eq!(got.as_deref(), Some(&b"old"[..]));
}

#[test]
fn snapshot_taken_during_flush_reads_its_version() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let got = read_across_job(
        &db,
        "snapshot:seq_chosen",
        snapshot_read,
        overwrite_then_flush,
    );
    assert_eq!(got.as_deref(), Some(&b"old"[..]));
}
