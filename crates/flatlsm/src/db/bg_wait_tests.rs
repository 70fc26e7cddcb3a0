//! Waits on background progress end when that progress can no longer come (issue 29, item 3):
//! a flush waiting for level-0 or container room, a paced writer and a stopped writer each
//! return `Error::Background` once a background job failed or panicked, instead of waiting
//! for a compaction or flush that never runs again.
//!
//! Each test holds the background job at a sync point until the waiter is waiting, then lets
//! it fail (an injected write fault) or panic, and runs the waiter under a watchdog that fails
//! the test if it does not return, so a regression fails instead of hanging the run.

use super::{Db, WriteBatch};
use crate::error::{Error, Result};
use crate::fs::FaultFs;
use crate::options::Profile;
use crate::options::{Options, MIN_DELAYED_WRITE_RATE};
use crate::pm::simulated::SimulatedPmDevice;
use parking_lot::Mutex;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Far longer than any of these waits takes once it ends, far shorter than a hang.
const WATCHDOG: Duration = Duration::from_secs(30);
/// How long a test waits for the engine to reach a sync point.
const REACH: Duration = Duration::from_secs(20);

/// A call running on a thread of its own, so a hang fails the test instead of blocking it.
struct Watched<T> {
    what: &'static str,
    result: Receiver<T>,
}

/// Starts `f` on its own thread (the thread is left behind if it hangs).
fn watch<T: Send + 'static>(
    what: &'static str,
    f: impl FnOnce() -> T + Send + 'static,
) -> Watched<T> {
    let (tx, result) = channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    Watched { what, result }
}

impl<T> Watched<T> {
    /// What the call returned; fails the test if it has not returned within [`WATCHDOG`].
    fn result(self) -> T {
        match self.result.recv_timeout(WATCHDOG) {
            Ok(r) => r,
            Err(RecvTimeoutError::Timeout) => {
                panic!("{} hangs: no return in {WATCHDOG:?}", self.what)
            }
            Err(RecvTimeoutError::Disconnected) => panic!("{} panicked", self.what),
        }
    }
}

/// Runs `f` watched and returns its result.
fn within<T: Send + 'static>(what: &'static str, f: impl FnOnce() -> T + Send + 'static) -> T {
    watch(what, f).result()
}

/// A channel that receives a message each time a thread passes sync point `point`.
fn notify(db: &Db, point: &'static str) -> Receiver<()> {
    let (tx, rx) = channel();
    let tx = Mutex::new(tx);
    db.inner.sync_points.set(point, move || {
        let _ = tx.lock().send(());
    });
    rx
}

/// The cause inside an `Error::Background`; panics on any other outcome.
fn background_cause<T: std::fmt::Debug>(r: Result<T>) -> String {
    match r {
        Err(Error::Background(cause)) => cause.to_string(),
        other => panic!("expected a background error, got {other:?}"),
    }
}

/// Options on simulated PM and `fs`, with background threads, values kept in the SSTs.
fn base(fs: &Arc<FaultFs>) -> Options {
    Options {
        pm_device: Some(SimulatedPmDevice::new()),
        file_system: Some(fs.clone()),
        pmtable_size: 64 << 10,
        kv_separation_threshold: usize::MAX,
        block_cache_size: 1 << 20,
        ..Options::default()
    }
}

/// Writes `n` keys of 1000-byte values (the same keys each round, so each flush is a new run).
fn put_round(db: &Db, n: usize) -> Result<()> {
    (0..n).try_for_each(|i| db.put(format!("key{i:05}"), [i as u8; 1000]))
}

/// FlatLSM with a level-0 stop at 12 runs; the background flush thread never starts a flush
/// on its own (3 immutables due, never reached), so the test's `flush` calls make the runs.
#[test]
fn a_flush_waiting_for_level0_room_ends_when_the_compaction_fails() {
    let dir = tempfile::tempdir().unwrap();
    let fs = Arc::new(FaultFs::default());
    let opts = Options {
        flush_immutable_num: 3,
        max_write_buffer_number: 4,
        l1_merge_trigger: 2,
        ..base(&fs)
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let compaction = db
        .inner
        .sync_points
        .pause_once("compaction:inputs_reserved");
    while db.stats().l1_runs < 12 {
        put_round(&db, 20).unwrap();
        db.flush().unwrap();
    }
    compaction.wait_reached(REACH);
    put_round(&db, 20).unwrap();
    let waiting = notify(&db, "flush:waiting_for_room");
    let flusher = watch("flush waiting for level-0 room", {
        let db = db.clone();
        move || db.flush()
    });
    waiting
        .recv_timeout(REACH)
        .expect("the flush never waited for room");
    fs.fail_writes.store(true, Ordering::SeqCst);
    compaction.resume();
    let cause = background_cause(flusher.result());
    assert!(cause.contains("injected write failure"), "{cause}");
    let db2 = db.clone();
    background_cause(within("wait_for_background_work", move || {
        db2.wait_for_background_work()
    }));
    // Close records the write buffers made since the last manifest edit (whether any were
    // made depends on timing), so it may append to the manifest: let the disk work again.
    fs.fail_writes.store(false, Ordering::SeqCst);
    within("close", move || db.close()).unwrap();
}

/// MatrixKV with a 1 MiB container: flushes fill it while its column compaction is held, so
/// a flush finds no room and waits; the compaction then fails.
#[test]
fn a_flush_waiting_for_container_room_ends_when_the_column_compaction_fails() {
    let dir = tempfile::tempdir().unwrap();
    let fs = Arc::new(FaultFs::default());
    let mut opts = Options {
        profile: Profile::MatrixKv,
        flush_immutable_num: 3,
        max_write_buffer_number: 4,
        ..base(&fs)
    };
    opts.matrixkv.container_size = 1 << 20;
    opts.matrixkv.page_size = 4 << 10;
    opts.matrixkv.column_lower_bound = 16 << 10;
    opts.matrixkv.column_upper_bound = 32 << 10;
    let db = Db::open(dir.path(), opts).unwrap();
    let compaction = db
        .inner
        .sync_points
        .pause_once("compaction:inputs_reserved");
    let waiting = notify(&db, "flush:waiting_for_room");
    let filler = watch("flush waiting for container room", {
        let db = db.clone();
        move || -> Result<()> {
            for _ in 0..1000 {
                put_round(&db, 50)?;
                db.flush()?;
            }
            panic!("the container never filled");
        }
    });
    compaction.wait_reached(REACH);
    waiting
        .recv_timeout(REACH)
        .expect("no flush waited for room");
    fs.fail_writes.store(true, Ordering::SeqCst);
    compaction.resume();
    let cause = background_cause(filler.result());
    assert!(cause.contains("injected write failure"), "{cause}");
    fs.fail_writes.store(false, Ordering::SeqCst); // close syncs the WAL
    within("close", move || db.close()).unwrap();
}

/// Two immutable 8 MiB PMTables (the slowdown phase, no background threads), a pace of
/// 16 KiB/s: a writer's 4 MiB batch reserves over four minutes of pacing. A flush then fails
/// (the fault), which ends the slowdown's only way out: the paced writer must fail at once.
#[test]
fn a_paced_writer_stops_waiting_when_background_work_fails() {
    let dir = tempfile::tempdir().unwrap();
    let fs = Arc::new(FaultFs::default());
    let opts = Options {
        pmtable_size: 8 << 20,
        flush_immutable_num: 1,
        max_write_buffer_number: 3,
        delayed_write_rate: Some(MIN_DELAYED_WRITE_RATE),
        background_work: false,
        ..base(&fs)
    };
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..2 {
        db.put(format!("sealed{i}"), b"v").unwrap();
        let _w = db.inner.writes.lock();
        db.inner.seal_mutable().unwrap();
    }
    assert!(db.stats().writes_slowed);
    let paced = notify(&db, "write:paced");
    let writer = watch("paced writer", {
        let db = db.clone();
        move || {
            let mut batch = WriteBatch::new();
            for i in 0..4 {
                batch.put(format!("big{i}"), vec![1u8; 1 << 20]);
            }
            db.write(&batch)
        }
    });
    paced
        .recv_timeout(REACH)
        .expect("the writer was never paced");
    fs.fail_writes.store(true, Ordering::SeqCst);
    assert!(db.flush().is_err());
    let cause = background_cause(writer.result());
    assert!(cause.contains("injected write failure"), "{cause}");
    assert_eq!(db.get("big0").unwrap(), None);
}

/// Three 64 KiB PMTables and a flush thread that panics once a writer is stopped (every
/// PMTable in use): the panic becomes the background error, and the writer, waiting for a
/// free PMTable while holding the write lock, fails with it instead of waiting forever.
#[test]
fn a_panicking_flush_thread_fails_a_stopped_writer_instead_of_hanging_it() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        flush_immutable_num: 1,
        max_write_buffer_number: 3,
        delayed_write_rate: Some(1 << 20),
        ..base(&Arc::default())
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let (go, panic_now) = channel::<()>();
    let panic_now = Mutex::new(Some(panic_now));
    db.inner.sync_points.set("flush:inputs_reserved", move || {
        let first = panic_now.lock().take();
        if let Some(rx) = first {
            let _ = rx.recv();
            panic!("injected flush panic");
        }
    });
    let writer = watch("writer stopped for a free PMTable", {
        let db = db.clone();
        move || (0..1000).try_for_each(|i| db.put(format!("k{i:05}"), [3u8; 4096]))
    });
    let deadline = Instant::now() + REACH;
    while !db.stats().writes_stopped {
        assert!(Instant::now() < deadline, "the writer never stopped");
        std::thread::sleep(Duration::from_millis(1));
    }
    go.send(()).unwrap();
    let cause = background_cause(writer.result());
    assert!(cause.contains("flatlsm-flush"), "{cause}");
    assert!(cause.contains("injected flush panic"), "{cause}");
    let stats = db.stats();
    assert!(stats.background_error.unwrap().contains("panicked"));
    within("close", move || db.close()).unwrap();
}
