//! Jobs on a design's own level-0 store (MatrixKV's matrix container): flushing write buffers
//! into it (`flush_into_store`) and compacting it into level 1 (`compact_store`). Both commit
//! through the one protocol (`DbInner::install`): outputs persisted, one manifest edit, then the
//! new version; a failure sets the background error and installs nothing.

use super::background::{install_flush, record_failure};
use crate::buffer::{BufferRef, WriteBuffer};
use crate::compaction::filtered::Filtered;
use crate::compaction::flush::FlushOutput;
use crate::compaction::job;
use crate::db::state::DbInner;
use crate::designs::{StoreFlush, StorePart};
use crate::error::Result;
use crate::observe::stats::Counters;
use crate::rowtable::build::{shared_prefix_len, RowBound};
use crate::types::user_key_of;
use crate::version::{FileMeta, Version, VersionEdit};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What `flush_into_store` did.
pub(crate) enum StoreFlushed {
    /// The design flushes into SSTables: nothing was done.
    NotMine,
    /// The tables are in the store and the edit is installed.
    Installed,
    /// The database is closing: nothing was installed.
    GaveUp,
}

/// Flushes `tables` into the store, waiting for room (column compactions) as needed.
pub(crate) fn flush_into_store(
    db: &DbInner,
    tables: &[BufferRef],
    started: Instant,
) -> Result<StoreFlushed> {
    loop {
        let version = db.versions.current();
        // Numbered in the order the rows are written: oldest table first.
        let numbers: Vec<u64> = tables.iter().map(|_| db.new_output_number()).collect();
        let written = write_once(db, tables, &numbers, &version);
        if !matches!(written, Ok(StoreFlush::Written(..))) {
            db.versions.abandon_outputs(&numbers);
        }
        match written? {
            StoreFlush::NotMine => return Ok(StoreFlushed::NotMine),
            StoreFlush::NoRoom(unblock) => {
                if !wait_for_room(db, unblock)? {
                    return Ok(StoreFlushed::GaveUp);
                }
            }
            StoreFlush::Written(edit, bytes) => {
                let out = FlushOutput {
                    edit,
                    sst_bytes: 0,
                    vlog_bytes: 0,
                    pm_bytes: bytes,
                    reported: 0,
                };
                if let Err(e) = install_flush(db, tables, out, started) {
                    db.design.store().discard_store_flush(&numbers);
                    return Err(e);
                }
                return Ok(StoreFlushed::Installed);
            }
        }
    }
}

/// One attempt: the tables, oldest first, filtered and written as outputs `numbers` (in
/// that order).
fn write_once(
    db: &DbInner,
    tables: &[BufferRef],
    numbers: &[u64],
    version: &Version,
) -> Result<StoreFlush> {
    let oldest = db.snapshots.oldest(db.visible()); // as a job context would see it
    let range_dels = &version.range_dels;
    // `tables` is newest first; rows are written oldest first.
    let mut parts = Vec::with_capacity(tables.len());
    for (t, &number) in tables.iter().rev().zip(numbers) {
        let (entries, key_value_bytes) = t.contents();
        let source = Box::new(Filtered::new(t.flush_cursor(), oldest, range_dels));
        let bound = RowBound {
            entries,
            key_value_bytes,
            shared_prefix: shared_prefix_of(&**t),
        };
        parts.push(StorePart {
            number,
            bound,
            source,
        });
    }
    db.design.store().store_flush(version, parts)
}

/// How many leading bytes every user key of `table` shares: the common prefix of its smallest
/// and largest key (a row's key prefixes start after them, `rowtable`).
fn shared_prefix_of(table: &dyn WriteBuffer) -> usize {
    let mut cursor = table.flush_cursor();
    cursor.seek_to_first();
    if !cursor.valid() {
        return 0;
    }
    let first = user_key_of(cursor.key()).to_vec();
    cursor.seek_to_last();
    match cursor.valid() {
        true => shared_prefix_len(&first, user_key_of(cursor.key())),
        false => 0,
    }
}

/// Moves the design's index onto the outputs `installed` added, then deletes the `inputs` by a
/// second edit. A crash between the two edits leaves inputs and outputs both named, the index
/// pointing at one copy or the other of each key: nothing is lost, and the inputs, dead or
/// nearly, are merged away later.
fn retire(db: &DbInner, inputs: &[Arc<FileMeta>], installed: &VersionEdit) -> Result<()> {
    if inputs.is_empty() {
        return Ok(());
    }
    let outputs: Vec<FileMeta> = installed.new_files.iter().map(|(_, f)| f.clone()).collect();
    let range_dels = db.versions.sv().version.range_dels.clone();
    db.design
        .store()
        .follow_compaction(inputs, &outputs, db.files.table_cache(), &range_dels)?;
    let mut edit = VersionEdit {
        deleted_files: inputs.iter().map(|f| (0, f.number)).collect(),
        ..VersionEdit::default()
    };
    db.install(&mut edit, |_| {})?;
    Ok(())
}

/// Installs `unblock` (if any), then waits for a store compaction (running one here without
/// background threads); `Ok(false)` if the database is closing, the background error if
/// background work failed (no compaction will make room then: `waits.rs`).
fn wait_for_room(db: &DbInner, unblock: Option<VersionEdit>) -> Result<bool> {
    if let Some(mut edit) = unblock {
        db.install(&mut edit, |_| {})?;
    }
    if !db.keep_waiting()? {
        return Ok(false);
    }
    if !db.opts.background_work {
        let version = db.versions.current();
        compact_store(db, &version)?;
        return Ok(true);
    }
    db.bg.wake_all();
    db.sync_point("flush:waiting_for_room");
    db.versions.wait_for_release(Duration::from_millis(10));
    Ok(true)
}

/// Runs the store's next compaction into level 1, if one is due; `Ok(false)` if none is (or its
/// L1 files are held by another job). The caller holds `compaction_lock`.
pub(crate) fn compact_store(db: &DbInner, version: &Arc<Version>) -> Result<bool> {
    let snapshots = || {
        let visible = db.visible();
        db.snapshots.oldest(visible) < visible
    };
    let Some(job) =
        db.design
            .store()
            .store_compaction(version, db.files.table_cache(), &snapshots)?
    else {
        return Ok(false);
    };
    let mut numbers = job.compaction.file_numbers();
    numbers.extend(job.retire.iter().map(|f| f.number));
    if !db.versions.try_reserve_in(version, &numbers) {
        return Ok(false);
    }
    db.sync_point("compaction:inputs_reserved");
    let started = Instant::now();
    let ran = job::run_with(&db.job_context(), &job.compaction, version, job.sources);
    let result = ran.and_then(|(mut edit, bytes)| {
        edit.design_records.extend(job.records);
        db.install(&mut edit, |_| {})?;
        retire(db, &job.retire, &edit)?;
        db.note_store_compaction(job.bytes, bytes, started.elapsed());
        Ok(())
    });
    db.versions.release(&numbers);
    drop(job.pin); // the rows' pages may be reused once no reader holds the old view
    record_failure(db, result)?;
    Counters::add(&db.counters.compactions, 1);
    db.bg.wake_all();
    Ok(true)
}
