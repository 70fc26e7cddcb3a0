//! `check`: verifies every checksum of every file of a database (manifest, SSTs, value logs,
//! PM Logs) and the references between them, and reports each problem with its file and offset.
//!
//! Unlike opening the database, a check does not stop at the first damage: every file is
//! checked on its own, and within a file the scan stops at the first record that cannot be
//! framed (later offsets could not be trusted).

use super::FileKind;
use crate::error::{Error, IoContext, Result};
use crate::fs::{FileSystem, OsFileSystem};
use crate::iter::InternalIterator;
use crate::pmtable::log::{decode_header, for_each_entry_in, PM_LOG_HEADER_LEN};
use crate::sst::Table;
use crate::types::{parse_internal_key, ValueKind, ValuePointer};
use crate::version::{
    apply_manifest_records, current_manifest_path, read_manifest_records, FileMeta, ManifestState,
    CURRENT_FILE_NAME,
};
use crate::vlog::VlogReader;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};

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
    let fs = OsFileSystem;
    let mut names = fs
        .list_dir(db_dir)
        .context(|| format!("listing {}", db_dir.display()))?;
    names.sort();
    let mut c = Checker {
        fs,
        dir: db_dir.to_path_buf(),
        report: CheckReport::default(),
        vlogs: HashMap::new(),
    };
    let state = c.check_manifest();
    for name in &names {
        let path = db_dir.join(name);
        match FileKind::of(&path) {
            Some(FileKind::Sst(n)) => c.check_sst(&path, n, state.as_ref()),
            Some(FileKind::Vlog(n)) => c.check_vlog(&path, n, state.as_ref()),
            _ => {}
        }
    }
    if let Some(state) = &state {
        c.check_references(state, &names);
    }
    c.check_pm_dir(pm_dir, state.as_ref())?;
    Ok(c.report)
}

struct Checker {
    fs: OsFileSystem,
    dir: PathBuf,
    report: CheckReport,
    /// Value-log readers opened to verify SST pointers (an error once per file).
    vlogs: HashMap<u64, std::result::Result<VlogReader, String>>,
}

impl Checker {
    fn problem(&mut self, err: Error, file: &Path) {
        self.report.problems.push(Problem::from_error(err, file));
    }

    /// Verifies `CURRENT` and every record of the manifest it names; the replayed state.
    fn check_manifest(&mut self) -> Option<ManifestState> {
        let current = self.dir.join(CURRENT_FILE_NAME);
        let path = match current_manifest_path(&self.fs, &self.dir) {
            Ok(p) => p,
            Err(e) => {
                self.problem(e, &current);
                return None;
            }
        };
        let data = match self.fs.read_all(&path) {
            Ok(d) => d,
            Err(e) => {
                let detail = format!("manifest named by CURRENT cannot be read: {e}");
                self.problem(Error::corruption(&path, 0, detail), &path);
                return None;
            }
        };
        self.report.files_checked += 1;
        let (records, torn) = match read_manifest_records(&data, &path) {
            Ok(r) => r,
            Err(e) => {
                self.problem(e, &path);
                return None;
            }
        };
        if let Some(note) = torn {
            self.report.notes.push(note);
        }
        self.report.records_checked += records.len() as u64;
        match apply_manifest_records(&records, &path) {
            Ok(state) => Some(state),
            Err(e) => {
                self.problem(e, &path);
                None
            }
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
        let key = super::escape_bytes(parsed.user_key);
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
        let dir = self.dir.clone();
        let fs = &self.fs;
        let reader = self.vlogs.entry(ptr.file_number).or_insert_with(|| {
            VlogReader::open(fs, &dir, ptr.file_number).map_err(|e| e.to_string())
        });
        let result = match reader {
            Ok(r) => r.read_value(&ptr).map(|_| ()).map_err(|e| e.to_string()),
            Err(e) => Err(e.clone()),
        };
        self.report.records_checked += 1;
        result.err().map(|e| Problem {
            file: sst.to_path_buf(),
            offset: None,
            detail: format!("key '{key}' points into value log {}: {e}", ptr.file_number),
        })
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

    /// Every SST and value log the manifest names must exist, SSTs with the recorded size.
    fn check_references(&mut self, state: &ManifestState, names: &[String]) {
        let present: HashSet<&str> = names.iter().map(String::as_str).collect();
        for (level, files) in state.version.levels.iter().enumerate() {
            for f in files {
                self.check_sst_reference(level, f, &present);
            }
        }
        for number in state.version.vlogs.keys() {
            let name = crate::vlog::vlog_file_name(*number);
            if !present.contains(name.as_str()) {
                self.report.problems.push(Problem {
                    file: self.dir.join(name),
                    offset: None,
                    detail: "value log named by the manifest is missing".into(),
                });
            }
        }
    }

    fn check_sst_reference(&mut self, level: usize, f: &FileMeta, names: &HashSet<&str>) {
        let name = crate::sst::sst_file_name(f.number);
        let path = self.dir.join(&name);
        if !names.contains(name.as_str()) {
            self.report.problems.push(Problem {
                file: path,
                offset: None,
                detail: format!("SST of level {level} named by the manifest is missing"),
            });
            return;
        }
        match std::fs::metadata(&path) {
            Ok(m) if m.len() != f.file_size => self.report.problems.push(Problem {
                file: path,
                offset: None,
                detail: format!(
                    "file has {} bytes, the manifest recorded {}",
                    m.len(),
                    f.file_size
                ),
            }),
            Ok(_) => {}
            Err(e) => self.problem(Error::io(format!("stat {}", path.display()), e), &path),
        }
    }

    /// Verifies the header and every entry of each PM Log.
    fn check_pm_dir(&mut self, pm_dir: &Path, state: Option<&ManifestState>) -> Result<()> {
        if !pm_dir.exists() {
            let note = format!("PM directory {} does not exist", pm_dir.display());
            self.report.notes.push(note);
            return Ok(());
        }
        let mut names = self
            .fs
            .list_dir(pm_dir)
            .context(|| format!("listing PM directory {}", pm_dir.display()))?;
        names.sort();
        self.check_identity(pm_dir);
        let min_unflushed = state.map_or(0, |s| s.min_unflushed_pmlog);
        for name in names {
            let path = pm_dir.join(&name);
            if let Some(FileKind::PmLog(n)) = FileKind::of(&path) {
                if n < min_unflushed {
                    let note =
                        format!("{}: already flushed (removed at next open)", path.display());
                    self.report.notes.push(note);
                    continue;
                }
                self.check_pm_log(&path);
            }
        }
        Ok(())
    }

    /// The PM directory must carry the data directory's identity (see `db/identity.rs`).
    fn check_identity(&mut self, pm_dir: &Path) {
        use crate::db::identity::{read_identity_id, IDENTITY_FILE};
        let pm_file = pm_dir.join(IDENTITY_FILE);
        let ids = read_identity_id(&self.fs, &self.dir).and_then(|ours| {
            let theirs = read_identity_id(&self.fs, pm_dir)?;
            Ok((ours, theirs))
        });
        let detail = match ids {
            Err(e) => return self.problem(e, &pm_file),
            Ok((None, _)) => return,
            Ok((Some(ours), Some(theirs))) if theirs == ours => return,
            Ok((Some(ours), Some(theirs))) => format!(
                "identity {theirs} differs from the database's {ours}: another database's PM directory"
            ),
            Ok((Some(_), None)) => {
                "no identity file: not this database's PM directory (or its contents were lost)"
                    .to_string()
            }
        };
        self.report.problems.push(Problem {
            file: pm_file,
            offset: None,
            detail,
        });
    }

    fn check_pm_log(&mut self, path: &Path) {
        let data = match self.fs.read_all(path) {
            Ok(d) => d,
            Err(e) => {
                return self.problem(Error::io(format!("reading {}", path.display()), e), path)
            }
        };
        self.report.files_checked += 1;
        if is_blank_log(&data) {
            let note = format!(
                "{}: blank log (creation interrupted), removed at next open",
                path.display()
            );
            self.report.notes.push(note);
            return;
        }
        let header = match decode_header(&data, path) {
            Ok(h) => h,
            Err(e) => return self.problem(e, path),
        };
        if header.file_size != data.len() as u64 {
            let detail = format!(
                "header says file_size {}, the file has {} bytes",
                header.file_size,
                data.len()
            );
            // Offset 8 is the header's file_size field (docs/pm-log-format.md).
            return self.problem(Error::corruption(path, 8, detail), path);
        }
        let mut entries = 0;
        let walk = for_each_entry_in(&data, &header, path, |_, _| {
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

/// A log whose creation a crash interrupted: magic still zero and nothing committed.
fn is_blank_log(data: &[u8]) -> bool {
    data.len() >= PM_LOG_HEADER_LEN && data[..8].iter().all(|&b| b == 0)
}
