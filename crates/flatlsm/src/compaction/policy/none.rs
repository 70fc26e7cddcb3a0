//! The policy of a design whose levels are never compacted by the tree: SLM-DB, whose
//! selective compaction runs as its store's compaction (`designs/slmdb/selective.rs`).

use super::{CompactionPolicy, PolicyView};
use crate::compaction::job::Compaction;

/// Picks nothing.
pub(crate) struct NoCompaction;

impl CompactionPolicy for NoCompaction {
    fn pick(&self, _view: &PolicyView<'_>) -> Option<Compaction> {
        None
    }
}
