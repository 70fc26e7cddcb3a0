//! Parallel flush/compaction of immutable PMTables into the Ordered-L1 with key-value
//! separation (paper 4.4, Algorithms 4 and 5).
//!
//! One flush merges a *set* of immutable PMTables (all those due) in one pass, so the L1 keys
//! it must rewrite are read and written once per set instead of once per table (see
//! docs/design-decisions.md, "A flush merges every due PMTable at once").
//!
//! 1. The key space is split into K ranges at user-key boundaries: split point i is the median
//!    over the tables of each table's own i-th point (N/K entries apart).
//! 2. The candidate L1 SSTables are those overlapping the union of the tables' key ranges.
//! 3. Thread i owns the user keys in (split[i-1], split[i]]; the first thread's range is open
//!    below and the last one's open above (Algorithm 5's widening to TotalSST_min/max). The
//!    ranges partition the key space, so every key of every candidate is merged by exactly
//!    one thread. (Algorithm 5 as printed gives each thread only the SSTables overlapping its
//!    own PMTable keys, which loses SST keys that fall in the gap after a thread's last
//!    PMTable key; see docs/design-decisions.md and the regression test
//!    `flush_keeps_l1_keys_between_thread_ranges`.)
//! 4. Each thread merges the PMTable with the candidates through a merging iterator, drops
//!    versions no reader can see, appends values >= `kv_separation_threshold` coming from the
//!    PMTable to its own value log, and writes keys (with pointers) to new SSTables. Values
//!    already in a value log keep their pointers.
//! 5. The outputs replace the candidates in one manifest edit; only after that edit is durable
//!    is the PM Log deleted (its number is below the new `min_unflushed_pmlog`).

use super::output::{TableOutput, VlogOutput};
use crate::db::state::DbInner;

use crate::error::{Error, Result};
use crate::iter::{InternalIterator, LevelIterator, MergingIterator};
use crate::pmtable::PmTable;
use crate::types::{
    make_internal_key, parse_internal_key, user_key_of, ParsedInternalKey, ValueKind,
};

use crate::version::{FileMeta, Version, VersionEdit, VlogMeta};
use std::sync::Arc;

use super::filter::VersionFilter;

/// A thread's key range: (lower exclusive, upper inclusive), `None` = unbounded.
type KeyRange = (Option<Vec<u8>>, Option<Vec<u8>>);

/// What one flush produced.
pub(crate) struct FlushOutput {
    pub edit: VersionEdit,
    /// L1 files merged (and replaced).
    pub candidates: usize,
    pub sst_bytes: u64,
    pub vlog_bytes: u64,
}

/// Merges `tables` into L1. `candidates` are the L1 files overlapping the tables (already
/// reserved against concurrent compactions by the caller).
pub(crate) fn flush_tables(
    db: &DbInner,
    tables: &[Arc<PmTable>],
    version: &Arc<Version>,
    candidates: &[Arc<FileMeta>],
) -> Result<FlushOutput> {
    let ranges = thread_ranges(tables, db.opts.flush_threads);
    let oldest = db.snapshots.oldest(db.visible());
    let results: Vec<Result<(Vec<FileMeta>, Option<VlogMeta>)>> = std::thread::scope(|s| {
        let handles: Vec<_> = ranges
            .iter()
            .map(|range| {
                s.spawn(move || flush_range(db, tables, version, candidates, range, oldest))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::InvalidState("flush thread panicked".into())))
            })
            .collect()
    });
    let mut edit = VersionEdit::default();
    let (mut sst_bytes, mut vlog_bytes) = (0, 0);
    for r in results {
        let (files, vlog) = r?;
        for f in files {
            sst_bytes += f.file_size;
            edit.new_files.push((1, f));
        }
        if let Some(v) = vlog {
            vlog_bytes += v.total_bytes;
            edit.new_vlogs.push(v);
        }
    }
    edit.deleted_files = candidates.iter().map(|f| (1, f.number)).collect();
    Ok(FlushOutput {
        edit,
        candidates: candidates.len(),
        sst_bytes,
        vlog_bytes,
    })
}

/// Splits the key space at the tables' split points (Algorithm 4, steps 1–2).
fn thread_ranges(tables: &[Arc<PmTable>], threads: usize) -> Vec<KeyRange> {
    let points = median_split_points(tables, threads);
    let mut ranges = Vec::with_capacity(points.len() + 1);
    let mut lower: Option<Vec<u8>> = None;
    for p in points {
        ranges.push((lower.take(), Some(p.clone())));
        lower = Some(p);
    }
    ranges.push((lower, None));
    ranges
}

/// Split point i is the median of the tables' i-th split points; tables too small to give
/// `parts` points do not vote. The points stay sorted and distinct (equal medians merge).
fn median_split_points(tables: &[Arc<PmTable>], parts: usize) -> Vec<Vec<u8>> {
    let per_table: Vec<Vec<Vec<u8>>> = tables.iter().map(|t| t.split_points(parts)).collect();
    let wanted = per_table.iter().map(Vec::len).max().unwrap_or(0);
    let mut points: Vec<Vec<u8>> = (0..wanted)
        .filter_map(|i| median_of(per_table.iter().filter_map(|p| p.get(i))))
        .collect();
    points.dedup();
    points
}

fn median_of<'a>(keys: impl Iterator<Item = &'a Vec<u8>>) -> Option<Vec<u8>> {
    let mut keys: Vec<&Vec<u8>> = keys.collect();
    keys.sort();
    keys.get(keys.len() / 2).map(|k| (*k).clone())
}

fn in_range(files: &[Arc<FileMeta>], range: &KeyRange) -> Vec<Arc<FileMeta>> {
    files
        .iter()
        .filter(|f| {
            let above_lower = range
                .0
                .as_ref()
                .is_none_or(|l| user_key_of(&f.largest) > l.as_slice());
            let below_upper = range
                .1
                .as_ref()
                .is_none_or(|u| user_key_of(&f.smallest) <= u.as_slice());
            above_lower && below_upper
        })
        .cloned()
        .collect()
}

/// One thread of the parallel flush (Algorithm 5, lines 4–34).
fn flush_range(
    db: &DbInner,
    tables: &[Arc<PmTable>],
    version: &Version,
    candidates: &[Arc<FileMeta>],
    range: &KeyRange,
    oldest_snapshot: u64,
) -> Result<(Vec<FileMeta>, Option<VlogMeta>)> {
    let mine = in_range(candidates, range);
    let mut children: Vec<Box<dyn InternalIterator + '_>> = tables
        .iter()
        .map(|t| Box::new(t.cursor()) as Box<dyn InternalIterator + '_>)
        .collect();
    children.push(Box::new(LevelIterator::new(mine, db.table_cache.clone())));
    let mut merged = MergingIterator::new(children);
    match &range.0 {
        Some(l) => merged.seek(&make_internal_key(l, 0, ValueKind::Deletion)),
        None => merged.seek_to_first(),
    }
    let mut filter = VersionFilter::new(oldest_snapshot);
    let mut tables = TableOutput::new(db);
    let mut vlog = VlogOutput::new(db);
    let bottommost = |uk: &[u8]| version.file_for_key(2, uk).is_none();
    while merged.valid() {
        let ikey = merged.key();
        let p = parse_internal_key(ikey)
            .ok_or_else(|| Error::InvalidState("unparsable key during flush".into()))?;
        if range.0.as_deref().is_some_and(|l| p.user_key <= l) {
            merged.next();
            continue;
        }
        if range.1.as_deref().is_some_and(|u| p.user_key > u) {
            break;
        }
        if filter.keep_parsed(&p, bottommost) {
            write_entry(db, &mut tables, &mut vlog, (ikey, &p), merged.value())?;
        }
        merged.next();
    }
    merged.status()?;
    Ok((tables.finish()?, vlog.finish()?))
}

/// Writes one surviving entry (its internal key, also parsed), separating a large inline value
/// into the value log.
fn write_entry(
    db: &DbInner,
    tables: &mut TableOutput<'_>,
    vlog: &mut VlogOutput<'_>,
    (ikey, p): (&[u8], &ParsedInternalKey<'_>),
    value: &[u8],
) -> Result<()> {
    if p.kind == ValueKind::Value && value.len() >= db.opts.kv_separation_threshold {
        let ptr = vlog.append(p.user_key, value)?;
        return tables.add_pointer(p.user_key, p.seq, &ptr);
    }
    tables.add(ikey, value)
}

/// The L1 files a flush of `tables` must merge with: those overlapping the union of their
/// key ranges.
pub(crate) fn candidates_for(version: &Version, tables: &[Arc<PmTable>]) -> Vec<Arc<FileMeta>> {
    let ranges = tables.iter().filter_map(|t| t.key_range());
    let union = ranges.reduce(|(lo, hi), (l, h)| (lo.min(l), hi.max(h)));
    match union {
        Some((lo, hi)) => version.overlapping_files(1, &lo, &hi),
        None => Vec::new(),
    }
}
