//! A persistent B+-tree in one PM region: SLM-DB's index from each key to the SST block that
//! holds it (a [`Location`]: file, block offset, block size). Our own design (FPTree-like
//! selective persistence, no code from FAST_FAIR): only the leaves are persistent; the inner
//! levels are a DRAM map from each leaf's lower fence key to the leaf, rebuilt at recovery. It
//! knows nothing of the designs.
//!
//! Layout (little-endian; docs/pm-btree-format.md): the region is an array of
//! [`NODE_SIZE`]-byte nodes.
//! - node 0, the header: magic `FLSMBPT1`, region size (u64), node size (u64), crc32c of bytes
//!   0..24 (u32). Written and persisted at creation, never changed.
//! - node 1 is the head leaf (it is never removed); the other leaves follow from it by their
//!   next words, in key order. A leaf: magic `BPTLEAF1` (u64), next leaf (u64 node index, 0 =
//!   end; one atomic store), slot bitmap (u64: bit s = slot s valid; one atomic store), 40
//!   reserved bytes, then [`SLOTS`] slots of [`SLOT_SIZE`] bytes, unsorted: crc32c of bytes 4..64
//!   (u32), key length (u32), SST file number (u64), block offset (u64), block size (u32), flags
//!   (u32), the key inline (up to [`MAX_INLINE_KEY`] bytes, zero-padded) or, for a longer key
//!   (flag 1), its first 24 bytes and the offset of its record (`keys.rs`). The location object
//!   lives in the slot: an update writes a new slot, so nothing is allocated or reclaimed apart.
//! - key pages: nodes cut into out-of-line key records of one size class, or runs of nodes for
//!   keys over 4 KiB; nodes neither a reachable leaf nor holding a record a valid slot points
//!   at are free (the free list and the record map are DRAM only, rebuilt at recovery).
//!
//! Persist order. Insert: a long key's record is written and persisted, then the slot is
//! written into a clear slot and persisted, then the bitmap
//! with its bit set is stored and persisted. Update: the new version goes into a clear slot
//! (persisted), then one bitmap store sets the new bit and clears the old one (persisted), so a
//! key is never valid twice in a leaf. Delete: the bit is cleared (persisted); a leaf left empty
//! (not the head) is then unlinked by one store of its predecessor's next word (persisted).
//! Split of a full leaf L: a free node N is written whole — its next = L's next, the upper half
//! of L's keys in its slots, their bits set — and persisted; then L's next = N (persisted); then
//! L's bitmap without the moved keys (persisted).
//!
//! Recovery rule ([`PmBtree::recover`]): the header must check, else `Corruption`. The leaves are
//! walked from the head: a leaf without its magic, a next word outside the region or looping, a
//! valid slot failing its crc (or its key record failing its own, or not starting with the key
//! bytes the slot keeps), a key valid twice in one leaf, or leaves out of key order (the empty key
//! outside the head included) is `Corruption` naming the region and offset. A split a crash
//! interrupted after the link leaves the moved keys in both L and N: keys of a leaf at or above its
//! successor's smallest key are such copies and are cleared from it (persisted). Empty leaves other
//! than the head are unlinked (persisted). Each repair is an operation of the forward order, so a
//! crash during recovery is repaired again by the next.
//!
//! Concurrency: one writer at a time and any number of readers, through a reader-writer lock
//! over the DRAM index (a reader must not see a slot reused under it).

mod keys;
mod leaf;
mod recovery;
#[cfg(test)]
mod tests;

use crate::error::{Error, Result};
use crate::pm::PmRegion;
use crate::types::crc32c;
use keys::Nodes;
use leaf::{encode_slot, Leaf};
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// First bytes of a B+-tree region.
pub const BTREE_MAGIC: &[u8; 8] = b"FLSMBPT1";
/// Bytes of a node.
pub const NODE_SIZE: usize = 4096;
/// Bytes of a slot.
pub const SLOT_SIZE: usize = 64;
/// Slots of a leaf.
pub const SLOTS: usize = 63;
/// The longest key a slot holds inline; longer ones are stored out of line (`keys.rs`).
pub const MAX_INLINE_KEY: usize = 32;
/// The longest key the tree holds.
pub const MAX_KEY: usize = 64 << 10;
/// The head leaf's node index.
const HEAD: u32 = 1;

/// Where an SST holds a key (SLM-DB's location object).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Location {
    /// SST file number.
    pub file: u64,
    /// Offset of the data block holding the key.
    pub offset: u64,
    /// Size of that block.
    pub size: u32,
}

/// A leaf's worth of entries in key order, read under one lock.
#[derive(Debug)]
pub struct LeafPage {
    /// The entries, sorted by key.
    pub entries: Vec<(Vec<u8>, Location)>,
    /// The fence of the next leaf (where to go on), `None` at the end.
    pub next: Option<Vec<u8>>,
    /// [`PmBtree::changes`] when the page was read: a scan whose pages all carry the count it
    /// started with saw the tree as it was then.
    pub changes: u64,
}

/// The DRAM part: the leaves by lower fence key, the free nodes and the key records.
#[derive(Debug, Default)]
struct Index {
    /// Lower fence → leaf; the head leaf's fence is the empty key.
    fences: BTreeMap<Vec<u8>, u32>,
    /// Nodes no leaf uses, and the pages of out-of-line keys.
    nodes: Nodes,
}

/// A persistent B+-tree (see the module documentation).
pub struct PmBtree {
    region: Arc<dyn PmRegion>,
    index: RwLock<Index>,
    /// Upserts and removes so far (moved under the writer lock; see [`PmBtree::changes`]).
    changes: AtomicU64,
}

impl PmBtree {
    /// Formats `region` as an empty tree (header and head leaf persisted).
    pub fn create(region: Arc<dyn PmRegion>) -> Result<PmBtree> {
        let nodes = node_count(&*region)?;
        let mut header = Vec::with_capacity(28);
        header.extend_from_slice(BTREE_MAGIC);
        header.extend_from_slice(&(region.len() as u64).to_le_bytes());
        header.extend_from_slice(&(NODE_SIZE as u64).to_le_bytes());
        header.extend_from_slice(&crc32c(&header).to_le_bytes());
        region.write(0, &header);
        region
            .persist(0, header.len())
            .map_err(|e| Error::io(format!("persisting {}", region.path().display()), e))?;
        Leaf::new(&*region, HEAD).init(0, 0, &[])?;
        let index = Index {
            fences: BTreeMap::from([(Vec::new(), HEAD)]),
            nodes: Nodes::new((HEAD + 1..nodes).collect()),
        };
        Ok(PmBtree::with_index(region, index))
    }

    fn with_index(region: Arc<dyn PmRegion>, index: Index) -> PmBtree {
        PmBtree {
            region,
            index: RwLock::new(index),
            changes: AtomicU64::new(0),
        }
    }

    /// How many upserts and removes the tree has taken (since it was opened): a reader that
    /// reads the same count before and with its pages saw no key added, moved or removed.
    /// [`PmBtree::replace_if`] is not counted: callers use it to move a key onto a copy of the
    /// same entry, which changes no answer.
    pub fn changes(&self) -> u64 {
        self.changes.load(Ordering::Acquire)
    }

    /// The location of `key`, if the tree holds it.
    pub fn get(&self, key: &[u8]) -> Result<Option<Location>> {
        let index = self.index.read();
        let leaf = Leaf::new(&*self.region, route(&index, key));
        Ok(leaf.find(key)?.map(|e| e.location))
    }

    /// Maps `key` to `location`; returns the location it replaced, if any.
    pub fn upsert(&self, key: &[u8], location: Location) -> Result<Option<Location>> {
        check_key(key)?;
        let mut index = self.index.write();
        self.changes.fetch_add(1, Ordering::AcqRel);
        self.upsert_locked(&mut index, key, location)
    }

    /// [`PmBtree::upsert`] under the writer lock.
    fn upsert_locked(
        &self,
        index: &mut Index,
        key: &[u8],
        location: Location,
    ) -> Result<Option<Location>> {
        loop {
            let leaf = Leaf::new(&*self.region, route(index, key));
            let old = leaf.find(key)?;
            let Some(slot) = leaf.free_slot() else {
                self.split(index, leaf)?;
                continue;
            };
            // An update keeps the key's record; a new long key gets one.
            let record = match &old {
                Some(e) => e.record,
                None => self.new_record(index, key)?,
            };
            let image = encode_slot(key, location, record);
            let written = leaf.write_slot(slot, &image).and_then(|()| {
                let cleared = old.as_ref().map_or(0, |e| 1u64 << e.slot);
                leaf.set_bitmap((leaf.bitmap() | 1 << slot) & !cleared)
            });
            if let (Err(_), None, Some(r)) = (&written, &old, record) {
                index.nodes.free_record(r, key.len());
            }
            return written.map(|()| old.map(|e| e.location));
        }
    }

    /// Points `key` at `location` only if the tree holds it at a location `still` accepts (one
    /// step under the writer lock, so a concurrent upsert is never overwritten); returns the
    /// location replaced, `None` if nothing was.
    pub fn replace_if(
        &self,
        key: &[u8],
        location: Location,
        still: impl Fn(&Location) -> bool,
    ) -> Result<Option<Location>> {
        let mut index = self.index.write();
        let leaf = Leaf::new(&*self.region, route(&index, key));
        let Some(old) = leaf.find(key)? else {
            return Ok(None);
        };
        if !still(&old.location) {
            return Ok(None);
        }
        self.upsert_locked(&mut index, key, location)
            .map(|_| Some(old.location))
    }

    /// A persisted record of `key` if it is too long for a slot.
    fn new_record(&self, index: &mut Index, key: &[u8]) -> Result<Option<u64>> {
        if key.len() <= MAX_INLINE_KEY {
            return Ok(None);
        }
        let offset = index
            .nodes
            .alloc_record(key.len())
            .ok_or_else(|| self.full())?;
        if let Err(e) = keys::write_record(&*self.region, offset, key) {
            index.nodes.free_record(offset, key.len());
            return Err(e);
        }
        Ok(Some(offset))
    }

    /// Removes `key`; returns its location, if the tree held it.
    pub fn remove(&self, key: &[u8]) -> Result<Option<Location>> {
        self.remove_if(key, |_| true)
    }

    /// Removes `key` only if the tree holds it at a location `still` accepts (one step under
    /// the writer lock, as [`PmBtree::replace_if`]); returns the location removed.
    pub fn remove_if(
        &self,
        key: &[u8],
        still: impl Fn(&Location) -> bool,
    ) -> Result<Option<Location>> {
        let mut index = self.index.write();
        let (fence, node) = route_fence(&index, key);
        let leaf = Leaf::new(&*self.region, node);
        let Some(e) = leaf.find(key)?.filter(|e| still(&e.location)) else {
            return Ok(None);
        };
        self.changes.fetch_add(1, Ordering::AcqRel);
        leaf.set_bitmap(leaf.bitmap() & !(1 << e.slot))?;
        if let Some(r) = e.record {
            index.nodes.free_record(r, e.key.len());
        }
        if leaf.bitmap() == 0 && node != HEAD {
            self.unlink(&mut index, fence)?;
        }
        Ok(Some(e.location))
    }

    /// Up to one leaf's entries with keys in `(from, ..)` (or `[from, ..)`), sorted, and the
    /// fence of the next leaf (where to go on), `None` at the end. Scans call it repeatedly.
    pub fn entries_after(&self, from: Bound<&[u8]>) -> Result<LeafPage> {
        let index = self.index.read();
        let start = match from {
            Bound::Included(k) | Bound::Excluded(k) => k,
            Bound::Unbounded => &[],
        };
        let node = route(&index, start);
        let mut entries = Leaf::new(&*self.region, node).entries()?;
        entries.retain(|e| match from {
            Bound::Included(k) => e.key.as_slice() >= k,
            Bound::Excluded(k) => e.key.as_slice() > k,
            Bound::Unbounded => true,
        });
        entries.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LeafPage {
            entries: entries.into_iter().map(|e| (e.key, e.location)).collect(),
            next: next_fence(&index, start),
            changes: self.changes(),
        })
    }

    /// Every entry in key order (tests and `check`).
    pub fn scan(&self) -> Result<Vec<(Vec<u8>, Location)>> {
        let mut out = Vec::new();
        let mut page = self.entries_after(Bound::Unbounded)?;
        loop {
            out.append(&mut page.entries);
            let Some(fence) = page.next else {
                return Ok(out);
            };
            page = self.entries_after(Bound::Included(&fence))?;
        }
    }

    /// Leaves in use.
    pub fn leaves(&self) -> usize {
        self.index.read().fences.len()
    }

    /// Splits full `leaf`: the upper half of its keys go to a new leaf linked after it.
    fn split(&self, index: &mut Index, leaf: Leaf<'_>) -> Result<()> {
        let mut entries = leaf.entries()?;
        entries.sort_by(|a, b| a.key.cmp(&b.key));
        let moved = &entries[entries.len() / 2..];
        let node = index.nodes.take_node().ok_or_else(|| self.full())?;
        let images: Vec<[u8; SLOT_SIZE]> = moved.iter().map(|e| leaf.slot_image(e.slot)).collect();
        let bits = (1u64 << moved.len()) - 1;
        Leaf::new(&*self.region, node).init(leaf.next(), bits, &images)?;
        leaf.set_next(node)?;
        index.fences.insert(moved[0].key.clone(), node);
        let cleared = moved.iter().fold(0u64, |b, e| b | 1 << e.slot);
        leaf.set_bitmap(leaf.bitmap() & !cleared)
    }

    /// Unlinks the empty leaf whose fence is `fence` (not the head) from its predecessor and
    /// frees it.
    fn unlink(&self, index: &mut Index, fence: Vec<u8>) -> Result<()> {
        let node = index.fences[&fence];
        let prev = *index
            .fences
            .range(..fence.clone())
            .next_back()
            .map(|(_, n)| n)
            .expect("the head precedes every other leaf");
        let next = Leaf::new(&*self.region, node).next();
        Leaf::new(&*self.region, prev).set_next(next)?;
        index.fences.remove(&fence);
        index.nodes.free.insert(node);
        Ok(())
    }

    fn full(&self) -> Error {
        Error::InvalidState(format!(
            "the B+-tree in {} is full ({} bytes): give it a larger region",
            self.region.path().display(),
            self.region.len()
        ))
    }
}

/// The leaf whose key range holds `key`.
fn route(index: &Index, key: &[u8]) -> u32 {
    let mut found = index
        .fences
        .range::<[u8], _>((Bound::Unbounded, Bound::Included(key)));
    found.next_back().map_or(HEAD, |(_, &n)| n)
}

/// The fence and node of the leaf whose key range holds `key`.
fn route_fence(index: &Index, key: &[u8]) -> (Vec<u8>, u32) {
    let mut found = index
        .fences
        .range::<[u8], _>((Bound::Unbounded, Bound::Included(key)));
    let last = found.next_back();
    last.map_or((Vec::new(), HEAD), |(f, &n)| (f.clone(), n))
}

/// The fence of the leaf after the one holding `key`, if any.
fn next_fence(index: &Index, key: &[u8]) -> Option<Vec<u8>> {
    let after = index
        .fences
        .range::<[u8], _>((Bound::Excluded(key), Bound::Unbounded));
    after.map(|(f, _)| f.clone()).next()
}

fn check_key(key: &[u8]) -> Result<()> {
    match key.len() <= MAX_KEY {
        true => Ok(()),
        false => Err(Error::InvalidArgument(format!(
            "a key of {} bytes: the B+-tree holds keys of at most {MAX_KEY} bytes",
            key.len()
        ))),
    }
}

/// Nodes in `region`; at least a header and the head leaf.
fn node_count(region: &dyn PmRegion) -> Result<u32> {
    let nodes = region.len() / NODE_SIZE;
    match (2..=u32::MAX as usize).contains(&nodes) {
        true => Ok(nodes as u32),
        false => Err(Error::InvalidArgument(format!(
            "a B+-tree region of {} bytes: it needs 2 to 2^32 nodes of {NODE_SIZE} bytes",
            region.len()
        ))),
    }
}
