//! The write path: validate, assign sequence numbers, append to the mutable PMTable (switching
//! or GC-ing PMTables when it is full), then publish the new visible sequence.
//!
//! Writers are serialized by `write_lock`; a batch becomes visible to readers all at once when
//! `visible_seq` advances past its last entry. The slowdown step before `write_lock` and the
//! stop when every PMTable is in use are in `stall.rs`.

use super::batch::WriteBatch;
use super::state::{DbInner, SuperVersion};
use crate::buffer::BufferRef;
use crate::designs::new_buffer;
use crate::error::{Error, Result};
use crate::observe::stats::Counters;
use crate::options::{WriteOptions, MAX_KEY_SIZE};
use crate::pmtable::log::{encoded_entry_len, LogEntry, PM_LOG_HEADER_LEN};
use crate::pmtable::PmTable;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes a batch takes in a PM Log (entry headers included).
fn encoded_batch_len(entries: &[LogEntry<'_>]) -> u64 {
    entries
        .iter()
        .map(|e| encoded_entry_len(e.key.len(), e.value.len()) as u64)
        .sum()
}

impl DbInner {
    /// Checks sizes before anything is written; returns the bytes the batch takes in the
    /// design's write buffer (PM Log entries or skiplist nodes), which must fit an empty one.
    pub(crate) fn validate_batch(&self, batch: &WriteBatch) -> Result<u64> {
        let kind = self.design.buffer_kind();
        let mut total = 0u64;
        for op in &batch.ops {
            self.validate_sizes(op.key.len(), op.value.len())?;
            total += kind.entry_bytes(op.key.len(), op.value.len());
        }
        let room = kind.room_when_empty(self.opts.pmtable_size);
        if total > room {
            return Err(Error::InvalidArgument(format!(
                "write batch needs {total} bytes of write buffer ({kind:?}), more than the {room} an empty one of {} bytes (pmtable_size) holds",
                self.opts.pmtable_size
            )));
        }
        Ok(total)
    }

    /// `Err` if a key or value is larger than the limits.
    fn validate_sizes(&self, key_len: usize, value_len: usize) -> Result<()> {
        let max_value = self.opts.max_value_size();
        if key_len > MAX_KEY_SIZE {
            return Err(Error::InvalidArgument(format!(
                "key of {key_len} bytes exceeds the limit of {MAX_KEY_SIZE} bytes"
            )));
        }
        if value_len > max_value {
            return Err(Error::InvalidArgument(format!(
                "value of {value_len} bytes exceeds the limit of {max_value} bytes (half a PMTable, at most 256 MiB)"
            )));
        }
        Ok(())
    }

    /// Applies a batch; the caller holds `write_lock`.
    pub(crate) fn write_locked(&self, opts: &WriteOptions, batch: &WriteBatch) -> Result<()> {
        self.check_writable()?;
        if batch.is_empty() {
            return Ok(());
        }
        self.quiet.note_op();
        let first = self.visible() + 1;
        let entries: Vec<LogEntry<'_>> = batch
            .ops
            .iter()
            .enumerate()
            .map(|(i, op)| LogEntry {
                seq: first + i as u64,
                kind: op.kind,
                key: &op.key,
                value: &op.value,
            })
            .collect();
        let need = encoded_batch_len(&entries);
        let mut mem = self.versions.sv().mem.clone();
        if opts.no_slowdown {
            self.refuse_if_stop_due(&*mem, &entries)?;
        }
        if !mem.has_room(&entries) {
            mem = self.make_room(&entries)?;
        }
        self.fail_stop(self.log_batch(first, batch, opts.sync))?;
        if !self.fail_stop(self.append_to(&mem, &entries))? {
            let e = Error::InvalidState(format!("write buffer {} lost its room", mem.number()));
            return Err(self.fail_stop::<()>(Err(e)).unwrap_err());
        }
        if opts.sync {
            self.fail_stop(mem.commit())?;
        }
        Counters::add(&self.counters.pm_bytes_written, need);
        Counters::add(&self.counters.user_bytes, batch.user_bytes() as u64);
        Counters::add(&self.counters.user_writes, batch.len() as u64);
        self.writes.publish(first + batch.len() as u64 - 1);
        Ok(())
    }

    /// Appends the batch to the write-ahead log, for designs with one (a DRAM write buffer):
    /// handed to the OS before the buffer takes it, and synced first under `sync`.
    /// Timed under `write_breakdown` (designs without a log have no WAL time, not a no-op's).
    fn log_batch(&self, first: u64, batch: &WriteBatch, sync: bool) -> Result<()> {
        let timed = self.opts.write_breakdown && self.design.uses_wal();
        let started = timed.then(Instant::now);
        let entries = batch
            .ops
            .iter()
            .map(|op| (op.kind, &op.key[..], &op.value[..]));
        let logged = self.writes.wals().log_batch(first, entries, sync);
        let took = started.map_or(Duration::ZERO, |t| t.elapsed());
        Counters::add(&self.counters.write_wal_nanos, took.as_nanos() as u64);
        logged
    }

    /// Appends `entries` to `mem`; under `write_breakdown` its data append and the rest of
    /// the call (the index insert) are counted apart.
    fn append_to(&self, mem: &BufferRef, entries: &[LogEntry<'_>]) -> Result<bool> {
        if !self.opts.write_breakdown {
            return mem.append_batch(entries);
        }
        let started = Instant::now();
        let (fit, data) = mem.append_batch_timed(entries)?;
        let index = started.elapsed().saturating_sub(data);
        Counters::add(&self.counters.write_mem_data_nanos, data.as_nanos() as u64);
        Counters::add(
            &self.counters.write_mem_index_nanos,
            index.as_nanos() as u64,
        );
        Ok(fit)
    }

    /// Passes on the result of a step that may have put the batch into the log. On failure the
    /// batch may be in the log and index (invisible: `visible_seq` has not moved past it) and
    /// may even reach the disk, so its sequence numbers must never be given out again: the
    /// error becomes the background error and every later write fails until a reopen, whose
    /// recovery finds the batch either whole (durable, then visible) or not at all.
    fn fail_stop<T>(&self, step: Result<T>) -> Result<T> {
        step.inspect_err(|e| self.set_bg_error(e))
    }

    /// The mutable PMTable has no room for `batch`: garbage-collect it if that frees room
    /// (paper 4.2.2), else seal it and start a new one, blocking while every PMTable is in use.
    ///
    /// Progress: the returned table has room for the batch (a GC result without room is sealed
    /// too, and `validate_batch` makes every batch fit an empty table), so the caller's append
    /// succeeds and no two GCs run without an append between them.
    fn make_room(&self, batch: &[LogEntry<'_>]) -> Result<BufferRef> {
        let need = encoded_batch_len(batch);
        let old = self.versions.sv().mem.clone().as_pmtable();
        if let Some(old) = old.filter(|t| self.gc_frees_room(t, need)) {
            let fresh = self.gc_mutable(old)?;
            if fresh.has_room(batch) {
                return Ok(fresh);
            }
        }
        let fresh = self.seal_mutable()?;
        if !fresh.has_room(batch) {
            return Err(Error::InvalidState(format!(
                "an empty write buffer has no room for a batch of {need} bytes (validate_batch admitted it)"
            )));
        }
        Ok(fresh)
    }

    /// True if a GC of `table` shrinks its log entries by more than `pmtable_gc_ratio` while
    /// leaving room for `need` more bytes. All sizes are log bytes (entry headers included), so
    /// a table without garbage never qualifies. Live bytes are a cheap lower bound of what the
    /// GC keeps; the exact size (versions open snapshots need included) is then computed from
    /// the index, so a GC that would free nothing is never started.
    fn gc_frees_room(&self, table: &PmTable, need: u64) -> bool {
        if self.design.uses_wal() {
            return false; // the log would have to be rewritten with the table
        }
        let entries = table.log_bytes().saturating_sub(PM_LOG_HEADER_LEN as u64) as f64;
        let shrinks = |kept: u64| entries > self.opts.pmtable_gc_ratio * (kept + need) as f64;
        if !shrinks(table.live_bytes()) {
            return false;
        }
        let oldest = self.snapshots.oldest(self.visible());
        let range_dels = &self.versions.sv().version.range_dels;
        shrinks(table.gc_output_bytes(oldest, range_dels) - PM_LOG_HEADER_LEN as u64)
    }

    /// Seals the mutable table into the immutables and starts a new one, blocking while
    /// every PMTable is in use. The caller holds `write_lock`.
    pub(crate) fn seal_mutable(&self) -> Result<BufferRef> {
        self.wait_for_free_pmtable()?;
        let started = std::time::Instant::now();
        let old = self.versions.sv().mem.clone();
        old.seal()?;
        self.note_switch(old.log_bytes());
        self.quiet.note_switch();
        let number = self.new_buffer_number();
        let fresh = self.create_buffer(number).inspect_err(|_| {
            self.versions.records().abandon(number);
        })?;
        self.record_buffer(&*fresh)?;
        self.replace_mutable(fresh.clone(), Some(old));
        self.versions.abandon_outputs(&[number]);
        self.bg.wake_all();
        log_slow_switch(started);
        Ok(fresh)
    }

    /// Removes what this database put in PM as mere memory (`Placement::Pm`): the block
    /// cache's region, and write buffers a write-ahead log protects. Only at close.
    pub(crate) fn remove_volatile_pm(&self) -> Result<()> {
        if self.design.uses_wal() {
            let names = self.files.pm().list_regions()?;
            // Only write buffers: the device may also hold a design's store (MatrixKV's
            // container) or the block cache (removed below).
            for name in names.iter().filter(|n| crate::pmtable::is_buffer_region(n)) {
                self.files.pm().remove_region(name)?;
            }
        }
        let cache_in_pm = self.opts.block_cache_placement == crate::options::Placement::Pm;
        if cache_in_pm && self.opts.block_cache_size > 0 {
            let pm = crate::layout::open_pm_device(self.files.path(), &self.opts)?;
            pm.remove_region(crate::file_names::BLOCK_CACHE_REGION)?;
        }
        Ok(())
    }

    /// Creates write buffer `number` of the design's kind, and its write-ahead log for designs
    /// with one.
    fn create_buffer(&self, number: u64) -> Result<BufferRef> {
        let kind = self.design.buffer_kind();
        let fresh = new_buffer(kind, self.files.pm_pool(), number, self.opts.pmtable_size)?;
        self.start_wal(number)?;
        Ok(fresh)
    }

    /// Starts the write-ahead log of write buffer `number` (designs with one): created and
    /// synced before the manifest names it. The previous log is synced first, so a `sync`
    /// write's durability never depends on an older log and only the newest log can have an
    /// unsynced tail (the recovery rule of `recovery/wal_rules.rs`). The new log's marker records the
    /// last sequence handed out (the caller holds `write_lock`): the older log's last write, or
    /// a range tombstone after it.
    fn start_wal(&self, number: u64) -> Result<()> {
        self.fail_stop(
            self.writes
                .wals()
                .roll(self.files.dyn_fs(), number, self.visible()),
        )
    }

    /// Rewrites the live entries of the mutable table into a fresh one that replaces it.
    fn gc_mutable(&self, old: Arc<PmTable>) -> Result<BufferRef> {
        let started = std::time::Instant::now();
        old.seal()?;
        let oldest = self.snapshots.oldest(self.visible());
        let number = self.new_buffer_number();
        let fresh = old.rewrite_live(
            &**self.files.pm(),
            number,
            self.opts.pmtable_size,
            oldest,
            &self.versions.sv().version.range_dels,
        );
        let fresh = fresh.inspect_err(|_| self.versions.records().abandon(number))?;
        self.record_buffer(&*fresh)?;
        self.replace_mutable(fresh.clone(), None);
        self.versions.abandon_outputs(&[number]);
        let line = super::events::pmtable_gc_line(&*old, &*fresh, started.elapsed());
        self.files.pm_pool().retire(old)?;
        Counters::add(&self.counters.pm_gc_bytes, fresh.log_bytes());
        Counters::add(&self.counters.pmtable_gcs, 1);
        self.info_log.line(&line);
        Ok(fresh)
    }

    /// Installs `fresh` as the mutable table; `sealed` (if any) joins the immutables.
    fn replace_mutable(&self, fresh: BufferRef, sealed: Option<BufferRef>) {
        self.versions.swap_sv(|cur| {
            let mut imms = cur.imms.clone();
            if let Some(s) = sealed {
                imms.insert(0, s);
            }
            SuperVersion {
                mem: fresh,
                imms,
                version: cur.version.clone(),
                level0: cur.level0.clone(),
            }
        });
    }
}

/// Logs a PMTable switch that held writers up for more than 20 ms (e.g. a fresh PM Log had to
/// be created because the pool had none).
fn log_slow_switch(started: std::time::Instant) {
    let took = started.elapsed();
    if took > std::time::Duration::from_millis(20) {
        log::debug!("PMTable switch took {} ms", took.as_millis());
    }
}
