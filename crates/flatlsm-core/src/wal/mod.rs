//! Write-ahead logs: the durability of write buffers that live in DRAM (the `leveled`
//! profile's memtable, MatrixKV's). FlatLSM's own PMTables need none: their PM Log is durable.
//!
//! One log per write buffer, `NNNNNN.log` (the buffer's number), in the WAL directory.
//!
//! Format 2 (little-endian; docs/wal-format.md), written since format 1 could not tell a power
//! cut's out-of-order page write-back from damage:
//! - header, 16 bytes: magic `FLSMWAL2`, then the log's number (u64);
//! - records, each `payload_len: u32, len_crc: u32, crc: u32, payload`, where `len_crc` is the
//!   crc32c of the 4 length bytes (so a damaged length is told from a cut record) and `crc` the
//!   crc32c of the log's number (u64), the record's offset (u64) and the payload, so a record
//!   checks only where it was written (a copy inside a value, or in another log, does not);
//!   the payload is one write batch: `first_seq: u64, count: u32, synced: u64`, then `count`
//!   entries `kind: u8, key_len: varint, key, value_len: varint, value`; entry i has sequence
//!   `first_seq + i`; `synced` is how many bytes of the log were known durable (its last
//!   successful sync) when the record was appended;
//! - the first record is the *sequence marker*: an empty batch (`count` 0) whose `first_seq`
//!   is one above the last sequence every older log, range tombstone and the tree hold; an
//!   empty batch anywhere else is a no-op (close writes one, the *seal*, see below).
//!
//! Format 1 (magic `FLSMWAL1`, read only): no `synced` field, `crc` of the payload alone, and no
//! marker in logs written before markers existed. Code before format 2 refuses a format-2 log
//! cleanly (its magic), and format-1 logs keep format 1's recovery rule.
//!
//! Persist order: the header and the marker are written and synced, and the directory synced,
//! before the manifest names the log (`create`); a batch's record is handed to the OS before the
//! batch enters the write buffer (so a process crash loses nothing acknowledged) and synced
//! first when the write asks for `sync`. A log is synced whole before a newer log is created
//! (its buffer sealed, or the open that recovered it starting the next), so only the newest log
//! can have an unsynced tail. Close syncs the log, then appends the seal (an empty batch whose
//! `synced` is the whole log) and syncs it, so every byte before it is attested synced. A log
//! is deleted only after the manifest no longer names it (its buffer was flushed: the number is
//! below `min_unflushed_pmlog`).
//!
//! Recovery rule of one log ([`replay`]): records are replayed in order until the first one
//! that is not whole (at offset `d`: zero bytes, a short header, a header failing `len_crc`, a
//! length past the end, a payload failing `crc`) or the end of the file. In format 2, the bytes
//! from `d` on are *synced* if the header and marker cover `d` (synced at creation) or some
//! whole record after `d` (found by trying every offset) records `synced > d`: that record was
//! appended after a sync covering `d` had returned. Synced bytes that do not check are damage:
//! [`crate::Error::Corruption`] naming the file and `d`. Otherwise they are the unsynced tail a
//! power cut left — the kernel writes dirty pages back in any order, so a lost page may be
//! followed by a kept one — a *torn tail*: replay ends at `d` and the bytes are dropped
//! (`WalReplay::torn_tail` names the file, `d` and the bytes dropped). Damage in the last
//! synced records with no whole record after it cannot be told from a torn tail, as in every
//! log format. In format 1, a torn tail is fewer bytes than a record header, only zero bytes, a
//! length past the end, or a last record failing its crc with only zeros after it; anything
//! else is damage. In both formats a whole record that does not decode (or, in format 2,
//! records `synced` past its own offset) is damage; damage is never skipped ([`replay_prefix`]
//! returns it beside the records before it). Across logs (the engine's `recovery/wal_rules.rs`):
//! only the newest log may have a torn tail, and each log must end where the next one's marker
//! says the older ones end.
//!
//! Thread-safety: a [`WalWriter`] has one owner (the writer holding the write lock).

#[cfg(test)]
mod power_cut_tests;
mod reader;
mod tail;
#[cfg(test)]
mod tests;
mod writer;

pub use reader::{replay, replay_prefix, WalReplay};
pub use writer::WalWriter;

/// First bytes of every write-ahead log written now (format 2).
pub const WAL_MAGIC: &[u8; 8] = b"FLSMWAL2";
/// First bytes of a format-1 log (read only).
pub const WAL_MAGIC_V1: &[u8; 8] = b"FLSMWAL1";
/// Length of the header (magic + number).
pub const WAL_HEADER_LEN: usize = 16;
/// Length of a record header (payload length, its crc, the payload's crc).
pub const WAL_RECORD_HEADER_LEN: usize = 12;
/// Length of a format-2 payload's fixed part (first sequence, count, synced length).
const PAYLOAD_FIXED_LEN: usize = 20;
/// Length of a format-1 payload's fixed part (first sequence, count).
const PAYLOAD_FIXED_LEN_V1: usize = 12;
/// Length of the sequence marker record (a batch of no entries) written now.
pub const WAL_MARKER_LEN: usize = WAL_RECORD_HEADER_LEN + PAYLOAD_FIXED_LEN;

/// A log's format, told by its magic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    /// `FLSMWAL1`: payload crc only, no synced length.
    V1,
    /// `FLSMWAL2`: records bound to their log and offset, each with the synced length.
    V2,
}

impl Format {
    /// Length of a payload's fixed part.
    fn fixed_len(self) -> usize {
        match self {
            Format::V1 => PAYLOAD_FIXED_LEN_V1,
            Format::V2 => PAYLOAD_FIXED_LEN,
        }
    }
}

/// The `crc` of a record at offset `pos` of log `number` with `payload` (module format).
fn record_crc(format: Format, number: u64, pos: usize, payload: &[u8]) -> u32 {
    if format == Format::V1 {
        return crate::types::crc32c(payload);
    }
    let mut place = [0u8; 16];
    place[..8].copy_from_slice(&number.to_le_bytes());
    place[8..].copy_from_slice(&(pos as u64).to_le_bytes());
    crate::types::crc32c_extend(crate::types::crc32c(&place), payload)
}
