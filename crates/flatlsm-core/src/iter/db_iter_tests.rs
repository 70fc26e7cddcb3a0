//! Scenario tests for [`DbIterator`] in both directions, over in-memory sources: snapshots,
//! tombstones, separated values, bounds and direction switches, checked against a model.

use super::{DbIterator, InternalIterator, MergingIterator, ValueResolver, VecIterator};
use crate::error::{Error, Result};
use crate::testing::walk_check::walk_cursor;
use crate::types::{compare_internal_keys, make_internal_key, SequenceNumber, ValueKind};
use crate::types::{ValuePointer, MAX_SEQUENCE};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Resolves a pointer to `ptr<offset>`; file 666 is "damaged".
struct FakeVlog;

impl ValueResolver for FakeVlog {
    fn resolve(&self, ptr: &ValuePointer) -> Result<Vec<u8>> {
        if ptr.file_number == 666 {
            return Err(Error::corruption(
                "/db/000666.vlog",
                ptr.offset,
                "bad record crc",
            ));
        }
        Ok(format!("ptr{}", ptr.offset).into_bytes())
    }
}

/// One version: user key, sequence, kind, inline value or pointer offset.
type Version = (String, SequenceNumber, ValueKind, u64);

fn encode(v: &Version) -> (Vec<u8>, Vec<u8>) {
    let (user, seq, kind, x) = v;
    let value = match kind {
        ValueKind::Deletion => Vec::new(),
        ValueKind::Value => format!("{user}@{seq}").into_bytes(),
        ValueKind::ValuePointer => {
            let file_number = if *x == 666 { 666 } else { 1 };
            let ptr = ValuePointer {
                file_number,
                offset: *x,
                value_len: 1,
                record_len: 1,
            };
            ptr.encode().to_vec()
        }
    };
    (make_internal_key(user.as_bytes(), *seq, *kind), value)
}

fn sorted(versions: &[Version]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut e: Vec<_> = versions.iter().map(encode).collect();
    e.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
    e
}

fn db_iter(
    inner: Box<dyn InternalIterator>,
    read_seq: SequenceNumber,
    lower: Option<&str>,
    upper: Option<&str>,
) -> DbIterator {
    let bound = |b: Option<&str>| b.map(|s| s.as_bytes().to_vec());
    DbIterator::new(
        inner,
        Arc::new(FakeVlog),
        read_seq,
        bound(lower),
        bound(upper),
        Vec::new(),
    )
}

/// A double-ended iterator over `versions`: a front cursor and a back one.
fn both_ends(versions: &[Version], lower: Option<&str>, upper: Option<&str>) -> DbIterator {
    let cursor = || Box::new(VecIterator::new(sorted(versions)));
    let back = db_iter(cursor(), MAX_SEQUENCE, lower, upper);
    let mut it = db_iter(cursor(), MAX_SEQUENCE, lower, upper).with_back(back);
    it.seek_to_first();
    it
}

fn over(versions: &[Version], read_seq: SequenceNumber) -> DbIterator {
    db_iter(
        Box::new(VecIterator::new(sorted(versions))),
        read_seq,
        None,
        None,
    )
}

/// What a reader at `read_seq` sees within `[lower, upper)`.
fn visible(
    versions: &[Version],
    read_seq: SequenceNumber,
    lower: Option<&str>,
    upper: Option<&str>,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut newest: BTreeMap<&str, &Version> = BTreeMap::new();
    for v in versions.iter().filter(|v| v.1 <= read_seq) {
        if newest.get(v.0.as_str()).is_none_or(|n| n.1 < v.1) {
            newest.insert(&v.0, v);
        }
    }
    let in_range = |k: &str| lower.is_none_or(|l| k >= l) && upper.is_none_or(|u| k < u);
    newest
        .into_iter()
        .filter(|(k, v)| in_range(k) && v.2 != ValueKind::Deletion)
        .map(|(k, v)| {
            let value = match v.2 {
                ValueKind::ValuePointer => format!("ptr{}", v.3).into_bytes(),
                _ => format!("{k}@{}", v.1).into_bytes(),
            };
            (k.as_bytes().to_vec(), value)
        })
        .collect()
}

fn current(it: &DbIterator) -> Option<(String, String)> {
    let s = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
    it.valid().then(|| (s(it.key()), s(it.value())))
}

fn kv(k: &str, v: &str) -> Option<(String, String)> {
    Some((k.to_string(), v.to_string()))
}

/// b: newer invisible version over a live one; c: deleted; d: deleted then rewritten (pointer).
fn scenario() -> Vec<Version> {
    vec![
        ("a".into(), 1, ValueKind::Value, 0),
        ("b".into(), 2, ValueKind::Value, 0),
        ("b".into(), 50, ValueKind::Value, 0),
        ("c".into(), 3, ValueKind::Value, 0),
        ("c".into(), 4, ValueKind::Deletion, 0),
        ("d".into(), 5, ValueKind::Value, 0),
        ("d".into(), 6, ValueKind::Deletion, 0),
        ("d".into(), 7, ValueKind::ValuePointer, 77),
        ("e".into(), 60, ValueKind::Value, 0),
    ]
}

/// Each positioning call is one seek and each step one next, from both ends; a seek to the
/// first key with a lower bound is still one seek.
#[test]
fn iterator_latency_counts_one_seek_per_positioning_and_one_next_per_step() {
    let latency = Arc::new(super::IterLatency::default());
    let cursor = || Box::new(VecIterator::new(sorted(&scenario())));
    let back = move || db_iter(cursor(), MAX_SEQUENCE, Some("a"), None);
    let mut it = back().with_latency(latency.clone()).with_back_fn(back);
    let counts = || {
        (
            latency.seek.snapshot().count(),
            latency.next.snapshot().count(),
        )
    };
    assert_eq!(counts(), (0, 0));
    it.seek_to_first();
    assert_eq!(counts(), (1, 0));
    assert_eq!(it.by_ref().take(2).count(), 2);
    assert_eq!(counts(), (1, 2));
    assert!(
        it.next_back().is_some(),
        "the back cursor seeks to the last key"
    );
    assert_eq!(counts(), (2, 3));
    it.seek(b"c");
    it.seek_for_prev(b"c");
    it.prev();
    assert_eq!(counts(), (4, 4));
}

#[test]
fn db_iterator_reverse_scan_hides_invisible_versions_and_tombstones() {
    let mut it = over(&scenario(), 10);
    it.seek_to_last();
    let mut got = Vec::new();
    while let Some(e) = current(&it) {
        got.push(e);
        it.prev();
    }
    it.status().unwrap();
    assert_eq!(
        got,
        [kv("d", "ptr77"), kv("b", "b@2"), kv("a", "a@1")].map(Option::unwrap)
    );
}

#[test]
fn db_iterator_prev_from_a_seek_position_and_back_again() {
    let mut it = over(&scenario(), 10);
    it.seek(b"b");
    assert_eq!(current(&it), kv("b", "b@2"));
    it.prev();
    assert_eq!(current(&it), kv("a", "a@1"));
    it.advance();
    assert_eq!(current(&it), kv("b", "b@2"));
    it.advance();
    assert_eq!(current(&it), kv("d", "ptr77"));
    it.prev();
    assert_eq!(current(&it), kv("b", "b@2"));
    it.prev();
    it.prev();
    assert_eq!(current(&it), None);
    it.seek_for_prev(b"c");
    assert_eq!(current(&it), kv("b", "b@2"));
    it.advance();
    assert_eq!(current(&it), kv("d", "ptr77"));
    it.advance();
    assert_eq!(current(&it), None);
}

#[test]
fn db_iterator_seek_to_last_on_empty_or_fully_deleted_source_is_invalid() {
    let mut it = over(&[], MAX_SEQUENCE);
    it.seek_to_last();
    assert!(!it.valid());
    it.seek_for_prev(b"zzz");
    assert!(!it.valid());
    let deleted = vec![
        ("a".to_string(), 1, ValueKind::Value, 0),
        ("a".to_string(), 2, ValueKind::Deletion, 0),
    ];
    let mut it = over(&deleted, MAX_SEQUENCE);
    it.seek_to_last();
    assert!(!it.valid());
    it.status().unwrap();
}

#[test]
fn db_iterator_reverse_honours_lower_inclusive_and_upper_exclusive_bounds() {
    let inner = Box::new(VecIterator::new(sorted(&scenario())));
    let mut it = db_iter(inner, MAX_SEQUENCE, Some("b"), Some("e"));
    it.seek_to_last(); // "e" is excluded by the upper bound.
    assert_eq!(current(&it), kv("d", "ptr77"));
    it.seek_for_prev(b"zzz");
    assert_eq!(current(&it), kv("d", "ptr77"));
    it.prev();
    assert_eq!(current(&it), kv("b", "b@50"));
    it.prev(); // "a" is below the lower bound.
    assert_eq!(current(&it), None);
    it.seek_for_prev(b"a");
    assert_eq!(current(&it), None);
    let rev: Vec<_> = both_ends(&scenario(), Some("b"), Some("e"))
        .rev()
        .map(|r| r.unwrap().0)
        .collect();
    assert_eq!(rev, [b"d".to_vec(), b"b".to_vec()]);
}

/// `next` and `next_back` meet in the middle: every key once, none twice, from either end.
#[test]
fn a_double_ended_walk_yields_each_key_once_from_either_end() {
    let versions: Vec<Version> = (0..9)
        .map(|i| (format!("k{i}"), 1, ValueKind::Value, i))
        .collect();
    for fronts in 0..=10 {
        let mut it = both_ends(&versions, None, None);
        let mut seen: Vec<Vec<u8>> = it.by_ref().take(fronts).map(|r| r.unwrap().0).collect();
        let mut back: Vec<Vec<u8>> = it.by_ref().rev().map(|r| r.unwrap().0).collect();
        back.reverse();
        seen.extend(back);
        assert!(it.next().is_none() && it.next_back().is_none(), "{fronts}");
        let want: Vec<Vec<u8>> = (0..9).map(|i| format!("k{i}").into_bytes()).collect();
        assert_eq!(seen, want, "{fronts} from the front");
    }
    let mut alternating = both_ends(&versions, None, None);
    let mut keys = Vec::new();
    while let Some(r) = alternating.next() {
        keys.push(r.unwrap().0);
        if let Some(b) = alternating.next_back() {
            keys.push(b.unwrap().0);
        }
    }
    keys.sort();
    assert_eq!(keys.len(), 9);
    keys.dedup();
    assert_eq!(keys.len(), 9, "no key twice");
}

/// Without a back cursor, `next_back` says so once instead of walking nothing silently.
#[test]
fn next_back_without_a_back_cursor_is_an_error_once() {
    let mut it = over(&[("a".to_string(), 1, ValueKind::Value, 0)], MAX_SEQUENCE);
    assert!(it.next_back().unwrap().is_err());
    assert!(it.next_back().is_none());
}

#[test]
fn db_iterator_status_keeps_corruption_kind_from_the_value_log() {
    // Regression: status() used to turn every error into InvalidState, losing the file/offset.
    let versions = vec![("a".to_string(), 1, ValueKind::ValuePointer, 666)];
    for backward in [false, true] {
        let mut it = over(&versions, MAX_SEQUENCE);
        if backward {
            it.seek_to_last();
        } else {
            it.seek_to_first();
        }
        assert!(!it.valid());
        let e = it.status().unwrap_err();
        assert!(e.is_corruption(), "{e}");
        assert!(
            it.status().unwrap_err().is_corruption(),
            "status is repeatable"
        );
    }
}

#[test]
fn db_iterator_yields_its_error_once_then_ends() {
    // Regression: the Iterator impl yielded Some(Err) forever, so `.flatten()` never ended.
    let versions = vec![
        ("a".to_string(), 1, ValueKind::Value, 0),
        ("b".to_string(), 2, ValueKind::ValuePointer, 666),
    ];
    let mut it = over(&versions, MAX_SEQUENCE);
    it.seek_to_first();
    let items: Vec<_> = it.by_ref().take(10).collect();
    assert_eq!(items.len(), 2, "one entry, then the error once");
    assert!(items[1].as_ref().unwrap_err().is_corruption());
    assert!(it.next().is_none());
    let cursor = || Box::new(VecIterator::new(sorted(&versions)));
    let back = db_iter(cursor(), MAX_SEQUENCE, None, None);
    let it = db_iter(cursor(), MAX_SEQUENCE, None, None).with_back(back);
    let rev: Vec<_> = it.rev().take(10).collect();
    assert_eq!(rev.len(), 1);
    assert!(rev[0].as_ref().unwrap_err().is_corruption());
}

fn random_versions(rng: &mut StdRng) -> Vec<Version> {
    let mut next_seq = 1;
    (0..rng.gen_range(0..250))
        .map(|_| {
            let user = format!("k{:03}", rng.gen_range(0..60));
            let kind = match rng.gen_range(0..10) {
                0..=2 => ValueKind::Deletion,
                3..=6 => ValueKind::Value,
                _ => ValueKind::ValuePointer,
            };
            next_seq += 1;
            (user, next_seq, kind, next_seq)
        })
        .collect()
}

/// Splits `versions` over three merged children, as PMTables and levels hold them.
fn merged_sources(versions: &[Version], rng: &mut StdRng) -> Box<dyn InternalIterator> {
    let mut parts: Vec<Vec<Version>> = vec![Vec::new(); 3];
    for v in versions {
        parts[rng.gen_range(0..3)].push(v.clone());
    }
    let children = parts
        .iter()
        .map(|p| Box::new(VecIterator::new(sorted(p))) as Box<dyn InternalIterator>)
        .collect();
    Box::new(MergingIterator::new(children))
}

fn random_bound(rng: &mut StdRng) -> Option<String> {
    rng.gen_bool(0.4)
        .then(|| format!("k{:03}", rng.gen_range(0..60)))
}

#[test]
fn db_iterator_random_walk_matches_model_with_snapshots_bounds_and_pointers() {
    for seed in 0..40 {
        let mut rng = StdRng::seed_from_u64(seed);
        let versions = random_versions(&mut rng);
        let read_seq = if rng.gen_bool(0.5) {
            MAX_SEQUENCE
        } else {
            rng.gen_range(0..300)
        };
        let (lower, upper) = (random_bound(&mut rng), random_bound(&mut rng));
        let model = visible(&versions, read_seq, lower.as_deref(), upper.as_deref());
        let inner = merged_sources(&versions, &mut rng);
        let mut it = db_iter(inner, read_seq, lower.as_deref(), upper.as_deref());
        let target = |rng: &mut StdRng| format!("k{:03}", rng.gen_range(0..62)).into_bytes();
        walk_cursor(
            &mut it,
            &model,
            &mut rng,
            (seed, 400),
            |a, b| a.cmp(b),
            target,
        );
    }
}

/// Random versions of 12 keys under random range tombstones: forward and backward walks at
/// every read sequence show the model's view (a version a visible tombstone covers is gone,
/// one written after it is not).
#[test]
fn range_tombstones_hide_covered_versions_in_both_directions() {
    use crate::range_del::{RangeTombstone, RangeTombstones};
    let mut rng = StdRng::seed_from_u64(11);
    for _ in 0..40 {
        let mut versions = Vec::new();
        let mut tombstones = Vec::new();
        for seq in 1..=60u64 {
            let (a, b) = (rng.gen_range(b'a'..b'm'), rng.gen_range(b'a'..b'm'));
            if rng.gen_bool(0.1) {
                let (lo, hi) = (a.min(b), a.max(b).max(a.min(b) + 1));
                tombstones.push(RangeTombstone {
                    start: vec![lo],
                    end: vec![hi],
                    seq,
                });
            } else {
                versions.push(((a as char).to_string(), seq, ValueKind::Value, 0));
            }
        }
        let set = Arc::new(RangeTombstones::new(tombstones));
        for read_seq in [10, 30, 45, MAX_SEQUENCE] {
            let expected: Vec<_> = visible(&versions, read_seq, None, None)
                .into_iter()
                .filter(|(k, v)| {
                    let seq: u64 = String::from_utf8_lossy(v)
                        .split('@')
                        .nth(1)
                        .unwrap()
                        .parse()
                        .unwrap();
                    !set.covers(k, seq, read_seq)
                })
                .collect();
            let it = || over(&versions, read_seq).with_range_dels(set.clone());
            let mut fwd = it();
            fwd.seek_to_first();
            assert_eq!(fwd.map(|r| r.unwrap()).collect::<Vec<_>>(), expected);
            let mut back = it();
            back.seek_to_last();
            let mut got = Vec::new();
            while back.valid() {
                got.push((back.key().to_vec(), back.value().to_vec()));
                back.prev();
            }
            got.reverse();
            assert_eq!(got, expected, "backward at {read_seq}");
        }
    }
}
