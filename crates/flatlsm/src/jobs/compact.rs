//! Running compactions: ask the design's policy for a pick (`compaction/policy/`), reserve its
//! files in the version it was picked from, run the shared job (`compaction/job.rs`) against a
//! job context, and commit its edit through the one commit protocol (`DbInner::install`).
//! Also `compact_range`, which moves everything in a key range down level by level.
//!
//! Locking: one compaction at a time (`compaction_lock`, held by the caller); flushes and
//! value-log GC run beside it and reserve nothing of what it reads.

use super::background::record_failure;
use super::purge::{drop_unreferenced_vlogs, purge_obsolete_files};
use crate::compaction::job::{self, Compaction};
use crate::compaction::policy::range_dels::rewrite_under_range_dels;
use crate::compaction::policy::redirects::rewrite_redirected;
use crate::compaction::policy::{into_next_level, round_robin, PolicyView};
use crate::db::events::compaction_line;
use crate::db::quiet::Writers;
use crate::db::state::DbInner;
use crate::error::Result;
use crate::observe::info_log::event;
use crate::observe::stats::Counters;
use crate::types::user_key_of;
use crate::version::Version;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs one compaction if due as `writers` stand; `Ok(false)` if nothing is due. Drops value
/// logs and redirects nothing references any more either way.
pub(crate) fn compact_one(db: &DbInner, writers: Writers) -> Result<bool> {
    record_failure(db, compact_due(db, writers))
}

fn compact_due(db: &DbInner, writers: Writers) -> Result<bool> {
    let _job = db.bg.compaction_lock();
    let version = db.versions.current();
    // The design's own level 0 drains first: flushes wait for its room.
    let mut worked = super::store_jobs::compact_store(db, &version)?;
    if !worked {
        let oldest = db.snapshots.oldest(db.visible());
        let picked = with_view(db, &version, writers, |view| {
            db.policy
                .pick(view)
                .or_else(|| rewrite_under_range_dels(view, oldest, |_| true))
                .or_else(|| rewrite_redirected(view))
        });
        worked = match picked {
            Some(c) => run_reserved(db, &version, &c)?,
            None => false,
        };
    }
    drop(version);
    // The job's pinned version is released by now, so dead files can go.
    drop_unreferenced_vlogs(db)?;
    if worked {
        purge_obsolete_files(db)?;
    }
    Ok(worked)
}

/// Calls `f` with a view of `version`: busy files are those other jobs reserved.
fn with_view<T>(
    db: &DbInner,
    version: &Version,
    writers: Writers,
    f: impl FnOnce(&PolicyView<'_>) -> T,
) -> T {
    let pointers = db.versions.lock().compact_pointers.clone();
    let busy = |n: u64| db.versions.is_busy(n);
    f(&PolicyView {
        version,
        busy: &busy,
        pointers: &pointers,
        level0_wasted_probes: db.read_charges.total(),
        writes_quiet: writers == Writers::Quiet,
    })
}

/// Reserves `c`'s files (only if `version` is still current), runs and commits it; `Ok(false)`
/// if another job got there first.
fn run_reserved(db: &DbInner, version: &Arc<Version>, c: &Compaction) -> Result<bool> {
    let numbers = c.file_numbers();
    if !db.versions.try_reserve_in(version, &numbers) {
        return Ok(false);
    }
    db.sync_point("compaction:inputs_reserved");
    let started = Instant::now();
    let result = job::run(&db.job_context(), c, version).and_then(|(mut edit, bytes)| {
        db.install(&mut edit, |_| {})?;
        if c.level == 0 {
            // The runs read charges were made for are gone.
            db.read_charges.reset();
        }
        Counters::add(&db.counters.compaction_bytes, bytes);
        let line = compaction_line(db.opts.profile, c, &edit, bytes, started.elapsed());
        event!(db.info_log, Debug, line);
        Ok(())
    });
    db.versions.release(&numbers);
    result?;
    if let Some(last) = c.inputs.iter().map(|f| user_key_of(&f.largest)).max() {
        let mut vs = db.versions.lock();
        vs.compact_pointers[c.level] = last.to_vec();
    }
    Counters::add(&db.counters.compactions, 1);
    db.bg.wake_all();
    Ok(true)
}

/// `Db::compact_range`: moves every file overlapping the range down, level by level, to the
/// design's last level (all of level 0 first, as RocksDB's does). A failure puts the database
/// in the background-error state, as for compactions run by the background threads.
pub(crate) fn compact_range(db: &DbInner, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
    record_failure(db, compact_range_unrecorded(db, begin, end))
}

fn compact_range_unrecorded(db: &DbInner, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
    let _job = db.bg.compaction_lock();
    let b = begin.unwrap_or(&[]).to_vec();
    let e_max = vec![0xffu8; crate::options::MAX_KEY_SIZE + 1];
    let e = end.map(<[u8]>::to_vec).unwrap_or(e_max);
    drain_store(db)?;
    for level in 0..db.opts.profile.num_levels() - 1 {
        compact_level_in_range(db, level, (&b, &e))?;
    }
    rewrite_in_range_under_range_dels(db, (&b, &e))?;
    record_failure(db, purge_obsolete_files(db))
}

/// Rewrites, one by one, the files overlapping `[b, e]` that lie under a range tombstone they
/// have not applied (`policy/range_dels.rs`), so `compact_range` leaves no covered version.
fn rewrite_in_range_under_range_dels(db: &DbInner, (b, e): (&[u8], &[u8])) -> Result<()> {
    let in_range = |f: &crate::version::FileMeta| {
        user_key_of(&f.largest) >= b && user_key_of(&f.smallest) <= e
    };
    loop {
        let version = db.versions.current();
        let oldest = db.snapshots.oldest(db.visible());
        let picked = with_view(db, &version, Writers::Busy, |v| {
            rewrite_under_range_dels(v, oldest, in_range)
        });
        let Some(c) = picked else {
            return Ok(());
        };
        if !run_reserved(db, &version, &c)? {
            wait_for_inputs(db)?;
        }
    }
}

/// Waits briefly for another job to release the inputs a `compact_range` step needs; fails
/// once that job can no longer end normally (shutdown, background error: `waits.rs`), e.g.
/// it panicked holding them.
fn wait_for_inputs(db: &DbInner) -> Result<()> {
    if let Some(stop) = db.stop_waiting() {
        return Err(stop.into_error());
    }
    db.versions.wait_for_release(Duration::from_millis(10));
    Ok(())
}

/// Moves the design's whole level-0 store (MatrixKV's rows) into level 1, as `compact_range`
/// moves all of level 0: the store is made one compactor and drained column by column.
fn drain_store(db: &DbInner) -> Result<()> {
    loop {
        let version = db.versions.current();
        if let Some(mut edit) = db.design.store().drain_store_edit(&version) {
            db.install(&mut edit, |_| {})?;
            continue;
        }
        if !super::store_jobs::compact_store(db, &version)? {
            return Ok(());
        }
    }
}

/// Compacts the files of `level` overlapping `[b, e]` into `level + 1` until none is left
/// (level 0: all of it), waiting while other jobs hold inputs.
fn compact_level_in_range(db: &DbInner, level: usize, (b, e): (&[u8], &[u8])) -> Result<()> {
    loop {
        let version = db.versions.current();
        let in_range = |f: &crate::version::FileMeta| {
            level == 0 || (user_key_of(&f.largest) >= b && user_key_of(&f.smallest) <= e)
        };
        if !version.levels[level].iter().any(|f| in_range(f)) {
            return Ok(());
        }
        let picked = with_view(db, &version, Writers::Busy, |view| match level {
            0 => into_next_level(view, 0, version.levels[0].clone()),
            _ => round_robin(view, level, in_range),
        });
        let done = match picked {
            Some(c) => run_reserved(db, &version, &c)?,
            None => false,
        };
        if !done {
            wait_for_inputs(db)?;
        }
    }
}
