//! Test support: drives any [`InternalIterator`] through a random mix of positioning and
//! stepping calls in both directions and checks every position against a sorted model.

use super::InternalIterator;
use crate::types::{compare_internal_keys, make_internal_key, user_key_of, ValueKind};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cmp::Ordering;

/// (internal key, value) pairs in the order the iterator must produce them.
pub(crate) type Model = [(Vec<u8>, Vec<u8>)];

/// Checks that a full backward scan is the full forward scan reversed and equals `model`.
pub(crate) fn check_reverse_scan(it: &mut dyn InternalIterator, model: &Model) {
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

/// Runs `steps` random operations (seeks in both directions, next, prev) on `it`, comparing
/// the position with `model` after each one.
pub(crate) fn check_random_walk(
    it: &mut dyn InternalIterator,
    model: &Model,
    seed: u64,
    steps: usize,
) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut pos: Option<usize> = None;
    for step in 0..steps {
        let target = random_target(&mut rng, model);
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
                let p = model.partition_point(|(k, _)| less(k, &target));
                (p < model.len()).then_some(p)
            }
            3 => {
                it.seek_for_prev(&target);
                let p = model.partition_point(|(k, _)| !greater(k, &target));
                p.checked_sub(1)
            }
            4 | 5 => match pos {
                Some(p) => {
                    it.next();
                    (p + 1 < model.len()).then_some(p + 1)
                }
                None => None,
            },
            _ => match pos {
                Some(p) => {
                    it.prev();
                    p.checked_sub(1)
                }
                None => None,
            },
        };
        it.status().unwrap();
        match pos {
            None => assert!(!it.valid(), "step {step} (op {op}): expected invalid"),
            Some(p) => {
                assert!(it.valid(), "step {step} (op {op}): expected entry {p}");
                assert_eq!(it.key(), &model[p].0[..], "step {step} (op {op}) key");
                assert_eq!(it.value(), &model[p].1[..], "step {step} (op {op}) value");
            }
        }
    }
}

fn less(a: &[u8], b: &[u8]) -> bool {
    compare_internal_keys(a, b) == Ordering::Less
}

fn greater(a: &[u8], b: &[u8]) -> bool {
    compare_internal_keys(a, b) == Ordering::Greater
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
