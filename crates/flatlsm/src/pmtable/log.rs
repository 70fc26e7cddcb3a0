//! The PM Log of a PMTable (paper 4.2.1–4.2.3): an append-only region of PM holding
//! variable-sized entries after a 64-byte header. The byte layout is in docs/pm-log-format.md
//! (encoding code: `log/format.rs`; the single writer: `log/writer.rs`).
//!
//! # Persist order (single writer)
//! 1. Creation: header bytes `[8, 64)` are written and persisted, then the first 8 bytes (magic,
//!    version) are stored atomically and persisted. A log whose magic word is zero and whose
//!    `used_size` is ≤ 64 was never fully created (and never held data).
//! 2. Appends: every batch is copied to the region at the tail (its last entry flagged as the
//!    end of the batch; values of ≥ 256 B with non-temporal stores, drained by a fence before
//!    the next step) and then `written_size` is stored (8-byte atomic, not persisted), before
//!    `append_batch` returns. So an acknowledged write is in the mapping, covered by
//!    `written_size`, and survives a process crash in every mode.
//! 3. Persisting (the Buffer Log of the paper, kept in place): in a cache-line mode (Dax,
//!    Emulated, Simulated) once ≥ 256 bytes are unpersisted (at once for a batch ≥ 256 B, in
//!    256-byte groups for small ones), and in every mode on [`PmLogWriter::commit`] (sync writes,
//!    the periodic group commit, sealing): the unpersisted bytes are persisted, *then*
//!    `used_size` is stored (8-byte atomic) and persisted.
//! 4. `used_size` only ever moves to a batch boundary, after every byte below it is durable.
//! 5. Repair alone may cut a log damaged in its durable part back to a batch boundary below the
//!    damage (`log/salvage.rs`): the whole log is copied aside first.
//!
//! # Recovery rule
//! `[64, used_size)` is durable: every entry there must decode and pass its crc (anything else is
//! corruption, reported with file and offset). `[used_size, written_size)` is a tail that a
//! power failure may have torn: whole batches of valid entries with rising sequence numbers are
//! accepted up to the first entry that fails (see `format::for_each_entry_in`), the rest is
//! discarded and [`PmLog::adopt_tail`] makes the accepted end durable. So after a crash a
//! batch is all-or-nothing, the surviving entries are a prefix of the append order, a process
//! crash loses nothing, and a power failure loses at most the unpersisted tail.
//!
//! # Checksums: verified at most once per process
//! An entry's crc guards the bytes between the process that wrote them and the one that reads
//! them back after a restart. Within one process it is checked at most once: an entry appended
//! here was encoded here, and an entry recovered at open was verified by the recovery scan. Both
//! hand out an [`EntryOffset`] (only this module can make one), and [`PmLog::entry_at`] reads
//! such an offset without the crc; [`PmLog::read_entry`] takes any offset and always verifies.
//!
//! # Concurrency
//! One [`PmLogWriter`] appends; any number of threads read through the shared [`PmLog`]. Readers
//! read only below the *readable* tail (an atomic the writer releases after copying bytes to the
//! region); the writer writes only at or above it. Header words that change later (`used_size`,
//! `written_size`, `flags`) are accessed only with atomic 8-byte loads and stores.

#[cfg(test)]
mod damage_tests;
#[cfg(test)]
mod entry_at_tests;
mod format;
mod salvage;
#[cfg(test)]
mod salvage_tests;
#[cfg(test)]
mod tests;
mod writer;

pub use format::{
    decode_entry, decode_header, decode_header_checked, encoded_entry_len, for_each_entry_in,
    is_blank_header, LogExtent,
};
pub use salvage::DurableDamage;
pub use writer::PmLogWriter;

use crate::file_names::{parse_pm_log_file_name, pm_log_file_name};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::pm::{PmDevice, PmRegion};
use crate::types::{SequenceNumber, ValueKind};
use format::{
    decode_entry_unverified, FLAG_GC_COMPLETE, OFF_FLAGS, OFF_USED_SIZE, OFF_WRITTEN_SIZE,
};

/// Size of the PM Log header.
pub const PM_LOG_HEADER_LEN: usize = 64;
/// Batches whose encoding is smaller than this are not persisted on their own (in cache-line
/// modes): they wait until [`BUFFER_FLUSH_BYTES`] are unpersisted (the paper's Buffer Log).
pub const SMALL_ENTRY_LIMIT: usize = 256;
/// Values at least this long are copied into PM with non-temporal stores (PMDK's
/// `pmem_memcpy` switches at the same size): they bypass the caches the writer's index search
/// needs, and a flush needs them from memory anyway.
const STREAMING_MIN_BYTES: usize = 256;

/// In cache-line modes, unpersisted bytes are persisted once this many have accumulated.
pub const BUFFER_FLUSH_BYTES: usize = 256;
/// Size of an entry's fixed part: crc u32, seq u64, kind u8, key_len u32, value_len u32.
pub const ENTRY_HEADER_LEN: usize = 21;

/// One key-value entry of the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogEntry<'a> {
    /// Sequence number of the write.
    pub seq: SequenceNumber,
    /// What the value means (a deletion has an empty value).
    pub kind: ValueKind,
    /// The user key.
    pub key: &'a [u8],
    /// The value bytes.
    pub value: &'a [u8],
}

/// The offset of an entry whose bytes this process knows to be intact: [`PmLogWriter::append_batch`]
/// encoded it, or the recovery scan ([`PmLog::for_each_entry`]) verified its crc. Only this
/// module makes one, so [`PmLog::entry_at`] may skip the crc (module documentation).
///
/// Invariant: an `EntryOffset` is only given back to the log that produced it (a PMTable indexes
/// exactly one log). Lengths are still checked on every read, so misuse is an error, never a
/// panic or an out-of-bounds read. The field is private: nothing outside this module can make a
/// trusted offset from a plain number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntryOffset(u64);

impl EntryOffset {
    /// An offset the PMTable index stored from an `EntryOffset` of the same log (the index
    /// keeps offsets as plain words; nothing else in the crate may make one).
    pub(super) fn restore(offset: u64) -> Self {
        EntryOffset(offset)
    }

    /// The file offset.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl From<EntryOffset> for u64 {
    fn from(at: EntryOffset) -> u64 {
        at.0
    }
}

/// Where an entry's value lies in the log's region, from [`PmLog::value_span`]; lets a cursor
/// keep its position without a borrow and read the bytes later with [`PmLog::value_bytes`].
/// Only this module makes one, so a span always lies below the readable tail (bytes that never
/// change again). The default span is empty.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ValueSpan {
    start: usize,
    len: usize,
}

/// The decoded header of a PM Log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PmLogHeader {
    /// Format version (1 or 2).
    pub version: u16,
    /// The log's number (also in its file name).
    pub number: u64,
    /// Capacity of the log file in bytes, header included.
    pub file_size: u64,
    /// End offset of the last durable batch (64 when empty).
    pub used_size: u64,
    /// End offset of the last batch copied to the region (may be torn by a power failure);
    /// 0 in version-1 logs, which have no tail.
    pub written_size: u64,
    /// Number of the log this one replaces after a PMTable GC; 0 = none.
    pub replaces: u64,
    /// The GC that wrote this log completed (the replaced log may be deleted).
    pub gc_complete: bool,
}

impl PmLogHeader {
    /// True if the log may hold entries: committed ones below `used_size`, or a tail (which a
    /// process crash leaves whole) below `written_size`. Only the recovery scan can tell whether
    /// a tail survived a power failure.
    pub fn may_hold_entries(&self) -> bool {
        self.used_size.max(self.written_size) > PM_LOG_HEADER_LEN as u64
    }

    /// End of the bytes the log may hold: `max(used_size, written_size)`.
    pub fn written_end(&self) -> u64 {
        self.used_size.max(self.written_size)
    }

    /// What every entry crc of this log starts from: in version 2 the crc32c of the log number
    /// (8 bytes LE), so an entry left in a recycled region by an earlier log fails its crc here;
    /// 0 (a plain crc32c) in version 1.
    pub fn entry_crc_seed(&self) -> u32 {
        entry_crc_seed(self.version, self.number)
    }
}

fn entry_crc_seed(version: u16, number: u64) -> u32 {
    if version >= 2 {
        crate::types::crc32c(&number.to_le_bytes())
    } else {
        0
    }
}

/// Writes and persists a fresh header for log `number` in `region` (module documentation,
/// step 1): bytes `[8, 64)` first, then the magic word as one atomic store.
fn write_header(region: &dyn PmRegion, number: u64, replaces: Option<u64>) -> Result<()> {
    let capacity = region.len() as u64;
    let header = format::encode_header(number, capacity, replaces.unwrap_or(0));
    region.write(8, &header[8..]);
    region
        .persist(0, PM_LOG_HEADER_LEN)
        .and_then(|()| {
            region.store_u64(0, format::magic_word());
            region.persist(0, 8)
        })
        .map_err(|e| {
            let path = region.path().with_file_name(pm_log_file_name(number));
            Error::io(format!("persisting header of PM log {}", path.display()), e)
        })
}

/// Shared read handle to a PM Log (`Send + Sync`).
pub struct PmLog {
    region: Arc<dyn PmRegion>,
    path: PathBuf,
    number: u64,
    file_size: u64,
    replaces: u64,
    version: u16,
    /// Every entry crc starts here ([`PmLogHeader::entry_crc_seed`]), derived once at open.
    crc_seed: u32,
    /// End of the bytes copied to the region; readers stay below it (aliasing contract).
    readable: AtomicU64,
}

impl PmLog {
    /// Opens an existing log and validates its header (magic, version, crc, file_size equal to
    /// the region length, `64 <= used_size <= file_size`, number matching the file name).
    /// Errors are [`Error::Corruption`] naming the file and the offset of the bad field.
    #[cfg(test)]
    pub fn open(device: &dyn PmDevice, name: &str) -> Result<Arc<PmLog>> {
        let region = device.open_region(name)?;
        Self::from_region(region, name)
    }

    /// Like [`PmLog::open`], but `Ok(None)` for a log whose creation a crash interrupted (magic
    /// word still zero and `used_size` ≤ 64: it never held data and may be deleted).
    pub fn open_if_initialized(device: &dyn PmDevice, name: &str) -> Result<Option<Arc<PmLog>>> {
        let region = device.open_region(name)?;
        if is_blank_header(region.read(0, region.len().min(PM_LOG_HEADER_LEN))) {
            return Ok(None);
        }
        Self::from_region(region, name).map(Some)
    }

    fn from_region(region: Arc<dyn PmRegion>, name: &str) -> Result<Arc<PmLog>> {
        // The region may have been renamed (recycled): its own path is its first name.
        let path = region.path().with_file_name(name);
        let head = region.read(0, region.len().min(PM_LOG_HEADER_LEN));
        let h = decode_header_checked(
            head,
            region.len() as u64,
            parse_pm_log_file_name(name),
            &path,
        )?;
        Ok(Arc::new(PmLog {
            region,
            path,
            number: h.number,
            file_size: h.file_size,
            replaces: h.replaces,
            version: h.version,
            crc_seed: h.entry_crc_seed(),
            readable: AtomicU64::new(h.used_size),
        }))
    }

    /// The header as it is now (`used_size` and flags are read atomically).
    pub fn header(&self) -> PmLogHeader {
        PmLogHeader {
            version: self.version,
            number: self.number,
            file_size: self.file_size,
            used_size: self.region.load_u64(OFF_USED_SIZE),
            written_size: self.region.load_u64(OFF_WRITTEN_SIZE),
            replaces: self.replaces,
            gc_complete: self.region.load_u64(OFF_FLAGS) & FLAG_GC_COMPLETE != 0,
        }
    }

    /// The log's number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The file backing the log.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The region, once no other handle to this log exists (for recycling it).
    pub fn into_region(self: Arc<Self>) -> Option<Arc<dyn PmRegion>> {
        Arc::try_unwrap(self).ok().map(|log| log.region)
    }

    /// Decodes the entry at `offset`, verifying its crc ([`Error::Corruption`] with file and
    /// offset on mismatch). `offset` must be below the readable tail (entries still in the
    /// Buffer Log are not readable here): otherwise [`Error::InvalidArgument`].
    pub fn read_entry(&self, offset: impl Into<u64>) -> Result<LogEntry<'_>> {
        let offset = offset.into();
        let bytes = self.readable_from(offset)?;
        decode_entry(bytes, offset, self.crc_seed, &self.path).map(|(e, _)| e)
    }

    /// Decodes the entry at `at` without verifying its crc: this process wrote or already
    /// verified it (see [`EntryOffset`]). Lengths are checked ([`Error::Corruption`] if the
    /// entry would run past the readable tail).
    pub fn entry_at(&self, at: EntryOffset) -> Result<LogEntry<'_>> {
        let bytes = self.readable_from(at.0)?;
        decode_entry_unverified(bytes, at.0, &self.path).map(|(e, _)| e)
    }

    /// Where the value of the entry at `at` lies (read as [`PmLog::entry_at`] does).
    pub fn value_span(&self, at: EntryOffset) -> Result<ValueSpan> {
        let e = self.entry_at(at)?;
        let start = at.0 as usize + ENTRY_HEADER_LEN + e.key.len();
        Ok(ValueSpan {
            start,
            len: e.value.len(),
        })
    }

    /// The bytes of a span [`PmLog::value_span`] of this log returned.
    pub fn value_bytes(&self, span: ValueSpan) -> &[u8] {
        self.region.read(span.start, span.len)
    }

    /// The bytes of the entry at `offset` as its header gives its length, cut at the readable
    /// tail (the decoder then reports an entry running past it); [`Error::InvalidArgument`]
    /// outside `[64, tail)`. Reads only the entry's lines: an emulated PM read latency is
    /// charged per line read, and the rest of the log is not read.
    fn readable_from(&self, offset: u64) -> Result<&[u8]> {
        let end = self.readable.load(Ordering::Acquire);
        if offset < PM_LOG_HEADER_LEN as u64 || offset >= end {
            return Err(Error::InvalidArgument(format!(
                "PM log {}: offset {offset} is outside the readable entries [64, {end})",
                self.path.display()
            )));
        }
        let avail = (end - offset) as usize;
        let head = self
            .region
            .read(offset as usize, avail.min(ENTRY_HEADER_LEN));
        let len = match head.len() {
            ENTRY_HEADER_LEN => {
                let word = |i: usize| u32::from_le_bytes(head[i..i + 4].try_into().expect("4"));
                ENTRY_HEADER_LEN + word(13) as usize + word(17) as usize
            }
            short => short,
        };
        Ok(self.region.read(offset as usize, len.min(avail)))
    }

    /// Recovery scan: every entry the recovery rule accepts, in order (see
    /// [`for_each_entry_in`]); damage below `used_size` is [`Error::Corruption`] naming the
    /// file and the entry's offset. Stops at the first error returned by `f`. Reads only: call
    /// [`PmLog::adopt_tail`] with the result to make the accepted end durable and readable.
    /// The offsets passed to `f` are [`EntryOffset`]s: the scan verified their crcs.
    pub fn for_each_entry(
        &self,
        mut f: impl FnMut(EntryOffset, LogEntry<'_>) -> Result<()>,
    ) -> Result<LogExtent> {
        let h = self.header();
        let log = self.region.read(0, self.region.len());
        for_each_entry_in(log, &h, &self.path, |offset, e| f(EntryOffset(offset), e))
    }

    /// Takes the end found by recovery as the log's end in memory: readers may read up to it.
    /// Writes nothing (open's read-only phase); [`PmLog::adopt_tail`] persists it.
    pub fn accept_tail(&self, extent: &LogExtent) {
        self.readable.fetch_max(extent.end, Ordering::AcqRel);
    }

    /// Makes the end found by recovery the log's durable end (RocksDB's point-in-time recovery):
    /// persists the accepted tail, then stores `used_size` = `written_size` = `extent.end` and
    /// persists them, so every later scan finds the same entries. A crash in between leaves
    /// the old header, whose scan accepts the same tail. Also does [`PmLog::accept_tail`].
    pub fn adopt_tail(&self, extent: &LogExtent) -> Result<()> {
        self.accept_tail(extent);
        let h = self.header();
        let end = extent.end;
        if end == h.used_size && h.written_size <= end {
            return Ok(());
        }
        let ctx = || {
            format!(
                "persisting the recovered tail of PM log {}",
                self.path.display()
            )
        };
        let used = h.used_size as usize;
        self.region
            .persist(used, end as usize - used)
            .map_err(|e| Error::io(ctx(), e))?;
        self.region.store_u64(OFF_USED_SIZE, end);
        self.region.store_u64(OFF_WRITTEN_SIZE, end);
        self.region
            .persist(OFF_USED_SIZE, PM_LOG_HEADER_LEN - OFF_USED_SIZE)
            .map_err(|e| Error::io(ctx(), e))
    }
}

impl std::fmt::Debug for PmLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PmLog")
            .field("path", &self.path)
            .field("header", &self.header())
            .field("readable", &self.readable.load(Ordering::Acquire))
            .finish()
    }
}
