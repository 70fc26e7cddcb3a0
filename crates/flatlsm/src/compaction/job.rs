//! The compaction job every design shares: merge input files of one level with the files of
//! the output level they overlap into new files of the output level, in one manifest edit.
//! Which files, and when, is the policy's choice (`policy/`); the job only merges.
//!
//! Invariants:
//! - Level-0 inputs may overlap: each is read through its own iterator, and the merging
//!   iterator orders versions of a key by sequence, so the newest wins whatever the file order.
//!   Inputs of a level >= 1 are disjoint and read as one concatenation.
//! - One user key's versions never straddle two outputs (`output.rs`), so the output level
//!   stays non-overlapping.
//! - A version no reader can see is dropped; a tombstone only if, in addition, no file of a
//!   level below the output level can hold its key (`VersionFilter`).
//! - Value pointers are copied (rewritten only if their log was redirected): values in value
//!   logs never move in a compaction.
//! - The inputs are reserved against other jobs by the caller for the whole job; flushes add
//!   only level-0 files and reserve nothing.

use super::context::JobContext;
use super::output::TableOutput;
use crate::error::Result;
use crate::iter::VersionFilter;
use crate::iter::{InternalIterator, MergingIterator};
use crate::types::user_key_of;
use crate::version::LevelIterator;
use crate::version::{FileMeta, Version, VersionEdit, MAX_LEVELS};
use std::sync::Arc;

/// A compaction a policy picked.
#[derive(Clone, Debug)]
pub(crate) struct Compaction {
    /// The level the inputs come from.
    pub level: usize,
    /// Input files of `level` (level 0: in the version's order).
    pub inputs: Vec<Arc<FileMeta>>,
    /// The level the outputs go to (> `level`; `== level` for a file rewritten in place,
    /// `policy/range_dels.rs`).
    pub output_level: usize,
    /// Files of `output_level` overlapping the inputs' key range (merged and replaced).
    pub overlapping: Vec<Arc<FileMeta>>,
    /// Files outside the job that may hold older versions of its keys (SLM-DB's other level-0
    /// files): a tombstone over a key one of them covers is kept. Empty for leveled jobs,
    /// whose older data lies only in deeper levels.
    pub shadows: Vec<Arc<FileMeta>>,
}

impl Compaction {
    /// Every input file number (to reserve against concurrent jobs).
    pub fn file_numbers(&self) -> Vec<u64> {
        self.inputs
            .iter()
            .chain(&self.overlapping)
            .map(|f| f.number)
            .collect()
    }

    /// Bytes the job reads: its input files and the overlapping output-level files.
    pub fn input_bytes(&self) -> u64 {
        let files = self.inputs.iter().chain(&self.overlapping);
        files.map(|f| f.file_size).sum()
    }

    /// The inputs' iterators: one per level-0 file, one for a level >= 1, one for the
    /// overlapping output-level files.
    fn children(&self, ctx: &JobContext<'_>) -> Vec<Box<dyn InternalIterator>> {
        let level_iter = |files: Vec<Arc<FileMeta>>| -> Box<dyn InternalIterator> {
            Box::new(LevelIterator::new(files, ctx.table_cache.clone()))
        };
        let mut children: Vec<Box<dyn InternalIterator>> = match self.level {
            0 => self
                .inputs
                .iter()
                .map(|f| level_iter(vec![f.clone()]))
                .collect(),
            _ => vec![level_iter(self.inputs.clone())],
        };
        children.push(level_iter(self.overlapping.clone()));
        children
    }

    /// The edit replacing the inputs by `outputs`, and the bytes written.
    fn edit(&self, outputs: Vec<FileMeta>) -> (VersionEdit, u64) {
        let mut edit = VersionEdit::default();
        let deleted = |level: usize, files: &[Arc<FileMeta>]| {
            files
                .iter()
                .map(move |f| (level, f.number))
                .collect::<Vec<_>>()
        };
        edit.deleted_files.extend(deleted(self.level, &self.inputs));
        edit.deleted_files
            .extend(deleted(self.output_level, &self.overlapping));
        let bytes = outputs.iter().map(|f| f.file_size).sum();
        let level = self.output_level;
        edit.new_files
            .extend(outputs.into_iter().map(|f| (level, f)));
        (edit, bytes)
    }
}

/// Runs `c` against `version` (the version it was picked from); returns the edit and the
/// bytes written.
pub(crate) fn run(
    ctx: &JobContext<'_>,
    c: &Compaction,
    version: &Version,
) -> Result<(VersionEdit, u64)> {
    run_with(ctx, c, version, Vec::new())
}

/// True if `user_key` lies within `f`'s key range.
fn covers(f: &FileMeta, user_key: &[u8]) -> bool {
    let (lo, hi) = (user_key_of(&f.smallest), user_key_of(&f.largest));
    lo <= user_key && user_key <= hi
}

/// [`run`] with `sources` merged in beside the input files (a design's level-0 store, such as
/// MatrixKV's row parts of a column).
pub(crate) fn run_with(
    ctx: &JobContext<'_>,
    c: &Compaction,
    version: &Version,
    sources: Vec<Box<dyn InternalIterator>>,
) -> Result<(VersionEdit, u64)> {
    let mut children = c.children(ctx);
    children.extend(sources);
    let mut merged = MergingIterator::new(children);
    merged.seek_to_first();
    let mut filter = VersionFilter::new(ctx.oldest_snapshot, &ctx.range_dels);
    let mut out = TableOutput::new(ctx, c.output_level);
    let deeper = c.output_level + 1..MAX_LEVELS;
    let bottommost = |uk: &[u8]| {
        let below = |l| version.file_for_key(l, uk).is_none();
        deeper.clone().all(below) && !c.shadows.iter().any(|f| covers(f, uk))
    };
    while merged.valid() {
        if filter.keep(merged.key(), bottommost) {
            out.add(merged.key(), merged.value())?;
        }
        merged.next();
    }
    merged.status()?;
    Ok(c.edit(out.finish()?))
}
