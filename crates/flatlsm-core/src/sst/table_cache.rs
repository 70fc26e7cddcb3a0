//! Open tables by file number, opened on demand through the [`FileSystem`].
//!
//! Thread-safety: `Send + Sync`. The tables sit in a sharded `quick_cache` (as the block cache
//! does): a lookup takes one shard's read lock and touches no shared counter, so reads on many
//! threads do not queue on it. A table is opened once: concurrent `get`s of a table being
//! opened wait for that open (a failed open lets the next caller try). Invariant: a cached
//! table was opened with the file size given by the `get` that opened it; callers evict a table
//! when its file is deleted.
//!
//! Bounded (RocksDB's `max_open_files`): beyond `capacity` open tables the cache drops one
//! (CLOCK-Pro: a table not used recently, favouring tables used more than once); a reader still
//! holding it keeps it (and its descriptor) until it is done, and the next `get` opens the file
//! again.
//!
//! Unbounded (the default), every open table is also published in `front`, a map swapped
//! whole on each open and eviction (as the value logs' readers are, `vlog/mod.rs`), and
//! [`TableCache::with`] reads through it without a lock or a reference count: a point read on
//! each of two cores otherwise increments the same shard lock and the same table's count, and
//! the cache lines pass between the cores on every read (a tenth of a server GET's time).
//! Invariant: `front` holds only tables `tables` holds: an eviction removes from `tables`
//! first, and an open that published after an eviction of its table takes it back out.

use super::bloom::FilterCounters;
use super::cache::BlockCache;
use super::table::Table;
use super::{SstDir, SstDirs};
use crate::error::{IoContext, Result};
use crate::fs::{FileSystem, Retired};
use arc_swap::ArcSwap;
use parking_lot::Mutex;
use quick_cache::sync::Cache;
use std::collections::HashMap;
use std::sync::Arc;

/// Tables the cache expects to hold at most, for sizing when it is unbounded.
const EXPECTED_TABLES: usize = 1024;

/// A cache of open [`Table`]s keyed by file number.
pub struct TableCache {
    fs: Arc<dyn FileSystem>,
    dirs: SstDirs,
    block_cache: Option<Arc<BlockCache>>,
    /// What the filters of its tables answered on point lookups.
    filter_counters: Arc<FilterCounters>,
    /// Open tables.
    tables: Cache<u64, Arc<Table>>,
    /// Tables evicted because their file is deleted, until no reader holds them: closed by
    /// [`TableCache::close_retired`], never by a reader (why: [`Retired`]).
    retired: Retired<Table>,
    /// The open tables for lock-free reads, while the cache is unbounded (module documentation).
    front: Option<ArcSwap<HashMap<u64, Arc<Table>>>>,
    /// Serializes changes of `front`.
    front_update: Mutex<()>,
}

/// A table map holding up to `capacity` tables.
fn table_map(capacity: usize) -> Cache<u64, Arc<Table>> {
    let expected = capacity.clamp(1, EXPECTED_TABLES);
    let weight = u64::try_from(capacity).unwrap_or(u64::MAX);
    Cache::with(
        expected,
        weight,
        Default::default(),
        Default::default(),
        Default::default(),
    )
}

impl TableCache {
    /// Tables live in `dirs` as `sst_file_name(number)`; data blocks go through `block_cache`.
    /// No bound on open tables (see [`TableCache::with_capacity`]).
    pub fn new(
        fs: Arc<dyn FileSystem>,
        dirs: SstDirs,
        block_cache: Option<Arc<BlockCache>>,
    ) -> Self {
        TableCache {
            fs,
            dirs,
            block_cache,
            filter_counters: Arc::default(),
            tables: table_map(usize::MAX),
            retired: Retired::default(),
            front: Some(ArcSwap::default()),
            front_update: Mutex::new(()),
        }
    }

    /// Keeps at most `capacity` tables open (at least one).
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.tables = table_map(capacity.max(1));
        self.front = None;
        self
    }

    /// The block cache its tables read through, if any.
    pub fn block_cache(&self) -> Option<&Arc<BlockCache>> {
        self.block_cache.as_ref()
    }

    /// What the filters of its tables answered on point lookups.
    pub fn filter_counters(&self) -> &FilterCounters {
        &self.filter_counters
    }

    /// The directories tables live in.
    pub fn dirs(&self) -> &SstDirs {
        &self.dirs
    }

    /// The open table `file_number` (of `file_size` bytes, kept in `dir`), opening and
    /// verifying it if needed.
    pub fn get(&self, file_number: u64, file_size: u64, dir: SstDir) -> Result<Arc<Table>> {
        if let Some(t) = self.tables.get(&file_number) {
            return Ok(t);
        }
        let open = || self.open(file_number, file_size, dir);
        let table = self.tables.get_or_insert_with(&file_number, open)?;
        self.publish(file_number, &table);
        Ok(table)
    }

    /// Runs `read` on the open table `file_number` (as [`TableCache::get`] finds or opens it),
    /// without a lock or a reference count when the table is in the front map.
    pub fn with<T>(
        &self,
        file_number: u64,
        file_size: u64,
        dir: SstDir,
        read: impl FnOnce(&Table) -> Result<T>,
    ) -> Result<T> {
        if let Some(front) = &self.front {
            if let Some(t) = front.load().get(&file_number) {
                return read(t);
            }
        }
        read(&*self.get(file_number, file_size, dir)?)
    }

    /// Puts `table` into the front map (unbounded caches only); takes it back out if its file
    /// was evicted meanwhile (module invariant).
    fn publish(&self, file_number: u64, table: &Arc<Table>) {
        let Some(front) = &self.front else { return };
        self.change_front(front, |map| map.insert(file_number, Arc::clone(table)));
        if !self.tables.contains_key(&file_number) {
            self.change_front(front, |map| map.remove(&file_number));
        }
    }

    /// Applies `f` to a copy of the front map and publishes the copy.
    fn change_front<T>(
        &self,
        front: &ArcSwap<HashMap<u64, Arc<Table>>>,
        f: impl FnOnce(&mut HashMap<u64, Arc<Table>>) -> T,
    ) -> T {
        let _g = self.front_update.lock();
        let mut map = HashMap::clone(&front.load());
        let out = f(&mut map);
        front.store(Arc::new(map));
        out
    }

    /// Opens and verifies table `file_number`.
    fn open(&self, file_number: u64, file_size: u64, dir: SstDir) -> Result<Arc<Table>> {
        let path = self.dirs.path(file_number, dir);
        let file = self
            .fs
            .open(&path)
            .context(|| format!("opening {}", path.display()))?;
        let (cache, counters) = (self.block_cache.clone(), self.filter_counters.clone());
        Table::open_counted(file, path, file_number, file_size, cache, Some(counters))
    }

    /// Forgets table `file_number` and its cached blocks (call when the file is deleted).
    pub fn evict(&self, file_number: u64) {
        if let Some((_, table)) = self.tables.remove(&file_number) {
            self.retired.push(table);
        }
        if let Some(front) = &self.front {
            self.change_front(front, |map| map.remove(&file_number));
        }
        if let Some(c) = &self.block_cache {
            c.erase_file(file_number);
        }
    }

    /// Closes the evicted tables no reader holds any more (call it from a background thread
    /// after deleting files); returns how many are still in use.
    pub fn close_retired(&self) -> usize {
        self.retired.close_unused()
    }

    /// Number of open tables.
    pub fn len(&self) -> usize {
        self.tables.len()
    }

    /// True if no table is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
