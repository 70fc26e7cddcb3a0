//! The persistent PM skiplist (`flatlsm_core::pmskiplist`) as a write buffer: NoveLSM's PM
//! memtable (and SLM-DB's). Every batch is durable when `append_batch` returns (Algorithm 1
//! persists each insert, then the batch's commit), so `commit` has nothing to do. The region is
//! `NNNNNN.pmskl` in the PM directory; after its flush it is deleted.

use super::WriteBuffer;
use crate::error::Result;
use crate::file_names::skiplist_region_name;
use crate::iter::InternalIterator;
use crate::pm::PmDevice;
use crate::pmskiplist::{PmSkiplist, PmSkiplistCursor, PmSkiplistIter, PslEntry};
use crate::pmtable::log::LogEntry;
use crate::pmtable::{MemLookup, PmLogPool, PmTable};
use crate::types::{
    make_internal_key, parse_internal_key, SequenceNumber, ValueKind, KIND_FOR_SEEK,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A PM skiplist write buffer.
pub(crate) struct SkiplistBuffer {
    list: Arc<PmSkiplist>,
    sealed: AtomicBool,
}

impl SkiplistBuffer {
    /// A new, empty buffer in a fresh region of `capacity` bytes.
    pub fn create(device: &dyn PmDevice, number: u64, capacity: usize) -> Result<Arc<Self>> {
        let name = skiplist_region_name(number);
        let region = device.create_region(&name, capacity)?;
        let list = PmSkiplist::create(region, number)
            .map_err(|e| crate::pm::discard_region(device, &name, e))?;
        Ok(Self::wrap(list, false))
    }

    /// The buffer of region `number` after a restart, recovered and sealed.
    pub fn recover(device: &dyn PmDevice, number: u64) -> Result<Arc<Self>> {
        let region = device.open_region(&skiplist_region_name(number))?;
        Ok(Self::wrap(PmSkiplist::recover(region, number)?, true))
    }

    fn wrap(list: PmSkiplist, sealed: bool) -> Arc<Self> {
        Arc::new(SkiplistBuffer {
            list: Arc::new(list),
            sealed: AtomicBool::new(sealed),
        })
    }
}

fn psl_entries<'a>(entries: &'a [LogEntry<'a>]) -> Vec<PslEntry<'a>> {
    entries
        .iter()
        .map(|e| (e.seq, e.kind, e.key, e.value))
        .collect()
}

impl WriteBuffer for SkiplistBuffer {
    fn number(&self) -> u64 {
        self.list.number()
    }

    fn append_batch(&self, entries: &[LogEntry<'_>]) -> Result<bool> {
        if self.sealed.load(Ordering::Acquire) {
            return Ok(false);
        }
        self.list.insert_batch(&psl_entries(entries))
    }

    fn append_batch_timed(&self, entries: &[LogEntry<'_>]) -> Result<(bool, Duration)> {
        if self.sealed.load(Ordering::Acquire) {
            return Ok((false, Duration::ZERO));
        }
        self.list.insert_batch_timed(&psl_entries(entries))
    }

    fn has_room(&self, entries: &[LogEntry<'_>]) -> bool {
        let bytes = entries
            .iter()
            .map(|e| PmSkiplist::entry_bytes(e.key.len(), e.value.len()));
        !self.sealed.load(Ordering::Acquire) && self.list.has_room_for(bytes.sum())
    }

    fn commit(&self) -> Result<()> {
        Ok(()) // every batch was persisted by its insert
    }

    fn seal(&self) -> Result<()> {
        self.sealed.store(true, Ordering::Release);
        Ok(())
    }

    fn get(&self, user_key: &[u8], seq: SequenceNumber) -> Result<Option<MemLookup>> {
        let mut c = PmSkiplistCursor::new(&self.list);
        c.seek(&make_internal_key(user_key, seq, KIND_FOR_SEEK));
        if !c.valid() {
            return Ok(None);
        }
        let Some(p) = parse_internal_key(c.key()).filter(|p| p.user_key == user_key) else {
            return Ok(None);
        };
        Ok(Some(match p.kind {
            ValueKind::Deletion => MemLookup::Deleted,
            _ => MemLookup::Value(c.value().to_vec(), p.seq),
        }))
    }

    fn iter(self: Arc<Self>) -> Box<dyn InternalIterator> {
        Box::new(PmSkiplistIter::new(self.list.clone()))
    }

    fn flush_cursor(&self) -> Box<dyn InternalIterator + '_> {
        Box::new(PmSkiplistCursor::new(&self.list))
    }

    fn split_points(&self, parts: usize) -> Vec<Vec<u8>> {
        let n = self.list.len() as usize;
        if parts < 2 || n < parts {
            return Vec::new();
        }
        let mut c = PmSkiplistCursor::new(&self.list);
        c.seek_to_first();
        let (mut out, mut i) = (Vec::new(), 0);
        while c.valid() && out.len() < parts - 1 {
            i += 1;
            if i % (n / parts) == 0 {
                out.push(crate::types::user_key_of(c.key()).to_vec());
            }
            c.next();
        }
        out.dedup();
        out
    }

    fn log_bytes(&self) -> u64 {
        self.list.used_bytes()
    }

    fn index_dram_bytes(&self) -> u64 {
        0 // the skiplist lives in PM
    }

    /// The nodes' bytes bound their keys and values.
    fn contents(&self) -> (u64, u64) {
        (self.list.len(), self.list.used_bytes())
    }

    fn max_sequence(&self) -> SequenceNumber {
        self.list.max_sequence()
    }

    fn min_sequence(&self) -> SequenceNumber {
        self.list.min_sequence()
    }

    fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    fn build_filter(&self, _bits_per_key: usize) -> bool {
        false // NoveLSM searches its PM skiplist; no filter
    }

    fn release(self: Arc<Self>, pool: &PmLogPool) -> Result<()> {
        pool.device()
            .remove_region(&skiplist_region_name(self.number()))
    }

    fn as_pmtable(self: Arc<Self>) -> Option<Arc<PmTable>> {
        None
    }
}
