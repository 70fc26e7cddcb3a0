//! Concurrency stress: writer threads on disjoint key sets (each with its own oracle) and reader
//! threads, while flush, L1 → L2 compaction, PMTable GC and value-log GC run in the background.
//!
//! Checks:
//! - each writer reads its own writes back (`get` equals its oracle right after each write);
//! - a snapshot iterator sees, for every writer, exactly the oracle state after some whole
//!   number of that writer's operations (batches included), between the counts published
//!   before and after the snapshot was taken; iterating the same snapshot twice gives the same
//!   result, and snapshot `get`s agree with it;
//! - at the end, and after a reopen, the database equals the union of the oracles.
//!
//! Default: about 3 seconds. Longer: `FLATLSM_STRESS_SECS=600 cargo test --release -p flatlsm
//! --test stress -- --nocapture`.

use flatlsm::{Db, Error, Options, ReadOptions, WriteBatch, WriteOptions};
use flatlsm_core::fs::{CrashFs, FaultKind, FaultPlan};
use flatlsm_core::pm::simulated::SimulatedPmDevice;
use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const WRITERS: usize = 3;
const READERS: usize = 2;
const KEYS_PER_WRITER: u32 = 400;

/// Changes to one key: (operation number, new value or `None` for a delete).
type KeyChanges = Vec<(u64, Option<Vec<u8>>)>;

/// One writer's history: for each key, the operations that changed it (`None` = delete), in
/// order, so the state after any number of operations can be rebuilt.
#[derive(Default)]
struct History {
    per_key: BTreeMap<Vec<u8>, KeyChanges>,
}

impl History {
    /// The value of `key` after the writer's first `ops` operations.
    fn value_after(&self, key: &[u8], ops: u64) -> Option<&Vec<u8>> {
        let changes = self.per_key.get(key)?;
        let idx = changes.partition_point(|(op, _)| *op < ops);
        idx.checked_sub(1).and_then(|i| changes[i].1.as_ref())
    }
}

/// A writer's shared record: operations acknowledged, and their history.
#[derive(Default)]
struct Writer {
    acked: AtomicU64,
    history: Mutex<History>,
}

fn key(w: usize, k: u32) -> Vec<u8> {
    format!("w{w}-k{k:04}").into_bytes()
}

/// A self-describing value: writer, key, operation, padded to a size that is inline or
/// separated into a value log.
fn value(w: usize, k: u32, op: u64, rng: &mut StdRng) -> Vec<u8> {
    let mut v = format!("w{w}-k{k:04}@{op}:").into_bytes();
    let len = if rng.gen_bool(0.5) {
        rng.gen_range(0..60)
    } else {
        rng.gen_range(120..700)
    };
    v.resize(v.len() + len, b'a' + (op % 26) as u8);
    v
}

fn stress_options(device: Arc<SimulatedPmDevice>) -> Options {
    let mut o = Options::default();
    o.pmtable_size = 64 << 10;
    o.flush_immutable_num = 2;
    o.max_write_buffer_number = 4;
    o.l1_capacity = 8 << 10;
    o.target_file_size = 8 << 10;
    o.block_size = 1024;
    o.flush_threads = 2;
    o.kv_separation_threshold = 100;
    o.block_cache_size = 256 << 10;
    o.pm_persist_interval_ms = 10;
    // Log bytes / live bytes of a full table here is about 1.8 to 2.6 (live bytes count
    // entry headers, as the log does), so 1.5 lets most full tables be collected.
    o.pmtable_gc_ratio = 1.5;
    o.vlog_gc_garbage_ratio = 0.3;
    o.pm_device = Some(device);
    o
}

/// What a writer thread ends with: its oracle, and the error that stopped it (if allowed).
type WriterEnd = (BTreeMap<Vec<u8>, Vec<u8>>, Option<Error>);

/// Writes to the writer's own keys until `deadline`; checks read-your-writes. A failed write
/// stops the writer if `stop_on_error`, else fails the test.
fn run_writer(db: &Db, w: usize, me: &Writer, deadline: Instant, stop_on_error: bool) -> WriterEnd {
    let mut rng = StdRng::seed_from_u64(w as u64 + 1);
    let mut oracle = BTreeMap::new();
    let mut op = 0u64;
    while Instant::now() < deadline {
        let n = if rng.gen_bool(0.2) {
            rng.gen_range(2..6)
        } else {
            1
        };
        let mut batch = WriteBatch::new();
        let mut changes = Vec::new();
        for _ in 0..n {
            // Half the writes go to a few hot keys, so PMTables fill with garbage (PMTable GC).
            let k = if rng.gen_bool(0.5) {
                rng.gen_range(0..8)
            } else {
                rng.gen_range(0..KEYS_PER_WRITER)
            };
            let v = (!rng.gen_bool(0.15)).then(|| value(w, k, op, &mut rng));
            match &v {
                Some(v) => batch.put(key(w, k), v),
                None => batch.delete(key(w, k)),
            };
            changes.push((key(w, k), v));
        }
        // Record before acknowledging, so a reader that sees this operation finds it.
        {
            let mut h = me.history.lock();
            for (k, v) in &changes {
                h.per_key
                    .entry(k.clone())
                    .or_default()
                    .push((op, v.clone()));
            }
        }
        let sync = rng.gen_bool(0.1);
        match db.write_opt(
            &batch,
            &WriteOptions {
                sync,
                ..WriteOptions::default()
            },
        ) {
            Ok(()) => {}
            Err(e) if stop_on_error => return (oracle, Some(e)),
            Err(e) => panic!("writer {w}: {e}"),
        }
        op += 1;
        me.acked.store(op, Ordering::SeqCst);
        for (k, v) in changes {
            match v {
                Some(v) => oracle.insert(k, v),
                None => oracle.remove(&k),
            };
        }
        let probe = key(w, rng.gen_range(0..KEYS_PER_WRITER));
        let got = db.get(&probe).unwrap();
        assert_eq!(
            got.as_ref(),
            oracle.get(&probe),
            "writer {w} lost its own write"
        );
    }
    (oracle, None)
}

/// One snapshot check; returns the number of keys it verified.
fn check_snapshot(db: &Db, writers: &[Writer], rng: &mut StdRng) -> usize {
    let before: Vec<u64> = writers
        .iter()
        .map(|w| w.acked.load(Ordering::SeqCst))
        .collect();
    let snap = db.snapshot();
    let after: Vec<u64> = writers
        .iter()
        .map(|w| w.acked.load(Ordering::SeqCst))
        .collect();
    let ro = ReadOptions {
        snapshot: Some(&snap),
        ..ReadOptions::default()
    };
    let seen: BTreeMap<Vec<u8>, Vec<u8>> = db.iter_opt(&ro).unwrap().map(|r| r.unwrap()).collect();
    for (w, writer) in writers.iter().enumerate() {
        let h = writer.history.lock();
        // The snapshot may include the operation in flight when it was taken (`after` + 1).
        let consistent = (before[w]..=after[w] + 1).any(|ops| {
            (0..KEYS_PER_WRITER).all(|k| {
                let k = key(w, k);
                seen.get(&k) == h.value_after(&k, ops)
            })
        });
        assert!(
            consistent,
            "snapshot shows writer {w} in no state between {} and {} operations",
            before[w],
            after[w] + 1
        );
    }
    let again: BTreeMap<Vec<u8>, Vec<u8>> = db.iter_opt(&ro).unwrap().map(|r| r.unwrap()).collect();
    assert!(again == seen, "iterating the same snapshot twice differed");
    for _ in 0..20 {
        let k = key(rng.gen_range(0..WRITERS), rng.gen_range(0..KEYS_PER_WRITER));
        assert_eq!(
            db.get_opt(&k, &ro).unwrap().as_ref(),
            seen.get(&k),
            "snapshot get"
        );
    }
    seen.len()
}

fn stress_secs() -> u64 {
    std::env::var("FLATLSM_STRESS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3)
}

#[test]
fn writers_and_snapshot_readers_agree_with_per_thread_oracles_under_background_work() {
    let dir = tempfile::tempdir().unwrap();
    let device = SimulatedPmDevice::new();
    let opts = stress_options(device.clone());
    let db = Arc::new(Db::open(dir.path(), opts.clone()).unwrap());
    let writers: Arc<Vec<Writer>> = Arc::new((0..WRITERS).map(|_| Writer::default()).collect());
    let deadline = Instant::now() + Duration::from_secs(stress_secs());
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..READERS)
        .map(|r| {
            let (db, writers, done) = (db.clone(), writers.clone(), done.clone());
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(100 + r as u64);
                let mut checks = 0u64;
                while !done.load(Ordering::SeqCst) {
                    check_snapshot(&db, &writers, &mut rng);
                    checks += 1;
                    // A PMTable GC keeps every version newer than the oldest open snapshot, so
                    // while a snapshot is always open it frees nothing and the writer seals
                    // instead. Gaps without a snapshot let GC run too.
                    std::thread::sleep(Duration::from_millis(rng.gen_range(0..8)));
                }
                checks
            })
        })
        .collect();
    let handles: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (db, writers) = (db.clone(), writers.clone());
            std::thread::spawn(move || run_writer(&db, w, &writers[w], deadline, false).0)
        })
        .collect();
    let oracles: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    done.store(true, Ordering::SeqCst);
    let checks: u64 = readers.into_iter().map(|h| h.join().unwrap()).sum();
    db.wait_for_background_work().unwrap();
    let expected: BTreeMap<_, _> = oracles.into_iter().flatten().collect();
    let all = |db: &Db| -> BTreeMap<Vec<u8>, Vec<u8>> {
        db.iter().unwrap().map(|r| r.unwrap()).collect()
    };
    assert!(all(&db) == expected, "final state differs from the oracles");
    let st = db.stats();
    let ops: u64 = writers.iter().map(|w| w.acked.load(Ordering::SeqCst)).sum();
    eprintln!(
        "stress: {ops} write ops, {checks} snapshot checks; {} flushes, {} compactions, \
         {} PMTable GCs, {} value-log GCs",
        st.flushes, st.compactions, st.pmtable_gcs, st.vlog_gcs
    );
    let all_work = st.flushes > 0 && st.compactions > 0 && st.pmtable_gcs > 0 && st.vlog_gcs > 0;
    assert!(
        checks > 0 && all_work,
        "some background work never ran: {st}"
    );
    drop(db);
    let db = Db::open(dir.path(), opts).unwrap();
    assert!(
        all(&db) == expected,
        "state after reopen differs from the oracles"
    );
    for (k, v) in &expected {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
    }
}

/// Random disk faults while writers and background jobs run: every writer gets an error soon
/// (no endless retry, nothing accepted after the failure), and a reopen finds each writer's
/// acknowledged operations (the failed one may or may not be there).
#[test]
fn random_disk_faults_under_concurrent_writers_surface_as_errors_and_lose_nothing() {
    let kinds = [FaultKind::NoSpace, FaultKind::Io, FaultKind::ShortWrite];
    let mut injected = 0;
    for (seed, kind) in kinds.into_iter().enumerate() {
        injected += faults_under_concurrency(kind, seed as u64);
    }
    eprintln!("faults under concurrency: {injected} injected");
}

/// One run of the test above; returns the number of faults injected.
fn faults_under_concurrency(kind: FaultKind, seed: u64) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let device = SimulatedPmDevice::new();
    let fs = CrashFs::new();
    let mut opts = stress_options(device.clone());
    opts.file_system = Some(fs.clone());
    let db = Arc::new(Db::open(dir.path(), opts.clone()).unwrap());
    fs.set_fault_plan(FaultPlan::Random {
        one_in: 400,
        seed,
        kind,
    });
    let writers: Arc<Vec<Writer>> = Arc::new((0..WRITERS).map(|_| Writer::default()).collect());
    // Far beyond the time the first fault takes: reaching it means errors never surfaced.
    let deadline = Instant::now() + Duration::from_secs(120);
    let handles: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (db, writers) = (db.clone(), writers.clone());
            std::thread::spawn(move || run_writer(&db, w, &writers[w], deadline, true))
        })
        .collect();
    let ends: Vec<WriterEnd> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for (w, (_, err)) in ends.iter().enumerate() {
        let err = err.as_ref().expect("a writer never saw the disk failure");
        assert!(matches!(err, Error::Background(_)), "writer {w}: {err}");
    }
    let injected = fs.injected_faults();
    assert!(injected > 0);
    drop(db);
    fs.set_fault_plan(FaultPlan::Never);
    let db = Db::open(dir.path(), opts).unwrap();
    let ops: Vec<u64> = writers
        .iter()
        .map(|w| w.acked.load(Ordering::SeqCst))
        .collect();
    for (w, writer) in writers.iter().enumerate() {
        let h = writer.history.lock();
        let matches = |n: u64| {
            (0..KEYS_PER_WRITER).all(|k| {
                let k = key(w, k);
                db.get(&k).unwrap().as_ref() == h.value_after(&k, n)
            })
        };
        assert!(
            matches(ops[w]) || matches(ops[w] + 1),
            "writer {w}: reopened state is not its {} acknowledged operations",
            ops[w]
        );
    }
    injected
}
