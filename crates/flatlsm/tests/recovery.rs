//! Recovery: crashes of simulated PM at every persist point of a workload, corrupted PM Logs,
//! and leftovers of interrupted jobs.

mod common;

use flatlsm::{Db, Error, Options, WriteBatch, WriteOptions};
use flatlsm_core::pm::simulated::SimulatedPmDevice;
use std::sync::Arc;

/// One step of the workload: a batch of `(key, value)` puts, written with or without sync.
struct Step {
    batch: Vec<(Vec<u8>, Vec<u8>)>,
    sync: bool,
}

fn workload() -> Vec<Step> {
    (0..60u32)
        .map(|i| {
            let n = 1 + (i % 3) as usize;
            let batch = (0..n)
                .map(|j| {
                    let len = [10, 120, 400][(i as usize + j) % 3];
                    (
                        format!("k{:03}-{j}", i % 40).into_bytes(),
                        vec![i as u8; len],
                    )
                })
                .collect();
            Step {
                batch,
                sync: i % 4 == 0,
            }
        })
        .collect()
}

fn crash_options(device: Arc<SimulatedPmDevice>) -> Options {
    let mut o = common::tiny_options(2);
    o.pm_device = Some(device);
    o.background_work = false;
    o.pm_persist_interval_ms = 3_600_000; // no timer commits: the test controls persistence
    o
}

/// Runs the workload, freezing the PM image after `freeze_at` persists of the workload; returns
/// how many steps were acknowledged durable before the freeze (sync steps whose persists all
/// preceded it), how many ran, and how many persists open made. The count starts once open returned: the SSD files are not crashed here, and
/// the manifest open writes records the PM Log open created (a PM image from before that point
/// with the manifest from after it is a state no power loss leaves: `pm_crash` crashes both).
fn run_until_freeze(
    dir: &std::path::Path,
    device: &Arc<SimulatedPmDevice>,
    freeze_at: u64,
) -> (usize, usize, u64) {
    let db = Db::open(dir, crash_options(device.clone())).unwrap();
    let opened = device.persist_count();
    let freeze_at = opened.saturating_add(freeze_at);
    device.freeze_after_persists(freeze_at, freeze_at);
    let mut durable_steps = 0;
    let mut done = 0;
    for (i, step) in workload().iter().enumerate() {
        let mut b = WriteBatch::new();
        for (k, v) in &step.batch {
            b.put(k, v);
        }
        db.write_opt(
            &b,
            &WriteOptions {
                sync: step.sync,
                ..WriteOptions::default()
            },
        )
        .unwrap();
        done = i + 1;
        if step.sync && device.persist_count() <= freeze_at {
            durable_steps = i + 1;
        }
    }
    drop(db);
    (durable_steps, done, opened)
}

/// The model after the first `n` steps.
fn state_after(n: usize) -> std::collections::BTreeMap<Vec<u8>, Vec<u8>> {
    let mut m = std::collections::BTreeMap::new();
    for s in workload().iter().take(n) {
        for (k, v) in &s.batch {
            m.insert(k.clone(), v.clone());
        }
    }
    m
}

fn read_all(db: &Db) -> std::collections::BTreeMap<Vec<u8>, Vec<u8>> {
    db.iter().unwrap().map(|r| r.unwrap()).collect()
}

#[test]
fn crash_at_every_persist_point_keeps_a_prefix_of_whole_batches_and_every_sync_write() {
    // Count the persists of a full run first.
    let probe_dir = tempfile::tempdir().unwrap();
    let probe = SimulatedPmDevice::new();
    let (_, _, opened) = run_until_freeze(probe_dir.path(), &probe, u64::MAX);
    let total = probe.persist_count() - opened;
    assert!(total > 20, "workload too small: {total} persists");
    let mut crash_points = 0;
    for freeze_at in 0..=total {
        let dir = tempfile::tempdir().unwrap();
        let device = SimulatedPmDevice::new();
        let (durable, done, _) = run_until_freeze(dir.path(), &device, freeze_at);
        let crashed = device.crash(freeze_at ^ 0x5eed);
        let db = Db::open(dir.path(), crash_options(crashed))
            .unwrap_or_else(|e| panic!("reopen after crash at persist {freeze_at} failed: {e}"));
        let got = read_all(&db);
        // The surviving state must equal the state after some prefix of whole steps,
        // at least as long as the last acknowledged sync step.
        let prefix = (durable..=done).find(|&n| state_after(n) == got);
        assert!(
            prefix.is_some(),
            "crash at persist {freeze_at}: state is not a prefix of whole batches >= {durable} steps"
        );
        for (k, v) in &got {
            assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
        }
        crash_points += 1;
    }
    assert!(crash_points > 20);
}

#[test]
fn corrupted_pm_log_entry_is_reported_with_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let device = SimulatedPmDevice::new();
    let db = Db::open(dir.path(), crash_options(device.clone())).unwrap();
    db.put_opt(
        b"key",
        [7u8; 300],
        &WriteOptions {
            sync: true,
            ..WriteOptions::default()
        },
    )
    .unwrap();
    drop(db);
    let name = device
        .region_names()
        .into_iter()
        .find(|n| {
            n.ends_with(".pmlog")
                && device
                    .durable_image(n)
                    .is_some_and(|img| img.iter().skip(64).any(|b| *b == 7))
        })
        .expect("a log holding the entry");
    device.corrupt(&name, 64 + 30, &[0xAB]).unwrap();
    let err = Db::open(dir.path(), crash_options(device.clone()))
        .err()
        .expect("corruption detected");
    assert!(matches!(err, Error::Corruption { .. }), "got {err}");
    let msg = err.to_string();
    assert!(
        msg.contains(&name) && msg.contains("offset 64"),
        "message lacks file/offset: {msg}"
    );
}

#[test]
fn bad_pm_log_magic_is_reported_with_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let device = SimulatedPmDevice::new();
    let db = Db::open(dir.path(), crash_options(device.clone())).unwrap();
    db.put_opt(
        b"key",
        b"value",
        &WriteOptions {
            sync: true,
            ..WriteOptions::default()
        },
    )
    .unwrap();
    drop(db);
    let name = device
        .region_names()
        .into_iter()
        .find(|n| n.ends_with(".pmlog"))
        .unwrap();
    device.corrupt(&name, 0, b"XXXX").unwrap();
    let err = Db::open(dir.path(), crash_options(device))
        .err()
        .expect("bad magic detected");
    assert!(
        err.is_corruption() && err.to_string().contains(&name),
        "got {err}"
    );
}

#[test]
fn orphan_files_of_an_interrupted_job_are_removed_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let device = SimulatedPmDevice::new();
    let db = Db::open(dir.path(), crash_options(device.clone())).unwrap();
    db.put(b"a", b"1").unwrap();
    db.flush().unwrap();
    drop(db);
    std::fs::write(dir.path().join("999999.sst"), b"half-written").unwrap();
    std::fs::write(dir.path().join("999998.vlog"), b"half-written").unwrap();
    let db = Db::open(dir.path(), crash_options(device)).unwrap();
    assert!(!dir.path().join("999999.sst").exists());
    assert!(!dir.path().join("999998.vlog").exists());
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
}

#[test]
fn recovery_after_flush_reads_from_sst_and_remaining_pmtables() {
    let dir = tempfile::tempdir().unwrap();
    let device = SimulatedPmDevice::new();
    let db = Db::open(dir.path(), crash_options(device.clone())).unwrap();
    for i in 0..2000u32 {
        db.put(format!("k{i:05}").as_bytes(), [i as u8; 150])
            .unwrap();
    }
    let before = read_all(&db);
    db.close().unwrap();
    drop(db);
    let db = Db::open(dir.path(), crash_options(device)).unwrap();
    assert!(db.stats().levels[0].files > 0, "expected a flushed L1 run");
    assert_eq!(read_all(&db), before);
}

#[test]
fn second_open_of_the_same_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let device = SimulatedPmDevice::new();
    let _db = Db::open(dir.path(), crash_options(device.clone())).unwrap();
    let err = Db::open(dir.path(), crash_options(device))
        .err()
        .expect("lock refused");
    assert!(
        err.to_string().contains("already open in this process"),
        "got {err}"
    );
}

#[test]
fn use_after_close_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), crash_options(SimulatedPmDevice::new())).unwrap();
    db.close().unwrap();
    assert!(matches!(db.put(b"k", b"v"), Err(Error::Closed)));
    assert!(matches!(db.get(b"k"), Err(Error::Closed)));
}

#[test]
fn oversized_key_and_value_are_refused_with_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), crash_options(SimulatedPmDevice::new())).unwrap();
    let err = db.put(vec![1u8; 70_000], b"v").unwrap_err();
    assert!(err.to_string().contains("limit"), "{err}");
    let err = db.put(b"k", vec![1u8; 40 << 10]).unwrap_err();
    assert!(err.to_string().contains("limit"), "{err}");
}
