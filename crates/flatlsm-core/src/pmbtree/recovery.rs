//! [`PmBtree::recover`]: checks the header, walks the leaf list, repairs what an interrupted
//! split or delete left (rules in `mod.rs`) and rebuilds the DRAM index.

use super::keys::Nodes;
use super::leaf::{Leaf, SlotEntry, LEAF_MAGIC};
use super::{node_count, Index, PmBtree, BTREE_MAGIC, HEAD, NODE_SIZE};
use crate::error::{Error, Result};
use crate::pm::PmRegion;
use crate::types::crc32c;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// One leaf of the list as recovery found it.
struct Found {
    node: u32,
    entries: Vec<SlotEntry>,
}

impl PmBtree {
    /// Opens the tree `region` holds, repairing an interrupted split or delete (persisted).
    pub fn recover(region: Arc<dyn PmRegion>) -> Result<PmBtree> {
        let nodes = node_count(&*region)?;
        check_header(&*region)?;
        let mut list = walk(&*region, nodes)?;
        drop_split_copies(&*region, &mut list)?;
        check_order(&*region, &list)?;
        unlink_empty(&*region, &mut list)?;
        let index = rebuild(&*region, &list, nodes)?;
        Ok(PmBtree::with_index(region, index))
    }
}

fn corrupt(region: &dyn PmRegion, at: usize, what: String) -> Error {
    Error::corruption(region.path(), at as u64, what)
}

fn check_header(region: &dyn PmRegion) -> Result<()> {
    let h = region.read(0, 28);
    let word = |at: usize| u64::from_le_bytes(h[at..at + 8].try_into().unwrap());
    let crc = u32::from_le_bytes(h[24..28].try_into().unwrap());
    let ok = &h[..8] == BTREE_MAGIC
        && word(8) == region.len() as u64
        && word(16) == NODE_SIZE as u64
        && crc32c(&h[..24]) == crc;
    match ok {
        true => Ok(()),
        false => Err(corrupt(
            region,
            0,
            format!(
                "not a B+-tree header of a {}-byte region with {NODE_SIZE}-byte nodes",
                region.len()
            ),
        )),
    }
}

/// The leaves from the head, each checked (magic, slots, next inside the region, no loop).
fn walk(region: &dyn PmRegion, nodes: u32) -> Result<Vec<Found>> {
    let (mut list, mut seen) = (Vec::new(), BTreeSet::new());
    let mut node = HEAD;
    loop {
        let leaf = Leaf::new(region, node);
        let at = node as usize * NODE_SIZE;
        if leaf.magic() != LEAF_MAGIC {
            return Err(corrupt(
                region,
                at,
                format!("B+-tree node {node} is not a leaf"),
            ));
        }
        let entries = leaf.entries()?;
        check_unique(region, at, &entries)?;
        list.push(Found { node, entries });
        let next = leaf.next();
        if next == 0 {
            return Ok(list);
        }
        if next >= nodes || next == HEAD || !seen.insert(next) {
            let what = format!("B+-tree leaf {node}: next leaf {next} is outside the list");
            return Err(corrupt(region, at + 8, what));
        }
        node = next;
    }
}

/// No key is valid twice in one leaf (an update flips both bits in one store).
fn check_unique(region: &dyn PmRegion, at: usize, entries: &[SlotEntry]) -> Result<()> {
    let keys: BTreeSet<&[u8]> = entries.iter().map(|e| e.key.as_slice()).collect();
    match keys.len() == entries.len() {
        true => Ok(()),
        false => Err(corrupt(
            region,
            at + 16,
            "a key is valid twice in one B+-tree leaf".into(),
        )),
    }
}

/// Clears from each leaf the keys at or above its successor's smallest key: the copies a split
/// a crash interrupted left behind (persisted).
fn drop_split_copies(region: &dyn PmRegion, list: &mut [Found]) -> Result<()> {
    for i in 0..list.len().saturating_sub(1) {
        let Some(min) = list[i + 1].entries.iter().map(|e| e.key.clone()).min() else {
            continue;
        };
        let copies: u64 = list[i]
            .entries
            .iter()
            .filter(|e| e.key >= min)
            .fold(0, |b, e| b | 1 << e.slot);
        if copies != 0 {
            let leaf = Leaf::new(region, list[i].node);
            leaf.set_bitmap(leaf.bitmap() & !copies)?;
            list[i].entries.retain(|e| e.key < min);
        }
    }
    Ok(())
}

/// Every key of a leaf orders before every key of the next non-empty leaf, and only the head
/// holds the empty key (its fence: the key routes there).
fn check_order(region: &dyn PmRegion, list: &[Found]) -> Result<()> {
    let mut last: Option<&[u8]> = None;
    for (i, f) in list.iter().enumerate() {
        let min = f.entries.iter().map(|e| e.key.as_slice()).min();
        let after_last = match (last, min) {
            (Some(prev), Some(min)) => min > prev,
            (None, Some(min)) => i == 0 || !min.is_empty(),
            (_, None) => true,
        };
        if !after_last {
            let at = f.node as usize * NODE_SIZE;
            let what = format!("B+-tree leaf {} holds keys out of order", f.node);
            return Err(corrupt(region, at, what));
        }
        last = f.entries.iter().map(|e| e.key.as_slice()).max().or(last);
    }
    Ok(())
}

/// Unlinks every empty leaf but the head (each unlink persisted).
fn unlink_empty(region: &dyn PmRegion, list: &mut Vec<Found>) -> Result<()> {
    let mut i = 1;
    while i < list.len() {
        if !list[i].entries.is_empty() {
            i += 1;
            continue;
        }
        let next = Leaf::new(region, list[i].node).next();
        Leaf::new(region, list[i - 1].node).set_next(next)?;
        list.remove(i);
    }
    Ok(())
}

/// The DRAM index: each leaf by its smallest key (the head by the empty key), the records the
/// slots point at, the rest free; a record claimed twice or inside a leaf is `Corruption`.
fn rebuild(region: &dyn PmRegion, list: &[Found], nodes: u32) -> Result<Index> {
    let mut fences = BTreeMap::new();
    for (i, f) in list.iter().enumerate() {
        let min = f.entries.iter().map(|e| e.key.clone()).min();
        let fence = if i == 0 {
            Vec::new()
        } else {
            min.unwrap_or_default()
        };
        fences.insert(fence, f.node);
    }
    let leaves: BTreeSet<u32> = list.iter().map(|f| f.node).collect();
    let mut nodes = Nodes::new((HEAD + 1..nodes).filter(|n| !leaves.contains(n)).collect());
    for f in list {
        for e in &f.entries {
            let Some(r) = e.record else { continue };
            if !nodes.claim_record(r, e.key.len()) {
                let what = format!(
                    "B+-tree leaf {}: key record at {r} overlaps another",
                    f.node
                );
                return Err(corrupt(region, f.node as usize * NODE_SIZE, what));
            }
        }
    }
    Ok(Index { fences, nodes })
}
