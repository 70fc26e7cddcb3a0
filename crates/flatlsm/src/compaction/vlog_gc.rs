//! Value-log garbage collection by redirect tables with lazy pointer fix-up.
//!
//! Accounting is exact and needs no extra state: each SSTable records how many bytes it
//! references in each value log (`FileMeta::vlog_refs`); a log's live bytes are the sum over the
//! current version, references to a redirected log counting for its target, and its garbage is
//! `total - live`.
//!
//! Why no SSTable is rewritten: a value log is *sealed* when its writer finishes, before any
//! version names it. From then on the pointers into it can only disappear: a flush creates
//! pointers only into its own new logs, and compaction only copies pointers. So the pointers
//! into a victim V found in the SSTables of one version are a superset of those in any later
//! version, and a table of where each of those records went stays complete forever.
//!
//! A job ([`run`]) on the version it was handed (an `Arc<Version>`, which keeps the files alive;
//! nothing is reserved): read the SSTables whose `vlog_refs` name V, collect the distinct record
//! offsets into V, sort them, copy each record (its crc verified by the read) in that order into
//! a new log N, and write V's redirect table (`vlog::redirect`). The caller commits one edit: N
//! is a new value log, V leaves the live logs and is redirected by the table into N.
//!
//! Persist order: N finished (synced) → redirect table written, synced, directory synced →
//! manifest edit (the commit point) → V's data file deleted once no live version names it (the
//! obsolete-file rule). Recovery rule: a crash before the edit leaves the previous state, N and
//! the table are orphans removed at open; after it, V's data file (if still present) is an
//! orphan too, and the table is loaded and verified at open.
//!
//! Invariants: the picker never picks a log that is the target of a live redirect (no chains)
//! and only picks logs of a version, which are all sealed. The redirect leaves the version once
//! no SSTable names V (`Version::unreferenced_redirects`), and its file is deleted then by the
//! same rule as data files.

use super::context::JobContext;
use super::output::VlogOutput;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::types::{parse_internal_key, ValueKind, ValuePointer};
use crate::version::{FileMeta, RedirectMeta, Version, VersionEdit, VlogMeta};
use crate::vlog::{vlog_file_name, RedirectEntry, RedirectTable};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// Bytes copied between two looks at the pace (`pace`).
const PACE_BYTES: u64 = 4 << 20;

/// What a GC job wrote, ready to commit.
pub(crate) struct GcOutput {
    /// N, the redirect of V, and V leaving the live logs.
    pub edit: VersionEdit,
    /// The redirect table written (for the in-memory set).
    pub table: Arc<RedirectTable>,
    /// Bytes written (N's records and the table).
    pub bytes: u64,
    /// File numbers of N and the table (pending outputs until the commit).
    pub outputs: Vec<u64>,
}

/// When a log is due for collection.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GcTrigger {
    /// A log whose garbage share exceeds this is due (`vlog_gc_garbage_ratio`).
    pub log_ratio: f64,
    /// While the garbage share of all the logs together exceeds this, the log with the most
    /// garbage is due too, if its own share exceeds it (`vlog_gc_total_garbage_ratio`).
    pub total_ratio: f64,
}

/// The log with the most garbage, if `trigger` says it is due; never the target of a live
/// redirect.
pub(crate) fn pick(version: &Version, trigger: GcTrigger) -> Option<u64> {
    let live = version.vlog_live_bytes();
    let live_of = |number: &u64| live.get(number).copied().unwrap_or(0);
    let (garbage, total) = garbage_of_all(version, &live);
    let mut best: Option<(f64, u64)> = None;
    for (number, meta) in &version.vlogs {
        let live_bytes = live_of(number);
        if live_bytes == 0 || meta.total_bytes == 0 || version.is_redirect_target(*number) {
            continue; // nothing to copy (it is dropped once unreferenced), or it would chain
        }
        let share = 1.0 - live_bytes as f64 / meta.total_bytes as f64;
        if best.is_none_or(|(g, _)| share > g) {
            best = Some((share, *number));
        }
    }
    let due = |share: f64| {
        let total_share = garbage as f64 / total.max(1) as f64;
        share > trigger.log_ratio
            || (total_share > trigger.total_ratio && share > trigger.total_ratio)
    };
    best.filter(|&(share, _)| due(share))
        .map(|(_, number)| number)
}

/// Garbage bytes of all of `version`'s value logs, and their total bytes, given the logs'
/// live bytes (`Version::vlog_live_bytes`).
pub(crate) fn garbage_of_all(version: &Version, live: &BTreeMap<u64, u64>) -> (u64, u64) {
    let total: u64 = version.vlogs.values().map(|m| m.total_bytes).sum();
    let live: u64 = version.vlogs.keys().filter_map(|n| live.get(n)).sum();
    (total.saturating_sub(live), total)
}

/// Collects `victim` as `version` sees it; `Ok(None)` if the job was abandoned (the database
/// is closing), its outputs then left to the obsolete-file purge.
pub(crate) fn run(
    ctx: &JobContext<'_>,
    version: &Version,
    victim: u64,
) -> Result<Option<GcOutput>> {
    let started = Instant::now();
    let records = live_records(ctx, version, victim)?;
    ctx.host.sync_point("vlog_gc:records_collected");
    let mut out = VlogOutput::new(ctx);
    let Some(entries) = copy_records(ctx, victim, &records, &mut out)? else {
        let outputs: Vec<u64> = out.number().into_iter().collect();
        ctx.host.abandon_outputs(&outputs);
        let note = format!("value-log GC of log {victim} abandoned: the database is closing");
        ctx.info_log.line(&note);
        return Ok(None);
    };
    let target = out.finish()?.ok_or_else(|| nothing_to_copy(victim))?;
    let gc = write_redirect(ctx, victim, target, entries)?;
    log_gc(ctx, version, victim, &gc, started);
    Ok(Some(gc))
}

/// The info-log line of a finished GC of `victim` (committed by the caller): the victim's size,
/// the outputs (new log, redirect table), bytes written, time.
fn log_gc(ctx: &JobContext<'_>, version: &Version, victim: u64, gc: &GcOutput, started: Instant) {
    let size = version.vlogs.get(&victim).map_or(0, |v| v.total_bytes);
    ctx.info_log.line(&format!(
        "value-log GC: log {victim} ({size} bytes) -> new log and redirect table {:?}: \
         {} bytes written in {} us",
        gc.outputs,
        gc.bytes,
        started.elapsed().as_micros()
    ));
}

/// Writes the redirect table of `victim` into `target` (finished) and builds the edit.
fn write_redirect(
    ctx: &JobContext<'_>,
    victim: u64,
    target: VlogMeta,
    entries: Vec<RedirectEntry>,
) -> Result<GcOutput> {
    let number = ctx.host.new_output_number();
    let logs = (victim, target.number);
    let table = RedirectTable::write(ctx.fs, ctx.dir, number, logs, entries)?;
    let (file_size, outputs) = (table.file_size(), vec![target.number, number]);
    let redirect = RedirectMeta {
        victim,
        number,
        file_size,
        target: target.number,
    };
    let bytes = target.total_bytes + file_size;
    let edit = VersionEdit {
        new_vlogs: vec![target],
        new_redirects: vec![redirect],
        deleted_vlogs: vec![victim],
        ..VersionEdit::default()
    };
    Ok(GcOutput {
        edit,
        table,
        bytes,
        outputs,
    })
}

/// The version's accounting names the victim, yet no SSTable holds a pointer into it.
fn nothing_to_copy(victim: u64) -> Error {
    Error::InvalidState(format!(
        "value-log GC of {}: SSTables account live bytes in it but hold no pointer into it",
        vlog_file_name(victim)
    ))
}

/// Every distinct record of `victim` an SSTable of `version` points at, by offset.
fn live_records(ctx: &JobContext<'_>, version: &Version, victim: u64) -> Result<Vec<ValuePointer>> {
    let mut found = Vec::new();
    for f in version.levels.iter().flatten() {
        if f.vlog_refs.iter().any(|&(n, _)| n == victim) {
            pointers_in(ctx, f, victim, &mut found)?;
        }
    }
    found.sort_unstable_by_key(|p| p.offset);
    dedup_records(ctx, found)
}

/// Appends the pointers into `victim` held by SSTable `file` (read-only, through the cache).
fn pointers_in(
    ctx: &JobContext<'_>,
    file: &FileMeta,
    victim: u64,
    out: &mut Vec<ValuePointer>,
) -> Result<()> {
    let table = ctx.table_cache.get(file.number, file.file_size, file.dir)?;
    let mut it = table.iter();
    it.seek_to_first();
    while it.valid() {
        let is_pointer = parse_internal_key(it.key()).map(|p| p.kind);
        if is_pointer == Some(ValueKind::ValuePointer) {
            let ptr = ValuePointer::decode(it.value()).ok_or_else(|| {
                Error::corruption(table.path(), 0, "value pointer of wrong length")
            })?;
            if ptr.file_number == victim {
                out.push(ptr);
            }
        }
        it.next();
    }
    it.status()
}

/// Drops repeated offsets (sorted input); two pointers to one offset must agree on lengths.
fn dedup_records(ctx: &JobContext<'_>, sorted: Vec<ValuePointer>) -> Result<Vec<ValuePointer>> {
    let mut out: Vec<ValuePointer> = Vec::with_capacity(sorted.len());
    for p in sorted {
        match out.last() {
            Some(last) if last.offset == p.offset && *last == p => {}
            Some(last) if last.offset == p.offset => {
                let path = ctx.dir.join(vlog_file_name(p.file_number));
                let detail = "two SST pointers to this record disagree on its length";
                return Err(Error::corruption(path, p.offset, detail));
            }
            _ => out.push(p),
        }
    }
    Ok(out)
}

/// Copies `records` of `victim` in order into `out`; their redirect entries, or `None` if
/// the database started closing.
fn copy_records(
    ctx: &JobContext<'_>,
    victim: u64,
    records: &[ValuePointer],
    out: &mut VlogOutput<'_>,
) -> Result<Option<Vec<RedirectEntry>>> {
    // Its own reader: the shared one reads without readahead, and the copy reads in order.
    let reader = crate::vlog::VlogReader::open(ctx.fs, ctx.dir, victim)?;
    let mut entries = Vec::with_capacity(records.len());
    let (mut unpaced, mut stretch) = (0u64, Instant::now());
    for ptr in records {
        let (key, value) = reader.read_record(ptr)?;
        entries.push(moved_entry(ptr, &out.append(&key, &value)?));
        unpaced += u64::from(ptr.record_len);
        if unpaced >= PACE_BYTES {
            if !pace(ctx, stretch.elapsed()) {
                return Ok(None);
            }
            (unpaced, stretch) = (0, Instant::now());
        }
    }
    Ok(Some(entries))
}

/// The redirect entry of the record `old` copied to `new`.
fn moved_entry(old: &ValuePointer, new: &ValuePointer) -> RedirectEntry {
    RedirectEntry {
        old_offset: old.offset,
        new_offset: new.offset,
        record_len: new.record_len,
        value_len: new.value_len,
    }
}

/// Yields to flushes: while writers are stopped waiting for one, the copy waits (holding
/// nothing a flush or writer waits for); while they are slowed, it rests as long as its last
/// `busy` stretch took, so a GC during a write burst takes half a core, not a whole one (on
/// two cores a whole one halved the writes: docs/design-decisions.md, "Value-log GC during
/// a write burst"). False once the database is closing.
fn pace(ctx: &JobContext<'_>, busy: std::time::Duration) -> bool {
    ctx.host.yield_to_writers(busy);
    !ctx.host.closing()
}

/// Value logs with no live bytes in `version` (to drop from the manifest).
pub(crate) fn unreferenced(version: &Version) -> Vec<u64> {
    let live = version.vlog_live_bytes();
    version
        .vlogs
        .keys()
        .filter(|n| live.get(n).copied().unwrap_or(0) == 0)
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::policy::test_files::file;

    /// A version with value logs 1..=n of 100 bytes, log `i` referenced for `live[i - 1]`
    /// bytes by one SSTable each.
    fn logs(live: &[u64]) -> Version {
        let mut edit = VersionEdit::default();
        for (i, &bytes) in live.iter().enumerate() {
            let number = i as u64 + 1;
            let total_bytes = 100;
            edit.new_vlogs.push(VlogMeta {
                number,
                total_bytes,
            });
            let key = format!("k{number}");
            let mut f = file(100 + number, &key, &key, 10);
            f.vlog_refs = vec![(number, bytes)];
            edit.new_files.push((2, f));
        }
        Version::default().apply(&edit).unwrap()
    }

    const TRIGGER: GcTrigger = GcTrigger {
        log_ratio: 0.5,
        total_ratio: 0.25,
    };

    #[test]
    fn a_log_past_its_own_ratio_is_picked_first() {
        assert_eq!(pick(&logs(&[90, 40, 70]), TRIGGER), Some(2));
    }

    #[test]
    fn garbage_spread_over_many_logs_is_collected_once_the_whole_passes_its_ratio() {
        let spread = logs(&[70, 65, 75, 70]); // 30% garbage in all, no log at 50%
        assert_eq!(pick(&spread, TRIGGER), Some(2));
        let off = GcTrigger {
            total_ratio: 1.0,
            ..TRIGGER
        };
        assert_eq!(
            pick(&spread, off),
            None,
            "1 turns the whole-set trigger off"
        );
        assert_eq!(pick(&logs(&[80, 78, 75]), TRIGGER), None, "22% in all");
    }

    #[test]
    fn an_unreferenced_log_counts_as_garbage_but_is_dropped_not_copied() {
        // 47% garbage in all, most of it log 1's, which the unreferenced-log pass drops;
        // the logs left to copy hold 20% each, below the whole-set ratio.
        assert_eq!(pick(&logs(&[0, 80, 80]), TRIGGER), None);
    }
}
