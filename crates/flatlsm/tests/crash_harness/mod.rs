//! Crash-test harness shared by `pm_crash.rs` and `fs_faults.rs`.
//!
//! A [`Scenario`] is a deterministic list of operations (batches of puts and deletes with or
//! without sync, range deletes, flushes, compactions, "settle" = run due GC and compactions) and the options
//! that make the engine do the work under test. [`record`] runs it once on a simulated PM device
//! and an in-memory [`CrashFs`], capturing a crash image (PM *and* files, at the same instant) at
//! chosen PM persist points and file-system calls. [`verify`] reopens the engine on one image and
//! checks it against the model of the workload:
//! - every write acknowledged with `sync: true` (or otherwise promised durable) is present;
//! - lost acknowledged writes are a suffix, all small (< 256 B) non-sync batches whose total size
//!   is below the Buffer Log flush size (docs/durability.md); the batch in flight may go either way;
//! - the state is the model after a whole number of operations (no batch partly applied);
//! - `get` agrees with the iterator for every key the workload touched;
//! - nothing panics and the reopen succeeds.
#![allow(dead_code)]

pub mod gc;
pub mod leveled;

use flatlsm::tool_support::{encoded_entry_len, BUFFER_FLUSH_BYTES, SMALL_ENTRY_LIMIT};
use flatlsm::{Db, Options, WriteBatch, WriteOptions};
use flatlsm_core::fs::{CrashFs, FsCall, FsImage};
use flatlsm_core::pm::simulated::{CaptureHook, CrashKind, PmCrashImage, SimulatedPmDevice};
use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Key → value, the model of the database.
pub type State = BTreeMap<Vec<u8>, Vec<u8>>;

/// One operation of a workload.
#[derive(Clone, Debug)]
pub enum Op {
    /// A batch of puts (`Some`) and deletes (`None`).
    Write {
        batch: Vec<(Vec<u8>, Option<Vec<u8>>)>,
        sync: bool,
    },
    /// `Db::delete_range(start, end)` (durable when acknowledged, with every earlier write).
    DeleteRange { start: Vec<u8>, end: Vec<u8> },
    /// `Db::flush`.
    Flush,
    /// `Db::compact_range(None, None)`.
    Compact,
    /// `Db::wait_for_background_work` (runs due compactions and value-log GC).
    Settle,
}

impl Op {
    /// Encoded PM Log size of a write (0 for other operations).
    fn pm_bytes(&self) -> usize {
        match self {
            Op::Write { batch, .. } => batch
                .iter()
                .map(|(k, v)| encoded_entry_len(k.len(), v.as_ref().map_or(0, Vec::len)))
                .sum(),
            _ => 0,
        }
    }

    /// True if a power loss after this operation was acknowledged may still lose it: a
    /// non-sync batch, in a cache-line mode only a small one (< 256 B, not yet persisted).
    fn may_be_lost(&self, pm: PmKind) -> bool {
        let small = self.pm_bytes() < SMALL_ENTRY_LIMIT || pm != PmKind::CacheLine;
        pm != PmKind::PerWrite && matches!(self, Op::Write { sync: false, .. }) && small
    }
}

/// How the simulated PM persists (docs/durability.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PmKind {
    /// Dax/Emulated: batches ≥ 256 B are persisted on append, small ones in 256-byte groups.
    CacheLine,
    /// Msync: persisted only by commits (sync writes, sealing a PMTable, the timer).
    GroupCommit,
    /// No PM durability at all: write buffers in DRAM behind a write-ahead log (`leveled`);
    /// a power loss may lose any non-sync write after the last synced one.
    Wal,
    /// Every write persisted before it is acknowledged (`novelsm`'s PM skiplists): nothing
    /// acknowledged may be lost.
    PerWrite,
}

/// The device, and the kind of crash the test pulls.
#[derive(Clone, Copy, Debug)]
pub struct CrashModel {
    pub pm: PmKind,
    pub kind: CrashKind,
}

impl CrashModel {
    /// Power loss on cache-line PM: what most scenarios test.
    pub const POWER_LOSS: CrashModel = CrashModel {
        pm: PmKind::CacheLine,
        kind: CrashKind::PowerLoss,
    };

    fn device(&self) -> Arc<SimulatedPmDevice> {
        match self.pm {
            PmKind::CacheLine | PmKind::Wal | PmKind::PerWrite => SimulatedPmDevice::new(),
            PmKind::GroupCommit => SimulatedPmDevice::with_group_commit(),
        }
    }

    fn capture_fs(&self, fs: &CrashFs, seed: u64) -> FsImage {
        match self.kind {
            CrashKind::PowerLoss => fs.capture(seed),
            CrashKind::ProcessCrash => fs.capture_process(),
        }
    }

    fn reopen_pm(&self, image: &PmCrashImage) -> Arc<SimulatedPmDevice> {
        self.device().reopen_crash_image(image)
    }
}

/// A workload and the options it runs with.
#[derive(Clone)]
pub struct Scenario {
    pub name: &'static str,
    pub ops: Vec<Op>,
    /// Applied to the base crash-test options.
    pub tweak: fn(&mut Options),
    /// The PM device and the kind of crash.
    pub model: CrashModel,
}

/// Base options: tiny PMTables and files, no background threads (the test drives every job,
/// so runs are deterministic), no timer commits.
pub fn options(pm: Arc<SimulatedPmDevice>, fs: Arc<CrashFs>, tweak: fn(&mut Options)) -> Options {
    let mut o = Options::default();
    o.pmtable_size = 64 << 10;
    o.flush_immutable_num = 2;
    o.max_write_buffer_number = 4;
    o.l1_capacity = 24 << 10;
    o.target_file_size = 8 << 10;
    o.block_size = 1024;
    o.flush_threads = 2;
    o.kv_separation_threshold = 100;
    o.block_cache_size = 256 << 10;
    o.pm_persist_interval_ms = 3_600_000;
    o.background_work = false;
    o.vlog_gc_garbage_ratio = 0.3;
    o.pm_device = Some(pm);
    o.file_system = Some(fs);
    tweak(&mut o);
    o
}

/// Random batches over `keys` keys; `sync_pct` percent synced, `del_pct` percent deletes.
pub fn random_writes(
    rng: &mut StdRng,
    n: usize,
    keys: u32,
    sync_pct: u32,
    del_pct: u32,
) -> Vec<Op> {
    (0..n)
        .map(|_| {
            let len = rng.gen_range(1..=4);
            let batch = (0..len)
                .map(|_| {
                    let k = format!("key{:04}", rng.gen_range(0..keys)).into_bytes();
                    let v = (rng.gen_range(0..100) >= del_pct).then(|| value(rng));
                    (k, v)
                })
                .collect();
            Op::Write {
                batch,
                sync: rng.gen_range(0..100) < sync_pct,
            }
        })
        .collect()
}

/// A range delete of `width` keys from key number `first` (the `key{:04}` keys of
/// [`random_writes`]).
pub fn range_delete(first: u32, width: u32) -> Op {
    let key = |n: u32| format!("key{n:04}").into_bytes();
    Op::DeleteRange {
        start: key(first),
        end: key(first + width),
    }
}

/// A value of mixed size (inline, separated, large), its first bytes unique-ish.
fn value(rng: &mut StdRng) -> Vec<u8> {
    let len = match rng.gen_range(0..10) {
        0..=4 => rng.gen_range(1..48),
        5..=7 => rng.gen_range(100..400),
        _ => rng.gen_range(400..1500),
    };
    let tag: u64 = rng.gen();
    let mut v = tag.to_le_bytes().to_vec();
    v.resize(len.max(8), (tag >> 56) as u8);
    v
}

/// The model after the first `n` operations.
pub fn model_after(ops: &[Op], n: usize) -> State {
    let mut m = State::new();
    for op in &ops[..n] {
        match op {
            Op::Write { batch, .. } => {
                for (k, v) in batch {
                    match v {
                        Some(v) => m.insert(k.clone(), v.clone()),
                        None => m.remove(k),
                    };
                }
            }
            Op::DeleteRange { start, end } => m.retain(|k, _| k < start || k >= end),
            _ => {}
        }
    }
    m
}

/// Every key the workload touches.
pub fn universe(ops: &[Op]) -> BTreeSet<Vec<u8>> {
    let mut keys = BTreeSet::new();
    for op in ops {
        if let Op::Write { batch, .. } = op {
            keys.extend(batch.iter().map(|(k, _)| k.clone()));
        }
    }
    keys
}

/// Applies one operation.
pub fn apply(db: &Db, op: &Op) -> flatlsm::Result<()> {
    match op {
        Op::Write { batch, sync } => {
            let mut b = WriteBatch::new();
            for (k, v) in batch {
                match v {
                    Some(v) => b.put(k, v),
                    None => b.delete(k),
                };
            }
            db.write_opt(
                &b,
                &WriteOptions {
                    sync: *sync,
                    ..WriteOptions::default()
                },
            )
        }
        Op::DeleteRange { start, end } => db.delete_range(start, end),
        Op::Flush => db.flush(),
        Op::Compact => db.compact_range(None, None),
        Op::Settle => db.wait_for_background_work(),
    }
}

/// What a crash at one point left, and which operation was running.
pub struct CrashPoint {
    pub pm: PmCrashImage,
    pub fs: FsImage,
    /// Index of the operation in flight (`ops.len()` = closing the database) when the capture
    /// started ...
    pub in_flight: usize,
    /// ... and when it ended (later only if background threads captured while the writer ran).
    pub in_flight_last: usize,
    /// Where the crash happened, for messages.
    pub label: String,
}

/// Which points of a run to capture.
#[derive(Clone, Default)]
pub struct Plan {
    /// Capture when persist `n + 1` starts, for each `n`.
    pub persists: BTreeSet<u64>,
    /// Capture before file-system call `n` (appends excluded unless `appends`), for each `n`.
    pub fs_calls: BTreeSet<u64>,
    /// Appends are crash points too (write-ahead logs: each batch is one append).
    pub appends: bool,
    pub seed: u64,
}

/// Totals of a full run (used to choose crash points).
pub struct RunTotals {
    pub persists: u64,
    pub fs_calls: u64,
    /// The engine's report at the end of the run (to check the work under test happened).
    pub stats: flatlsm::Stats,
}

type FsCaptures = Arc<Mutex<Vec<(FsImage, usize)>>>;

/// Runs `scenario` from an empty database in `dir`, capturing the planned crash points.
pub fn record(dir: &Path, scenario: &Scenario, plan: &Plan) -> (Vec<CrashPoint>, RunTotals) {
    let model = scenario.model;
    let device = model.device();
    let fs = CrashFs::new();
    let in_flight = Arc::new(AtomicUsize::new(0));
    let fs_at_pm: FsCaptures = Arc::default();
    let at_fs: Arc<Mutex<Vec<CrashPoint>>> = Arc::default();
    let hook: CaptureHook = {
        let (fs, in_flight, out) = (fs.clone(), in_flight.clone(), fs_at_pm.clone());
        let seed = plan.seed;
        Box::new(move |n| {
            let image = model.capture_fs(&fs, seed ^ n);
            out.lock().push((image, in_flight.load(Ordering::SeqCst)));
        })
    };
    device.record_crash_points_of(model.kind, plan.persists.clone(), plan.seed, Some(hook));
    {
        let (fs2, dev2, in_flight, out) = (
            Arc::downgrade(&fs),
            device.clone(),
            in_flight.clone(),
            at_fs.clone(),
        );
        let (calls, seed, appends) = (plan.fs_calls.clone(), plan.seed, plan.appends);
        fs.set_call_hook(Some(Box::new(move |n, kind| {
            if (kind == FsCall::Append && !appends) || !calls.contains(&n) {
                return;
            }
            let Some(fs) = fs2.upgrade() else { return };
            // A background thread may capture while the writer moves on: bracket the writer's
            // position so the check allows exactly the operations that may be in the image.
            let first = in_flight.load(Ordering::SeqCst);
            let pm = dev2.capture_now_of(model.kind, seed ^ n);
            let fs = model.capture_fs(&fs, seed ^ n);
            out.lock().push(CrashPoint {
                pm,
                fs,
                in_flight: first,
                in_flight_last: in_flight.load(Ordering::SeqCst),
                label: format!("before fs call {n} ({kind:?})"),
            });
        })));
    }
    let db = Db::open(dir, options(device.clone(), fs.clone(), scenario.tweak))
        .unwrap_or_else(|e| panic!("{}: open failed: {e}", scenario.name));
    for (i, op) in scenario.ops.iter().enumerate() {
        in_flight.store(i, Ordering::SeqCst);
        apply(&db, op).unwrap_or_else(|e| panic!("{}: op {i} failed: {e}", scenario.name));
    }
    in_flight.store(scenario.ops.len(), Ordering::SeqCst);
    let stats = db.stats();
    drop(db);
    fs.set_call_hook(None);
    let totals = RunTotals {
        persists: device.persist_count(),
        fs_calls: fs.call_count(),
        stats,
    };
    let pm_images = device.take_crash_images();
    device.stop_recording();
    let fs_images = std::mem::take(&mut *fs_at_pm.lock());
    assert_eq!(pm_images.len(), fs_images.len());
    let mut points: Vec<CrashPoint> = pm_images
        .into_iter()
        .zip(fs_images)
        .map(|(pm, (fs, in_flight))| CrashPoint {
            label: format!("before persist {}", pm.persists + 1),
            pm,
            fs,
            in_flight,
            in_flight_last: in_flight,
        })
        .collect();
    points.append(&mut at_fs.lock());
    (points, totals)
}

/// Opens the database on a crash image (panicking with the point's label on failure).
pub fn open_image(
    dir: &Path,
    scenario: &Scenario,
    pm: &PmCrashImage,
    fs: &FsImage,
    label: &str,
) -> Db {
    let device = scenario.model.reopen_pm(pm);
    let fs = CrashFs::from_image(fs);
    Db::open(dir, options(device, fs, scenario.tweak))
        .unwrap_or_else(|e| panic!("{}: reopen after crash {label} failed: {e}", scenario.name))
}

/// Everything the iterator returns.
pub fn read_all(db: &Db) -> State {
    db.iter().unwrap().map(|r| r.unwrap()).collect()
}

/// The fewest operations whose effects must survive a crash while operation `in_flight` ran:
/// after a process crash every acknowledged one; after a power loss, all but a suffix of
/// non-sync writes the PM mode may not have persisted yet.
pub fn required_prefix(ops: &[Op], in_flight: usize, model: CrashModel) -> usize {
    if model.kind == CrashKind::ProcessCrash {
        return in_flight.min(ops.len());
    }
    let mut lost_bytes = 0;
    let mut n = in_flight.min(ops.len());
    while n > 0 {
        let op = &ops[n - 1];
        if matches!(op, Op::Settle) {
            n -= 1; // commits nothing by itself
            continue;
        }
        let over_window =
            model.pm == PmKind::CacheLine && lost_bytes + op.pm_bytes() >= BUFFER_FLUSH_BYTES;
        if !op.may_be_lost(model.pm) || over_window {
            break;
        }
        lost_bytes += op.pm_bytes();
        n -= 1;
    }
    n
}

/// Checks a reopened database against the model; returns its state.
/// `in_flight..=in_flight_last` are the operations that may have been running at the crash.
pub fn check_state(
    db: &Db,
    scenario: &Scenario,
    (in_flight, in_flight_last): (usize, usize),
    label: &str,
) -> State {
    let ops = &scenario.ops;
    let got = read_all(db);
    let lo = required_prefix(ops, in_flight, scenario.model);
    let hi = (in_flight_last + 1).min(ops.len());
    let matched = (lo..=hi).rev().find(|&n| model_after(ops, n) == got);
    if matched.is_none() {
        let want = model_after(ops, lo);
        let missing: Vec<_> = want
            .keys()
            .filter(|k| got.get(*k) != want.get(*k))
            .take(5)
            .collect();
        panic!(
            "{}: crash {label} (op {in_flight} in flight): state is not the model after any of ops {lo}..={hi}; \
             first keys differing from the model after {lo}: {:?}",
            scenario.name,
            missing.iter().map(|k| String::from_utf8_lossy(k)).collect::<Vec<_>>()
        );
    }
    for k in universe(ops) {
        let g = db.get(&k).unwrap();
        assert_eq!(
            g.as_ref(),
            got.get(&k),
            "{}: crash {label}: get and iterator disagree on {}",
            scenario.name,
            String::from_utf8_lossy(&k)
        );
    }
    got
}

/// Reopens on `point`, checks it, and returns the recovered state. With `write_after`, also
/// checks that new writes after recovery win over everything recovered (sequence numbers are
/// not reused) and survive a clean reopen.
pub fn verify(dir: &Path, scenario: &Scenario, point: &CrashPoint, write_after: bool) -> State {
    let device = scenario.model.reopen_pm(&point.pm);
    let fs = CrashFs::from_image(&point.fs);
    let opts = options(device, fs, scenario.tweak);
    let db = Db::open(dir, opts.clone()).unwrap_or_else(|e| {
        panic!(
            "{}: reopen after crash {} failed: {e}",
            scenario.name, point.label
        )
    });
    let in_flight = (point.in_flight, point.in_flight_last);
    let state = check_state(&db, scenario, in_flight, &point.label);
    if write_after {
        check_writes_after_recovery(dir, db, opts, &state, &point.label);
    }
    state
}

/// Overwrites one recovered key and deletes another, then checks both after a clean reopen.
fn check_writes_after_recovery(dir: &Path, db: Db, opts: Options, state: &State, label: &str) {
    let mut keys = state.keys();
    let overwrite = keys.next().cloned().unwrap_or_else(|| b"key0000".to_vec());
    let deleted = keys.next().cloned();
    let sync = WriteOptions {
        sync: true,
        ..WriteOptions::default()
    };
    db.put_opt(&overwrite, b"written after recovery", &sync)
        .unwrap();
    if let Some(d) = &deleted {
        db.delete_opt(d, &sync).unwrap();
    }
    let mut want = state.clone();
    want.insert(overwrite, b"written after recovery".to_vec());
    if let Some(d) = &deleted {
        want.remove(d);
    }
    assert!(
        read_all(&db) == want,
        "crash {label}: writes after recovery not visible"
    );
    drop(db);
    let db = Db::open(dir, opts).unwrap();
    assert!(
        read_all(&db) == want,
        "crash {label}: writes after recovery lost at reopen"
    );
}

/// Crash during recovery: reopens on `point` while capturing crash images at every persist and
/// file-system call of the open and close, then checks each of those images reopens to `expected`
/// (recovery adds and loses nothing). Returns the number of recovery crash points tried.
pub fn verify_crash_during_recovery(
    dir: &Path,
    scenario: &Scenario,
    point: &CrashPoint,
    expected: &State,
) -> usize {
    let device = scenario.model.reopen_pm(&point.pm);
    let fs = CrashFs::from_image(&point.fs);
    let captured: FsCaptures = Arc::default();
    let hook: CaptureHook = {
        let (fs, out) = (fs.clone(), captured.clone());
        Box::new(move |n| out.lock().push((fs.capture(n), 0)))
    };
    device.record_crash_points((0..64).collect(), 7, Some(hook));
    let at_fs: Arc<Mutex<Vec<(PmCrashImage, FsImage)>>> = Arc::default();
    {
        let (fs2, dev2, out) = (Arc::downgrade(&fs), device.clone(), at_fs.clone());
        fs.set_call_hook(Some(Box::new(move |n, kind| {
            if let (true, Some(fs)) = (kind != FsCall::Append, fs2.upgrade()) {
                out.lock().push((dev2.capture_now(n), fs.capture(n)));
            }
        })));
    }
    let db =
        Db::open(dir, options(device.clone(), fs.clone(), scenario.tweak)).unwrap_or_else(|e| {
            panic!(
                "{}: reopen after crash {} failed: {e}",
                scenario.name, point.label
            )
        });
    drop(db);
    fs.set_call_hook(None);
    let pm_images = device.take_crash_images();
    device.stop_recording();
    let mut images: Vec<(PmCrashImage, FsImage)> = pm_images
        .into_iter()
        .zip(
            std::mem::take(&mut *captured.lock())
                .into_iter()
                .map(|(f, _)| f),
        )
        .collect();
    images.append(&mut at_fs.lock());
    for (i, (pm, fs)) in images.iter().enumerate() {
        let label = format!("{} then crash {i} during recovery", point.label);
        let db = open_image(dir, scenario, pm, fs, &label);
        let got = read_all(&db);
        assert!(
            &got == expected,
            "{}: {label}: state differs from the one recovery first found",
            scenario.name
        );
    }
    images.len()
}

/// Crash points `[from, to)` in windows of at most `window`, so captured images fit in memory.
pub fn windows(from: u64, to: u64, window: u64) -> Vec<BTreeSet<u64>> {
    let mut out = Vec::new();
    let mut start = from;
    while start < to {
        let end = (start + window).min(to);
        out.push((start..end).collect());
        start = end;
    }
    out
}

/// `FLATLSM_CRASH_POINTS` (stress runs), else `default`.
pub fn crash_points_budget(default: u64) -> u64 {
    std::env::var("FLATLSM_CRASH_POINTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// A deterministic PRNG for building workloads.
pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}
