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
//! Selective compaction (`selective.rs`): live-key counts (the tree's entries per file, counted
//! at open and kept as keys move), leaf-node scans flagging files (never a compaction's outputs
//! until a flush moves a key out of them, so compaction settles for every threshold),
//! candidates merged in groups (the most overlapped candidate and those overlapping it) keeping
//! only the keys the tree points at in each input as it stood at the pick (once a flush changes
//! it mid-job, everything is kept for snapshots taken meanwhile, and the outputs parked). Commit
//! order, instead of SLM-DB's compaction log: the outputs are
//! synced and installed by one edit (inputs still named); the tree then follows each key from an
//! input onto its copy (a conditional replace, never over a newer flush's entry); only then does
//! a second edit delete the inputs. A crash between the edits leaves both named and every tree
//! entry on a named file holding the key's newest version; the inputs, dead or nearly, are
//! merged away later. Recovery rule: live counts are recounted from the tree.
//!
//! Range queries (`scan.rs`) walk the tree's leaves, reading each key from the block it names,
//! and flag the files behind their most scattered sub-range of keys as candidates.

mod index;
mod rebuild;
mod scan;
mod selective;

use super::StoreCompaction;
use super::{store_device, BufferKind, Design, DesignStore, FlushShape, Level0Store};
use crate::compaction::job::Compaction;
use crate::compaction::policy::none::NoCompaction;
use crate::compaction::policy::CompactionPolicy;
use crate::error::{Error, Result};
use crate::file_names::BTREE_REGION;
use crate::options::Options;
use crate::options::SlmDbOptions;
use crate::pm::PmDeviceRef;
use crate::pmbtree::PmBtree;
use crate::range_del::RangeTombstones;
use crate::sst::TableCache;
use crate::version::LevelIterator;
use crate::version::{FileMeta, Version, VersionEdit};
use index::SlmIndex;
use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The `slmdb` design.
pub(crate) struct SlmDbDesign {
    options: SlmDbOptions,
    btree: OnceLock<Arc<PmBtree>>,
    state: Mutex<SlmState>,
    /// Compaction candidates of the latest installed version, kept current as the state
    /// changes: writers read it to decide on stalls, without a lock or a pass over the files.
    candidate_count: AtomicUsize,
    /// Files range queries flagged, taken by the next compaction pick.
    scattered: Arc<scan::Scattered>,
}

/// What selective compaction tracks in DRAM (rebuilt at open: live counts from the tree, the
/// flagged files found again by later scans).
#[derive(Default)]
pub(crate) struct SlmState {
    /// Keys the tree points at in each SST.
    live: BTreeMap<u64, u64>,
    /// Files leaf scans flagged.
    flagged: BTreeSet<u64>,
    /// Outputs of selective compactions that no flush has moved a key out of since: leaf-node
    /// scans do not flag them. A window of two SSTs' worth of keys spans about three files even
    /// over perfectly merged outputs, so below that `leaf_node_threshold` would flag every
    /// output again and compaction would never settle. Why it settles: while no flush runs,
    /// leaf scans flag only files no compaction has produced, and every compaction turns its
    /// inputs into settled outputs, so the files they can flag run out.
    settled: BTreeSet<u64>,
    /// Where the next leaf scan starts.
    scan_cursor: Vec<u8>,
    /// Outputs of compactions that ran while a snapshot was open and kept what only it may
    /// read: not candidates again until no snapshot is open (else they would be merged over
    /// and over, keeping the same entries).
    parked: BTreeSet<u64>,
    /// What the running compaction keeps for snapshots (if it keeps any, its outputs are
    /// parked).
    keep: Arc<selective::Keep>,
    /// Level 0 of the latest installed version.
    files: Vec<Arc<FileMeta>>,
    /// Tombstones a compaction kept in each output because older versions of their keys lie
    /// in other files: entries that count as live (else the output would be merged again and
    /// again, keeping them each time).
    pinned: BTreeMap<u64, u64>,
}

impl SlmDbDesign {
    pub fn new(options: SlmDbOptions) -> Self {
        let (keys, threshold) = (options.range_subrange_keys, options.sequentiality_threshold);
        SlmDbDesign {
            options,
            btree: OnceLock::new(),
            state: Mutex::default(),
            candidate_count: AtomicUsize::new(0),
            scattered: Arc::new(scan::Scattered::new(keys, threshold)),
        }
    }

    /// The index as `version` sees it.
    fn index(&self, tree: Arc<PmBtree>, version: &Version) -> SlmIndex {
        SlmIndex::new(tree, version, self.scattered.clone())
    }

    fn btree(&self) -> Result<&Arc<PmBtree>> {
        let missing = || Error::InvalidState("the B+-tree is not open".into());
        self.btree.get().ok_or_else(missing)
    }

    /// The compaction candidates among `files` (parked outputs left out).
    fn candidates(&self, files: &[Arc<FileMeta>], state: &SlmState) -> Vec<Arc<FileMeta>> {
        let t = self.options.live_key_threshold;
        let live = |n: &u64| {
            let pinned = state.pinned.get(n).copied().unwrap_or(0);
            state.live.get(n).copied().unwrap_or(0) + pinned
        };
        let mut c = selective::candidates(files, &live, &state.flagged, t);
        c.retain(|f| !state.parked.contains(&f.number));
        c
    }

    /// Recounts the latest version's candidates after `state` changed.
    fn refresh(&self, state: &SlmState) {
        let n = self.candidates(&state.files, state).len();
        self.candidate_count.store(n, Ordering::Release);
    }

    /// Keys `moved` into `file`: its live count grows, each old file's shrinks.
    fn count(&self, file: u64, moved: index::Moved) {
        let mut state = self.state.lock();
        *state.live.entry(file).or_insert(0) += moved.added;
        for old in moved.from {
            if let Some(n) = state.live.get_mut(&old) {
                *n = n.saturating_sub(1);
            }
            state.settled.remove(&old); // a flush changed it: leaf scans judge it again
        }
        self.refresh(&state);
    }

    /// One leaf-node scan of two SSTs' worth of keys from where the last one ended.
    fn scan_leaves(&self, tree: &PmBtree, version: &Version, state: &mut SlmState) -> Result<()> {
        let files = version.levels[0].len().max(1) as u64;
        let entries: u64 = version.levels[0].iter().map(|f| f.num_entries).sum();
        let window = (2 * entries / files).max(2) as usize;
        let threshold = self.options.leaf_node_threshold;
        let (flagged, next) = selective::leaf_scan(tree, &state.scan_cursor, window, threshold)?;
        let unsettled: Vec<u64> = flagged
            .into_iter()
            .filter(|n| !state.settled.contains(n))
            .collect();
        state.flagged.extend(unsettled);
        state.scan_cursor = next;
        Ok(())
    }

    /// The store compaction merging `group`: each input filtered to the keys the tree points
    /// at in it, written as new level-0 files, the inputs retired after the index follows.
    fn job(
        &self,
        tree: &Arc<PmBtree>,
        version: &Version,
        tables: &Arc<TableCache>,
        group: Vec<Arc<FileMeta>>,
        keep: Arc<selective::Keep>,
    ) -> Result<StoreCompaction> {
        let sources = group
            .iter()
            .map(|f| {
                let it = LevelIterator::new(vec![f.clone()], tables.clone());
                let (tree, keep) = (tree.clone(), keep.clone());
                let valid = selective::ValidKeys::stream(Box::new(it), f.number, tree, keep);
                Box::new(valid) as Box<dyn crate::iter::InternalIterator>
            })
            .collect();
        let bytes = group.iter().map(|f| f.file_size).sum();
        let in_group = |f: &FileMeta| group.iter().any(|g| g.number == f.number);
        let shadows = version.levels[0].iter().filter(|f| !in_group(f));
        Ok(StoreCompaction {
            compaction: Compaction {
                level: 0,
                inputs: Vec::new(),
                output_level: 0,
                overlapping: Vec::new(),
                shadows: shadows.cloned().collect(),
            },
            sources,
            records: Vec::new(),
            bytes,
            pin: Arc::new(self.index(tree.clone(), version)),
            retire: group,
        })
    }
}

impl Design for SlmDbDesign {
    fn write_buffer_device(&self, path: &Path, opts: &Options) -> Result<PmDeviceRef> {
        crate::layout::open_pm_device(path, opts)
    }

    fn buffer_kind(&self) -> BufferKind {
        BufferKind::PmSkiplist
    }

    fn compaction_policy(&self, _opts: &Options) -> Box<dyn CompactionPolicy> {
        Box::new(NoCompaction)
    }

    /// Writes stop at `stop_candidates` compaction candidates (SLM-DB's code: 35).
    fn level0_stop_runs(&self, _opts: &Options) -> usize {
        self.options.stop_candidates
    }

    /// Compaction candidates are what backs up: the index reads any number of files in one
    /// block read. Counted for the latest installed version (the one callers pass).
    fn level0_runs(&self, _v: &Version) -> usize {
        self.candidate_count.load(Ordering::Acquire)
    }

    /// One SST per flush, as SLM-DB's file creation thread writes it.
    fn flush_shape(&self, _opts: &Options) -> FlushShape {
        FlushShape::ONE_FILE
    }

    fn level0_slowdown_runs(&self, _opts: &Options) -> Option<usize> {
        Some(self.options.slowdown_candidates)
    }

    /// Gets go through the tree or compare sequences over every file; scans merge by key.
    fn level0_read_in_order(&self) -> bool {
        false
    }

    /// SLM-DB's file creation and B+-tree insertion threads: a flush's SST is written while
    /// the flush before it is indexed and installed.
    fn flush_threads(&self) -> usize {
        2
    }

    fn store(&self) -> &dyn DesignStore {
        self
    }
}

impl DesignStore for SlmDbDesign {
    fn store_regions(&self) -> &'static [&'static str] {
        &[BTREE_REGION]
    }

    fn open_store(&self, path: &Path, opts: &Options, version: &Version) -> Result<()> {
        let pm = store_device(path, opts)?;
        let tree = index::open_btree(&*pm, self.options, version)?;
        self.state.lock().live = index::live_counts(&tree)?;
        self.btree
            .set(Arc::new(tree))
            .map_err(|_| Error::InvalidState("the B+-tree was opened twice".into()))
    }

    /// A fresh tree over the repaired level 0 (`rebuild.rs`).
    fn rebuild_store(
        &self,
        path: &Path,
        opts: &Options,
        files: &[FileMeta],
        tables: &TableCache,
    ) -> Result<()> {
        let pm = store_device(path, opts)?;
        rebuild::rebuild_btree(&*pm, self.options.btree_size as usize, files, tables)
    }

    /// Called at each install: the store of the new version, whose candidates are counted.
    fn level0_store(&self, version: &Version) -> Option<Arc<dyn Level0Store>> {
        let mut state = self.state.lock();
        state.files = version.levels[0].clone();
        self.refresh(&state);
        drop(state);
        let tree = self.btree.get()?.clone();
        Some(Arc::new(self.index(tree, version)))
    }

    fn scan_mark(&self) -> u64 {
        self.btree.get().map_or(0, |t| t.changes())
    }

    fn index_flush(&self, edit: &VersionEdit, tables: &TableCache) -> Result<()> {
        let tree = self.btree()?;
        for (_, file) in edit.new_files.iter().filter(|(level, _)| *level == 0) {
            let moved = index::insert_file(tree, file, tables)?;
            self.count(file.number, moved);
        }
        Ok(())
    }

    /// Selective compaction, when more than `compaction_trigger` SSTs are candidates (one leaf
    /// scan first, as each of SLM-DB's compaction runs does).
    fn store_compaction(
        &self,
        version: &Version,
        tables: &Arc<TableCache>,
        snapshots: &dyn Fn() -> bool,
    ) -> Result<Option<StoreCompaction>> {
        let tree = self.btree()?.clone();
        // The mark first: a snapshot taken after `snapshots()` answers reads every version
        // the tree names at the mark (`selective::Keep`).
        let mark = tree.changes();
        let snapshots = snapshots();
        let keep = selective::Keep::new(mark, snapshots);
        let group = {
            let mut state = self.state.lock();
            if !snapshots {
                state.parked.clear();
            }
            state.keep = keep.clone();
            let named: BTreeSet<u64> = version.levels[0].iter().map(|f| f.number).collect();
            state.flagged.extend(self.scattered.take());
            // Files under a range tombstone every reader sees are due at once (the merge
            // drops what it covers); with snapshots open it might not, so they wait.
            let stale = match snapshots {
                true => BTreeSet::new(),
                false => index::under_unapplied_range_dels(version),
            };
            state.flagged.extend(&stale);
            state.flagged.retain(|n| named.contains(n));
            self.scan_leaves(&tree, version, &mut state)?;
            self.refresh(&state);
            let cands = self.candidates(&version.levels[0], &state);
            if cands.len() <= self.options.compaction_trigger && stale.is_empty() {
                return Ok(None);
            }
            selective::pick(&cands, self.options.max_compaction_files)
        };
        Ok(Some(self.job(&tree, version, tables, group, keep)?))
    }

    /// Moves every key the tree still points at in a retired input onto its copy in the
    /// outputs (never over a location a newer flush wrote).
    fn follow_compaction(
        &self,
        retire: &[Arc<FileMeta>],
        outputs: &[FileMeta],
        tables: &TableCache,
        range_dels: &RangeTombstones,
    ) -> Result<()> {
        let tree = self.btree()?;
        let inputs: BTreeSet<u64> = retire.iter().map(|f| f.number).collect();
        let mut kept = Vec::new();
        for out in outputs {
            let moved = index::follow_file(tree, out, tables, &inputs)?;
            kept.push((out.number, out.num_entries.saturating_sub(moved.added)));
            self.count(out.number, moved);
        }
        for input in retire
            .iter()
            .filter(|f| index::under_range_del(f, range_dels))
        {
            index::forget_dropped(tree, input, tables, &inputs)?;
        }
        let mut state = self.state.lock();
        for n in &inputs {
            state.live.remove(n);
            state.flagged.remove(n);
            state.parked.remove(n);
            state.pinned.remove(n);
            state.settled.remove(n);
        }
        state.settled.extend(outputs.iter().map(|f| f.number));
        match state.keep.keeps_all() {
            true => state.parked.extend(outputs.iter().map(|f| f.number)),
            false => state.pinned.extend(kept),
        }
        self.refresh(&state);
        Ok(())
    }
}
