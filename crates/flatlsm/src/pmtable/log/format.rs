//! Byte layout of the PM Log: header and entry encoding/decoding (see docs/pm-log-format.md).
//!
//! Decoders take untrusted bytes and never panic: every length is checked before it is used,
//! and every failure is an [`Error::Corruption`] naming the file and the offset of the bad field
//! (header) or of the bad entry (entries).

use std::path::Path;

use super::{LogEntry, PmLogHeader, ENTRY_HEADER_LEN, PM_LOG_HEADER_LEN};
use crate::error::{Error, Result};
use crate::types::{crc32c, crc32c_extend, ValueKind, MAX_SEQUENCE};

/// Magic number at offset 0 (paper 4.2.1).
pub(super) const MAGIC: [u8; 4] = *b"PMEM";
/// Format version at offset 4 written by this code. Version 1 (no `written_size`, no batch-end
/// flags) is still read: its logs simply have no tail beyond `used_size`.
pub(super) const FORMAT_VERSION: u16 = 2;
/// Oldest format version still read.
const OLDEST_READ_VERSION: u16 = 1;
/// Offset of `file_size` (u64).
pub(super) const OFF_FILE_SIZE: usize = 8;
/// Offset of `used_size` (u64, atomic store).
pub(super) const OFF_USED_SIZE: usize = 16;
/// Offset of `log_number` (u64).
pub(super) const OFF_NUMBER: usize = 24;
/// Offset of `replaces` (u64).
pub(super) const OFF_REPLACES: usize = 32;
/// Offset of `header_crc` (u32).
pub(super) const OFF_CRC: usize = 40;
/// Offset of `flags` (u64, atomic store).
pub(super) const OFF_FLAGS: usize = 48;
/// `flags` bit 0: the PMTable GC that produced this log finished (the replaced log is garbage).
pub(super) const FLAG_GC_COMPLETE: u64 = 1;
/// Offset of `written_size` (u64, atomic store; version 2): end of the last batch copied to the
/// region, stored after every batch but persisted only with `used_size`.
pub(super) const OFF_WRITTEN_SIZE: usize = 56;
/// Bit of an entry's kind byte marking the last entry of its WriteBatch (version 2).
const KIND_BATCH_END: u8 = 0x80;
/// Offset of the kind byte within an entry.
const ENTRY_OFF_KIND: usize = 12;

/// True if the entry starting `entry` is flagged as the last of its WriteBatch (version 2).
pub(super) fn ends_batch(entry: &[u8]) -> bool {
    entry
        .get(ENTRY_OFF_KIND)
        .is_some_and(|k| k & KIND_BATCH_END != 0)
}

/// The first 8 header bytes (magic, version, reserved) as the u64 stored last at creation.
pub(super) fn magic_word() -> u64 {
    let mut b = [0u8; 8];
    b[0..4].copy_from_slice(&MAGIC);
    b[4..6].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    u64::from_le_bytes(b)
}

pub(super) fn header_crc(h: &[u8]) -> u32 {
    crc32c_extend(crc32c(&h[0..OFF_USED_SIZE]), &h[OFF_NUMBER..OFF_CRC])
}

/// Encodes a fresh header: `used_size` = `written_size` = 64, flags = 0.
pub(super) fn encode_header(number: u64, file_size: u64, replaces: u64) -> [u8; PM_LOG_HEADER_LEN] {
    let mut h = [0u8; PM_LOG_HEADER_LEN];
    let empty = (PM_LOG_HEADER_LEN as u64).to_le_bytes();
    h[0..8].copy_from_slice(&magic_word().to_le_bytes());
    h[OFF_FILE_SIZE..OFF_FILE_SIZE + 8].copy_from_slice(&file_size.to_le_bytes());
    h[OFF_USED_SIZE..OFF_USED_SIZE + 8].copy_from_slice(&empty);
    h[OFF_WRITTEN_SIZE..OFF_WRITTEN_SIZE + 8].copy_from_slice(&empty);
    h[OFF_NUMBER..OFF_NUMBER + 8].copy_from_slice(&number.to_le_bytes());
    h[OFF_REPLACES..OFF_REPLACES + 8].copy_from_slice(&replaces.to_le_bytes());
    let crc = header_crc(&h);
    h[OFF_CRC..OFF_CRC + 4].copy_from_slice(&crc.to_le_bytes());
    h
}

fn u64_at(b: &[u8], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_le_bytes(a)
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[off..off + 4]);
    u32::from_le_bytes(a)
}

/// Decodes and validates a header: magic, version, crc, `64 <= file_size`,
/// `64 <= used_size <= file_size`, `written_size` 0 or within `[64, file_size]`. Does not
/// compare `file_size` with the region (the caller knows the region). Never panics.
pub fn decode_header(bytes: &[u8], path: &Path) -> Result<PmLogHeader> {
    let bad = |offset: usize, detail: String| Error::corruption(path, offset as u64, detail);
    if bytes.len() < PM_LOG_HEADER_LEN {
        return Err(bad(
            0,
            format!("PM log header truncated: {} of 64 bytes", bytes.len()),
        ));
    }
    let h = &bytes[..PM_LOG_HEADER_LEN];
    if h[0..4] != MAGIC {
        return Err(bad(
            0,
            format!("bad PM log magic {:02x?}, expected \"PMEM\"", &h[0..4]),
        ));
    }
    let version = u16::from_le_bytes([h[4], h[5]]);
    if !(OLDEST_READ_VERSION..=FORMAT_VERSION).contains(&version) {
        return Err(bad(
            4,
            format!("unsupported PM log format version {version}"),
        ));
    }
    let stored = u32_at(h, OFF_CRC);
    let computed = header_crc(h);
    if stored != computed {
        return Err(bad(
            OFF_CRC,
            format!("PM log header crc mismatch: stored {stored:#010x}, computed {computed:#010x}"),
        ));
    }
    let file_size = u64_at(h, OFF_FILE_SIZE);
    if file_size < PM_LOG_HEADER_LEN as u64 {
        return Err(bad(OFF_FILE_SIZE, format!("file_size {file_size} < 64")));
    }
    let used_size = u64_at(h, OFF_USED_SIZE);
    if used_size < PM_LOG_HEADER_LEN as u64 || used_size > file_size {
        return Err(bad(
            OFF_USED_SIZE,
            format!("used_size {used_size} outside [64, file_size {file_size}]"),
        ));
    }
    let written_size = u64_at(h, OFF_WRITTEN_SIZE);
    if written_size != 0 && !(PM_LOG_HEADER_LEN as u64..=file_size).contains(&written_size) {
        return Err(bad(
            OFF_WRITTEN_SIZE,
            format!("written_size {written_size} outside [64, file_size {file_size}]"),
        ));
    }
    Ok(PmLogHeader {
        version,
        number: u64_at(h, OFF_NUMBER),
        file_size,
        used_size,
        written_size,
        replaces: u64_at(h, OFF_REPLACES),
        gc_complete: u64_at(h, OFF_FLAGS) & FLAG_GC_COMPLETE != 0,
    })
}

/// [`decode_header`] for the log in a file (region) of `len` bytes whose name gives `number`:
/// also `file_size` must equal `len` and the header's number the name's. For recovery and check.
pub fn decode_header_checked(
    bytes: &[u8],
    len: u64,
    number: Option<u64>,
    path: &Path,
) -> Result<PmLogHeader> {
    let h = decode_header(bytes, path)?;
    if h.file_size != len {
        let detail = format!(
            "file_size {} in header, but the file has {len} bytes",
            h.file_size
        );
        return Err(Error::corruption(path, OFF_FILE_SIZE as u64, detail));
    }
    if number.is_some_and(|n| n != h.number) {
        let detail = format!(
            "header says log number {}, file name says otherwise",
            h.number
        );
        return Err(Error::corruption(path, OFF_NUMBER as u64, detail));
    }
    Ok(h)
}

/// True for the header of a log whose creation a crash interrupted: the magic word (stored
/// last at creation) is still zero and nothing was committed (`used_size` <= 64). Such a log
/// never held data and may be deleted. `bytes` shorter than a header is not blank (it is damage).
pub fn is_blank_header(bytes: &[u8]) -> bool {
    bytes.len() >= PM_LOG_HEADER_LEN
        && u64_at(bytes, 0) == 0
        && u64_at(bytes, OFF_USED_SIZE) <= PM_LOG_HEADER_LEN as u64
}

/// Size of an entry with these key and value lengths: 21-byte entry header + key + value.
pub fn encoded_entry_len(key_len: usize, value_len: usize) -> usize {
    ENTRY_HEADER_LEN + key_len + value_len
}

/// Appends the encoding of `e` to `out`; `ends_batch` marks the last entry of a WriteBatch and
/// `crc_seed` is the log's [`PmLogHeader::entry_crc_seed`]. The caller has checked that the key
/// and value lengths fit in u32.
#[cfg(test)]
pub fn encode_entry(e: &LogEntry<'_>, ends_batch: bool, crc_seed: u32, out: &mut Vec<u8>) {
    out.extend_from_slice(&encode_entry_header(e, ends_batch, crc_seed));
    out.extend_from_slice(e.key);
    out.extend_from_slice(e.value);
}

/// The first [`ENTRY_HEADER_LEN`] bytes of `e`'s encoding, crc included: followed by the key
/// and the value they form the entry [`encode_entry`] writes, so an appender can copy key and
/// value straight from the caller's slices into PM.
pub fn encode_entry_header(
    e: &LogEntry<'_>,
    ends_batch: bool,
    crc_seed: u32,
) -> [u8; ENTRY_HEADER_LEN] {
    let mut h = [0u8; ENTRY_HEADER_LEN];
    h[4..12].copy_from_slice(&e.seq.to_le_bytes());
    h[12] = e.kind as u8 | if ends_batch { KIND_BATCH_END } else { 0 };
    h[13..17].copy_from_slice(&(e.key.len() as u32).to_le_bytes());
    h[17..21].copy_from_slice(&(e.value.len() as u32).to_le_bytes());
    let crc = crc32c_extend(
        crc32c_extend(crc32c_extend(crc_seed, &h[4..]), e.key),
        e.value,
    );
    h[..4].copy_from_slice(&crc.to_le_bytes());
    h
}

/// Decodes the entry at the start of `bytes` (which ends where the readable log ends), verifying
/// its crc (seeded with the log's [`PmLogHeader::entry_crc_seed`]). `offset` is the entry's
/// offset in the file, for errors. Returns the entry and its encoded length. Never panics.
pub fn decode_entry<'a>(
    bytes: &'a [u8],
    offset: u64,
    crc_seed: u32,
    path: &Path,
) -> Result<(LogEntry<'a>, usize)> {
    let total = entry_extent(bytes, offset, path)?;
    let stored = u32_at(bytes, 0);
    let computed = crc32c_extend(crc_seed, &bytes[4..total]);
    if stored != computed {
        return Err(Error::corruption(
            path,
            offset,
            format!("PM log entry crc mismatch: stored {stored:#010x}, computed {computed:#010x}"),
        ));
    }
    parse_entry(&bytes[..total], offset, path)
}

/// Like [`decode_entry`] without the crc: for entries this process already verified or wrote
/// (see `EntryOffset` in `log.rs`). Every length is still checked, so it never panics and never
/// reads past `bytes`.
pub(super) fn decode_entry_unverified<'a>(
    bytes: &'a [u8],
    offset: u64,
    path: &Path,
) -> Result<(LogEntry<'a>, usize)> {
    let total = entry_extent(bytes, offset, path)?;
    parse_entry(&bytes[..total], offset, path)
}

/// The encoded length of the entry at the start of `bytes`, checked to fit in `bytes`.
fn entry_extent(bytes: &[u8], offset: u64, path: &Path) -> Result<usize> {
    let bad = |detail: String| Error::corruption(path, offset, detail);
    if bytes.len() < ENTRY_HEADER_LEN {
        return Err(bad(format!(
            "PM log entry header runs past the end of the log ({} of {ENTRY_HEADER_LEN} bytes)",
            bytes.len()
        )));
    }
    let key_len = u32_at(bytes, 13) as usize;
    let value_len = u32_at(bytes, 17) as usize;
    let total = (ENTRY_HEADER_LEN as u64) + key_len as u64 + value_len as u64;
    if total > bytes.len() as u64 {
        return Err(bad(format!(
            "PM log entry of {total} bytes (key {key_len}, value {value_len}) runs past the end \
             of the log ({} bytes left)",
            bytes.len()
        )));
    }
    Ok(total as usize)
}

/// The fields of an entry whose extent [`entry_extent`] checked (`bytes` is exactly the entry).
fn parse_entry<'a>(bytes: &'a [u8], offset: u64, path: &Path) -> Result<(LogEntry<'a>, usize)> {
    let bad = |detail: String| Error::corruption(path, offset, detail);
    let seq = u64_at(bytes, 4);
    if seq > MAX_SEQUENCE {
        return Err(bad(format!(
            "PM log entry sequence {seq} exceeds the maximum"
        )));
    }
    let kind_byte = bytes[ENTRY_OFF_KIND] & !KIND_BATCH_END;
    let kind = ValueKind::from_u8(kind_byte)
        .ok_or_else(|| bad(format!("PM log entry has unknown kind {kind_byte}")))?;
    let key_len = u32_at(bytes, 13) as usize;
    let entry = LogEntry {
        seq,
        kind,
        key: &bytes[ENTRY_HEADER_LEN..ENTRY_HEADER_LEN + key_len],
        value: &bytes[ENTRY_HEADER_LEN + key_len..],
    };
    Ok((entry, bytes.len()))
}

/// Where a log's accepted entries end, as found by [`for_each_entry_in`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogExtent {
    /// End offset of the last accepted batch (at least `used_size`).
    pub end: u64,
    /// Bytes of `[end, written_size)` discarded as a torn tail.
    pub discarded: u64,
}

/// Decodes a log's entries as recovery accepts them, calling `f(offset, entry)` in log order.
/// `log` starts at the log's first byte; `h` is its decoded header.
///
/// - `[64, used_size)` is the durable part: every entry must decode, fit and match its crc, or
///   the walk fails with [`Error::Corruption`] naming `path` and the entry's offset.
/// - `[used_size, written_size)` is the tail a power failure may have torn (a process crash
///   leaves it whole). Its entries are accepted while each decodes, matches its crc and has a
///   sequence above every earlier entry of the log, and only up to the last entry that ends a
///   batch; the first failure ends the log. (Bytes of a region's earlier life fail the crc,
///   which is seeded with the log number, and carry lower sequences.)
///
/// An error from `f` stops the walk and is returned. Never panics.
pub fn for_each_entry_in<'a>(
    log: &'a [u8],
    h: &PmLogHeader,
    path: &Path,
    mut f: impl FnMut(u64, LogEntry<'a>) -> Result<()>,
) -> Result<LogExtent> {
    let used = (h.used_size as usize).min(log.len());
    let seed = h.entry_crc_seed();
    let mut max_seq = 0;
    let mut pos = PM_LOG_HEADER_LEN;
    while pos < used {
        let (entry, len) = decode_entry(&log[pos..used], pos as u64, seed, path)?;
        max_seq = max_seq.max(entry.seq);
        f(pos as u64, entry)?;
        pos += len;
    }
    let written = (h.written_size.max(h.used_size) as usize).min(log.len());
    let end = walk_tail(&log[..written], used, (max_seq, seed), path, &mut f)?;
    Ok(LogExtent {
        end: end as u64,
        discarded: (written - end) as u64,
    })
}

/// The tolerant part of [`for_each_entry_in`], from `start` with the largest sequence seen so
/// far and the crc seed: returns the end of the last accepted batch.
fn walk_tail<'a>(
    log: &'a [u8],
    start: usize,
    (mut max_seq, seed): (u64, u32),
    path: &Path,
    f: &mut impl FnMut(u64, LogEntry<'a>) -> Result<()>,
) -> Result<usize> {
    let (mut pos, mut accepted) = (start, start);
    let mut batch: Vec<(u64, LogEntry<'a>)> = Vec::new();
    while let Ok((entry, len)) = decode_entry(&log[pos..], pos as u64, seed, path) {
        if entry.seq <= max_seq {
            break;
        }
        max_seq = entry.seq;
        let ends_batch = log[pos + ENTRY_OFF_KIND] & KIND_BATCH_END != 0;
        batch.push((pos as u64, entry));
        pos += len;
        if ends_batch {
            batch.drain(..).try_for_each(|(o, e)| f(o, e))?;
            accepted = pos;
        }
    }
    Ok(accepted)
}
