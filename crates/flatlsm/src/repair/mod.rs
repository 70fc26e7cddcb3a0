//! [`repair`]: rebuilds a database's manifest from the files present, as RocksDB's `RepairDB`
//! (`ldb repair`). The rules are in docs/design-decisions.md ("Repair"); in short:
//! - the database's exclusive lock is held throughout; nothing is ever deleted: a file repair
//!   cannot record is moved to `<db>/lost/` and reported (open would purge it as an orphan);
//! - every SST (database and PM directory) that opens and whose every block verifies is kept.
//!   With a readable old manifest that is current, the files it records keep their levels and
//!   the others (left by interrupted jobs, or awaiting deletion: recorded files and write
//!   buffers hold their entries) are left out for open to remove. Without one, or when it is
//!   stale (`stale.rs`: files it records are missing, or buffers hold writes it does not
//!   record — it lost records, so unrecorded files may hold the only copy of data), every file
//!   goes to level 0, ordered by its largest sequence number ascending (level 0's order:
//!   a later file never holds older versions of a key than an earlier one); files whose
//!   versions interleave with another's (user-key and sequence ranges both overlap) are first
//!   rewritten together into new files (`merge.rs`), so that order holds. The files a
//!   stale manifest records that are missing are reported, and the report is then incomplete;
//! - every value log with a valid header is kept, whole (`total_bytes` = size − header); a
//!   redirect table is kept when its victim log is absent and its target is kept; an SST
//!   pointing into a log neither kept nor redirected is moved to lost/ (a version never holds
//!   dangling pointers);
//! - write buffers present (PM Logs, PM skiplists, write-ahead logs, by the design's buffer
//!   kind) are recorded as the PM Log set, so the next open recovers them as unflushed buffers
//!   (`buffers.rs`; each passes the check open makes; a PM Log damaged in its durable
//!   part is copied to lost/ and cut to its valid prefix). Write-ahead logs are judged by
//!   open's rules as recovery to a point in time judges them (`wals.rs`): at the first
//!   hole the writes before it are kept (a damaged log cut back to them, its original copied
//!   to lost/) and every newer log moves to lost/;
//! - what a readable old manifest knows and the files cannot tell is carried over, stale or
//!   not: its `min_unflushed_pmlog` (older buffers were flushed), its range tombstones and its
//!   last sequence (as a lower bound). Its profile must be `opts.profile`. From a manifest that
//!   cannot be loaded, or a newer one beside a stale one, the range tombstones of its records
//!   up to the first damaged one;
//! - the new manifest (one snapshot, then CURRENT, `Manifest::create`) takes a number above
//!   every number present; old manifests are copied to lost/ first (`lost.rs`: nothing
//!   there is ever replaced). That is the commit point: a
//!   crash before it leaves no CURRENT (or the old one), and repair can simply run again.
//!
//! - a design's own index over level 0 is rebuilt from the files, before the commit
//!   (`Design::rebuild_store`: SLM-DB's B+-tree, `designs/slmdb/rebuild.rs`).
//! - a design's own store is read out (`Design::salvage_store`: MatrixKV's rows, from their
//!   first live entries as the old manifest records them, else every row found) and written
//!   as level-0 SSTs; the new manifest records nothing in the store. If part of it cannot be
//!   read, the store's region is copied to lost/ and reported.

mod buffers;
mod lost;
mod merge;
mod report;
mod scan;
mod stale;
mod wals;

pub use report::RepairReport;

use crate::designs::{check_profile, design_of, version_extension, BufferKind, Salvage};
use crate::error::{Error, IoContext, Result};
use crate::file_names::{parse_numbered_file, NumberedFile};
use crate::fs::{FsRef, OsFileSystem};
use crate::layout::lock::DirLock;
use crate::layout::{pm_sst_names, sst_dirs};
use crate::options::Options;
use crate::pm::PmDeviceRef;
use crate::range_del::RangeTombstone;
use crate::sst::{SstDir, SstDirs, TableCache};
use crate::version::{
    FileMeta, Manifest, ManifestState, RecoveredManifest, RedirectMeta, Version, VersionEdit,
    VlogMeta,
};
use crate::vlog::RedirectTable;
use lost::{copy_region_to_lost, copy_to_lost, move_to_lost};
use merge::{Run, RunWriter};
use scan::{salvage_range_dels, scan_redirect, scan_sst, scan_vlog, ScannedSst};
use stale::{resized_ssts, staleness, Buffers, Staleness};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The directory (inside the database) files repair could not use are moved to.
pub const LOST_DIR: &str = "lost";

/// Rebuilds the manifest of the database at `path` from the SSTs, value logs, redirect tables
/// and write buffers present (see the module rules), and returns what it kept and lost. The
/// database must not be open; `opts` must name the profile it was created with.
///
/// # Examples
///
/// ```
/// # fn main() -> flatlsm::Result<()> {
/// let dir = tempfile::tempdir().unwrap();
/// let db = flatlsm::Db::open(dir.path(), flatlsm::Options::default())?;
/// db.put(b"k", b"v")?;
/// db.close()?;
/// let report = flatlsm::repair(dir.path(), flatlsm::Options::default())?;
/// assert!(report.is_complete());
/// let db = flatlsm::Db::open(dir.path(), flatlsm::Options::default())?;
/// assert_eq!(db.get(b"k")?, Some(b"v".to_vec()));
/// # Ok(())
/// # }
/// ```
pub fn repair(path: impl AsRef<Path>, opts: Options) -> Result<RepairReport> {
    let path = path.as_ref();
    opts.validate()?;
    let fs: FsRef = opts
        .file_system
        .clone()
        .unwrap_or_else(|| Arc::new(OsFileSystem));
    if !fs.exists(path) {
        let what = format!("database {} does not exist", path.display());
        return Err(Error::InvalidArgument(what));
    }
    let _lock = DirLock::acquire(path, true)?;
    let old = Manifest::load(&*fs, path, &version_extension).ok();
    if let Some(m) = &old {
        check_profile(path, m.state.profile.as_deref(), opts.profile)?;
    }
    Repair::new(fs, path, &opts, old).run()
}

/// An SST the repaired manifest records, and its level.
type Placed = (usize, ScannedSst);

/// One repair run's inputs and findings.
pub(super) struct Repair<'a> {
    pub(super) fs: FsRef,
    pub(super) path: &'a Path,
    pub(super) opts: &'a Options,
    dirs: SstDirs,
    /// The old manifest, if it could be loaded.
    pub(super) old: Option<RecoveredManifest>,
    /// The old manifest lost records (`stale.rs`): its levels are not kept.
    stale: bool,
    pub(super) report: RepairReport,
    /// Every file number seen (the new manifest goes above them all).
    max_number: u64,
}

impl<'a> Repair<'a> {
    /// A repair; numbers the old manifest handed out are never reused.
    fn new(fs: FsRef, path: &'a Path, opts: &'a Options, old: Option<RecoveredManifest>) -> Self {
        let handed_out = old.as_ref().map_or(0, |m| m.state.next_file_number);
        Repair {
            fs,
            path,
            opts,
            dirs: sst_dirs(path, opts),
            old,
            stale: false,
            report: RepairReport::default(),
            max_number: handed_out.saturating_sub(1),
        }
    }

    fn run(mut self) -> Result<RepairReport> {
        let names = self.list(self.path)?;
        let pm = self.buffer_device()?;
        let staleness = self.staleness(pm.as_ref())?; // before anything moves to lost/
        let vlogs = self.vlogs(&names)?;
        let redirects = self.redirects(&names, &vlogs)?;
        let ssts = self.ssts(&names)?;
        let ssts = self.drop_dangling(ssts, &vlogs, &redirects)?;
        self.judge_old(staleness, &ssts);
        let range_dels = self.old_range_dels(&names);
        let buffers = self.buffers(pm.as_ref(), &range_dels)?;
        let salvage = self.salvage_store()?;
        let ssts = self.order(ssts, salvage)?;
        self.rebuild_store(&ssts)?;
        let state = self.state(ssts, vlogs, redirects, buffers, range_dels)?;
        self.commit(&names, &state)?;
        Ok(self.report)
    }

    /// The device of the design's PM Logs or skiplists (`None` for write-ahead logs).
    fn buffer_device(&self) -> Result<Option<PmDeviceRef>> {
        let design = design_of(self.opts);
        Ok(match (design.buffer_kind(), &self.opts.pm_device) {
            (BufferKind::DramWithWal, _) => None,
            (_, Some(d)) => Some(d.clone()),
            (_, None) => Some(design.write_buffer_device(self.path, self.opts)?),
        })
    }

    /// What the files present say about the old manifest (nothing without one).
    fn staleness(&self, pm: Option<&PmDeviceRef>) -> Result<Staleness> {
        let Some(old) = &self.old else {
            return Ok(Staleness::default());
        };
        let wal_dir = self.opts.wal_dir_for(self.path);
        let buffers = match (design_of(self.opts).buffer_kind(), pm) {
            (BufferKind::PmTable, Some(pm)) => Buffers::PmLogs(pm),
            (BufferKind::PmSkiplist, Some(pm)) => Buffers::Skiplists(pm),
            _ => Buffers::Wals(&wal_dir),
        };
        staleness(&*self.fs, &self.dirs, &old.state, &buffers)
    }

    /// Decides whether the old manifest is stale (then its levels and its record of the
    /// design's store are not used) and reports the files it records that are missing.
    fn judge_old(&mut self, mut found: Staleness, ssts: &[ScannedSst]) {
        let Some(old) = &self.old else { return };
        found.signs.extend(resized_ssts(&old.state.version, ssts));
        self.stale = found.is_stale();
        if !self.stale {
            return;
        }
        let name = old.path.file_name().unwrap_or_default().to_string_lossy();
        self.report.stale_manifest = found.describe(&name);
        self.report.files_missing = found.missing;
        self.report.notes.push(format!(
            "the old manifest {name} lost records: its levels are not kept, every SST goes to \
             level 0 as without a manifest, and any range tombstones recorded after it are lost"
        ));
    }

    /// The names in `dir`, noting every numbered file's number.
    pub(super) fn list(&mut self, dir: &Path) -> Result<Vec<String>> {
        let names = self
            .fs
            .list_dir(dir)
            .context(|| format!("listing {}", dir.display()))?;
        let numbers = names.iter().filter_map(|n| parse_numbered_file(n));
        self.see(numbers.map(NumberedFile::number).max().unwrap_or(0));
        Ok(names)
    }

    pub(super) fn see(&mut self, number: u64) {
        self.max_number = self.max_number.max(number);
    }

    /// The directory files go to (`lost.rs`).
    pub(super) fn lost_dir(&self) -> PathBuf {
        self.path.join(LOST_DIR)
    }

    /// Moves `from` to `<db>/lost/` and reports it with `why` (and where it went, when the
    /// name was taken by an earlier repair's file).
    pub(super) fn lose(&mut self, from: &Path, why: String) -> Result<()> {
        let to = move_to_lost(&*self.fs, &self.lost_dir(), from)?;
        let why = match to.file_name() == from.file_name() {
            true => why,
            false => format!("{why} (moved to {})", to.display()),
        };
        self.report.files_lost.push((from.to_path_buf(), why));
        Ok(())
    }

    /// The value logs with a valid header; the others are lost.
    fn vlogs(&mut self, names: &[String]) -> Result<BTreeMap<u64, VlogMeta>> {
        let mut kept = BTreeMap::new();
        for n in numbered(names, |f| matches!(f, NumberedFile::Vlog(_))) {
            match scan_vlog(&*self.fs, self.path, n) {
                Ok(meta) => drop(kept.insert(n, meta)),
                Err(e) => self.lose(
                    &self.path.join(crate::vlog::vlog_file_name(n)),
                    e.to_string(),
                )?,
            }
        }
        self.report.vlogs_kept = kept.keys().copied().collect();
        Ok(kept)
    }

    /// The redirect tables to record: one per absent victim whose target is kept (the newest
    /// table when there are several). The others are lost.
    fn redirects(
        &mut self,
        names: &[String],
        vlogs: &BTreeMap<u64, VlogMeta>,
    ) -> Result<BTreeMap<u64, RedirectMeta>> {
        let mut kept: BTreeMap<u64, RedirectMeta> = BTreeMap::new();
        let mut numbers = numbered(names, |f| matches!(f, NumberedFile::Redirect(_)));
        numbers.reverse(); // newest first
        for n in numbers {
            match self.usable_redirect(n, vlogs, &kept) {
                Ok(t) => drop(kept.insert(t.victim(), redirect_meta(&t))),
                Err(why) => {
                    let file = self.path.join(crate::file_names::redirect_file_name(n));
                    self.lose(&file, why)?
                }
            }
        }
        self.report.redirects_kept = kept.values().map(|r| r.number).collect();
        Ok(kept)
    }

    /// Redirect table `n` if it decodes and is to be recorded (see [`redirect_fate`]), else why not.
    fn usable_redirect(
        &self,
        n: u64,
        vlogs: &BTreeMap<u64, VlogMeta>,
        kept: &BTreeMap<u64, RedirectMeta>,
    ) -> std::result::Result<Arc<RedirectTable>, String> {
        let t = scan_redirect(&*self.fs, self.path, n).map_err(|e| e.to_string())?;
        match redirect_fate(&t, vlogs, kept) {
            None => Ok(t),
            Some(why) => Err(why),
        }
    }

    /// Every SST (database and PM directory) that verifies; the others are lost.
    fn ssts(&mut self, names: &[String]) -> Result<Vec<ScannedSst>> {
        let data = numbered(names, |f| matches!(f, NumberedFile::Sst(_)));
        let pm_names = pm_sst_names(&*self.fs, &self.dirs)?;
        let pm: Vec<u64> = pm_names
            .iter()
            .filter_map(|n| crate::sst::parse_sst_file_name(n))
            .collect();
        let all = data.into_iter().map(|n| (n, SstDir::Data));
        let mut kept = Vec::new();
        for (n, dir) in all.chain(pm.into_iter().map(|n| (n, SstDir::Pm))) {
            self.see(n);
            let file = self.dirs.path(n, dir);
            match scan_sst(&*self.fs, &file, n, dir) {
                Ok(s) => kept.push(s),
                Err(e) => self.lose(&file, e.to_string())?,
            }
        }
        Ok(kept)
    }

    /// SSTs whose every value log is kept or redirected; the others are lost.
    fn drop_dangling(
        &mut self,
        ssts: Vec<ScannedSst>,
        vlogs: &BTreeMap<u64, VlogMeta>,
        redirects: &BTreeMap<u64, RedirectMeta>,
    ) -> Result<Vec<ScannedSst>> {
        let mut kept = Vec::new();
        for s in ssts {
            let usable = |v: &u64| vlogs.contains_key(v) || redirects.contains_key(v);
            match s.meta.vlog_refs.iter().map(|r| r.0).find(|v| !usable(v)) {
                None => kept.push(s),
                Some(v) => {
                    let why = format!("points into value log {v}, which is missing or unusable");
                    self.lose(&self.dirs.path(s.meta.number, s.meta.dir), why)?;
                }
            }
        }
        Ok(kept)
    }

    /// The design's own store (MatrixKV's rows) as runs to write; when something could not be
    /// read, the store is copied to lost/ and reported.
    fn salvage_store(&mut self) -> Result<Salvage> {
        let old = self.old.as_ref().filter(|_| !self.stale);
        let recorded = old.map(|m| &m.state.version);
        let salvage = design_of(self.opts)
            .store()
            .salvage_store(self.path, self.opts, recorded)?;
        self.see(salvage.max_number);
        self.report.notes.extend(salvage.notes.iter().cloned());
        if let Some(region) = &salvage.copy {
            let to = copy_region_to_lost(&*self.fs, &self.lost_dir(), &**region)?;
            let why = format!(
                "some of it could not be read (see the notes); copied to {}",
                to.display()
            );
            self.report
                .files_lost
                .push((region.path().to_path_buf(), why));
        }
        Ok(salvage)
    }

    /// The SSTs and the store's runs in level-0 order, those whose versions interleave
    /// rewritten (`repair_merge`).
    fn order(&mut self, ssts: Vec<ScannedSst>, salvage: Salvage) -> Result<Vec<Placed>> {
        let (mut placed, level0) = self.place(ssts);
        let next = self.max_number + 1;
        let mut writer = RunWriter::new(self.fs.clone(), self.dirs.clone(), self.opts, next);
        let mut runs: Vec<Run> = level0.into_iter().map(|s| vec![s]).collect();
        for mut source in salvage.runs {
            runs.push(writer.write_run(&mut *source)?);
        }
        runs.retain(|r| !r.is_empty());
        let in_order = design_of(self.opts).level0_read_in_order();
        let level0 = writer.resolve(runs, in_order)?.into_iter().map(|s| (0, s));
        placed.splice(0..0, level0);
        self.see(writer.next_number);
        self.report.files_rewritten = writer.rewritten;
        self.report.files_kept = placed
            .iter()
            .map(|(_, s)| self.dirs.path(s.meta.number, s.meta.dir))
            .collect();
        Ok(placed)
    }

    /// With a readable old manifest that is current, the SSTs it records keep their levels
    /// (and metadata: what range tombstones they applied), those of level 0 go on to be
    /// ordered with the rest, and the SSTs it does not record are left out: files of
    /// interrupted jobs or awaiting deletion, whose entries recorded files or write buffers
    /// hold (the next open removes them, as it would have). Without one, or with a stale one
    /// (unrecorded files may hold the only copy of data), every SST goes to level 0.
    fn place(&mut self, ssts: Vec<ScannedSst>) -> (Vec<Placed>, Vec<ScannedSst>) {
        let Some(old) = self.old.as_ref().filter(|_| !self.stale) else {
            return (Vec::new(), ssts);
        };
        let known = recorded_files(&old.state.version);
        let (mut placed, mut level0, mut left_out) = (Vec::new(), Vec::new(), Vec::new());
        for mut s in ssts {
            match known.get(&s.meta.number) {
                Some((level, meta)) if meta.file_size == s.meta.file_size => {
                    s.meta = (**meta).clone();
                    match level {
                        0 => level0.push(s),
                        _ => placed.push((*level, s)),
                    }
                }
                _ => left_out.push(s.meta.number),
            }
        }
        if !left_out.is_empty() {
            self.report.notes.push(format!(
                "SSTs {left_out:?} are not in the old manifest (files of interrupted jobs or \
                 awaiting deletion): left out; the next open removes them"
            ));
        }
        (placed, level0)
    }

    /// The design's own index over the files (SLM-DB's B+-tree), rebuilt before the commit.
    fn rebuild_store(&self, ssts: &[Placed]) -> Result<()> {
        let files: Vec<FileMeta> = ssts.iter().map(|(_, s)| s.meta.clone()).collect();
        let tables = TableCache::new(self.fs.clone(), self.dirs.clone(), None);
        design_of(self.opts)
            .store()
            .rebuild_store(self.path, self.opts, &files, &tables)
    }

    /// The new manifest's state.
    fn state(
        &mut self,
        ssts: Vec<Placed>,
        vlogs: BTreeMap<u64, VlogMeta>,
        redirects: BTreeMap<u64, RedirectMeta>,
        buffers: BTreeSet<u64>,
        range_dels: Vec<RangeTombstone>,
    ) -> Result<ManifestState> {
        let old_seq = self.old.as_ref().map_or(0, |m| m.state.last_sequence);
        let tombstone_seq = range_dels.iter().map(|t| t.seq).max().unwrap_or(0);
        let sst_seq = ssts.iter().map(|(_, s)| s.max_seq).max().unwrap_or(0);
        let mut state = crate::recovery::new_state(self.opts.profile);
        state.apply(&version_edit(ssts, vlogs, redirects, range_dels))?;
        state.last_sequence = sst_seq.max(old_seq).max(tombstone_seq);
        state.min_unflushed_pmlog = self.min_unflushed();
        state.pm_logs = Some(buffers);
        state.identity = crate::layout::identity::read_db_identity(&*self.fs, self.path);
        state.profile = Some(self.opts.profile.name().to_string());
        self.report.last_sequence = state.last_sequence;
        Ok(state)
    }

    /// The old manifest's range tombstones: they live only there. A damaged one gives those
    /// its readable records record; so does a newer one beside a stale one.
    fn old_range_dels(&mut self, names: &[String]) -> Vec<RangeTombstone> {
        if let Some(m) = &self.old {
            let mut tombstones = m.state.version.range_dels.tombstones().to_vec();
            if self.stale {
                for t in self.newer_manifest_range_dels(names) {
                    if tombstones.iter().all(|o| o.seq != t.seq) {
                        tombstones.push(t); // one tombstone per sequence (the manifest's rule)
                    }
                }
            }
            return tombstones;
        }
        let (tombstones, note) = salvage_range_dels(&*self.fs, self.path, names).unwrap_or((
            Vec::new(),
            "no old manifest: range tombstones (delete_range), which only the manifest \
             records, could not be recovered"
                .to_string(),
        ));
        self.report.notes.push(note);
        tombstones
    }

    /// The range tombstones of the newest manifest file present, if it is newer than the
    /// stale old one (CURRENT names an older copy; it may hold later ones), as far as its
    /// records can be read.
    fn newer_manifest_range_dels(&mut self, names: &[String]) -> Vec<RangeTombstone> {
        let number = |name: &str| crate::version::parse_manifest_file_name(name);
        let old = self.old.as_ref().and_then(|m| m.path.file_name());
        let loaded = old.and_then(|n| number(&n.to_string_lossy()));
        let newest = names.iter().filter_map(|n| number(n)).max();
        if newest <= loaded {
            return Vec::new();
        }
        let salvaged = salvage_range_dels(&*self.fs, self.path, names);
        let (tombstones, note) = salvaged.unwrap_or_default();
        self.report.notes.push(note);
        tombstones
    }

    /// Copies the old manifests aside (`Manifest::create` removes them), then writes the new one and CURRENT (the commit point).
    fn commit(&mut self, names: &[String], state: &ManifestState) -> Result<()> {
        for name in names {
            if crate::version::parse_manifest_file_name(name).is_some() {
                let to = copy_to_lost(&*self.fs, &self.lost_dir(), &self.path.join(name))?;
                let note = format!("old manifest {name} copied to {}", to.display());
                self.report.notes.push(note);
            }
        }
        let number = self.max_number + 1;
        let mut state = state.clone();
        state.next_file_number = number + 1;
        Manifest::create(self.fs.clone(), self.path, number, &state)?;
        self.report.manifest = self.path.join(crate::version::manifest_file_name(number));
        Ok(())
    }
}

/// The edit recording the repaired tree: every SST at its level, level 0 in its order.
fn version_edit(
    ssts: Vec<Placed>,
    vlogs: BTreeMap<u64, VlogMeta>,
    redirects: BTreeMap<u64, RedirectMeta>,
    range_dels: Vec<RangeTombstone>,
) -> VersionEdit {
    VersionEdit {
        new_files: ssts.into_iter().map(|(level, s)| (level, s.meta)).collect(),
        new_vlogs: vlogs.into_values().collect(),
        new_redirects: redirects.into_values().collect(),
        new_range_dels: range_dels,
        ..VersionEdit::default()
    }
}

/// Every SST `version` records, by number, with its level.
fn recorded_files(version: &Version) -> BTreeMap<u64, (usize, Arc<FileMeta>)> {
    let levels = version.levels.iter().enumerate();
    let files = levels.flat_map(|(l, files)| files.iter().map(move |f| (f.number, (l, f.clone()))));
    files.collect()
}

/// The numbers of the numbered files in `names` that `keep` selects, ascending.
fn numbered(names: &[String], keep: impl Fn(NumberedFile) -> bool) -> Vec<u64> {
    let mut v: Vec<u64> = names
        .iter()
        .filter_map(|n| parse_numbered_file(n))
        .filter(|f| keep(*f))
        .map(NumberedFile::number)
        .collect();
    v.sort_unstable();
    v
}

/// Why redirect table `t` cannot be recorded (`None`: it can).
fn redirect_fate(
    t: &RedirectTable,
    vlogs: &BTreeMap<u64, VlogMeta>,
    kept: &BTreeMap<u64, RedirectMeta>,
) -> Option<String> {
    let (victim, target) = (t.victim(), t.target());
    if vlogs.contains_key(&victim) {
        return Some(format!(
            "not needed: its victim value log {victim} is present"
        ));
    }
    if !vlogs.contains_key(&target) {
        return Some(format!(
            "its target value log {target} is missing or unusable"
        ));
    }
    kept.contains_key(&victim)
        .then(|| format!("a newer redirect table of value log {victim} is kept"))
}

fn redirect_meta(t: &RedirectTable) -> RedirectMeta {
    RedirectMeta {
        victim: t.victim(),
        number: t.number(),
        file_size: t.file_size(),
        target: t.target(),
    }
}
