//! [`PmLogPool`]: the PM Logs of PMTables that are no longer needed (flushed, or replaced by a
//! PMTable GC), kept mapped for the next PMTables, so the write path never zeroes or faults in
//! fresh pages (on tmpfs/DAX the first touch of a new 256 MiB log cost a third of the writer's
//! CPU).
//!
//! Life of a log: in use → *retired* (its table left every super version, but a reader may still
//! hold it) → *free* (no handle left: its file renamed `NNNNNN.pmfree`, the mapping kept) →
//! reused by [`PmLogWriter::create_recycled`] under a new number. Logs beyond the pool's capacity
//! are deleted instead.
//!
//! Invariant: a region is written again only after its table's last `Arc` is gone, so no reader
//! can see the new log's bytes through the old table.
//!
//! Quiet writes: once no PMTable was created for [`QUIET_AFTER`], the pool keeps only
//! [`QUIET_SPARE_LOGS`] free logs and deletes the rest ([`PmLogPool::trim_when_quiet`]): after a
//! write burst, free logs are memory held against writes that are not coming (emulated PM is
//! DRAM that no page cache can reclaim; RocksDB frees a memtable's arena once it is flushed).
//! A new burst creates logs again off the write path ([`PmLogPool::prepare_spare`]).
//!
//! Recovery rule: a `.pmfree` region holds nothing anyone needs (its log was below
//! `min_unflushed_pmlog` or replaced by a completed GC before it was retired); open deletes it.
//!
//! Thread-safety: `Send + Sync`; one mutex, held while renaming (never while a writer appends).

use super::log::PmLogWriter;
use super::table::PmTable;
use crate::error::Result;
use crate::file_names::pm_log_file_name;
use crate::pm::{PmDeviceRef, PmRegion};
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Free logs kept at most by `PmLogPool::new`'s default (tests); a database keeps up to
/// `max_write_buffer_number`. Logs are reused before any is created, so the logs in use plus the
/// free ones never exceed the most ever in use at once (at most `max_write_buffer_number`) plus
/// those retired but still read.
#[cfg(test)]
pub const POOL_CAPACITY: usize = 2;

/// Free logs [`PmLogPool::prepare_spare`] keeps ready: a writer may switch PMTables twice while
/// a flush runs (before the flush returns its logs).
pub const SPARE_LOGS: usize = 2;

/// Free logs kept once writes are quiet.
pub const QUIET_SPARE_LOGS: usize = 1;

/// How long without a new PMTable makes writes quiet. Long enough that a writer switching
/// PMTables steadily (one 256 MiB table per 2 s is 128 MB/s) keeps its spares.
pub const QUIET_AFTER: Duration = Duration::from_secs(2);

/// Name of the free region that was log `number`.
pub fn pool_file_name(number: u64) -> String {
    format!("{number:06}.pmfree")
}

/// True for names made by [`pool_file_name`].
pub fn is_pool_file_name(name: &str) -> bool {
    name.strip_suffix(".pmfree")
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// Retired and free PM Logs of one database.
pub struct PmLogPool {
    device: PmDeviceRef,
    capacity: usize,
    /// Time without a new PMTable after which writes count as quiet ([`QUIET_AFTER`]).
    quiet_after: Duration,
    state: Mutex<PoolState>,
}

struct PoolState {
    /// When the last PMTable was created (or the pool, before any).
    last_demand: Instant,
    /// Tables whose logs are no longer needed, maybe still read.
    retired: Vec<Arc<PmTable>>,
    /// Free regions by pool name, mapped.
    free: Vec<(String, Arc<dyn PmRegion>)>,
}

impl PmLogPool {
    /// An empty pool over `device`.
    #[cfg(test)]
    pub fn new(device: PmDeviceRef) -> Self {
        Self::with_capacity(device, POOL_CAPACITY)
    }

    /// An empty pool keeping up to `capacity` free logs. A database passes
    /// `max_write_buffer_number`: with fewer, every time the backlog of immutables grows the
    /// writer creates (and faults in) a fresh log, and deletes one when it shrinks again.
    pub fn with_capacity(device: PmDeviceRef, capacity: usize) -> Self {
        PmLogPool {
            device,
            capacity,
            quiet_after: QUIET_AFTER,
            state: Mutex::new(PoolState {
                last_demand: Instant::now(),
                retired: Vec::new(),
                free: Vec::new(),
            }),
        }
    }

    /// The pool with writes counted as quiet after `quiet_after` (tests).
    #[cfg(test)]
    pub fn quiet_after(mut self, quiet_after: Duration) -> Self {
        self.quiet_after = quiet_after;
        self
    }

    /// True once no PMTable was created for `quiet_after`.
    fn quiet(&self, st: &PoolState) -> bool {
        st.last_demand.elapsed() >= self.quiet_after
    }

    /// Free logs to keep ready now: fewer once writes are quiet.
    fn spare_target(&self, st: &PoolState) -> usize {
        match self.quiet(st) {
            true => QUIET_SPARE_LOGS,
            false => SPARE_LOGS,
        }
    }

    /// Deletes the free logs beyond [`QUIET_SPARE_LOGS`] if writes are quiet; how many it
    /// deleted. The files go after the lock is released (freeing a large tmpfs file takes a
    /// while, and a writer may want the pool meanwhile).
    pub fn trim_when_quiet(&self) -> Result<usize> {
        let extra = {
            let mut st = self.state.lock();
            match self.quiet(&st) && st.free.len() > QUIET_SPARE_LOGS {
                true => st.free.split_off(QUIET_SPARE_LOGS),
                false => Vec::new(),
            }
        };
        for (name, _region) in &extra {
            self.device.remove_region(name)?;
        }
        Ok(extra.len())
    }

    /// The device the pool's logs live on.
    pub fn device(&self) -> &PmDeviceRef {
        &self.device
    }

    /// Takes `table`'s log out of use: it is recycled (or deleted) once no reader holds it.
    pub fn retire(&self, table: Arc<PmTable>) -> Result<()> {
        let mut st = self.state.lock();
        st.retired.push(table);
        self.sweep(&mut st)
    }

    /// A new mutable PMTable for log `number`: on a free region of the right size if there is
    /// one, else on a freshly created region.
    pub fn create_table(
        &self,
        number: u64,
        capacity: usize,
        replaces: Option<u64>,
    ) -> Result<Arc<PmTable>> {
        let reused = {
            let mut st = self.state.lock();
            st.last_demand = Instant::now();
            self.sweep(&mut st)?;
            let fits = st.free.iter().position(|(_, r)| r.len() == capacity);
            fits.map(|i| st.free.swap_remove(i))
        };
        let writer = match reused {
            Some((pool_name, region)) => {
                let dev = &*self.device;
                PmLogWriter::create_recycled(dev, region, &pool_name, number, replaces)?
            }
            None => PmLogWriter::create(&*self.device, number, capacity, replaces)?,
        };
        Ok(PmTable::from_writer(writer))
    }

    /// Frees every retired log no reader holds any more.
    fn sweep(&self, st: &mut PoolState) -> Result<()> {
        let mut i = 0;
        while i < st.retired.len() {
            if Arc::strong_count(&st.retired[i]) > 1 {
                i += 1;
                continue;
            }
            let table = st.retired.swap_remove(i);
            self.free_log(st, table)?;
        }
        Ok(())
    }

    /// Moves an unreferenced table's region to the free list, or deletes it when the list is
    /// full (or another handle to the log still exists).
    fn free_log(&self, st: &mut PoolState, table: Arc<PmTable>) -> Result<()> {
        let number = table.number();
        let name = pm_log_file_name(number);
        let region = table.into_log().and_then(|log| log.into_region());
        match region {
            Some(region) if st.free.len() < self.capacity => {
                let pool_name = pool_file_name(number);
                self.device.rename_region(&name, &pool_name)?;
                st.free.push((pool_name, region));
                Ok(())
            }
            _ => self.device.remove_region(&name),
        }
    }

    /// Creates one fresh free log of `capacity` bytes under pool name `number` if fewer than
    /// [`SPARE_LOGS`] are free and `in_use` (the PMTables of the database) plus the retired and
    /// free logs leave room under the pool's capacity; `Ok(true)` if it did. Run off the write
    /// path (the flush thread), so a writer switching PMTables reuses a log instead of
    /// allocating and zeroing a fresh one. Creation happens outside the pool's lock.
    pub fn prepare_spare(&self, number: u64, capacity: usize, in_use: usize) -> Result<bool> {
        if !self.wants_spare(in_use) {
            return Ok(false);
        }
        let name = pool_file_name(number);
        let region = self.device.create_region(&name, capacity)?;
        let mut st = self.state.lock();
        if st.free.len() >= self.capacity {
            drop(st);
            self.device.remove_region(&name)?;
            return Ok(false);
        }
        st.free.push((name, region));
        Ok(true)
    }

    fn wants_spare(&self, in_use: usize) -> bool {
        let st = self.state.lock();
        let held = in_use + st.retired.len() + st.free.len();
        st.free.len() < self.spare_target(&st) && held < self.capacity
    }

    /// Deletes every free and retired log's file (at close; mappings stay valid for readers).
    pub fn clear(&self) -> Result<()> {
        let mut st = self.state.lock();
        for (name, _) in std::mem::take(&mut st.free) {
            self.device.remove_region(&name)?;
        }
        for table in std::mem::take(&mut st.retired) {
            self.device
                .remove_region(&pm_log_file_name(table.number()))?;
        }
        Ok(())
    }

    /// Number of free logs (for stats and tests).
    #[cfg(test)]
    pub fn free_count(&self) -> usize {
        self.state.lock().free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pm::SimulatedPmDevice;
    use crate::pmtable::log::{LogEntry, PmLog};
    use crate::types::ValueKind;

    const SIZE: usize = 64 << 10;

    fn filled(pool: &PmLogPool, number: u64, seq: u64) -> Arc<PmTable> {
        let t = pool.create_table(number, SIZE, None).unwrap();
        let value = [number as u8; 300];
        let e = LogEntry {
            seq,
            kind: ValueKind::Value,
            key: b"k",
            value: &value,
        };
        assert!(t.append_batch(&[e]).unwrap());
        t.seal().unwrap();
        t
    }

    #[test]
    fn retired_log_is_reused_only_after_its_last_reader_lets_go() {
        let device = SimulatedPmDevice::new();
        let pool = PmLogPool::new(device.clone());
        let old = filled(&pool, 1, 10);
        let reader = old.clone();
        pool.retire(old).unwrap();
        assert_eq!(pool.free_count(), 0, "a reader still holds log 1");
        let _second = filled(&pool, 2, 20);
        assert_eq!(device.region_names(), ["000001.pmlog", "000002.pmlog"]);
        drop(reader);
        let third = pool.create_table(3, SIZE, None).unwrap();
        assert_eq!(device.region_names(), ["000002.pmlog", "000003.pmlog"]);
        assert!(third.is_empty());
        let reopened = PmLog::open(&*device, "000003.pmlog").unwrap();
        assert!(
            PmTable::recover(reopened).unwrap().is_empty(),
            "log 1's entry is gone"
        );
    }

    #[test]
    fn pool_keeps_at_most_its_capacity_and_clear_removes_every_file() {
        let device = SimulatedPmDevice::new();
        let pool = PmLogPool::new(device.clone());
        let tables: Vec<_> = (1..=4).map(|n| filled(&pool, n, n)).collect();
        for t in tables {
            pool.retire(t).unwrap();
        }
        assert_eq!(pool.free_count(), POOL_CAPACITY);
        assert_eq!(device.region_names(), ["000001.pmfree", "000002.pmfree"]);
        let held = filled(&pool, 5, 5); // reuses a free log
        let reader = held.clone();
        pool.retire(held).unwrap();
        pool.clear().unwrap();
        assert!(
            device.region_names().is_empty(),
            "{:?}",
            device.region_names()
        );
        drop(reader);
    }

    #[test]
    fn spares_are_created_off_the_write_path_up_to_the_capacity_and_then_reused() {
        let device = SimulatedPmDevice::new();
        let pool = PmLogPool::with_capacity(device.clone(), 4);
        assert!(pool.prepare_spare(10, SIZE, 1).unwrap());
        assert!(pool.prepare_spare(11, SIZE, 1).unwrap());
        assert!(
            !pool.prepare_spare(12, SIZE, 1).unwrap(),
            "two spares are enough"
        );
        assert_eq!(device.region_names(), ["000010.pmfree", "000011.pmfree"]);
        let t = pool.create_table(13, SIZE, None).unwrap();
        assert_eq!(
            device.region_names().len(),
            2,
            "a spare was renamed, none created"
        );
        assert!(t.is_empty());
        // In use 3 + 1 free = the capacity of 4: no more spares.
        assert!(!pool.prepare_spare(14, SIZE, 3).unwrap());
    }

    #[test]
    fn once_writes_are_quiet_the_pool_keeps_one_free_log_and_a_new_table_ends_the_quiet() {
        let device = SimulatedPmDevice::new();
        let pool = PmLogPool::with_capacity(device.clone(), 5).quiet_after(Duration::ZERO);
        let tables: Vec<_> = (1..=4).map(|n| filled(&pool, n, n)).collect();
        tables.into_iter().try_for_each(|t| pool.retire(t)).unwrap();
        assert_eq!(pool.free_count(), 4);
        assert_eq!(pool.trim_when_quiet().unwrap(), 3);
        assert_eq!(device.region_names().len(), QUIET_SPARE_LOGS);
        assert!(
            !pool.prepare_spare(10, SIZE, 1).unwrap(),
            "quiet: one spare is enough"
        );
        let busy =
            PmLogPool::with_capacity(device.clone(), 5).quiet_after(Duration::from_secs(3600));
        let _t = busy.create_table(11, SIZE, None).unwrap();
        assert!(busy.prepare_spare(12, SIZE, 1).unwrap());
        assert!(
            busy.prepare_spare(13, SIZE, 1).unwrap(),
            "writing: two spares"
        );
        assert_eq!(busy.trim_when_quiet().unwrap(), 0);
    }

    #[test]
    fn pool_file_names_round_trip() {
        assert_eq!(pool_file_name(7), "000007.pmfree");
        assert!(is_pool_file_name("000007.pmfree"));
        assert!(!is_pool_file_name(".pmfree") && !is_pool_file_name("000007.pmlog"));
    }
}
