//! Parallel flush/compaction and value-log GC scenarios.

mod common;

use flatlsm::{Db, Options, WriteOptions};
use flatlsm_core::pm::simulated::SimulatedPmDevice;

fn controlled(flush_threads: usize) -> Options {
    let mut o = common::tiny_options(flush_threads);
    o.pm_device = Some(SimulatedPmDevice::new());
    o.background_work = false;
    o
}

fn get(db: &Db, k: &[u8]) -> Option<Vec<u8>> {
    db.get(k).unwrap()
}

/// Regression: Algorithm 5 as printed gives each thread only the L1 files overlapping its own
/// PMTable keys, losing the keys of a file that lie after the thread's last PMTable key.
#[test]
fn flush_keeps_l1_keys_between_thread_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = controlled(2);
    opts.target_file_size = 1024;
    opts.block_size = 256;
    opts.kv_separation_threshold = 1000;
    let db = Db::open(dir.path(), opts).unwrap();
    let w = WriteOptions::default();
    for c in b'a'..=b'z' {
        db.put_opt([c], [c; 200], &w).unwrap();
    }
    db.flush().unwrap();
    let st = db.stats();
    assert!(st.levels[0].files >= 3, "need a run of several files: {st}");
    for k in [&b"b1"[..], b"c1", b"x1", b"y1"] {
        db.put_opt(k, b"new", &w).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap(); // merges both runs into the ordered L1, then L2
    for c in b'a'..=b'z' {
        assert_eq!(get(&db, &[c]), Some(vec![c; 200]), "lost key {}", c as char);
    }
    for k in [&b"b1"[..], b"c1", b"x1", b"y1"] {
        assert_eq!(get(&db, k), Some(b"new".to_vec()));
    }
}

#[test]
fn flush_separates_large_values_into_value_logs_and_keeps_small_ones_inline() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), controlled(4)).unwrap();
    let w = WriteOptions::default();
    for i in 0..300u32 {
        let len = if i % 2 == 0 { 20 } else { 500 };
        db.put_opt(format!("k{i:04}").as_bytes(), vec![i as u8; len], &w)
            .unwrap();
    }
    db.flush().unwrap();
    let st = db.stats();
    assert!(st.flush_vlog_bytes > 0 && !st.vlogs.is_empty());
    assert_eq!(st.pmtables, 1);
    for i in 0..300u32 {
        let len = if i % 2 == 0 { 20 } else { 500 };
        assert_eq!(
            get(&db, format!("k{i:04}").as_bytes()),
            Some(vec![i as u8; len])
        );
    }
}

#[test]
fn value_log_gc_reclaims_overwritten_values_and_deletes_empty_logs() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), controlled(2)).unwrap();
    let w = WriteOptions::default();
    for round in 0..6u8 {
        for i in 0..100u32 {
            db.put_opt(format!("k{i:04}").as_bytes(), vec![round; 400], &w)
                .unwrap();
        }
        db.flush().unwrap();
    }
    db.wait_for_background_work().unwrap();
    let st = db.stats();
    for v in &st.vlogs {
        assert!(
            v.live_bytes as f64 >= v.total_bytes as f64 * 0.5,
            "vlog {} left with more garbage than the GC ratio: {st}",
            v.number
        );
    }
    let vlog_files = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".vlog")
        })
        .count();
    assert_eq!(
        vlog_files,
        st.vlogs.len(),
        "unreferenced value logs were not deleted"
    );
    for i in 0..100u32 {
        assert_eq!(get(&db, format!("k{i:04}").as_bytes()), Some(vec![5; 400]));
    }
}

#[test]
fn value_log_files_stay_while_an_iterator_can_reach_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), controlled(1)).unwrap();
    let w = WriteOptions::default();
    for i in 0..50u32 {
        db.put_opt(format!("k{i:04}").as_bytes(), [1; 400], &w)
            .unwrap();
    }
    db.flush().unwrap();
    let snap = db.snapshot();
    let ro = flatlsm::ReadOptions {
        snapshot: Some(&snap),
        ..Default::default()
    };
    let mut it = db.iter_opt(&ro).unwrap();
    for i in 0..50u32 {
        db.put_opt(format!("k{i:04}").as_bytes(), [2; 400], &w)
            .unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    db.wait_for_background_work().unwrap();
    let mut n = 0;
    while it.valid() {
        assert_eq!(it.value(), &[1; 400][..]);
        it.advance();
        n += 1;
    }
    it.status().unwrap();
    assert_eq!(n, 50);
}

#[test]
fn l1_over_capacity_compacts_into_l2() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = controlled(2);
    opts.l1_capacity = 16 << 10;
    opts.l1_merge_trigger = 1;
    let db = Db::open(dir.path(), opts).unwrap();
    let w = WriteOptions::default();
    for i in 0..3000u32 {
        db.put_opt(
            format!("k{:05}", (i * 7919) % 3000).as_bytes(),
            [i as u8; 60],
            &w,
        )
        .unwrap();
    }
    db.flush().unwrap();
    db.wait_for_background_work().unwrap();
    let st = db.stats();
    assert!(st.levels[2].files > 0, "nothing reached L2: {st}");
    assert!(
        st.levels[1].bytes <= 16 << 10 || st.levels[1].files <= 1,
        "L1 still over capacity: {st}"
    );
    assert_eq!(db.iter().unwrap().count(), 3000);
}

#[test]
fn deletes_hide_keys_across_levels_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let opts = controlled(2);
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let w = WriteOptions::default();
    for i in 0..200u32 {
        db.put_opt(format!("k{i:04}").as_bytes(), [3; 150], &w)
            .unwrap();
    }
    db.compact_range(None, None).unwrap();
    for i in (0..200u32).step_by(2) {
        db.delete_opt(format!("k{i:04}").as_bytes(), &w).unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    drop(db);
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..200u32 {
        let want = (i % 2 == 1).then(|| vec![3; 150]);
        assert_eq!(get(&db, format!("k{i:04}").as_bytes()), want);
    }
    assert_eq!(db.iter().unwrap().count(), 100);
}

/// A flush merges every immutable PMTable in one job (one pass over L1 instead of one per
/// table); versions of one key spread over several tables resolve to the newest.
#[test]
fn one_flush_merges_every_immutable_table_keeping_the_newest_versions() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = controlled(2);
    opts.flush_immutable_num = 4;
    opts.max_write_buffer_number = 6;
    let db = Db::open(dir.path(), opts).unwrap();
    let w = WriteOptions::default();
    // Fresh keys each round so the tables fill and seal (a table of overwrites is GC'd
    // instead); the shared keys k000..k049 get a new version each round.
    let mut round = 0u32;
    while db.stats().pmtables < 4 {
        for i in 0..50u32 {
            let value = format!("v{round}-{i}").repeat(8);
            db.put_opt(format!("k{i:03}").as_bytes(), value.as_bytes(), &w)
                .unwrap();
            db.put_opt(
                format!("r{round:05}-{i:03}").as_bytes(),
                value.as_bytes(),
                &w,
            )
            .unwrap();
        }
        round += 1;
    }
    db.flush().unwrap();
    let st = db.stats();
    assert_eq!(st.flushes, 1, "one job for all immutable tables");
    assert_eq!(st.pmtables, 1);
    for i in 0..50u32 {
        let want = format!("v{}-{i}", round - 1).repeat(8);
        assert_eq!(
            get(&db, format!("k{i:03}").as_bytes()),
            Some(want.into_bytes())
        );
    }
}
