//! `check`: verifies every checksum of every file of a database (manifest, SSTs, value logs,
//! redirect tables, PM Logs, identities, OPTIONS files) and the references between them, and
//! reports each problem with its file and offset. The info logs (`LOG`, `LOG.old.*`) are
//! diagnostics without checksums: known, not checked. A value pointer into a log value-log GC redirected is
//! translated through the redirect table the manifest names before its record is read, as
//! reads do; a pointer the table lacks is a problem naming the log and offset.
//!
//! Unlike opening the database, a check does not stop at the first damage: every file is
//! checked on its own, and within a file the scan stops at the first record that cannot be
//! framed (later offsets could not be trusted). Whatever open refuses, check reports: both
//! replay the manifest with `Manifest::load`, judge identities with `db::identity::plan` and
//! judge the files present against the manifest with `db::consistency` (one rule book).

use super::FileKind;
use crate::error::{Error, IoContext, Result};
use crate::file_names::{parse_pm_log_file_name, pm_log_file_name};
use crate::fs::{FileSystem, OsFileSystem};
use crate::iter::InternalIterator;
use crate::layout::identity::{self, IDENTITY_FILE};
use crate::pmtable::log::{decode_header_checked, for_each_entry_in, is_blank_header, PmLogHeader};
use crate::recovery::consistency::{plan_pm_logs, tree_file_problems, PmLogState};
use crate::sst::{SstDirs, Table};
use crate::types::{parse_internal_key, ValueKind, ValuePointer};
use crate::version::{
    current_manifest_path, Manifest, ManifestState, RecoveredManifest, RedirectMeta,
    CURRENT_FILE_NAME,
};
use crate::vlog::{RedirectTable, VlogReader};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Most problems reported per file before the rest are summarised.
const MAX_PROBLEMS_PER_FILE: usize = 10;

/// One thing wrong with the database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The file with the problem.
    pub file: PathBuf,
    /// Byte offset of the damage, when it has one.
    pub offset: Option<u64>,
    /// What was expected and what was found.
    pub detail: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(o) => write!(f, "{}: offset {o}: {}", self.file.display(), self.detail),
            None => write!(f, "{}: {}", self.file.display(), self.detail),
        }
    }
}

impl Problem {
    fn from_error(err: Error, file: &Path) -> Problem {
        match err {
            Error::Corruption {
                file,
                offset,
                detail,
            } => Problem {
                file,
                offset: Some(offset),
                detail,
            },
            other => Problem {
                file: file.to_path_buf(),
                offset: None,
                detail: other.to_string(),
            },
        }
    }
}

/// What a check found.
#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    /// Files whose contents were verified.
    pub files_checked: usize,
    /// Records verified (SST entries, value-log records, PM Log entries, manifest records).
    pub records_checked: u64,
    /// Everything wrong, in the order found.
    pub problems: Vec<Problem>,
    /// Observations that are not damage (leftovers the next open removes, torn manifest tails).
    pub notes: Vec<String>,
}

impl CheckReport {
    /// True when no problem was found.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks the database in `db_dir` whose PM Logs are in `pm_dir`. Returns `Err` only when the
/// check itself cannot run (e.g. `db_dir` cannot be listed); damage is in the report.
pub fn check_database(db_dir: &Path, pm_dir: &Path) -> Result<CheckReport> {
    check_database_with_wal(db_dir, pm_dir, db_dir)
}

/// [`check_database`] for a database whose write-ahead logs live in `wal_dir`
/// (`Options::wal_dir`).
pub fn check_database_with_wal(
    db_dir: &Path,
    pm_dir: &Path,
    wal_dir: &Path,
) -> Result<CheckReport> {
    let fs = OsFileSystem;
    let mut paths = list_paths(&fs, db_dir)?;
    if fs.exists(pm_dir) {
        // Level-0 SSTs kept in the PM directory (`leveled` with `level0_in_pm`).
        let in_pm = list_paths(&fs, pm_dir)?.into_iter();
        paths.extend(in_pm.filter(|p| matches!(FileKind::of(p), Some(FileKind::Sst(_)))));
    }
    let mut c = Checker {
        fs,
        dir: db_dir.to_path_buf(),
        wal_dir: wal_dir.to_path_buf(),
        report: CheckReport::default(),
        vlogs: HashMap::new(),
        redirects: BTreeMap::new(),
        redirect_tables: HashMap::new(),
    };
    let manifest = c.check_manifest();
    if let Some(m) = &manifest {
        c.redirects = m.state.version.redirects.clone();
    }
    c.check_files(&paths, pm_dir, manifest.as_ref());
    c.check_write_buffers(pm_dir, manifest.as_ref())?;
    Ok(c.report)
}

/// True if the manifest records a design whose write buffers have write-ahead logs.
fn uses_wals(m: Option<&RecoveredManifest>) -> bool {
    let recorded = m.and_then(|m| m.state.profile.as_deref());
    let profile = crate::designs::recorded_profile(recorded).parse();
    profile.is_ok_and(|p| crate::designs::durable_parts(p).wals)
}

/// The files of `dir`, sorted by name.
fn list_paths(fs: &OsFileSystem, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut names = fs
        .list_dir(dir)
        .context(|| format!("listing {}", dir.display()))?;
    names.sort();
    Ok(names.into_iter().map(|n| dir.join(n)).collect())
}

pub(super) struct Checker {
    pub(super) fs: OsFileSystem,
    pub(super) dir: PathBuf,
    /// Where the write-ahead logs live (the database directory unless `wal_dir` moved them).
    pub(super) wal_dir: PathBuf,
    pub(super) report: CheckReport,
    /// Value-log readers opened to verify SST pointers (an error once per file).
    vlogs: HashMap<u64, std::result::Result<VlogReader, String>>,
    /// The redirected value logs the manifest records, by victim.
    redirects: BTreeMap<u64, RedirectMeta>,
    /// Redirect tables loaded to translate SST pointers, by victim (an error once per table).
    redirect_tables: HashMap<u64, std::result::Result<Arc<RedirectTable>, String>>,
}

impl Checker {
    pub(super) fn problem(&mut self, err: Error, file: &Path) {
        self.report.problems.push(Problem::from_error(err, file));
    }

    /// Verifies `CURRENT` and every record of the manifest it names, as open replays it.
    fn check_manifest(&mut self) -> Option<RecoveredManifest> {
        match Manifest::load(&self.fs, &self.dir, &crate::designs::version_extension) {
            Ok(m) => {
                self.report.files_checked += 1;
                self.report.records_checked += m.records as u64;
                self.report.notes.extend(m.torn_tail.clone());
                Some(m)
            }
            Err(e) => {
                let current = self.dir.join(CURRENT_FILE_NAME);
                let file = current_manifest_path(&self.fs, &self.dir).unwrap_or(current);
                self.problem(e, &file);
                None
            }
        }
    }

    /// Verifies every SST and value log present, then that every one the manifest names is
    /// present with its recorded size (`db::consistency`, as open does).
    fn check_files(&mut self, paths: &[PathBuf], pm_dir: &Path, m: Option<&RecoveredManifest>) {
        let state = m.map(|m| &m.state);
        for path in paths {
            match FileKind::of(path) {
                Some(FileKind::Sst(n)) => self.check_sst(path, n, state),
                Some(FileKind::Vlog(n)) => self.check_vlog(path, n, state),
                Some(FileKind::Redirect(n)) => self.check_redirect(path, n, state),
                // The designs with write-ahead logs judge them all at once (`check_wals`).
                Some(FileKind::Wal(n)) if !uses_wals(m) => self.check_wal(n),
                Some(FileKind::Options(_)) => self.check_options(path),
                _ => {}
            }
        }
        let dirs = SstDirs {
            data: self.dir.clone(),
            pm: pm_dir.to_path_buf(),
        };
        for e in m.map_or_else(Vec::new, |m| tree_file_problems(&self.fs, &dirs, m)) {
            self.problem(e, &dirs.data);
        }
    }

    /// True (with a note) if the manifest was read and does not list the file: a leftover of
    /// an interrupted job, removed at the next open, so not checked.
    fn unlisted(
        &mut self,
        path: &Path,
        state: Option<&ManifestState>,
        listed: impl Fn(&ManifestState) -> bool,
    ) -> bool {
        if state.is_none_or(listed) {
            return false;
        }
        let note = format!(
            "{}: not in the manifest (removed at next open)",
            path.display()
        );
        self.report.notes.push(note);
        true
    }

    /// Verifies an OPTIONS file: its checksum, and that every option it names decodes.
    fn check_options(&mut self, path: &Path) {
        match crate::options::read_options_file(&self.fs, path) {
            Ok(_) => self.report.files_checked += 1,
            Err(e) => self.problem(e, path),
        }
    }

    /// Replays a write-ahead log (every record's checksums and encoding); a torn tail is a note.
    pub(super) fn check_wal(&mut self, number: u64) {
        let dir = self.wal_dir.clone();
        match crate::wal::replay(&OsFileSystem, &dir, number, |_, _, _, _| Ok(())) {
            Ok(r) => {
                self.report.files_checked += 1;
                self.report.records_checked += r.entries;
                if let Some(note) = r.torn_tail {
                    self.report
                        .notes
                        .push(format!("torn tail: {note} (dropped at next open)"));
                }
            }
            Err(e) => self.problem(e, &dir),
        }
    }

    /// Verifies an SST's footer, index, filter and blocks, and that every value pointer it
    /// holds reads back a record with a valid checksum.
    fn check_sst(&mut self, path: &Path, number: u64, state: Option<&ManifestState>) {
        if self.unlisted(path, state, |s| {
            s.version
                .levels
                .iter()
                .flatten()
                .any(|f| f.number == number)
        }) {
            return;
        }
        self.report.files_checked += 1;
        let table = match super::open_sst(path, number) {
            Ok((t, _)) => t,
            Err(e) => return self.problem(e, path),
        };
        match table.verify() {
            Ok(n) => self.report.records_checked += n,
            Err(e) => return self.problem(e, path),
        }
        self.check_value_pointers(&table, path);
    }

    fn check_value_pointers(&mut self, table: &std::sync::Arc<Table>, path: &Path) {
        let mut found = 0usize;
        let mut it = table.iter();
        it.seek_to_first();
        while it.valid() {
            let pointer_problem = self.check_entry_pointer(it.key(), it.value(), path);
            if let Some(p) = pointer_problem {
                found += 1;
                if found <= MAX_PROBLEMS_PER_FILE {
                    self.report.problems.push(p);
                }
            }
            it.next();
        }
        if let Err(e) = it.status() {
            self.problem(e, path);
        }
        if found > MAX_PROBLEMS_PER_FILE {
            let detail = format!(
                "{} more bad value pointers not listed",
                found - MAX_PROBLEMS_PER_FILE
            );
            self.report.problems.push(Problem {
                file: path.to_path_buf(),
                offset: None,
                detail,
            });
        }
    }

    /// `None` unless the entry is a value pointer that does not resolve to a valid record.
    fn check_entry_pointer(&mut self, ikey: &[u8], value: &[u8], sst: &Path) -> Option<Problem> {
        let parsed = parse_internal_key(ikey)?;
        if parsed.kind != ValueKind::ValuePointer {
            return None;
        }
        let key = super::render::escape_bytes(parsed.user_key);
        let Some(ptr) = ValuePointer::decode(value) else {
            return Some(Problem {
                file: sst.to_path_buf(),
                offset: None,
                detail: format!(
                    "key '{key}': value pointer of {} bytes, expected 24",
                    value.len()
                ),
            });
        };
        let result = self
            .translate(&ptr)
            .and_then(|moved| self.read_pointer(&moved));
        self.report.records_checked += 1;
        result.err().map(|e| Problem {
            file: sst.to_path_buf(),
            offset: None,
            detail: format!("key '{key}' points into value log {}: {e}", ptr.file_number),
        })
    }

    /// Where the record `ptr` lives as the manifest's version sees it (through the redirect
    /// table when its log is redirected).
    fn translate(&mut self, ptr: &ValuePointer) -> std::result::Result<ValuePointer, String> {
        let Some(r) = self.redirects.get(&ptr.file_number).copied() else {
            return Ok(*ptr);
        };
        let (fs, dir) = (&self.fs, &self.dir);
        let table = self
            .redirect_tables
            .entry(r.victim)
            .or_insert_with(|| RedirectTable::load(fs, dir, r.number).map_err(|e| e.to_string()));
        let table = table.as_ref().map_err(Clone::clone)?;
        table.translate(ptr).map_err(|e| e.to_string())
    }

    /// Reads the record `ptr` addresses, verifying its checksum.
    fn read_pointer(&mut self, ptr: &ValuePointer) -> std::result::Result<(), String> {
        let (fs, dir) = (&self.fs, &self.dir);
        let reader = self.vlogs.entry(ptr.file_number).or_insert_with(|| {
            VlogReader::open(fs, dir, ptr.file_number).map_err(|e| e.to_string())
        });
        match reader {
            Ok(r) => r.read_value(ptr).map(|_| ()).map_err(|e| e.to_string()),
            Err(e) => Err(e.clone()),
        }
    }

    /// Verifies a redirect table: its checksum and entry order, and that it redirects the logs
    /// the manifest records for it.
    fn check_redirect(&mut self, path: &Path, number: u64, state: Option<&ManifestState>) {
        let recorded = |s: &ManifestState| {
            let mut all = s.version.redirects.values();
            all.find(|r| r.number == number).copied()
        };
        if self.unlisted(path, state, |s| recorded(s).is_some()) {
            return;
        }
        self.report.files_checked += 1;
        let expected = state.and_then(recorded);
        let result = RedirectTable::load(&self.fs, &self.dir, number).and_then(|t| {
            expected.map_or(Ok(()), |r| t.expect(r.victim, r.target))?;
            Ok(t.entries().len() as u64)
        });
        match result {
            Ok(n) => self.report.records_checked += n,
            Err(e) => self.problem(e, path),
        }
    }

    fn check_vlog(&mut self, path: &Path, number: u64, state: Option<&ManifestState>) {
        if self.unlisted(path, state, |s| s.version.vlogs.contains_key(&number)) {
            return;
        }
        self.report.files_checked += 1;
        let result = VlogReader::open(&self.fs, &self.dir, number).and_then(|r| {
            let mut n = 0u64;
            r.for_each_record(|_, _, _| {
                n += 1;
                Ok(())
            })
            .map(|()| n)
        });
        match result {
            Ok(n) => self.report.records_checked += n,
            Err(e) => self.problem(e, path),
        }
    }

    /// The PM directory must be the database's, as open decides (`layout/identity.rs`).
    pub(super) fn check_identity(&mut self, pm_dir: &Path, m: Option<&RecoveredManifest>) {
        let recorded = m.and_then(|m| m.state.identity.as_deref());
        match identity::plan(&self.fs, &self.dir, pm_dir, true, false, recorded) {
            Ok(plan) if plan.writes() => self.report.notes.push(format!(
                "{}: open writes identity files (none yet, or in the format without checksum)",
                self.dir.join(IDENTITY_FILE).display()
            )),
            Ok(_) => {}
            Err(e) => self.problem(e, &pm_dir.join(IDENTITY_FILE)),
        }
    }

    /// Plans the PM Logs as open does (which it keeps, which it removes, which are missing or
    /// unrecorded), then verifies every entry of the logs it keeps.
    pub(super) fn check_pm_dir(
        &mut self,
        pm_dir: &Path,
        m: Option<&RecoveredManifest>,
    ) -> Result<()> {
        let numbers = self.pm_log_numbers(pm_dir)?;
        let unknown = ManifestState::default();
        let state = m.map_or(&unknown, |m| &m.state);
        let mut read = BTreeMap::new();
        let plan = plan_pm_logs(state, &numbers, |n| {
            Ok(self.read_pm_log(&pm_dir.join(pm_log_file_name(n)), n, &mut read))
        })?;
        for (n, why) in &plan.remove {
            let path = pm_dir.join(pm_log_file_name(*n));
            let note = format!("{}: {why}; removed at next open", path.display());
            self.report.notes.push(note);
        }
        if let Some(m) = m {
            for p in &plan.problems {
                self.problem(p.to_error(pm_dir, m), pm_dir);
            }
        }
        for n in &plan.keep {
            if let Some((data, header)) = read.get(n) {
                self.check_pm_entries(&pm_dir.join(pm_log_file_name(*n)), data, header);
            }
        }
        Ok(())
    }

    /// The numbers of the PM Logs in `pm_dir`, sorted (none if it does not exist).
    fn pm_log_numbers(&mut self, pm_dir: &Path) -> Result<Vec<u64>> {
        if !pm_dir.exists() {
            let note = format!("PM directory {} does not exist", pm_dir.display());
            self.report.notes.push(note);
            return Ok(Vec::new());
        }
        let names = self
            .fs
            .list_dir(pm_dir)
            .context(|| format!("listing PM directory {}", pm_dir.display()))?;
        let mut numbers: Vec<u64> = names
            .iter()
            .filter_map(|n| parse_pm_log_file_name(n))
            .collect();
        numbers.sort_unstable();
        Ok(numbers)
    }

    /// Reads a PM Log's file and validates its header as recovery does; a damaged one is a
    /// problem and `Unreadable`. Keeps the bytes of valid logs in `read` for the entry check.
    fn read_pm_log(
        &mut self,
        path: &Path,
        n: u64,
        read: &mut BTreeMap<u64, (Vec<u8>, PmLogHeader)>,
    ) -> PmLogState {
        let data = match self.fs.read_all(path) {
            Ok(d) => d,
            Err(e) => {
                self.problem(Error::io(format!("reading {}", path.display()), e), path);
                return PmLogState::Unreadable;
            }
        };
        self.report.files_checked += 1;
        if is_blank_header(&data) {
            return PmLogState::Blank;
        }
        match decode_header_checked(&data, data.len() as u64, Some(n), path) {
            Ok(h) => {
                read.insert(n, (data, h.clone()));
                PmLogState::Header(h)
            }
            Err(e) => {
                self.problem(e, path);
                PmLogState::Unreadable
            }
        }
    }

    fn check_pm_entries(&mut self, path: &Path, data: &[u8], header: &PmLogHeader) {
        let mut entries = 0;
        let walk = for_each_entry_in(data, header, path, |_, _| {
            entries += 1;
            Ok(())
        });
        self.report.records_checked += entries;
        match walk {
            Err(e) => self.problem(e, path),
            Ok(extent) if extent.discarded > 0 => self.report.notes.push(format!(
                "{}: {} bytes after offset {} are a tail torn by a crash (non-sync writes), \
                 discarded at next open",
                path.display(),
                extent.discarded,
                extent.end
            )),
            Ok(_) => {}
        }
    }
}
