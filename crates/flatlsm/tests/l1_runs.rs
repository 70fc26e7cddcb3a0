//! L1's unmerged runs: each flush writes a new run (level 0) without rewriting L1, reads search
//! the runs newest first, and a background merge folds them into the ordered L1 once
//! `l1_merge_trigger` exist.

mod common;

use flatlsm::{Db, Options, WriteOptions};
use flatlsm_core::pm::simulated::SimulatedPmDevice;
use std::sync::Arc;

fn options(device: &Arc<SimulatedPmDevice>, trigger: usize) -> Options {
    let mut o = common::tiny_options(2);
    o.pm_device = Some(device.clone());
    o.background_work = false;
    o.l1_merge_trigger = trigger;
    o
}

fn get(db: &Db, k: &str) -> Option<Vec<u8>> {
    db.get(k.as_bytes()).unwrap()
}

/// Writes `round`'s version of keys k000..k039 (k000..k009 deleted in odd rounds), then
/// flushes: one new run.
fn write_round(db: &Db, round: u32) {
    let w = WriteOptions::default();
    for i in 0..40u32 {
        let key = format!("k{i:03}");
        if round % 2 == 1 && i < 10 {
            db.delete_opt(key.as_bytes(), &w).unwrap();
        } else {
            db.put_opt(
                key.as_bytes(),
                format!("r{round}-{i}").repeat(20).as_bytes(),
                &w,
            )
            .unwrap();
        }
    }
    db.flush().unwrap();
}

fn expect_round(db: &Db, round: u32) {
    for i in 0..40u32 {
        let want = match round % 2 == 1 && i < 10 {
            true => None,
            false => Some(format!("r{round}-{i}").repeat(20).into_bytes()),
        };
        assert_eq!(
            get(db, &format!("k{i:03}")),
            want,
            "k{i:03} after round {round}"
        );
    }
}

#[test]
fn reads_find_the_newest_run_and_tombstones_in_newer_runs_hide_older_values() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(&SimulatedPmDevice::new(), 8)).unwrap();
    for round in 0..4 {
        write_round(&db, round);
        expect_round(&db, round);
    }
    let st = db.stats();
    assert_eq!((st.l1_runs, st.levels[1].files), (4, 0), "{st}");
    let keys = db.iter().unwrap().count();
    assert_eq!(keys, 30, "the odd round's deletes hide k000..k009");
}

#[test]
fn runs_merge_into_the_ordered_l1_at_the_trigger_and_keep_the_newest_versions() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(&SimulatedPmDevice::new(), 3)).unwrap();
    for round in 0..3 {
        write_round(&db, round);
    }
    assert_eq!(db.stats().l1_runs, 3);
    db.wait_for_background_work().unwrap();
    let st = db.stats();
    assert_eq!(st.l1_runs, 0, "{st}");
    assert!(st.levels[1].files > 0, "{st}");
    expect_round(&db, 2);
    write_round(&db, 3); // a run over the merged L1: its deletes hide L1's values
    expect_round(&db, 3);
}

#[test]
fn a_flush_waits_for_the_merge_when_six_times_the_trigger_runs_exist() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(&SimulatedPmDevice::new(), 2)).unwrap();
    for round in 0..14 {
        write_round(&db, round);
        // Without background threads the waiting flush runs the merge itself.
        assert!(db.stats().l1_runs <= 12, "round {round}: {}", db.stats());
    }
    assert!(
        db.stats().compactions > 0,
        "the thirteenth flush merged first"
    );
    expect_round(&db, 13);
}

#[test]
fn run_order_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let device = SimulatedPmDevice::new();
    let db = Db::open(dir.path(), options(&device, 8)).unwrap();
    for round in 0..5 {
        write_round(&db, round);
    }
    db.close().unwrap();
    drop(db);
    let db = Db::open(dir.path(), options(&device, 8)).unwrap();
    assert_eq!(db.stats().l1_runs, 5);
    expect_round(&db, 4);
    db.compact_range(None, None).unwrap();
    assert_eq!(db.stats().l1_runs, 0);
    expect_round(&db, 4);
}
