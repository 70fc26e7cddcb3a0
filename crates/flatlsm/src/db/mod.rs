//! The public database handle.
//!
//! `Db` is `Send + Sync`: share it (e.g. in an `Arc`) between any number of reader and writer
//! threads. Writers are serialized internally; readers never wait for writers or background
//! work. Background threads flush PMTables, compact L1 into L2 and collect value-log garbage.

mod background;
mod batch;
mod compact;
pub(crate) mod consistency;
mod dirs;
#[cfg(test)]
mod flush_pipeline_tests;
mod flush_queue;
pub(crate) mod identity;
mod jobs;
mod lock;
mod open;
mod open_stores;
#[cfg(test)]
mod race_tests;
mod read;
mod skiplist_recovery;
pub(crate) mod snapshots;
mod stall;
#[cfg(test)]
mod stall_tests;
pub(crate) mod state;
pub(crate) mod stats;
mod store_jobs;
#[cfg(test)]
mod sync_point;
pub(crate) mod vlog_gc_job;
#[cfg(test)]
mod vlog_gc_tests;
mod wal_recovery;
mod write;

pub use batch::WriteBatch;
pub use lock::DirLock;
pub(crate) use open::open_pm_device;
pub use open::{is_database_file_name, is_pm_dir_file_name};
pub use stats::{LevelStats, Stats, StoreCompactionStat, VlogStats};

use crate::error::{Error, Result};
use crate::iter::DbIterator;
use crate::options::{Options, ReadOptions, Snapshot, WriteOptions};
use state::DbInner;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

/// An open FlatLSM database.
pub struct Db {
    inner: Arc<DbInner>,
    threads: parking_lot::Mutex<Vec<JoinHandle<()>>>,
    /// The locked `LOCK` file; dropped by [`Db::close`] so the database can be reopened.
    lock: parking_lot::Mutex<Option<DirLock>>,
}

impl Db {
    /// Opens (or creates) the database at `path`, recovering PMTables in place from PM.
    pub fn open(path: impl AsRef<Path>, opts: Options) -> Result<Db> {
        let (inner, lock) = open::open(path.as_ref(), opts)?;
        let threads = background::start(&inner);
        Ok(Db {
            inner,
            threads: parking_lot::Mutex::new(threads),
            lock: parking_lot::Mutex::new(Some(lock)),
        })
    }

    /// Sets `key` to `value`.
    pub fn put(&self, opts: &WriteOptions, key: &[u8], value: &[u8]) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put(key, value);
        self.write(opts, &b)
    }

    /// Deletes `key` (not an error if it is absent).
    pub fn delete(&self, opts: &WriteOptions, key: &[u8]) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete(key);
        self.write(opts, &b)
    }

    /// Applies every update of `batch` atomically: after a crash either all or none survive,
    /// and readers see all or none. While flushes lag behind, the write is delayed (slowdown)
    /// or waits for a free PMTable (stop), or fails with [`Error::WriteStall`] under
    /// [`WriteOptions::no_slowdown`].
    pub fn write(&self, opts: &WriteOptions, batch: &WriteBatch) -> Result<()> {
        let bytes = self.inner.validate_batch(batch)?;
        self.inner.admit_write(opts, bytes)?;
        let _w = self.inner.write_lock.lock();
        self.inner.write_locked(opts, batch)
    }

    /// Puts `value` only if `key` has no live value; returns whether it was inserted
    /// (SLM-DB's insert-if-absent).
    pub fn insert_if_absent(&self, opts: &WriteOptions, key: &[u8], value: &[u8]) -> Result<bool> {
        self.conditional_put(opts, key, value, false)
    }

    /// Puts `value` only if `key` has a live value; returns whether it was updated
    /// (SLM-DB's update-if-present).
    pub fn update_if_present(&self, opts: &WriteOptions, key: &[u8], value: &[u8]) -> Result<bool> {
        self.conditional_put(opts, key, value, true)
    }

    fn conditional_put(
        &self,
        opts: &WriteOptions,
        key: &[u8],
        value: &[u8],
        want_present: bool,
    ) -> Result<bool> {
        let mut b = WriteBatch::new();
        b.put(key, value);
        let bytes = self.inner.validate_batch(&b)?;
        self.inner.admit_write(opts, bytes)?;
        let _w = self.inner.write_lock.lock();
        let present = self.inner.exists_now(key)?;
        if present != want_present {
            return Ok(false);
        }
        self.inner.write_locked(opts, &b)?;
        Ok(true)
    }

    /// The value of `key`, or `None` if it is absent or deleted.
    pub fn get(&self, opts: &ReadOptions<'_>, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.check_open()?;
        self.inner.get_at(key, opts.snapshot.map(|s| s.seq))
    }

    /// An iterator over all keys in ascending order, positioned at the first key.
    pub fn iter(&self, opts: &ReadOptions<'_>) -> Result<DbIterator> {
        self.range(opts, None, None)
    }

    /// An iterator over keys in `[lower, upper)` (each bound optional), positioned at the
    /// first key of the range. Use `seek` to move within it.
    pub fn range(
        &self,
        opts: &ReadOptions<'_>,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
    ) -> Result<DbIterator> {
        self.check_open()?;
        let mut it = self.inner.db_iter(
            opts.snapshot.map(|s| s.seq),
            lower.map(<[u8]>::to_vec),
            upper.map(<[u8]>::to_vec),
        );
        it.seek_to_first();
        Ok(it)
    }

    /// A consistent view of the database as of now, valid until dropped.
    pub fn snapshot(&self) -> Snapshot {
        let seq = self.inner.snapshots.acquire(|| self.inner.visible());
        self.inner.sync_point("snapshot:seq_chosen");
        Snapshot {
            seq,
            registry: self.inner.snapshots.clone(),
        }
    }

    /// Seals the mutable PMTable and waits until every PMTable is flushed to the Ordered-L1.
    pub fn flush(&self) -> Result<()> {
        self.check_open()?;
        background::flush_all(&self.inner)
    }

    /// Flushes, then compacts the L1 files overlapping `[begin, end]` (all if `None`) into L2.
    pub fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        self.flush()?;
        compact::compact_range(&self.inner, begin, end)
    }

    /// A report of sizes, bytes written, write amplification and stalls.
    pub fn stats(&self) -> Stats {
        background::stats(&self.inner)
    }

    /// Waits until no flush, compaction or value-log GC is due (for benchmarks' "settled").
    pub fn wait_for_background_work(&self) -> Result<()> {
        background::wait_idle(&self.inner)
    }

    /// Makes every write durable, stops background work and closes the database.
    /// Later calls on this handle return [`Error::Closed`].
    pub fn close(&self) -> Result<()> {
        if self.inner.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let _w = self.inner.write_lock.lock();
        let persisted = self.inner.sv.load().mem.commit().and(self.inner.sync_wal());
        self.inner.shutting_down.store(true, Ordering::Release);
        self.inner.wake_all();
        // Background threads only end slowdown episodes, never start one: end it here.
        self.inner.finish_slowdown();
        for t in self.threads.lock().drain(..) {
            let _ = t.join();
        }
        let pooled = self
            .inner
            .pm_pool
            .clear()
            .and(self.inner.remove_volatile_pm());
        // Releasing the lock last: no thread of this handle writes any more.
        drop(self.lock.lock().take());
        persisted.and(pooled)
    }

    fn check_open(&self) -> Result<()> {
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(Error::Closed);
        }
        Ok(())
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            log::error!("closing the database failed: {e}");
        }
    }
}
