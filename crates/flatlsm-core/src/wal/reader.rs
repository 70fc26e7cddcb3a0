//! Replaying a write-ahead log at recovery (the recovery rule is in `mod.rs`).

use super::{PAYLOAD_FIXED_LEN, WAL_HEADER_LEN, WAL_MAGIC, WAL_RECORD_HEADER_LEN};
use crate::error::{Error, IoContext, Result};
use crate::file_names::wal_file_name;
use crate::fs::FileSystem;
use crate::types::{crc32c, ValueKind};
use crate::version::coding::Decoder;
use std::path::Path;

/// What a replay found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct WalReplay {
    /// Records (batches) replayed.
    pub records: u64,
    /// Entries replayed.
    pub entries: u64,
    /// Bytes of the records replayed (record headers included).
    pub bytes: u64,
    /// The largest sequence replayed (0 if none).
    pub max_sequence: u64,
    /// Why the replay stopped before the end of the file (a torn tail), if it did.
    pub torn_tail: Option<String>,
}

/// Replays log `number` of `dir`, calling `apply(seq, kind, key, value)` for every entry of
/// every whole record, in order.
pub fn replay(
    fs: &dyn FileSystem,
    dir: &Path,
    number: u64,
    mut apply: impl FnMut(u64, ValueKind, &[u8], &[u8]) -> Result<()>,
) -> Result<WalReplay> {
    let path = dir.join(wal_file_name(number));
    let data = fs
        .read_all(&path)
        .context(|| format!("reading {}", path.display()))?;
    check_header(&data, &path, number)?;
    let mut out = WalReplay::default();
    let mut pos = WAL_HEADER_LEN;
    while pos < data.len() {
        match record_at(&data, pos, &path)? {
            Record::Whole(payload) => {
                decode_payload(
                    payload,
                    &path,
                    pos + WAL_RECORD_HEADER_LEN,
                    &mut out,
                    &mut apply,
                )?;
                out.records += 1;
                out.bytes += (WAL_RECORD_HEADER_LEN + payload.len()) as u64;
                pos += WAL_RECORD_HEADER_LEN + payload.len();
            }
            Record::TornTail(why) => {
                out.torn_tail = Some(format!("{} at offset {pos}: {why}", path.display()));
                break;
            }
        }
    }
    Ok(out)
}

fn check_header(data: &[u8], path: &Path, number: u64) -> Result<()> {
    if data.len() < WAL_HEADER_LEN || &data[..8] != WAL_MAGIC {
        return Err(Error::corruption(
            path,
            0,
            "not a write-ahead log header (magic FLSMWAL1)",
        ));
    }
    let recorded = u64::from_le_bytes(data[8..16].try_into().expect("8 bytes"));
    if recorded != number {
        let detail = format!("the header names log {recorded}, expected {number}");
        return Err(Error::corruption(path, 8, detail));
    }
    Ok(())
}

/// A record read at some offset.
enum Record<'a> {
    /// A record whose crc matches: its payload.
    Whole(&'a [u8]),
    /// The file ends inside the record, or the record fails its crc with only zero bytes
    /// after it: a write a crash interrupted.
    TornTail(&'static str),
}

fn record_at<'a>(data: &'a [u8], pos: usize, path: &Path) -> Result<Record<'a>> {
    let rest = &data[pos..];
    if rest.iter().all(|&b| b == 0) {
        return Ok(Record::TornTail("only zero bytes follow"));
    }
    if rest.len() < WAL_RECORD_HEADER_LEN {
        return Ok(Record::TornTail("the file ends inside a record header"));
    }
    let word = |i: usize| u32::from_le_bytes(rest[i..i + 4].try_into().expect("4 bytes"));
    if crc32c(&rest[..4]) != word(4) {
        let detail = "record header checksum mismatch with data after it";
        return Err(Error::corruption(path, pos as u64, detail));
    }
    let end = WAL_RECORD_HEADER_LEN.saturating_add(word(0) as usize);
    if end > rest.len() {
        return Ok(Record::TornTail("the file ends inside a record"));
    }
    let payload = &rest[WAL_RECORD_HEADER_LEN..end];
    if crc32c(payload) == word(8) {
        return Ok(Record::Whole(payload));
    }
    if rest[end..].iter().all(|&b| b == 0) {
        return Ok(Record::TornTail("the last record fails its checksum"));
    }
    let detail = "record checksum mismatch with more records after it";
    Err(Error::corruption(path, pos as u64, detail))
}

fn decode_payload(
    payload: &[u8],
    path: &Path,
    offset: usize,
    out: &mut WalReplay,
    apply: &mut impl FnMut(u64, ValueKind, &[u8], &[u8]) -> Result<()>,
) -> Result<()> {
    if payload.len() < PAYLOAD_FIXED_LEN {
        return Err(Error::corruption(
            path,
            offset as u64,
            "record shorter than its batch header",
        ));
    }
    let first = u64::from_le_bytes(payload[..8].try_into().expect("8 bytes"));
    let count = u32::from_le_bytes(payload[8..12].try_into().expect("4 bytes"));
    let mut d = Decoder::new(
        &payload[PAYLOAD_FIXED_LEN..],
        path,
        (offset + PAYLOAD_FIXED_LEN) as u64,
    );
    for i in 0..u64::from(count) {
        let kind = d.byte("entry kind")?;
        let kind = ValueKind::from_u8(kind)
            .filter(|k| *k != ValueKind::ValuePointer)
            .ok_or_else(|| d.error(format!("unknown entry kind {kind}")))?;
        let key = d.bytes("key")?;
        let value = d.bytes("value")?;
        let seq = first
            .checked_add(i)
            .ok_or_else(|| d.error("sequence overflow"))?;
        apply(seq, kind, key, value)?;
        out.max_sequence = out.max_sequence.max(seq);
        out.entries += 1;
    }
    if !d.is_empty() {
        return Err(d.error("bytes after the batch's last entry"));
    }
    Ok(())
}
