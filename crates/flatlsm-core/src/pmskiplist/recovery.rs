//! Recovery of a persistent skiplist (the rule is in `mod.rs`).

use super::node::{Node, NodeLayout};
use super::{persist, PmSkiplist, COMMITTED_AT, HEAD, MAX_HEIGHT, PSL_HEADER_LEN, PSL_MAGIC};
use crate::error::{Error, Result};
use crate::pm::PmRegion;
use crate::types::{compare_internal_keys, crc32c, parse_internal_key};
use std::cmp::Ordering as KeyOrder;
use std::sync::Arc;

/// What [`PmSkiplist::verify`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PslCheck {
    /// Committed entries on the bottom list.
    pub entries: u64,
    /// Entries of a batch a crash interrupted (recovery unlinks them).
    pub uncommitted: u64,
}

impl PmSkiplist {
    /// Verifies list `number` in `region` as [`PmSkiplist::recover`] would, writing nothing
    /// (for offline checks): the header, every node on the bottom list and the key order.
    pub fn verify(region: &dyn PmRegion, number: u64) -> Result<PslCheck> {
        let committed = check_header(region, number)?;
        let walk = walk(region, committed, false)?;
        Ok(PslCheck {
            entries: walk.kept.len() as u64,
            uncommitted: walk.dropped,
        })
    }

    /// Opens list `number` in `region` after a restart or crash: checks the header, walks and
    /// verifies the bottom list, unlinks the nodes of an uncommitted batch (persisting each
    /// unlink) and rebuilds the upper levels.
    pub fn recover(region: Arc<dyn PmRegion>, number: u64) -> Result<PmSkiplist> {
        let committed = check_header(&*region, number)?;
        let walk = walk(&*region, committed, true)?;
        rebuild_upper_levels(&*region, &walk.kept);
        let list = Self::assemble(
            region,
            number,
            walk.tail,
            walk.kept.len() as u64,
            (walk.min_seq, walk.max_seq),
        );
        Ok(list)
    }
}

fn corrupt(region: &dyn PmRegion, offset: u64, detail: impl Into<String>) -> Error {
    Error::corruption(region.path(), offset, detail)
}

/// The committed sequence, once magic, crc, number and capacity check.
fn check_header(region: &dyn PmRegion, number: u64) -> Result<u64> {
    if region.len() < PSL_HEADER_LEN + NodeLayout::new(MAX_HEIGHT, 0, 0).len {
        return Err(corrupt(region, 0, "too short for a PM skiplist"));
    }
    let h = region.read(0, PSL_HEADER_LEN);
    let word = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().expect("8 bytes"));
    if !header_checks(h) {
        return Err(corrupt(
            region,
            0,
            "not a PM skiplist header (magic FLSMPSL1, crc)",
        ));
    }
    if word(8) != number || word(16) != region.len() as u64 {
        let detail = format!(
            "header names list {} of {} bytes, expected {number} of {}",
            word(8),
            word(16),
            region.len()
        );
        return Err(corrupt(region, 8, detail));
    }
    Ok(region.load_u64(COMMITTED_AT))
}

/// True if the header bytes `h` (at least [`PSL_HEADER_LEN`]) carry the magic and their crc.
pub(super) fn header_checks(h: &[u8]) -> bool {
    let crc = u32::from_le_bytes(h[32..36].try_into().expect("4 bytes"));
    &h[..8] == PSL_MAGIC && crc32c(&h[..24]) == crc
}

/// What the walk of the bottom list found.
struct Walk {
    /// Committed nodes in key order.
    kept: Vec<u64>,
    /// Uncommitted nodes met (unlinked when repairing).
    dropped: u64,
    /// End of the furthest node met (allocation continues there).
    tail: u64,
    min_seq: u64,
    max_seq: u64,
}

/// Walks the bottom list, verifying each node; with `repair`, unlinks uncommitted ones.
fn walk(region: &dyn PmRegion, committed: u64, repair: bool) -> Result<Walk> {
    let cap = region.len() as u64;
    let head_len = NodeLayout::new(MAX_HEIGHT, 0, 0).len as u64;
    let mut out = Walk {
        kept: Vec::new(),
        dropped: 0,
        tail: HEAD + head_len,
        min_seq: u64::MAX,
        max_seq: 0,
    };
    let (mut pred, mut prev_key): (u64, Option<&[u8]>) = (HEAD, None);
    let mut at = Node::at(region, HEAD).next(0);
    while at != 0 {
        let node = verified(region, at, cap, head_len)?;
        if prev_key.is_some_and(|p| compare_internal_keys(p, node.key()) != KeyOrder::Less) {
            return Err(corrupt(
                region,
                at,
                "node out of key order in the bottom list",
            ));
        }
        prev_key = Some(node.key());
        let len = node.checked_len(cap).expect("verified") as u64;
        out.tail = out.tail.max(at + len);
        let seq = parse_internal_key(node.key()).map_or(0, |p| p.seq);
        let next = node.next(0);
        if seq > committed {
            out.dropped += 1;
            if repair {
                Node::at(region, pred).set_next(0, next);
                persist(region, pred as usize, 8)?;
            }
        } else {
            out.kept.push(at);
            out.max_seq = out.max_seq.max(seq);
            out.min_seq = out.min_seq.min(seq);
            pred = at;
        }
        at = next;
        if out.kept.len() as u64 > cap / 32 {
            return Err(corrupt(region, at, "the bottom list loops"));
        }
    }
    Ok(out)
}

/// The node at `at` if it lies in the region after the head, is aligned and checks.
fn verified(region: &dyn PmRegion, at: u64, cap: u64, head_len: u64) -> Result<Node<'_>> {
    // `at` is a link read from the region: any u64 (`at + 24` could overflow).
    if !at.is_multiple_of(8) || at < HEAD + head_len || at > cap.saturating_sub(24) {
        return Err(corrupt(region, at, "link to a node outside the region"));
    }
    let node = Node::at(region, at);
    if node.checked_len(cap).is_none() || parse_internal_key(node.key()).is_none() {
        return Err(corrupt(region, at, "node header out of range"));
    }
    if !node.crc_ok() {
        return Err(corrupt(region, at, "node checksum mismatch"));
    }
    Ok(node)
}

/// Relinks every level above 0 through the kept nodes, in key order.
fn rebuild_upper_levels(region: &dyn PmRegion, kept: &[u64]) {
    let mut last = [HEAD; MAX_HEIGHT];
    for &at in kept {
        let node = Node::at(region, at);
        for (level, l) in last.iter_mut().enumerate().take(node.height()).skip(1) {
            Node::at(region, *l).set_next(level, at);
            *l = at;
        }
    }
    for (level, &l) in last.iter().enumerate().skip(1) {
        let node = Node::at(region, l);
        // The head has every level whatever its height word says (that word is never checked:
        // a damaged one must not leave stale links to follow).
        if l == HEAD || level < node.height() {
            node.set_next(level, 0);
        }
    }
}
