//! A decoded, fully validated block (data or index) and binary search over its entries.
//!
//! [`Block::decode`] parses every entry once, checking varints, lengths, prefix sharing, the
//! restart array and strictly increasing internal-key order, so lookups and iteration can never
//! fail or read out of bounds. A block whose every entry is a restart point (data blocks are
//! written so) is then read in place (`block_direct.rs`); one with prefix-compressed entries
//! keeps its reconstructed keys and an entry table. A `Block` is immutable after
//! decoding and is shared between threads through `Arc<Block>` (it is `Send + Sync`).

use crate::coding::{get_fixed32, get_varint32};
use crate::error::{Error, Result};
use crate::pm::{PmArena, PmSpan};
use crate::types::compare_internal_keys;
use std::cmp::Ordering;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

/// Where one entry's key (in `Block::keys`) and value (in `Block::data`) live.
#[derive(Clone, Debug)]
struct Entry {
    key: Range<usize>,
    value: Range<usize>,
}

/// An immutable, validated block: entries sorted by [`compare_internal_keys`].
#[derive(Debug)]
pub struct Block {
    data: Bytes,
    layout: Layout,
}

/// How entries are found in `Block::data`.
#[derive(Debug)]
enum Layout {
    /// Prefix-compressed entries: full keys copied into `keys`, one [`Entry`] each.
    Decoded { keys: Bytes, entries: Vec<Entry> },
    /// One entry per restart point, read in place (`block_direct.rs`): `count` entries, the
    /// restart array at `restarts_at`.
    Direct { count: usize, restarts_at: usize },
}

/// Where a block's bytes live: the heap, or PM used as memory (a block cache placed in PM).
#[derive(Debug)]
enum Bytes {
    Heap(Vec<u8>),
    Pm(PmSpan),
}

impl Bytes {
    fn slice(&self, range: Range<usize>) -> &[u8] {
        match self {
            Bytes::Heap(v) => &v[range],
            Bytes::Pm(s) => s.slice(range),
        }
    }

    fn len(&self) -> usize {
        match self {
            Bytes::Heap(v) => v.len(),
            Bytes::Pm(s) => s.len(),
        }
    }

    fn to_pm(&self, arena: &Arc<PmArena>) -> Option<Bytes> {
        let copy = match self {
            Bytes::Heap(v) => arena.store(v)?,
            Bytes::Pm(s) => arena.store(s.slice(0..s.len()))?,
        };
        Some(Bytes::Pm(copy))
    }
}

/// Parser state while decoding one block.
struct Decoder<'a> {
    data: &'a [u8],
    path: &'a Path,
    base: u64,
    restarts: Vec<usize>,
    next_restart: usize,
    keys: Vec<u8>,
    entries: Vec<Entry>,
}

impl Block {
    /// Decodes block contents (without trailer) read from file offset `offset` of `path`.
    /// Never panics; malformed bytes yield `Error::Corruption` at the offending offset.
    pub fn decode(bytes: Vec<u8>, path: &Path, offset: u64) -> Result<Block> {
        let (restarts, data_end) = parse_restarts(&bytes, path, offset)?;
        if super::block_direct::validate(&bytes, &restarts, data_end) {
            let layout = Layout::Direct {
                count: restarts.len(),
                restarts_at: data_end,
            };
            return Ok(Block {
                data: Bytes::Heap(bytes),
                layout,
            });
        }
        let mut d = Decoder {
            data: &bytes[..data_end],
            path,
            base: offset,
            restarts,
            next_restart: 0,
            keys: Vec::new(),
            entries: Vec::new(),
        };
        d.parse_entries()?;
        let (keys, entries) = (d.keys, d.entries);
        Ok(Block {
            data: Bytes::Heap(bytes),
            layout: Layout::Decoded {
                keys: Bytes::Heap(keys),
                entries,
            },
        })
    }

    /// A block of one entry with an empty key and `value` as its value: how the block cache
    /// holds a value read from a value log ([`super::BlockCache::insert_value`]).
    pub fn single_value(value: Vec<u8>) -> Block {
        let entry = Entry {
            key: 0..0,
            value: 0..value.len(),
        };
        Block {
            data: Bytes::Heap(value),
            layout: Layout::Decoded {
                keys: Bytes::Heap(Vec::new()),
                entries: vec![entry],
            },
        }
    }

    /// A copy of this block whose bytes live in `arena` (PM), or `None` if it has no room.
    pub fn to_pm(&self, arena: &Arc<PmArena>) -> Option<Block> {
        let layout = match &self.layout {
            Layout::Decoded { keys, entries } => Layout::Decoded {
                keys: keys.to_pm(arena)?,
                entries: entries.clone(),
            },
            &Layout::Direct { count, restarts_at } => Layout::Direct { count, restarts_at },
        };
        Some(Block {
            data: self.data.to_pm(arena)?,
            layout,
        })
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        match &self.layout {
            Layout::Decoded { entries, .. } => entries.len(),
            Layout::Direct { count, .. } => *count,
        }
    }

    /// True if the block has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The internal key of entry `i`. Panics if `i >= len()`.
    pub fn key(&self, i: usize) -> &[u8] {
        match &self.layout {
            Layout::Decoded { keys, entries } => keys.slice(entries[i].key.clone()),
            Layout::Direct { .. } => self.data.slice(self.direct_entry(i).0),
        }
    }

    /// The value of entry `i`. Panics if `i >= len()`.
    pub fn value(&self, i: usize) -> &[u8] {
        match &self.layout {
            Layout::Decoded { entries, .. } => self.data.slice(entries[i].value.clone()),
            Layout::Direct { .. } => self.data.slice(self.direct_entry(i).1),
        }
    }

    /// Key and value ranges of entry `i` of a direct block.
    fn direct_entry(&self, i: usize) -> (Range<usize>, Range<usize>) {
        let Layout::Direct { count, restarts_at } = self.layout else {
            return (0..0, 0..0);
        };
        assert!(i < count, "entry {i} of a block of {count}");
        let data = self.data.slice(0..self.data.len());
        super::block_direct::entry(data, restarts_at, i)
    }

    /// Starts loading a direct block's restart array, which a binary search reads at every
    /// step (nothing for a decoded block: its entry table is read in place).
    pub fn prefetch_restarts(&self) {
        let Layout::Direct { count, restarts_at } = self.layout else {
            return;
        };
        let data = self.data.slice(0..self.data.len());
        for at in (restarts_at..restarts_at + 4 * count).step_by(crate::pm::CACHE_LINE) {
            crate::pm::prefetch_read(data, at);
        }
    }

    /// Starts loading the start of entry `i`'s key (nothing if there is no entry `i`).
    pub fn prefetch_key(&self, i: usize) {
        if i >= self.len() {
            return;
        }
        match &self.layout {
            Layout::Decoded { keys, entries } => {
                let all = keys.slice(0..keys.len());
                crate::pm::prefetch_read(all, entries[i].key.start)
            }
            Layout::Direct { restarts_at, .. } => {
                let data = self.data.slice(0..self.data.len());
                let at = crate::coding::get_fixed32(data, restarts_at + 4 * i).unwrap_or(0);
                crate::pm::prefetch_read(data, at as usize)
            }
        }
    }

    /// Index of the first entry whose key is >= `target` (`len()` if none).
    pub fn seek(&self, target: &[u8]) -> usize {
        self.seek_within(target, 0..self.len())
    }

    /// [`Block::seek`] when the answer is known to lie in `range.start..=range.end` (every
    /// entry before `range` is below `target`, every entry from its end on is not).
    pub fn seek_within(&self, target: &[u8], range: Range<usize>) -> usize {
        let (mut lo, mut hi) = (range.start, range.end.min(self.len()));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match compare_internal_keys(self.key(mid), target) {
                Ordering::Less => lo = mid + 1,
                _ => hi = mid,
            }
        }
        lo
    }

    /// Approximate memory held by this block, used as its block-cache charge.
    pub fn charge(&self) -> usize {
        let decoded = match &self.layout {
            Layout::Decoded { keys, entries } => {
                keys.len() + entries.len() * std::mem::size_of::<Entry>()
            }
            Layout::Direct { .. } => 0,
        };
        self.data.len() + decoded + std::mem::size_of::<Block>()
    }
}

/// Reads the restart array; returns restart offsets and where entry data ends.
fn parse_restarts(b: &[u8], path: &Path, offset: u64) -> Result<(Vec<usize>, usize)> {
    let bad = |at: usize, d: String| Error::corruption(path, offset + at as u64, d);
    if b.len() < 4 {
        return Err(bad(0, format!("block of {} bytes is too short", b.len())));
    }
    let n = get_fixed32(b, b.len() - 4).unwrap_or_default() as usize;
    let array_len = n.checked_mul(4).filter(|&l| l <= b.len() - 4);
    let Some(array_len) = array_len else {
        return Err(bad(
            b.len() - 4,
            format!("{n} restarts do not fit in {} bytes", b.len()),
        ));
    };
    if n == 0 {
        return Err(bad(b.len() - 4, "block has no restart points".into()));
    }
    let data_end = b.len() - 4 - array_len;
    let restarts: Vec<usize> = (0..n)
        .map(|i| get_fixed32(b, data_end + 4 * i).unwrap_or_default() as usize)
        .collect();
    let empty_ok = data_end == 0 && n == 1 && restarts[0] == 0;
    if !empty_ok && (restarts[0] != 0 || restarts.iter().any(|&r| r >= data_end)) {
        return Err(bad(
            data_end,
            "restart offset outside the entry area".into(),
        ));
    }
    if restarts.windows(2).any(|w| w[0] >= w[1]) {
        return Err(bad(data_end, "restart offsets are not increasing".into()));
    }
    Ok((restarts, data_end))
}

impl Decoder<'_> {
    fn bad(&self, at: usize, detail: impl Into<String>) -> Error {
        Error::corruption(self.path, self.base + at as u64, detail)
    }

    fn parse_entries(&mut self) -> Result<()> {
        let mut pos = 0;
        while pos < self.data.len() {
            pos = self.parse_entry(pos)?;
        }
        if self.next_restart != self.restarts.len() && !self.data.is_empty() {
            return Err(self.bad(pos, "restart offset is not an entry boundary"));
        }
        Ok(())
    }

    /// Reads the three varint lengths of the entry at `pos`.
    fn header(&self, pos: usize) -> Result<([usize; 3], usize)> {
        let mut out = [0usize; 3];
        let mut p = pos;
        for v in &mut out {
            let (x, n) = get_varint32(&self.data[p..])
                .ok_or_else(|| self.bad(p, "bad varint in entry header"))?;
            *v = x as usize;
            p += n;
        }
        Ok((out, p))
    }

    /// Parses the entry at `pos` and returns the offset of the next one.
    fn parse_entry(&mut self, pos: usize) -> Result<usize> {
        let is_restart = self.restarts.get(self.next_restart) == Some(&pos);
        if let Some(&r) = self.restarts.get(self.next_restart) {
            if r < pos {
                return Err(self.bad(pos, format!("restart offset {r} is inside an entry")));
            }
        }
        let ([shared, non_shared, value_len], p) = self.header(pos)?;
        let prev = self.entries.last().map(|e| e.key.clone()).unwrap_or(0..0);
        if shared > prev.len() || (is_restart && shared != 0) {
            return Err(self.bad(pos, format!("shared prefix {shared} is invalid here")));
        }
        let key_end = p.checked_add(non_shared);
        let end = key_end.and_then(|k| k.checked_add(value_len));
        let (Some(key_end), Some(end)) = (key_end, end) else {
            return Err(self.bad(pos, "entry length overflows"));
        };
        if end > self.data.len() {
            return Err(self.bad(pos, "entry runs past the end of the block"));
        }
        self.push_entry(
            prev.start..prev.start + shared,
            p..key_end,
            key_end..end,
            pos,
        )?;
        self.next_restart += usize::from(is_restart);
        Ok(end)
    }

    /// Reconstructs the key from the previous key's prefix and the delta, checks order, records it.
    fn push_entry(
        &mut self,
        prefix: Range<usize>,
        delta: Range<usize>,
        value: Range<usize>,
        pos: usize,
    ) -> Result<()> {
        let start = self.keys.len();
        self.keys.extend_from_within(prefix);
        self.keys.extend_from_slice(&self.data[delta]);
        if let Some(prev) = self.entries.last() {
            let order = compare_internal_keys(&self.keys[prev.key.clone()], &self.keys[start..]);
            if order != Ordering::Less {
                return Err(self.bad(pos, "keys are not in increasing order"));
            }
        }
        let key = start..self.keys.len();
        self.entries.push(Entry { key, value });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::block_builder::BlockBuilder;
    use super::*;
    use crate::types::{make_internal_key, ValueKind};
    use proptest::prelude::*;

    fn ik(user: &str, seq: u64) -> Vec<u8> {
        make_internal_key(user.as_bytes(), seq, ValueKind::Value)
    }

    fn build(n: usize) -> Vec<u8> {
        let mut b = BlockBuilder::new();
        for i in 0..n {
            b.add(&ik(&format!("key{i:05}"), 1), format!("v{i}").as_bytes());
        }
        b.finish()
    }

    #[test]
    fn block_round_trips_with_restarts_and_seeks_first_greater_or_equal() {
        let block = Block::decode(build(100), Path::new("b"), 0).unwrap();
        assert_eq!(block.len(), 100);
        for i in 0..100 {
            assert_eq!(block.key(i), &ik(&format!("key{i:05}"), 1)[..]);
            assert_eq!(block.value(i), format!("v{i}").as_bytes());
        }
        assert_eq!(block.seek(&ik("key00042", 1)), 42);
        assert_eq!(block.seek(&ik("key00042", 0)), 43);
        assert_eq!(block.seek(&ik("a", 1)), 0);
        assert_eq!(block.seek(&ik("z", 1)), 100);
    }

    #[test]
    fn empty_block_decodes_to_no_entries() {
        let block = Block::decode(build(0), Path::new("b"), 0).unwrap();
        assert!(block.is_empty());
        assert_eq!(block.seek(&ik("a", 1)), 0);
    }

    #[test]
    fn block_rejects_unsorted_keys_and_bad_restarts() {
        let mut b = BlockBuilder::new();
        b.add(&ik("b", 1), b"");
        b.add(&ik("a", 1), b"");
        let e = Block::decode(b.finish(), Path::new("x.sst"), 10).unwrap_err();
        assert!(e.is_corruption());
        let mut bytes = build(40);
        let n = bytes.len();
        bytes[n - 8] ^= 1; // last restart offset no longer on an entry boundary
        assert!(Block::decode(bytes, Path::new("x.sst"), 0).is_err());
    }

    #[test]
    fn every_single_byte_flip_is_rejected_or_decodes_without_panic() {
        let good = build(40);
        for i in 0..good.len() {
            let mut b = good.clone();
            b[i] ^= 0x21;
            let _ = Block::decode(b, Path::new("x.sst"), 0);
        }
        for len in 0..good.len() {
            let _ = Block::decode(good[..len].to_vec(), Path::new("x.sst"), 0);
        }
    }

    proptest! {
        #[test]
        fn decode_of_random_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            if let Ok(b) = Block::decode(bytes, Path::new("fuzz.sst"), 0) {
                for i in 0..b.len() {
                    let _ = (b.key(i), b.value(i));
                }
                let _ = b.seek(b"anything");
            }
        }

        #[test]
        fn decode_of_mutated_blocks_never_panics(pos in 0usize..2000, byte in any::<u8>(), cut in 0usize..2000) {
            let mut b = build(60);
            let p = pos % b.len();
            b[p] = byte;
            b.truncate(cut.max(p + 1).min(b.len()));
            let _ = Block::decode(b, Path::new("fuzz.sst"), 0);
        }
    }
}
