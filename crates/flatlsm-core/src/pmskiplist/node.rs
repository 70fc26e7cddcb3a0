//! One node of the persistent skiplist (layout in `mod.rs`): typed access to its words and
//! bytes in the region.

use crate::pm::PmRegion;
use crate::types::crc32c_extend;

/// Offset of the first upper link in a node.
const LINKS_AT: usize = 24;

/// Sizes and offsets of a node of `height` holding an internal key and a value.
pub(crate) struct NodeLayout {
    pub height: usize,
    pub key_len: usize,
    pub value_len: usize,
    /// Offset of the key from the node's start.
    pub key_at: usize,
    /// Whole node, padded to 8 bytes.
    pub len: usize,
}

impl NodeLayout {
    pub fn new(height: usize, key_len: usize, value_len: usize) -> Self {
        let key_at = LINKS_AT + 8 * (height - 1);
        let len = (key_at + key_len + value_len).next_multiple_of(8);
        NodeLayout {
            height,
            key_len,
            value_len,
            key_at,
            len,
        }
    }
}

/// A node at an offset of a region.
#[derive(Clone, Copy)]
pub(crate) struct Node<'a> {
    region: &'a dyn PmRegion,
    at: u64,
}

impl<'a> Node<'a> {
    pub fn at(region: &'a dyn PmRegion, at: u64) -> Self {
        Node { region, at }
    }

    /// Writes a node's fields, key and value at `at` (links zero) and returns it.
    pub fn write(
        region: &'a dyn PmRegion,
        at: u64,
        layout: &NodeLayout,
        ikey: &[u8],
        value: &[u8],
    ) -> Self {
        let mut fixed = [0u8; 16];
        fixed[0..4].copy_from_slice(&(layout.height as u32).to_le_bytes());
        fixed[8..12].copy_from_slice(&(layout.key_len as u32).to_le_bytes());
        fixed[12..16].copy_from_slice(&(layout.value_len as u32).to_le_bytes());
        let crc = node_crc(&fixed, ikey, value);
        fixed[4..8].copy_from_slice(&crc.to_le_bytes());
        let start = at as usize;
        region.write(start, &[0u8; 8]);
        region.write(start + 8, &fixed);
        region.write(start + LINKS_AT, &vec![0u8; 8 * (layout.height - 1)]);
        region.write(start + layout.key_at, ikey);
        region.write(start + layout.key_at + ikey.len(), value);
        let pad = layout.len - (layout.key_at + ikey.len() + value.len());
        region.write(start + layout.len - pad, &[0u8; 8][..pad]);
        Node { region, at }
    }

    /// Writes the head node (full height, no key) at `at`.
    pub fn write_head(region: &'a dyn PmRegion, at: u64) {
        let layout = NodeLayout::new(super::MAX_HEIGHT, 0, 0);
        Self::write(region, at, &layout, &[], &[]);
    }

    fn word(&self, offset: usize) -> u32 {
        let b = self.region.read(self.at as usize + offset, 4);
        u32::from_le_bytes(b.try_into().expect("4 bytes"))
    }

    pub fn height(&self) -> usize {
        self.word(8) as usize
    }

    fn stored_crc(&self) -> u32 {
        self.word(12)
    }

    fn key_len(&self) -> usize {
        self.word(16) as usize
    }

    fn value_len(&self) -> usize {
        self.word(20) as usize
    }

    fn link_at(&self, level: usize) -> usize {
        match level {
            0 => self.at as usize,
            l => self.at as usize + LINKS_AT + 8 * (l - 1),
        }
    }

    /// The next node at `level` (< height), 0 = none.
    pub fn next(&self, level: usize) -> u64 {
        self.region.load_u64(self.link_at(level))
    }

    /// Stores the link at `level` (not persisted).
    pub fn set_next(&self, level: usize, to: u64) {
        self.region.store_u64(self.link_at(level), to)
    }

    fn key_at(&self) -> usize {
        self.at as usize + LINKS_AT + 8 * (self.height() - 1)
    }

    /// The node's internal key.
    pub fn key(&self) -> &'a [u8] {
        self.region.read(self.key_at(), self.key_len())
    }

    /// The node's value.
    pub fn value(&self) -> &'a [u8] {
        self.region
            .read(self.key_at() + self.key_len(), self.value_len())
    }

    /// The node's length, if its fixed fields are plausible for a region of `cap` bytes.
    pub fn checked_len(&self, cap: u64) -> Option<usize> {
        let (h, k, v) = (self.height(), self.key_len(), self.value_len());
        if h == 0 || h > super::MAX_HEIGHT || k < 8 {
            return None;
        }
        let len = NodeLayout::new(h, k, v).len;
        (self.at.checked_add(len as u64)? <= cap).then_some(len)
    }

    /// True if the stored crc matches the node's fields, key and value.
    pub fn crc_ok(&self) -> bool {
        let fixed_at = self.at as usize + 8;
        let mut fixed = [0u8; 16];
        fixed.copy_from_slice(self.region.read(fixed_at, 16));
        fixed[4..8].fill(0);
        node_crc(&fixed, self.key(), self.value()) == self.stored_crc()
    }
}

/// crc32c of the fixed fields (crc zeroed), key and value.
fn node_crc(fixed: &[u8; 16], ikey: &[u8], value: &[u8]) -> u32 {
    let head = [&fixed[0..4], &fixed[8..16]].concat();
    crc32c_extend(crc32c_extend(crc32c_extend(0, &head), ikey), value)
}
