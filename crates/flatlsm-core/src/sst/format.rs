//! On-disk framing shared by the builder and the reader: block handles, block trailers and the
//! fixed-size footer. See `docs/sst-format.md` for the byte layout.
//!
//! Invariants checked here (every failure is `Error::Corruption` naming the file and offset):
//! - a footer has the right magic, version and CRC, and its handles lie inside the file, with the
//!   filter block (if any) immediately followed by the index block, immediately followed by the
//!   footer;
//! - a block read from disk has a CRC32C over its stored bytes + type byte that matches, then a
//!   known type (0 raw, 4 LZ4, 7 zstd) and, if compressed, decompresses to exactly the size it
//!   records (`crate::compression`); a compressed block's errors name the block's offset.
//!
//! Everything here is pure or reads through a shared `RandomAccessFile`, so it is thread-safe.

use crate::coding::{get_fixed32, get_fixed64, get_varint64, put_varint64};
use crate::compression::type_name;
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use crate::types::{crc32c, crc32c_extend};
use std::path::Path;

/// Length of the trailer after each block: type byte + CRC32C.
pub const BLOCK_TRAILER_LEN: u64 = 5;
/// Trailer type byte for an uncompressed block (the type of every block written before
/// compression, and of filter and index blocks); the others are [`crate::compression`]'s.
pub const BLOCK_TYPE_RAW: u8 = crate::compression::TYPE_NONE;
/// Magic number at the very end of every table: "FLATLSM1" read as a big-endian u64.
pub const TABLE_MAGIC: u64 = 0x464c_4154_4c53_4d31;
/// Current (and only) table format version.
pub const FORMAT_VERSION: u32 = 1;
/// Size of the footer in bytes.
pub const FOOTER_LEN: usize = 56;
/// Bytes of the footer covered by its CRC.
const FOOTER_CRC_COVERED: usize = 44;

/// Location of a block in a table file; `size` excludes the 5-byte trailer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockHandle {
    /// Offset of the first byte of the block.
    pub offset: u64,
    /// Length of the block contents, without trailer.
    pub size: u64,
}

impl BlockHandle {
    /// Appends the varint encoding used in index-block values (offset, then size).
    pub fn encode_varint(&self, dst: &mut Vec<u8>) {
        put_varint64(dst, self.offset);
        put_varint64(dst, self.size);
    }

    /// Decodes an index-block value; `None` unless it is exactly two varints.
    pub fn decode_varint(src: &[u8]) -> Option<BlockHandle> {
        let (offset, n1) = get_varint64(src)?;
        let (size, n2) = get_varint64(&src[n1..])?;
        (n1 + n2 == src.len()).then_some(BlockHandle { offset, size })
    }

    /// Offset just past the block's trailer, `None` on overflow.
    pub fn end_with_trailer(&self) -> Option<u64> {
        self.offset
            .checked_add(self.size)?
            .checked_add(BLOCK_TRAILER_LEN)
    }
}

/// How one block is stored, for tools (`flatlsm dump`): where it lies, its trailer's type byte
/// ([`crate::compression::type_name`] names it) and its size once decompressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredBlock {
    /// Where the block lies; `handle.size` is its stored size.
    pub handle: BlockHandle,
    /// The trailer's type byte (0: raw).
    pub block_type: u8,
    /// Bytes of the block's contents after decompression.
    pub raw_size: u64,
}

/// The decoded fixed-size footer at the end of a table file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footer {
    /// The bloom filter block; `{0, 0}` when the table has no filter.
    pub filter: BlockHandle,
    /// The index block.
    pub index: BlockHandle,
    /// Number of entries in the table.
    pub num_entries: u64,
    /// Format version (currently [`FORMAT_VERSION`]).
    pub version: u32,
}

impl Footer {
    /// True if the table carries a bloom filter.
    pub fn has_filter(&self) -> bool {
        self.filter.size != 0
    }

    /// Offset where the data blocks end (first byte of the filter or index block).
    pub fn data_end(&self) -> u64 {
        if self.has_filter() {
            self.filter.offset
        } else {
            self.index.offset
        }
    }

    /// Encodes into exactly [`FOOTER_LEN`] bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(FOOTER_LEN);
        for v in [
            self.filter.offset,
            self.filter.size,
            self.index.offset,
            self.index.size,
            self.num_entries,
        ] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&self.version.to_le_bytes());
        let crc = crc32c(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        b.extend_from_slice(&TABLE_MAGIC.to_le_bytes());
        b
    }
}

/// Decodes and validates a footer read from file offset `offset` (so the file is
/// `offset + FOOTER_LEN` bytes long). Never panics; any defect is `Error::Corruption`.
pub fn decode_footer(bytes: &[u8], path: &Path, offset: u64) -> Result<Footer> {
    // Saturating: `offset` is the caller's (a fuzzer passes any), and this must never panic.
    let bad =
        |at: usize, what: String| Error::corruption(path, offset.saturating_add(at as u64), what);
    if bytes.len() != FOOTER_LEN {
        return Err(bad(
            0,
            format!("footer is {} bytes, expected {FOOTER_LEN}", bytes.len()),
        ));
    }
    let f64_at = |pos| get_fixed64(bytes, pos).unwrap_or_default();
    let magic = f64_at(48);
    if magic != TABLE_MAGIC {
        return Err(bad(
            48,
            format!("bad table magic {magic:#018x}, expected {TABLE_MAGIC:#018x}"),
        ));
    }
    let stored = get_fixed32(bytes, 44).unwrap_or_default();
    let actual = crc32c(&bytes[..FOOTER_CRC_COVERED]);
    if stored != actual {
        return Err(bad(
            44,
            format!("footer crc {stored:#010x}, computed {actual:#010x}"),
        ));
    }
    let footer = Footer {
        filter: BlockHandle {
            offset: f64_at(0),
            size: f64_at(8),
        },
        index: BlockHandle {
            offset: f64_at(16),
            size: f64_at(24),
        },
        num_entries: f64_at(32),
        version: get_fixed32(bytes, 40).unwrap_or_default(),
    };
    if footer.version != FORMAT_VERSION {
        return Err(bad(
            40,
            format!("unsupported format version {}", footer.version),
        ));
    }
    check_footer_layout(&footer, offset).map_err(|d| bad(0, d))?;
    Ok(footer)
}

/// Checks that filter, index and footer are contiguous and end at `footer_offset`.
fn check_footer_layout(f: &Footer, footer_offset: u64) -> std::result::Result<(), String> {
    if f.index.end_with_trailer() != Some(footer_offset) {
        return Err(format!(
            "index block {:?} does not end at the footer ({footer_offset})",
            f.index
        ));
    }
    if f.has_filter() {
        if f.filter.end_with_trailer() != Some(f.index.offset) {
            return Err(format!(
                "filter block {:?} does not end at the index block ({})",
                f.filter, f.index.offset
            ));
        }
    } else if f.filter.offset != 0 {
        return Err(format!(
            "empty filter handle with offset {}",
            f.filter.offset
        ));
    }
    Ok(())
}

/// The 5-byte trailer (type byte `block_type`, CRC32C over `stored` + type) of a block whose
/// stored bytes are `stored`.
pub(crate) fn block_trailer(stored: &[u8], block_type: u8) -> [u8; BLOCK_TRAILER_LEN as usize] {
    let crc = crc32c_extend(crc32c(stored), &[block_type]);
    let mut t = [0u8; BLOCK_TRAILER_LEN as usize];
    t[0] = block_type;
    t[1..].copy_from_slice(&crc.to_le_bytes());
    t
}

/// Reads `len` bytes at `offset`; a short file is reported as corruption, other errors as I/O.
pub(crate) fn read_exact(
    file: &dyn RandomAccessFile,
    path: &Path,
    offset: u64,
    len: usize,
) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    match file.read_exact_at(offset, &mut buf) {
        Ok(()) => Ok(buf),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(Error::corruption(
            path,
            offset,
            format!("file ends inside a {len}-byte read"),
        )),
        Err(e) => Err(Error::io(
            format!("reading {} at {offset}", path.display()),
            e,
        )),
    }
}

/// Reads the block at `handle`, verifies its trailer and decompresses it; returns the raw
/// contents (what the block builder produced).
pub(crate) fn read_block(
    file: &dyn RandomAccessFile,
    path: &Path,
    handle: BlockHandle,
) -> Result<Vec<u8>> {
    let (block_type, stored) = read_stored_block(file, path, handle)?;
    decompress_block(block_type, stored, path, handle)
}

/// The raw contents of a block of `block_type` stored as `stored` at `handle`.
pub(crate) fn decompress_block(
    block_type: u8,
    stored: Vec<u8>,
    path: &Path,
    handle: BlockHandle,
) -> Result<Vec<u8>> {
    crate::compression::decompress(block_type, stored).map_err(|detail| {
        let at = match type_name(block_type) {
            Some(_) => handle.offset,
            None => handle.offset + handle.size,
        };
        Error::corruption(path, at, detail)
    })
}

/// Reads the block at `handle` and verifies its trailer's CRC; returns the type byte and the
/// stored bytes (compressed or not, without trailer).
pub(crate) fn read_stored_block(
    file: &dyn RandomAccessFile,
    path: &Path,
    handle: BlockHandle,
) -> Result<(u8, Vec<u8>)> {
    let too_big = || Error::corruption(path, handle.offset, "block size overflows");
    let size = usize::try_from(handle.size).map_err(|_| too_big())?;
    let total = size
        .checked_add(BLOCK_TRAILER_LEN as usize)
        .ok_or_else(too_big)?;
    let mut buf = read_exact(file, path, handle.offset, total)?;
    check_trailer(&buf, path, handle)?;
    let block_type = buf[size];
    buf.truncate(size);
    Ok((block_type, buf))
}

/// Verifies the CRC in the trailer at the end of `buf` (stored bytes + trailer) for the block
/// at `handle`. The type byte is judged after (an unknown type is refused by decompression).
fn check_trailer(buf: &[u8], path: &Path, handle: BlockHandle) -> Result<()> {
    let size = buf.len() - BLOCK_TRAILER_LEN as usize;
    let at = handle.offset + size as u64;
    let stored = get_fixed32(buf, size + 1).unwrap_or_default();
    let actual = crc32c(&buf[..=size]);
    if stored != actual {
        return Err(Error::corruption(
            path,
            at + 1,
            format!("block crc {stored:#010x}, computed {actual:#010x}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Footer {
        Footer {
            filter: BlockHandle {
                offset: 100,
                size: 20,
            },
            index: BlockHandle {
                offset: 125,
                size: 30,
            },
            num_entries: 7,
            version: FORMAT_VERSION,
        }
    }

    #[test]
    fn footer_round_trips_and_rejects_every_single_byte_flip() {
        let p = Path::new("t.sst");
        let enc = sample().encode();
        assert_eq!(enc.len(), FOOTER_LEN);
        assert_eq!(decode_footer(&enc, p, 160).unwrap(), sample());
        for i in 0..FOOTER_LEN {
            let mut b = enc.clone();
            b[i] ^= 0x40;
            let e = decode_footer(&b, p, 160).unwrap_err();
            assert!(e.is_corruption(), "{e}");
        }
        assert!(decode_footer(&enc[1..], p, 160)
            .unwrap_err()
            .is_corruption());
    }

    #[test]
    fn footer_with_handles_outside_the_file_is_corruption() {
        let p = Path::new("t.sst");
        assert!(decode_footer(&sample().encode(), p, 161).is_err());
        let mut f = sample();
        f.index.size = u64::MAX;
        assert!(decode_footer(&f.encode(), p, 160).is_err());
    }

    #[test]
    fn block_handle_varint_requires_exact_length() {
        let h = BlockHandle {
            offset: 1 << 40,
            size: 4096,
        };
        let mut b = Vec::new();
        h.encode_varint(&mut b);
        assert_eq!(BlockHandle::decode_varint(&b), Some(h));
        b.push(0);
        assert_eq!(BlockHandle::decode_varint(&b), None);
        assert_eq!(BlockHandle::decode_varint(&b[..1]), None);
    }
}
