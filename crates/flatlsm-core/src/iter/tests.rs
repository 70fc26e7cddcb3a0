//! Scenario tests for the internal cursors in both directions: VecIterator and MergingIterator.

use super::{InternalIterator, MergingIterator, VecIterator};
use crate::testing::walk_check::{check_random_walk, check_reverse_scan};
use crate::types::{compare_internal_keys, make_internal_key, ValueKind};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

type Entry = (Vec<u8>, Vec<u8>);
type Entries = Vec<Entry>;

fn ik(user: &str, seq: u64) -> Vec<u8> {
    make_internal_key(user.as_bytes(), seq, ValueKind::Value)
}

/// Sorted entries for user keys `k0000..` with values naming key, sequence and `tag`.
fn entries(pairs: &[(&str, u64)], tag: usize) -> Entries {
    let mut v: Entries = pairs
        .iter()
        .map(|(k, s)| (ik(k, *s), format!("{k}@{s}/{tag}").into_bytes()))
        .collect();
    v.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
    v
}

fn random_entries(rng: &mut StdRng, n: usize, tag: usize) -> Entries {
    let pairs: Vec<(String, u64)> = (0..n)
        .map(|_| {
            (
                format!("k{:04}", rng.gen_range(0..300)),
                rng.gen_range(1..60),
            )
        })
        .collect();
    let refs: Vec<(&str, u64)> = pairs.iter().map(|(k, s)| (k.as_str(), *s)).collect();
    let mut v = entries(&refs, tag);
    v.dedup_by(|a, b| a.0 == b.0);
    v
}

/// The merged order of `children`: by internal key, then by child index (newest first).
fn merged_model(children: &[Entries]) -> Entries {
    let mut all: Vec<(usize, &Entry)> = children
        .iter()
        .enumerate()
        .flat_map(|(i, c)| c.iter().map(move |e| (i, e)))
        .collect();
    all.sort_by(|a, b| compare_internal_keys(&a.1 .0, &b.1 .0).then(a.0.cmp(&b.0)));
    all.into_iter().map(|(_, e)| e.clone()).collect()
}

fn merging(children: &[Entries]) -> MergingIterator<'static> {
    let boxed: Vec<Box<dyn InternalIterator>> = children
        .iter()
        .map(|c| Box::new(VecIterator::new(c.clone())) as Box<dyn InternalIterator>)
        .collect();
    MergingIterator::new(boxed)
}

fn value_of(it: &dyn InternalIterator) -> String {
    String::from_utf8(it.value().to_vec()).unwrap()
}

#[test]
fn vec_iterator_reverse_scan_is_forward_scan_reversed() {
    let model = entries(&[("a", 3), ("a", 1), ("b", 2), ("c", 9)], 0);
    check_reverse_scan(&mut VecIterator::new(model.clone()), &model);
}

#[test]
fn vec_iterator_seek_to_last_and_seek_for_prev_on_empty_are_invalid() {
    let mut it = VecIterator::new(Vec::new());
    it.seek_to_last();
    assert!(!it.valid());
    it.seek_for_prev(&ik("a", 1));
    assert!(!it.valid());
}

#[test]
fn vec_iterator_prev_from_a_seek_position_and_past_the_first_entry() {
    let model = entries(&[("a", 1), ("b", 1), ("c", 1)], 0);
    let mut it = VecIterator::new(model);
    it.seek(&ik("b", 5));
    assert_eq!(value_of(&it), "b@1/0");
    it.prev();
    assert_eq!(value_of(&it), "a@1/0");
    it.prev();
    assert!(!it.valid());
    it.seek_for_prev(&ik("bb", 1));
    assert_eq!(value_of(&it), "b@1/0");
}

#[test]
fn vec_iterator_random_walk_matches_model() {
    let mut rng = StdRng::seed_from_u64(7);
    let model = random_entries(&mut rng, 200, 0);
    check_random_walk(&mut VecIterator::new(model.clone()), &model, 8, 2000);
}

#[test]
fn merging_iterator_reverse_scan_is_forward_scan_reversed_with_equal_keys_in_children() {
    // "b@2" sits in two children: forward order puts child 0 first, reverse order last.
    let children = vec![
        entries(&[("b", 2), ("d", 8)], 0),
        entries(&[("a", 1), ("b", 2), ("c", 3)], 1),
        Vec::new(),
    ];
    let model = merged_model(&children);
    check_reverse_scan(&mut merging(&children), &model);
}

#[test]
fn merging_iterator_switches_direction_like_leveldb() {
    let children = vec![
        entries(&[("b", 9), ("d", 8)], 0),
        entries(&[("a", 1), ("b", 2), ("c", 3), ("e", 1)], 1),
    ];
    let mut it = merging(&children);
    it.seek(&ik("c", 5));
    assert_eq!(value_of(&it), "c@3/1");
    it.prev(); // forward -> reverse: child 0 must be repositioned before c.
    assert_eq!(value_of(&it), "b@2/1");
    it.prev();
    assert_eq!(value_of(&it), "b@9/0");
    it.next(); // reverse -> forward: child 1 must be repositioned after b@9.
    assert_eq!(value_of(&it), "b@2/1");
    it.next();
    assert_eq!(value_of(&it), "c@3/1");
    it.next();
    assert_eq!(value_of(&it), "d@8/0");
    it.prev();
    assert_eq!(value_of(&it), "c@3/1");
    it.seek_to_last();
    assert_eq!(value_of(&it), "e@1/1");
    it.prev();
    assert_eq!(value_of(&it), "d@8/0");
    it.next();
    assert_eq!(value_of(&it), "e@1/1");
    it.next();
    assert!(!it.valid());
}

#[test]
fn merging_iterator_of_empty_children_is_invalid_in_both_directions() {
    let mut it = merging(&[Vec::new(), Vec::new()]);
    it.seek_to_last();
    assert!(!it.valid());
    it.seek_for_prev(&ik("z", 0));
    assert!(!it.valid());
    let mut none = MergingIterator::new(Vec::new());
    none.seek_to_last();
    assert!(!none.valid());
}

#[test]
fn merging_iterator_random_walk_over_overlapping_children_matches_model() {
    for seed in 0..6 {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut children: Vec<Entries> = (0..4)
            .map(|tag| {
                let n = rng.gen_range(0..120);
                random_entries(&mut rng, n, tag)
            })
            .collect();
        // Copy some entries into another child to create equal internal keys across children.
        let shared: Entries = children[1].iter().step_by(5).cloned().collect();
        for (k, _) in shared {
            children[3].push((k.clone(), b"dup/3".to_vec()));
        }
        children[3].sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
        children[3].dedup_by(|a, b| a.0 == b.0);
        let model = merged_model(&children);
        check_reverse_scan(&mut merging(&children), &model);
        check_random_walk(&mut merging(&children), &model, seed + 100, 1500);
    }
}

/// A source whose entry `poison` is damaged: moving onto it (either way, or by a seek) makes
/// the cursor invalid with a corruption error, which it keeps, as a damaged SST block would.
struct Damaged {
    inner: VecIterator,
    poison: Vec<u8>,
    failed: bool,
}

impl Damaged {
    fn boxed(entries: Entries, poison: Vec<u8>) -> Box<dyn InternalIterator> {
        let inner = VecIterator::new(entries);
        Box::new(Damaged {
            inner,
            poison,
            failed: false,
        })
    }

    fn moved(&mut self) {
        self.failed |= self.inner.valid() && self.inner.key() == self.poison.as_slice();
    }
}

impl InternalIterator for Damaged {
    fn valid(&self) -> bool {
        !self.failed && self.inner.valid()
    }
    fn seek_to_first(&mut self) {
        self.inner.seek_to_first();
        self.moved();
    }
    fn seek(&mut self, target: &[u8]) {
        self.inner.seek(target);
        self.moved();
    }
    fn next(&mut self) {
        self.inner.next();
        self.moved();
    }
    fn seek_to_last(&mut self) {
        self.inner.seek_to_last();
        self.moved();
    }
    fn prev(&mut self) {
        self.inner.prev();
        self.moved();
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn status(&self) -> crate::error::Result<()> {
        match self.failed {
            true => Err(crate::error::Error::corruption(
                "000009.sst",
                4096,
                "bad crc",
            )),
            false => Ok(()),
        }
    }
}

/// A newer source damaged at `b@9` over an older one holding every key at sequence 1.
fn newer_damaged_over_older() -> MergingIterator<'static> {
    let newer = entries(&[("a", 9), ("b", 9), ("c", 9)], 0);
    let older = entries(&[("a", 1), ("b", 1), ("c", 1), ("d", 1)], 1);
    let newer = Damaged::boxed(newer, ik("b", 9));
    MergingIterator::new(vec![newer, Box::new(VecIterator::new(older))])
}

/// The merge's entries from its position on (`step` moves it), and whether it ended on an error.
fn walk_from(
    it: &mut MergingIterator<'_>,
    step: fn(&mut MergingIterator<'_>),
) -> (Vec<String>, bool) {
    let mut got = Vec::new();
    while it.valid() {
        got.push(value_of(it));
        step(it);
    }
    (got, it.status().is_err())
}

/// Regression: the merge left a child that stopped on an error out and went on with the
/// others, so the older source's `b@1`, `c@1`, ... surfaced before the error was reported.
#[test]
fn a_child_error_stops_the_merge_before_any_further_entry_forward_backward_and_after_seeks() {
    let mut it = newer_damaged_over_older();
    it.seek_to_first();
    // Stepping past a@9 moves the newer child onto the damage: even a@1 is not yielded.
    assert_eq!(
        walk_from(&mut it, |i| i.next()),
        (vec!["a@9/0".into()], true)
    );
    let mut it = newer_damaged_over_older();
    it.seek_to_last();
    let back = vec!["d@1/1".into(), "c@1/1".into(), "c@9/0".into()];
    assert_eq!(walk_from(&mut it, |i| i.prev()), (back, true));
    let mut it = newer_damaged_over_older();
    it.seek(&ik("b", 20));
    assert_eq!(walk_from(&mut it, |i| i.next()), (Vec::new(), true));
    let mut it = newer_damaged_over_older();
    it.seek_for_prev(&ik("b", 0));
    assert_eq!(walk_from(&mut it, |i| i.prev()), (Vec::new(), true));
}

/// Switching direction re-seeks the other children: an error met there stops the merge too.
#[test]
fn a_child_error_met_while_switching_direction_stops_the_merge() {
    let newer = entries(&[("a", 9), ("b", 9), ("d", 9)], 0);
    let older = entries(&[("a", 1), ("c", 1), ("e", 1)], 1);
    let newer = Damaged::boxed(newer, ik("b", 9));
    let mut it = MergingIterator::new(vec![newer, Box::new(VecIterator::new(older))]);
    it.seek(&ik("c", 20)); // the newer child lands on d@9, never having been on b@9
    assert_eq!(value_of(&it), "c@1/1");
    it.prev(); // switching, the newer child steps back from d@9 onto the damaged b@9
    assert_eq!(walk_from(&mut it, |i| i.prev()), (Vec::new(), true));
}
