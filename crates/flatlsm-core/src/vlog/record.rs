//! Value-log file header and record coding (pure functions, no I/O).
//!
//! Header (16 bytes): magic `b"FLATVLOG"` | format version u32 LE = 1 | reserved u32 LE (written
//! as 0, ignored on read).
//! Record: `crc32c u32 LE (over everything after it) | key_len u32 LE | value_len u32 LE | key |
//! value`; its length is `12 + key_len + value_len`, which must fit a u32 (the `record_len` of a
//! [`crate::types::ValuePointer`]).

use crate::error::{Error, Result};
use crate::types::{crc32c, crc32c_extend};
use std::path::Path;

/// Magic bytes at the start of every value-log file.
pub const VLOG_MAGIC: &[u8; 8] = b"FLATVLOG";
/// Current format version.
pub const VLOG_FORMAT_VERSION: u32 = 1;
/// Size of the file header.
pub const VLOG_HEADER_LEN: u64 = 16;
/// Size of a record header (crc, key_len, value_len).
pub const RECORD_HEADER_LEN: usize = 12;

/// The 16-byte file header.
pub fn encode_header() -> [u8; VLOG_HEADER_LEN as usize] {
    let mut h = [0u8; VLOG_HEADER_LEN as usize];
    h[..8].copy_from_slice(VLOG_MAGIC);
    h[8..12].copy_from_slice(&VLOG_FORMAT_VERSION.to_le_bytes());
    h
}

/// Checks a file header; [`Error::Corruption`] at offset 0 or 8 otherwise.
pub fn check_header(h: &[u8], path: &Path) -> Result<()> {
    if h.len() < VLOG_HEADER_LEN as usize || &h[..8] != VLOG_MAGIC {
        return Err(Error::corruption(path, 0, "bad value-log magic"));
    }
    let version = u32::from_le_bytes([h[8], h[9], h[10], h[11]]);
    if version != VLOG_FORMAT_VERSION {
        return Err(Error::corruption(
            path,
            8,
            format!("unsupported value-log format version {version}"),
        ));
    }
    Ok(())
}

/// Length of the record holding `key` and `value`, or `None` if it does not fit a u32.
pub fn record_len(key_len: usize, value_len: usize) -> Option<u32> {
    let total = RECORD_HEADER_LEN
        .checked_add(key_len)?
        .checked_add(value_len)?;
    u32::try_from(total).ok()
}

/// The 12-byte record header for `key` and `value` (lengths must fit, see [`record_len`]).
pub fn encode_record_header(key: &[u8], value: &[u8]) -> [u8; RECORD_HEADER_LEN] {
    let mut h = [0u8; RECORD_HEADER_LEN];
    h[4..8].copy_from_slice(&(key.len() as u32).to_le_bytes());
    h[8..12].copy_from_slice(&(value.len() as u32).to_le_bytes());
    let crc = crc32c_extend(crc32c_extend(crc32c(&h[4..]), key), value);
    h[..4].copy_from_slice(&crc.to_le_bytes());
    h
}

/// Decodes the record at the start of `bytes` (which may hold more after it), located at byte
/// `offset` of `path`. Returns `(key, value, record length)`. Never panics; a short buffer or a
/// crc mismatch is [`Error::Corruption`] at `offset`.
pub fn decode_record<'a>(
    bytes: &'a [u8],
    path: &Path,
    offset: u64,
) -> Result<(&'a [u8], &'a [u8], usize)> {
    let bad = |detail: String| Error::corruption(path, offset, detail);
    if bytes.len() < RECORD_HEADER_LEN {
        return Err(bad(format!(
            "truncated record header ({} bytes)",
            bytes.len()
        )));
    }
    let word = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    let (stored, key_len, value_len) = (word(0), word(4) as usize, word(8) as usize);
    let total = RECORD_HEADER_LEN as u64 + key_len as u64 + value_len as u64;
    if total > bytes.len() as u64 {
        return Err(bad(format!(
            "record of {total} bytes (key {key_len}, value {value_len}) exceeds the {} available",
            bytes.len()
        )));
    }
    let total = total as usize;
    if crc32c(&bytes[4..total]) != stored {
        return Err(bad("record checksum mismatch".to_string()));
    }
    let key = &bytes[RECORD_HEADER_LEN..RECORD_HEADER_LEN + key_len];
    let value = &bytes[RECORD_HEADER_LEN + key_len..total];
    Ok((key, value, total))
}
