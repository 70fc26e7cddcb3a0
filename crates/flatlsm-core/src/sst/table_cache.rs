//! Open tables by file number, opened on demand through the [`FileSystem`].
//!
//! Thread-safety: `Send + Sync`; the map is behind a mutex that is *not* held while a table is
//! being opened, so two threads may open the same file concurrently, in which case the first
//! inserted table wins and the other is dropped. Invariant: a cached table was opened with the
//! file size given by the first `get`; callers evict a table when its file is deleted.

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
    tables: Mutex<HashMap<u64, Arc<Table>>>,
}

impl TableCache {
    /// Tables live in `dirs` as `sst_file_name(number)`; data blocks go through `block_cache`.
    pub fn new(
        fs: Arc<dyn FileSystem>,
        dirs: SstDirs,
        block_cache: Option<Arc<BlockCache>>,
    ) -> Self {
        TableCache {
            fs,
            dirs,
            block_cache,
            tables: Mutex::new(HashMap::new()),
        }
    }

    /// The directories tables live in.
    pub fn dirs(&self) -> &SstDirs {
        &self.dirs
    }

    /// The open table `file_number` (of `file_size` bytes, kept in `dir`), opening and
    /// verifying it if needed.
    pub fn get(&self, file_number: u64, file_size: u64, dir: SstDir) -> Result<Arc<Table>> {
        if let Some(t) = self.tables.lock().get(&file_number) {
            return Ok(Arc::clone(t));
        }
        let path = self.dirs.path(file_number, dir);
        let file = self
            .fs
            .open(&path)
            .context(|| format!("opening {}", path.display()))?;
        let table = Table::open(file, path, file_number, file_size, self.block_cache.clone())?;
        let mut tables = self.tables.lock();
        Ok(Arc::clone(tables.entry(file_number).or_insert(table)))
    }

    /// Forgets table `file_number` and its cached blocks (call when the file is deleted).
    pub fn evict(&self, file_number: u64) {
        self.tables.lock().remove(&file_number);
        if let Some(c) = &self.block_cache {
            c.erase_file(file_number);
        }
    }

    /// Number of open tables.
    pub fn len(&self) -> usize {
        self.tables.lock().len()
    }

    /// True if no table is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
