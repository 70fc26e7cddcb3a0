//! Tests of the arena skiplist: order and searches against a `BTreeMap` model (keys chosen to
//! hit the word-packing edge cases), growth over many chunks, and readers racing the writer.

use super::*;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The model's key: user key ascending, then trailer descending.
type ModelKey = (Vec<u8>, std::cmp::Reverse<u64>);

fn info(trailer: u64) -> NodeInfo {
    NodeInfo {
        trailer,
        offset: EntryOffset::restore(trailer * 3),
        value_len: (trailer % 1000) as usize,
    }
}

fn key_of(index: &ArenaIndex, node: NodeRef) -> ModelKey {
    let mut k = Vec::new();
    index.append_user_key(node, &mut k);
    (k, std::cmp::Reverse(index.info(node).trailer))
}

/// Short keys over a tiny alphabet with zeros, so prefixes, zero bytes and word boundaries meet.
fn random_key(rng: &mut impl Rng) -> Vec<u8> {
    let len = match rng.gen_range(0..10) {
        0 => rng.gen_range(0..3),
        1 => rng.gen_range(30..70),
        _ => rng.gen_range(5..17),
    };
    (0..len)
        .map(|_| [0u8, 1, b'a', 0xff][rng.gen_range(0..4)])
        .collect()
}

fn build(n: usize, seed: u64) -> (ArenaIndex, BTreeMap<ModelKey, NodeInfo>) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let index = ArenaIndex::linking_eagerly(64 << 20);
    let mut model = BTreeMap::new();
    for trailer in 1..=n as u64 {
        let key = random_key(&mut rng);
        index.insert(&key, info(trailer)).unwrap();
        model.insert((key, std::cmp::Reverse(trailer)), info(trailer));
    }
    (index, model)
}

#[test]
fn iteration_matches_a_sorted_model() {
    let (index, model) = build(5000, 1);
    let got: Vec<ModelKey> = index.iter().map(|n| key_of(&index, n)).collect();
    let want: Vec<ModelKey> = model.keys().cloned().collect();
    assert_eq!(got, want);
    assert_eq!(index.len(), 5000);
    let infos: Vec<NodeInfo> = index.iter().map(|n| index.info(n)).collect();
    assert_eq!(infos, model.values().copied().collect::<Vec<_>>());
}

#[test]
fn searches_match_the_model_in_both_directions() {
    let (index, model) = build(3000, 2);
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    for _ in 0..3000 {
        let key = random_key(&mut rng);
        let trailer = rng.gen_range(0..3200);
        let probe = (key.clone(), std::cmp::Reverse(trailer));
        let ge = model.range(probe.clone()..).next().map(|(k, _)| k.clone());
        let gt = model
            .range((
                std::ops::Bound::Excluded(probe.clone()),
                std::ops::Bound::Unbounded,
            ))
            .next()
            .map(|(k, _)| k.clone());
        let lt = model
            .range(..probe.clone())
            .next_back()
            .map(|(k, _)| k.clone());
        let le = model
            .range(..=probe.clone())
            .next_back()
            .map(|(k, _)| k.clone());
        let k = |n: Option<NodeRef>| n.map(|n| key_of(&index, n));
        assert_eq!(k(index.lower_bound(&key, trailer)), ge);
        assert_eq!(k(index.after(&key, trailer)), gt);
        assert_eq!(k(index.before_key(&key, trailer)), lt);
        assert_eq!(k(index.at_or_before(&key, trailer)), le);
    }
}

/// Inserts over several sorted batches (`links.rs`), with trailers out of order and walks in
/// the middle of a batch: every walk sees every node inserted before it, in order.
#[test]
fn nodes_linked_in_sorted_batches_and_by_walks_between_them_keep_the_model_order() {
    use super::super::links::LINK_BATCH;
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    let n = 3 * LINK_BATCH + 123;
    let mut trailers: Vec<u64> = (1..=n as u64).collect();
    rand::seq::SliceRandom::shuffle(&mut trailers[..], &mut rng);
    let index = ArenaIndex::linking_eagerly(64 << 20);
    let mut model = BTreeMap::new();
    for (i, &trailer) in trailers.iter().enumerate() {
        let key = random_key(&mut rng);
        index.insert(&key, info(trailer)).unwrap();
        model.insert((key.clone(), std::cmp::Reverse(trailer)), info(trailer));
        if i % 7919 == 0 {
            let found = index.lower_bound(&key, trailer).map(|n| key_of(&index, n));
            assert_eq!(found, Some((key, std::cmp::Reverse(trailer))));
        }
    }
    let got: Vec<ModelKey> = index.iter().map(|n| key_of(&index, n)).collect();
    assert_eq!(got, model.keys().cloned().collect::<Vec<_>>());
}

/// Point writes alone leave every node pending (up to `LAZY_LINKS`), each found through the
/// point index; the first walk links them all in model order.
#[test]
fn point_writes_leave_nodes_pending_until_a_walk_links_them_all() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(12);
    let index = ArenaIndex::new(64 << 20);
    let mut model = BTreeMap::new();
    for trailer in 1..=40_000u64 {
        let key = random_key(&mut rng);
        index.insert(&key, info(trailer)).unwrap();
        model.insert((key, std::cmp::Reverse(trailer)), info(trailer));
    }
    assert_eq!(index.pending_links(), 40_000, "no insert linked");
    for ((key, _), _) in model.iter().step_by(97) {
        assert!(
            matches!(index.newest(key), Point::Newest(_)),
            "point index finds {key:?}"
        );
    }
    let got: Vec<ModelKey> = index.iter().map(|n| key_of(&index, n)).collect();
    assert_eq!(got, model.keys().cloned().collect::<Vec<_>>());
    assert_eq!(index.pending_links(), 0);
}

/// Without walks in between, batches grow to a quarter of the index (here up to 50,000
/// nodes, past `LINK_BATCH`), and every node is found where the model puts it.
#[test]
fn batches_grown_with_the_index_link_every_node_in_model_order() {
    use super::super::links::{batch_size, LINK_BATCH, MAX_LINK_BATCH};
    assert_eq!(batch_size(1000), LINK_BATCH);
    assert_eq!(batch_size(200_000), 50_000);
    assert_eq!(batch_size(10_000_000), MAX_LINK_BATCH);
    let (index, model) = build(200_000, 11);
    let got: Vec<ModelKey> = index.iter().map(|n| key_of(&index, n)).collect();
    assert_eq!(got, model.keys().cloned().collect::<Vec<_>>());
}

#[test]
fn prev_walks_back_through_every_node() {
    let (index, model) = build(2000, 4);
    let mut back = Vec::new();
    let mut at = index.last();
    while let Some(n) = at {
        back.push(key_of(&index, n));
        at = index.prev(n);
    }
    back.reverse();
    assert_eq!(back, model.keys().cloned().collect::<Vec<_>>());
}

#[test]
fn user_key_comparison_is_bytewise_across_word_boundaries() {
    let index = ArenaIndex::new(1 << 20);
    let keys: [&[u8]; 6] = [b"", b"\0", b"abcdefgh", b"abcdefgh\0", b"abcdefg\xff", b"b"];
    for (i, k) in keys.iter().enumerate() {
        index.insert(k, info(i as u64 + 1)).unwrap();
    }
    for n in index.iter() {
        for k in keys {
            let mut mine = Vec::new();
            index.append_user_key(n, &mut mine);
            assert_eq!(
                index.compare_user_key(n, k),
                mine.as_slice().cmp(k),
                "{mine:?} {k:?}"
            );
        }
    }
}

#[test]
fn an_index_grows_over_many_chunks_and_keeps_long_keys() {
    let index = ArenaIndex::new(256 << 20);
    let long = vec![7u8; 64 << 10];
    for i in 0..200u64 {
        let mut key = long.clone();
        key.extend_from_slice(&i.to_be_bytes());
        index.insert(&key, info(i + 1)).unwrap();
    }
    assert!(index.memory_bytes() > 4 * CHUNK_WORDS * 8);
    let mut k = Vec::new();
    index.append_user_key(index.last().unwrap(), &mut k);
    assert_eq!(&k[..long.len()], &long[..]);
    assert_eq!(&k[long.len()..], &199u64.to_be_bytes());
}

#[test]
fn an_index_refuses_an_insert_past_its_arena_instead_of_panicking() {
    let index = ArenaIndex::new(0);
    let key = vec![1u8; 60 << 10];
    let mut err = None;
    for i in 0..64u64 {
        if let Err(e) = index.insert(&key, info(i + 1)) {
            err = Some(e);
            break;
        }
    }
    assert!(err.unwrap().to_string().contains("arena full"));
}

#[test]
fn readers_racing_the_writer_always_see_a_sorted_prefix_of_the_inserts() {
    let index = Arc::new(ArenaIndex::new(64 << 20));
    let writer = {
        let index = index.clone();
        std::thread::spawn(move || {
            for i in 0..20_000u64 {
                let key = (i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_be_bytes();
                index.insert(&key, info(i + 1)).unwrap();
            }
        })
    };
    while !writer.is_finished() {
        let seen: Vec<ModelKey> = index.iter().map(|n| key_of(&index, n)).collect();
        assert!(seen.windows(2).all(|w| w[0] < w[1]));
    }
    writer.join().unwrap();
    assert_eq!(index.iter().count(), 20_000);
}

#[test]
fn an_insert_reports_a_newer_and_the_replaced_version_of_its_key() {
    let index = ArenaIndex::new(1 << 20);
    let trailers = |v: Versions| {
        let t = |n: NodeRef| (n != 0).then(|| index.info(n).trailer);
        (t(v.newer), t(v.replaced))
    };
    let b5 = index.insert(b"b", info(5)).unwrap();
    assert_eq!(trailers(b5), (None, None));
    let b7 = index.insert(b"b", info(7)).unwrap();
    assert_eq!(trailers(b7), (None, Some(5)));
    let b3 = index.insert(b"b", info(3)).unwrap();
    assert_eq!(trailers(b3), (Some(7), None));
    let a1 = index.insert(b"a", info(1)).unwrap();
    assert_eq!(trailers(a1), (None, None));
}
