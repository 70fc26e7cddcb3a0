//! [`WriteBuffer`]: what holds a database's most recent writes until a flush moves them to SSD
//! (pebble's "flushable"). It takes sequenced batches, answers point reads and iterators, is
//! sealed when full, and gives a flush a borrowing cursor over its entries.
//!
//! Implementations: the [`PmTable`] — an arena skiplist over a log in a region — on PM (FlatLSM:
//! durable by itself) or on DRAM (the leveled baseline's memtable: durable by a write-ahead log
//! the database keeps beside it). A design's write path sees only this trait; what is specific
//! to one kind (FlatLSM's in-place PMTable GC, the PM Log pool) goes through
//! [`WriteBuffer::as_pmtable`].
//!
//! Invariants every implementation keeps: one writer at a time (the database's `write_lock`);
//! readers never lock; an entry is readable only once its whole batch is in; a sealed buffer
//! accepts no more appends; entries are never removed while the buffer is referenced.
//!
//! Room: `mod.rs` (the trait; the PMTable's implementation), `skiplist.rs` (the PM skiplist
//! buffer), `recover/` (each kind rebuilt after a restart from what `recovery/` decided to keep:
//! PM Logs mapped in place, write-ahead logs replayed into DRAM tables, PM skiplists recovered
//! in place; one entry point, `recover::rebuild`). Layering: above `pmtable`, below everything
//! that decides about buffers (`designs`, `db`, `recovery`), so what it needs — opened logs,
//! devices, option values — is passed in.

pub(crate) mod recover;
pub(crate) mod skiplist;

use crate::error::Result;
use crate::iter::InternalIterator;
use crate::pmtable::log::{encoded_entry_len, LogEntry, ENTRY_HEADER_LEN, PM_LOG_HEADER_LEN};
use crate::pmtable::{MemLookup, PmLogPool, PmTable};
use crate::types::SequenceNumber;
use std::sync::Arc;
use std::time::Duration;

/// A shared write buffer.
pub(crate) type BufferRef = Arc<dyn WriteBuffer>;

/// Holds recent writes until they are flushed.
pub(crate) trait WriteBuffer: Send + Sync {
    /// The buffer's number (its PM Log's or its write-ahead log's file number).
    fn number(&self) -> u64;
    /// Appends a batch atomically; `Ok(false)` if it does not fit (nothing written) or the
    /// buffer is sealed.
    fn append_batch(&self, entries: &[LogEntry<'_>]) -> Result<bool>;
    /// [`WriteBuffer::append_batch`], also returning the time its data append took (the rest
    /// of the call is the index insert; `Options::write_breakdown`). By default the whole
    /// call is index time, for a kind with no data append to time apart.
    fn append_batch_timed(&self, entries: &[LogEntry<'_>]) -> Result<(bool, Duration)> {
        Ok((self.append_batch(entries)?, Duration::ZERO))
    }
    /// True if the buffer accepts appends and `entries` fit.
    fn has_room(&self, entries: &[LogEntry<'_>]) -> bool;
    /// Makes everything appended so far durable (where the buffer itself is durable).
    fn commit(&self) -> Result<()>;
    /// Commits and stops accepting appends.
    fn seal(&self) -> Result<()>;
    /// The newest version of `user_key` at or below `seq`.
    fn get(&self, user_key: &[u8], seq: SequenceNumber) -> Result<Option<MemLookup>>;
    /// Starts loading what [`WriteBuffer::get`] reads first for `user_key` (a batch of reads
    /// hints all its keys before it reads any); nothing by default.
    fn hint(&self, _user_key: &[u8]) {}
    /// An iterator owning a handle to the buffer (for the database iterator).
    fn iter(self: Arc<Self>) -> Box<dyn InternalIterator>;
    /// A cursor borrowing the buffer, without copies (for flushes).
    fn flush_cursor(&self) -> Box<dyn InternalIterator + '_>;
    /// Up to `parts - 1` user keys splitting the buffer's entries into equal parts.
    fn split_points(&self, parts: usize) -> Vec<Vec<u8>>;
    /// Bytes the buffer's log holds (its fill, in the unit of its capacity).
    fn log_bytes(&self) -> u64;
    /// Bytes of DRAM the buffer's index holds beside its log (0 for an index kept in PM).
    fn index_dram_bytes(&self) -> u64;
    /// Entries (all versions) and an upper bound of their user-key + value bytes.
    fn contents(&self) -> (u64, u64);
    /// Largest sequence number in the buffer.
    fn max_sequence(&self) -> SequenceNumber;
    /// Smallest sequence number in the buffer (`u64::MAX` if empty): a range tombstone above
    /// it may cover an entry here.
    fn min_sequence(&self) -> SequenceNumber;
    /// True if the buffer holds no entry.
    fn is_empty(&self) -> bool;
    /// Builds the buffer's bloom filter once it is sealed; true if it built one.
    fn build_filter(&self, bits_per_key: usize) -> bool;
    /// The log this buffer replaced (FlatLSM's PMTable GC), recorded with it; 0 = none.
    fn replaces(&self) -> u64 {
        0
    }
    /// After its flush: hands the buffer's storage back (a PMTable's log to the pool).
    fn release(self: Arc<Self>, pool: &PmLogPool) -> Result<()>;
    /// The buffer as a PMTable, for what only PMTables do (in-place GC, recovered tails).
    fn as_pmtable(self: Arc<Self>) -> Option<Arc<PmTable>>;
}

impl WriteBuffer for PmTable {
    fn number(&self) -> u64 {
        PmTable::number(self)
    }

    fn append_batch(&self, entries: &[LogEntry<'_>]) -> Result<bool> {
        PmTable::append_batch(self, entries)
    }

    fn append_batch_timed(&self, entries: &[LogEntry<'_>]) -> Result<(bool, Duration)> {
        PmTable::append_batch_timed(self, entries)
    }

    fn has_room(&self, entries: &[LogEntry<'_>]) -> bool {
        let len = entries
            .iter()
            .map(|e| encoded_entry_len(e.key.len(), e.value.len()) as u64);
        PmTable::has_room(self, len.sum())
    }

    fn commit(&self) -> Result<()> {
        PmTable::commit(self)
    }

    fn seal(&self) -> Result<()> {
        PmTable::seal(self)
    }

    fn get(&self, user_key: &[u8], seq: SequenceNumber) -> Result<Option<MemLookup>> {
        PmTable::get(self, user_key, seq)
    }

    fn hint(&self, user_key: &[u8]) {
        PmTable::hint(self, user_key)
    }

    fn iter(self: Arc<Self>) -> Box<dyn InternalIterator> {
        Box::new(PmTable::iter(&self))
    }

    fn flush_cursor(&self) -> Box<dyn InternalIterator + '_> {
        Box::new(self.cursor())
    }

    fn split_points(&self, parts: usize) -> Vec<Vec<u8>> {
        PmTable::split_points(self, parts)
    }

    fn log_bytes(&self) -> u64 {
        PmTable::log_bytes(self)
    }

    fn index_dram_bytes(&self) -> u64 {
        self.dram_bytes()
    }

    fn contents(&self) -> (u64, u64) {
        let entries = self.entries();
        let headers = (PM_LOG_HEADER_LEN + entries as usize * ENTRY_HEADER_LEN) as u64;
        (entries, self.log_bytes().saturating_sub(headers))
    }

    fn max_sequence(&self) -> SequenceNumber {
        PmTable::max_sequence(self)
    }

    fn min_sequence(&self) -> SequenceNumber {
        PmTable::min_sequence(self)
    }

    fn is_empty(&self) -> bool {
        PmTable::is_empty(self)
    }

    fn build_filter(&self, bits_per_key: usize) -> bool {
        PmTable::build_filter(self, bits_per_key)
    }

    fn replaces(&self) -> u64 {
        self.log().header().replaces
    }

    fn release(self: Arc<Self>, pool: &PmLogPool) -> Result<()> {
        pool.retire(self)
    }

    fn as_pmtable(self: Arc<Self>) -> Option<Arc<PmTable>> {
        Some(self)
    }
}
