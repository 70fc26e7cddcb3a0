//! One leaf node of the persistent B+-tree, as bytes in the region: its header words (magic,
//! next leaf, slot bitmap) and its 64-byte slots. Layout in `mod.rs`.

use super::keys::read_record;
use super::{Location, MAX_INLINE_KEY, NODE_SIZE, SLOTS, SLOT_SIZE};
use crate::error::{Error, Result};
use crate::pm::PmRegion;
use crate::types::crc32c;

/// The first word of every leaf.
pub(super) const LEAF_MAGIC: u64 = u64::from_le_bytes(*b"BPTLEAF1");
/// Offset of the next-leaf word in a leaf.
const NEXT_AT: usize = 8;
/// Offset of the slot bitmap in a leaf.
const BITMAP_AT: usize = 16;
/// Offset of slot 0 in a leaf.
const SLOTS_AT: usize = 64;

/// A leaf, by node index, over a region.
#[derive(Clone, Copy)]
pub(super) struct Leaf<'a> {
    pub region: &'a dyn PmRegion,
    pub node: u32,
}

/// One valid slot, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct SlotEntry {
    pub slot: usize,
    pub key: Vec<u8>,
    pub location: Location,
    /// The offset of the key's out-of-line record, if it has one.
    pub record: Option<u64>,
}

/// A slot's key: inline, or the length and offset of its out-of-line record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum SlotKey {
    Inline(Vec<u8>),
    Record { len: usize, offset: u64 },
}

impl<'a> Leaf<'a> {
    pub fn new(region: &'a dyn PmRegion, node: u32) -> Self {
        Leaf { region, node }
    }

    fn base(&self) -> usize {
        self.node as usize * NODE_SIZE
    }

    fn slot_at(&self, slot: usize) -> usize {
        self.base() + SLOTS_AT + slot * SLOT_SIZE
    }

    pub fn magic(&self) -> u64 {
        self.region.load_u64(self.base())
    }

    pub fn next(&self) -> u32 {
        self.region.load_u64(self.base() + NEXT_AT) as u32
    }

    pub fn bitmap(&self) -> u64 {
        self.region.load_u64(self.base() + BITMAP_AT)
    }

    /// Stores and persists the next-leaf word (one atomic 8-byte store).
    pub fn set_next(&self, next: u32) -> Result<()> {
        self.store_word(NEXT_AT, u64::from(next))
    }

    /// Stores and persists the bitmap (one atomic 8-byte store).
    pub fn set_bitmap(&self, bitmap: u64) -> Result<()> {
        self.store_word(BITMAP_AT, bitmap)
    }

    fn store_word(&self, at: usize, value: u64) -> Result<()> {
        self.region.store_u64(self.base() + at, value);
        self.persist(at, 8)
    }

    fn persist(&self, at: usize, len: usize) -> Result<()> {
        self.region
            .persist(self.base() + at, len)
            .map_err(|e| Error::io(format!("persisting {}", self.region.path().display()), e))
    }

    /// Writes a fresh leaf: magic, `next`, `bitmap` and `slots` (raw slot images, into slots
    /// 0..), then persists it all. The leaf is unreachable until a predecessor links it.
    pub fn init(&self, next: u32, bitmap: u64, slots: &[[u8; SLOT_SIZE]]) -> Result<()> {
        let mut head = [0u8; SLOTS_AT];
        head[..8].copy_from_slice(&LEAF_MAGIC.to_le_bytes());
        head[NEXT_AT..NEXT_AT + 8].copy_from_slice(&u64::from(next).to_le_bytes());
        head[BITMAP_AT..BITMAP_AT + 8].copy_from_slice(&bitmap.to_le_bytes());
        self.region.write(self.base(), &head);
        for (i, s) in slots.iter().enumerate() {
            self.region.write(self.slot_at(i), s);
        }
        self.persist(0, SLOTS_AT + slots.len() * SLOT_SIZE)
    }

    /// Writes and persists slot `slot` (not yet valid: its bitmap bit is the caller's next step).
    pub fn write_slot(&self, slot: usize, image: &[u8; SLOT_SIZE]) -> Result<()> {
        self.region.write(self.slot_at(slot), image);
        self.persist(SLOTS_AT + slot * SLOT_SIZE, SLOT_SIZE)
    }

    /// The raw image of slot `slot`.
    pub fn slot_image(&self, slot: usize) -> [u8; SLOT_SIZE] {
        self.region
            .read(self.slot_at(slot), SLOT_SIZE)
            .try_into()
            .expect("a slot is SLOT_SIZE bytes")
    }

    /// Every valid slot, decoded; a valid slot failing its checksum is `Corruption`.
    pub fn entries(&self) -> Result<Vec<SlotEntry>> {
        let bitmap = self.bitmap();
        (0..SLOTS)
            .filter(|s| bitmap & (1 << s) != 0)
            .map(|slot| self.entry(slot))
            .collect()
    }

    fn entry(&self, slot: usize) -> Result<SlotEntry> {
        let bad = |what: String| {
            let at = self.slot_at(slot) as u64;
            Error::corruption(
                self.region.path(),
                at,
                format!("B+-tree leaf {}: {what}", self.node),
            )
        };
        let image = self.slot_image(slot);
        let (key, location) =
            decode_slot(&image).ok_or_else(|| bad(format!("slot {slot} fails its checksum")))?;
        let (key, record) = match key {
            SlotKey::Inline(key) => (key, None),
            SlotKey::Record { len, offset } => {
                // `find` skips slots by the key bytes a slot keeps: they must be the record's.
                let head = &image[32..32 + HEAD_BYTES];
                let key = read_record(self.region, offset, len)
                    .filter(|k| k[..HEAD_BYTES] == *head)
                    .ok_or_else(|| {
                        bad(format!(
                            "slot {slot}: its key record at {offset} fails its checksum or \
                             does not start with the key bytes the slot keeps"
                        ))
                    })?;
                (key, Some(offset))
            }
        };
        Ok(SlotEntry {
            slot,
            key,
            location,
            record,
        })
    }

    /// The valid slot holding `key`, decoded and checked; the other slots are skipped by their
    /// length and inline bytes without decoding them.
    pub fn find(&self, key: &[u8]) -> Result<Option<SlotEntry>> {
        let bitmap = self.bitmap();
        for slot in (0..SLOTS).filter(|s| bitmap & (1 << s) != 0) {
            if self.may_hold(slot, key) {
                let e = self.entry(slot)?;
                if e.key == key {
                    return Ok(Some(e));
                }
            }
        }
        Ok(None)
    }

    /// False if slot `slot` certainly holds another key than `key`: its length or its inline
    /// bytes (the first 24 of a long key) differ.
    fn may_hold(&self, slot: usize, key: &[u8]) -> bool {
        let b = self.region.read(self.slot_at(slot) + 4, 4);
        if u32::from_le_bytes(b.try_into().unwrap()) as usize != key.len() {
            return false;
        }
        let inline = key.len().min(if key.len() <= MAX_INLINE_KEY {
            MAX_INLINE_KEY
        } else {
            HEAD_BYTES
        });
        self.region.read(self.slot_at(slot) + 32, inline) == &key[..inline]
    }

    /// The first slot whose bit is clear, if any.
    pub fn free_slot(&self) -> Option<usize> {
        let bitmap = self.bitmap();
        (0..SLOTS).find(|s| bitmap & (1 << s) == 0)
    }
}

/// Bytes of a long key kept in its slot beside the record's offset.
const HEAD_BYTES: usize = 24;
/// The flag of a slot whose key is out of line.
const OUT_OF_LINE: u32 = 1;

/// A slot image: crc32c of bytes 4..64 (u32), key length (u32), file (u64), block offset (u64),
/// block size (u32), flags (u32), then the key inline (up to [`MAX_INLINE_KEY`] bytes,
/// zero-padded), or — flag 1, a longer key — its first 24 bytes and its record's offset (u64).
pub(super) fn encode_slot(key: &[u8], loc: Location, record: Option<u64>) -> [u8; SLOT_SIZE] {
    let mut b = [0u8; SLOT_SIZE];
    b[4..8].copy_from_slice(&(key.len() as u32).to_le_bytes());
    b[8..16].copy_from_slice(&loc.file.to_le_bytes());
    b[16..24].copy_from_slice(&loc.offset.to_le_bytes());
    b[24..28].copy_from_slice(&loc.size.to_le_bytes());
    match record {
        None => b[32..32 + key.len()].copy_from_slice(key),
        Some(offset) => {
            b[28..32].copy_from_slice(&OUT_OF_LINE.to_le_bytes());
            b[32..32 + HEAD_BYTES].copy_from_slice(&key[..HEAD_BYTES]);
            b[56..64].copy_from_slice(&offset.to_le_bytes());
        }
    }
    let crc = crc32c(&b[4..]);
    b[..4].copy_from_slice(&crc.to_le_bytes());
    b
}

/// The key and location of a slot image; `None` if its checksum, flags or key length is wrong.
pub(super) fn decode_slot(b: &[u8; SLOT_SIZE]) -> Option<(SlotKey, Location)> {
    let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let half = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let len = half(4) as usize;
    let key = match (half(28), len <= MAX_INLINE_KEY) {
        (0, true) => SlotKey::Inline(b[32..32 + len].to_vec()),
        (OUT_OF_LINE, false) => SlotKey::Record {
            len,
            offset: word(56),
        },
        _ => return None,
    };
    if crc32c(&b[4..]) != half(0) {
        return None;
    }
    let location = Location {
        file: word(8),
        offset: word(16),
        size: half(24),
    };
    Some((key, location))
}
