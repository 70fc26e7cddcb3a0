//! Parallel flush of immutable PMTables into L1 with key-value separation (paper 4.4,
//! Algorithms 4 and 5), writing a new *run* of L1 instead of rewriting L1.
//!
//! One flush merges a *set* of immutable PMTables (all those due) in one pass. Its output is a
//! new sorted run in level 0 (L1's unmerged runs, see `merge_runs.rs`): the flush reads and
//! rewrites no existing file, reserves nothing, and never waits for a compaction. The runs are
//! merged into the ordered L1 in the background once `l1_merge_trigger` exist, so an L1 entry is
//! rewritten once per that many flushes instead of at every flush (docs/design-decisions.md).
//!
//! 1. The key space is split into K ranges at user-key boundaries: split point i is the median
//!    over the tables of each table's own i-th point (N/K entries apart).
//! 2. Thread i owns the user keys in (split[i-1], split[i]]; the first thread's range is open
//!    below and the last one's open above, so the ranges partition the key space and one key's
//!    versions are merged by one thread.
//! 3. Each thread merges the tables through a merging iterator, drops versions no reader can
//!    see (a tombstone only if no file of the version holds its key), appends values >=
//!    `kv_separation_threshold` to its own value log, and writes keys (with pointers) to new
//!    SSTables. The threads' files are disjoint: together they form one run.
//! 4. The outputs are added to level 0 in one manifest edit; only after that edit is durable is
//!    the PM Log deleted (its number is below the new `min_unflushed_pmlog`).

use super::context::JobContext;
use super::output::{TableOutput, VlogOutput};
use crate::buffer::BufferRef;
use crate::error::{Error, Result};
use crate::iter::{InternalIterator, MergingIterator};
use crate::sst::SstDir;
use crate::types::{make_internal_key, parse_internal_key, ParsedInternalKey, ValueKind};
use crate::version::{FileMeta, Version, VersionEdit, VlogMeta};
use std::sync::Arc;

use crate::iter::VersionFilter;

/// A flush thread reports what it read to the host (`JobHost::flush_read`) after this many
/// bytes, and at its end.
pub(crate) const REPORT_BYTES: u64 = 1 << 20;

/// A thread's key range: (lower exclusive, upper inclusive), `None` = unbounded.
type KeyRange = (Option<Vec<u8>>, Option<Vec<u8>>);

/// What one flush produced.
pub(crate) struct FlushOutput {
    pub edit: VersionEdit,
    /// SST bytes written to SSD.
    pub sst_bytes: u64,
    /// Value-log bytes written to SSD.
    pub vlog_bytes: u64,
    /// Bytes written to PM (SSTs kept in the PM directory, a design's store).
    pub pm_bytes: u64,
    /// Key and value bytes the threads read and reported to the host (`JobHost::flush_read`).
    pub reported: u64,
}

/// Writes `tables` as one new run of L1 (level 0 of `version`'s successor).
pub(crate) fn flush_tables(
    ctx: &JobContext<'_>,
    tables: &[BufferRef],
    version: &Arc<Version>,
) -> Result<FlushOutput> {
    let ranges = thread_ranges(tables, ctx.options.flush_threads);
    let results: Vec<Result<RangeOutput>> = std::thread::scope(|s| {
        let handles: Vec<_> = ranges
            .iter()
            .map(|range| s.spawn(move || flush_range(ctx, tables, version, range)))
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
    let (mut sst_bytes, mut vlog_bytes, mut pm_bytes, mut reported) = (0, 0, 0, 0);
    for r in results {
        let (files, vlog, read) = r?;
        reported += read;
        for f in files {
            match f.dir {
                SstDir::Data => sst_bytes += f.file_size,
                SstDir::Pm => pm_bytes += f.file_size,
            }
            edit.new_files.push((0, f));
        }
        if let Some(v) = vlog {
            vlog_bytes += v.total_bytes;
            edit.new_vlogs.push(v);
        }
    }
    Ok(FlushOutput {
        edit,
        sst_bytes,
        vlog_bytes,
        pm_bytes,
        reported,
    })
}

/// Splits the key space at the tables' split points (Algorithm 4, steps 1–2).
fn thread_ranges(tables: &[BufferRef], threads: usize) -> Vec<KeyRange> {
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
fn median_split_points(tables: &[BufferRef], parts: usize) -> Vec<Vec<u8>> {
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

/// What one thread wrote, and the bytes it read (all reported).
type RangeOutput = (Vec<FileMeta>, Option<VlogMeta>, u64);

/// One thread of the parallel flush (Algorithm 5, lines 4–34).
fn flush_range(
    ctx: &JobContext<'_>,
    tables: &[BufferRef],
    version: &Version,
    range: &KeyRange,
) -> Result<RangeOutput> {
    let children: Vec<Box<dyn InternalIterator + '_>> =
        tables.iter().map(|t| t.flush_cursor()).collect();
    let mut merged = MergingIterator::new(children);
    match &range.0 {
        Some(l) => merged.seek(&make_internal_key(l, 0, ValueKind::Deletion)),
        None => merged.seek_to_first(),
    }
    let mut filter = VersionFilter::new(ctx.oldest_snapshot, &ctx.range_dels);
    let mut tables = TableOutput::new(ctx, 0);
    let mut vlog = VlogOutput::new(ctx);
    let bottommost = |uk: &[u8]| !ctx.options.keep_tombstones && version.no_file_holds(uk);
    let mut progress = Progress::default();
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
        progress.read(ctx, ikey.len() + merged.value().len());
        if filter.keep_parsed(&p, bottommost) {
            write_entry(ctx, &mut tables, &mut vlog, (ikey, &p), merged.value())?;
        }
        merged.next();
    }
    merged.status()?;
    let written = (tables.finish()?, vlog.finish()?);
    Ok((written.0, written.1, progress.finish(ctx)))
}

/// A flush thread's bytes read, reported every [`REPORT_BYTES`].
#[derive(Default)]
struct Progress {
    unreported: u64,
    reported: u64,
}

impl Progress {
    fn read(&mut self, ctx: &JobContext<'_>, bytes: usize) {
        self.unreported += bytes as u64;
        if self.unreported >= REPORT_BYTES {
            self.report(ctx);
        }
    }

    fn report(&mut self, ctx: &JobContext<'_>) {
        ctx.host.flush_read(self.unreported);
        self.reported += std::mem::take(&mut self.unreported);
    }

    /// Reports the rest; the total reported.
    fn finish(mut self, ctx: &JobContext<'_>) -> u64 {
        self.report(ctx);
        self.reported
    }
}

/// Writes one surviving entry (its internal key, also parsed), separating a large inline value
/// into the value log.
fn write_entry(
    ctx: &JobContext<'_>,
    tables: &mut TableOutput<'_>,
    vlog: &mut VlogOutput<'_>,
    (ikey, p): (&[u8], &ParsedInternalKey<'_>),
    value: &[u8],
) -> Result<()> {
    if p.kind == ValueKind::Value && value.len() >= ctx.options.kv_separation_threshold {
        let ptr = vlog.append(p.user_key, value)?;
        return tables.add_pointer(p.user_key, p.seq, &ptr);
    }
    tables.add(ikey, value)
}
