//! Model-based tests: random operations (puts, deletes, batches, range deletes) against
//! FlatLSM and a `BTreeMap`, compared after every step that can change what is stored (flush,
//! compaction, GC, reopen).

mod common;

use flatlsm::{Db, Options, ReadOptions, WriteBatch, WriteOptions};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::path::Path;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn key(rng: &mut StdRng, space: u32) -> Vec<u8> {
    format!("key{:06}", rng.gen_range(0..space)).into_bytes()
}

fn value(rng: &mut StdRng) -> Vec<u8> {
    // Mix of inline (< 100 B) and separated (>= 100 B) values, some over the 256 B buffer limit.
    let len = match rng.gen_range(0..10) {
        0..=4 => rng.gen_range(0..64),
        5..=7 => rng.gen_range(100..300),
        _ => rng.gen_range(300..1500),
    };
    let b = rng.gen::<u8>();
    (0..len).map(|i| b.wrapping_add(i as u8)).collect()
}

fn check_all(db: &Db, model: &Model) {
    let got: Vec<(Vec<u8>, Vec<u8>)> = db.iter().unwrap().map(|r| r.unwrap()).collect();
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(got.len(), want.len(), "iterator length");
    assert!(got == want, "iterator content differs from the model");
    for (k, v) in model.iter().step_by(7) {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
    }
    check_multi_get(db, model);
}

/// `multi_get` in batches of 16 (the batched read path) over every third stored key and as
/// many absent ones (a stored key with a byte added: between two keys of the key space).
fn check_multi_get(db: &Db, model: &Model) {
    let stored = model.keys().step_by(3).cloned();
    let absent = model.keys().step_by(3).map(|k| [&k[..], b"+"].concat());
    let keys: Vec<Vec<u8>> = stored.zip(absent).flat_map(|(s, a)| [s, a]).collect();
    for batch in keys.chunks(16) {
        for (k, got) in batch.iter().zip(db.multi_get(batch)) {
            assert_eq!(got.unwrap().as_ref(), model.get(k), "multi_get of {k:?}");
        }
    }
}

/// Runs `steps` random operations; reopens through `reopen` now and then.
fn run_model(seed: u64, steps: usize, opts: Options, dir: &Path) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut db = Db::open(dir, opts.clone()).unwrap();
    let mut model = Model::new();
    let mut snaps: Vec<(flatlsm::Snapshot, Model)> = Vec::new();
    let w = WriteOptions::default();
    for step in 0..steps {
        match rng.gen_range(0..100) {
            0..=54 => {
                let (k, v) = (key(&mut rng, 400), value(&mut rng));
                db.put_opt(&k, &v, &w).unwrap();
                model.insert(k, v);
            }
            55..=69 => {
                let k = key(&mut rng, 400);
                db.delete_opt(&k, &w).unwrap();
                model.remove(&k);
            }
            70..=79 => {
                let mut b = WriteBatch::new();
                for _ in 0..rng.gen_range(1..8) {
                    let k = key(&mut rng, 400);
                    if rng.gen_bool(0.7) {
                        let v = value(&mut rng);
                        b.put(&k, &v);
                        model.insert(k, v);
                    } else {
                        b.delete(&k);
                        model.remove(&k);
                    }
                }
                db.write_opt(&b, &w).unwrap();
            }
            80..=89 => {
                let k = key(&mut rng, 400);
                assert_eq!(db.get(&k).unwrap(), model.get(&k).cloned(), "step {step}");
            }
            90..=92 if snaps.len() < 3 => snaps.push((db.snapshot(), model.clone())),
            93 => snaps.clear(),
            94 => {
                db.flush().unwrap();
                check_all(&db, &model);
            }
            95 => {
                db.compact_range(None, None).unwrap();
                check_all(&db, &model);
            }
            96 => db.wait_for_background_work().unwrap(),
            98 => {
                // Mostly up to ten keys (to the end of `lo`'s decade), sometimes a wide range.
                let lo = key(&mut rng, 400);
                let to = if rng.gen_bool(0.8) {
                    lo.clone()
                } else {
                    key(&mut rng, 400)
                };
                let hi = [&to[..8], b"~"].concat().max(lo.clone());
                db.delete_range(&lo, &hi).unwrap();
                model.retain(|k, _| k < &lo || k >= &hi);
            }
            97 if snaps.is_empty() => {
                db.close().unwrap();
                drop(db);
                db = Db::open(dir, opts.clone()).unwrap();
                check_all(&db, &model);
            }
            _ => {}
        }
        for (snap, m) in &snaps {
            if step % 50 == 0 {
                let ro = ReadOptions {
                    snapshot: Some(snap),
                    ..ReadOptions::default()
                };
                let got: Vec<_> = db.iter_opt(&ro).unwrap().map(|r| r.unwrap()).collect();
                let want: Vec<_> = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                assert!(got == want, "snapshot view changed at step {step}");
            }
        }
    }
    check_all(&db, &model);
    snaps.clear();
    db.close().unwrap();
    drop(db);
    let db = Db::open(dir, opts).unwrap();
    check_all(&db, &model);
}

#[test]
fn model_matches_btreemap_on_simulated_pm_with_one_flush_thread() {
    let dir = tempfile::tempdir().unwrap();
    run_model(1, 3000, common::simulated(1), dir.path());
}

#[test]
fn model_matches_btreemap_on_simulated_pm_with_four_flush_threads() {
    let dir = tempfile::tempdir().unwrap();
    run_model(2, 3000, common::simulated(4), dir.path());
}

#[test]
fn model_matches_btreemap_on_msync_pm() {
    let dir = tempfile::tempdir().unwrap();
    let opts = common::msync(dir.path(), 2);
    run_model(3, 2000, opts, &dir.path().join("db"));
}

#[test]
fn model_matches_btreemap_without_background_threads() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = common::simulated(3);
    opts.background_work = false;
    run_model(4, 2500, opts, dir.path());
}

#[test]
fn model_matches_btreemap_with_heavy_overwrites_triggering_pmtable_gc() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = common::simulated(2);
    opts.pmtable_gc_ratio = 2.0;
    let db = Db::open(dir.path(), opts).unwrap();
    let mut model = Model::new();
    for i in 0..4000u32 {
        let k = format!("hot{}", i % 5).into_bytes();
        let v = vec![(i % 251) as u8; 200];
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    assert!(db.stats().pmtable_gcs > 0, "PMTable GC never ran");
    check_all(&db, &model);
}

#[test]
fn model_matches_btreemap_on_novelsm_pm_skiplists() {
    let dir = tempfile::tempdir().unwrap();
    run_model(8, 3000, common::novelsm(false), dir.path());
}

#[test]
fn model_matches_btreemap_on_novelsm_with_value_separation_without_background_threads() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = common::novelsm(true);
    opts.background_work = false;
    run_model(9, 2500, opts, dir.path());
}

#[test]
fn model_matches_btreemap_on_leveled_with_wal() {
    let dir = tempfile::tempdir().unwrap();
    run_model(5, 3000, common::leveled(2, false), dir.path());
}

#[test]
fn model_matches_btreemap_on_leveled_with_value_separation() {
    let dir = tempfile::tempdir().unwrap();
    run_model(6, 3000, common::leveled(1, true), dir.path());
}

#[test]
fn model_matches_btreemap_on_leveled_without_background_threads() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = common::leveled(2, false);
    opts.background_work = false;
    run_model(7, 2500, opts, dir.path());
}

#[test]
fn model_matches_btreemap_on_leveled_with_level0_in_pm() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = common::leveled(2, false);
    opts.leveled.level0_in_pm = true;
    run_model(8, 3000, opts, dir.path());
}

#[test]
fn model_matches_btreemap_on_slmdb_with_its_pm_index() {
    let dir = tempfile::tempdir().unwrap();
    run_model(11, 3000, common::slmdb(), dir.path());
}

#[test]
fn model_matches_btreemap_on_slmdb_without_background_threads() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = common::slmdb();
    opts.background_work = false;
    run_model(12, 2500, opts, dir.path());
}

#[test]
fn model_matches_btreemap_on_matrixkv_rows_and_column_compactions() {
    let dir = tempfile::tempdir().unwrap();
    run_model(9, 3000, common::matrixkv(), dir.path());
}

#[test]
fn model_matches_btreemap_on_matrixkv_without_background_threads() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = common::matrixkv();
    opts.background_work = false;
    run_model(10, 2500, opts, dir.path());
}

/// Regression: with `leaf_node_threshold = 2` (accepted by validation) every leaf-node scan
/// flagged the ~3 files behind its window, fresh compaction outputs included, so selective
/// compaction never settled: `wait_for_background_work` / `compact_range` never returned
/// (seeds 2 and 5 without background threads; 4 and 8, among others, with them). Once it
/// settled, the runs with background threads showed snapshot scans missing keys: a flush
/// indexed during a compaction made entries a snapshot taken meanwhile reads look dead. A
/// watchdog turns a hang into a failure.
#[test]
fn slmdb_compaction_settles_and_keeps_snapshots_with_a_leaf_node_threshold_of_two() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for (seed, background) in [(2, false), (5, false), (4, true), (8, true)] {
            let dir = tempfile::tempdir().unwrap();
            let mut opts = common::slmdb();
            opts.slmdb.leaf_node_threshold = 2;
            opts.background_work = background;
            run_model(seed, 2000, opts, dir.path());
        }
        done.send(()).unwrap();
    });
    let limit = std::time::Duration::from_secs(120);
    match finished.recv_timeout(limit) {
        Ok(()) => {}
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("selective compaction did not settle within {limit:?}")
        }
        Err(e) => panic!("the model run failed (its panic is above): {e}"),
    }
}
