//! A PMTable (paper 4.2): a DRAM skiplist index over one PM Log.
//!
//! Invariants:
//! - Every index entry points at a log entry the log has written to the region (appends copy
//!   every batch to the mapping before it is indexed; see `log.rs`).
//! - Keys are copied into the index (an arena skiplist, `index.rs`: a node needs its key for
//!   comparisons); values stay in the log. After recovery every slot is a PM offset: copy-free recovery (paper 4.2.3).
//! - Every slot holds an [`EntryOffset`] the log handed out (append or recovery scan), so reads
//!   through the index skip the entry crc: it was checked once already (see `log.rs`). PMTable
//!   GC is the exception: it verifies what it gives a new crc.
//! - Index entries are never removed, so a skiplist entry a cursor holds stays valid.
//! - One writer at a time (the `writer` mutex). Point reads never lock; a reader that walks
//!   the skiplist may take the index's writer lock once, to link the nodes inserts left
//!   pending (`index.rs`). The skiplist's links are atomics and an entry is inserted only
//!   after its bytes are written.
//!
//! Thread-safety: `PmTable` is `Send + Sync`; share it as `Arc<PmTable>`.

use super::cursor::{PmTableCursor, PmTableIterator};
use super::index::{ArenaIndex, NodeInfo, NodeRef};
use super::live_filter::LiveFilter;
use super::log::{
    encoded_entry_len, EntryOffset, LogEntry, LogExtent, PmLog, PmLogWriter, ValueSpan,
    PM_LOG_HEADER_LEN,
};
use super::point_index::Point;
use crate::error::{Error, Result};
use crate::file_names::pm_log_file_name;
use crate::iter::VersionFilter;
use crate::pm::PmDevice;
use crate::range_del::RangeTombstones;
use crate::sst::bloom::{bloom_hash, BloomFilter};
use crate::types::{pack_trailer, SequenceNumber, ValueKind, KIND_FOR_SEEK};
use parking_lot::Mutex;
use std::cmp::Ordering as KeyOrder;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The kind byte of a trailer (the index stores only trailers the log handed out).
fn kind_of(trailer: u64) -> Option<ValueKind> {
    ValueKind::from_u8((trailer & 0xff) as u8)
}

/// What a point lookup in a PMTable found.
#[derive(Debug, PartialEq, Eq)]
pub enum MemLookup {
    /// The newest visible version holds this value, written at this sequence.
    Value(Vec<u8>, SequenceNumber),
    /// The newest visible version is a tombstone.
    Deleted,
}

/// One PMTable: index + PM Log (+ the log's Buffer Log while mutable).
pub struct PmTable {
    log: Arc<PmLog>,
    writer: Mutex<Option<PmLogWriter>>,
    index: ArenaIndex,
    /// Log bytes (entry headers included) of the newest version of each key: the same unit as
    /// the log's size, so a table without garbage has exactly as many live bytes as entry bytes.
    live_bytes: AtomicU64,
    max_seq: AtomicU64,
    /// Smallest sequence of any indexed entry, live or not (`u64::MAX` if none).
    min_seq: AtomicU64,
    /// Bloom filter over the user keys, built once the table is immutable (see
    /// [`PmTable::build_filter`]); lets a point read skip the table's skiplist search.
    /// Invariant: set only while `writer` is `None`, so it covers every key of the table.
    filter: OnceLock<BloomFilter>,
    /// The filter a table written in this process fills as it indexes (recovered tables get
    /// `filter` at open instead): point reads of the mutable table skip it with this.
    live_filter: Option<LiveFilter>,
    /// `live_filter` folded to the table's key count once it is immutable
    /// ([`PmTable::build_filter`]), small enough to stay in the CPU cache.
    folded_filter: OnceLock<LiveFilter>,
    /// Where recovery found the log to end (recovered tables only).
    recovered_end: OnceLock<LogExtent>,
}

/// Which of its filters a table's point reads ask ([`PmTable::point_filter`]).
enum PointFilter<'a> {
    Built(&'a BloomFilter),
    Live(&'a LiveFilter),
    None,
}

impl PmTable {
    /// Creates an empty, mutable PMTable on a fresh PM Log.
    pub fn create(
        device: &dyn PmDevice,
        number: u64,
        capacity: usize,
        replaces: Option<u64>,
    ) -> Result<Arc<PmTable>> {
        let writer = PmLogWriter::create(device, number, capacity, replaces)?;
        Ok(Self::from_writer(writer))
    }

    /// An empty, mutable PMTable over a started log (fresh or recycled).
    pub fn from_writer(writer: PmLogWriter) -> Arc<PmTable> {
        Arc::new(PmTable {
            log: writer.log().clone(),
            index: ArenaIndex::new(writer.capacity() as usize),
            live_filter: Some(LiveFilter::for_log(writer.capacity() as usize)),
            folded_filter: OnceLock::new(),
            writer: Mutex::new(Some(writer)),
            live_bytes: AtomicU64::new(0),
            max_seq: AtomicU64::new(0),
            min_seq: AtomicU64::new(u64::MAX),
            filter: OnceLock::new(),
            recovered_end: OnceLock::new(),
        })
    }

    /// The table's PM Log, once no other handle to the table exists (for recycling it).
    pub fn into_log(self: Arc<Self>) -> Option<Arc<PmLog>> {
        Arc::try_unwrap(self).ok().map(|t| t.log)
    }

    /// Rebuilds the index of an existing PM Log without copying entries (copy-free recovery).
    /// The table is immutable afterwards. Reads only: a tail a crash tore is accepted in
    /// memory; [`PmTable::persist_recovered_tail`] makes that end durable.
    pub fn recover(log: Arc<PmLog>) -> Result<Arc<PmTable>> {
        let table = PmTable {
            index: ArenaIndex::new(log.header().file_size as usize),
            log,
            writer: Mutex::new(None),
            live_bytes: AtomicU64::new(0),
            max_seq: AtomicU64::new(0),
            min_seq: AtomicU64::new(u64::MAX),
            filter: OnceLock::new(),
            live_filter: None,
            folded_filter: OnceLock::new(),
            recovered_end: OnceLock::new(),
        };
        let log = table.log.clone();
        let extent = log.for_each_entry(|offset, e| table.index_entry(&e, offset))?;
        if extent.discarded > 0 {
            log::warn!(
                "PM log {}: discarded {} bytes of a tail torn by a crash after offset {} \
                 (non-sync writes a power failure may lose, docs/durability.md)",
                log.path().display(),
                extent.discarded,
                extent.end
            );
        }
        log.accept_tail(&extent);
        let _ = table.recovered_end.set(extent); // a fresh cell: always set
        Ok(Arc::new(table))
    }

    /// Persists the end recovery accepted (see `PmLog::adopt_tail`); a no-op for tables
    /// that were not recovered or whose log ended cleanly.
    pub fn persist_recovered_tail(&self) -> Result<()> {
        match self.recovered_end.get() {
            Some(extent) => self.log.adopt_tail(extent),
            None => Ok(()),
        }
    }

    /// The PM Log's file number (also the table's age: higher is newer).
    pub fn number(&self) -> u64 {
        self.log.number()
    }

    /// The PM Log.
    pub fn log(&self) -> &Arc<PmLog> {
        &self.log
    }

    /// Appends a batch atomically and indexes it. `Ok(false)`: the log is full (nothing
    /// written) or the table is sealed.
    pub fn append_batch(&self, entries: &[LogEntry<'_>]) -> Result<bool> {
        Ok(self.append_batch_split(entries, false)?.0)
    }

    /// [`PmTable::append_batch`], also returning how long the log append (the data) took;
    /// the rest of the call is the index insert.
    pub fn append_batch_timed(&self, entries: &[LogEntry<'_>]) -> Result<(bool, Duration)> {
        self.append_batch_split(entries, true)
    }

    /// The append, the log part timed if `timed` (a clock read the untimed path skips).
    fn append_batch_split(
        &self,
        entries: &[LogEntry<'_>],
        timed: bool,
    ) -> Result<(bool, Duration)> {
        let mut guard = self.writer.lock();
        let Some(writer) = guard.as_mut() else {
            return Ok((false, Duration::ZERO));
        };
        let started = timed.then(Instant::now);
        let Some(offsets) = writer.append_batch(entries)? else {
            return Ok((false, Duration::ZERO));
        };
        let data = started.map_or(Duration::ZERO, |t| t.elapsed());
        for (e, &offset) in entries.iter().zip(&offsets) {
            self.index_entry(e, offset)?;
        }
        Ok((true, data))
    }

    /// Makes everything appended so far durable (Buffer Log persist / msync group commit).
    pub fn commit(&self) -> Result<()> {
        match self.writer.lock().as_mut() {
            Some(w) if w.has_uncommitted() => w.commit(),
            _ => Ok(()),
        }
    }

    /// Commits and stops accepting writes: the table becomes immutable.
    pub fn seal(&self) -> Result<()> {
        let mut guard = self.writer.lock();
        if let Some(w) = guard.as_mut() {
            w.commit()?;
        }
        *guard = None;
        Ok(())
    }

    /// Marks a GC copy complete (see [`PmTable::rewrite_live`]).
    fn mark_gc_complete(&self) -> Result<()> {
        match self.writer.lock().as_mut() {
            Some(w) => w.mark_gc_complete(),
            None => Err(Error::InvalidState("GC target is sealed".into())),
        }
    }

    /// Indexes the entry `e` the log holds at `offset` and updates the size accounting.
    fn index_entry(&self, e: &LogEntry<'_>, offset: EntryOffset) -> Result<()> {
        let info = NodeInfo {
            trailer: pack_trailer(e.seq, e.kind),
            offset,
            value_len: e.value.len(),
        };
        self.min_seq.fetch_min(e.seq, Ordering::Relaxed);
        if let Some(f) = &self.live_filter {
            f.add(e.key); // before the node is linked (live_filter.rs)
        }
        // The versions the insert found tell whether the entry is the newest version of its
        // key, and which version it replaces as the newest.
        let versions = self.index.insert(e.key, info)?;
        if versions.newer != 0 {
            // An older entry replayed after a newer one (GC'd log): it is not live.
            return Ok(());
        }
        let logged = encoded_entry_len(e.key.len(), e.value.len()) as u64;
        self.live_bytes.fetch_add(logged, Ordering::Relaxed);
        self.max_seq.fetch_max(e.seq, Ordering::Relaxed);
        if versions.replaced != 0 {
            self.no_longer_live(versions.replaced, e.key);
        }
        Ok(())
    }

    /// Takes the bytes of `node`, a version of `user_key` a newer one replaced, out of
    /// `live_bytes`.
    fn no_longer_live(&self, node: NodeRef, user_key: &[u8]) {
        let old_len = encoded_entry_len(user_key.len(), self.index.info(node).value_len) as u64;
        let _ = self
            .live_bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                Some(v.saturating_sub(old_len))
            });
    }

    /// Builds the table's bloom filter if the table is immutable and has none yet; returns
    /// whether it has one now. Cheap when already built; safe to call from several threads.
    pub fn build_filter(&self, bits_per_key: usize) -> bool {
        if self.filter.get().is_some() {
            return true;
        }
        // Holding the writer lock: no key can be added while the filter is built.
        let writer = self.writer.lock();
        if writer.is_some() || bits_per_key == 0 {
            return false;
        }
        if let Some(live) = &self.live_filter {
            // Filled as every key was indexed: folded, not rebuilt from the index.
            self.folded_filter.get_or_init(|| live.folded(bits_per_key));
            return true;
        }
        self.filter.get_or_init(|| {
            let mut key = Vec::new();
            let hashes: Vec<u32> = self
                .index
                .iter()
                .map(|n| bloom_hash(self.user_key_into(n, &mut key)))
                .collect();
            BloomFilter::from_hashes(&hashes, bits_per_key)
        });
        true
    }

    /// Newest version of `user_key` with sequence <= `seq`.
    pub fn get(&self, user_key: &[u8], seq: SequenceNumber) -> Result<Option<MemLookup>> {
        if !self.may_contain(user_key) {
            return Ok(None);
        }
        let Some(node) = self.newest_at(user_key, seq) else {
            return Ok(None);
        };
        let info = self.index.info(node);
        if kind_of(info.trailer) == Some(ValueKind::Deletion) {
            return Ok(Some(MemLookup::Deleted));
        }
        let value = self.value_of(&info)?.to_vec();
        Ok(Some(MemLookup::Value(value, info.trailer >> 8)))
    }

    /// The node of `user_key`'s newest version at or below `seq`: from the point index when
    /// it knows the key and its newest version is visible, else by a skiplist search.
    fn newest_at(&self, user_key: &[u8], seq: SequenceNumber) -> Option<NodeRef> {
        match self.index.newest(user_key) {
            Point::Absent => return None,
            Point::Newest(node) if self.index.info(node).trailer >> 8 <= seq => return Some(node),
            _ => {}
        }
        let node = self
            .index
            .lower_bound(user_key, pack_trailer(seq, KIND_FOR_SEEK))?;
        (self.index.compare_user_key(node, user_key) == KeyOrder::Equal).then_some(node)
    }

    /// Starts loading the filter block [`PmTable::get`] tests first for `user_key`.
    pub fn hint(&self, user_key: &[u8]) {
        match self.point_filter() {
            PointFilter::Built(f) => f.prefetch(user_key),
            PointFilter::Live(f) => f.hint(user_key),
            PointFilter::None => {}
        }
    }

    /// False only if the table holds no entry of `user_key` (its filters say so).
    fn may_contain(&self, user_key: &[u8]) -> bool {
        match self.point_filter() {
            PointFilter::Built(f) => f.may_contain(user_key),
            PointFilter::Live(f) => f.may_contain(user_key),
            PointFilter::None => true,
        }
    }

    /// The filter point reads ask: the one built at seal, else the folded copy of the live
    /// filter, else the live filter itself.
    fn point_filter(&self) -> PointFilter<'_> {
        if let Some(f) = self.filter.get() {
            return PointFilter::Built(f);
        }
        match (self.folded_filter.get(), &self.live_filter) {
            (Some(f), _) | (None, Some(f)) => PointFilter::Live(f),
            (None, None) => PointFilter::None,
        }
    }

    /// `node`'s user key, written over `buf`.
    pub(super) fn user_key_into<'b>(&self, node: NodeRef, buf: &'b mut Vec<u8>) -> &'b [u8] {
        buf.clear();
        self.index.append_user_key(node, buf);
        buf
    }

    /// The value bytes of an indexed entry, borrowed from the log (no crc: see `EntryOffset`).
    pub(super) fn value_of(&self, info: &NodeInfo) -> Result<&[u8]> {
        Ok(self.log.entry_at(info.offset)?.value)
    }

    /// The value bytes of an indexed entry, its crc verified. For PMTable GC: it gives the bytes
    /// a new crc, which would otherwise cover a byte damaged in PM since it was written. GC
    /// copies at most 1/`pmtable_gc_ratio` of a table, so the check costs little.
    fn verified_value_of(&self, info: &NodeInfo) -> Result<&[u8]> {
        Ok(self.log.read_entry(info.offset)?.value)
    }

    /// Where the value of an indexed entry lies in the log.
    pub(super) fn value_span(&self, info: &NodeInfo) -> Result<ValueSpan> {
        self.log.value_span(info.offset)
    }

    /// The skiplist index (for the cursors in `cursor.rs`).
    pub(super) fn index(&self) -> &ArenaIndex {
        &self.index
    }

    /// Number of index entries (all versions).
    pub fn entries(&self) -> u64 {
        self.index.len() as u64
    }

    /// True if nothing was written.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Bytes of DRAM the table's index holds: skiplist arena, point index and filters.
    pub fn dram_bytes(&self) -> u64 {
        let live = self.live_filter.as_ref().map_or(0, LiveFilter::size);
        let folded = self.folded_filter.get().map_or(0, LiveFilter::size);
        (self.index.memory_bytes() + live + folded) as u64
    }

    /// Bytes of the log in use (including the Buffer Log).
    pub fn log_bytes(&self) -> u64 {
        match self.writer.lock().as_ref() {
            Some(w) => w.used_bytes(),
            None => self.log.header().used_size,
        }
    }

    /// Log bytes (entry headers included, file header not) of the newest version of each key:
    /// what a GC copies when no snapshot needs older versions.
    pub fn live_bytes(&self) -> u64 {
        self.live_bytes.load(Ordering::Relaxed)
    }

    /// True if the table accepts appends and a batch of `len` encoded bytes fits in its log.
    pub fn has_room(&self, len: u64) -> bool {
        self.writer.lock().as_ref().is_some_and(|w| {
            w.used_bytes()
                .checked_add(len)
                .is_some_and(|end| end <= w.capacity())
        })
    }

    /// Largest sequence number in the table.
    pub fn max_sequence(&self) -> SequenceNumber {
        self.max_seq.load(Ordering::Relaxed)
    }

    /// Smallest sequence of any entry in the table (`u64::MAX` if none).
    pub fn min_sequence(&self) -> SequenceNumber {
        self.min_seq.load(Ordering::Relaxed)
    }

    /// User keys that split the table into `parts` ranges of about equal entry counts
    /// (Algorithm 4, step 1): the largest key of each range but the last. A user key's
    /// versions never straddle two ranges.
    pub fn split_points(&self, parts: usize) -> Vec<Vec<u8>> {
        let n = self.index.len();
        if parts <= 1 || n == 0 {
            return Vec::new();
        }
        let per = n.div_ceil(parts);
        let mut points: Vec<Vec<u8>> = Vec::new();
        let mut count = 0;
        let (mut prev, mut cur) = (Vec::new(), Vec::new());
        for (i, node) in self.index.iter().enumerate() {
            self.user_key_into(node, &mut cur);
            if i > 0 && count >= per && prev != cur && points.len() + 1 < parts {
                points.push(prev.clone());
                count = 0;
            }
            count += 1;
            std::mem::swap(&mut prev, &mut cur);
        }
        points
    }

    /// A cursor over the table in internal-key order that owns a handle to the table (for
    /// the database iterator; see [`PmTableIterator`]).
    pub fn iter(self: &Arc<Self>) -> PmTableIterator {
        PmTableIterator::new(self.clone())
    }

    /// A cursor that borrows the table and walks the skiplist without re-seeking or copying:
    /// keys are borrowed from the index and values from the PM Log (for flushes).
    pub fn cursor(&self) -> PmTableCursor<'_> {
        PmTableCursor::new(self)
    }

    /// PMTable GC (paper 4.2.2): copies the versions some reader can still see into a fresh
    /// log that records `replaces = self.number()`, marks it complete, and returns it as a
    /// mutable table. The caller removes the old log afterwards.
    ///
    /// Persist order: new log entries + UsedSize, then the GC_COMPLETE flag, then the old
    /// log's removal. Recovery: a replacement without GC_COMPLETE is deleted (the old log is
    /// intact); with it, the old log is deleted. A failed GC removes its new log at once (the
    /// writer may retry, each time with a new log).
    pub fn rewrite_live(
        self: &Arc<Self>,
        device: &dyn PmDevice,
        number: u64,
        capacity: usize,
        oldest_snapshot: SequenceNumber,
        range_dels: &Arc<RangeTombstones>,
    ) -> Result<Arc<PmTable>> {
        let fresh = PmTable::create(device, number, capacity, Some(self.number()))?;
        self.copy_survivors(&fresh, VersionFilter::new(oldest_snapshot, range_dels))
            .and_then(|()| fresh.mark_gc_complete())
            .map_err(|e| crate::pm::discard_region(device, &pm_log_file_name(number), e))?;
        Ok(fresh)
    }

    /// Appends the entries a GC keeps (`filter`) to `fresh`, in index order.
    fn copy_survivors(&self, fresh: &PmTable, filter: VersionFilter) -> Result<()> {
        let mut key = Vec::new();
        for node in self.gc_survivors(filter) {
            let info = self.index.info(node);
            let kind = kind_of(info.trailer)
                .ok_or_else(|| Error::InvalidState("bad kind in PMTable index".into()))?;
            let entry = LogEntry {
                seq: info.trailer >> 8,
                kind,
                key: self.user_key_into(node, &mut key),
                value: self.verified_value_of(&info)?,
            };
            if !fresh.append_batch(&[entry])? {
                return Err(Error::InvalidState(
                    "PMTable GC: live data does not fit a fresh PMTable".into(),
                ));
            }
        }
        Ok(())
    }

    /// The index entries a GC keeps (`filter`): every version some reader at or above the
    /// oldest snapshot can read (tombstones included: older data may lie below).
    fn gc_survivors(&self, mut filter: VersionFilter) -> impl Iterator<Item = NodeRef> + '_ {
        let mut ikey = Vec::new();
        self.index.iter().filter(move |&node| {
            ikey.clear();
            self.index.append_internal_key(node, &mut ikey);
            filter.keep(&ikey, |_| false)
        })
    }

    /// The size (file header included) of the log a GC at `oldest_snapshot` would write,
    /// computed from the DRAM index alone: lets the writer GC only when that frees room.
    pub fn gc_output_bytes(
        &self,
        oldest_snapshot: SequenceNumber,
        range_dels: &Arc<RangeTombstones>,
    ) -> u64 {
        let entries: u64 = self
            .gc_survivors(VersionFilter::new(oldest_snapshot, range_dels))
            .map(|n| {
                let value_len = self.index.info(n).value_len;
                encoded_entry_len(self.index.user_key_len(n), value_len) as u64
            })
            .sum();
        PM_LOG_HEADER_LEN as u64 + entries
    }
}

#[cfg(test)]
#[path = "table_iter_tests.rs"]
mod iter_tests;

#[cfg(test)]
#[path = "table_gc_tests.rs"]
mod gc_tests;
