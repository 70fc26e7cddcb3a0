//! L1 → L2 leveled compaction: when the Ordered-L1 exceeds `l1_capacity`, one L1 file (chosen
//! round robin over the key space) is merged with the L2 files it overlaps into new L2 files.
//! Values already in value logs keep their pointers; only keys and small inline values move.

use super::context::JobContext;
use super::filter::VersionFilter;
use super::output::TableOutput;
use crate::error::Result;
use crate::iter::{InternalIterator, LevelIterator, MergingIterator};
use crate::types::user_key_of;
use crate::version::{FileMeta, Version, VersionEdit};
use std::sync::Arc;

/// A chosen L1 → L2 compaction.
pub(crate) struct LevelCompaction {
    pub l1: Arc<FileMeta>,
    pub l2: Vec<Arc<FileMeta>>,
}

impl LevelCompaction {
    /// Every input file number (to reserve against concurrent jobs).
    pub fn inputs(&self) -> Vec<u64> {
        std::iter::once(self.l1.number)
            .chain(self.l2.iter().map(|f| f.number))
            .collect()
    }
}

/// Picks the first L1 file after `pointer` (wrapping) that `busy` does not exclude.
pub(crate) fn pick(
    version: &Version,
    pointer: &[u8],
    busy: impl Fn(u64) -> bool,
) -> Option<LevelCompaction> {
    let files = &version.levels[1];
    let start = files.partition_point(|f| user_key_of(&f.largest) <= pointer);
    let order = files[start..].iter().chain(files[..start].iter());
    for f in order {
        if busy(f.number) {
            continue;
        }
        let l2 = version.overlapping_files(2, user_key_of(&f.smallest), user_key_of(&f.largest));
        if l2.iter().any(|g| busy(g.number)) {
            continue;
        }
        return Some(LevelCompaction { l1: f.clone(), l2 });
    }
    None
}

/// Runs the merge; returns the edit and the bytes written.
pub(crate) fn run(ctx: &JobContext<'_>, c: &LevelCompaction) -> Result<(VersionEdit, u64)> {
    let children: Vec<Box<dyn InternalIterator>> = vec![
        Box::new(LevelIterator::new(
            vec![c.l1.clone()],
            ctx.table_cache.clone(),
        )),
        Box::new(LevelIterator::new(c.l2.clone(), ctx.table_cache.clone())),
    ];
    let mut merged = MergingIterator::new(children);
    merged.seek_to_first();
    let mut filter = VersionFilter::new(ctx.oldest_snapshot);
    let mut out = TableOutput::new(ctx);
    while merged.valid() {
        // L2 is the last level: nothing older lies below it.
        if filter.keep(merged.key(), |_| true) {
            out.add(merged.key(), merged.value())?;
        }
        merged.next();
    }
    merged.status()?;
    let files = out.finish()?;
    let mut edit = VersionEdit::default();
    edit.deleted_files.push((1, c.l1.number));
    edit.deleted_files
        .extend(c.l2.iter().map(|f| (2, f.number)));
    let bytes = files.iter().map(|f| f.file_size).sum();
    edit.new_files.extend(files.into_iter().map(|f| (2, f)));
    Ok((edit, bytes))
}
