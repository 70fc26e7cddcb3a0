//! Compaction policies: which files to compact next, decided from a view of the version alone.
//! A policy only picks (pure functions, testable without I/O); the job (`job.rs`) merges and
//! the database reserves, runs and commits. One file per design's policy.
//!
//! Shared rules every policy keeps:
//! - a pick never includes a file the view marks busy (reserved by a running job);
//! - a pick takes, at the output level, every file overlapping the inputs' user-key range, so
//!   the output level stays non-overlapping;
//! - from level 0 a pick takes its files in the version's order (oldest first) from the first
//!   one on, so a newer level-0 file never stays behind an older one that moved down.

pub(crate) mod flat;
pub(crate) mod leveled;
pub(crate) mod none;
pub(crate) mod range_dels;
pub(crate) mod redirects;

use super::job::Compaction;
use crate::types::user_key_of;
use crate::version::{FileMeta, Version};
use std::sync::Arc;

/// What a policy sees.
pub(crate) struct PolicyView<'a> {
    /// The current version.
    pub version: &'a Version,
    /// True for files reserved by a running job.
    pub busy: &'a dyn Fn(u64) -> bool,
    /// Per level, the largest user key of the last file compacted out of it (round robin over
    /// the key space, as LevelDB's compact pointers); empty = start at the beginning.
    pub pointers: &'a [Vec<u8>],
    /// Level-0 runs point reads searched in vain since level 0 was last merged
    /// (`db/read_charges.rs`).
    pub level0_wasted_probes: u64,
    /// Writers are quiet, or the caller waits for the background work (`db/quiet.rs`).
    pub writes_quiet: bool,
}

impl PolicyView<'_> {
    /// Where the round robin of `level` stands.
    pub fn pointer(&self, level: usize) -> &[u8] {
        self.pointers.get(level).map_or(&[], Vec::as_slice)
    }
}

/// Picks compactions for one design.
pub(crate) trait CompactionPolicy: Send + Sync {
    /// The most urgent compaction due in `view`, or `None` if none is due (or every due one
    /// would touch a busy file).
    fn pick(&self, view: &PolicyView<'_>) -> Option<Compaction>;
}

/// A compaction of `inputs` (files of `level`) into `level + 1`, with the files of `level + 1`
/// they overlap; `None` if any of them is busy.
pub(crate) fn into_next_level(
    view: &PolicyView<'_>,
    level: usize,
    inputs: Vec<Arc<FileMeta>>,
) -> Option<Compaction> {
    let lo = inputs.iter().map(|f| user_key_of(&f.smallest)).min()?;
    let hi = inputs.iter().map(|f| user_key_of(&f.largest)).max()?;
    let overlapping = view.version.overlapping_files(level + 1, lo, hi);
    let c = Compaction {
        level,
        inputs,
        output_level: level + 1,
        overlapping,
        shadows: Vec::new(),
    };
    (!c.file_numbers().into_iter().any(view.busy)).then_some(c)
}

/// The first file of sorted `level` (>= 1) after the round-robin pointer, wrapping, whose
/// compaction into the next level touches no busy file and that `eligible` accepts.
pub(crate) fn round_robin(
    view: &PolicyView<'_>,
    level: usize,
    eligible: impl Fn(&FileMeta) -> bool,
) -> Option<Compaction> {
    let files = view.version.levels.get(level)?;
    let pointer = view.pointer(level);
    let start = files.partition_point(|f| user_key_of(&f.largest) <= pointer);
    let order = files[start..].iter().chain(files[..start].iter());
    order
        .filter(|f| eligible(f))
        .find_map(|f| into_next_level(view, level, vec![f.clone()]))
}

/// Files and versions for the policies' tests.
#[cfg(test)]
pub(crate) mod test_files {
    use crate::types::{make_internal_key, ValueKind};
    use crate::version::{FileMeta, Version, VersionEdit};

    /// A file of `size` bytes holding user keys `lo..=hi`.
    pub fn file(number: u64, lo: &str, hi: &str, size: u64) -> FileMeta {
        FileMeta {
            number,
            file_size: size,
            num_entries: 1,
            smallest: make_internal_key(lo.as_bytes(), number, ValueKind::Value),
            largest: make_internal_key(hi.as_bytes(), number, ValueKind::Value),
            vlog_refs: Vec::new(),
            dir: crate::sst::SstDir::Data,
            range_dels_applied: 0,
        }
    }

    /// A version holding `files` (level, file).
    pub fn version(files: Vec<(usize, FileMeta)>) -> Version {
        let edit = VersionEdit {
            new_files: files,
            ..VersionEdit::default()
        };
        Version::default().apply(&edit).unwrap()
    }
}
