//! SLM-DB's index as the engine uses it: opening the B+-tree region, inserting a flushed SST's
//! keys, and a get that reads one block ([`SlmIndex`]).

use super::scan::{Scattered, TreeScan};
use crate::designs::{Level0Store, ReadAt, ScanAt, StoreLookup};
use crate::error::{Error, Result};
use crate::file_names::BTREE_REGION;
use crate::iter::InternalIterator;
use crate::options::SlmDbOptions;
use crate::pm::PmDevice;
use crate::pmbtree::{Location, PmBtree};
use crate::range_del::RangeTombstones;
use crate::rowtable::search::Found;
use crate::sst::{BlockHandle, SstDir, TableCache};
use crate::types::{make_internal_key, parse_internal_key, user_key_of, SequenceNumber};
use crate::types::{ValueKind, KIND_FOR_SEEK};
use crate::version::{FileMeta, Version};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The tree of a database whose `version` is recovered. An existing tree is recovered and
/// keeps its size (`btree_size` applies when the tree is made). With no SST recorded the tree
/// indexes nothing a reader needs (entries of a first flush a crash interrupted are redone by
/// its reflush), so a tree that is missing or fails recovery there (a crash while it was being
/// formatted) is made afresh. With SSTs recorded it must exist and recover.
pub(super) fn open_btree(
    device: &dyn PmDevice,
    options: SlmDbOptions,
    version: &Version,
) -> Result<PmBtree> {
    let exists = device.has_region(BTREE_REGION)?;
    if version.num_files(0) > 0 {
        return match exists {
            true => PmBtree::recover(device.open_region(BTREE_REGION)?),
            false => Err(missing_tree(device, version)),
        };
    }
    if exists {
        if let Ok(tree) = PmBtree::recover(device.open_region(BTREE_REGION)?) {
            return Ok(tree);
        }
        device.remove_region(BTREE_REGION)?;
    }
    let region = device.create_region(BTREE_REGION, options.btree_size as usize)?;
    PmBtree::create(region)
}

fn missing_tree(device: &dyn PmDevice, version: &Version) -> Error {
    Error::corruption(
        device.dir().join(BTREE_REGION),
        0,
        format!(
            "missing: the B+-tree indexing the {} SSTs the manifest names",
            version.num_files(0)
        ),
    )
}

/// How the keys of one file moved in the tree: how many now point at it, and the file each
/// displaced or removed location was in (one entry per key).
#[derive(Debug, Default)]
pub(super) struct Moved {
    pub added: u64,
    pub from: Vec<u64>,
}

/// Keys the tree points at in each file.
pub(super) fn live_counts(tree: &PmBtree) -> Result<BTreeMap<u64, u64>> {
    let mut live = BTreeMap::new();
    for (_, loc) in tree.scan()? {
        *live.entry(loc.file).or_insert(0) += 1;
    }
    Ok(live)
}

/// Calls `f` with each user key's newest entry in SST `file` and the block holding it.
fn newest_entries(
    file: &FileMeta,
    tables: &TableCache,
    mut f: impl FnMut(&[u8], BlockHandle) -> Result<()>,
) -> Result<()> {
    let table = tables.get(file.number, file.file_size, file.dir)?;
    let mut last: Option<Vec<u8>> = None;
    for i in 0..table.num_blocks() {
        let (block, handle) = (table.load_block(i)?, table.block_handle(i));
        for j in 0..block.len() {
            let uk = user_key_of(block.key(j));
            if last.as_deref() == Some(uk) {
                continue; // an older version: the tree points at the newest
            }
            last = Some(uk.to_vec());
            f(block.key(j), handle)?;
        }
    }
    Ok(())
}

fn location(file: u64, handle: BlockHandle) -> Location {
    Location {
        file,
        offset: handle.offset,
        size: handle.size as u32,
    }
}

/// Inserts the keys of flushed SST `file` into the tree: each user key's newest version — a
/// value upserted with its block, a tombstone's key removed.
pub(super) fn insert_file(tree: &PmBtree, file: &FileMeta, tables: &TableCache) -> Result<Moved> {
    let mut moved = Moved::default();
    newest_entries(file, tables, |ikey, handle| {
        let uk = user_key_of(ikey);
        let old = match parse_internal_key(ikey).map(|p| p.kind) {
            Some(ValueKind::Deletion) => tree.remove(uk)?,
            _ => {
                moved.added += 1;
                tree.upsert(uk, location(file.number, handle))?
            }
        };
        moved.from.extend(old.map(|l| l.file));
        Ok(())
    })?;
    Ok(moved)
}

/// Points each key of compaction output `file` the tree still holds in one of `inputs` at its
/// copy in `file`.
pub(super) fn follow_file(
    tree: &PmBtree,
    file: &FileMeta,
    tables: &TableCache,
    inputs: &BTreeSet<u64>,
) -> Result<Moved> {
    let mut moved = Moved::default();
    newest_entries(file, tables, |ikey, handle| {
        let at = location(file.number, handle);
        let old = tree.replace_if(user_key_of(ikey), at, |l| inputs.contains(&l.file))?;
        if let Some(old) = old {
            moved.added += 1;
            moved.from.push(old.file);
        }
        Ok(())
    })?;
    Ok(moved)
}

/// True if a range tombstone meets `file`'s key range (a compaction may have dropped every
/// version of some of its keys).
pub(super) fn under_range_del(file: &FileMeta, range_dels: &RangeTombstones) -> bool {
    let (lo, hi) = (user_key_of(&file.smallest), user_key_of(&file.largest));
    range_dels.tombstones().iter().any(|t| t.overlaps(lo, hi))
}

/// The level-0 files under a range tombstone newer than what they applied.
pub(super) fn under_unapplied_range_dels(version: &Version) -> BTreeSet<u64> {
    let dels = version.range_dels.tombstones();
    let stale = |f: &&Arc<FileMeta>| {
        let (lo, hi) = (user_key_of(&f.smallest), user_key_of(&f.largest));
        dels.iter()
            .any(|t| t.seq > f.range_dels_applied && t.overlaps(lo, hi))
    };
    version.levels[0]
        .iter()
        .filter(stale)
        .map(|f| f.number)
        .collect()
}

/// Removes each key of compaction input `file` the tree still points into one of `inputs`:
/// after [`follow_file`] over every output, such a key is one the compaction dropped
/// (covered by a range tombstone), and its file is about to be deleted.
pub(super) fn forget_dropped(
    tree: &PmBtree,
    file: &FileMeta,
    tables: &TableCache,
    inputs: &BTreeSet<u64>,
) -> Result<()> {
    newest_entries(file, tables, |ikey, _| {
        tree.remove_if(user_key_of(ikey), |l| inputs.contains(&l.file))?;
        Ok(())
    })
}

/// The index as a version sees it: the tree, the version's SSTs, and where range queries
/// report scattered files. Cheap to clone (each scan holds one).
#[derive(Clone)]
pub(super) struct SlmIndex {
    tree: Arc<PmBtree>,
    files: Arc<[Arc<FileMeta>]>,
    sizes: Arc<BTreeMap<u64, u64>>,
    scattered: Arc<Scattered>,
}

impl SlmIndex {
    pub fn new(tree: Arc<PmBtree>, version: &Version, scattered: Arc<Scattered>) -> Self {
        let files: Arc<[Arc<FileMeta>]> = version.levels[0].clone().into();
        let sizes = Arc::new(files.iter().map(|f| (f.number, f.file_size)).collect());
        SlmIndex {
            tree,
            files,
            sizes,
            scattered,
        }
    }

    pub fn tree(&self) -> &PmBtree {
        &self.tree
    }

    pub fn files(&self) -> &[Arc<FileMeta>] {
        &self.files
    }

    pub fn scattered(&self) -> &Scattered {
        &self.scattered
    }

    /// The newest version of `user_key` at or below `seq`, which the tree says is in the block
    /// at `loc`. A block of a file the version lacks (a flush not installed), or one holding
    /// only newer versions, sends the search to every SST.
    pub fn read_location(
        &self,
        user_key: &[u8],
        loc: Location,
        seq: SequenceNumber,
        tables: &TableCache,
    ) -> Result<StoreLookup> {
        let Some(&size) = self.sizes.get(&loc.file) else {
            return self.search_all(user_key, seq, tables);
        };
        let table = tables.get(loc.file, size, SstDir::Data)?;
        let handle = BlockHandle {
            offset: loc.offset,
            size: u64::from(loc.size),
        };
        let block = table.block_at(handle)?;
        let i = block.seek(&make_internal_key(user_key, seq, KIND_FOR_SEEK));
        if i < block.len() && user_key_of(block.key(i)) == user_key {
            let (ikey, value) = (block.key(i).to_vec(), block.value(i).to_vec());
            return Ok(StoreLookup::Found(Found { ikey, value }));
        }
        self.search_all(user_key, seq, tables)
    }

    /// The newest version of `user_key` at or below `seq` in any SST of the version. The
    /// files' order says nothing of their age (a compaction's output holds older data than the
    /// flushes before it), so every file covering the key is searched and the highest
    /// sequence wins.
    fn search_all(
        &self,
        user_key: &[u8],
        seq: SequenceNumber,
        tables: &TableCache,
    ) -> Result<StoreLookup> {
        let lookup = make_internal_key(user_key, seq, KIND_FOR_SEEK);
        let mut best: Option<(u64, Vec<u8>, Vec<u8>)> = None;
        let covering = self.files.iter().filter(|f| {
            user_key_of(&f.smallest) <= user_key && user_key <= user_key_of(&f.largest)
        });
        for f in covering {
            let table = tables.get(f.number, f.file_size, f.dir)?;
            let Some((ikey, value)) = table.get(&lookup)? else {
                continue;
            };
            let s = parse_internal_key(&ikey).map_or(0, |p| p.seq);
            if best.as_ref().is_none_or(|b| s > b.0) {
                best = Some((s, ikey, value));
            }
        }
        Ok(match best {
            Some((_, ikey, value)) => StoreLookup::Found(Found { ikey, value }),
            None => StoreLookup::Absent,
        })
    }
}

impl Level0Store for SlmIndex {
    /// The tree's block for `user_key`, then the newest version in it. A key the tree lacks is
    /// absent. A snapshot's read searches every SST instead (the tree follows the newest writes:
    /// they may have removed the key, or moved its newest version with older ones a snapshot
    /// kept), as does a read meeting a file its version lacks (a flush not installed).
    fn get(&self, user_key: &[u8], read: ReadAt, tables: &TableCache) -> Result<StoreLookup> {
        let seq = read.seq;
        if read.snapshot {
            return self.search_all(user_key, seq, tables);
        }
        match self.tree.get(user_key)? {
            Some(loc) => self.read_location(user_key, loc, seq, tables),
            None => Ok(StoreLookup::Absent),
        }
    }

    /// The tree holds exactly the keys with a live value (a tombstone removes its key): a
    /// latest read needs no block (SLM-DB's insert-if-absent and update-if-present).
    fn contains(&self, user_key: &[u8], read: ReadAt) -> Result<Option<bool>> {
        if read.snapshot {
            return Ok(None);
        }
        Ok(Some(self.tree.get(user_key)?.is_some()))
    }

    /// The B+-tree cursor (`scan.rs`), which stands for every level-0 file.
    fn iterators(&self, scan: ScanAt, tables: &Arc<TableCache>) -> Vec<Box<dyn InternalIterator>> {
        vec![Box::new(TreeScan::new(self.clone(), scan, tables.clone()))]
    }

    fn covers_level0_files(&self) -> bool {
        true
    }
}
