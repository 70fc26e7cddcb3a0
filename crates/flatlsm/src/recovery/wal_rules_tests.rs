//! The write-ahead log rules of `wal_rules.rs` on made-up logs: range tombstones between two
//! logs, logs without a sequence marker, unnamed logs, and recovery to a point in time.

use super::wal_rules::*;
use crate::error::Error;
use crate::range_del::{RangeTombstone, RangeTombstones};
use crate::version::{ManifestState, RecoveredManifest};
use crate::wal::WalReplay;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// A whole log's replay: its marker and `entries` up to sequence `max`.
fn log(after: Option<u64>, entries: u64, max: u64) -> WalScan {
    logt(after, entries, max, false)
}

/// A log's replay: its marker, `entries` up to sequence `max`, a torn tail or not.
fn logt(after: Option<u64>, entries: u64, max: u64, torn: bool) -> WalScan {
    let r = WalReplay {
        entries,
        records: entries,
        max_sequence: max,
        after,
        end: 100,
        len: if torn { 103 } else { 100 },
        torn_tail: torn.then(|| "torn".to_string()),
        ..WalReplay::default()
    };
    (r, None)
}

/// A manifest naming `named` at or above `min`, with range tombstones at `tombstones`.
/// The next file number the test manifests record: above every log of the tests but those of
/// `a_log_whose_record_was_in_flight_is_replayed_after_the_named_ones`.
const NEXT_FILE: u64 = 50;

fn manifest(min: u64, named: &[u64], tombstones: &[u64]) -> RecoveredManifest {
    let mut state = ManifestState {
        min_unflushed_pmlog: min,
        pm_logs: Some(named.iter().copied().collect()),
        next_file_number: NEXT_FILE,
        ..ManifestState::default()
    };
    let t = tombstones.iter().map(|&seq| RangeTombstone {
        start: b"a".to_vec(),
        end: b"b".to_vec(),
        seq,
    });
    state.version.range_dels = Arc::new(RangeTombstones::new(t.collect()));
    RecoveredManifest {
        path: "MANIFEST-000004".into(),
        state,
        records: 1,
        torn_tail: None,
    }
}

fn plan(m: &RecoveredManifest, logs: Vec<(u64, WalScan)>, point_in_time: bool) -> WalPlan {
    let present: Vec<u64> = logs.iter().map(|(n, _)| *n).collect();
    let mut logs: BTreeMap<u64, WalScan> = logs.into_iter().collect();
    let w = WalDir {
        dir: Path::new("/wal"),
        manifest: m,
        present: &present,
        point_in_time,
    };
    plan_wals(&w, |n| Ok(logs.remove(&n).expect("read once"))).unwrap()
}

fn kept(p: &WalPlan) -> Vec<u64> {
    p.keep.iter().map(|k| k.number).collect()
}

fn dropped(p: &WalPlan) -> Vec<u64> {
    p.drop.iter().map(|(n, _)| *n).collect()
}

/// The file and offset of each problem.
fn problems(p: &WalPlan) -> Vec<(String, u64)> {
    let at = |e: &Error| match e {
        Error::Corruption { file, offset, .. } => (file.display().to_string(), *offset),
        other => panic!("not corruption: {other}"),
    };
    p.problems.iter().map(at).collect()
}

#[test]
fn logs_that_continue_each_other_or_leave_room_for_range_tombstones_are_kept() {
    let m = manifest(5, &[5, 7, 9], &[21, 22]);
    let logs = vec![
        (5, log(Some(0), 20, 20)),
        (7, log(Some(22), 10, 32)), // 21 and 22 are range tombstones
        (9, log(Some(32), 0, 0)),
    ];
    let p = plan(&m, logs, false);
    assert_eq!((kept(&p), problems(&p)), (vec![5, 7, 9], vec![]));
}

#[test]
fn writes_missing_between_two_logs_are_a_hole_in_the_older_one() {
    let m = manifest(5, &[5, 7, 9], &[21]);
    let logs = || {
        vec![
            (5, log(Some(0), 19, 19)),
            (7, log(Some(22), 10, 32)), // 20 and 22 are neither in log 5 nor tombstones
            (9, log(Some(32), 3, 35)),
        ]
    };
    let p = plan(&m, logs(), false);
    assert_eq!(problems(&p), vec![("/wal/000005.log".into(), 100)]);
    let p = plan(&m, logs(), true);
    assert_eq!((kept(&p), dropped(&p)), (vec![5], vec![7, 9]));
    assert!(p.problems.is_empty() && !p.notes.is_empty());
}

#[test]
fn a_log_without_a_marker_is_not_checked_against_the_older_one() {
    let m = manifest(5, &[5, 7], &[]);
    let logs = vec![(5, log(None, 19, 19)), (7, log(None, 10, 40))];
    let p = plan(&m, logs, false);
    assert_eq!((kept(&p), problems(&p)), (vec![5, 7], vec![]));
}

#[test]
fn only_the_newest_log_may_end_in_a_torn_tail() {
    let m = manifest(5, &[5, 7], &[]);
    let p = plan(
        &m,
        vec![(5, log(Some(0), 9, 9)), (7, logt(Some(9), 2, 11, true))],
        false,
    );
    assert_eq!((kept(&p), problems(&p)), (vec![5, 7], vec![]));
    assert_eq!(p.notes.len(), 1);
    let logs = vec![
        (5, logt(Some(0), 9, 9, true)),
        (7, logt(Some(9), 2, 11, false)),
    ];
    let p = plan(&m, logs, false);
    assert_eq!(problems(&p), vec![("/wal/000005.log".into(), 100)]);
    // A log from before markers: an open then recovered it torn without sealing it.
    let logs = vec![(5, logt(None, 9, 9, true)), (7, logt(None, 2, 11, false))];
    let p = plan(&m, logs, false);
    assert_eq!((kept(&p), problems(&p)), (vec![5, 7], vec![]));
}

#[test]
fn a_missing_log_is_a_hole_and_point_in_time_recovery_stops_before_it() {
    let m = manifest(5, &[5, 7, 9], &[]);
    let logs = || vec![(5, log(Some(0), 9, 9)), (9, log(Some(20), 2, 22))];
    let p = plan(&m, logs(), false);
    assert_eq!(problems(&p), vec![("/wal/000007.log".into(), 0)]);
    let p = plan(&m, logs(), true);
    assert_eq!((kept(&p), dropped(&p)), (vec![5], vec![9]));
}

/// A log the open that wrote the manifest dropped (numbered below it) is removed even with
/// writes: a crash came between that manifest and the deletion.
#[test]
fn logs_dropped_by_the_open_that_wrote_the_manifest_are_removed() {
    let mut m = manifest(2, &[2, 13], &[]);
    m.path = "/db/MANIFEST-000012".into();
    let logs = vec![
        (2, log(Some(0), 4, 4)),
        (7, log(Some(4), 5, 9)),
        (13, log(Some(4), 1, 20)),
    ];
    let p = plan(&m, logs, false);
    assert_eq!((kept(&p), dropped(&p)), (vec![2, 13], vec![7]));
    assert!(p.problems.is_empty());
}

/// A switch queues its log's record (`db/buffer_records.rs`): a crash before the manifest
/// append leaves the newest logs unnamed, numbered at or above the manifest's next file
/// number. They are replayed after the named ones, under the same continuity rule.
#[test]
fn a_log_whose_record_was_in_flight_is_replayed_after_the_named_ones() {
    let m = manifest(5, &[5], &[]);
    let logs = vec![
        (5, log(Some(4), 5, 9)),
        (NEXT_FILE, log(Some(9), 3, 12)),
        (NEXT_FILE + 1, log(Some(12), 2, 14)),
    ];
    let p = plan(&m, logs, false);
    assert_eq!(kept(&p), vec![5, NEXT_FILE, NEXT_FILE + 1]);
    assert!(p.problems.is_empty(), "{:?}", p.problems);
    let gap = vec![(5, log(Some(4), 5, 9)), (NEXT_FILE, log(Some(11), 3, 14))];
    let p = plan(&m, gap, false);
    assert_eq!(p.problems.len(), 1, "writes 10 and 11 are missing: a hole");
}

#[test]
fn unnamed_logs_are_removed_unless_they_hold_writes() {
    let m = manifest(5, &[5], &[]);
    let logs = vec![
        (3, log(Some(0), 4, 4)), // flushed
        (5, log(Some(4), 5, 9)),
        (8, log(Some(9), 0, 0)),   // created, never named
        (10, log(Some(9), 3, 12)), // named by a record the manifest lost
    ];
    let p = plan(&m, logs, true);
    assert_eq!((kept(&p), dropped(&p)), (vec![5], vec![3, 8]));
    assert_eq!(problems(&p), vec![("/wal/000010.log".into(), 16)]);
}
