//! Replaying a write-ahead log at recovery (the recovery rule is in `mod.rs`).

use super::tail::{judge_tail, NotWhole};
use super::{record_crc, Format, WAL_HEADER_LEN, WAL_MAGIC, WAL_MAGIC_V1, WAL_RECORD_HEADER_LEN};
use crate::coding::Decoder;
use crate::error::{Error, IoContext, Result};
use crate::file_names::wal_file_name;
use crate::fs::FileSystem;
use crate::types::{crc32c, ValueKind};
use std::path::Path;

/// What a replay found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct WalReplay {
    /// Records (batches) replayed, the sequence marker not counted.
    pub records: u64,
    /// Entries replayed.
    pub entries: u64,
    /// Bytes of the records replayed (record headers included).
    pub bytes: u64,
    /// The largest sequence replayed (0 if none).
    pub max_sequence: u64,
    /// The sequence the log's first record (its marker, `mod.rs`) says every older log ends
    /// at; `None` for a log without one (written before markers were).
    pub after: Option<u64>,
    /// The offset just past the last whole record replayed: where a torn tail or the damage
    /// starts, else the file's length.
    pub end: u64,
    /// The file's length.
    pub len: u64,
    /// Why the replay stopped before the end of the file (a torn tail: the file, the offset,
    /// why, the bytes dropped), if it did.
    pub torn_tail: Option<String>,
}

/// Replays log `number` of `dir`, calling `apply(seq, kind, key, value)` for every entry of
/// every whole record, in order. Damage is [`Error::Corruption`] naming the file and offset.
pub fn replay(
    fs: &dyn FileSystem,
    dir: &Path,
    number: u64,
    apply: impl FnMut(u64, ValueKind, &[u8], &[u8]) -> Result<()>,
) -> Result<WalReplay> {
    let (replay, damage) = replay_prefix(fs, dir, number, apply)?;
    match damage {
        Some(e) => Err(e),
        None => Ok(replay),
    }
}

/// [`replay`] up to the first damage, which is returned beside what was replayed before it
/// (for recovery to a point in time, and for a check that judges every log). `Err` only when
/// the file cannot be read or `apply` fails.
pub fn replay_prefix(
    fs: &dyn FileSystem,
    dir: &Path,
    number: u64,
    mut apply: impl FnMut(u64, ValueKind, &[u8], &[u8]) -> Result<()>,
) -> Result<(WalReplay, Option<Error>)> {
    let path = dir.join(wal_file_name(number));
    let data = fs
        .read_all(&path)
        .context(|| format!("reading {}", path.display()))?;
    let mut out = WalReplay {
        len: data.len() as u64,
        ..WalReplay::default()
    };
    let format = match check_header(&data, &path, number) {
        Ok(format) => format,
        Err(e) => return Ok((out, Some(e))),
    };
    let log = Log {
        data: &data,
        path: &path,
        number,
        format,
    };
    let damage = replay_records(&log, &mut out, &mut apply)?;
    Ok((out, damage))
}

/// A log's bytes and what they are read as.
pub(super) struct Log<'a> {
    pub data: &'a [u8],
    pub path: &'a Path,
    pub number: u64,
    pub format: Format,
}

/// Replays the records after the header into `out`; the damage that stopped it, if any.
fn replay_records(
    log: &Log<'_>,
    out: &mut WalReplay,
    apply: &mut impl FnMut(u64, ValueKind, &[u8], &[u8]) -> Result<()>,
) -> Result<Option<Error>> {
    let mut pos = WAL_HEADER_LEN;
    out.end = pos as u64;
    if log.format == Format::V2 && log.data.len() == pos {
        // The marker, synced with the header at creation, is missing.
        return Ok(judge_tail(log, pos, NotWhole::ShortHeader, out));
    }
    while pos < log.data.len() {
        let payload = match record_at(log, pos) {
            Ok(payload) => payload,
            Err(not_whole) => return Ok(judge_tail(log, pos, not_whole, out)),
        };
        if let Some(e) = decode_payload(log, payload, pos, out, apply)? {
            return Ok(Some(e));
        }
        pos += WAL_RECORD_HEADER_LEN + payload.len();
        out.end = pos as u64;
    }
    Ok(None)
}

/// The log's format, from a header that names log `number`.
fn check_header(data: &[u8], path: &Path, number: u64) -> Result<Format> {
    let format = match data.get(..8) {
        _ if data.len() < WAL_HEADER_LEN => None,
        Some(m) if m == WAL_MAGIC => Some(Format::V2),
        Some(m) if m == WAL_MAGIC_V1 => Some(Format::V1),
        _ => None,
    };
    let Some(format) = format else {
        let detail = "not a write-ahead log header (magic FLSMWAL2, or FLSMWAL1)";
        return Err(Error::corruption(path, 0, detail));
    };
    let recorded = u64::from_le_bytes(data[8..16].try_into().expect("8 bytes"));
    if recorded != number {
        let detail = format!("the header names log {recorded}, expected {number}");
        return Err(Error::corruption(path, 8, detail));
    }
    Ok(format)
}

/// The payload of the whole record at `pos` (both checksums match, in the file), or why the
/// record there is not whole.
fn record_at<'a>(log: &Log<'a>, pos: usize) -> std::result::Result<&'a [u8], NotWhole> {
    // Short-circuits at the first byte of a record (its length is never 0).
    if log.data[pos..].iter().all(|&b| b == 0) {
        return Err(NotWhole::Zeros);
    }
    whole_at(log, pos)
}

/// [`record_at`] without the check for zeros (which a scan over every offset cannot afford).
pub(super) fn whole_at<'a>(log: &Log<'a>, pos: usize) -> std::result::Result<&'a [u8], NotWhole> {
    let rest = &log.data[pos..];
    if rest.len() < WAL_RECORD_HEADER_LEN {
        return Err(NotWhole::ShortHeader);
    }
    let word = |i: usize| u32::from_le_bytes(rest[i..i + 4].try_into().expect("4 bytes"));
    if crc32c(&rest[..4]) != word(4) {
        return Err(NotWhole::BadHeader);
    }
    let end = WAL_RECORD_HEADER_LEN.saturating_add(word(0) as usize);
    if end > rest.len() {
        return Err(NotWhole::PastEnd);
    }
    let payload = &rest[WAL_RECORD_HEADER_LEN..end];
    match record_crc(log.format, log.number, pos, payload) == word(8) {
        true => Ok(payload),
        false => Err(NotWhole::BadPayload { end: pos + end }),
    }
}

/// One decoded entry: sequence, kind, key, value.
pub(super) type Entry<'a> = (u64, ValueKind, &'a [u8], &'a [u8]);

/// Applies the entries of the whole record at `pos` (the log's first record, an empty batch,
/// is the sequence marker); `Ok(Some)` with the damage if the payload does not decode. The
/// batch is decoded whole before any entry is applied: a batch is never split.
fn decode_payload(
    log: &Log<'_>,
    payload: &[u8],
    pos: usize,
    out: &mut WalReplay,
    apply: &mut impl FnMut(u64, ValueKind, &[u8], &[u8]) -> Result<()>,
) -> Result<Option<Error>> {
    let batch = match decode_batch(log, payload, pos) {
        Ok(b) => b,
        Err(e) => return Ok(Some(e)),
    };
    let marker = pos == WAL_HEADER_LEN && batch.entries.is_empty();
    if marker {
        out.after = Some(batch.first_seq.saturating_sub(1));
    }
    for &(seq, kind, key, value) in &batch.entries {
        apply(seq, kind, key, value)?;
        out.max_sequence = out.max_sequence.max(seq);
        out.entries += 1;
    }
    if !marker {
        out.records += 1;
        out.bytes += (WAL_RECORD_HEADER_LEN + payload.len()) as u64;
    }
    Ok(None)
}

/// A decoded batch: its first sequence, the synced length it records (0 in format 1) and its
/// entries.
pub(super) struct Batch<'a> {
    pub first_seq: u64,
    pub synced: u64,
    pub entries: Vec<Entry<'a>>,
}

/// Decodes the payload of the whole record at `pos`: the batch header and every entry.
pub(super) fn decode_batch<'a>(log: &Log<'a>, payload: &'a [u8], pos: usize) -> Result<Batch<'a>> {
    let (first_seq, count, synced) = batch_header(log, payload, pos)?;
    let fixed = log.format.fixed_len();
    let at = (pos + WAL_RECORD_HEADER_LEN + fixed) as u64;
    let mut d = Decoder::new(&payload[fixed..], log.path, at);
    let entries = decode_entries(&mut d, first_seq, count, payload.len())?;
    Ok(Batch {
        first_seq,
        synced,
        entries,
    })
}

/// The fixed part of the payload of the record at `pos`: first sequence, count and (format 2)
/// the synced length, which cannot be past the record's own offset.
fn batch_header(log: &Log<'_>, payload: &[u8], pos: usize) -> Result<(u64, u32, u64)> {
    if payload.len() < log.format.fixed_len() {
        let detail = "record shorter than its batch header";
        return Err(Error::corruption(
            log.path,
            (pos + WAL_RECORD_HEADER_LEN) as u64,
            detail,
        ));
    }
    let word = |i: usize| u64::from_le_bytes(payload[i..i + 8].try_into().expect("8 bytes"));
    let count = u32::from_le_bytes(payload[8..12].try_into().expect("4 bytes"));
    let synced = match log.format {
        Format::V1 => 0,
        Format::V2 => word(12),
    };
    if synced > pos as u64 {
        let detail =
            format!("the record says the log was synced up to offset {synced}, past itself");
        return Err(Error::corruption(log.path, pos as u64, detail));
    }
    Ok((word(0), count, synced))
}

/// The `count` entries of a batch numbered from `first_seq` (`len`: the payload's length).
fn decode_entries<'a>(
    d: &mut Decoder<'a>,
    first_seq: u64,
    count: u32,
    len: usize,
) -> Result<Vec<Entry<'a>>> {
    // Entries are at least 3 bytes: a count the payload cannot hold is refused by the decoder
    // before the vector grows past the payload.
    let mut entries = Vec::with_capacity((count as usize).min(len / 3));
    for i in 0..u64::from(count) {
        entries.push(decode_entry(d, first_seq, i)?);
    }
    if !d.is_empty() {
        return Err(d.error("bytes after the batch's last entry"));
    }
    Ok(entries)
}

/// Entry `i` of a batch whose first sequence is `first_seq`.
fn decode_entry<'a>(d: &mut Decoder<'a>, first_seq: u64, i: u64) -> Result<Entry<'a>> {
    let kind = d.byte("entry kind")?;
    let kind = ValueKind::from_u8(kind)
        .filter(|k| *k != ValueKind::ValuePointer)
        .ok_or_else(|| d.error(format!("unknown entry kind {kind}")))?;
    let key = d.bytes("key")?;
    let value = d.bytes("value")?;
    let seq = first_seq
        .checked_add(i)
        .ok_or_else(|| d.error("sequence overflow"))?;
    Ok((seq, kind, key, value))
}
