//! FlatLSM's policy (the flattened tree, paper 4.3): level 0 holds L1's unmerged runs (one per
//! flush, `flush.rs`), level 1 the Ordered-L1, level 2 L2.
//!
//! 1. Once `l1_merge_trigger` runs exist, *every* level-0 file is merged with the L1 files it
//!    overlaps (with random keys, all of L1): each L1 entry is rewritten once per that many
//!    flushes instead of once per flush (docs/design-decisions.md).
//! 2. Else, while the data L1 represents (its SSTs plus the value bytes they reference,
//!    `Version::level_data_bytes`) exceeds `l1_capacity`, one L1 file, chosen round robin over
//!    the key space, is merged with the L2 files it overlaps.
//!
//! Invariant: a merge of runs takes all level-0 files present when it is picked; files added
//! later (by flushes running meanwhile) hold newer versions than anything it writes to L1, so
//! reads may search level 0 before L1.

use super::{into_next_level, round_robin, CompactionPolicy, PolicyView};
use crate::compaction::job::Compaction;

/// FlatLSM's picks.
pub(crate) struct FlatPolicy {
    /// Runs in level 0 that start a merge into the ordered L1.
    pub l1_merge_trigger: usize,
    /// Data bytes of L1 above which L1 → L2 compactions run.
    pub l1_capacity: u64,
}

impl FlatPolicy {
    /// The merge of every run into L1, if at least `trigger` runs exist.
    pub fn merge_runs(view: &PolicyView<'_>, trigger: usize) -> Option<Compaction> {
        let runs = &view.version.levels[0];
        if runs.is_empty() || view.version.level0_runs() < trigger {
            return None;
        }
        into_next_level(view, 0, runs.clone())
    }
}

impl CompactionPolicy for FlatPolicy {
    fn pick(&self, view: &PolicyView<'_>) -> Option<Compaction> {
        if let Some(c) = Self::merge_runs(view, self.l1_merge_trigger) {
            return Some(c);
        }
        if view.version.level_data_bytes(1) <= self.l1_capacity {
            return None;
        }
        round_robin(view, 1, |_| true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::policy::test_files::{file, version};
    use crate::version::Version;

    fn pick(policy: &FlatPolicy, v: &Version, busy: &dyn Fn(u64) -> bool) -> Option<Compaction> {
        let pointers = vec![Vec::new(), b"c".to_vec()];
        policy.pick(&PolicyView {
            version: v,
            busy,
            pointers: &pointers,
        })
    }

    const POLICY: FlatPolicy = FlatPolicy {
        l1_merge_trigger: 2,
        l1_capacity: 100,
    };

    #[test]
    fn runs_merge_at_the_trigger_with_every_overlapping_l1_file() {
        let one_run = version(vec![(0, file(1, "a", "k", 10)), (1, file(2, "b", "c", 10))]);
        assert!(pick(&POLICY, &one_run, &|_| false).is_none());
        let two_runs = version(vec![
            (0, file(1, "a", "k", 10)),
            (0, file(3, "j", "m", 10)),
            (1, file(2, "b", "c", 10)),
            (1, file(4, "x", "z", 10)),
        ]);
        let c = pick(&POLICY, &two_runs, &|_| false).unwrap();
        assert_eq!((c.level, c.output_level), (0, 1));
        assert_eq!(c.file_numbers(), vec![1, 3, 2]);
        assert!(pick(&POLICY, &two_runs, &|n| n == 2).is_none());
    }

    #[test]
    fn a_full_l1_compacts_round_robin_after_the_pointer_into_l2() {
        let v = version(vec![
            (1, file(1, "a", "b", 60)),
            (1, file(2, "d", "e", 60)),
            (2, file(3, "d", "d", 10)),
        ]);
        let c = pick(&POLICY, &v, &|_| false).unwrap();
        assert_eq!(
            (c.level, c.output_level, c.file_numbers()),
            (1, 2, vec![2, 3])
        );
        let c = pick(&POLICY, &v, &|n| n == 3).unwrap();
        assert_eq!(c.file_numbers(), vec![1], "wraps around past a busy pick");
        let small = FlatPolicy {
            l1_capacity: 120,
            ..POLICY
        };
        assert!(pick(&small, &v, &|_| false).is_none(), "L1 within capacity");
    }
}
