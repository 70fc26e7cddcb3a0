//! The range-delete cleanup pick (every design): a file of a level >= 1 lying under a range
//! tombstone it has not applied is rewritten in place, alone, so the versions the tombstone
//! covers are dropped and the tombstone can be retired (RocksDB reaches the same end by
//! compacting the tombstone's own file down; here the tombstone lives with the tree, so its
//! files are fetched up to it instead).
//!
//! Rules: only tombstones every reader sees (`seq <= oldest_snapshot`) count, so the rewrite
//! applies them and the file is not picked again; level 0 is left to the designs' own
//! compactions (an in-place rewrite there would make old data look newer than later runs).

use super::PolicyView;
use crate::compaction::job::Compaction;
use crate::range_del::RangeTombstones;
use crate::types::{user_key_of, SequenceNumber};
use crate::version::FileMeta;
use std::sync::Arc;

/// The first file (level 1 down) that `in_range` accepts, not busy, under a tombstone it has
/// not applied and every reader sees, as a compaction of that file into its own level.
pub(crate) fn rewrite_under_range_dels(
    view: &PolicyView<'_>,
    oldest_snapshot: SequenceNumber,
    in_range: impl Fn(&FileMeta) -> bool,
) -> Option<Compaction> {
    let dels = &view.version.range_dels;
    let levels = view.version.levels.iter().enumerate().skip(1);
    let (level, file) = levels
        .flat_map(|(l, files)| files.iter().map(move |f| (l, f)))
        .find(|(_, f)| in_range(f) && !(view.busy)(f.number) && stale(f, dels, oldest_snapshot))?;
    Some(in_place(level, file.clone()))
}

/// True if a tombstone over `f`'s range, seen by every reader, is newer than what `f` applied.
fn stale(f: &FileMeta, dels: &RangeTombstones, oldest_snapshot: SequenceNumber) -> bool {
    let (lo, hi) = (user_key_of(&f.smallest), user_key_of(&f.largest));
    dels.tombstones()
        .iter()
        .any(|t| t.seq > f.range_dels_applied && t.seq <= oldest_snapshot && t.overlaps(lo, hi))
}

/// `file` rewritten into its own level.
pub(crate) fn in_place(level: usize, file: Arc<FileMeta>) -> Compaction {
    Compaction {
        level,
        inputs: vec![file],
        output_level: level,
        overlapping: Vec::new(),
        shadows: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::policy::test_files::{file, version};
    use crate::range_del::RangeTombstone;
    use crate::version::VersionEdit;

    fn with_tombstone(v: crate::version::Version, seq: u64) -> crate::version::Version {
        let edit = VersionEdit {
            new_range_dels: vec![RangeTombstone {
                start: b"c".to_vec(),
                end: b"e".to_vec(),
                seq,
            }],
            ..VersionEdit::default()
        };
        v.apply(&edit).unwrap()
    }

    fn pick(v: &crate::version::Version, oldest: u64) -> Option<u64> {
        let view = PolicyView {
            version: v,
            busy: &|_| false,
            pointers: &[],
            level0_wasted_probes: 0,
            writes_quiet: false,
        };
        rewrite_under_range_dels(&view, oldest, |_| true).map(|c| c.inputs[0].number)
    }

    #[test]
    fn only_a_file_under_a_visible_unapplied_tombstone_below_level_zero_is_picked() {
        let mut applied = file(3, "d", "d", 10);
        applied.range_dels_applied = 50;
        let files = vec![
            (0, file(1, "a", "z", 10)),
            (1, file(2, "a", "b", 10)),
            (2, applied),
        ];
        let v = with_tombstone(version(files.clone()), 50);
        assert_eq!(
            pick(&v, 49),
            None,
            "a snapshot before it: a rewrite would not apply it"
        );
        assert_eq!(pick(&v, 60), None, "level 0, outside the range, or applied");
        let mut v2 = files;
        v2.push((2, file(4, "e", "f", 10)));
        v2.push((3, file(5, "a", "c", 10)));
        assert_eq!(pick(&with_tombstone(version(v2), 50), 60), Some(5));
    }
}
