//! Merging L1's unmerged runs into its ordered run (level 0 → level 1 of the version).
//!
//! A flush writes its PMTables as a new run in level 0 without touching L1 (`flush.rs`). Once
//! `l1_merge_trigger` runs exist, this job merges *every* level-0 file with the L1 files that
//! overlap them into new L1 files, in one manifest edit. With random keys that is all of L1, so
//! each L1 entry is rewritten once per `l1_merge_trigger` flushes instead of once per flush.
//!
//! Invariants:
//! - The job takes all level-0 files present when it is picked. Files added later (by flushes
//!   running meanwhile) hold newer versions than anything it writes to L1, so L1 never holds a
//!   version newer than one in level 0, and reads may search level 0 before L1.
//! - Inputs are reserved against the other compaction jobs; flushes reserve nothing (they only
//!   add level-0 files), so a flush never waits for this job.
//! - A tombstone is dropped only if visible to every reader and no L2 file holds its key (L2 is
//!   the only level below the output).

use super::context::JobContext;
use super::filter::VersionFilter;
use super::output::TableOutput;
use crate::error::Result;
use crate::iter::{InternalIterator, LevelIterator, MergingIterator};
use crate::types::user_key_of;
use crate::version::{FileMeta, Version, VersionEdit};
use std::sync::Arc;

/// A chosen merge: every level-0 file and the L1 files they overlap.
pub(crate) struct RunMerge {
    pub runs: Vec<Arc<FileMeta>>,
    pub l1: Vec<Arc<FileMeta>>,
}

impl RunMerge {
    /// Every input file number (to reserve against concurrent jobs).
    pub fn inputs(&self) -> Vec<u64> {
        self.runs.iter().chain(&self.l1).map(|f| f.number).collect()
    }
}

/// The merge due in `version`: `None` unless level 0 holds at least `trigger` runs and no
/// input is `busy`.
pub(crate) fn pick(
    version: &Version,
    trigger: usize,
    busy: impl Fn(u64) -> bool,
) -> Option<RunMerge> {
    if version.levels[0].is_empty() || version.level0_runs() < trigger {
        return None;
    }
    let runs = version.levels[0].clone();
    let lo = runs.iter().map(|f| user_key_of(&f.smallest)).min()?;
    let hi = runs.iter().map(|f| user_key_of(&f.largest)).max()?;
    let l1 = version.overlapping_files(1, lo, hi);
    let merge = RunMerge { runs, l1 };
    (!merge.inputs().into_iter().any(busy)).then_some(merge)
}

/// Runs the merge; returns the edit and the bytes written.
pub(crate) fn run(
    ctx: &JobContext<'_>,
    m: &RunMerge,
    version: &Version,
) -> Result<(VersionEdit, u64)> {
    let mut children: Vec<Box<dyn InternalIterator>> = m
        .runs
        .iter()
        .map(|f| {
            Box::new(LevelIterator::new(vec![f.clone()], ctx.table_cache.clone()))
                as Box<dyn InternalIterator>
        })
        .collect();
    children.push(Box::new(LevelIterator::new(
        m.l1.clone(),
        ctx.table_cache.clone(),
    )));
    let mut merged = MergingIterator::new(children);
    merged.seek_to_first();
    let mut filter = VersionFilter::new(ctx.oldest_snapshot);
    let mut out = TableOutput::new(ctx);
    let bottommost = |uk: &[u8]| version.file_for_key(2, uk).is_none();
    while merged.valid() {
        if filter.keep(merged.key(), bottommost) {
            out.add(merged.key(), merged.value())?;
        }
        merged.next();
    }
    merged.status()?;
    Ok(merge_edit(m, out.finish()?))
}

fn merge_edit(m: &RunMerge, files: Vec<FileMeta>) -> (VersionEdit, u64) {
    let mut edit = VersionEdit::default();
    edit.deleted_files
        .extend(m.runs.iter().map(|f| (0, f.number)));
    edit.deleted_files
        .extend(m.l1.iter().map(|f| (1, f.number)));
    let bytes = files.iter().map(|f| f.file_size).sum();
    edit.new_files.extend(files.into_iter().map(|f| (1, f)));
    (edit, bytes)
}
