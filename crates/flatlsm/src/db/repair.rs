//! [`repair`]: rebuilds a database's manifest from the files present, as RocksDB's `RepairDB`
//! (`ldb repair`). The rules are in docs/design-decisions.md ("Repair"); in short:
//! - the database's exclusive lock is held throughout; nothing is ever deleted: a file repair
//!   cannot record is moved to `<db>/lost/` and reported (open would purge it as an orphan);
//! - every SST (database and PM directory) that opens and whose every block verifies is kept.
//!   With a readable old manifest, the files it records keep their levels and the others
//!   (left by interrupted jobs, or awaiting deletion: recorded files and write buffers hold
//!   their entries) are left out for open to remove. Without one, every file goes to level 0,
//!   ordered by its largest sequence number ascending (level 0's order:
//!   a later file never holds older versions of a key than an earlier one); files whose
//!   versions interleave with another's (user-key and sequence ranges both overlap) are first
//!   rewritten together into new files (`repair_merge.rs`), so that order holds;
//! - every value log with a valid header is kept, whole (`total_bytes` = size − header); a
//!   redirect table is kept when its victim log is absent and its target is kept; an SST
//!   pointing into a log neither kept nor redirected is moved to lost/ (a version never holds
//!   dangling pointers);
//! - write buffers present (PM Logs, PM skiplists, write-ahead logs, by the design's buffer
//!   kind) are recorded as the PM Log set, so the next open recovers them as unflushed buffers;
//! - what a readable old manifest knows and the files cannot tell is carried over: its
//!   `min_unflushed_pmlog` (older buffers were flushed), its range tombstones and its last
//!   sequence (as a lower bound). Its profile must be `opts.profile`. From a manifest that
//!   cannot be loaded, the range tombstones of its records up to the first damaged one;
//! - the new manifest (one snapshot, then CURRENT, `Manifest::create`) takes a number above
//!   every number present; old manifests are copied to lost/ first. That is the commit point: a
//!   crash before it leaves no CURRENT (or the old one), and repair can simply run again.
//!
//! - a design's own index over level 0 is rebuilt from the files, before the commit
//!   (`Design::rebuild_store`: SLM-DB's B+-tree, `designs/slmdb/rebuild.rs`).
//! - a design's own store is read out (`Design::salvage_store`: MatrixKV's rows, from their
//!   first live entries as the old manifest records them, else every row found) and written
//!   as level-0 SSTs; the new manifest records nothing in the store. If part of it cannot be
//!   read, the store's region is copied to lost/ and reported.

use super::dirs::{pm_sst_names, sst_dirs};
use super::lock::DirLock;
use super::repair_merge::{Run, RunWriter};
use super::repair_scan::{salvage_range_dels, scan_redirect, scan_sst, scan_vlog, ScannedSst};
use super::repair_store::copy_region_to_lost;
use crate::buffer::skiplist::{parse_skiplist_region_name, SkiplistBuffer};
use crate::designs::{check_profile, design_of, BufferKind, Salvage};
use crate::error::{Error, IoContext, Result};
use crate::file_names::{parse_numbered_file, parse_wal_file_name, wal_file_name, NumberedFile};
use crate::fs::{FsRef, OsFileSystem};
use crate::options::Options;
use crate::pm::PmDeviceRef;
use crate::pmtable::log::{parse_log_file_name, PmLog};
use crate::range_del::RangeTombstone;
use crate::sst::{SstDir, SstDirs, TableCache};
use crate::version::{
    FileMeta, Manifest, ManifestState, RecoveredManifest, RedirectMeta, Version, VersionEdit,
    VlogMeta,
};
use crate::vlog::RedirectTable;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The directory (inside the database) files repair could not use are moved to.
pub const LOST_DIR: &str = "lost";

/// What [`repair`] kept and what it could not recover.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RepairReport {
    /// The SSTs recorded (level 0 first, in its order).
    pub files_kept: Vec<PathBuf>,
    /// SSTs whose entries were rewritten into new files (in `files_kept`), because their
    /// versions interleave with another file's; the next open removes them.
    pub files_rewritten: Vec<PathBuf>,
    /// Files moved to `<db>/lost/`, each with why it could not be used (its old path).
    pub files_lost: Vec<(PathBuf, String)>,
    /// The value logs recorded.
    pub vlogs_kept: Vec<u64>,
    /// The redirect tables recorded (by file number).
    pub redirects_kept: Vec<u64>,
    /// The write buffers recorded as unflushed (PM Logs, skiplists or write-ahead logs).
    pub buffers_kept: Vec<u64>,
    /// The last sequence the new manifest records (open raises it past the buffers').
    pub last_sequence: u64,
    /// The new manifest.
    pub manifest: PathBuf,
    /// Other things worth knowing (old manifests moved aside, state that could not be rebuilt).
    pub notes: Vec<String>,
}

impl RepairReport {
    /// True if nothing was moved to lost/.
    pub fn is_complete(&self) -> bool {
        self.files_lost.is_empty()
    }
}

impl fmt::Display for RepairReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "new manifest: {}", self.manifest.display())?;
        writeln!(f, "SSTs kept: {}", self.files_kept.len())?;
        writeln!(f, "SSTs rewritten: {}", self.files_rewritten.len())?;
        writeln!(f, "value logs kept: {:?}", self.vlogs_kept)?;
        writeln!(f, "redirect tables kept: {:?}", self.redirects_kept)?;
        writeln!(f, "write buffers kept: {:?}", self.buffers_kept)?;
        writeln!(f, "last sequence: {}", self.last_sequence)?;
        writeln!(f, "files moved to {LOST_DIR}/: {}", self.files_lost.len())?;
        for (path, why) in &self.files_lost {
            writeln!(f, "  lost {}: {why}", path.display())?;
        }
        for note in &self.notes {
            writeln!(f, "note: {note}")?;
        }
        Ok(())
    }
}

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
    let old = Manifest::load(&*fs, path).ok();
    if let Some(m) = &old {
        check_profile(path, m.state.profile.as_deref(), opts.profile)?;
    }
    Repair::new(fs, path, &opts, old).run()
}

/// An SST the repaired manifest records, and its level.
type Placed = (usize, ScannedSst);

/// One repair run's inputs and findings.
struct Repair<'a> {
    fs: FsRef,
    path: &'a Path,
    opts: &'a Options,
    dirs: SstDirs,
    old: Option<RecoveredManifest>,
    report: RepairReport,
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
            report: RepairReport::default(),
            max_number: handed_out.saturating_sub(1),
        }
    }

    fn run(mut self) -> Result<RepairReport> {
        let names = self.list(self.path)?;
        let vlogs = self.vlogs(&names)?;
        let redirects = self.redirects(&names, &vlogs)?;
        let ssts = self.ssts(&names)?;
        let ssts = self.drop_dangling(ssts, &vlogs, &redirects)?;
        let buffers = self.buffers()?;
        let salvage = self.salvage_store()?;
        let ssts = self.order(ssts, salvage)?;
        self.rebuild_store(&ssts)?;
        let range_dels = self.old_range_dels(&names);
        let state = self.state(ssts, vlogs, redirects, buffers, range_dels)?;
        self.commit(&names, &state)?;
        Ok(self.report)
    }

    /// The names in `dir`, noting every numbered file's number.
    fn list(&mut self, dir: &Path) -> Result<Vec<String>> {
        let names = self
            .fs
            .list_dir(dir)
            .context(|| format!("listing {}", dir.display()))?;
        let numbers = names.iter().filter_map(|n| parse_numbered_file(n));
        self.see(numbers.map(NumberedFile::number).max().unwrap_or(0));
        Ok(names)
    }

    fn see(&mut self, number: u64) {
        self.max_number = self.max_number.max(number);
    }

    /// Moves `from` to `<db>/lost/` and reports it with `why`.
    fn lose(&mut self, from: &Path, why: String) -> Result<()> {
        self.move_to_lost(from)?;
        self.report.files_lost.push((from.to_path_buf(), why));
        Ok(())
    }

    /// Moves `from` to `<db>/lost/` (created if missing), keeping its name.
    fn move_to_lost(&self, from: &Path) -> Result<()> {
        let lost = self.path.join(LOST_DIR);
        self.fs
            .create_dir_all(&lost)
            .context(|| format!("creating {}", lost.display()))?;
        let to = lost.join(from.file_name().map(PathBuf::from).unwrap_or_default());
        if self.fs.rename(from, &to).is_ok() {
            return Ok(());
        }
        // Another file system (a PM or WAL directory elsewhere): copy, then remove.
        self.copy_to_lost(from)?;
        self.fs
            .remove_file(from)
            .context(|| format!("removing {}", from.display()))
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
        let recorded = self.old.as_ref().map(|m| &m.state.version);
        let salvage = design_of(self.opts).salvage_store(self.path, self.opts, recorded)?;
        self.see(salvage.max_number);
        self.report.notes.extend(salvage.notes.iter().cloned());
        if let Some(region) = &salvage.copy {
            let to = copy_region_to_lost(&*self.fs, &self.path.join(LOST_DIR), &**region)?;
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

    /// With a readable old manifest, the SSTs it records keep their levels (and metadata:
    /// what range tombstones they applied), those of level 0 go on to be ordered with the
    /// rest, and the SSTs it does not record are left out: files of interrupted jobs or
    /// awaiting deletion, whose entries recorded files or write buffers hold (the next open
    /// removes them, as it would have). Without one, every SST goes to level 0.
    fn place(&mut self, ssts: Vec<ScannedSst>) -> (Vec<Placed>, Vec<ScannedSst>) {
        let Some(old) = &self.old else {
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
        design_of(self.opts).rebuild_store(self.path, self.opts, &files, &tables)
    }

    /// The write buffers to record as unflushed, by the design's buffer kind.
    fn buffers(&mut self) -> Result<BTreeSet<u64>> {
        let min = self.min_unflushed();
        let design = design_of(self.opts);
        let found = match design.buffer_kind() {
            BufferKind::DramWithWal => self.wal_buffers()?,
            kind => {
                let pm = match &self.opts.pm_device {
                    Some(d) => d.clone(),
                    None => design.write_buffer_device(self.path, self.opts)?,
                };
                self.pm_buffers(&pm, kind)?
            }
        };
        let kept: BTreeSet<u64> = found.into_iter().filter(|&n| n >= min).collect();
        self.report.buffers_kept = kept.iter().copied().collect();
        Ok(kept)
    }

    /// Buffers below this were flushed (the old manifest says so); 0 without one.
    fn min_unflushed(&self) -> u64 {
        self.old.as_ref().map_or(0, |m| m.state.min_unflushed_pmlog)
    }

    /// The write-ahead logs present that replay as open would replay them (each holds one DRAM
    /// write buffer; a torn tail is allowed); a damaged one is lost.
    fn wal_buffers(&mut self) -> Result<Vec<u64>> {
        let dir = self.opts.wal_dir_for(self.path);
        let names = self.list(&dir)?;
        let mut kept = Vec::new();
        for n in names.iter().filter_map(|n| parse_wal_file_name(n)) {
            match crate::wal::replay(&*self.fs, &dir, n, |_, _, _, _| Ok(())) {
                Ok(_) => kept.push(n),
                Err(e) => self.lose(&dir.join(wal_file_name(n)), e.to_string())?,
            }
        }
        Ok(kept)
    }

    /// The PM Logs or skiplists present that recovery can read; an unreadable one is lost.
    fn pm_buffers(&mut self, pm: &PmDeviceRef, kind: BufferKind) -> Result<Vec<u64>> {
        let mut kept = Vec::new();
        for name in pm.list_regions()? {
            let number = match kind {
                BufferKind::PmSkiplist => parse_skiplist_region_name(&name),
                _ => parse_log_file_name(&name),
            };
            let Some(n) = number else { continue };
            self.see(n);
            match readable_buffer(pm, kind, &name, n) {
                Ok(true) => kept.push(n),
                Ok(false) => {}
                Err(e) => self.lose(&pm.dir().join(&name), e.to_string())?,
            }
        }
        Ok(kept)
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
        let mut state = ManifestState::default();
        state.apply(&version_edit(ssts, vlogs, redirects, range_dels))?;
        state.last_sequence = sst_seq.max(old_seq).max(tombstone_seq);
        state.min_unflushed_pmlog = self.min_unflushed();
        state.pm_logs = Some(buffers);
        state.identity = super::identity::read_db_identity(&*self.fs, self.path);
        state.profile = Some(self.opts.profile.name().to_string());
        self.report.last_sequence = state.last_sequence;
        Ok(state)
    }

    /// The old manifest's range tombstones: they live only there. A damaged one gives those
    /// its readable records record.
    fn old_range_dels(&mut self, names: &[String]) -> Vec<RangeTombstone> {
        if let Some(m) = &self.old {
            return m.state.version.range_dels.tombstones().to_vec();
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

    /// Copies `from` to `<db>/lost/` under its name (atomically: a crash leaves the whole copy
    /// or none).
    fn copy_to_lost(&self, from: &Path) -> Result<()> {
        let data = self
            .fs
            .read_all(from)
            .context(|| format!("reading {}", from.display()))?;
        let lost = self.path.join(LOST_DIR);
        self.fs
            .create_dir_all(&lost)
            .context(|| format!("creating {}", lost.display()))?;
        let to = lost.join(from.file_name().map(PathBuf::from).unwrap_or_default());
        crate::fs::write_file_atomic(&*self.fs, &to, &data)
            .context(|| format!("copying {} to {}", from.display(), lost.display()))
    }

    /// Copies the old manifests aside (`Manifest::create` removes them), then writes the new one and CURRENT (the commit point).
    fn commit(&mut self, names: &[String], state: &ManifestState) -> Result<()> {
        for name in names {
            if crate::version::parse_manifest_file_name(name).is_some() {
                self.copy_to_lost(&self.path.join(name))?;
                let note = format!("old manifest {name} copied to {LOST_DIR}/");
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

/// True if write buffer `name` can be recorded: a PM Log with a header that is not an
/// unfinished PMTable-GC replacement (its source holds the data; open removes it), or a
/// skiplist that recovers. A blank PM Log (creation interrupted) is not recorded.
fn readable_buffer(pm: &PmDeviceRef, kind: BufferKind, name: &str, n: u64) -> Result<bool> {
    if kind == BufferKind::PmSkiplist {
        return SkiplistBuffer::recover(&**pm, n).map(|_| true);
    }
    Ok(match PmLog::open_if_initialized(&**pm, name)? {
        None => false,
        Some(log) => {
            let h = log.header();
            h.replaces == 0 || h.gc_complete
        }
    })
}
