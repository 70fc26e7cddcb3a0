//! The public database handle.
//!
//! `Db` is `Send + Sync`: share it (e.g. in an `Arc`) between any number of reader and writer
//! threads. Writers are serialized internally; readers never wait for writers or background
//! work. Background threads flush PMTables, compact L1 into L2 and collect value-log garbage.

mod approximate;
mod batch;
pub(crate) mod bg_state;
#[cfg(test)]
mod bg_wait_tests;
mod bounds;
#[cfg(test)]
mod breakdown_tests;
pub(crate) mod buffer_records;
pub use bounds::prefix_end;
pub(crate) mod events;
pub(crate) mod files;
#[cfg(test)]
mod flush_pipeline_tests;
pub(crate) mod flush_progress;
pub(crate) mod flush_queue;
mod garbage_pace;
pub(crate) mod quiet;
#[cfg(test)]
mod quiet_tests;
#[cfg(test)]
mod race_tests;
mod range_delete;
mod read;
mod read_batch;
pub(crate) mod read_charges;
mod report;
mod stall;
#[cfg(test)]
mod stall_tests;
pub(crate) mod state;
#[cfg(test)]
mod sync_point;
pub(crate) mod version_set;
pub(crate) mod waits;
pub(crate) mod wals;
mod write;
pub(crate) mod writes;

pub use crate::layout::lock::DirLock;
pub use crate::observe::{
    BlockCacheStats, BloomStats, LevelStats, Stats, StoreCompactionStat, VlogStats,
};
pub use crate::observe::{LatencyStats, LatencySummary};
pub use crate::observe::{LATENCY_OPERATIONS, PROPERTY_NAMES};
pub use batch::WriteBatch;

use crate::error::{Error, Result};
use crate::iter::DbIterator;
use crate::options::{ReadOptions, Snapshot, WriteOptions};
use state::DbInner;
use std::ops::RangeBounds;
use std::sync::Arc;
use std::thread::JoinHandle;

/// An open FlatLSM database.
///
/// Cheap to clone: every clone is a handle to the same open database (an `Arc` inside), as
/// fjall's handles are. [`Db::close`] on any handle closes the database for all of them (later
/// calls return [`Error::Closed`]); dropping the last handle closes it too. Closing persists
/// the write buffer, then waits for the background threads to stop: a running flush or
/// compaction ends at its next output file (it checks for shutdown between files), so a drop
/// may block for up to one SST write — call `close` from a blocking context (e.g. tokio's
/// `spawn_blocking`) rather than dropping the last handle on an async executor thread.
#[derive(Clone)]
pub struct Db {
    pub(crate) inner: Arc<DbInner>,
    handle: Arc<Handle>,
}

/// What the handles share; closed when the last one is dropped.
struct Handle {
    inner: Arc<DbInner>,
    threads: parking_lot::Mutex<Vec<JoinHandle<()>>>,
    /// The locked `LOCK` file; dropped by [`Db::close`] so the database can be reopened.
    lock: parking_lot::Mutex<Option<DirLock>>,
}

impl Db {
    /// Sets `key` to `value` (default [`WriteOptions`]).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mut opts = flatlsm::Options::default();
    /// # opts.pm_path = Some(dir.path().join("pm"));
    /// let db = flatlsm::Db::open(dir.path().join("db"), opts)?;
    /// db.put("user:1", "ada")?;
    /// db.put(String::from("user:2"), vec![b'b'; 3])?;
    /// assert_eq!(db.get("user:1")?.as_deref(), Some(&b"ada"[..]));
    /// # Ok::<(), flatlsm::Error>(())
    /// ```
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.put_opt(key, value, &WriteOptions::default())
    }

    /// [`Db::put`] with explicit options (e.g. `sync`).
    pub fn put_opt(
        &self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        opts: &WriteOptions,
    ) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put(key, value);
        self.latency().put.time(|| self.write_untimed(&b, opts))
    }

    /// Deletes `key` (not an error if it is absent).
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        self.delete_opt(key, &WriteOptions::default())
    }

    /// [`Db::delete`] with explicit options.
    pub fn delete_opt(&self, key: impl AsRef<[u8]>, opts: &WriteOptions) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete(key);
        self.latency().put.time(|| self.write_untimed(&b, opts))
    }

    /// Applies every update of `batch` atomically: after a crash either all or none survive,
    /// and readers see all or none. While flushes lag behind, the write is delayed (slowdown)
    /// or waits for a free PMTable (stop), or fails with [`Error::WriteStall`] under
    /// [`WriteOptions::no_slowdown`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mut opts = flatlsm::Options::default();
    /// # opts.pm_path = Some(dir.path().join("pm"));
    /// # let db = flatlsm::Db::open(dir.path().join("db"), opts)?;
    /// let mut batch = flatlsm::WriteBatch::new();
    /// batch.put("a", "1").put("b", "2").delete("c");
    /// db.write(&batch)?;
    /// # Ok::<(), flatlsm::Error>(())
    /// ```
    pub fn write(&self, batch: &WriteBatch) -> Result<()> {
        self.write_opt(batch, &WriteOptions::default())
    }

    /// [`Db::write`] with explicit options.
    pub fn write_opt(&self, batch: &WriteBatch, opts: &WriteOptions) -> Result<()> {
        self.latency()
            .write
            .time(|| self.write_untimed(batch, opts))
    }

    /// An unconditional write, not timed (the caller times it as a put or a write).
    fn write_untimed(&self, batch: &WriteBatch, opts: &WriteOptions) -> Result<()> {
        self.write_if(batch, opts, |_| Ok(true)).map(drop)
    }

    /// The one write path: `batch` checked and admitted (slowdown, stop), then written under
    /// the writer lock if `condition`, checked under that lock, holds; returns whether it was.
    fn write_if(
        &self,
        batch: &WriteBatch,
        opts: &WriteOptions,
        condition: impl FnOnce(&DbInner) -> Result<bool>,
    ) -> Result<bool> {
        self.check_open()?;
        let bytes = self.inner.validate_batch(batch)?;
        self.inner.admit_write(opts, bytes)?;
        let _w = self.inner.writes.lock();
        if !condition(&self.inner)? {
            return Ok(false);
        }
        self.inner.write_locked(opts, batch)?;
        Ok(true)
    }

    /// Puts `value` only if `key` has no live value; returns whether it was inserted
    /// (SLM-DB's insert-if-absent).
    pub fn insert_if_absent(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<bool> {
        let w = WriteOptions::default();
        self.conditional_put(key.as_ref(), value.as_ref(), false, &w)
    }

    /// Puts `value` only if `key` has a live value; returns whether it was updated
    /// (SLM-DB's update-if-present).
    pub fn update_if_present(
        &self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Result<bool> {
        let w = WriteOptions::default();
        self.conditional_put(key.as_ref(), value.as_ref(), true, &w)
    }

    /// [`Db::insert_if_absent`] (`present` false) or [`Db::update_if_present`] (true) with
    /// explicit options.
    pub fn put_if_opt(
        &self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        present: bool,
        opts: &WriteOptions,
    ) -> Result<bool> {
        self.conditional_put(key.as_ref(), value.as_ref(), present, opts)
    }

    fn conditional_put(
        &self,
        key: &[u8],
        value: &[u8],
        want_present: bool,
        opts: &WriteOptions,
    ) -> Result<bool> {
        let mut b = WriteBatch::new();
        b.put(key, value);
        let write = || self.write_if(&b, opts, |db| Ok(db.exists_now(key)? == want_present));
        self.latency().put.time(write)
    }

    /// The value of `key`, or `None` if it is absent or deleted.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, &ReadOptions::default())
    }

    /// [`Db::get`] with explicit options (e.g. a snapshot).
    pub fn get_opt(
        &self,
        key: impl AsRef<[u8]>,
        opts: &ReadOptions<'_>,
    ) -> Result<Option<Vec<u8>>> {
        self.check_open()?;
        let seq = opts.snapshot.map(|s| s.seq);
        self.latency()
            .get
            .time(|| self.inner.get_at(key.as_ref(), seq))
    }

    /// The values of `keys`, in order, all as of one moment (RocksDB's `MultiGet`): each
    /// result is the key's value, `None`, or the error reading it.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mut opts = flatlsm::Options::default();
    /// # opts.pm_path = Some(dir.path().join("pm"));
    /// # let db = flatlsm::Db::open(dir.path().join("db"), opts)?;
    /// db.put("a", "1")?;
    /// let got: Vec<_> = db.multi_get(["a", "b"]).into_iter().collect::<Result<_, _>>()?;
    /// assert_eq!(got, vec![Some(b"1".to_vec()), None]);
    /// # Ok::<(), flatlsm::Error>(())
    /// ```
    pub fn multi_get<K: AsRef<[u8]>>(
        &self,
        keys: impl IntoIterator<Item = K>,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        self.multi_get_opt(keys, &ReadOptions::default())
    }

    /// [`Db::multi_get`] with explicit options.
    pub fn multi_get_opt<K: AsRef<[u8]>>(
        &self,
        keys: impl IntoIterator<Item = K>,
        opts: &ReadOptions<'_>,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        let keys: Vec<K> = keys.into_iter().collect();
        if let Err(e) = self.check_open() {
            let closed = |_: &K| Err(crate::iter::copy_error(&e));
            return keys.iter().map(closed).collect();
        }
        let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_ref()).collect();
        self.inner.multi_get_at(&refs, opts.snapshot.map(|s| s.seq))
    }

    /// Every key in ascending order. The [`DbIterator`] also walks backward
    /// (`next_back`, `rev`) and seeks.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mut opts = flatlsm::Options::default();
    /// # opts.pm_path = Some(dir.path().join("pm"));
    /// # let db = flatlsm::Db::open(dir.path().join("db"), opts)?;
    /// for k in ["b", "a", "c"] {
    ///     db.put(k, "v")?;
    /// }
    /// let keys: Vec<Vec<u8>> = db.iter()?.map(|r| r.map(|(k, _)| k)).collect::<Result<_, _>>()?;
    /// assert_eq!(keys, [b"a", b"b", b"c"]);
    /// let last = db.iter()?.next_back().transpose()?;
    /// assert_eq!(last.map(|(k, _)| k), Some(b"c".to_vec()));
    /// # Ok::<(), flatlsm::Error>(())
    /// ```
    pub fn iter(&self) -> Result<DbIterator> {
        self.iter_opt(&ReadOptions::default())
    }

    /// [`Db::iter`] with explicit options (e.g. a snapshot).
    pub fn iter_opt(&self, opts: &ReadOptions<'_>) -> Result<DbIterator> {
        self.bounded(opts, None, None)
    }

    /// The keys within `range`, ascending (`..`, `"a".."m"`, `"a"..="m"` and so on).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mut opts = flatlsm::Options::default();
    /// # opts.pm_path = Some(dir.path().join("pm"));
    /// # let db = flatlsm::Db::open(dir.path().join("db"), opts)?;
    /// for k in ["a", "b", "c", "d"] {
    ///     db.put(k, "v")?;
    /// }
    /// assert_eq!(db.range("b"..="c")?.count(), 2);
    /// assert_eq!(db.range("b"..)?.rev().count(), 3);
    /// # Ok::<(), flatlsm::Error>(())
    /// ```
    pub fn range<K: AsRef<[u8]>>(&self, range: impl RangeBounds<K>) -> Result<DbIterator> {
        self.range_opt(range, &ReadOptions::default())
    }

    /// [`Db::range`] with explicit options.
    pub fn range_opt<K: AsRef<[u8]>>(
        &self,
        range: impl RangeBounds<K>,
        opts: &ReadOptions<'_>,
    ) -> Result<DbIterator> {
        let (lower, upper) = bounds::half_open(&range);
        self.bounded(opts, lower, upper)
    }

    /// The keys starting with `prefix`, ascending.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mut opts = flatlsm::Options::default();
    /// # opts.pm_path = Some(dir.path().join("pm"));
    /// # let db = flatlsm::Db::open(dir.path().join("db"), opts)?;
    /// db.put("user:1", "ada")?;
    /// db.put("user:2", "bob")?;
    /// db.put("video:1", "x")?;
    /// assert_eq!(db.prefix("user:")?.count(), 2);
    /// # Ok::<(), flatlsm::Error>(())
    /// ```
    pub fn prefix(&self, prefix: impl AsRef<[u8]>) -> Result<DbIterator> {
        self.prefix_opt(prefix, &ReadOptions::default())
    }

    /// [`Db::prefix`] with explicit options.
    pub fn prefix_opt(
        &self,
        prefix: impl AsRef<[u8]>,
        opts: &ReadOptions<'_>,
    ) -> Result<DbIterator> {
        let p = prefix.as_ref();
        self.bounded(opts, Some(p.to_vec()), bounds::prefix_end(p))
    }

    /// A double-ended iterator over `[lower, upper)`, positioned at the first key.
    fn bounded(
        &self,
        opts: &ReadOptions<'_>,
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
    ) -> Result<DbIterator> {
        self.check_open()?;
        let seq = opts.snapshot.map(|s| s.seq);
        let timed = self.latency().iter.clone();
        let mut it = self.inner.db_iter(seq, lower, upper).with_latency(timed);
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

    /// Appends `message` as one line to the database's info log (`<db>/LOG`), stamped with the
    /// time and thread as the engine's own lines are: for an application's events that belong
    /// beside the engine's (`flatlsm serve` logs each connection error there).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mut opts = flatlsm::Options::default();
    /// # opts.pm_path = Some(dir.path().join("pm"));
    /// let db = flatlsm::Db::open(dir.path().join("db"), opts)?;
    /// db.log_line("client 127.0.0.1:50000: protocol error; closed");
    /// db.close()?;
    /// let log = std::fs::read_to_string(dir.path().join("db").join("LOG")).unwrap();
    /// assert!(log.contains("protocol error; closed"));
    /// # Ok::<(), flatlsm::Error>(())
    /// ```
    pub fn log_line(&self, message: &str) {
        self.inner.info_log.line(message);
    }

    /// A report of sizes, bytes written, write amplification and stalls, block-cache and
    /// bloom-filter counters, and per-operation latencies.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mut opts = flatlsm::Options::default();
    /// # opts.pm_path = Some(dir.path().join("pm"));
    /// # let db = flatlsm::Db::open(dir.path().join("db"), opts)?;
    /// db.put("k", "v")?;
    /// db.get("k")?;
    /// let stats = db.stats();
    /// assert_eq!((stats.latency.put.count, stats.latency.get.count), (1, 1));
    /// assert!(stats.latency.get.p99_micros <= stats.latency.get.max_micros);
    /// # Ok::<(), flatlsm::Error>(())
    /// ```
    pub fn stats(&self) -> Stats {
        report::stats(&self.inner)
    }

    /// The property `name` (RocksDB's `GetProperty`): `flatlsm.stats` (the whole report as
    /// text), `flatlsm.latency` (the latency table as text) or any name in [`PROPERTY_NAMES`]
    /// as its number; `None` for an unknown name.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mut opts = flatlsm::Options::default();
    /// # opts.pm_path = Some(dir.path().join("pm"));
    /// # let db = flatlsm::Db::open(dir.path().join("db"), opts)?;
    /// db.put("k", "v")?;
    /// db.flush()?;
    /// assert!(db.property_int("flatlsm.num-files").unwrap() >= 1);
    /// assert!(db.property("flatlsm.stats").unwrap().contains("write amplification"));
    /// assert_eq!(db.property_int("flatlsm.latency-put-count"), Some(1));
    /// assert_eq!(db.property("no.such.property"), None);
    /// # Ok::<(), flatlsm::Error>(())
    /// ```
    pub fn property(&self, name: &str) -> Option<String> {
        crate::observe::properties::property(&self.stats(), name)
    }

    /// The integer property `name` (RocksDB's `GetIntProperty`); `None` for an unknown name
    /// or a text one (`flatlsm.stats`, `flatlsm.latency`).
    pub fn property_int(&self, name: &str) -> Option<u64> {
        self.stats().property_int(name)
    }

    /// Finishes the flushes already due (the immutable write buffers a background flush
    /// would take now, so opening and closing in a loop does not pile up PM Logs), makes
    /// every write durable, stops background work (a running compaction gives up at its next
    /// output file) and closes the database. Later calls on this handle and on all its clones
    /// return [`Error::Closed`].
    pub fn close(&self) -> Result<()> {
        self.handle.close()
    }

    /// The live latency histograms.
    fn latency(&self) -> &crate::observe::latency::Latency {
        &self.inner.counters.latency
    }

    pub(crate) fn check_open(&self) -> Result<()> {
        if self.inner.bg.closed() {
            return Err(Error::Closed);
        }
        Ok(())
    }
}

impl Db {
    /// The handle over a state recovery built (`crate::recovery`), its lock and its threads.
    pub(crate) fn from_parts(
        inner: Arc<DbInner>,
        lock: DirLock,
        threads: Vec<JoinHandle<()>>,
    ) -> Db {
        let handle = Handle {
            inner: inner.clone(),
            threads: parking_lot::Mutex::new(threads),
            lock: parking_lot::Mutex::new(Some(lock)),
        };
        Db {
            inner,
            handle: Arc::new(handle),
        }
    }
}

impl Handle {
    fn close(&self) -> Result<()> {
        // Before `closed` is set: the flushes' own steps refuse a closed database.
        if self.inner.bg.closed() {
            return Ok(());
        }
        let flushed = (self.inner.jobs.finish_due_flushes)(&self.inner);
        if self.inner.bg.mark_closed() {
            return Ok(());
        }
        let _w = self.inner.writes.lock();
        let persisted = flushed.and(
            self.inner
                .versions
                .sv()
                .mem
                .commit()
                .and(self.inner.writes.wals().seal())
                .and(self.inner.write_buffer_records()),
        );
        self.inner.bg.begin_shutdown();
        self.inner.bg.wake_all();
        // Background threads only end slowdown episodes, never start one: end it here.
        self.inner.finish_slowdown();
        for t in self.threads.lock().drain(..) {
            let _ = t.join();
        }
        let pooled = self
            .inner
            .files
            .pm_pool()
            .clear()
            .and(self.inner.remove_volatile_pm());
        let result = persisted.and(pooled);
        let outcome = result.as_ref().err().map(|e| format!(": {e}"));
        let closed = format!("database closed{}", outcome.unwrap_or_default());
        self.inner.info_log.line(&closed);
        // Releasing the lock last: no thread of this handle writes any more.
        drop(self.lock.lock().take());
        result
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            log::error!("closing the database failed: {e}");
        }
    }
}
