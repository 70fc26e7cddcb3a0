//! [`PointIndex`]: a hash table from a PMTable's user keys to the index node of each key's
//! newest version, so a point read that finds its key in a PMTable costs one or two cache
//! misses instead of a skiplist search (about twenty on a table of a million entries: a fifth
//! of a pipelined INCR's time and a tenth of a GET's were `ArenaIndex::search`).
//!
//! Open addressing with linear probing over slots of `hash << 32 | node` (0: empty), where
//! `hash` is the low 32 bits of the key's hash: they pick the key's first slot in any table
//! size, and the bits above that act as a tag, so a probe past another key rarely reads that
//! key's node. The table doubles when half full: the writer copies every slot into a table
//! twice the size (from the slots alone, reading no node) and only then publishes it as the
//! active one. Old tables stay allocated (readers
//! may still be probing them) until the index is dropped: at most as much again as the
//! active table.
//!
//! Invariants:
//! - One writer at a time (the `ArenaIndex` writer); readers never lock.
//! - Each key has at most one slot in the active table, holding its newest node (a node is
//!   only replaced by a newer one: higher trailer).
//! - A node is recorded after its words are written and before its write's sequence is
//!   published, so a reader that pinned sequence S finds every version at or below S in the
//!   table it loads (the active one was published before any such version was recorded after
//!   it). A version above S may have replaced the one the reader needs: the caller then
//!   searches the skiplist (which links every recorded node before it walks).
//! - If a node cannot be recorded (every table size used up, or a node address past 32 bits),
//!   `complete` turns false for good before the node's sequence is published, and a miss means
//!   "search the skiplist", never "absent".
//!
//! All of it is safe Rust: every shared word is an atomic.

use super::index::NodeRef;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::OnceLock;

/// Slots of the first table.
const FIRST_SLOTS: usize = 1 << 10;
/// Tables the index may grow through (the last one has `FIRST_SLOTS << (TABLES - 1)` slots).
const TABLES: usize = 20;
/// Bits of a slot holding the node address (the rest hold the key's hash).
const NODE_BITS: u32 = 32;
const NODE_MASK: u64 = (1 << NODE_BITS) - 1;

/// What the index knows of a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    /// The node of the key's newest version.
    Newest(NodeRef),
    /// The table holds no version of the key.
    Absent,
    /// The index cannot tell: search the skiplist.
    Unknown,
}

/// How the point index reads the nodes it points to (the skiplist implements it).
pub trait Nodes {
    /// True if `node` holds a version of `key`.
    fn holds(&self, node: NodeRef, key: &[u8]) -> bool;
    /// True if `a` is a newer version of its key than `b`.
    fn newer(&self, a: NodeRef, b: NodeRef) -> bool;
}

/// The hash the index places a key by.
pub fn key_hash(key: &[u8]) -> u64 {
    crate::sst::blocked_bloom::hash64(key)
}

/// The hash table (module documentation).
pub struct PointIndex {
    tables: Box<[OnceLock<Box<[AtomicU64]>>]>,
    /// Index in `tables` of the active table.
    active: AtomicUsize,
    /// Keys in the active table (writer only; atomic to keep the type `Sync`).
    used: AtomicUsize,
    /// False once a node could not be recorded.
    complete: AtomicBool,
}

impl Default for PointIndex {
    fn default() -> Self {
        let tables: Box<[OnceLock<Box<[AtomicU64]>>]> =
            (0..TABLES).map(|_| OnceLock::new()).collect();
        let _ = tables[0].set(empty_table(FIRST_SLOTS));
        PointIndex {
            tables,
            active: AtomicUsize::new(0),
            used: AtomicUsize::new(0),
            complete: AtomicBool::new(true),
        }
    }
}

fn empty_table(slots: usize) -> Box<[AtomicU64]> {
    (0..slots).map(|_| AtomicU64::new(0)).collect()
}

/// The bits of a key's hash a slot keeps.
fn tag_of(hash: u64) -> u64 {
    hash & NODE_MASK
}

fn node_of(slot: u64) -> NodeRef {
    slot & NODE_MASK
}

/// The slot of `table` holding a node of `key` (hash `hash`), or the empty slot where one
/// would go; `None` if every slot holds another key.
fn probe(table: &[AtomicU64], nodes: &impl Nodes, key: &[u8], hash: u64) -> Option<(usize, u64)> {
    let mask = table.len().checked_sub(1)?;
    let start = tag_of(hash) as usize & mask;
    (0..table.len())
        .map(|step| (start + step) & mask)
        .find_map(|i| {
            let slot = table[i].load(Acquire);
            let hit =
                slot == 0 || (slot >> NODE_BITS == tag_of(hash) && nodes.holds(node_of(slot), key));
            hit.then_some((i, slot))
        })
}

/// Puts `slot` into the first empty slot of `table` from its key's start.
fn place(table: &[AtomicU64], slot: u64) {
    let mask = table.len() - 1;
    let start = (slot >> NODE_BITS) as usize & mask;
    let free = (0..table.len())
        .map(|step| (start + step) & mask)
        .find(|&i| table[i].load(Relaxed) == 0);
    if let Some(i) = free {
        table[i].store(slot, Relaxed);
    }
}

impl PointIndex {
    /// The active table.
    fn table(&self) -> &[AtomicU64] {
        let active = self.active.load(Acquire);
        self.tables[active].get().map_or(&[], |t| &t[..])
    }

    /// Bytes of the tables allocated so far.
    pub fn memory_bytes(&self) -> usize {
        let tables = self.tables.iter().filter_map(|t| t.get());
        tables.map(|t| t.len() * 8).sum()
    }

    /// What the index knows of `key` (hash `hash`).
    pub fn find(&self, nodes: &impl Nodes, key: &[u8], hash: u64) -> Point {
        let complete = self.complete.load(Acquire);
        match probe(self.table(), nodes, key, hash) {
            Some((_, slot)) if slot != 0 => Point::Newest(node_of(slot)),
            _ if complete => Point::Absent,
            _ => Point::Unknown,
        }
    }

    /// Writer only: records `node`, a version of `key` (hash `hash`), as its newest unless the
    /// index holds a newer one. Returns what the index knew of `key` before: its newest node
    /// then (which may be newer than `node`), that it had none, or `Unknown` if `node` could
    /// not be recorded (the index is then incomplete for good).
    pub fn record(&self, nodes: &impl Nodes, key: &[u8], hash: u64, node: NodeRef) -> Point {
        let found = (node <= NODE_MASK && self.room_for_one_more())
            .then(|| probe(self.table(), nodes, key, hash))
            .flatten();
        let Some((i, slot)) = found else {
            self.complete.store(false, Release);
            return Point::Unknown;
        };
        if slot != 0 && nodes.newer(node_of(slot), node) {
            return Point::Newest(node_of(slot));
        }
        if slot == 0 {
            self.used.fetch_add(1, Relaxed);
        }
        self.table()[i].store(tag_of(hash) << NODE_BITS | node, Release);
        match slot {
            0 => Point::Absent,
            _ => Point::Newest(node_of(slot)),
        }
    }

    /// Grows the active table if one more key would fill it past half: copies every slot into
    /// a table twice the size, then publishes it. False if no bigger table is left.
    fn room_for_one_more(&self) -> bool {
        let table = self.table();
        if (self.used.load(Relaxed) + 1) * 2 <= table.len() {
            return true;
        }
        let next = self.active.load(Relaxed) + 1;
        let Some(cell) = self.tables.get(next) else {
            return false;
        };
        let bigger = empty_table(table.len() * 2);
        for slot in table.iter().map(|s| s.load(Relaxed)).filter(|&s| s != 0) {
            place(&bigger, slot);
        }
        let _ = cell.set(bigger);
        self.active.store(next, Release);
        true
    }
}

#[cfg(test)]
#[path = "point_index_tests.rs"]
mod tests;
