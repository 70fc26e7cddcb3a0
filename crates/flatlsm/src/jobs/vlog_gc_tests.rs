//! Value-log GC racing flushes and compactions, held mid-job at sync points: other jobs commit
//! while it runs (it reserves nothing), their outputs may still name the victim (covered by the
//! redirect table), and a GC whose victim was dropped meanwhile is abandoned cleanly.

use super::background::vlog_gc_one;
use super::compact::compact_one;
use super::Db;
use crate::db::quiet::Writers;
use crate::options::Options;
use crate::pm::simulated::SimulatedPmDevice;
use std::path::Path;
use std::time::Duration;

/// 64 KiB PMTables on simulated PM, values of 300 bytes separated, no background threads, one
/// flush thread (so each flush writes one value log), no timer commits (the timer thread holds
/// the current version for a moment, and a purge then keeps its files).
fn options(pm: std::sync::Arc<SimulatedPmDevice>) -> Options {
    Options {
        pm_device: Some(pm),
        pmtable_size: 64 << 10,
        flush_immutable_num: 2,
        max_write_buffer_number: 4,
        flush_threads: 1,
        target_file_size: 8 << 10,
        kv_separation_threshold: 100,
        block_cache_size: 1 << 20,
        vlog_gc_garbage_ratio: 0.3,
        // Each flush's run merges into L1 at once, dropping overwritten values: garbage.
        l1_merge_trigger: 1,
        background_work: false,
        pm_persist_interval_ms: 3_600_000,
        ..Options::default()
    }
}

fn value(round: u8, i: u32) -> Vec<u8> {
    let mut v = format!("{}-{i:04}-", round as char).into_bytes();
    v.resize(300, round);
    v
}

fn key(i: u32) -> Vec<u8> {
    format!("k{i:04}").into_bytes()
}

fn put_round(db: &Db, round: u8, keys: std::ops::Range<u32>) {
    for i in keys {
        db.put(key(i), value(round, i)).unwrap();
    }
}

/// Round `a` over keys 0..100 (log A), then round `b` over 0..60, both flushed and their runs
/// merged into L1: A is 60% garbage. Returns A's number.
fn log_with_garbage(db: &Db) -> u64 {
    put_round(db, b'a', 0..100);
    db.flush().unwrap();
    let a = *db.inner.versions.lock().current.vlogs.keys().max().unwrap();
    put_round(db, b'b', 0..60);
    db.flush().unwrap();
    while super::compact::compact_one(&db.inner, Writers::Busy).unwrap() {}
    a
}

/// What the rounds wrote, by key.
type Model = std::collections::BTreeMap<Vec<u8>, Vec<u8>>;

fn model(rounds: &[(u8, std::ops::Range<u32>)]) -> Model {
    let mut m = Model::new();
    for (round, keys) in rounds {
        for i in keys.clone() {
            m.insert(key(i), value(*round, i));
        }
    }
    m
}

fn check(db: &Db, want: &Model) {
    let got: Model = db.iter().unwrap().map(|r| r.unwrap()).collect();
    assert!(&got == want, "iterator differs from the model");
    for (k, v) in want {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
    }
}

/// True if some SST of the current version names value log `n`.
fn named(db: &Db, n: u64) -> bool {
    let v = db.inner.versions.current();
    let refs = v.levels.iter().flatten().flat_map(|f| f.vlog_refs.clone());
    refs.clone().any(|(log, _)| log == n)
}

/// The file number of `victim`'s redirect table.
fn redirect_table_of(db: &Db, victim: u64) -> u64 {
    db.inner.versions.lock().current.redirects[&victim].number
}

/// Runs a GC in a thread held at `point` while `job` runs here; returns what the GC returned.
fn gc_across(db: &Db, point: &'static str, job: impl FnOnce(&Db)) -> bool {
    let pause = db.inner.sync_points.pause_once(point);
    std::thread::scope(|s| {
        let gc = s.spawn(|| vlog_gc_one(&db.inner, Writers::Busy).unwrap());
        pause.wait_reached(Duration::from_secs(10));
        job(db);
        pause.resume();
        gc.join().unwrap()
    })
}

/// Small keys at both ends of the key space, flushed and compacted: the L1 file overlaps every
/// L2 file, so L1 → L2 compaction rewrites them all. Returns what it wrote.
fn rewrite_all_ssts(db: &Db) -> Model {
    let ends = [b"k".to_vec(), b"l".to_vec()];
    for k in &ends {
        db.put(k, b"end").unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    ends.into_iter().map(|k| (k, b"end".to_vec())).collect()
}

fn flush_and_compact_while_held(db: &Db) {
    put_round(db, b'c', 60..80);
    put_round(db, b'd', 100..120);
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
}

/// A flush and a compaction commit while a GC is held after its scan and before its commit;
/// their outputs copy pointers into the victim before the redirect exists, and every value
/// still reads back (now, after a later compaction rewrites them, and after reopen).
#[test]
fn flush_commits_while_a_gc_job_is_in_progress() {
    for point in ["vlog_gc:records_collected", "vlog_gc:before_commit"] {
        let dir = tempfile::tempdir().unwrap();
        let pm = SimulatedPmDevice::new();
        let db = Db::open(dir.path(), options(pm.clone())).unwrap();
        let victim = log_with_garbage(&db);
        let flushes = db.stats().flushes;
        assert!(
            gc_across(&db, point, flush_and_compact_while_held),
            "{point}"
        );
        let st = db.stats();
        assert_eq!(
            (st.vlog_gcs, st.flushes, st.vlog_redirects),
            (1, flushes + 1, 1)
        );
        assert!(
            named(&db, victim),
            "{point}: the held GC's concurrent outputs name the victim"
        );
        assert!(!dir.path().join(format!("{victim:06}.vlog")).exists());
        let mut want = model(&[
            (b'a', 0..100),
            (b'b', 0..60),
            (b'c', 60..80),
            (b'd', 100..120),
        ]);
        check(&db, &want);
        let table = redirect_table_of(&db, victim);
        want.extend(rewrite_all_ssts(&db));
        assert!(
            !named(&db, victim),
            "{point}: compaction rewrote every pointer into the victim"
        );
        compact_one(&db.inner, Writers::Busy).unwrap(); // drops the redirect nothing needs
        assert!(!db
            .inner
            .versions
            .lock()
            .current
            .redirects
            .contains_key(&victim));
        assert!(!dir.path().join(format!("{table:06}.vredir")).exists());
        check(&db, &want);
        drop(db);
        let db = Db::open(dir.path(), options(pm)).unwrap();
        check(&db, &want);
    }
}

/// A GC whose victim another job dropped while it ran commits nothing and leaves no file.
#[test]
fn gc_of_a_log_dropped_meanwhile_is_abandoned_and_its_outputs_removed() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(SimulatedPmDevice::new())).unwrap();
    let victim = log_with_garbage(&db);
    let overwrite_victim = |db: &Db| {
        put_round(db, b'e', 60..100);
        db.flush().unwrap();
        db.compact_range(None, None).unwrap();
        compact_one(&db.inner, Writers::Busy).unwrap(); // drops the unreferenced victim
        assert!(!db.inner.versions.lock().current.vlogs.contains_key(&victim));
    };
    assert!(!gc_across(&db, "vlog_gc:before_commit", overwrite_victim));
    let st = db.stats();
    assert_eq!((st.vlog_gcs, st.vlog_redirects), (0, 0));
    assert!(db.inner.versions.pending_outputs().is_empty());
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let logs = names.iter().filter(|n| n.ends_with(".vlog")).count();
    assert_eq!(logs, st.vlogs.len(), "{names:?}");
    assert!(!names.iter().any(|n| n.ends_with(".vredir")), "{names:?}");
    check(
        &db,
        &model(&[(b'a', 0..100), (b'b', 0..60), (b'e', 60..100)]),
    );
}

/// A reader holding the version from before the GC reads the victim directly; its file stays
/// until that reader is gone, and is deleted by the next purge after that.
#[test]
fn iterator_from_before_the_gc_keeps_the_victim_file_until_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(SimulatedPmDevice::new())).unwrap();
    let victim = log_with_garbage(&db);
    let file = dir.path().join(format!("{victim:06}.vlog"));
    let mut it = db.iter().unwrap();
    assert!(vlog_gc_one(&db.inner, Writers::Busy).unwrap());
    assert!(file.exists(), "a live iterator's version names the victim");
    let mut n = 0;
    while it.valid() {
        let i = n;
        let round = if i < 60 { b'b' } else { b'a' };
        assert_eq!((it.key(), it.value()), (&key(i)[..], &value(round, i)[..]));
        it.next();
        n += 1;
    }
    assert_eq!(n, 100);
    drop(it);
    super::purge::purge_obsolete_files(&db.inner).unwrap();
    assert!(!file.exists());
}

/// The picker never picks the target of a live redirect (no chains) even with more garbage.
#[test]
fn redirect_target_is_not_picked_while_the_redirect_lives() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(SimulatedPmDevice::new())).unwrap();
    log_with_garbage(&db);
    assert!(vlog_gc_one(&db.inner, Writers::Busy).unwrap());
    put_round(&db, b'f', 60..90); // 30 of the 40 records of the target are garbage now
    db.flush().unwrap();
    let v = db.inner.versions.current();
    let target = v.redirects.values().next().unwrap().target;
    assert!(v.is_redirect_target(target) && v.vlogs.contains_key(&target));
    assert!(
        !vlog_gc_one(&db.inner, Writers::Busy).unwrap(),
        "picked the target of a live redirect"
    );
    assert!(Path::new(&dir.path().join(format!("{target:06}.vlog"))).exists());
}

/// A log 20% garbage is not due while writers are busy (the whole set is below 25%), but
/// waiting for the background work collects down to the quiet ratio (5%) and rewrites the files
/// that named the log, so no get goes through its redirect table; reads unchanged.
#[test]
fn waiting_for_background_work_collects_value_logs_down_to_the_quiet_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(SimulatedPmDevice::new())).unwrap();
    put_round(&db, b'a', 0..100);
    db.flush().unwrap();
    let a = *db.inner.versions.lock().current.vlogs.keys().max().unwrap();
    put_round(&db, b'b', 0..20);
    db.flush().unwrap();
    while compact_one(&db.inner, Writers::Busy).unwrap() {}
    assert!(
        !vlog_gc_one(&db.inner, Writers::Busy).unwrap(),
        "20% is not due while busy"
    );
    db.wait_for_background_work().unwrap();
    let v = db.inner.versions.current();
    assert!(
        !v.vlogs.contains_key(&a),
        "the quiet ratio collected log {a}"
    );
    check(&db, &model(&[(b'a', 0..100), (b'b', 0..20)]));
}
