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
    /// Why the replay stopped before the end of the file (a torn tail), if it did.
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
    if let Err(e) = check_header(&data, &path, number) {
        return Ok((out, Some(e)));
    }
    let damage = replay_records(&data, &path, &mut out, &mut apply)?;
    Ok((out, damage))
}

/// Replays the records after the header into `out`; the damage that stopped it, if any.
fn replay_records(
    data: &[u8],
    path: &Path,
    out: &mut WalReplay,
    apply: &mut impl FnMut(u64, ValueKind, &[u8], &[u8]) -> Result<()>,
) -> Result<Option<Error>> {
    let mut pos = WAL_HEADER_LEN;
    out.end = pos as u64;
    while pos < data.len() {
        let payload = match record_at(data, pos, path) {
            Ok(Record::Whole(payload)) => payload,
            Ok(Record::TornTail(why)) => {
                out.torn_tail = Some(format!("{} at offset {pos}: {why}", path.display()));
                return Ok(None);
            }
            Err(e) => return Ok(Some(e)),
        };
        let at = pos + WAL_RECORD_HEADER_LEN;
        if let Some(e) = decode_payload(payload, path, at, pos == WAL_HEADER_LEN, out, apply)? {
            return Ok(Some(e));
        }
        pos += WAL_RECORD_HEADER_LEN + payload.len();
        out.end = pos as u64;
    }
    Ok(None)
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

/// One decoded entry: sequence, kind, key, value.
type Entry<'a> = (u64, ValueKind, &'a [u8], &'a [u8]);

/// Applies one record's entries (`first`: it is the log's first record, where an empty batch
/// is the sequence marker); `Ok(Some)` with the damage if the payload does not decode. The
/// batch is decoded whole before any entry is applied: a batch is never split.
fn decode_payload(
    payload: &[u8],
    path: &Path,
    offset: usize,
    first: bool,
    out: &mut WalReplay,
    apply: &mut impl FnMut(u64, ValueKind, &[u8], &[u8]) -> Result<()>,
) -> Result<Option<Error>> {
    let batch = match decode_batch(payload, path, offset) {
        Ok(b) => b,
        Err(e) => return Ok(Some(e)),
    };
    let marker = first && batch.entries.is_empty();
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

/// A decoded batch: its first sequence and its entries.
struct Batch<'a> {
    first_seq: u64,
    entries: Vec<Entry<'a>>,
}

/// Decodes a record's payload (at file offset `offset`): the batch header and every entry.
fn decode_batch<'a>(payload: &'a [u8], path: &'a Path, offset: usize) -> Result<Batch<'a>> {
    if payload.len() < PAYLOAD_FIXED_LEN {
        let detail = "record shorter than its batch header";
        return Err(Error::corruption(path, offset as u64, detail));
    }
    let first_seq = u64::from_le_bytes(payload[..8].try_into().expect("8 bytes"));
    let count = u32::from_le_bytes(payload[8..12].try_into().expect("4 bytes"));
    let base = (offset + PAYLOAD_FIXED_LEN) as u64;
    let mut d = Decoder::new(&payload[PAYLOAD_FIXED_LEN..], path, base);
    // Entries are at least 3 bytes: a count the payload cannot hold is refused by the decoder
    // before the vector grows past the payload.
    let mut entries = Vec::with_capacity((count as usize).min(payload.len() / 3));
    for i in 0..u64::from(count) {
        entries.push(decode_entry(&mut d, first_seq, i)?);
    }
    if !d.is_empty() {
        return Err(d.error("bytes after the batch's last entry"));
    }
    Ok(Batch { first_seq, entries })
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
