//! Write stalls, deterministically: the slowdown phase delays writes, the stop blocks them until
//! a flush frees a PMTable, `no_slowdown` writes fail at once in both phases and write nothing,
//! and each episode logs one start and one end line. Background work is off, or the flush is
//! held at a sync point, so the phases are reached by counting PMTables; the tests assert on
//! states and counters; the one duration asserted is a lower bound (a pacing sleep).

use super::{Db, WriteBatch};
use crate::error::Error;
use crate::options::{Options, WriteOptions};
use crate::pm::simulated::SimulatedPmDevice;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// 4 KiB values: about 15 fit a 64 KiB PMTable.
const VALUE: [u8; 4096] = [7; 4096];
/// 1 MiB/s: a 4 KiB write costs about 4 ms at this pace, more than the pacer's 1 ms burst, so
/// every write in the slowdown phase waits.
const RATE: u64 = 1 << 20;
const NO_SLOWDOWN: WriteOptions = WriteOptions {
    sync: false,
    no_slowdown: true,
};

/// Three 64 KiB PMTables, a flush at one immutable: the slowdown starts at two immutables (the
/// default, `max_write_buffer_number - 1`), the stop when those two are joined by a full
/// mutable table.
fn options(background_work: bool) -> Options {
    Options {
        pm_device: Some(SimulatedPmDevice::new()),
        pmtable_size: 64 << 10,
        flush_immutable_num: 1,
        max_write_buffer_number: 3,
        delayed_write_rate: Some(RATE),
        flush_threads: 1,
        block_cache_size: 1 << 20,
        background_work,
        ..Options::default()
    }
}

fn key(i: usize) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn put(db: &Db, i: usize) {
    db.put(key(i), VALUE).unwrap();
}

/// Writes new keys from `*next` on while `more` holds.
fn put_while(db: &Db, next: &mut usize, more: impl Fn(&Db) -> bool) {
    while more(db) {
        put(db, *next);
        *next += 1;
        assert!(*next < 1000, "the condition never changed");
    }
}

/// A `no_slowdown` write of a new key fails with `WriteStall` and writes nothing.
fn assert_refused(db: &Db, i: usize) -> String {
    let writes = db.stats().user_writes;
    let msg = match db.put_opt(key(i), VALUE, &NO_SLOWDOWN) {
        Err(Error::WriteStall(msg)) => msg,
        other => panic!("expected a write stall, got {other:?}"),
    };
    assert_eq!(db.stats().user_writes, writes);
    assert_eq!(db.get(key(i)).unwrap(), None);
    msg
}

/// Every log line of the stall module, captured for all tests of this binary; each test
/// counts the lines naming its own database directory.
struct Capture(Mutex<Vec<String>>);

static CAPTURE: Capture = Capture(Mutex::new(Vec::new()));

impl log::Log for Capture {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.target().starts_with("flatlsm::db::stall")
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            self.0.lock().unwrap().push(r.args().to_string());
        }
    }
    fn flush(&self) {}
}

fn capture_logs() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        log::set_logger(&CAPTURE).expect("no other logger in the unit tests");
        log::set_max_level(log::LevelFilter::Info);
    });
}

/// (start lines, end lines) of `phase` ("write slowdown" or "write stall") for database `dir`.
fn episode_lines(dir: &Path, phase: &str) -> (usize, usize) {
    let start = format!("{phase} in {}: ", dir.display());
    let end = format!("{phase} in {} ended after ", dir.display());
    let lines = CAPTURE.0.lock().unwrap();
    let count = |p: &str| lines.iter().filter(|l| l.starts_with(p)).count();
    (count(&start), count(&end))
}

#[test]
fn slowdown_delays_writes_then_stop_flushes_and_logs_each_episode_once() {
    capture_logs();
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(false)).unwrap();
    let mut next = 0;
    // Up to two immutables: no slowdown yet.
    put_while(&db, &mut next, |db| db.stats().pmtables < 3);
    let s = db.stats();
    assert_eq!((s.delayed_writes, s.slowdown_count), (0, 0));
    assert!(s.writes_slowed && !s.writes_stopped);
    // The slowdown phase: every write is paced.
    for _ in 0..5 {
        put(&db, next);
        next += 1;
    }
    let s = db.stats();
    assert_eq!((s.delayed_writes, s.slowdown_count), (5, 1));
    assert!(s.delayed_write_micros > 0);
    assert_eq!(s.delayed_write_rate, RATE);
    assert!(assert_refused(&db, 9999).contains("slowed down"));
    // An empty batch writes nothing, so it is never refused or delayed.
    db.write_opt(&WriteBatch::new(), &NO_SLOWDOWN).unwrap();
    assert_eq!(db.stats().delayed_writes, 5);
    // The stop: with background work off the writer flushes the oldest table itself.
    put_while(&db, &mut next, |db| db.stats().stall_count == 0);
    let s = db.stats();
    assert_eq!((s.stall_count, s.flushes, s.slowdown_count), (1, 1, 1));
    assert!(!s.writes_stopped);
    for i in 0..next {
        assert!(db.get(key(i)).unwrap().is_some());
    }
    // The flush ended the slowdown, the next switch restarted it at once: one episode, whose
    // end line comes at close (no second has passed without the condition).
    assert_eq!(episode_lines(dir.path(), "write slowdown"), (1, 0));
    assert_eq!(episode_lines(dir.path(), "write stall"), (1, 1));
    db.close().unwrap();
    assert_eq!(episode_lines(dir.path(), "write slowdown"), (1, 1));
}

#[test]
fn no_slowdown_write_fails_at_the_stop_without_writing() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        slowdown_immutable_num: Some(3), // = max_write_buffer_number: no slowdown phase
        ..options(false)
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let mut next = 0;
    put_while(&db, &mut next, |db| db.stats().pmtables < 3);
    // Fill the last mutable table with no_slowdown writes until one would need a new table.
    let refused = loop {
        match db.put_opt(key(next), VALUE, &NO_SLOWDOWN) {
            Ok(()) => next += 1,
            Err(Error::WriteStall(msg)) => break msg,
            Err(e) => panic!("{e}"),
        }
        assert!(next < 1000);
    };
    assert!(refused.contains("PMTables in use"), "{refused}");
    assert_refused(&db, next);
    let s = db.stats();
    assert_eq!(
        (s.stall_count, s.delayed_writes, s.slowdown_count),
        (0, 0, 0)
    );
    // An ordinary write goes through the stop (flushing in this thread) instead.
    put(&db, next);
    assert_eq!(db.stats().stall_count, 1);
}

#[test]
fn writer_blocks_at_the_stop_until_the_held_flush_finishes() {
    capture_logs();
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(true)).unwrap();
    let flush = db.inner.sync_points.pause_once("flush:inputs_reserved");
    std::thread::scope(|s| {
        let writer = s.spawn(|| (0..60).for_each(|i| put(&db, i)));
        flush.wait_reached(Duration::from_secs(10));
        wait_until(|| db.stats().writes_stopped);
        assert!(!writer.is_finished());
        let st = db.stats();
        assert!(st.writes_slowed && st.delayed_writes > 0);
        assert_eq!((st.stall_count, st.slowdown_count), (0, 1));
        // Refused at once although the blocked writer holds the write lock.
        assert!(assert_refused(&db, 9999).contains("PMTables in use"));
        flush.resume();
        writer.join().unwrap();
    });
    db.wait_for_background_work().unwrap();
    db.close().unwrap();
    let s = db.stats();
    assert!(s.stall_count >= 1 && !s.writes_slowed);
    let stalls = s.stall_count as usize;
    let slowdowns = s.slowdown_count as usize;
    assert_eq!(episode_lines(dir.path(), "write stall"), (stalls, stalls));
    assert_eq!(
        episode_lines(dir.path(), "write slowdown"),
        (slowdowns, slowdowns)
    );
}

/// Polls `cond` (a state another thread reaches); panics after 10 s, which means a bug.
fn wait_until(cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "the state was never reached");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A background job's look at the pace while writes are slowed rests as long as its last
/// stretch took (a value-log GC then takes half a core from the flush, not all of it); once
/// the flush has caught up it does not rest. The one duration asserted is a lower bound: a
/// sleep never ends early.
#[test]
fn a_job_pacing_itself_while_writes_are_slowed_rests_as_long_as_it_worked() {
    use crate::compaction::context::JobHost;
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(false)).unwrap();
    let mut next = 0;
    put_while(&db, &mut next, |db| db.stats().pmtables < 3);
    assert!(db.stats().writes_slowed);
    let started = Instant::now();
    db.inner.yield_to_writers(Duration::from_millis(30));
    assert!(started.elapsed() >= Duration::from_millis(30));
    db.flush().unwrap();
    assert!(!db.stats().writes_slowed);
}

/// Regression (thirteenth session): overwrites of 16 KB values faster than the value-log GC
/// frees them grew the logs to three times the live data, bounded by nothing but the disk.
#[test]
fn value_log_garbage_above_its_slowdown_ratio_paces_writes_until_gc_frees_it() {
    capture_logs();
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(false)).unwrap();
    put(&db, 0);
    let garbage = &db.inner.stall.garbage;
    garbage.set_share_for_test(0.6);
    let msg = assert_refused(&db, 1);
    assert!(msg.contains("value-log garbage at 60%"), "{msg}");
    let start = Instant::now();
    put(&db, 2);
    put(&db, 3);
    assert!(start.elapsed() >= Duration::from_millis(3), "not paced");
    assert!(db.stats().delayed_writes >= 1);
    assert_eq!(episode_lines(dir.path(), "write slowdown").0, 1);
    garbage.set_share_for_test(0.4);
    db.put_opt(key(4), VALUE, &NO_SLOWDOWN).unwrap();
}

/// Regression (fifteenth session): flushes waited for a merge of runs starved of CPU by the
/// writers, every PMTable filled and Fig. 9a's writes fell to a twentieth for seconds. Now runs
/// slow writes first, from `4 × l1_merge_trigger` (no background threads here: nothing merges
/// until a flush meets the stop at six times).
#[test]
fn runs_waiting_for_a_merge_slow_writes_before_flushes_wait() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        l1_merge_trigger: 1,
        ..options(false)
    };
    let db = Db::open(dir.path(), opts).unwrap();
    // Each flush's two keys span the others': every flush is a run of its own.
    let run = |i: usize| {
        put(&db, i);
        put(&db, 500 + i);
        db.flush().unwrap();
    };
    (0..3).for_each(run);
    assert!(!db.stats().writes_slowed, "{}", db.stats());
    run(3);
    assert_eq!(db.stats().l1_runs, 4);
    let msg = assert_refused(&db, 100);
    assert!(msg.contains("4 level-0 runs waiting for a merge"), "{msg}");
    (4..7).for_each(run);
    assert!(db.stats().l1_runs <= 6, "{}", db.stats());
    assert!(db.stats().compactions > 0, "the flush at the stop merged");
}
