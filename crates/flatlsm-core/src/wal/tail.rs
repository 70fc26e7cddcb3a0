//! What ends a replay before the end of the file: from the first record that is not whole, the
//! log is a torn tail (dropped) or damaged, by its format's rule (`mod.rs`, recovery rule).
//!
//! Format 2: the bytes there are damage if they are known synced — the header and the marker
//! (synced at creation) cover them, or a whole record after them records a synced length past
//! them. A whole record is found by trying every later offset: its header and payload
//! checksums must match, the payload's bound to this log and this offset (a record's bytes
//! copied inside a value do not check there), so a record found is one this log's writer
//! appended there, after every sync whose length it records had returned.

use super::reader::{decode_batch, whole_at, Log, WalReplay};
use super::{Format, PAYLOAD_FIXED_LEN, WAL_HEADER_LEN, WAL_MARKER_LEN, WAL_RECORD_HEADER_LEN};
use crate::error::Error;

/// Why the record at some offset is not whole.
#[derive(Clone, Copy, Debug)]
pub(super) enum NotWhole {
    /// Only zero bytes from there on.
    Zeros,
    /// Fewer bytes than a record header (none: a format-2 file that ends after its header).
    ShortHeader,
    /// The header fails `len_crc`.
    BadHeader,
    /// The (checked) length runs past the end of the file.
    PastEnd,
    /// The payload fails `crc`; the record would end at `end`.
    BadPayload { end: usize },
}

impl NotWhole {
    fn why(self) -> &'static str {
        match self {
            NotWhole::Zeros => "only zero bytes follow",
            NotWhole::ShortHeader => "the file ends before a whole record header",
            NotWhole::BadHeader => "record header checksum mismatch",
            NotWhole::PastEnd => "the file ends inside a record",
            NotWhole::BadPayload { .. } => "record checksum mismatch",
        }
    }
}

/// Judges the log from offset `pos`, where the record is `not_whole`: damage is returned, a
/// torn tail noted in `out` (`None` returned).
pub(super) fn judge_tail(
    log: &Log<'_>,
    pos: usize,
    not_whole: NotWhole,
    out: &mut WalReplay,
) -> Option<Error> {
    let damage = match log.format {
        Format::V1 => v1_damage(log, not_whole),
        Format::V2 => synced_past(log, pos).map(|synced| {
            let why = not_whole.why();
            format!("{why}, but {synced}: damage in synced bytes, not a power cut")
        }),
    };
    if let Some(detail) = damage {
        return Some(Error::corruption(log.path, pos as u64, detail));
    }
    out.torn_tail = Some(torn_note(log, pos, not_whole));
    None
}

/// The note on a torn tail at `pos`: the file, the offset, why, and the bytes dropped.
fn torn_note(log: &Log<'_>, pos: usize, not_whole: NotWhole) -> String {
    let unsynced = match log.format {
        Format::V1 => "",
        Format::V2 => {
            " in the unsynced tail (no whole record after it was written after a sync past it)"
        }
    };
    let dropped = log.data.len() - pos;
    let (path, why) = (log.path.display(), not_whole.why());
    format!("{path} at offset {pos}: {why}{unsynced}; {dropped} bytes dropped")
}

/// Format 1's rule: a header failing its crc with data after it, or a payload failing its crc
/// with more than zero bytes after it, is damage; any other record that is not whole is torn.
fn v1_damage(log: &Log<'_>, not_whole: NotWhole) -> Option<String> {
    match not_whole {
        NotWhole::BadHeader => Some("record header checksum mismatch with data after it".into()),
        NotWhole::BadPayload { end } if log.data[end..].iter().any(|&b| b != 0) => {
            Some("record checksum mismatch with more records after it".into())
        }
        _ => None,
    }
}

/// Why the bytes at `pos` of a format-2 log are known synced, if they are.
fn synced_past(log: &Log<'_>, pos: usize) -> Option<String> {
    let created = WAL_HEADER_LEN + WAL_MARKER_LEN;
    if pos < created {
        return Some(format!(
            "the header and the sequence marker (the first {created} bytes) were synced when \
             the log was created"
        ));
    }
    let (at, synced) = attesting_record(log, pos)?;
    Some(format!(
        "the whole record at offset {at} was written after the log was synced up to offset \
         {synced}"
    ))
}

/// The first whole record after `pos` that records a synced length past `pos`: its offset and
/// that length.
fn attesting_record(log: &Log<'_>, pos: usize) -> Option<(usize, u64)> {
    let last = log
        .data
        .len()
        .checked_sub(WAL_RECORD_HEADER_LEN + PAYLOAD_FIXED_LEN)?;
    (pos + 1..=last).find_map(|at| {
        let payload = whole_at(log, at).ok()?;
        // A record that does not decode (or records a synced length past its own offset) is
        // not one the writer appended: no proof.
        let batch = decode_batch(log, payload, at).ok()?;
        (batch.synced > pos as u64).then_some((at, batch.synced))
    })
}
