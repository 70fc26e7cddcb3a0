//! [`PmLogWriter`], the single writer of a PM Log: appends batches, persists them and
//! publishes `used_size` in the persist order the parent module (`log.rs`) states.
//!
//! Invariant: `published <= persisted <= written`, each a batch boundary; bytes at or beyond
//! `written` are never visible to readers.

use super::format::{
    encode_entry_header, encoded_entry_len, FLAG_GC_COMPLETE, OFF_FLAGS, OFF_USED_SIZE,
    OFF_WRITTEN_SIZE,
};
use super::{
    write_header, EntryOffset, LogEntry, PmLog, BUFFER_FLUSH_BYTES, PM_LOG_HEADER_LEN,
    STREAMING_MIN_BYTES,
};
use crate::error::{Error, Result};
use crate::file_names::pm_log_file_name;
use crate::pm::{PmDevice, PmMode, PmRegion};
use crate::types::MAX_SEQUENCE;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The single writer of a PM Log (`Send`; one owner at a time). Every appended batch is in the
/// mapping when `append_batch` returns (a process crash keeps it); dropping the writer without
/// [`PmLogWriter::commit`] leaves unpersisted batches to the tail rule of recovery, which is the
/// documented durability of non-sync writes at a power failure, never a torn batch.
pub struct PmLogWriter {
    log: Arc<PmLog>,
    mode: PmMode,
    /// End of the bytes copied to the region (= `written_size`). Always a batch boundary.
    written: u64,
    /// End of the bytes known durable. Invariant: `published <= persisted <= written`.
    persisted: u64,
    /// The `used_size` last stored in the header.
    published: u64,
    /// The log's entry crc seed.
    crc_seed: u32,
}

impl PmLogWriter {
    /// Creates log `number` with `capacity` bytes (header included) and writes and persists its
    /// header in the order described in the module documentation. `replaces` names the log a
    /// PMTable GC is replacing. On failure no region is left behind.
    pub fn create(
        device: &dyn PmDevice,
        number: u64,
        capacity: usize,
        replaces: Option<u64>,
    ) -> Result<Self> {
        if capacity < PM_LOG_HEADER_LEN {
            return Err(Error::InvalidArgument(format!(
                "PM log capacity {capacity} is smaller than its {PM_LOG_HEADER_LEN}-byte header"
            )));
        }
        let name = pm_log_file_name(number);
        let region = device.create_region(&name, capacity)?;
        write_header(&*region, number, replaces)
            .and_then(|()| Self::start(region, &name))
            .map_err(|e| crate::pm::discard_region(device, &name, e))
    }

    /// Starts log `number` in a recycled region (an earlier log's, now named `pool_name`),
    /// keeping its pages mapped. Persist order: the fresh header is written and persisted
    /// under the pool name (as in [`PmLogWriter::create`]), *then* the region is renamed to the
    /// log's name. A crash before the rename leaves a pool region (deleted at open), after it a
    /// valid empty log; the earlier log's bytes beyond the header never pass this log's entry
    /// crcs (seeded with its number) nor its sequence rule.
    pub fn create_recycled(
        device: &dyn PmDevice,
        region: Arc<dyn PmRegion>,
        pool_name: &str,
        number: u64,
        replaces: Option<u64>,
    ) -> Result<Self> {
        let name = pm_log_file_name(number);
        write_header(&*region, number, replaces)
            .and_then(|()| device.rename_region(pool_name, &name))
            .map_err(|e| crate::pm::discard_region(device, pool_name, e))?;
        Self::start(region, &name).map_err(|e| crate::pm::discard_region(device, &name, e))
    }

    /// A writer at the start of the freshly initialised log `name` in `region`.
    fn start(region: Arc<dyn PmRegion>, name: &str) -> Result<Self> {
        let log = PmLog::from_region(region, name)?;
        let start = PM_LOG_HEADER_LEN as u64;
        Ok(PmLogWriter {
            crc_seed: log.crc_seed,
            mode: log.region.mode(),
            log,
            written: start,
            persisted: start,
            published: start,
        })
    }

    /// The shared read handle.
    pub fn log(&self) -> &Arc<PmLog> {
        &self.log
    }

    /// Appends a batch (all-or-nothing after a crash) and returns the file offset of each
    /// entry (trusted: this writer encoded them, see [`EntryOffset`]). `Ok(None)` when it does not fit (nothing written); [`Error::InvalidArgument`] for
    /// a key or value longer than `u32::MAX` or a sequence above [`MAX_SEQUENCE`]. On return
    /// the batch is readable and survives a process crash; it is durable against power failure
    /// once persisted (module documentation, step 3).
    pub fn append_batch(&mut self, entries: &[LogEntry<'_>]) -> Result<Option<Vec<EntryOffset>>> {
        let size = self.batch_len(entries)?;
        if entries.is_empty() {
            return Ok(Some(Vec::new()));
        }
        match self.written.checked_add(size as u64) {
            Some(end) if end <= self.capacity() => {}
            _ => return Ok(None),
        }
        let mut offsets = Vec::with_capacity(entries.len());
        let mut at = self.written as usize;
        for (i, e) in entries.iter().enumerate() {
            offsets.push(EntryOffset(at as u64));
            at = self.write_entry(at, e, i + 1 == entries.len());
        }
        self.publish(at as u64);
        let unpersisted = (self.written - self.persisted) as usize;
        if self.mode.persists_by_cache_line() && unpersisted >= BUFFER_FLUSH_BYTES {
            self.make_durable()?;
        }
        Ok(Some(offsets))
    }

    fn batch_len(&self, entries: &[LogEntry<'_>]) -> Result<usize> {
        let mut size = 0usize;
        for e in entries {
            let too_long = u32::try_from(e.key.len()).is_err()
                || u32::try_from(e.value.len()).is_err()
                || e.seq > MAX_SEQUENCE;
            if too_long {
                return Err(Error::InvalidArgument(format!(
                    "PM log entry (seq {}, key {} bytes, value {} bytes) exceeds the format limits",
                    e.seq,
                    e.key.len(),
                    e.value.len()
                )));
            }
            size = size.saturating_add(encoded_entry_len(e.key.len(), e.value.len()));
        }
        Ok(size)
    }

    /// Encodes `e` at `at` (beyond `written`, so no reader sees it yet) straight from the
    /// caller's slices: header, key, then the value streamed past the CPU caches when large
    /// (`PmRegion::write_streaming`). Returns the offset after the entry.
    fn write_entry(&self, at: usize, e: &LogEntry<'_>, ends_batch: bool) -> usize {
        let region = &self.log.region;
        let header = encode_entry_header(e, ends_batch, self.crc_seed);
        region.write(at, &header);
        region.write(at + header.len(), e.key);
        let value_at = at + header.len() + e.key.len();
        if e.value.len() >= STREAMING_MIN_BYTES {
            region.write_streaming(value_at, e.value);
        } else {
            region.write(value_at, e.value);
        }
        value_at + e.value.len()
    }

    /// Covers whole batches written up to `end` with `written_size` (not persisted) and
    /// releases them to readers. The streaming drain orders the entries' bytes before both.
    fn publish(&mut self, end: u64) {
        self.log.region.drain_streaming();
        self.written = end;
        self.log.region.store_u64(OFF_WRITTEN_SIZE, self.written);
        self.log.readable.store(self.written, Ordering::Release);
    }

    /// Persists `[persisted, written)`, then stores and persists `used_size = written`.
    fn make_durable(&mut self) -> Result<()> {
        let region = &self.log.region;
        let ctx = |what: &str| format!("persisting {what} of PM log {}", self.log.path.display());
        if self.persisted < self.written {
            let len = (self.written - self.persisted) as usize;
            region
                .persist(self.persisted as usize, len)
                .map_err(|e| Error::io(ctx("entries"), e))?;
            self.persisted = self.written;
        }
        if self.published < self.persisted {
            region.store_u64(OFF_USED_SIZE, self.persisted);
            region
                .persist(OFF_USED_SIZE, 8)
                .map_err(|e| Error::io(ctx("used_size"), e))?;
            self.published = self.persisted;
        }
        Ok(())
    }

    /// Makes every appended batch durable: persists what is not yet persisted and publishes
    /// `used_size` (sync writes, the periodic group commit, sealing).
    pub fn commit(&mut self) -> Result<()> {
        self.make_durable()
    }

    /// True if some appended batch is not yet durable.
    pub fn has_uncommitted(&self) -> bool {
        self.published < self.written
    }

    /// The tail: end of the bytes written.
    pub fn used_bytes(&self) -> u64 {
        self.written
    }

    /// The log's capacity in bytes (header included).
    pub fn capacity(&self) -> u64 {
        self.log.file_size
    }

    /// Commits, then sets and persists the GC_COMPLETE flag.
    pub fn mark_gc_complete(&mut self) -> Result<()> {
        self.commit()?;
        let region = &self.log.region;
        region.store_u64(OFF_FLAGS, region.load_u64(OFF_FLAGS) | FLAG_GC_COMPLETE);
        region.persist(OFF_FLAGS, 8).map_err(|e| {
            Error::io(
                format!("persisting flags of PM log {}", self.log.path.display()),
                e,
            )
        })
    }
}
