//! Write-ahead logs: the durability of write buffers that live in DRAM (the `leveled`
//! profile's memtable, MatrixKV's). FlatLSM's own PMTables need none: their PM Log is durable.
//!
//! One log per write buffer, `NNNNNN.log` (the buffer's number), in the WAL directory.
//!
//! Format (little-endian; docs/wal-format.md):
//! - header, 16 bytes: magic `FLSMWAL1`, then the log's number (u64);
//! - records, each `payload_len: u32, len_crc: u32, crc: u32, payload`, where `len_crc` is the
//!   crc32c of the 4 length bytes (so a damaged length is told from a cut record) and `crc` the
//!   crc32c of the payload; the payload is one write batch:
//!   `first_seq: u64, count: u32`, then `count` entries `kind: u8, key_len: varint, key,
//!   value_len: varint, value`; entry i has sequence `first_seq + i`;
//! - the first record is the *sequence marker*: an empty batch (`count` 0) whose `first_seq`
//!   is one above the last sequence every older log, range tombstone and the tree hold (logs
//!   written before markers existed have none; an empty batch anywhere else is no-op).
//!
//! Persist order: the header and the marker are written and synced, and the directory synced,
//! before the manifest names the log (`create`); a batch's record is handed to the OS before the
//! batch enters the write buffer (so a process crash loses nothing acknowledged) and synced
//! first when the write asks for `sync`. A log is synced whole before a newer log is created
//! (its buffer sealed, or the open that recovered it starting the next), so only the newest log
//! can have an unsynced tail. A log is deleted only after the manifest no longer names it (its
//! buffer was flushed: the number is below `min_unflushed_pmlog`).
//!
//! Recovery rule of one log ([`replay`]): records are replayed in order until the file ends.
//! The tail a crash can leave after the last synced record — fewer bytes than a record header,
//! only zero bytes, a record whose (checked) length runs past the end of the file, or a last
//! record whose payload fails its crc with nothing but zero bytes after it — is a torn tail: a
//! write never acknowledged as synced, reported (`WalReplay::torn_tail`). Anything else that
//! does not check — a record header failing its crc with data after it, a bad payload followed
//! by more data, a bad file header, an undecodable payload with a good crc — is
//! [`crate::Error::Corruption`] naming the file and offset: damage is refused, never skipped
//! ([`replay_prefix`] returns it beside the records before it). Across logs (the engine's
//! `db/wal_rules.rs`): only the newest log may have a torn tail, and each log must end where
//! the next one's marker says the older ones end.
//!
//! Thread-safety: a [`WalWriter`] has one owner (the writer holding the write lock).

mod reader;
#[cfg(test)]
mod tests;
mod writer;

pub use reader::{replay, replay_prefix, WalReplay};
pub use writer::WalWriter;

/// First bytes of every write-ahead log.
pub const WAL_MAGIC: &[u8; 8] = b"FLSMWAL1";
/// Length of the header (magic + number).
pub const WAL_HEADER_LEN: usize = 16;
/// Length of a record header (payload length, its crc, the payload's crc).
pub const WAL_RECORD_HEADER_LEN: usize = 12;
/// Length of a payload's fixed part (first sequence + count).
const PAYLOAD_FIXED_LEN: usize = 12;
/// Length of the sequence marker record (a batch of no entries).
pub const WAL_MARKER_LEN: usize = WAL_RECORD_HEADER_LEN + PAYLOAD_FIXED_LEN;
