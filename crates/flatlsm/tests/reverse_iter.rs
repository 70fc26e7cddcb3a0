//! Model tests for reverse iteration: random puts, deletes and overwrites of small (inline) and
//! large (>= 512 B, separated into value logs) values, spread over PMTables, the Ordered-L1 and
//! L2 at once, read through random mixes of next/prev/seek/seek_for_prev/seek_to_first/
//! seek_to_last with snapshots and bounds, and compared with a `BTreeMap`.

mod common;

use flatlsm::DbIterator;
use flatlsm::{Db, ReadOptions, Snapshot, WriteBatch, WriteOptions};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::ops::Bound;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
type Entries = Vec<(Vec<u8>, Vec<u8>)>;

const KEY_SPACE: u32 = 400;

fn key(rng: &mut StdRng) -> Vec<u8> {
    format!("key{:05}", rng.gen_range(0..KEY_SPACE)).into_bytes()
}

fn value(rng: &mut StdRng) -> Vec<u8> {
    let len = if rng.gen_bool(0.5) {
        rng.gen_range(0..60)
    } else {
        rng.gen_range(512..1500)
    };
    let b = rng.gen::<u8>();
    (0..len).map(|i| b.wrapping_add(i as u8)).collect()
}

/// `n` random writes (single puts, deletes, batches; many overwrites) applied to both.
fn write_random(db: &Db, model: &mut Model, rng: &mut StdRng, n: usize) {
    let w = WriteOptions::default();
    for _ in 0..n {
        match rng.gen_range(0..10) {
            0..=5 => {
                let (k, v) = (key(rng), value(rng));
                db.put_opt(&k, &v, &w).unwrap();
                model.insert(k, v);
            }
            6..=7 => {
                let k = key(rng);
                db.delete_opt(&k, &w).unwrap();
                model.remove(&k);
            }
            _ => {
                let mut b = WriteBatch::new();
                for _ in 0..rng.gen_range(1..6) {
                    let k = key(rng);
                    if rng.gen_bool(0.6) {
                        let v = value(rng);
                        b.put(&k, &v);
                        model.insert(k, v);
                    } else {
                        b.delete(&k);
                        model.remove(&k);
                    }
                }
                db.write_opt(&b, &w).unwrap();
            }
        }
    }
}

fn random_bound(rng: &mut StdRng) -> Option<Vec<u8>> {
    // Sometimes between existing keys ("key00042x"), sometimes on one.
    rng.gen_bool(0.4).then(|| {
        let mut k = format!("key{:05}", rng.gen_range(0..KEY_SPACE)).into_bytes();
        if rng.gen_bool(0.5) {
            k.push(b'x');
        }
        k
    })
}

/// The model's entries within `[lower, upper)`.
fn view(model: &Model, lower: Option<&[u8]>, upper: Option<&[u8]>) -> Entries {
    model
        .iter()
        .filter(|(k, _)| lower.is_none_or(|l| k.as_slice() >= l))
        .filter(|(k, _)| upper.is_none_or(|u| k.as_slice() < u))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Random positioning and steps in both directions, compared with `want` after each one.
/// `it` starts on the first entry (as `Db::range` leaves it).
fn walk(it: &mut DbIterator, want: &Entries, rng: &mut StdRng, steps: usize, label: &str) {
    let mut pos: Option<usize> = (!want.is_empty()).then_some(0);
    for step in 0..steps {
        let target = random_bound(rng).unwrap_or_else(|| key(rng));
        let op = rng.gen_range(0..8);
        pos = match op {
            0 => {
                it.seek_to_first();
                (!want.is_empty()).then_some(0)
            }
            1 => {
                it.seek_to_last();
                want.len().checked_sub(1)
            }
            2 => {
                it.seek(&target);
                let p = want.partition_point(|(k, _)| *k < target);
                (p < want.len()).then_some(p)
            }
            3 => {
                it.seek_for_prev(&target);
                want.partition_point(|(k, _)| *k <= target).checked_sub(1)
            }
            4 | 5 => pos.and_then(|p| {
                it.advance();
                (p + 1 < want.len()).then_some(p + 1)
            }),
            _ => pos.and_then(|p| {
                it.prev();
                p.checked_sub(1)
            }),
        };
        it.status().unwrap();
        let expected = pos.map(|p| &want[p]);
        assert_eq!(
            it.valid(),
            expected.is_some(),
            "{label} step {step} op {op}"
        );
        if let Some((k, v)) = expected {
            assert_eq!(it.key(), &k[..], "{label} step {step} op {op} key");
            assert!(
                it.value() == &v[..],
                "{label} step {step} op {op}: value differs"
            );
        }
    }
}

/// Checks one read view (latest or a snapshot): a full backward scan, then a random walk, each
/// with random bounds.
fn check_view(db: &Db, snap: Option<&Snapshot>, model: &Model, rng: &mut StdRng, label: &str) {
    let ro = ReadOptions {
        snapshot: snap,
        ..ReadOptions::default()
    };
    let (lower, upper) = (random_bound(rng), random_bound(rng));
    let want = view(model, lower.as_deref(), upper.as_deref());
    let range = |db: &Db| {
        {
            let lo = lower.as_deref().map_or(Bound::Unbounded, Bound::Included);
            let hi = upper.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
            db.range_opt::<&[u8]>((lo, hi), &ro)
        }
        .unwrap()
    };
    let backward: Entries = range(db).rev().map(|r| r.unwrap()).collect();
    let mut reversed = want.clone();
    reversed.reverse();
    assert!(
        backward == reversed,
        "{label}: backward scan differs from the model"
    );
    walk(&mut range(db), &want, rng, 400, label);
}

fn check_all_views(db: &Db, model: &Model, snaps: &[(Snapshot, Model)], rng: &mut StdRng) {
    check_view(db, None, model, rng, "latest");
    for (i, (snap, m)) in snaps.iter().enumerate() {
        check_view(db, Some(snap), m, rng, &format!("snapshot {i}"));
    }
}

#[test]
fn reverse_and_mixed_walks_match_btreemap_across_pmtables_l1_and_l2() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), common::simulated(2)).unwrap();
    let mut rng = StdRng::seed_from_u64(42);
    let mut model = Model::new();
    let mut snaps: Vec<(Snapshot, Model)> = Vec::new();
    for round in 0..4 {
        // Oldest data goes to L2, newer to an L1 run, the newest stays in PMTables; snapshots
        // pin older versions in every layer.
        write_random(&db, &mut model, &mut rng, 500);
        snaps.push((db.snapshot(), model.clone()));
        db.compact_range(None, None).unwrap();
        write_random(&db, &mut model, &mut rng, 400);
        snaps.push((db.snapshot(), model.clone()));
        db.flush().unwrap();
        write_random(&db, &mut model, &mut rng, 150);
        let stats = db.stats();
        assert!(
            stats.pmtable_bytes > 0,
            "round {round}: no data in PMTables"
        );
        assert!(stats.levels[0].files > 0, "round {round}: no L1 run");
        assert!(stats.levels[2].files > 0, "round {round}: no data in L2");
        check_all_views(&db, &model, &snaps, &mut rng);
        snaps.drain(..snaps.len().saturating_sub(3));
    }
    snaps.clear();
    db.close().unwrap();
}

#[test]
fn reverse_iterator_keeps_its_view_while_writes_flushes_and_compactions_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), common::simulated(2)).unwrap();
    let mut rng = StdRng::seed_from_u64(7);
    let mut model = Model::new();
    write_random(&db, &mut model, &mut rng, 600);
    db.flush().unwrap();
    write_random(&db, &mut model, &mut rng, 200);
    let want: Entries = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let mut it = db.iter().unwrap();
    it.seek_to_last();
    let mut got = Vec::new();
    let mut later = model.clone();
    while it.valid() {
        got.push((it.key().to_vec(), it.value().to_vec()));
        // Writes land in the mutable PMTable next to the cursor; background work moves data.
        write_random(&db, &mut later, &mut rng, 3);
        if got.len() % 50 == 0 {
            db.compact_range(None, None).unwrap();
        }
        it.prev();
    }
    it.status().unwrap();
    got.reverse();
    assert!(got == want, "the iterator's view changed under it");
    let now: Entries = db.iter().unwrap().map(|r| r.unwrap()).collect();
    assert!(now == later.into_iter().collect::<Entries>());
    db.close().unwrap();
}

#[test]
fn damaged_sst_block_reports_corruption_through_the_db_iterator_in_both_directions() {
    // Regression: LevelIterator and DbIterator turned a Corruption into InvalidState, so the
    // caller could not tell damaged data (with its file and offset) from a misuse.
    let dir = tempfile::tempdir().unwrap();
    let opts = common::simulated(1);
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let mut rng = StdRng::seed_from_u64(3);
    write_random(&db, &mut Model::new(), &mut rng, 400);
    db.compact_range(None, None).unwrap();
    db.close().unwrap();
    drop(db);
    let sst = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "sst"))
        .expect("an SST file");
    let mut bytes = std::fs::read(&sst).unwrap();
    bytes[10] ^= 0x55; // Inside the first data block.
    std::fs::write(&sst, bytes).unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    for backward in [false, true] {
        let mut it = db.iter().unwrap();
        if backward {
            it.seek_to_last();
        }
        while it.valid() {
            if backward {
                it.prev();
            } else {
                it.advance();
            }
        }
        match it.status() {
            Err(flatlsm::Error::Corruption { file, .. }) => assert_eq!(file, sst),
            other => panic!("expected corruption in {}, got {other:?}", sst.display()),
        }
    }
}
