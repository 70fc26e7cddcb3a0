//! The `slmdb` profile (SLM-DB, FAST 2019): persistent PM skiplists as MemTable and Immutable
//! MemTable (no write-ahead log, as `novelsm`'s), one level of SSTs on SSD, and a persistent
//! B+-tree in PM (`crate::pmbtree`) mapping every key to the SST block that holds its newest
//! version, so a get reads exactly one block and a key the tree lacks is absent without a disk
//! read.
//!
//! Flush (`index_flush`): the SST is written and synced; then its keys go into the tree — a
//! value's key upserted with its block, a tombstone's key removed; then the manifest edit; then
//! the Immutable MemTable is freed. Recovery rule: a crash before the edit leaves tree entries
//! pointing at a file no version names; every such key is in an Immutable MemTable that
//! recovery keeps (it is freed only after the edit), which shadows it for reads and whose flush
//! upserts or removes it again. A get that meets such an entry searches the SSTs instead.
//!
//! Not built yet (issue 13): selective compaction and its compaction log, live-key counts, the
//! B+-tree iterator (scans merge the level-0 files as `leveled` does), the two flush threads.

mod index;

use super::{BufferKind, Design, FlushShape, Level0Store};
use crate::compaction::policy::{CompactionPolicy, PolicyView};
use crate::error::{Error, Result};
use crate::options::Options;
use crate::pm::PmDeviceRef;
use crate::pmbtree::{PmBtree, NODE_SIZE};
use crate::sst::{SstDir, TableCache};
use crate::version::{Version, VersionEdit};
use index::SlmIndex;
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The PM region of the B+-tree.
pub(crate) const BTREE_REGION: &str = "index.pmbt";

/// Options of the `slmdb` profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SlmDbOptions {
    /// Bytes of PM for the B+-tree (default 1 GiB: about 8 million keys of up to 32 bytes).
    /// A tree cannot be resized.
    pub btree_size: u64,
}

impl Default for SlmDbOptions {
    fn default() -> Self {
        SlmDbOptions {
            btree_size: 1 << 30,
        }
    }
}

impl SlmDbOptions {
    /// The tree needs at least a header and a leaf, in whole nodes.
    pub fn validate(&self) -> Result<()> {
        let nodes = self.btree_size / NODE_SIZE as u64;
        let whole = self.btree_size.is_multiple_of(NODE_SIZE as u64);
        match nodes >= 2 && whole && nodes <= u32::MAX as u64 {
            true => Ok(()),
            false => Err(Error::InvalidArgument(format!(
                "slmdb.btree_size = {}: must be a multiple of {NODE_SIZE} bytes, at least 2 and \
                 at most 2^32 nodes",
                self.btree_size
            ))),
        }
    }
}

/// The `slmdb` design.
pub(crate) struct SlmDbDesign {
    pub options: SlmDbOptions,
    pub btree: OnceLock<Arc<PmBtree>>,
}

impl SlmDbDesign {
    fn btree(&self) -> Result<&Arc<PmBtree>> {
        let missing = || Error::InvalidState("the B+-tree is not open".into());
        self.btree.get().ok_or_else(missing)
    }
}

/// No compaction yet: SLM-DB's single level grows until selective compaction is built.
struct NoCompaction;

impl CompactionPolicy for NoCompaction {
    fn pick(&self, _view: &PolicyView<'_>) -> Option<crate::compaction::job::Compaction> {
        None
    }
}

impl Design for SlmDbDesign {
    fn write_buffer_device(&self, path: &Path, opts: &Options) -> Result<PmDeviceRef> {
        crate::db::open_pm_device(path, opts)
    }

    fn buffer_kind(&self) -> BufferKind {
        BufferKind::PmSkiplist
    }

    fn compaction_policy(&self, _opts: &Options) -> Box<dyn CompactionPolicy> {
        Box::new(NoCompaction)
    }

    /// The index finds every key in one block, so level 0's files never stall writes.
    fn level0_stop_runs(&self, _opts: &Options) -> usize {
        usize::MAX
    }

    fn level0_runs(&self, _v: &Version) -> usize {
        0
    }

    /// One SST per flush, as SLM-DB's file creation thread writes it.
    fn flush_shape(&self, _opts: &Options) -> FlushShape {
        FlushShape {
            threads: 1,
            target_file_size: u64::MAX,
            sst_dir: SstDir::Data,
        }
    }

    fn level0_slowdown_runs(&self, _opts: &Options) -> Option<usize> {
        None
    }

    fn open_store(&self, path: &Path, opts: &Options, version: &Version) -> Result<()> {
        let pm = match &opts.pm_device {
            Some(d) => d.clone(),
            None => crate::db::open_pm_device(path, opts)?,
        };
        let tree = index::open_btree(&*pm, self.options, version)?;
        self.btree
            .set(Arc::new(tree))
            .map_err(|_| Error::InvalidState("the B+-tree was opened twice".into()))
    }

    fn level0_store(&self, version: &Version) -> Option<Arc<dyn Level0Store>> {
        let tree = self.btree.get()?.clone();
        Some(Arc::new(SlmIndex::new(tree, version)))
    }

    fn index_flush(&self, edit: &VersionEdit, tables: &TableCache) -> Result<()> {
        let tree = self.btree()?;
        for (_, file) in edit.new_files.iter().filter(|(level, _)| *level == 0) {
            index::insert_file(tree, file, tables)?;
        }
        Ok(())
    }
}
