//! Scenarios of the point index: on its own over a fake node store, and inside the skiplist.

use super::*;
use crate::pmtable::index::{ArenaIndex, NodeInfo};
use crate::pmtable::log::EntryOffset;
use std::sync::Arc;

/// Nodes as (key, trailer) pairs; node `n` is entry `n - 1`.
struct FakeNodes(Vec<(Vec<u8>, u64)>);

impl Nodes for FakeNodes {
    fn holds(&self, node: NodeRef, key: &[u8]) -> bool {
        self.0[node as usize - 1].0 == key
    }
    fn newer(&self, a: NodeRef, b: NodeRef) -> bool {
        self.0[a as usize - 1].1 > self.0[b as usize - 1].1
    }
}

fn record_all(points: &PointIndex, nodes: &FakeNodes) {
    for (i, (key, _)) in nodes.0.iter().enumerate() {
        points.record(nodes, key, key_hash(key), i as NodeRef + 1);
    }
}

#[test]
fn every_key_finds_its_newest_version_across_many_doublings() {
    let mut entries = Vec::new();
    for round in 0..3u64 {
        for k in 0..20_000u64 {
            entries.push((format!("key{k:08}").into_bytes(), round * 100_000 + k));
        }
    }
    let nodes = FakeNodes(entries);
    let points = PointIndex::default();
    record_all(&points, &nodes);
    for k in 0..20_000u64 {
        let key = format!("key{k:08}");
        let newest = 2 * 20_000 + k + 1;
        assert_eq!(
            points.find(&nodes, key.as_bytes(), key_hash(key.as_bytes())),
            Point::Newest(newest)
        );
    }
    let missing = b"key99999999";
    assert_eq!(
        points.find(&nodes, missing, key_hash(missing)),
        Point::Absent
    );
    assert!(
        points.memory_bytes() <= 4 * 8 * 2 * 32_768,
        "{}",
        points.memory_bytes()
    );
}

#[test]
fn an_older_version_recorded_after_a_newer_one_does_not_replace_it() {
    let nodes = FakeNodes(vec![(b"k".to_vec(), 9 << 8), (b"k".to_vec(), 3 << 8)]);
    let points = PointIndex::default();
    record_all(&points, &nodes);
    assert_eq!(points.find(&nodes, b"k", key_hash(b"k")), Point::Newest(1));
}

#[test]
fn a_node_it_cannot_record_turns_misses_into_unknown_not_absent() {
    let nodes = FakeNodes(vec![(b"a".to_vec(), 1)]);
    let points = PointIndex::default();
    points.record(&nodes, b"b", key_hash(b"b"), 1 << 40);
    assert_eq!(points.find(&nodes, b"zz", key_hash(b"zz")), Point::Unknown);
}

/// A reader running beside the writer finds every key whose insert returned before it looked,
/// while the table doubles underneath it.
#[test]
fn readers_find_every_inserted_key_while_the_table_grows() {
    let index = Arc::new(ArenaIndex::new(64 << 20));
    let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let reader = {
        let (index, done) = (index.clone(), done.clone());
        std::thread::spawn(move || {
            let mut checked = 0;
            while done.load(Acquire) < 50_000 {
                let upto = done.load(Acquire);
                for k in (0..upto).step_by(97) {
                    let key = format!("user{k:07}");
                    assert!(
                        matches!(index.newest(key.as_bytes()), Point::Newest(_)),
                        "{key}"
                    );
                    checked += 1;
                }
            }
            checked
        })
    };
    for k in 0..50_000u64 {
        let key = format!("user{k:07}");
        let info = NodeInfo {
            trailer: (k + 1) << 8 | 1,
            offset: EntryOffset::restore(8),
            value_len: 1,
        };
        index.insert(key.as_bytes(), info).unwrap();
        done.store(k as usize + 1, Release);
    }
    assert!(reader.join().unwrap() > 0);
    assert_eq!(index.newest(b"user9999999"), Point::Absent);
    assert!(
        index.point_index_bytes() < 4 << 20,
        "{}",
        index.point_index_bytes()
    );
}
