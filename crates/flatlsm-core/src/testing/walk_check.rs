//! Test support: drives any [`InternalIterator`] through a random mix of positioning and
//! stepping calls in both directions and checks every position against a sorted model.

use crate::iter::{DbIterator, InternalIterator};
use crate::types::{compare_internal_keys, make_internal_key, user_key_of, ValueKind};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cmp::Ordering;

/// (internal key, value) pairs in the order the iterator must produce them.
pub type Model = [(Vec<u8>, Vec<u8>)];

/// Checks that a full backward scan is the full forward scan reversed and equals `model`.
pub fn check_reverse_scan(it: &mut dyn InternalIterator, model: &Model) {
    let mut forward = Vec::new();
    it.seek_to_first();
    while it.valid() {
        forward.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    let mut backward = Vec::new();
    it.seek_to_last();
    while it.valid() {
        backward.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status().unwrap();
    backward.reverse();
    assert!(forward == model, "forward scan differs from the model");
    assert!(
        backward == model,
        "backward scan differs from the forward scan"
    );
}

/// The positioning and stepping calls a random walk makes; implemented by every
/// [`InternalIterator`] and by [`DbIterator`] (whose `next` is `advance`).
#[allow(missing_docs)] // the methods are those of `InternalIterator`, documented there
pub trait Cursor {
    fn valid(&self) -> bool;
    fn seek_to_first(&mut self);
    fn seek_to_last(&mut self);
    fn seek(&mut self, target: &[u8]);
    fn seek_for_prev(&mut self, target: &[u8]);
    fn next(&mut self);
    fn prev(&mut self);
    fn key(&self) -> &[u8];
    fn value(&self) -> &[u8];
    fn status(&self) -> crate::error::Result<()>;
}

impl<T: InternalIterator + ?Sized> Cursor for T {
    fn valid(&self) -> bool {
        InternalIterator::valid(self)
    }
    fn seek_to_first(&mut self) {
        InternalIterator::seek_to_first(self)
    }
    fn seek_to_last(&mut self) {
        InternalIterator::seek_to_last(self)
    }
    fn seek(&mut self, target: &[u8]) {
        InternalIterator::seek(self, target)
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        InternalIterator::seek_for_prev(self, target)
    }
    fn next(&mut self) {
        InternalIterator::next(self)
    }
    fn prev(&mut self) {
        InternalIterator::prev(self)
    }
    fn key(&self) -> &[u8] {
        InternalIterator::key(self)
    }
    fn value(&self) -> &[u8] {
        InternalIterator::value(self)
    }
    fn status(&self) -> crate::error::Result<()> {
        InternalIterator::status(self)
    }
}

impl Cursor for DbIterator {
    fn valid(&self) -> bool {
        DbIterator::valid(self)
    }
    fn seek_to_first(&mut self) {
        DbIterator::seek_to_first(self)
    }
    fn seek_to_last(&mut self) {
        DbIterator::seek_to_last(self)
    }
    fn seek(&mut self, target: &[u8]) {
        DbIterator::seek(self, target)
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        DbIterator::seek_for_prev(self, target)
    }
    fn next(&mut self) {
        DbIterator::advance(self)
    }
    fn prev(&mut self) {
        DbIterator::prev(self)
    }
    fn key(&self) -> &[u8] {
        DbIterator::key(self)
    }
    fn value(&self) -> &[u8] {
        DbIterator::value(self)
    }
    fn status(&self) -> crate::error::Result<()> {
        DbIterator::status(self)
    }
}

/// Runs `steps` random operations (seeks in both directions, next, prev) on `it`, comparing
/// the position with `model` after each one.
pub fn check_random_walk(it: &mut dyn InternalIterator, model: &Model, seed: u64, steps: usize) {
    let mut rng = StdRng::seed_from_u64(seed);
    let target = |rng: &mut StdRng| random_target(rng, model);
    walk_cursor(
        it,
        model,
        &mut rng,
        (seed, steps),
        compare_internal_keys,
        target,
    );
}

/// The random walk itself: `(seed, steps)` names the run in failures, `model` is sorted by
/// `cmp`, and `target` draws seek targets.
pub fn walk_cursor<C: Cursor + ?Sized>(
    it: &mut C,
    model: &Model,
    rng: &mut StdRng,
    (seed, steps): (u64, usize),
    cmp: fn(&[u8], &[u8]) -> Ordering,
    mut target: impl FnMut(&mut StdRng) -> Vec<u8>,
) {
    let mut pos: Option<usize> = None;
    for step in 0..steps {
        let target = target(rng);
        let op = rng.gen_range(0..8);
        pos = match op {
            0 => {
                it.seek_to_first();
                (!model.is_empty()).then_some(0)
            }
            1 => {
                it.seek_to_last();
                model.len().checked_sub(1)
            }
            2 => {
                it.seek(&target);
                let p = model.partition_point(|(k, _)| cmp(k, &target) == Ordering::Less);
                (p < model.len()).then_some(p)
            }
            3 => {
                it.seek_for_prev(&target);
                let p = model.partition_point(|(k, _)| cmp(k, &target) != Ordering::Greater);
                p.checked_sub(1)
            }
            4 | 5 => pos.and_then(|p| {
                it.next();
                (p + 1 < model.len()).then_some(p + 1)
            }),
            _ => pos.and_then(|p| {
                it.prev();
                p.checked_sub(1)
            }),
        };
        it.status().unwrap();
        match pos {
            None => assert!(
                !it.valid(),
                "seed {seed} step {step} (op {op}): expected invalid"
            ),
            Some(p) => {
                assert!(
                    it.valid(),
                    "seed {seed} step {step} (op {op}): expected entry {p}"
                );
                assert_eq!(
                    it.key(),
                    &model[p].0[..],
                    "seed {seed} step {step} (op {op}) key"
                );
                assert_eq!(
                    it.value(),
                    &model[p].1[..],
                    "seed {seed} step {step} (op {op}) value"
                );
            }
        }
    }
}

/// A seek target: an existing key, a neighbour of one (other sequence), or an arbitrary key.
fn random_target(rng: &mut StdRng, model: &Model) -> Vec<u8> {
    if model.is_empty() || rng.gen_bool(0.2) {
        let user = format!("k{:04}", rng.gen_range(0..1000));
        return make_internal_key(user.as_bytes(), rng.gen_range(0..100), ValueKind::Value);
    }
    let (k, _) = &model[rng.gen_range(0..model.len())];
    if rng.gen_bool(0.5) {
        return k.clone();
    }
    make_internal_key(user_key_of(k), rng.gen_range(0..100), ValueKind::Value)
}
