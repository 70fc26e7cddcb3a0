//! [`Version`]: an immutable snapshot of the SSD tree (SST files per level and value logs).
//!
//! Invariants (checked by [`Version::apply`], which is the only way to build a non-empty version):
//! - every level >= 1 is sorted by smallest key and its files are disjoint in *user* keys, so at
//!   most one file of a level can hold a given user key;
//! - a file's smallest internal key orders at or before its largest;
//! - a file number appears at most once in the whole version;
//! - every value log referenced by a file's `vlog_refs` is in `vlogs` or redirected (a key of
//!   `redirects`), so a value log can only be deleted in an edit that also removes (or has
//!   removed) every file pointing into it, or redirects it;
//! - a redirected log (victim) is not in `vlogs`, and its redirect's target is: a target cannot
//!   be deleted or redirected while a redirect into it lives (no chains);
//! - a redirect leaves only in an edit after which no file names its victim.
//!
//! The version's [`Extension`] is the design's own state (`extension.rs`): edits change it by
//! their design records, which the extension checks against its own invariants.
//!
//! Level 0 holds L1's *unmerged runs* (FlatLSM keeps its L0 in PMTables; see
//! `compaction/merge_runs.rs`): each flush adds one run, a set of files disjoint among
//! themselves, and runs may overlap each other. Files are kept in the order they were added,
//! and only flushes add to level 0, one at a time, so a later file never holds older versions
//! of a key than an earlier one: reads search level 0 from the last file back.
//!
//! Thread-safety: a version is immutable after construction; share it as `Arc<Version>`.

use super::edit::{FileMeta, RedirectMeta, VersionEdit};
use super::extension::Extension;
use super::MAX_LEVELS;
use crate::error::{Error, Result};
use crate::range_del::RangeTombstones;
use crate::types::{compare_bytes, compare_internal_keys, user_key_of};
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The files and value logs of the SSD tree at one point in time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    /// SST files per level, always [`MAX_LEVELS`] of them (a design uses a prefix: FlatLSM
    /// three, the leveled designs up to all seven); level 0 may overlap, levels >= 1 are
    /// sorted by smallest key and non-overlapping.
    pub levels: Vec<Vec<Arc<FileMeta>>>,
    /// Live value-log files by number.
    pub vlogs: BTreeMap<u64, super::edit::VlogMeta>,
    /// Redirected value logs by victim number (value-log GC, `vlog::redirect`).
    pub redirects: BTreeMap<u64, RedirectMeta>,
    /// The design's own state (`extension.rs`); [`Extension::none`] for designs without one.
    pub extension: Extension,
    /// Range tombstones (`delete_range`) not yet retired.
    pub range_dels: Arc<RangeTombstones>,
    /// `level0_runs`, counted on first use: every write looks at it (the slowdown).
    runs: RunsCache,
}

/// A count of level-0 runs made once per version. A clone starts empty (its levels are about
/// to change: versions are built by cloning and applying an edit), and two versions are equal
/// whatever their caches hold.
#[derive(Debug, Default)]
struct RunsCache(std::sync::OnceLock<usize>);

impl Clone for RunsCache {
    fn clone(&self) -> Self {
        RunsCache::default()
    }
}

impl PartialEq for RunsCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for RunsCache {}

impl Default for Version {
    fn default() -> Self {
        Version {
            levels: vec![Vec::new(); MAX_LEVELS],
            vlogs: BTreeMap::new(),
            redirects: BTreeMap::new(),
            extension: Extension::none(),
            range_dels: Arc::default(),
            runs: RunsCache::default(),
        }
    }
}

impl Version {
    /// An empty version whose design keeps `extension` (its empty state).
    pub fn with_extension(extension: Extension) -> Version {
        Version {
            extension,
            ..Version::default()
        }
    }
}

fn invalid(msg: String) -> Error {
    Error::InvalidState(msg)
}

fn check_level(level: usize) -> Result<()> {
    if level >= MAX_LEVELS {
        return Err(invalid(format!(
            "level {level} is out of range (the tree has {MAX_LEVELS} levels)"
        )));
    }
    Ok(())
}

fn smallest_user(f: &FileMeta) -> &[u8] {
    user_key_of(&f.smallest)
}

fn largest_user(f: &FileMeta) -> &[u8] {
    user_key_of(&f.largest)
}

impl Version {
    /// A new version with the edit applied.
    ///
    /// Order: deleted files, new value logs, new redirects, new files, deleted value logs,
    /// deleted redirects, design records (to the extension), range tombstones. Errors ([`Error::InvalidState`]) if a level is out of range, a deleted
    /// file, value log or redirect is missing, a new file's number is already in use or its keys
    /// are inverted, a new file would overlap another in a level >= 1, a file references a value
    /// log that is neither live nor redirected, a log is redirected twice, into itself, into a
    /// log not in the version or while it is live, a deleted value log is still referenced, or
    /// the extension refuses the design records. `self` is never modified.
    pub fn apply(&self, edit: &VersionEdit) -> Result<Version> {
        let mut v = self.clone();
        for &(level, number) in &edit.deleted_files {
            v.delete_file(level, number)?;
        }
        for meta in &edit.new_vlogs {
            if v.vlogs.insert(meta.number, meta.clone()).is_some() {
                return Err(invalid(format!("value log {} added twice", meta.number)));
            }
        }
        for r in &edit.new_redirects {
            v.add_redirect(r)?;
        }
        let mut numbers: BTreeSet<u64> = v.file_numbers().into_iter().collect();
        for (level, f) in &edit.new_files {
            if !numbers.insert(f.number) {
                return Err(invalid(format!("file {} added twice", f.number)));
            }
            v.add_file(*level, f)?;
        }
        v.apply_deletions(edit)?;
        v.extension = v.extension.apply(&edit.design_records)?;
        v.apply_range_dels(edit)?;
        let links_changed = !edit.deleted_vlogs.is_empty()
            || !edit.new_redirects.is_empty()
            || !edit.deleted_redirects.is_empty();
        if links_changed {
            v.check_redirects()?;
            v.check_all_vlog_refs()?;
        }
        Ok(v)
    }

    /// Adds and retires range tombstones: a new one's sequence must be unused, a retired one
    /// must exist.
    fn apply_range_dels(&mut self, edit: &VersionEdit) -> Result<()> {
        if edit.new_range_dels.is_empty() && edit.retired_range_dels.is_empty() {
            return Ok(());
        }
        let mut all = self.range_dels.tombstones().to_vec();
        for &seq in &edit.retired_range_dels {
            let Some(i) = all.iter().position(|t| t.seq == seq) else {
                return Err(invalid(format!(
                    "retired range tombstone {seq} does not exist"
                )));
            };
            all.remove(i);
        }
        for t in &edit.new_range_dels {
            if all.iter().any(|o| o.seq == t.seq) || t.start >= t.end {
                return Err(invalid(format!(
                    "range tombstone {} is empty or added twice",
                    t.seq
                )));
            }
            all.push(t.clone());
        }
        self.range_dels = Arc::new(RangeTombstones::new(all));
        Ok(())
    }

    fn apply_deletions(&mut self, edit: &VersionEdit) -> Result<()> {
        for &number in &edit.deleted_vlogs {
            if self.vlogs.remove(&number).is_none() {
                return Err(invalid(format!(
                    "deleted value log {number} is not in the version"
                )));
            }
        }
        for &victim in &edit.deleted_redirects {
            if self.redirects.remove(&victim).is_none() {
                return Err(invalid(format!(
                    "deleted redirect of value log {victim} is not in the version"
                )));
            }
        }
        Ok(())
    }

    fn add_redirect(&mut self, r: &RedirectMeta) -> Result<()> {
        if r.victim == r.target {
            let msg = format!("value log {} redirected into itself", r.victim);
            return Err(invalid(msg));
        }
        if self.redirects.insert(r.victim, *r).is_some() {
            let msg = format!("value log {} redirected twice", r.victim);
            return Err(invalid(msg));
        }
        Ok(())
    }

    /// Every victim is gone from `vlogs` and every target is in it (so no chains).
    fn check_redirects(&self) -> Result<()> {
        for r in self.redirects.values() {
            if self.vlogs.contains_key(&r.victim) {
                let msg = format!("value log {} is both live and redirected", r.victim);
                return Err(invalid(msg));
            }
            if !self.vlogs.contains_key(&r.target) {
                return Err(invalid(format!(
                    "value log {} is redirected into {}, which is not a live value log",
                    r.victim, r.target
                )));
            }
        }
        Ok(())
    }

    fn delete_file(&mut self, level: usize, number: u64) -> Result<()> {
        check_level(level)?;
        let files = &mut self.levels[level];
        match files.iter().position(|f| f.number == number) {
            Some(i) => {
                files.remove(i);
                Ok(())
            }
            None => Err(invalid(format!(
                "deleted file {number} is not in level {level}"
            ))),
        }
    }

    fn add_file(&mut self, level: usize, f: &FileMeta) -> Result<()> {
        check_level(level)?;
        if compare_internal_keys(&f.smallest, &f.largest) == Ordering::Greater {
            return Err(invalid(format!("file {} has smallest > largest", f.number)));
        }
        self.check_vlog_refs(f)?;
        let files = &mut self.levels[level];
        if level == 0 {
            files.push(Arc::new(f.clone()));
            return Ok(());
        }
        // First file whose smallest key orders after the new file's.
        let i = files.partition_point(|g| {
            compare_internal_keys(&g.smallest, &f.smallest) != Ordering::Greater
        });
        let overlaps_prev = i > 0 && largest_user(&files[i - 1]) >= smallest_user(f);
        let overlaps_next = i < files.len() && smallest_user(&files[i]) <= largest_user(f);
        if overlaps_prev || overlaps_next {
            let other = if overlaps_prev {
                &files[i - 1]
            } else {
                &files[i]
            };
            return Err(invalid(format!(
                "new file {} overlaps file {} in level {level}",
                f.number, other.number
            )));
        }
        files.insert(i, Arc::new(f.clone()));
        Ok(())
    }

    fn check_vlog_refs(&self, f: &FileMeta) -> Result<()> {
        match f
            .vlog_refs
            .iter()
            .find(|(n, _)| !self.vlogs.contains_key(n) && !self.redirects.contains_key(n))
        {
            Some((n, _)) => Err(invalid(format!(
                "file {} references unknown value log {n}",
                f.number
            ))),
            None => Ok(()),
        }
    }

    fn check_all_vlog_refs(&self) -> Result<()> {
        self.levels
            .iter()
            .flatten()
            .try_for_each(|f| self.check_vlog_refs(f))
    }

    /// Files of `level` whose user-key range intersects `[smallest_user, largest_user]`
    /// (inclusive), in level order. Levels >= 1 use binary search; an out-of-range level or an
    /// empty range (`smallest_user > largest_user`) gives no files.
    pub fn overlapping_files(
        &self,
        level: usize,
        smallest_user: &[u8],
        largest_user: &[u8],
    ) -> Vec<Arc<FileMeta>> {
        let Some(files) = self.levels.get(level) else {
            return Vec::new();
        };
        if smallest_user > largest_user {
            return Vec::new();
        }
        let hits = |f: &FileMeta| {
            self::largest_user(f) >= smallest_user && self::smallest_user(f) <= largest_user
        };
        if level == 0 {
            return files.iter().filter(|f| hits(f)).cloned().collect();
        }
        let start = files.partition_point(|f| self::largest_user(f) < smallest_user);
        files[start..]
            .iter()
            .take_while(|f| self::smallest_user(f) <= largest_user)
            .cloned()
            .collect()
    }

    /// For level >= 1: the one file whose user-key range contains `user_key`, if any.
    /// Level 0 (whose files may overlap) and out-of-range levels give `None`. A reference, not
    /// a clone: a point read on every core would otherwise bump the same counts.
    pub fn file_for_key(&self, level: usize, user_key: &[u8]) -> Option<&Arc<FileMeta>> {
        if level == 0 {
            return None;
        }
        let files = self.levels.get(level)?;
        let i = files.partition_point(|f| compare_bytes(largest_user(f), user_key).is_lt());
        files
            .get(i)
            .filter(|f| compare_bytes(smallest_user(f), user_key).is_le())
    }

    /// The level-0 files whose user-key range contains `user_key`, newest first.
    pub fn level0_files_for_key<'a>(
        &'a self,
        user_key: &'a [u8],
    ) -> impl Iterator<Item = &'a Arc<FileMeta>> + 'a {
        self.levels[0].iter().rev().filter(move |f| {
            compare_bytes(smallest_user(f), user_key).is_le()
                && compare_bytes(user_key, largest_user(f)).is_le()
        })
    }

    /// True if no file of any level can hold `user_key` (so a merge may drop its tombstone).
    pub fn no_file_holds(&self, user_key: &[u8]) -> bool {
        self.level0_files_for_key(user_key).next().is_none()
            && (1..MAX_LEVELS).all(|l| self.file_for_key(l, user_key).is_none())
    }

    /// How many runs level 0 holds: its files in order, a new run starting at each file that
    /// overlaps a file of the current run (a flush's files never overlap each other).
    pub fn level0_runs(&self) -> usize {
        *self.runs.0.get_or_init(|| self.count_level0_runs())
    }

    fn count_level0_runs(&self) -> usize {
        let mut runs = 0;
        let mut current: Vec<&FileMeta> = Vec::new();
        for f in &self.levels[0] {
            let overlaps = |g: &&FileMeta| {
                smallest_user(g) <= largest_user(f) && smallest_user(f) <= largest_user(g)
            };
            if current.is_empty() || current.iter().any(overlaps) {
                runs += 1;
                current.clear();
            }
            current.push(f);
        }
        runs
    }

    /// Sum of the sizes of the files of `level` (0 for an out-of-range level).
    pub fn level_bytes(&self, level: usize) -> u64 {
        self.levels
            .get(level)
            .map_or(0, |fs| fs.iter().map(|f| f.file_size).sum())
    }

    /// The data `level` represents: its SST bytes plus the value-log bytes its files reference
    /// (what `l1_capacity` is compared with: with KV separation an L1 entry is ~50 bytes, so
    /// SST bytes alone would never reach the paper's Ordered-L1 / data ratio).
    pub fn level_data_bytes(&self, level: usize) -> u64 {
        let referenced = |f: &FileMeta| f.vlog_refs.iter().map(|&(_, b)| b).sum::<u64>();
        self.levels
            .get(level)
            .map_or(0, |fs| fs.iter().map(|f| f.file_size + referenced(f)).sum())
    }

    /// Number of files in `level` (0 for an out-of-range level).
    pub fn num_files(&self, level: usize) -> usize {
        self.levels.get(level).map_or(0, Vec::len)
    }

    /// Live bytes per value-log file: the sum of `vlog_refs` over all files of all levels,
    /// where a reference to a redirected log counts for its target (the record was copied there
    /// with the same length). Every value log of the version is present, with 0 if no file
    /// references it; redirected logs are not.
    pub fn vlog_live_bytes(&self) -> BTreeMap<u64, u64> {
        let mut live: BTreeMap<u64, u64> = self.vlogs.keys().map(|&n| (n, 0)).collect();
        for f in self.levels.iter().flatten() {
            for &(n, bytes) in &f.vlog_refs {
                let n = self.redirects.get(&n).map_or(n, |r| r.target);
                let e = live.entry(n).or_insert(0);
                *e = e.saturating_add(bytes);
            }
        }
        live
    }

    /// Victims of redirects that no file names any more (their redirects may leave).
    pub fn unreferenced_redirects(&self) -> Vec<u64> {
        let named: BTreeSet<u64> = self
            .levels
            .iter()
            .flatten()
            .flat_map(|f| f.vlog_refs.iter().map(|&(n, _)| n))
            .collect();
        self.redirects
            .keys()
            .filter(|v| !named.contains(v))
            .copied()
            .collect()
    }

    /// True if a live redirect copies records into value log `number`.
    pub fn is_redirect_target(&self, number: u64) -> bool {
        self.redirects.values().any(|r| r.target == number)
    }

    /// File numbers of the redirect tables, ascending.
    pub fn redirect_file_numbers(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.redirects.values().map(|r| r.number).collect();
        v.sort_unstable();
        v
    }

    /// Numbers of all SST files in the version, ascending.
    pub fn file_numbers(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.levels.iter().flatten().map(|f| f.number).collect();
        v.sort_unstable();
        v
    }

    /// An edit that recreates this version from an empty one (used to start a new manifest).
    /// Only `new_vlogs`, `new_redirects`, `new_files`, `new_range_dels` and the design records
    /// (the extension's snapshot, recreating it from its empty state) are set; the scalar fields
    /// are left to the caller.
    pub fn snapshot_edit(&self) -> VersionEdit {
        VersionEdit {
            new_vlogs: self.vlogs.values().cloned().collect(),
            new_redirects: self.redirects.values().copied().collect(),
            new_files: self
                .levels
                .iter()
                .enumerate()
                .flat_map(|(l, fs)| fs.iter().map(move |f| (l, FileMeta::clone(f))))
                .collect(),
            new_range_dels: self.range_dels.tombstones().to_vec(),
            design_records: self.extension.state().snapshot(),
            ..VersionEdit::default()
        }
    }
}
