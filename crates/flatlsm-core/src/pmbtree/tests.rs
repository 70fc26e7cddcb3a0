//! The persistent B+-tree against a `BTreeMap` model (inserts, updates, deletes, splits, leaf
//! unlinks, scans), a crash at every persist point (each operation all or nothing, recovery
//! stable under a second crash), and damage refused with the region and offset.

use super::*;
use crate::pm::{PmDevice, SimulatedPmDevice};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const NAME: &str = "index.pmbt";

fn new_tree(dev: &SimulatedPmDevice, nodes: usize) -> PmBtree {
    let region = dev.create_region(NAME, nodes * NODE_SIZE).unwrap();
    PmBtree::create(region).unwrap()
}

fn reopen(dev: &SimulatedPmDevice) -> Result<PmBtree> {
    PmBtree::recover(dev.open_region(NAME).unwrap())
}

/// One operation: upsert (`Some`) or remove (`None`).
type Op = (Vec<u8>, Option<Location>);

/// Keys from a space of `space`: most of 0 to 32 bytes (inline), some up to 300 bytes and a
/// few over 4 KiB (out of line, in key pages of every class and in runs of nodes).
fn key(rng: &mut StdRng, space: u32) -> Vec<u8> {
    let n = rng.gen_range(0..space);
    let mut k = format!("k{:06}", n * 7919 % space).into_bytes();
    let len = match n % 10 {
        0..=6 => n as usize % (MAX_INLINE_KEY + 1),
        7 | 8 => 33 + n as usize % 268,
        _ => 4000 + n as usize % 5000,
    };
    k.resize(len, b'.');
    k
}

fn ops(seed: u64, n: usize, space: u32) -> Vec<Op> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let k = key(&mut rng, space);
            let loc = Location {
                file: i as u64,
                offset: rng.gen(),
                size: rng.gen(),
            };
            (k, rng.gen_bool(0.75).then_some(loc))
        })
        .collect()
}

fn apply(tree: &PmBtree, model: &mut BTreeMap<Vec<u8>, Location>, (k, v): &Op) {
    match v {
        Some(loc) => assert_eq!(tree.upsert(k, *loc).unwrap(), model.insert(k.clone(), *loc)),
        None => assert_eq!(tree.remove(k).unwrap(), model.remove(k)),
    }
}

fn model_after(ops: &[Op]) -> Vec<(Vec<u8>, Location)> {
    let mut m = BTreeMap::new();
    for (k, v) in ops {
        match v {
            Some(loc) => m.insert(k.clone(), *loc),
            None => m.remove(k),
        };
    }
    m.into_iter().collect()
}

#[test]
fn the_tree_matches_a_btreemap_through_splits_unlinks_and_reopens() {
    let dev = SimulatedPmDevice::new();
    let tree = new_tree(&dev, 2048);
    let mut model = BTreeMap::new();
    for (i, op) in ops(1, 20_000, 3000).iter().enumerate() {
        apply(&tree, &mut model, op);
        if i % 5000 == 4999 {
            let want: Vec<_> = model.clone().into_iter().collect();
            assert_eq!(tree.scan().unwrap(), want);
            let again = reopen(&dev.crash_process()).unwrap();
            assert_eq!(again.scan().unwrap(), want, "after a reopen at op {i}");
        }
    }
    assert!(tree.leaves() > 20, "{} leaves: no splits", tree.leaves());
    for (k, v) in &model {
        assert_eq!(tree.get(k).unwrap(), Some(*v));
    }
    assert_eq!(tree.get(b"absent").unwrap(), None);
    // Deleting everything unlinks every leaf but the head, and frees their nodes.
    for k in model.keys() {
        tree.remove(k).unwrap();
    }
    assert_eq!((tree.leaves(), tree.scan().unwrap().len()), (1, 0));
    assert_eq!(reopen(&dev.crash_process()).unwrap().leaves(), 1);
}

#[test]
fn a_scan_resumes_from_any_key() {
    let dev = SimulatedPmDevice::new();
    let tree = new_tree(&dev, 512);
    let ops = ops(2, 3000, 800);
    let mut model = BTreeMap::new();
    ops.iter().for_each(|op| apply(&tree, &mut model, op));
    for from in [&b""[..], b"k0004", b"k000400", b"zz"] {
        let first = tree.entries_after(Bound::Excluded(from)).unwrap().entries;
        let want = model
            .range::<[u8], _>((Bound::Excluded(from), Bound::Unbounded))
            .next();
        let got = first.first().map(|(k, v)| (k.clone(), *v));
        // The first entry after `from` is in `from`'s leaf or (if that leaf has none) later.
        if let Some(got) = got {
            assert_eq!(Some((&got.0, &got.1)), want);
        }
    }
}

/// A crash at every persist point of a run with splits, updates, deletes and unlinks:
/// recovery finds the state after exactly the operations completed or one more, and a crash
/// right after recovery (its repairs half persisted) recovers the same.
#[test]
fn a_crash_at_every_persist_point_loses_no_completed_operation() {
    // Then every key removed, so emptied leaves are unlinked too.
    let mut ops = ops(3, 700, 300);
    let left: Vec<Vec<u8>> = model_after(&ops).into_iter().map(|(k, _)| k).collect();
    ops.extend(left.into_iter().rev().map(|k| (k, None)));
    let reference = SimulatedPmDevice::new();
    let tree = new_tree(&reference, 160);
    let mut done_at = Vec::new();
    let mut model = BTreeMap::new();
    for op in &ops {
        apply(&tree, &mut model, op);
        done_at.push(reference.persist_count());
    }
    let created = 2; // the header and the head leaf: before them the tree was never named
    let total = reference.persist_count();
    for n in created..=total {
        let seed = n % 5;
        let dev = SimulatedPmDevice::new();
        match n % 2 {
            0 => dev.freeze_after_persists(n, seed),
            _ => dev.freeze_before_persist(n, seed),
        }
        let tree = new_tree(&dev, 160);
        let mut model = BTreeMap::new();
        ops.iter().for_each(|op| apply(&tree, &mut model, op));
        let ctx = format!("crash at persist {n}");
        let crashed = dev.crash(seed);
        let got = reopen(&crashed)
            .unwrap_or_else(|e| panic!("{ctx}: {e}"))
            .scan()
            .unwrap();
        let done = done_at.iter().filter(|&&c| c <= n).count();
        let ok = (done..=(done + 1).min(ops.len())).any(|j| model_after(&ops[..j]) == got);
        assert!(
            ok,
            "{ctx}: not the state after {done} or {} operations",
            done + 1
        );
        let again = reopen(&crashed.crash(seed + 1)).unwrap().scan().unwrap();
        assert_eq!(
            again, got,
            "{ctx}: recovery is not stable under a second crash"
        );
    }
}

#[test]
fn damage_to_the_header_a_slot_or_the_list_is_refused_with_its_offset() {
    let dev = SimulatedPmDevice::new();
    let tree = new_tree(&dev, 16);
    for (i, k) in [b"a", b"b", b"c"].iter().enumerate() {
        let loc = Location {
            file: i as u64,
            ..Location::default()
        };
        tree.upsert(*k, loc).unwrap();
    }
    let damaged = |at: usize, bytes: &[u8]| {
        let image = dev.crash_process();
        image.corrupt(NAME, at, bytes).unwrap();
        reopen(&image).err().expect("damage is refused")
    };
    let e = damaged(3, b"X");
    assert!(e.is_corruption() && e.to_string().contains("header"), "{e}");
    let slot0 = NODE_SIZE + 64;
    let e = damaged(slot0 + 40, b"\xff");
    assert!(e.to_string().contains("checksum"), "{e}");
    assert!(e.to_string().contains(&format!("offset {slot0}")), "{e}");
    let e = damaged(NODE_SIZE + 8, &7u64.to_le_bytes());
    assert!(e.to_string().contains("not a leaf"), "{e}");
    // A long key's record: its checksum names the slot pointing at it.
    tree.upsert(&[b'd'; 100], Location::default()).unwrap();
    let record = 2 * NODE_SIZE; // the first key page
    let e = damaged(record + 20, b"\x00");
    assert!(e.to_string().contains("key record at"), "{e}");
}

/// Long keys share key pages by size class and come back after removals and a reopen; their
/// records are reused once freed, so a tree that keeps few keys does not fill up.
#[test]
fn long_keys_live_out_of_line_and_their_records_are_reused() {
    let dev = SimulatedPmDevice::new();
    let tree = new_tree(&dev, 40);
    for round in 0..50u32 {
        for i in 0..20u32 {
            let k = format!("{i:04}-{}", "l".repeat(40 + (i as usize * 37) % 400));
            let k = if i == 19 { k.repeat(20) } else { k }; // ~9 KiB: a run of nodes
            tree.upsert(
                k.as_bytes(),
                Location {
                    file: u64::from(round),
                    ..Location::default()
                },
            )
            .unwrap();
            if round % 2 == 1 {
                assert!(tree.remove(k.as_bytes()).unwrap().is_some());
            }
        }
    }
    let got = reopen(&dev.crash_process()).unwrap().scan().unwrap();
    assert!(got.is_empty(), "every key was removed in the last round");
    assert_eq!(tree.scan().unwrap().len(), 0);
}

#[test]
fn a_key_over_64_kib_and_a_full_region_are_clear_errors() {
    let dev = SimulatedPmDevice::new();
    let tree = new_tree(&dev, 3);
    let e = tree
        .upsert(&vec![b'x'; MAX_KEY + 1], Location::default())
        .unwrap_err();
    assert!(e.to_string().contains("at most 65536 bytes"), "{e}");
    let mut full = None;
    for i in 0..1000u32 {
        if let Err(e) = tree.upsert(format!("{i:08}").as_bytes(), Location::default()) {
            full = Some(e);
            break;
        }
    }
    let e = full.expect("three nodes fill up");
    assert!(e.to_string().contains("is full"), "{e}");
    assert!(tree.scan().unwrap().len() >= SLOTS);
}

/// A conditional replace moves a key only while the tree still holds it where the caller
/// expects (a compaction never overwrites what a newer flush indexed).
#[test]
fn replace_if_moves_a_key_only_from_the_expected_location() {
    let dev = SimulatedPmDevice::new();
    let tree = new_tree(&dev, 8);
    let at = |file| Location {
        file,
        ..Location::default()
    };
    tree.upsert(b"k", at(1)).unwrap();
    assert_eq!(tree.replace_if(b"k", at(3), |l| l.file == 2).unwrap(), None);
    assert_eq!(
        tree.replace_if(b"k", at(3), |l| l.file == 1).unwrap(),
        Some(at(1))
    );
    assert_eq!(tree.get(b"k").unwrap(), Some(at(3)));
    assert_eq!(tree.replace_if(b"absent", at(3), |_| true).unwrap(), None);
    assert_eq!(tree.get(b"absent").unwrap(), None);
}

/// Upserts and removes move the change count a page carries; a conditional replace (a key
/// moved onto a copy of its entry) and a remove of an absent key do not.
#[test]
fn pages_carry_the_change_count_of_upserts_and_removes_only() {
    let dev = SimulatedPmDevice::new();
    let tree = new_tree(&dev, 8);
    let at = |file| Location {
        file,
        offset: 0,
        size: 1,
    };
    let count = |t: &PmBtree| t.entries_after(Bound::Unbounded).unwrap().changes;
    tree.upsert(b"a", at(1)).unwrap();
    tree.upsert(b"b", at(1)).unwrap();
    assert_eq!((count(&tree), tree.changes()), (2, 2));
    tree.replace_if(b"a", at(2), |l| l.file == 1).unwrap();
    tree.remove(b"absent").unwrap();
    assert_eq!(count(&tree), 2);
    tree.remove(b"b").unwrap();
    assert_eq!(count(&tree), 3);
}
