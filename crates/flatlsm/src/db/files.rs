//! [`Files`]: where an open database keeps its data, and the caches over it — the directory,
//! the file system and PM device it was opened on, the pool of retired PM Logs, the SST table
//! cache and the value logs with their GC redirect tables.
//!
//! Invariants: every field is set once at open and never replaced (the handle lives as long
//! as these do); `read_only` databases see copy-on-write views of the files and PM
//! (`recovery/open.rs`), so nothing here writes through to the user's files.

use crate::fs::{FileSystem, FsRef};
use crate::options::Options;
use crate::pm::PmDeviceRef;
use crate::pmtable::PmLogPool;
use crate::sst::TableCache;
use crate::vlog::{RedirectSet, VlogSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The files and caches of one open database.
pub(crate) struct Files {
    path: PathBuf,
    fs: FsRef,
    pm: PmDeviceRef,
    /// Retired PM Logs, recycled for new PMTables.
    pm_pool: PmLogPool,
    table_cache: Arc<TableCache>,
    vlogs: Arc<VlogSet>,
    /// Loaded redirect tables of value logs GC moved (`vlog::redirect`), by file number.
    redirects: Arc<RedirectSet>,
    /// Opened by `Db::open_read_only`: every write is refused.
    read_only: bool,
}

impl Files {
    /// The files of the database at `path`, its SSTs read through `table_cache`.
    pub fn new(
        path: &Path,
        fs: FsRef,
        pm: PmDeviceRef,
        table_cache: TableCache,
        opts: &Options,
    ) -> Files {
        Files {
            path: path.to_path_buf(),
            pm_pool: PmLogPool::with_capacity(pm.clone(), opts.max_write_buffer_number),
            table_cache: Arc::new(table_cache),
            vlogs: Arc::new(
                VlogSet::new(fs.clone(), path.to_path_buf())
                    .with_mapped_reads(opts.vlog_mmap_reads),
            ),
            redirects: Arc::new(RedirectSet::new(fs.clone(), path.to_path_buf())),
            fs,
            pm,
            read_only: false,
        }
    }

    /// Refuses every write when `read_only` (set once, before the handle is shared).
    pub fn set_read_only(&mut self, read_only: bool) {
        self.read_only = read_only;
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file system the database was opened on.
    pub fn fs(&self) -> &FsRef {
        &self.fs
    }

    /// The file system, as a trait object.
    pub fn dyn_fs(&self) -> &dyn FileSystem {
        &*self.fs
    }

    /// The PM device holding the write buffers.
    pub fn pm(&self) -> &PmDeviceRef {
        &self.pm
    }

    /// Retired PM Logs, recycled for new PMTables.
    pub fn pm_pool(&self) -> &PmLogPool {
        &self.pm_pool
    }

    /// The SST table cache (and its block cache).
    pub fn table_cache(&self) -> &Arc<TableCache> {
        &self.table_cache
    }

    /// The open value logs.
    pub fn vlogs(&self) -> &Arc<VlogSet> {
        &self.vlogs
    }

    /// The loaded redirect tables of value logs GC moved.
    pub fn redirects(&self) -> &Arc<RedirectSet> {
        &self.redirects
    }

    /// True when opened by `Db::open_read_only`.
    pub fn read_only(&self) -> bool {
        self.read_only
    }
}
