//! FlatLSM's policy (the flattened tree, paper 4.3): level 0 holds L1's unmerged runs (one per
//! flush, `flush.rs`), level 1 the Ordered-L1, level 2 L2.
//!
//! 1. Once `l1_merge_trigger` runs exist, *every* level-0 file is merged with the L1 files it
//!    overlaps (with random keys, all of L1): each L1 entry is rewritten once per that many
//!    flushes instead of once per flush (docs/design-decisions.md).
//! 2. Else, while the data L1 represents (its SSTs plus the value bytes they reference,
//!    `Version::level_data_bytes`) exceeds its target, one L1 file, chosen round robin over
//!    the key space, is merged with the L2 files it overlaps. The target is a share of all
//!    the data (`l1_data_ratio`), at least `l1_floor` and at most `l1_capacity`: L2 keeps the
//!    older versions of keys updated since they reached it, and their values are garbage the
//!    value-log GC cannot see until a compaction drops them, so L1's share bounds that garbage
//!    (docs/design-decisions.md, "The Ordered-L1 as a share of the data").
//!
//! 3. Reads merge the runs early: once the runs point reads searched in vain since level 0
//!    was last merged (`PolicyView::level0_wasted_probes`) would, at
//!    [`MERGE_BYTES_PER_WASTED_PROBE`] bytes each, pay for rewriting the merge's inputs, every
//!    run is merged below the trigger (LevelDB's seek compaction, for level 0 as a whole: a
//!    read-heavy phase after writes stops searching the runs one by one, a write-heavy one
//!    keeps the trigger's rhythm because its reads charge little per flush).
//!
//! 4. Once writes are quiet (`PolicyView::writes_quiet`), every run is merged too: the runs
//!    hide which of their values are garbage (an overwritten key is referenced from two runs
//!    until they meet), so the value-log GC that follows the quiet could not collect them, and
//!    reads stop searching them one by one. The runs are keys and pointers, a merge of them
//!    costs little next to the value-log GC it lets see its garbage.
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
    /// Most data bytes of L1 (its target never exceeds this).
    pub l1_capacity: u64,
    /// L1's target as a share of all the data.
    pub l1_data_ratio: f64,
    /// Least target of L1 in data bytes (small databases keep their data in L1).
    pub l1_floor: u64,
}

/// Bytes of merge input one wasted run probe pays for. A probe costs a table-cache lookup
/// and a filter probe that misses the CPU cache, about 0.1 µs on a get of 3.4 µs (server GET
/// profile, docs/design-decisions.md "Reads merge the runs early"); a merge of keys and
/// pointers runs at hundreds of MB/s, a few ns per byte, and also writes the device. 32
/// bytes leans towards merging less.
pub(crate) const MERGE_BYTES_PER_WASTED_PROBE: u64 = 32;

impl FlatPolicy {
    /// The merge of every run into L1, if at least `trigger` runs exist.
    pub fn merge_runs(view: &PolicyView<'_>, trigger: usize) -> Option<Compaction> {
        let runs = &view.version.levels[0];
        if runs.is_empty() || view.version.level0_runs() < trigger {
            return None;
        }
        into_next_level(view, 0, runs.clone())
    }

    /// The merge of every run into L1, if reads have wasted enough probes on the runs to pay
    /// for rewriting its inputs (item 3 of the header).
    pub fn merge_runs_for_reads(view: &PolicyView<'_>) -> Option<Compaction> {
        let c = Self::merge_runs(view, 1)?;
        let paid = view
            .level0_wasted_probes
            .saturating_mul(MERGE_BYTES_PER_WASTED_PROBE);
        (paid >= c.input_bytes()).then_some(c)
    }

    /// L1's target in data bytes for `version`: `l1_data_ratio` of all its data, within
    /// `[l1_floor, l1_capacity]` (the cap wins if the floor exceeds it).
    pub fn l1_target(&self, version: &crate::version::Version) -> u64 {
        let levels = 0..version.levels.len();
        let data: u64 = levels.map(|l| version.level_data_bytes(l)).sum();
        let share = (data as f64 * self.l1_data_ratio) as u64;
        share.max(self.l1_floor).min(self.l1_capacity)
    }
}

impl CompactionPolicy for FlatPolicy {
    fn pick(&self, view: &PolicyView<'_>) -> Option<Compaction> {
        let trigger = match view.writes_quiet {
            true => 1,
            false => self.l1_merge_trigger,
        };
        if let Some(c) = Self::merge_runs(view, trigger) {
            return Some(c);
        }
        if let Some(c) = Self::merge_runs_for_reads(view) {
            return Some(c);
        }
        if view.version.level_data_bytes(1) <= self.l1_target(view.version) {
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
        pick_after_reads(policy, v, busy, 0)
    }

    fn pick_after_reads(
        policy: &FlatPolicy,
        v: &Version,
        busy: &dyn Fn(u64) -> bool,
        level0_wasted_probes: u64,
    ) -> Option<Compaction> {
        pick_with(policy, v, busy, level0_wasted_probes, false)
    }

    fn pick_with(
        policy: &FlatPolicy,
        v: &Version,
        busy: &dyn Fn(u64) -> bool,
        level0_wasted_probes: u64,
        writes_quiet: bool,
    ) -> Option<Compaction> {
        let pointers = vec![Vec::new(), b"c".to_vec()];
        policy.pick(&PolicyView {
            version: v,
            busy,
            pointers: &pointers,
            level0_wasted_probes,
            writes_quiet,
        })
    }

    #[test]
    fn once_writes_are_quiet_a_single_run_is_merged_into_l1() {
        let roomy = FlatPolicy {
            l1_capacity: 1 << 40,
            ..POLICY
        };
        let one_run = version(vec![(0, file(1, "a", "k", 10)), (1, file(2, "b", "c", 10))]);
        assert!(pick_with(&roomy, &one_run, &|_| false, 0, false).is_none());
        let c = pick_with(&roomy, &one_run, &|_| false, 0, true).unwrap();
        assert_eq!(
            (c.level, c.output_level, c.file_numbers()),
            (0, 1, vec![1, 2])
        );
        let no_runs = version(vec![(1, file(2, "b", "c", 10))]);
        assert!(pick_with(&roomy, &no_runs, &|_| false, 0, true).is_none());
    }

    #[test]
    fn reads_merge_one_run_early_once_their_wasted_probes_pay_for_its_rewrite() {
        let roomy = FlatPolicy {
            l1_capacity: 1 << 40,
            ..POLICY
        };
        let v = version(vec![
            (0, file(1, "a", "k", 320)),
            (1, file(2, "b", "c", 320)),
        ]);
        let probes_paying = 640 / MERGE_BYTES_PER_WASTED_PROBE;
        assert!(pick_after_reads(&roomy, &v, &|_| false, probes_paying - 1).is_none());
        let c = pick_after_reads(&roomy, &v, &|_| false, probes_paying).unwrap();
        assert_eq!(
            (c.level, c.output_level, c.file_numbers()),
            (0, 1, vec![1, 2])
        );
        assert!(pick_after_reads(&roomy, &v, &|n| n == 2, probes_paying).is_none());
        let no_runs = version(vec![(1, file(2, "b", "c", 320))]);
        assert!(pick_after_reads(&roomy, &no_runs, &|_| false, u64::MAX).is_none());
    }

    const POLICY: FlatPolicy = FlatPolicy {
        l1_merge_trigger: 2,
        l1_capacity: 100,
        l1_data_ratio: 1.0,
        l1_floor: 0,
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

    #[test]
    fn l1_target_is_its_share_of_all_the_data_between_floor_and_cap() {
        let v = version(vec![
            (1, file(1, "a", "b", 60)),
            (1, file(2, "d", "e", 60)),
            (2, file(3, "a", "z", 880)),
        ]);
        let share = |ratio, floor, cap| FlatPolicy {
            l1_capacity: cap,
            l1_data_ratio: ratio,
            l1_floor: floor,
            ..POLICY
        };
        assert_eq!(share(0.125, 0, 1000).l1_target(&v), 125);
        assert!(pick(&share(0.125, 0, 1000), &v, &|_| false).is_none());
        let c = pick(&share(0.1, 0, 1000), &v, &|_| false).unwrap();
        assert_eq!(
            (c.level, c.output_level),
            (1, 2),
            "L1 above a tenth of the data"
        );
        assert_eq!(share(0.1, 200, 1000).l1_target(&v), 200, "the floor");
        assert_eq!(share(0.5, 0, 90).l1_target(&v), 90, "the cap");
        assert_eq!(
            share(0.5, 200, 90).l1_target(&v),
            90,
            "the cap over the floor"
        );
    }
}
