//! Keys longer than a slot holds ([`MAX_INLINE_KEY`]), stored out of line as records: key length
//! (u32), crc32c of the key (u32), the key. A record lives in a *key page* — a node cut into
//! records of one size class (64, 128, ..., 4096 bytes) — or, for keys over 4088 bytes, at the
//! start of a run of whole nodes. Which records are used is kept in DRAM only and rebuilt at
//! recovery from the slots that point at records, as the free nodes are.
//!
//! Persist order: a record is written and persisted before the slot that points at it; it is
//! freed (in DRAM) only after the bitmap store that retires its last slot is persisted. An update
//! of a key keeps pointing at the key's record.

use super::{MAX_INLINE_KEY, NODE_SIZE};
use crate::error::{Error, Result};
use crate::pm::PmRegion;
use crate::types::crc32c;
use std::collections::{BTreeMap, BTreeSet};

/// Bytes before the key in a record.
pub(super) const RECORD_HEADER: usize = 8;
/// The smallest size class.
const MIN_CLASS: usize = 64;

/// Where records of a key length go: a size class of key pages, or a run of nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Slab(usize),
    Run(u32),
}

fn class_of(key_len: usize) -> Class {
    let size = (RECORD_HEADER + key_len).next_power_of_two().max(MIN_CLASS);
    match size <= NODE_SIZE {
        true => Class::Slab(size),
        false => Class::Run((RECORD_HEADER + key_len).div_ceil(NODE_SIZE) as u32),
    }
}

/// The DRAM state of the key records and of the free nodes they share with leaves.
#[derive(Debug, Default)]
pub(super) struct Nodes {
    /// Nodes neither a leaf nor holding records.
    pub free: BTreeSet<u32>,
    /// Key pages by size class: node → used-record bits.
    slabs: BTreeMap<usize, BTreeMap<u32, u64>>,
}

impl Nodes {
    /// All of `free` free, no key page.
    pub fn new(free: BTreeSet<u32>) -> Self {
        Nodes {
            free,
            slabs: BTreeMap::new(),
        }
    }

    /// A free node for a leaf.
    pub fn take_node(&mut self) -> Option<u32> {
        self.free.pop_first()
    }

    /// Room for a record of a `key_len`-byte key: its byte offset in the region.
    pub fn alloc_record(&mut self, key_len: usize) -> Option<u64> {
        match class_of(key_len) {
            Class::Slab(size) => self.alloc_slab(size),
            Class::Run(n) => self.take_run(n).map(|node| node as u64 * NODE_SIZE as u64),
        }
    }

    fn alloc_slab(&mut self, size: usize) -> Option<u64> {
        let per_page = NODE_SIZE / size;
        let pages = self.slabs.entry(size).or_default();
        let open = pages
            .iter_mut()
            .find(|(_, bits)| bits.count_ones() < per_page as u32);
        let (node, bits) = match open {
            Some((&node, bits)) => (node, bits),
            None => {
                let node = self.free.pop_first()?;
                (node, pages.entry(node).or_insert(0))
            }
        };
        let i = (0..per_page).find(|i| *bits & (1 << i) == 0)?;
        *bits |= 1 << i;
        Some((node as usize * NODE_SIZE + i * size) as u64)
    }

    /// `n` contiguous free nodes: the first of them.
    fn take_run(&mut self, n: u32) -> Option<u32> {
        let start = self
            .free
            .iter()
            .copied()
            .find(|&s| (s..s + n).all(|x| self.free.contains(&x)))?;
        (start..start + n).for_each(|x| {
            self.free.remove(&x);
        });
        Some(start)
    }

    /// Frees the record of a `key_len`-byte key at `offset` (its last slot is retired).
    pub fn free_record(&mut self, offset: u64, key_len: usize) {
        let node = (offset / NODE_SIZE as u64) as u32;
        match class_of(key_len) {
            Class::Run(n) => self.free.extend(node..node + n),
            Class::Slab(size) => {
                let pages = self.slabs.entry(size).or_default();
                let bits = pages.entry(node).or_insert(0);
                *bits &= !(1 << ((offset as usize % NODE_SIZE) / size));
                if *bits == 0 {
                    pages.remove(&node);
                    self.free.insert(node);
                }
            }
        }
    }

    /// Marks the record at `offset` used (recovery); `false` if that contradicts what is
    /// marked already (another class in the node, a record used twice, a node not free).
    pub fn claim_record(&mut self, offset: u64, key_len: usize) -> bool {
        let node = (offset / NODE_SIZE as u64) as u32;
        let within = offset as usize % NODE_SIZE;
        match class_of(key_len) {
            Class::Run(n) => {
                let all_free = within == 0 && (node..node + n).all(|x| self.free.contains(&x));
                all_free && (node..node + n).all(|x| self.free.remove(&x))
            }
            Class::Slab(size) => self.claim_slab(node, within, size),
        }
    }

    fn claim_slab(&mut self, node: u32, within: usize, size: usize) -> bool {
        let other_class = self
            .slabs
            .iter()
            .any(|(&s, p)| s != size && p.contains_key(&node));
        if !within.is_multiple_of(size) || other_class {
            return false;
        }
        let pages = self.slabs.entry(size).or_default();
        if !pages.contains_key(&node) && !self.free.remove(&node) {
            return false;
        }
        let bits = pages.entry(node).or_insert(0);
        let bit = 1u64 << (within / size);
        let fresh = *bits & bit == 0;
        *bits |= bit;
        fresh
    }
}

/// Writes and persists the record of `key` at `offset`.
pub(super) fn write_record(region: &dyn PmRegion, offset: u64, key: &[u8]) -> Result<()> {
    debug_assert!(key.len() > MAX_INLINE_KEY);
    let mut r = Vec::with_capacity(RECORD_HEADER + key.len());
    r.extend_from_slice(&(key.len() as u32).to_le_bytes());
    r.extend_from_slice(&crc32c(key).to_le_bytes());
    r.extend_from_slice(key);
    region.write(offset as usize, &r);
    region
        .persist(offset as usize, r.len())
        .map_err(|e| Error::io(format!("persisting {}", region.path().display()), e))
}

/// The key of the record at `offset`, which must hold `key_len` bytes; `None` if the record
/// lies outside the region or fails its length or checksum.
pub(super) fn read_record(region: &dyn PmRegion, offset: u64, key_len: usize) -> Option<Vec<u8>> {
    let at = usize::try_from(offset).ok()?;
    let end = at.checked_add(RECORD_HEADER + key_len)?;
    if at < NODE_SIZE || end > region.len() {
        return None;
    }
    let r = region.read(at, RECORD_HEADER + key_len);
    let len = u32::from_le_bytes(r[..4].try_into().unwrap()) as usize;
    let crc = u32::from_le_bytes(r[4..8].try_into().unwrap());
    let key = &r[RECORD_HEADER..];
    (len == key_len && crc32c(key) == crc).then(|| key.to_vec())
}
