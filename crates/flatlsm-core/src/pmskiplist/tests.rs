//! Persistent skiplist scenarios: order and lookups, cursors in both directions, recovery after
//! a clean stop, a crash at every persist point (whole batches only, every committed batch kept,
//! recovery stable under a second crash), and damage refused with the region and offset.

use super::*;
use crate::iter::InternalIterator;
use crate::pm::{PmDevice, SimulatedPmDevice};
use crate::testing::walk_check::{check_random_walk, check_reverse_scan};
use crate::types::make_internal_key;

type Batch = Vec<(u64, ValueKind, Vec<u8>, Vec<u8>)>;

/// `n` batches of 1..=4 entries over 40 keys, values of 0..300 bytes, some deletions.
fn batches(n: usize, seed: u64) -> Vec<Batch> {
    let mut s = seed | 1;
    let mut rnd = move |m: u64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s % m
    };
    let mut seq = 1;
    (0..n)
        .map(|_| {
            (0..1 + rnd(4))
                .map(|_| {
                    let key = format!("key{:03}", rnd(40)).into_bytes();
                    let del = rnd(8) == 0;
                    let kind = if del {
                        ValueKind::Deletion
                    } else {
                        ValueKind::Value
                    };
                    let value = if del {
                        Vec::new()
                    } else {
                        vec![seq as u8; rnd(300) as usize]
                    };
                    seq += 1;
                    (seq - 1, kind, key, value)
                })
                .collect()
        })
        .collect()
}

fn insert(list: &PmSkiplist, b: &Batch) -> bool {
    let entries: Vec<PslEntry<'_>> = b
        .iter()
        .map(|(s, k, key, v)| (*s, *k, &key[..], &v[..]))
        .collect();
    list.insert_batch(&entries).unwrap()
}

/// The sorted (internal key, value) model of the first `k` batches.
fn model(batches: &[Batch], k: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut m: Vec<(Vec<u8>, Vec<u8>)> = batches[..k]
        .iter()
        .flatten()
        .map(|(s, kind, key, v)| (make_internal_key(key, *s, *kind), v.clone()))
        .collect();
    m.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
    m
}

fn scan(list: &PmSkiplist) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut c = PmSkiplistCursor::new(list);
    c.seek_to_first();
    let mut out = Vec::new();
    while c.valid() {
        out.push((c.key().to_vec(), c.value().to_vec()));
        c.next();
    }
    out
}

fn new_list(dev: &SimulatedPmDevice, size: usize) -> PmSkiplist {
    let region = dev.create_region("000005.pmskl", size).unwrap();
    PmSkiplist::create(region, 5).unwrap()
}

#[test]
fn entries_come_back_in_internal_key_order_and_cursors_walk_both_ways() {
    let dev = SimulatedPmDevice::new();
    let list = new_list(&dev, 1 << 20);
    let bs = batches(200, 7);
    for b in &bs {
        assert!(insert(&list, b));
    }
    let want = model(&bs, bs.len());
    assert_eq!(scan(&list), want);
    assert_eq!(list.len(), want.len() as u64);
    check_reverse_scan(&mut PmSkiplistCursor::new(&list), &want);
    check_random_walk(&mut PmSkiplistIter::new(Arc::new(list)), &want, 3, 2000);
}

#[test]
fn a_full_list_refuses_a_batch_without_writing_it() {
    let dev = SimulatedPmDevice::new();
    let list = new_list(&dev, 4096);
    let big = vec![(1, ValueKind::Value, b"k".to_vec(), vec![1u8; 5000])];
    assert!(!insert(&list, &big));
    assert!(list.is_empty() && scan(&list).is_empty());
}

#[test]
fn recovery_after_a_clean_stop_rebuilds_every_level() {
    let dev = SimulatedPmDevice::new();
    let list = new_list(&dev, 1 << 20);
    let bs = batches(150, 11);
    bs.iter().for_each(|b| assert!(insert(&list, b)));
    drop(list);
    let region = dev.crash_process().open_region("000005.pmskl").unwrap();
    let list = PmSkiplist::recover(region, 5).unwrap();
    let want = model(&bs, bs.len());
    assert_eq!(scan(&list), want);
    check_random_walk(&mut PmSkiplistCursor::new(&list), &want, 5, 1000);
    assert_eq!(
        list.max_sequence(),
        bs.iter().flatten().map(|e| e.0).max().unwrap()
    );
}

/// A power loss at every persist point (images taken right after a persist and right before
/// the next starts, with random subsets of unpersisted lines): recovery finds the first k whole
/// batches, k at least every batch whose commit was persisted, and a second crash during or
/// after recovery finds the same.
#[test]
fn a_crash_at_every_persist_point_keeps_whole_committed_batches() {
    let bs = batches(40, 3);
    let reference = SimulatedPmDevice::new();
    let mut committed_at = Vec::new();
    let list = new_list(&reference, 1 << 18);
    for b in &bs {
        insert(&list, b);
        committed_at.push(reference.persist_count());
    }
    let total = reference.persist_count();
    let mut outcomes = std::collections::BTreeSet::new();
    for n in 0..=total {
        for seed in 0..4 {
            let dev = SimulatedPmDevice::new();
            match seed % 2 {
                0 => dev.freeze_after_persists(n, seed),
                _ => dev.freeze_before_persist(n, seed),
            }
            let list = new_list(&dev, 1 << 18);
            bs.iter().for_each(|b| {
                insert(&list, b);
            });
            let ctx = format!("crash at persist {n}, seed {seed}");
            if n < CREATION_PERSISTS {
                // The creation was not persisted (head, then header): the list was never
                // formatted, and its owner treats a blank header as an interrupted creation.
                continue;
            }
            if let Some(k) = recover_crashed(&dev.crash(seed), &bs, &ctx) {
                let durable = committed_at.iter().filter(|&&c| c <= n).count();
                assert!(k >= durable, "{ctx}: {k} batches, {durable} were committed");
                outcomes.insert(k);
            }
        }
    }
    assert!(
        outcomes.len() > 10 && outcomes.contains(&bs.len()),
        "{outcomes:?}"
    );
}

/// Persists of a list's creation: its head node, then its header.
const CREATION_PERSISTS: u64 = 2;

/// Recovers the crashed region; the number of whole batches it holds. Checks a second crash
/// after recovery recovers the same.
fn recover_crashed(dev: &Arc<SimulatedPmDevice>, bs: &[Batch], ctx: &str) -> Option<usize> {
    let region = dev.open_region("000005.pmskl").unwrap();
    let list = PmSkiplist::recover(region, 5).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    let got = scan(&list);
    let k = (0..=bs.len())
        .find(|&k| model(bs, k) == got)
        .unwrap_or_else(|| panic!("{ctx}: not a whole number of batches"));
    let again = dev.crash(7).open_region("000005.pmskl").unwrap();
    let again = PmSkiplist::recover(again, 5).unwrap();
    assert_eq!(
        scan(&again),
        got,
        "{ctx}: recovery is not stable under a second crash"
    );
    Some(k)
}

#[test]
fn damage_to_a_linked_node_or_the_header_is_refused_with_its_offset() {
    let dev = SimulatedPmDevice::new();
    let list = new_list(&dev, 1 << 16);
    let bs = batches(20, 5);
    bs.iter().for_each(|b| assert!(insert(&list, b)));
    let first = Node::at(&**list.region(), HEAD).next(0);
    let key_byte =
        first as usize + NodeLayout::new(Node::at(&**list.region(), first).height(), 0, 0).key_at;
    drop(list);
    let image = dev.crash_process();
    image.corrupt("000005.pmskl", key_byte, b"X").unwrap();
    let err = PmSkiplist::recover(image.open_region("000005.pmskl").unwrap(), 5).unwrap_err();
    assert!(
        err.is_corruption() && err.to_string().contains("checksum"),
        "{err}"
    );
    assert!(
        matches!(err, Error::Corruption { offset, .. } if offset == first),
        "{err}"
    );
    let image = dev.crash_process();
    image.corrupt("000005.pmskl", 9, &[0xee]).unwrap();
    let err = PmSkiplist::recover(image.open_region("000005.pmskl").unwrap(), 5).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    let image = dev.crash_process();
    let err = PmSkiplist::recover(image.open_region("000005.pmskl").unwrap(), 6).unwrap_err();
    assert!(err.to_string().contains("expected 6"), "{err}");
}
