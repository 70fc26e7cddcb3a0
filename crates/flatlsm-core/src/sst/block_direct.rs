//! Blocks whose every entry is a restart point (written with a restart interval of 1, no
//! prefix compression), read in place: the restart array already is the table of entries, so
//! [`super::Block::decode`] keeps no copy of the keys and no entry table, a block costs the
//! block cache its bytes alone, and decoding allocates nothing. Data blocks are written this
//! way (`BlockBuilder::direct`); a block with prefix-compressed entries (older tables, index
//! blocks) is decoded into keys and entries instead.
//!
//! [`validate`] proves a block has this layout before it is used so: every restart entry has
//! `shared = 0` and ends exactly at the next restart (or the end of the entries), and the keys
//! increase strictly. After that [`entry`] cannot fail; it still never panics on any bytes.

use crate::coding::{get_fixed32, get_varint32};
use crate::types::compare_internal_keys;
use std::cmp::Ordering;
use std::ops::Range;

/// The key and value ranges of entry `i` of a direct block whose restart array starts at
/// `restarts_at` of `data` (empty ranges if the bytes do not hold it: never after
/// [`validate`]).
pub(super) fn entry(data: &[u8], restarts_at: usize, i: usize) -> (Range<usize>, Range<usize>) {
    let at = get_fixed32(data, restarts_at + 4 * i).unwrap_or(0) as usize;
    parse(data, at).unwrap_or((0..0, 0..0))
}

/// Key and value ranges of the `shared = 0` entry at `at`, if its header parses and it fits.
fn parse(data: &[u8], at: usize) -> Option<(Range<usize>, Range<usize>)> {
    if let Some(ranges) = parse_short(data, at) {
        return Some(ranges);
    }
    let mut p = at;
    let mut field = || {
        let (v, n) = get_varint32(data.get(p..)?)?;
        p += n;
        Some(v as usize)
    };
    let (shared, key_len, value_len) = (field()?, field()?, field()?);
    let key = p..p.checked_add(key_len)?;
    let value = key.end..key.end.checked_add(value_len)?;
    (shared == 0 && value.end <= data.len()).then_some((key, value))
}

/// [`parse`]'s fast path for the usual header: three one-byte varints (`shared` 0, key and
/// value shorter than 128 bytes). A point lookup parses an entry at each step of its binary
/// search, and the general varint decoder was a third of that search's time.
fn parse_short(data: &[u8], at: usize) -> Option<(Range<usize>, Range<usize>)> {
    let &[0, key_len, value_len] = data.get(at..at.checked_add(3)?)? else {
        return None;
    };
    if key_len >= 0x80 || value_len >= 0x80 {
        return None;
    }
    let key = at + 3..at + 3 + key_len as usize;
    let value = key.end..key.end + value_len as usize;
    (value.end <= data.len()).then_some((key, value))
}

/// True if the entries `[0, data_end)` of `data`, at the offsets `restarts`, are one entry per
/// restart point, each ending at the next, with strictly increasing keys.
pub(super) fn validate(data: &[u8], restarts: &[usize], data_end: usize) -> bool {
    let ends = restarts.iter().skip(1).copied().chain([data_end]);
    let mut previous: Option<Range<usize>> = None;
    for (&at, end) in restarts.iter().zip(ends) {
        let Some((key, value)) = parse(&data[..data_end], at) else {
            return false;
        };
        let increasing = previous
            .is_none_or(|p| compare_internal_keys(&data[p], &data[key.clone()]) == Ordering::Less);
        if value.end != end || !increasing {
            return false;
        }
        previous = Some(key);
    }
    data_end > 0
}

#[cfg(test)]
mod tests {
    use super::super::block_builder::BlockBuilder;
    use super::super::Block;
    use super::*;
    use crate::types::{make_internal_key, ValueKind};
    use std::path::Path;

    fn ik(user: &str) -> Vec<u8> {
        make_internal_key(user.as_bytes(), 1, ValueKind::Value)
    }

    #[test]
    fn a_block_with_one_restart_per_entry_is_read_in_place() {
        let mut b = BlockBuilder::direct();
        for i in 0..50 {
            b.add(&ik(&format!("key{i:03}")), format!("v{i}").as_bytes());
        }
        let bytes = b.finish();
        let raw = bytes.len();
        let block = Block::decode(bytes, Path::new("b"), 0).unwrap();
        assert_eq!(block.len(), 50);
        assert_eq!(
            (block.key(7), block.value(7)),
            (&ik("key007")[..], &b"v7"[..])
        );
        assert_eq!(block.seek(&ik("key020")), 20);
        assert_eq!(block.seek(&ik("zzz")), 50);
        assert!(
            block.charge() < raw + 128,
            "charged {} for {raw} bytes",
            block.charge()
        );
    }

    /// Damage anywhere is refused by decode or leaves a block every access of which is safe
    /// (the crc of the block trailer catches it before decode in a table).
    #[test]
    fn every_single_byte_flip_is_refused_or_read_without_panic() {
        let mut b = BlockBuilder::direct();
        for i in 0..20 {
            b.add(&ik(&format!("key{i:03}")), format!("value{i}").as_bytes());
        }
        let good = b.finish();
        for i in 0..good.len() {
            for bit in [1u8, 0x80] {
                let mut bytes = good.clone();
                bytes[i] ^= bit;
                if let Ok(block) = Block::decode(bytes, Path::new("b"), 0) {
                    for e in 0..block.len() {
                        let _ = (block.key(e), block.value(e));
                    }
                    let _ = block.seek(&ik("key010"));
                }
            }
        }
    }

    #[test]
    fn a_prefix_compressed_block_is_not_direct() {
        let mut b = BlockBuilder::new();
        for i in 0..40 {
            b.add(&ik(&format!("key{i:03}")), b"v");
        }
        let bytes = b.finish();
        let n = u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().unwrap()) as usize;
        let data_end = bytes.len() - 4 - 4 * n;
        let restarts: Vec<usize> = (0..n)
            .map(|i| get_fixed32(&bytes, data_end + 4 * i).unwrap() as usize)
            .collect();
        assert!(!validate(&bytes, &restarts, data_end));
    }
}
