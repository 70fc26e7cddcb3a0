//! The byte encodings every persisted format shares, at the bottom of the crate: LEB128
//! varints and fixed-width little-endian integers (SSTable blocks and footers, compression
//! prefixes), and the bounds-checked [`Decoder`] with length-prefixed bytes (manifest records,
//! WAL batches).
//!
//! Decoders never panic: they return `None` when the input is truncated or a varint is
//! overlong/overflows, and callers turn that into `Error::Corruption` with a file offset.

mod decoder;

/// Largest accepted block size (SSTable blocks are read whole, and a compressed block claims
/// no more raw bytes than this).
pub const MAX_BLOCK_SIZE: usize = 1 << 30;

pub(crate) use decoder::{put_bytes, Decoder};

/// Appends `v` as a LEB128 varint (7 bits per byte, low group first).
pub(crate) fn put_varint64(dst: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        dst.push((v as u8) | 0x80);
        v >>= 7;
    }
    dst.push(v as u8);
}

/// Appends `v` as a varint.
pub(crate) fn put_varint32(dst: &mut Vec<u8>, v: u32) {
    put_varint64(dst, u64::from(v));
}

/// Decodes a varint of at most `max_bytes` bytes from the start of `src`.
/// Returns the value and the number of bytes consumed.
fn get_varint(src: &[u8], max_bytes: usize, max_value: u64) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    for (i, &b) in src.iter().take(max_bytes).enumerate() {
        let part = u64::from(b & 0x7f);
        let shift = 7 * i as u32;
        if shift == 63 && part > 1 {
            return None;
        }
        v |= part << shift;
        if b & 0x80 == 0 {
            return (v <= max_value).then_some((v, i + 1));
        }
    }
    None
}

/// Decodes a 64-bit varint (at most 10 bytes).
pub(crate) fn get_varint64(src: &[u8]) -> Option<(u64, usize)> {
    get_varint(src, 10, u64::MAX)
}

/// Decodes a 32-bit varint (at most 5 bytes, value must fit in u32).
pub(crate) fn get_varint32(src: &[u8]) -> Option<(u32, usize)> {
    get_varint(src, 5, u64::from(u32::MAX)).map(|(v, n)| (v as u32, n))
}

/// Reads a little-endian u32 at `pos`, `None` if out of bounds.
pub(crate) fn get_fixed32(src: &[u8], pos: usize) -> Option<u32> {
    let end = pos.checked_add(4)?;
    let b = src.get(pos..end)?;
    Some(u32::from_le_bytes(b.try_into().ok()?))
}

/// Reads a little-endian u64 at `pos`, `None` if out of bounds.
pub(crate) fn get_fixed64(src: &[u8], pos: usize) -> Option<u64> {
    let end = pos.checked_add(8)?;
    let b = src.get(pos..end)?;
    Some(u64::from_le_bytes(b.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_boundaries() {
        for v in [0u64, 1, 127, 128, 16383, 16384, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            put_varint64(&mut b, v);
            assert_eq!(get_varint64(&b), Some((v, b.len())));
        }
    }

    #[test]
    fn varint_decoders_reject_truncated_and_overflowing_input() {
        assert_eq!(get_varint64(&[]), None);
        assert_eq!(get_varint64(&[0x80]), None);
        assert_eq!(get_varint64(&[0xff; 10]), None);
        assert_eq!(
            get_varint64(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]),
            None
        );
        let mut b = Vec::new();
        put_varint64(&mut b, u64::from(u32::MAX) + 1);
        assert_eq!(get_varint32(&b), None);
        assert_eq!(get_fixed32(&[1, 2, 3], 0), None);
        assert_eq!(get_fixed64(&[0; 8], usize::MAX), None);
    }
}
