//! Open tables by file number, opened on demand through the [`FileSystem`].
//!
//! Thread-safety: `Send + Sync`; the map is behind a mutex that is *not* held while a table is
//! being opened, so two threads may open the same file concurrently, in which case the first
//! inserted table wins and the other is dropped. Invariant: a cached table was opened with the
//! file size given by the first `get`; callers evict a table when its file is deleted.
//!
//! Bounded (RocksDB's `max_open_files`): beyond `capacity` open tables, the least recently used
//! one is dropped from the cache; a reader still holding it keeps it (and its descriptor) until
//! it is done, and the next `get` opens the file again.

use super::bloom::FilterCounters;
use super::cache::BlockCache;
use super::table::Table;
use super::{SstDir, SstDirs};
use crate::error::{IoContext, Result};
use crate::fs::FileSystem;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

/// A cache of open [`Table`]s keyed by file number.
pub struct TableCache {
    fs: Arc<dyn FileSystem>,
    dirs: SstDirs,
    block_cache: Option<Arc<BlockCache>>,
    /// What the filters of its tables answered on point lookups.
    filter_counters: Arc<FilterCounters>,
    /// Open tables and the tick of their last use.
    tables: Mutex<Tables>,
    /// Most tables kept open (`usize::MAX`: no bound).
    capacity: usize,
}

#[derive(Default)]
struct Tables {
    open: HashMap<u64, (Arc<Table>, u64)>,
    tick: u64,
}

impl Tables {
    fn touch(&mut self, number: u64) -> Option<Arc<Table>> {
        self.tick += 1;
        let tick = self.tick;
        let (table, used) = self.open.get_mut(&number)?;
        *used = tick;
        Some(Arc::clone(table))
    }

    /// Keeps `table` (or the one another thread put first), then drops the least recently used
    /// tables beyond `capacity`.
    fn insert(&mut self, number: u64, table: Arc<Table>, capacity: usize) -> Arc<Table> {
        self.tick += 1;
        let tick = self.tick;
        let kept = Arc::clone(&self.open.entry(number).or_insert((table, tick)).0);
        while self.open.len() > capacity.max(1) {
            let oldest = self.open.iter().min_by_key(|(_, (_, used))| *used);
            let Some((&victim, _)) = oldest else { break };
            self.open.remove(&victim);
        }
        kept
    }
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
            tables: Mutex::new(Tables::default()),
            capacity: usize::MAX,
        }
    }

    /// Keeps at most `capacity` tables open (at least one).
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
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
        if let Some(t) = self.tables.lock().touch(file_number) {
            return Ok(t);
        }
        let path = self.dirs.path(file_number, dir);
        let file = self
            .fs
            .open(&path)
            .context(|| format!("opening {}", path.display()))?;
        let (cache, counters) = (self.block_cache.clone(), self.filter_counters.clone());
        let table = Table::open_counted(file, path, file_number, file_size, cache, Some(counters))?;
        let mut tables = self.tables.lock();
        Ok(tables.insert(file_number, table, self.capacity))
    }

    /// Forgets table `file_number` and its cached blocks (call when the file is deleted).
    pub fn evict(&self, file_number: u64) {
        self.tables.lock().open.remove(&file_number);
        if let Some(c) = &self.block_cache {
            c.erase_file(file_number);
        }
    }

    /// Number of open tables.
    pub fn len(&self) -> usize {
        self.tables.lock().open.len()
    }

    /// True if no table is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
