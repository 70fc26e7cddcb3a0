//! A persistent skiplist in one PM region: nodes and data in PM, each insert made durable by
//! the 8-byte atomic link order of SLM-DB's Algorithm 1, the upper levels rebuilt at recovery
//! from the persisted bottom list. NoveLSM's PM memtable and SLM-DB's MemTable are this
//! structure; it knows nothing of either.
//!
//! Layout (little-endian, every offset 8-aligned; docs/pm-skiplist-format.md):
//! - header, bytes 0..64: magic `FLSMPSL1`, number (u64), capacity (u64), `committed_seq`
//!   (u64), crc32c of bytes 0..24 (u32);
//! - head node at 64, of [`MAX_HEIGHT`]; nodes after it, bump-allocated in arrival order:
//!   `next0` (u64: offset of the next node in key order, 0 = end), `height` (u32), `crc`
//!   (u32: crc32c of bytes 8..12 and 16.. of the node, i.e. height, lengths, key and value),
//!   `key_len` (u32), `value_len` (u32), `height - 1` upper links (u64, volatile), the internal
//!   key (user key + 8-byte trailer), the value, zero padding to 8 bytes.
//!
//! Persist order of one insert (Algorithm 1): the node is written whole — its `next0` already
//! set to its predecessor's successor — and persisted; then the predecessor's `next0` is stored
//! (one atomic 8-byte store) and persisted. A batch ends by storing and persisting
//! `committed_seq` = its last sequence. Upper links are stored after the bottom link and never
//! persisted.
//!
//! Persist order of the creation: the head node is written and persisted, then the header
//! (the header is the commit: a header that checks implies a persisted head). A region whose
//! header does not check and whose head links no node was never formatted: its creation was
//! interrupted ([`PmSkiplist::creation_interrupted`]); the caller decides what that means (a write buffer whose
//! manifest record was still in flight is removed).
//!
//! Recovery rule ([`PmSkiplist::recover`]): the header must check (magic, crc, number), else
//! `Corruption`. The bottom list is walked from the head: every node on it was persisted before
//! it was linked, so a node failing its crc, lying outside the region, or out of key order is
//! `Corruption` naming the region and offset. Nodes with a sequence above `committed_seq` belong
//! to a batch a crash interrupted: they are unlinked (each unlink persisted, so a crash during
//! recovery redoes it). The upper levels are then rebuilt (all of the head's, whatever its
//! unchecked height word says). A node written but never linked is unreachable and ignored.
//!
//! Concurrency: one writer (the caller serializes inserts); readers never lock. A node is
//! reachable only after its bytes are written (the link store is a release, loads acquire), and
//! nodes are never removed while the list is shared (recovery runs before any reader).

mod iter;
mod node;
#[cfg(test)]
mod tests;

pub use iter::{PmSkiplistCursor, PmSkiplistIter};
pub use recovery::PslCheck;

use crate::error::{Error, Result};
use crate::pm::PmRegion;
use crate::types::{compare_internal_keys, crc32c, ValueKind};
use node::{Node, NodeLayout};
use parking_lot::Mutex;
use std::cmp::Ordering as KeyOrder;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// First bytes of a persistent skiplist region.
pub const PSL_MAGIC: &[u8; 8] = b"FLSMPSL1";
/// Bytes of the header.
pub const PSL_HEADER_LEN: usize = 64;
/// Highest node (the head's height).
pub const MAX_HEIGHT: usize = 12;
/// Offset of the head node.
const HEAD: u64 = PSL_HEADER_LEN as u64;
/// Offset of `committed_seq` in the header.
const COMMITTED_AT: usize = 24;

/// One entry of a batch: sequence, kind, user key, value.
pub type PslEntry<'a> = (u64, ValueKind, &'a [u8], &'a [u8]);

/// A persistent skiplist over one PM region.
pub struct PmSkiplist {
    region: Arc<dyn PmRegion>,
    number: u64,
    /// End of the allocated nodes (the writer's bump pointer).
    tail: AtomicU64,
    /// Entries linked and committed.
    entries: AtomicU64,
    /// Largest committed sequence.
    max_seq: AtomicU64,
    /// Smallest sequence of a committed entry (`u64::MAX` if none).
    min_seq: AtomicU64,
    /// The writer's height generator (xorshift state).
    rng: Mutex<u64>,
}

impl PmSkiplist {
    /// Formats `region` as an empty list numbered `number`: header and head persisted.
    pub fn create(region: Arc<dyn PmRegion>, number: u64) -> Result<PmSkiplist> {
        let head_len = NodeLayout::new(MAX_HEIGHT, 0, 0).len;
        if region.len() < PSL_HEADER_LEN + head_len {
            return Err(Error::InvalidArgument(format!(
                "{}: a PM skiplist needs at least {} bytes",
                region.path().display(),
                PSL_HEADER_LEN + head_len
            )));
        }
        let mut header = [0u8; PSL_HEADER_LEN];
        header[..8].copy_from_slice(PSL_MAGIC);
        header[8..16].copy_from_slice(&number.to_le_bytes());
        header[16..24].copy_from_slice(&(region.len() as u64).to_le_bytes());
        let crc = crc32c(&header[..24]);
        header[32..36].copy_from_slice(&crc.to_le_bytes());
        Node::write_head(&*region, HEAD);
        persist(&*region, PSL_HEADER_LEN, head_len)?;
        region.write(0, &header);
        persist(&*region, 0, PSL_HEADER_LEN)?;
        Ok(Self::assemble(
            region,
            number,
            HEAD + head_len as u64,
            0,
            (u64::MAX, 0),
        ))
    }

    /// True if `region` is a list whose creation a crash interrupted: its header does not
    /// check (blank, or torn: the header is persisted last) and its head links no node. A list
    /// that took writes had its header persisted before the first and links them from its
    /// head, so damage to it is never taken for this. Reads only.
    pub fn creation_interrupted(region: &dyn PmRegion) -> bool {
        if region.len() < PSL_HEADER_LEN + 8 {
            return false; // not a region this module created: recovery reports it
        }
        let checks = recovery::header_checks(region.read(0, PSL_HEADER_LEN));
        let head_next = region.read(HEAD as usize, 8);
        !checks && head_next.iter().all(|&b| b == 0)
    }

    fn assemble(
        region: Arc<dyn PmRegion>,
        number: u64,
        tail: u64,
        entries: u64,
        (min_seq, max_seq): (u64, u64),
    ) -> Self {
        PmSkiplist {
            region,
            number,
            tail: AtomicU64::new(tail),
            entries: AtomicU64::new(entries),
            min_seq: AtomicU64::new(min_seq),
            max_seq: AtomicU64::new(max_seq),
            rng: Mutex::new(0x9e37_79b9_7f4a_7c15 ^ number),
        }
    }

    /// The list's number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The region it lives in.
    pub fn region(&self) -> &Arc<dyn PmRegion> {
        &self.region
    }

    /// Bytes allocated (header and head included): the fill, in the unit of the capacity.
    pub fn used_bytes(&self) -> u64 {
        self.tail.load(Ordering::Acquire)
    }

    /// Committed entries.
    pub fn len(&self) -> u64 {
        self.entries.load(Ordering::Acquire)
    }

    /// True if no entry is committed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Smallest committed sequence (`u64::MAX` if none).
    pub fn min_sequence(&self) -> u64 {
        self.min_seq.load(Ordering::Acquire)
    }

    /// Largest committed sequence (0 if none).
    pub fn max_sequence(&self) -> u64 {
        self.max_seq.load(Ordering::Acquire)
    }

    /// Region bytes an entry takes at most (a node at full height).
    pub fn entry_bytes(key_len: usize, value_len: usize) -> u64 {
        NodeLayout::new(MAX_HEIGHT, key_len + 8, value_len).len as u64
    }

    /// Bytes an empty list in a region of `region_len` bytes has for entries (header and head
    /// node taken off): a batch whose [`PmSkiplist::entry_bytes`] sum exceeds it never fits.
    pub fn room_when_empty(region_len: usize) -> u64 {
        let head_len = NodeLayout::new(MAX_HEIGHT, 0, 0).len;
        region_len.saturating_sub(PSL_HEADER_LEN + head_len) as u64
    }

    /// True if `bytes` more (a sum of [`PmSkiplist::entry_bytes`]) fit in the space left.
    pub fn has_room_for(&self, bytes: u64) -> bool {
        self.used_bytes().saturating_add(bytes) <= self.region.len() as u64
    }

    /// True if `entries` fit in the space left (counting every node at full height).
    pub fn has_room(&self, entries: &[PslEntry<'_>]) -> bool {
        let bytes = entries
            .iter()
            .map(|e| Self::entry_bytes(e.2.len(), e.3.len()));
        self.has_room_for(bytes.sum())
    }

    /// Inserts a batch, each entry with Algorithm 1's persist order, then commits it; `Ok(false)`
    /// (nothing written) if it does not fit. The caller serializes inserts.
    pub fn insert_batch(&self, entries: &[PslEntry<'_>]) -> Result<bool> {
        Ok(self.insert_batch_split(entries, false)?.0)
    }

    /// [`PmSkiplist::insert_batch`], also returning how long writing and persisting the nodes
    /// (key and value) took; the rest — finding the predecessors, linking, the commit — is
    /// the index's time. Two clock reads per entry, so only where asked.
    pub fn insert_batch_timed(&self, entries: &[PslEntry<'_>]) -> Result<(bool, Duration)> {
        self.insert_batch_split(entries, true)
    }

    fn insert_batch_split(
        &self,
        entries: &[PslEntry<'_>],
        timed: bool,
    ) -> Result<(bool, Duration)> {
        if !self.has_room(entries) {
            return Ok((false, Duration::ZERO));
        }
        let mut data = timed.then_some(Duration::ZERO);
        for e in entries {
            self.insert(e, data.as_mut())?;
        }
        self.commit_batch(entries)?;
        Ok((true, data.unwrap_or_default()))
    }

    /// Records the batch's last sequence as committed and counts its entries.
    fn commit_batch(&self, entries: &[PslEntry<'_>]) -> Result<()> {
        let Some(last) = entries.last() else {
            return Ok(());
        };
        self.region.store_u64(COMMITTED_AT, last.0);
        persist(&*self.region, COMMITTED_AT, 8)?;
        self.entries
            .fetch_add(entries.len() as u64, Ordering::AcqRel);
        self.max_seq.fetch_max(last.0, Ordering::AcqRel);
        self.min_seq.fetch_min(entries[0].0, Ordering::AcqRel);
        Ok(())
    }

    /// Inserts one entry; the node's write and persist are added to `data` if given.
    fn insert(
        &self,
        &(seq, kind, key, value): &PslEntry<'_>,
        data: Option<&mut Duration>,
    ) -> Result<()> {
        let height = self.random_height();
        let layout = NodeLayout::new(height, key.len() + 8, value.len());
        let at = self.tail.load(Ordering::Acquire);
        let mut ikey = Vec::with_capacity(key.len() + 8);
        crate::types::append_internal_key(&mut ikey, key, seq, kind);
        let preds = self.find_preds(&ikey);
        let started = data.is_some().then(Instant::now);
        let node = self.write_node(at, &layout, &ikey, value, preds[0])?;
        if let (Some(d), Some(t)) = (data, started) {
            *d += t.elapsed();
        }
        self.link(node, at, height, &preds)
    }

    /// Writes the node at `at` whole, its `next0` set to `pred`'s successor, and persists it.
    fn write_node(
        &self,
        at: u64,
        layout: &NodeLayout,
        ikey: &[u8],
        value: &[u8],
        pred: u64,
    ) -> Result<Node<'_>> {
        let node = Node::write(&*self.region, at, layout, ikey, value);
        node.set_next(0, self.node(pred).next(0));
        persist(&*self.region, at as usize, layout.len)?;
        self.tail.store(at + layout.len as u64, Ordering::Release);
        Ok(node)
    }

    /// Links the written node at `at` after its predecessors: the bottom link persisted, the
    /// upper ones not (rebuilt at recovery).
    fn link(
        &self,
        node: Node<'_>,
        at: u64,
        height: usize,
        preds: &[u64; MAX_HEIGHT],
    ) -> Result<()> {
        self.node(preds[0]).set_next(0, at);
        persist(&*self.region, preds[0] as usize, 8)?;
        for (level, &p) in preds.iter().enumerate().take(height).skip(1) {
            node.set_next(level, self.node(p).next(level));
            self.node(p).set_next(level, at);
        }
        Ok(())
    }

    /// The last node before `ikey` at every level (the head where none is).
    fn find_preds(&self, ikey: &[u8]) -> [u64; MAX_HEIGHT] {
        let mut preds = [HEAD; MAX_HEIGHT];
        let mut x = HEAD;
        for level in (0..MAX_HEIGHT).rev() {
            loop {
                let next = self.node(x).next(level);
                if next == 0 || self.compare(next, ikey) != KeyOrder::Less {
                    break;
                }
                x = next;
            }
            preds[level] = x;
        }
        preds
    }

    fn random_height(&self) -> usize {
        let mut s = self.rng.lock();
        let mut height = 1;
        while height < MAX_HEIGHT {
            *s ^= *s << 13;
            *s ^= *s >> 7;
            *s ^= *s << 17;
            if *s & 3 != 0 {
                break;
            }
            height += 1;
        }
        height
    }

    fn node(&self, at: u64) -> Node<'_> {
        Node::at(&*self.region, at)
    }

    fn compare(&self, at: u64, ikey: &[u8]) -> KeyOrder {
        compare_internal_keys(self.node(at).key(), ikey)
    }

    /// The first node whose internal key is >= `ikey` (0 if none).
    pub(crate) fn seek_node(&self, ikey: &[u8]) -> u64 {
        self.node(self.find_preds(ikey)[0]).next(0)
    }
}

impl std::fmt::Debug for PmSkiplist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PmSkiplist")
            .field("region", &self.region.path())
            .field("entries", &self.len())
            .field("used_bytes", &self.used_bytes())
            .finish()
    }
}

/// Persists `[offset, offset + len)`, naming the region on failure.
fn persist(region: &dyn PmRegion, offset: usize, len: usize) -> Result<()> {
    region
        .persist(offset, len)
        .map_err(|e| Error::io(format!("persisting {}", region.path().display()), e))
}

mod recovery;
