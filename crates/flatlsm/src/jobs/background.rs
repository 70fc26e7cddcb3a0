//! Background work: the flush thread, the compaction thread, the value-log GC thread and the
//! persist timer, plus the synchronous forms used by `flush`, `compact_range` and
//! `wait_for_background_work`.
//!
//! Every job follows the same commit protocol: write outputs and sync them, append one edit to
//! the manifest (the commit point), swap in the new version, then delete inputs (PM Log, SST,
//! value-log and redirect-table files; `purge.rs`) once no live version can reach them. A failed job sets
//! the background error: writes fail from then on, reads keep working, nothing half-written
//! becomes visible. Value-log GC (`vlog_gc_job.rs`) runs on its own thread so that it never
//! delays an L1 → L2 compaction; it waits for nothing a flush or writer holds.

use super::compact::compact_one;
use super::purge::purge_obsolete_files;
use super::store_jobs::StoreFlushed;
use super::vlog_gc_job;
use crate::buffer::BufferRef;
use crate::compaction::flush;
use crate::db::events::{flush_line, FlushBytes};
use crate::db::flush_queue::Claim;
use crate::db::quiet::Writers;
use crate::db::state::DbInner;
use crate::db::waits::StopWaiting;
use crate::error::{Error, Result};
use crate::observe::info_log::event;
use crate::observe::stats::Counters;
use crate::version::Version;
use std::collections::HashSet;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Starts the background threads. A panic in one becomes the background error
/// (`DbInner::catch_panics`), so no waiter waits for a thread that is gone.
pub(crate) fn start(db: &Arc<DbInner>) -> Vec<JoinHandle<()>> {
    let mut threads = Vec::new();
    let spawn = |name: &'static str, f: fn(&DbInner), nice: i32| {
        let db = db.clone();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                lower_priority(nice);
                db.catch_panics(name, || f(&db))
            })
            .expect("spawning a background thread")
    };
    let nice = db.opts.background_nice;
    // The persist thread stays at the writers' priority: it bounds how much a crash can lose.
    threads.push(spawn("flatlsm-persist", persist_loop, 0));
    if db.opts.background_work {
        // Open pays for the first spare logs (their first touch), not the first writes: a
        // writer fills a 256 MiB log in a quarter of a second, faster than a spare is made.
        prepare_spare_logs(db);
        for _ in 0..db.design.flush_threads() {
            threads.push(spawn("flatlsm-flush", flush_loop, nice));
        }
        // Writers wait for flushes, not for compactions: the flush goes first when they
        // compete (RocksDB's high- and low-priority pools).
        let low = low_priority_nice(nice);
        threads.push(spawn("flatlsm-compact", compaction_loop, low));
        threads.push(spawn("flatlsm-vlog-gc", vlog_gc_loop, low));
    }
    threads
}

/// How much nicer than the flush threads compactions and value-log GC run (when
/// `background_nice` is not 0): nice 5 against 8 weighs about 2:1 for the flush.
const LOW_PRIORITY_EXTRA_NICE: i32 = 3;

/// The nice value added to compaction and GC threads, given the flush threads'.
fn low_priority_nice(nice: i32) -> i32 {
    match nice {
        0 => 0,
        n => (n + LOW_PRIORITY_EXTRA_NICE).min(19),
    }
}

/// Adds `nice` to the calling thread's nice value (threads it spawns inherit it, so a flush's
/// worker and I/O threads run at the same priority). A failure is logged, never fatal.
fn lower_priority(nice: i32) {
    if nice == 0 {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let tid = rustix::thread::gettid();
        let base = rustix::process::getpriority_process(Some(tid)).unwrap_or(0);
        let lowered = (base + nice).min(19);
        if let Err(e) = rustix::process::setpriority_process(Some(tid), lowered) {
            log::warn!("could not lower the priority of a background thread: {e}");
        }
    }
}

fn wait(db: &DbInner, timeout: Duration) -> bool {
    let mut g = db.bg.signal();
    if !db.bg.shutting_down() {
        db.bg.wait_for(&mut g, timeout);
    }
    !db.bg.shutting_down()
}

/// Forces the Buffer Log / msync group commit at least every `pm_persist_interval_ms`, and
/// ends a quiet slowdown episode (`stall.rs`).
fn persist_loop(db: &DbInner) {
    let interval = Duration::from_millis(db.opts.pm_persist_interval_ms);
    while wait(db, interval) {
        if let Err(e) = db.versions.sv().mem.commit() {
            db.set_bg_error(&e);
        }
        // Ends a slowdown episode once no writer or flush is left to notice.
        db.end_quiet_slowdown();
    }
}

/// Jobs may start: the database is not shutting down and no background work failed.
fn healthy(db: &DbInner) -> bool {
    db.stop_waiting().is_none()
}

/// Gives every immutable PMTable its bloom filter, so point reads skip tables without the key.
fn build_missing_filters(db: &DbInner) {
    for table in db.versions.sv().imms.iter() {
        table.build_filter(db.opts.bloom_bits_per_key);
    }
}

/// Spares are prepared at start and after every flush (not only when the loop idles), but
/// never while a flush is due: the flush goes first. A burst after a quiet pause finds one
/// spare (`QUIET_SPARE_LOGS`); making the next ones first (150–210 ms each for 171 MiB on
/// tmpfs) held the first flush back while the writer filled PM, so it found three tables
/// (Fig. 9a at 64 KB: docs/design-decisions.md). The writer then creates its own logs until
/// the first flush returns some, which also slows it while the flush has nothing drained.
fn flush_loop(db: &DbInner) {
    prepare_spare_logs(db);
    while wait(db, Duration::from_millis(100)) {
        build_missing_filters(db);
        prepare_spares_unless_flush_due(db);
        trim_spare_logs(db);
        while healthy(db) && (flush_due(db) || quiet_flush_due(db)) {
            match flush_one(db) {
                Ok(true) => prepare_spares_unless_flush_due(db),
                // Claimed by the other flush thread meanwhile, or the database shuts down.
                Ok(false) | Err(_) => break, // a failure is recorded by `flush_one`
            }
        }
        // The records of write buffers a switch queued (it woke this thread) that no flush's
        // install took (`db/buffer_records.rs`). A failure is the background error already.
        let _ = db.write_buffer_records();
    }
}

/// [`prepare_spare_logs`] unless a flush is due (it goes first: [`flush_loop`]).
fn prepare_spares_unless_flush_due(db: &DbInner) {
    if !flush_due(db) {
        prepare_spare_logs(db);
    }
}

/// Gives back the free PM Logs a quiet writer will not need soon (`PmLogPool::trim_when_quiet`).
/// A failure is only logged, as for spares.
fn trim_spare_logs(db: &DbInner) {
    if !db.design.buffer_kind().pooled() {
        return;
    }
    if let Err(e) = db.files.pm_pool().trim_when_quiet() {
        let note = format!("deleting a free PM Log: {e}");
        event!(db.info_log, Warn, note);
    }
}

/// Keeps free PM Logs ready in the pool (`PmLogPool::prepare_spare`), so the writer's next
/// PMTable switches need not create and zero a log. A failure is only logged: the writer then
/// creates its log itself and reports what goes wrong there.
fn prepare_spare_logs(db: &DbInner) {
    if !db.design.buffer_kind().pooled() {
        return;
    }
    loop {
        let in_use = 1 + db.versions.sv().imms.len();
        let number = db.new_file_number();
        match db
            .files
            .pm_pool()
            .prepare_spare(number, db.opts.pmtable_size, in_use)
        {
            Ok(true) => continue,
            Ok(false) => return,
            Err(e) => {
                let note = format!("preparing a spare PM Log: {e}");
                return event!(db.info_log, Warn, note);
            }
        }
    }
}

fn compaction_loop(db: &DbInner) {
    while wait(db, Duration::from_millis(100)) {
        build_missing_filters(db);
        // A failure is recorded by `compact_one`.
        while healthy(db) && matches!(compact_one(db, db.writers()), Ok(true)) {}
    }
}

/// Value-log GC, yielding to flushes: no job starts while writes are slowed down or stopped
/// (the flush backlog has the device first). Each job works to the quiet target once writes
/// are quiet.
fn vlog_gc_loop(db: &DbInner) {
    while wait(db, Duration::from_millis(100)) {
        // A failure is recorded by `vlog_gc_one`.
        while healthy(db) && !db.slowdown_due() && !db.writes_stopped() {
            if !matches!(vlog_gc_one(db, db.writers()), Ok(true)) {
                break;
            }
        }
    }
}

/// Runs one value-log GC if one is due as `writers` stand; `Ok(false)` if none is. A failure
/// puts the database in the background-error state.
pub(crate) fn vlog_gc_one(db: &DbInner, writers: Writers) -> Result<bool> {
    record_failure(db, vlog_gc_job::gc_one(db, writers))
}

/// Enough immutable tables no flush job has claimed.
fn flush_due(db: &DbInner) -> bool {
    db.flush_queue.unclaimed(&db.versions.sv().imms) >= db.opts.flush_immutable_num
}

/// An immutable table no job has claimed although everything is quiet: it waits for
/// `flush_immutable_num - 1` more to flush with (the paper's parallel flush), and while no
/// write comes none will, so reads would search it, and the runs below it stay unmerged
/// (quiet cleanup waits for it: `DbInner::writers`), for as long as the quiet lasts. Only
/// once the foreground is idle too (`db/quiet.rs`): a flush in the middle of a read phase
/// took a core from it.
fn quiet_flush_due(db: &DbInner) -> bool {
    let sv = db.versions.sv();
    db.quiet_buffers() && db.flush_queue.unclaimed(&sv.imms) > 0
}

/// For `close`: runs the flushes due now (at least `flush_immutable_num` immutable buffers no
/// job has claimed) and waits for those in flight, so a program that opens and closes the
/// database in a loop does not pile up PM Logs (each open seals the buffer it recovers). The
/// mutable buffer stays in PM (it is durable there), and no compaction is waited for. Nothing
/// for a read-only database or one in the background-error state.
pub(crate) fn finish_due_flushes(db: &DbInner) -> Result<()> {
    if db.files.read_only() || db.bg.failed() {
        return Ok(());
    }
    // A flush that did nothing gave up (shutdown) or lost its tables to another job: looping
    // on `flush_due` alone would spin while they stay due.
    while flush_due(db) && flush_one(db)? {}
    db.flush_queue.wait_idle();
    Ok(())
}

/// Runs one flush job over the immutable PMTables (`flush_immutables`); `Ok(false)` if there
/// is none. A failure, in whichever thread it runs, puts the database in the background-error
/// state.
pub(crate) fn flush_one(db: &DbInner) -> Result<bool> {
    let flushed = flush_immutables(db);
    if flushed.is_err() {
        db.sync_point("flush:failed");
    }
    record_failure(db, flushed)
}

/// Sets the background error for a failed job so later writes fail fast instead of retrying.
/// A job that stopped because the database closed (`Error::Closed`) did not fail.
pub(crate) fn record_failure<T>(db: &DbInner, r: Result<T>) -> Result<T> {
    match &r {
        Err(Error::Closed) | Ok(_) => {}
        Err(e) => db.set_bg_error(e),
    }
    r
}

/// One flush job: claims every immutable table no other job has, or the oldest of them up to
/// the design's batch limit (oldest last; a table sealed while it runs waits for the next
/// job), writes them, and installs them in claim order
/// (`flush_queue.rs`). With one flush thread the job waits for its turn before it starts;
/// with two (SLM-DB) it writes its SST while the job before it indexes and installs. How the
/// job ended reaches the queue before the next job's turn: a failure refuses every later
/// install, so no newer flush lands before this one.
fn flush_immutables(db: &DbInner) -> Result<bool> {
    if db.flush_queue.unclaimed(&db.versions.sv().imms) == 0 || !wait_for_run_room(db)? {
        return Ok(false);
    }
    db.sync_point("flush:before_claim");
    let limit = db.design.flush_batch_limit(&db.opts);
    let imms = || db.versions.sv().imms.to_vec();
    let Some((mut claim, tables)) = db.flush_queue.claim(imms, limit) else {
        db.sync_point("flush:nothing_claimed"); // claimed by another job, or the queue is held
        return Ok(false);
    };
    db.stall.progress.started();
    let installed = flush_claimed(db, &claim, &tables);
    claim.end(refusal_after(&installed));
    drop(claim);
    if !installed? {
        return Ok(false);
    }
    for table in tables {
        table.release(db.files.pm_pool())?;
    }
    Counters::add(&db.counters.flushes, 1);
    purge_obsolete_files(db)?;
    db.bg.wake_all();
    Ok(true)
}

/// Writes `tables` and installs them in `claim`'s turn; `Ok(false)` if the database shut down
/// first (nothing installed).
fn flush_claimed(db: &DbInner, claim: &Claim<'_>, tables: &[BufferRef]) -> Result<bool> {
    let pipelined = db.design.flush_threads() > 1;
    if !pipelined && !my_turn(claim)? {
        return Ok(false);
    }
    let version = db.versions.current();
    db.sync_point("flush:inputs_reserved");
    let started = Instant::now();
    match super::store_jobs::flush_into_store(db, tables, started)? {
        StoreFlushed::Installed => Ok(true),
        StoreFlushed::GaveUp => Ok(false),
        StoreFlushed::NotMine => flush_to_ssts(db, claim, tables, &version, started),
    }
}

/// Writes `tables` as SSTs against `version`, then installs them in `claim`'s turn (the older
/// job may install meanwhile); `Ok(false)` if the database shut down first.
fn flush_to_ssts(
    db: &DbInner,
    claim: &Claim<'_>,
    tables: &[BufferRef],
    version: &Arc<Version>,
    started: Instant,
) -> Result<bool> {
    let mut ctx = db.flush_context();
    ctx.options.keep_tombstones = claim.behind_others;
    let out = flush::flush_tables(&ctx, tables, version)?;
    db.sync_point("flush:sst_written");
    if !my_turn(claim)? {
        return Ok(false);
    }
    db.check_writable()?; // e.g. a compaction failed meanwhile
    install_flush(db, tables, out, started)?;
    Ok(true)
}

/// Waits for `claim`'s turn: `Ok(false)` if an older job gave up at shutdown, the older job's
/// failure if one failed (this job must not install before it).
fn my_turn(claim: &Claim<'_>) -> Result<bool> {
    claim
        .wait_turn()
        .map_or_else(StopWaiting::give_up, |()| Ok(true))
}

/// What a flush job's claim records when dropped, given how the job ended: nothing after an
/// install, else why no later job may install.
fn refusal_after(installed: &Result<bool>) -> Option<StopWaiting> {
    match installed {
        Ok(true) => None,
        Ok(false) | Err(Error::Closed) => Some(StopWaiting::Closing),
        Err(e) => Some(StopWaiting::failed(e)),
    }
}

/// Waits while level 0 holds the design's stop number of runs (FlatLSM: `6 × l1_merge_trigger`
/// unmerged L1 runs; leveled: `level0_stop_writes_trigger`): compaction is behind, and writers
/// stop as write buffers fill. Without background threads the compaction runs here.
/// `Ok(false)` if the database shuts down meanwhile; the background error if background work
/// fails meanwhile (no compaction will make room then: `waits.rs`).
fn wait_for_run_room(db: &DbInner) -> Result<bool> {
    let stop = db.design.level0_stop_runs(&db.opts);
    let since = Instant::now();
    let mut waited = false;
    while db.design.level0_runs(&db.versions.lock().current) >= stop {
        waited = true;
        if !db.keep_waiting()? {
            return Ok(false);
        }
        if !db.opts.background_work {
            compact_one(db, Writers::Busy)?;
            continue;
        }
        db.bg.wake_all();
        db.sync_point("flush:waiting_for_room");
        db.versions.wait_for_release(Duration::from_millis(10));
    }
    if waited {
        log_run_room_wait(db, stop, since.elapsed());
    }
    Ok(true)
}

/// One info line per flush that waited for level 0 to make room: such a wait holds the
/// immutables back while writers fill the rest of the PMTables.
fn log_run_room_wait(db: &DbInner, stop: usize, took: Duration) {
    let line = format!(
        "[{}] flush waited {} ms for level 0 to hold fewer than {stop} runs",
        db.opts.profile,
        took.as_millis()
    );
    event!(db.info_log, Info, line);
}

/// Installs a flush's outputs; `started` is when the flush began (its busy time for `Stats`
/// and the slowdown pace).
pub(super) fn install_flush(
    db: &DbInner,
    tables: &[BufferRef],
    out: flush::FlushOutput,
    started: Instant,
) -> Result<()> {
    let mut edit = out.edit;
    let flushed: HashSet<u64> = tables.iter().map(|t| t.number()).collect();
    let sv = db.versions.sv_full();
    let min_unflushed = sv
        .imms
        .iter()
        .map(|t| t.number())
        .filter(|n| !flushed.contains(n))
        .chain(std::iter::once(sv.mem.number()))
        .min()
        .expect("the mutable table always exists");
    edit.min_unflushed_pmlog = Some(min_unflushed);
    let max_seq = tables.iter().map(|t| t.max_sequence()).max().unwrap_or(0);
    edit.last_sequence = Some(db.visible().max(max_seq));
    db.design
        .store()
        .index_flush(&edit, db.files.table_cache())?;
    // Before the tables leave the backlog, so it never counts them gone twice.
    db.stall.progress.installed(out.reported);
    db.install(&mut edit, |imms| {
        imms.retain(|t| !flushed.contains(&t.number()))
    })?;
    Counters::add(&db.counters.flush_sst_bytes, out.sst_bytes);
    Counters::add(&db.counters.flush_vlog_bytes, out.vlog_bytes);
    Counters::add(&db.counters.flush_pm_bytes, out.pm_bytes);
    let pm_bytes = tables.iter().map(|t| t.log_bytes()).sum();
    let bytes = FlushBytes {
        sst: out.sst_bytes,
        vlog: out.vlog_bytes,
        pm: out.pm_bytes,
    };
    let line = flush_line(db.opts.profile, tables, &edit, &bytes, started.elapsed());
    event!(db.info_log, Debug, line);
    db.note_flush(pm_bytes, started.elapsed());
    Ok(())
}

/// `Db::flush`: seal the mutable table, then flush every immutable table in this thread.
pub(crate) fn flush_all(db: &DbInner) -> Result<()> {
    {
        let _w = db.writes.lock();
        db.check_writable()?;
        if !db.versions.sv().mem.is_empty() {
            db.seal_mutable()?;
        }
    }
    while flush_one(db)? {
        db.check_writable()?;
    }
    db.flush_queue.wait_idle(); // tables another thread claimed
    db.check_writable()
}

/// Runs due work in this thread until nothing is due, then deletes obsolete files once more,
/// while no background compaction or GC job runs.
pub(crate) fn wait_idle(db: &DbInner) -> Result<()> {
    loop {
        db.check_writable()?;
        let mut worked = false;
        // As in `finish_due_flushes`: a flush that did nothing ends the round.
        while flush_due(db) && flush_one(db)? {
            worked = true;
        }
        db.flush_queue.wait_idle();
        while compact_one(db, db.writers_while_settling())? {
            worked = true;
        }
        while vlog_gc_one(db, db.writers_while_settling())? {
            worked = true;
        }
        if !worked {
            // With the job locks held (checkpoint's order) no background compaction or GC is
            // mid-job holding an older version, so the purge deletes every file no version
            // names: "settled" includes the files. (Without them a background GC finishing
            // beside this purge kept its victim's log alive past the return, seen in CI.)
            let _compaction = db.bg.compaction_lock();
            let _gc = db.bg.vlog_gc_lock();
            return record_failure(db, purge_obsolete_files(db));
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::lower_priority;

    fn own_nice() -> i32 {
        rustix::process::getpriority_process(Some(rustix::thread::gettid())).unwrap()
    }

    #[test]
    fn lowering_priority_changes_only_the_calling_thread() {
        let before = own_nice();
        let (lowered, base) = std::thread::spawn(move || {
            let base = own_nice();
            lower_priority(3);
            (own_nice(), base)
        })
        .join()
        .unwrap();
        assert_eq!(lowered, (base + 3).min(19));
        assert_eq!(own_nice(), before, "the caller's thread keeps its priority");
    }

    #[test]
    fn compactions_run_nicer_than_flushes_unless_priorities_are_left_alone() {
        use super::low_priority_nice;
        assert_eq!(
            low_priority_nice(0),
            0,
            "0 leaves every thread at the process's"
        );
        assert_eq!(low_priority_nice(5), 8);
        assert_eq!(low_priority_nice(18), 19, "nice values end at 19");
    }
}
