//! SLM-DB's selective compaction (section 3.3): which SSTs become candidates — too few live keys,
//! or too many files behind a window of consecutive keys in a leaf scan — which group is merged
//! (the candidate with the largest summed key-range overlap with the others, and the candidates
//! overlapping it), and the stream of an input that keeps only the keys the B+-tree still points
//! at in it. The job itself is the shared compaction job (`jobs/store_jobs.rs`).

use crate::compaction::filtered::{Forward, KeepRule};
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::pmbtree::PmBtree;
use crate::types::{parse_internal_key, user_key_of, ValueKind};
use crate::version::FileMeta;
use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Files of `files` whose `live` entries are below `threshold` of all, or flagged by a scan.
pub(super) fn candidates(
    files: &[Arc<FileMeta>],
    live: &impl Fn(&u64) -> u64,
    flagged: &BTreeSet<u64>,
    threshold: f64,
) -> Vec<Arc<FileMeta>> {
    let low = |f: &FileMeta| (live(&f.number) as f64) < threshold * f.num_entries.max(1) as f64;
    let picked = files
        .iter()
        .filter(|f| low(f) || flagged.contains(&f.number));
    picked.cloned().collect()
}

/// The group to merge: the candidate whose key range overlaps the others most (summed overlap
/// ratios), then the candidates overlapping it, at most `max` files in all.
pub(super) fn pick(cands: &[Arc<FileMeta>], max: usize) -> Vec<Arc<FileMeta>> {
    let score = |s: &FileMeta| -> f64 { cands.iter().map(|t| overlap_ratio(s, t)).sum() };
    let Some(best) = cands
        .iter()
        .max_by(|a, b| score(a).total_cmp(&score(b)))
        .cloned()
    else {
        return Vec::new();
    };
    let others = cands
        .iter()
        .filter(|t| t.number != best.number && overlap_ratio(&best, t) > 0.0);
    std::iter::once(best.clone())
        .chain(others.cloned())
        .take(max.max(1))
        .collect()
}

/// The paper's overlap ratio of two key ranges, (min(ends) − max(starts)) / (max(ends) −
/// min(starts)), 0 if they do not overlap; keys are read as numbers from the 8 bytes after the
/// prefix all four bounds share.
fn overlap_ratio(s: &FileMeta, t: &FileMeta) -> f64 {
    let bounds = [&s.smallest, &s.largest, &t.smallest, &t.largest].map(|k| user_key_of(k));
    let shared = (0..)
        .take_while(|&i| {
            bounds
                .iter()
                .all(|b| b.get(i).is_some() && b[i] == bounds[0][i])
        })
        .count();
    let [s1, sp, t1, tq] = bounds.map(|b| as_number(b.get(shared..).unwrap_or_default()));
    let span = sp.max(tq) - s1.min(t1);
    if span <= 0.0 {
        // Equal single-key ranges overlap wholly; distinct ones not at all.
        return if s1 == t1 && sp == tq { 1.0 } else { 0.0 };
    }
    ((sp.min(tq) - s1.max(t1)) / span).max(0.0)
}

/// The first 8 bytes of `key`, big-endian, zero-padded.
fn as_number(key: &[u8]) -> f64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(b) as f64
}

/// One leaf-node scan window from `cursor` (round robin): the files behind `window` consecutive
/// keys if there are more than `threshold` of them, and where the next scan starts.
pub(super) fn leaf_scan(
    tree: &PmBtree,
    cursor: &[u8],
    window: usize,
    threshold: usize,
) -> Result<(Vec<u64>, Vec<u8>)> {
    let mut files = BTreeSet::new();
    let mut seen = 0;
    let mut from = Bound::Excluded(cursor.to_vec());
    let mut last = cursor.to_vec();
    while seen < window {
        let page = tree.entries_after(bound_ref(&from))?;
        for (key, loc) in page.entries.into_iter().take(window - seen) {
            files.insert(loc.file);
            seen += 1;
            last = key;
        }
        match page.next {
            Some(fence) if seen < window => from = Bound::Included(fence),
            Some(_) => break,
            None => return Ok((flagged(files, threshold), Vec::new())), // wrap around
        }
    }
    Ok((flagged(files, threshold), last))
}

fn bound_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k),
        Bound::Excluded(k) => Bound::Excluded(k),
        Bound::Unbounded => Bound::Unbounded,
    }
}

fn flagged(files: BTreeSet<u64>, threshold: usize) -> Vec<u64> {
    match files.len() > threshold {
        true => files.into_iter().collect(),
        false => Vec::new(),
    }
}

/// Whether one selective compaction keeps the entries only a snapshot may read, shared by its
/// inputs' [`ValidKeys`] and read back when its outputs are installed (kept ones are parked).
///
/// Rule: the tree's answers prove an entry dead only as the tree stood at the pick, `mark`
/// changes ago, when no snapshot could read older versions: every version it then named was
/// visible, so every snapshot taken since reads it (or a newer one). A flush indexed during the
/// job may name a version a snapshot taken in between cannot read (the entry here is then that
/// snapshot's), so once the tree's change count moves, every entry is kept for the rest of the
/// job. (Deciding by the live tree alone lost snapshot data under concurrent flushes.)
#[derive(Debug, Default)]
pub(super) struct Keep {
    /// The tree's change count read before the pick asked about snapshots.
    mark: u64,
    /// Set from the start if a snapshot was open, or once the tree changed.
    all: AtomicBool,
}

impl Keep {
    /// Keeps everything if `snapshots`, else what the tree at change count `mark` leaves live.
    pub fn new(mark: u64, snapshots: bool) -> Arc<Keep> {
        let all = AtomicBool::new(snapshots);
        Arc::new(Keep { mark, all })
    }

    /// True once the job keeps (or kept) entries only a snapshot may read.
    pub fn keeps_all(&self) -> bool {
        self.all.load(Ordering::Acquire)
    }

    /// Whether to keep a dead-looking entry the tree just judged (its answer read before this).
    fn invalid(&self, tree: &PmBtree) -> bool {
        if tree.changes() != self.mark {
            self.all.store(true, Ordering::Release);
        }
        self.keeps_all()
    }
}

/// The entries of input SST `file` a selective compaction keeps (a [`KeepRule`] over the file's
/// stream): every version of a key the B+-tree points at in this file; for a key it lacks
/// (deleted), the newest entry here if it is a tombstone (older versions may lie in files
/// outside the job: the compaction's shadows decide whether it must stay); and — only while a
/// snapshot may read them ([`Keep`]) — everything else.
pub(super) struct ValidKeys {
    file: u64,
    tree: Arc<PmBtree>,
    keep: Arc<Keep>,
    /// The current user key, and what the tree says of it.
    key: Option<(Vec<u8>, Verdict)>,
}

/// What the tree says of a key of an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// It points at this file: the key's newest version is here.
    Here,
    /// It points at another file, holding a newer version.
    Elsewhere,
    /// It lacks the key: a tombstone deleted it.
    Deleted,
}

impl ValidKeys {
    /// The stream of `inner` (input `file`) with only the entries the merge keeps.
    pub fn stream(
        inner: Box<dyn InternalIterator>,
        file: u64,
        tree: Arc<PmBtree>,
        keep: Arc<Keep>,
    ) -> Forward<Box<dyn InternalIterator>, ValidKeys> {
        let rule = ValidKeys {
            file,
            tree,
            keep,
            key: None,
        };
        Forward::with_rule(inner, rule)
    }

    /// What the tree says of `user_key`, and whether this is its first (newest) entry here.
    fn verdict(&mut self, user_key: &[u8]) -> Result<(Verdict, bool)> {
        if let Some((k, v)) = &self.key {
            if k.as_slice() == user_key {
                return Ok((*v, false));
            }
        }
        let v = match self.tree.get(user_key)? {
            Some(l) if l.file == self.file => Verdict::Here,
            Some(_) => Verdict::Elsewhere,
            None => Verdict::Deleted,
        };
        self.key = Some((user_key.to_vec(), v));
        Ok((v, true))
    }
}

impl KeepRule for ValidKeys {
    fn restart(&mut self) {
        self.key = None;
    }

    fn keep(&mut self, internal_key: &[u8]) -> Result<bool> {
        let (verdict, newest) = self.verdict(user_key_of(internal_key))?;
        let kind = parse_internal_key(internal_key).map(|p| p.kind);
        let tombstone = kind == Some(ValueKind::Deletion);
        Ok(match verdict {
            Verdict::Here => true,
            Verdict::Deleted if newest && tombstone => true,
            _ => self.keep.invalid(&self.tree),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::policy::test_files::file;
    use crate::iter::VecIterator;
    use crate::pmbtree::{Location, NODE_SIZE};
    use crate::types::make_internal_key;

    #[test]
    fn overlap_ratios_follow_the_papers_formula_past_a_shared_prefix() {
        // Keys read as numbers after "user": [1, 5] and [3, 7] overlap by 2 of 6.
        let a = file(1, "user1000", "user5000", 1);
        let b = file(2, "user3000", "user7000", 1);
        let c = file(3, "user8000", "user9000", 1);
        assert_eq!(overlap_ratio(&a, &a), 1.0);
        assert_eq!(overlap_ratio(&a, &c), 0.0);
        let r = overlap_ratio(&a, &b);
        assert!((r - 1.0 / 3.0).abs() < 0.01, "{r}");
    }

    #[test]
    fn the_group_is_the_most_overlapped_candidate_and_its_overlaps() {
        let files = [
            file(1, "a0", "a9", 1),
            file(2, "a3", "b5", 1),
            file(3, "a5", "a7", 1),
            file(4, "x0", "x9", 1),
        ]
        .map(Arc::new);
        let group: Vec<u64> = pick(&files, 15).iter().map(|f| f.number).collect();
        assert!(
            group.contains(&1) && group.contains(&3) && !group.contains(&4),
            "{group:?}"
        );
        assert_eq!(pick(&files, 1).len(), 1);
    }

    #[test]
    fn candidates_are_files_with_few_live_keys_or_flagged_by_a_scan() {
        let mut f = file(1, "a", "b", 1);
        f.num_entries = 100;
        let mut g = file(2, "c", "d", 1);
        g.num_entries = 100;
        let files = [Arc::new(f), Arc::new(g)];
        let live = |n: &u64| if *n == 1 { 69 } else { 100 };
        let none = BTreeSet::new();
        let picked: Vec<u64> = candidates(&files, &live, &none, 0.7)
            .iter()
            .map(|f| f.number)
            .collect();
        assert_eq!(picked, vec![1]);
        let flagged = BTreeSet::from([2]);
        assert_eq!(candidates(&files, &live, &flagged, 0.7).len(), 2);
    }

    /// A tree in a fresh simulated region.
    fn tree() -> Arc<PmBtree> {
        use crate::pm::{PmDevice, SimulatedPmDevice};
        let device = SimulatedPmDevice::new();
        let region = device.create_region("t.pmbt", 16 * NODE_SIZE).unwrap();
        Arc::new(PmBtree::create(region).unwrap())
    }

    fn at(file: u64) -> Location {
        Location {
            file,
            offset: 0,
            size: 1,
        }
    }

    /// Input file 5 of a selective compaction: one version of each of `keys` (sequence 1).
    fn input(
        keys: &[&str],
        tree: &Arc<PmBtree>,
        keep: &Arc<Keep>,
    ) -> Forward<Box<dyn InternalIterator>, ValidKeys> {
        let entries = keys
            .iter()
            .map(|k| {
                (
                    make_internal_key(k.as_bytes(), 1, ValueKind::Value),
                    b"v".to_vec(),
                )
            })
            .collect();
        let inner = Box::new(VecIterator::new(entries)) as Box<dyn InternalIterator>;
        ValidKeys::stream(inner, 5, tree.clone(), keep.clone())
    }

    /// Regression: the verdicts read the live tree, so a flush indexed during the compaction
    /// (writes after a snapshot taken since the pick) made the entries that snapshot reads look
    /// dead, and they were dropped: the model test's snapshot scans lost keys.
    #[test]
    fn entries_a_flush_during_the_compaction_supersedes_are_kept_for_snapshots_taken_meanwhile() {
        let tree = tree();
        tree.upsert(b"a", at(7)).unwrap(); // superseded before the pick
        tree.upsert(b"b", at(5)).unwrap();
        tree.upsert(b"c", at(5)).unwrap();
        tree.upsert(b"d", at(5)).unwrap();
        let keep = Keep::new(tree.changes(), false);
        let mut it = input(&["a", "b", "c", "d"], &tree, &keep);
        it.seek_to_first();
        assert_eq!(
            user_key_of(it.key()),
            b"b",
            "a is dead as the tree stood at the pick"
        );
        assert!(!keep.keeps_all());
        // A snapshot is taken; then c is overwritten and d deleted, and that flush is indexed.
        tree.upsert(b"c", at(9)).unwrap();
        tree.remove(b"d").unwrap();
        let mut rest = Vec::new();
        it.next();
        while it.valid() {
            rest.push(user_key_of(it.key()).to_vec());
            it.next();
        }
        assert_eq!(rest, [b"c".to_vec(), b"d".to_vec()]);
        assert!(
            keep.keeps_all(),
            "the outputs hold entries for snapshots: parked"
        );
    }

    #[test]
    fn with_a_snapshot_open_at_the_pick_every_entry_is_kept() {
        let tree = tree();
        tree.upsert(b"a", at(7)).unwrap();
        let keep = Keep::new(tree.changes(), true);
        let mut it = input(&["a", "b"], &tree, &keep);
        it.seek_to_first();
        assert_eq!(user_key_of(it.key()), b"a");
    }
}
