//! The value-log GC job: pick a log, collect it (`compaction::vlog_gc`), commit, purge.
//!
//! The job runs on its own thread (and in `wait_for_background_work`), serialized only with
//! other GC jobs by `vlog_gc_lock`. It reserves no SSTable and holds no lock a flush, a
//! compaction or a writer waits for: it pins one version (an `Arc<Version>`) for the files it
//! reads, and while writers are stopped for a flush it pauses its copy. Flushes and compactions
//! that commit while it runs commit as usual; their outputs may still name the victim (they
//! copied pointers before the redirect existed), which the redirect table covers.
//!
//! Commit protocol (the same as every job's): outputs synced, then one manifest edit through
//! `DbInner::install_if`, then the obsolete-file purge. The edit applies only if the victim is
//! still a live log of the current version (a compaction thread may have dropped it as
//! unreferenced meanwhile); otherwise the outputs are abandoned to the purge. The redirect table
//! joins the in-memory set before the edit, so a reader of the new version always finds it.
//!
//! Recovery rule: see `compaction::vlog_gc` (a crash before the edit leaves orphans only).

use super::purge::purge_obsolete_files;
use crate::compaction::vlog_gc::{self, GcOutput};
use crate::db::quiet::Writers;
use crate::db::state::DbInner;
use crate::error::Result;
use crate::observe::info_log::event;
use crate::observe::stats::Counters;

/// When a log is due: while writers are busy, once `vlog_gc_total_garbage_ratio` of all
/// value-log bytes is garbage; once they are quiet, `vlog_gc_quiet_garbage_ratio` where lower.
fn trigger(db: &DbInner, writers: Writers) -> vlog_gc::GcTrigger {
    let total = db.opts.vlog_gc_total_garbage_ratio;
    vlog_gc::GcTrigger {
        log_ratio: db.opts.vlog_gc_garbage_ratio,
        total_ratio: match writers {
            Writers::Busy => total,
            Writers::Quiet => total.min(db.opts.vlog_gc_quiet_garbage_ratio),
        },
    }
}

/// Runs one value-log GC if a log is due as `writers` stand; `Ok(false)` if none is, or if the
/// job was abandoned (the database is closing, or the log was dropped meanwhile).
pub(crate) fn gc_one(db: &DbInner, writers: Writers) -> Result<bool> {
    let _job = db.bg.vlog_gc_lock();
    let version = db.versions.current();
    let trigger = trigger(db, writers);
    let Some(victim) = vlog_gc::pick(&version, trigger) else {
        return Ok(false);
    };
    let started = std::time::Instant::now();
    let out = vlog_gc::run(&db.job_context(), &version, victim);
    drop(version); // the victim's file may go once the commit no longer names it
    let committed = match out? {
        Some(out) => commit(db, victim, out)?,
        None => false,
    };
    if committed {
        let line = format!(
            "value-log GC of log {victim} committed after {} ms",
            started.elapsed().as_millis()
        );
        event!(db.info_log, Info, line);
    }
    purge_obsolete_files(db)?;
    Ok(committed)
}

/// Installs the GC's edit if the victim is still live; abandons the outputs otherwise. A
/// commit lowers the garbage share, which may end a slowdown it caused
/// (`db/garbage_pace.rs`): paced writers are woken to look.
fn commit(db: &DbInner, victim: u64, out: GcOutput) -> Result<bool> {
    let GcOutput {
        mut edit,
        table,
        bytes,
        outputs,
    } = out;
    db.files.redirects().insert(table.clone());
    db.sync_point("vlog_gc:before_commit");
    let installed = db.install_if(&mut edit, |v| v.vlogs.contains_key(&victim))?;
    if installed.is_none() {
        let note = format!("value-log GC of log {victim} abandoned: the log was dropped meanwhile");
        event!(db.info_log, Info, note);
        db.files.redirects().evict(table.number());
        db.versions.abandon_outputs(&outputs);
        return Ok(false);
    }
    Counters::add(&db.counters.vlog_gc_bytes, bytes);
    Counters::add(&db.counters.vlog_gcs, 1);
    db.end_quiet_slowdown();
    db.bg.wake_all();
    Ok(true)
}
