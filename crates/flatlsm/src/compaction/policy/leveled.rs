//! The `leveled` profile's policy: RocksDB's leveled compaction with LevelDB's round-robin file
//! choice.
//!
//! Scores: level 0 scores its files (one per flush) over `level0_file_num_compaction_trigger`; level n >= 1 its
//! bytes over its target, `max_bytes_for_level_base × multiplier^(n-1)`. The level with the
//! highest score >= 1 is compacted (the last level never is: nothing lies below it):
//! - level 0: every level-0 file (all runs, oldest first) with the level-1 files they overlap
//!   (RocksDB's L0 → L1 also takes all overlapping L0 files);
//! - level n >= 1: one file after the level's round-robin pointer with the level-(n+1) files it
//!   overlaps.
//!
//! A level whose pick would touch a busy file is skipped for the next best one.

use super::{into_next_level, round_robin, CompactionPolicy, PolicyView};
use crate::compaction::job::Compaction;
use crate::options::LeveledOptions;
use crate::version::{Version, MAX_LEVELS};

/// RocksDB-style leveled picks.
pub(crate) struct LeveledPolicy {
    pub options: LeveledOptions,
}

impl LeveledPolicy {
    /// Target bytes of `level` (>= 1).
    pub fn target_bytes(&self, level: usize) -> f64 {
        let o = &self.options;
        o.max_bytes_for_level_base as f64 * o.max_bytes_for_level_multiplier.powi(level as i32 - 1)
    }

    /// Score of every level that may be compacted (all but the last), highest first; only
    /// scores >= 1 are due.
    fn due_levels(&self, v: &Version) -> Vec<(f64, usize)> {
        let trigger = self.options.level0_file_num_compaction_trigger as f64;
        let mut scores: Vec<(f64, usize)> = (0..MAX_LEVELS - 1)
            .map(|l| match l {
                0 => (v.num_files(0) as f64 / trigger, 0),
                _ => (v.level_bytes(l) as f64 / self.target_bytes(l), l),
            })
            .filter(|&(score, _)| score >= 1.0)
            .collect();
        scores.sort_by(|a, b| b.0.total_cmp(&a.0));
        scores
    }
}

impl CompactionPolicy for LeveledPolicy {
    fn pick(&self, view: &PolicyView<'_>) -> Option<Compaction> {
        self.due_levels(view.version)
            .into_iter()
            .find_map(|(_, level)| match level {
                0 => into_next_level(view, 0, view.version.levels[0].clone()),
                _ => round_robin(view, level, |_| true),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::policy::test_files::{file, version};

    fn policy() -> LeveledPolicy {
        LeveledPolicy {
            options: LeveledOptions {
                max_bytes_for_level_base: 100,
                max_bytes_for_level_multiplier: 10.0,
                level0_file_num_compaction_trigger: 2,
                ..LeveledOptions::default()
            },
        }
    }

    fn pick(v: &Version, busy: &dyn Fn(u64) -> bool) -> Option<Compaction> {
        let pointers = vec![Vec::new(); MAX_LEVELS];
        policy().pick(&PolicyView {
            version: v,
            busy,
            pointers: &pointers,
            level0_wasted_probes: 0,
            writes_quiet: false,
        })
    }

    #[test]
    fn level0_compacts_at_its_trigger_into_level1() {
        let one = version(vec![(0, file(1, "a", "c", 10)), (1, file(2, "b", "b", 10))]);
        assert!(pick(&one, &|_| false).is_none());
        let two = version(vec![
            (0, file(1, "a", "c", 10)),
            (0, file(3, "b", "d", 10)),
            (1, file(2, "b", "b", 10)),
        ]);
        let c = pick(&two, &|_| false).unwrap();
        assert_eq!(
            (c.level, c.output_level, c.file_numbers()),
            (0, 1, vec![1, 3, 2])
        );
    }

    #[test]
    fn the_level_most_over_its_target_goes_first_and_busy_levels_are_skipped() {
        let v = version(vec![
            (1, file(1, "e", "f", 150)),  // level 1: 150 / 100
            (2, file(2, "a", "a", 1500)), // level 2: 2500 / 1000
            (2, file(3, "c", "d", 1000)),
            (3, file(4, "c", "c", 10)),
        ]);
        assert_eq!(policy().target_bytes(3), 10_000.0);
        let c = pick(&v, &|_| false).unwrap();
        assert_eq!((c.level, c.file_numbers()), (2, vec![2]));
        let c = pick(&v, &|n| n == 2).unwrap();
        assert_eq!((c.level, c.file_numbers()), (2, vec![3, 4]));
        let c = pick(&v, &|n| n == 2 || n == 4).unwrap();
        assert_eq!((c.level, c.file_numbers()), (1, vec![1]));
    }

    #[test]
    fn the_last_level_is_never_compacted() {
        let last = MAX_LEVELS - 1;
        let v = version(vec![(last, file(1, "a", "z", u64::MAX / 4))]);
        assert!(pick(&v, &|_| false).is_none());
    }
}
