//! Is a recovered manifest consistent with the files present? One place decides, for
//! `Db::open` (which refuses before it writes anything) and `inspect::check` (which reports
//! every violation); the rules are documented in docs/manifest-format.md ("Consistency").
//!
//! SSD files: every SST, value log and redirect table the recovered version names must exist
//! with its recorded size (an SST's `file_size`; a value log's header plus `total_bytes`; a
//! redirect table's `file_size`). Files are deleted only after the manifest record that stopped
//! naming them is durable, so a named file that is missing means the manifest describes a state
//! that was left behind: a record that had taken effect was lost (a manifest cut short, or an
//! older copy of it), or the file was removed. A redirect table must also be well-formed
//! (checksum, entry order) and redirect the logs the manifest records: reads depend on it.
//!
//! PM Logs (when the manifest tracks them, `ManifestState::pm_logs`): every log is recorded in
//! the manifest by the first edit that records a `next_file_number` above its number (a
//! switch queues the record, `db/buffer_records.rs`), and leaves the record only when a flush
//! advances `min_unflushed_pmlog` past it or a PMTable GC replaces it. A log numbered at or
//! above the manifest's `next_file_number` was created after its last durable record: its
//! record was in flight ([`in_flight`]), and it counts as recorded. Hence, for the logs at or
//! above `min_unflushed_pmlog` (those below are flushed and removed unread):
//! - a recorded log must be present, or be replaced by a present log whose GC completed (the
//!   crash window between GC_COMPLETE and the replacement's manifest record);
//! - an unrecorded log is removed when blank or empty (a creation interrupted before its
//!   record), or when it is an unfinished GC replacement (its source holds the data); it is kept
//!   when it is a complete GC replacement (it holds copies of its source's live entries); an
//!   unrecorded log *with entries* that no GC wrote means the manifest lost records: refused.
//!
//! Logs replaced by a complete GC replacement are removed (the existing rule of open).
//!
//! A design's own PM store (MatrixKV's container): when the version records rows in it, its
//! regions must be present (a flush's rows are persisted before its record, and the flushed
//! write-ahead logs are deleted after it, so the rows are the only copy of those writes).
//! Write-ahead logs follow the same rule book in `recovery/wal_rules.rs`.

use crate::error::{Error, Result};
use crate::file_names::pm_log_file_name;
use crate::file_names::redirect_file_name;
use crate::fs::FileSystem;
use crate::pm::PmDeviceRef;
use crate::pmtable::log::PmLogHeader;
use crate::sst::SstDirs;
use crate::version::{ManifestState, RecoveredManifest, Version};
use crate::vlog::{vlog_file_name, RedirectTable, VLOG_HEADER_LEN};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

/// Offset of `used_size` in a PM Log header (docs/pm-log-format.md).
const USED_SIZE_OFFSET: u64 = 16;

/// Every SST, value log and redirect table named by the recovered version that is missing or
/// has another size than recorded, as [`Error::Corruption`] naming the file. Reads only.
pub(crate) fn tree_file_problems(
    fs: &dyn FileSystem,
    dirs: &SstDirs,
    m: &RecoveredManifest,
) -> Vec<Error> {
    let version = &m.state.version;
    let ssts = version
        .levels
        .iter()
        .enumerate()
        .flat_map(|(level, files)| {
            files.iter().map(move |f| {
                let what = format!("level-{level} SST");
                (dirs.path(f.number, f.dir), what, f.file_size)
            })
        });
    let vlogs = version.vlogs.values().map(|v| {
        let size = VLOG_HEADER_LEN.saturating_add(v.total_bytes);
        let path = dirs.data.join(vlog_file_name(v.number));
        (path, "value log".to_string(), size)
    });
    let redirects = version.redirects.values().map(|r| {
        let what = format!("redirect table of value log {}", r.victim);
        (
            dirs.data.join(redirect_file_name(r.number)),
            what,
            r.file_size,
        )
    });
    ssts.chain(vlogs)
        .chain(redirects)
        .filter_map(|(path, what, size)| file_problem(fs, &path, &what, size, m))
        .collect()
}

/// Loads every redirect table `version` names, verifying that it decodes and redirects the
/// logs the version records; the first failure is an error naming the table. Reads only.
pub(crate) fn load_redirect_tables(
    fs: &dyn FileSystem,
    dir: &Path,
    version: &Version,
) -> Result<Vec<Arc<RedirectTable>>> {
    version
        .redirects
        .values()
        .map(|r| {
            let table = RedirectTable::load(fs, dir, r.number)?;
            table.expect(r.victim, r.target)?;
            Ok(table)
        })
        .collect()
}

/// `None` if `path` exists with `size` bytes; else what is wrong with it.
fn file_problem(
    fs: &dyn FileSystem,
    path: &Path,
    what: &str,
    size: u64,
    m: &RecoveredManifest,
) -> Option<Error> {
    let manifest = m.path.display();
    let actual = match fs.open(path).and_then(|f| f.size()) {
        Ok(actual) if actual == size => return None,
        Ok(actual) => actual,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let detail = format!("missing: a {what} named by {manifest}{}", cut_hint(m));
            return Some(Error::corruption(path, 0, detail));
        }
        Err(e) => {
            return Some(Error::io(
                format!("reading the size of {}", path.display()),
                e,
            ))
        }
    };
    let detail = format!(
        "{what} has {actual} bytes, but {manifest} records {size}{}",
        cut_hint(m)
    );
    Some(Error::corruption(path, actual.min(size), detail))
}

/// The design's store regions missing although `m`'s version records entries in them (its
/// extension is not empty: MatrixKV's rows), as
/// [`Error::Corruption`] naming the region (in the PM directory `pm_dir`, or on the injected
/// device `pm`). Reads only.
pub(crate) fn store_problems(
    fs: &dyn FileSystem,
    regions: &[&str],
    (pm, pm_dir): (Option<&PmDeviceRef>, &Path),
    m: &RecoveredManifest,
) -> Result<Vec<Error>> {
    let rows = m.state.version.extension.state().len();
    let mut problems = Vec::new();
    for &name in regions.iter().filter(|_| rows > 0) {
        let present = match pm {
            Some(device) => device.has_region(name)?,
            None => fs.exists(&pm_dir.join(name)),
        };
        if !present {
            let detail = format!(
                "missing: {} records {rows} rows in this store, flushed writes whose \
                 write-ahead logs are deleted{}",
                m.path.display(),
                cut_hint(m)
            );
            let dir = pm.map_or(pm_dir, |d| d.dir());
            problems.push(Error::corruption(dir.join(name), 0, detail));
        }
    }
    Ok(problems)
}

/// Why a manifest may name files that are gone.
fn cut_hint(m: &RecoveredManifest) -> String {
    match &m.torn_tail {
        Some(note) => format!(
            "; {note}, but the state before that record names this file: the record had taken \
             effect, so the manifest was cut short, not torn by a crash"
        ),
        None => " (removed or truncated since, or the manifest is an older copy)".to_string(),
    }
}

/// What to make of a missing PM Log. After a torn final record the log was most likely retired
/// by the flush that record described (its SSTs are still in the directory), so the manifest
/// was cut short: opening without the log would lose that flush.
fn missing_log_advice(m: &RecoveredManifest) -> String {
    match &m.torn_tail {
        Some(note) => format!(
            "; {note}: most likely the flush that retired this log, so the manifest was cut \
             short; restore the manifest rather than opening without the log"
        ),
        None => "; set allow_missing_pm (--allow-missing-pm) to open without them".to_string(),
    }
}

/// What open or check read of a PM Log at or above `min_unflushed_pmlog`.
#[derive(Clone, Debug)]
pub(crate) enum PmLogState {
    /// Creation was interrupted (see `is_blank_header`): never held data.
    Blank,
    /// A valid header.
    Header(PmLogHeader),
    /// Present, but its header is damaged (check reports that on its own; open fails instead).
    Unreadable,
}

/// A PM Log inconsistent with the manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PmProblem {
    /// The manifest records the log as holding unflushed writes, but it is missing or blank.
    Missing(u64),
    /// The log holds entries (up to `used_size`, the written end) but the manifest does not
    /// record it.
    Unrecorded { number: u64, used_size: u64 },
}

impl PmProblem {
    /// The problem as [`Error::Corruption`] naming the log file in `pm_dir`.
    pub(crate) fn to_error(self, pm_dir: &Path, m: &RecoveredManifest) -> Error {
        let manifest = m.path.display();
        match self {
            PmProblem::Missing(n) => Error::corruption(
                pm_dir.join(pm_log_file_name(n)),
                0,
                format!(
                    "missing: {manifest} records this PM Log as holding writes not yet flushed{}",
                    missing_log_advice(m)
                ),
            ),
            PmProblem::Unrecorded { number, used_size } => Error::corruption(
                pm_dir.join(pm_log_file_name(number)),
                USED_SIZE_OFFSET,
                format!(
                    "holds entries up to used_size {used_size}, but {manifest} does not record \
                     it though it is below the next file number the manifest records; such a \
                     log's record comes first, so the manifest lost records (cut short, or an \
                     older copy)"
                ),
            ),
        }
    }
}

/// Which PM Logs recovery keeps and removes, and what is inconsistent.
#[derive(Debug, Default)]
pub(crate) struct PmPlan {
    /// Logs recovered as PMTables, ascending.
    pub keep: Vec<u64>,
    /// Logs to remove (only after the new manifest no longer records them), with the reason.
    pub remove: Vec<(u64, String)>,
    /// Inconsistencies (only for a manifest that tracks PM Logs).
    pub problems: Vec<PmProblem>,
}

/// Applies the PM Log rules of the module documentation to the logs `numbers` present.
/// `read` is called only for logs at or above `min_unflushed_pmlog`; its errors are returned.
pub(crate) fn plan_pm_logs(
    state: &ManifestState,
    numbers: &[u64],
    mut read: impl FnMut(u64) -> Result<PmLogState>,
) -> Result<PmPlan> {
    let mut plan = PmPlan::default();
    let mut logs = BTreeMap::new();
    for &n in numbers {
        if n < state.min_unflushed_pmlog {
            plan.remove.push((n, "already flushed".to_string()));
        } else {
            logs.insert(n, read(n)?);
        }
    }
    let recorded = |n: u64| state.pm_logs.as_ref().is_some_and(|s| s.contains(&n));
    let replaced = replaced_logs(&logs);
    for (&n, log) in &logs {
        match fate(n, log, recorded(n), replaced.get(&n)) {
            Some(why) => plan.remove.push((n, why)),
            None => plan.keep.push(n),
        }
    }
    if let Some(expected) = &state.pm_logs {
        let unrecorded = |n: u64| !expected.contains(&n) && !in_flight(state, n);
        plan.problems = pm_problems(expected, unrecorded, &logs, &replaced);
    }
    Ok(plan)
}

/// Logs a present, complete GC replacement names as replaced: source → replacement.
fn replaced_logs(logs: &BTreeMap<u64, PmLogState>) -> BTreeMap<u64, u64> {
    logs.iter()
        .filter_map(|(&n, log)| match log {
            PmLogState::Header(h) if h.replaces != 0 && h.gc_complete => Some((h.replaces, n)),
            _ => None,
        })
        .collect()
}

/// Why recovery removes a log at or above `min_unflushed_pmlog`; `None` to keep it.
fn fate(n: u64, log: &PmLogState, recorded: bool, replaced_by: Option<&u64>) -> Option<String> {
    let h = match log {
        PmLogState::Blank => return Some("creation interrupted (blank header)".into()),
        PmLogState::Unreadable => return None,
        PmLogState::Header(h) => h,
    };
    if let Some(g) = replaced_by {
        return Some(format!("replaced by log {g}, whose PMTable GC completed"));
    }
    if h.replaces != 0 && !h.gc_complete && !recorded {
        let why = format!("unfinished PMTable GC (log {} holds the data)", h.replaces);
        return Some(why);
    }
    if !h.may_hold_entries() {
        return Some(format!("log {n} holds no entries"));
    }
    None
}

/// True for a write buffer `n` the manifest may not name yet: numbered at or above the next
/// file number its last durable record holds, it was created after that record, and its own
/// record was in flight (`db/buffer_records.rs`). Recovery keeps it as if named.
pub(crate) fn in_flight(state: &ManifestState, n: u64) -> bool {
    n >= state.next_file_number
}

/// Recorded logs missing (and not replaced), and logs with entries no GC wrote that are
/// `unrecorded` (not named, nor in flight).
fn pm_problems(
    expected: &BTreeSet<u64>,
    unrecorded: impl Fn(u64) -> bool,
    logs: &BTreeMap<u64, PmLogState>,
    replaced: &BTreeMap<u64, u64>,
) -> Vec<PmProblem> {
    let present = |n: &u64| {
        matches!(
            logs.get(n),
            Some(PmLogState::Header(_) | PmLogState::Unreadable)
        )
    };
    let missing = expected
        .iter()
        .filter(|n| !present(n) && !replaced.contains_key(n))
        .map(|&n| PmProblem::Missing(n));
    let unrecorded = logs.iter().filter_map(|(&number, log)| match log {
        PmLogState::Header(h)
            if unrecorded(number)
                && h.replaces == 0
                && !replaced.contains_key(&number)
                && h.may_hold_entries() =>
        {
            Some(PmProblem::Unrecorded {
                number,
                used_size: h.written_end(),
            })
        }
        _ => None,
    });
    missing.chain(unrecorded).collect()
}

/// `Err` with the first of `problems` (and how many more there are), `Ok` if there is none.
pub(crate) fn refuse_if_any(problems: Vec<Error>) -> Result<()> {
    let more = problems.len().saturating_sub(1);
    match problems.into_iter().next() {
        None => Ok(()),
        Some(Error::Corruption {
            file,
            offset,
            detail,
        }) if more > 0 => Err(Error::Corruption {
            file,
            offset,
            detail: format!("{detail} (and {more} more; `flatlsm check` lists all)"),
        }),
        Some(e) => Err(e),
    }
}

/// The recovered state of a design without PM Logs to plan (the prologue of WAL and skiplist
/// recovery): the manifest's state (a new database's of `opts.profile` if there is none) once
/// every tree file it names in the directories of the database at `path` checks, and its
/// redirect tables loaded. Reads only.
pub(crate) fn verified_tree(
    fs: &dyn FileSystem,
    path: &std::path::Path,
    manifest: Option<&RecoveredManifest>,
    opts: &crate::options::Options,
) -> Result<(ManifestState, Vec<Arc<RedirectTable>>)> {
    let Some(m) = manifest else {
        return Ok((super::open::new_state(opts.profile), Vec::new()));
    };
    let dirs = &crate::layout::sst_dirs(path, opts);
    if let Some(note) = &m.torn_tail {
        log::warn!("{note}");
    }
    refuse_if_any(tree_file_problems(fs, dirs, m))?;
    let redirects = load_redirect_tables(fs, &dirs.data, &m.state.version)?;
    Ok((m.state.clone(), redirects))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log with a valid header: `used` bytes used, the log it replaces, GC_COMPLETE.
    fn log(used: u64, replaces: u64, gc_complete: bool) -> PmLogState {
        PmLogState::Header(PmLogHeader {
            version: 2,
            number: 0,
            file_size: 1 << 16,
            used_size: used,
            written_size: used,
            replaces,
            gc_complete,
        })
    }

    const DATA: u64 = 200;
    /// The next file number the test manifests record (above every log of the tests but the
    /// in-flight ones).
    const NEXT_FILE: u64 = 50;
    const EMPTY: u64 = crate::pmtable::log::PM_LOG_HEADER_LEN as u64;

    fn plan(min: u64, recorded: Option<&[u64]>, logs: Vec<(u64, PmLogState)>) -> PmPlan {
        let state = ManifestState {
            min_unflushed_pmlog: min,
            pm_logs: recorded.map(|r| r.iter().copied().collect()),
            next_file_number: NEXT_FILE,
            ..ManifestState::default()
        };
        let numbers: Vec<u64> = logs.iter().map(|(n, _)| *n).collect();
        let mut logs: BTreeMap<u64, PmLogState> = logs.into_iter().collect();
        plan_pm_logs(&state, &numbers, |n| {
            Ok(logs.remove(&n).expect("read once"))
        })
        .unwrap()
    }

    fn removed(p: &PmPlan) -> Vec<u64> {
        p.remove.iter().map(|(n, _)| *n).collect()
    }

    #[test]
    fn flushed_blank_and_empty_logs_are_removed_and_logs_with_data_kept() {
        let logs = vec![
            (3, log(DATA, 0, false)),
            (5, log(DATA, 0, false)),
            (6, log(EMPTY, 0, false)),
            (7, PmLogState::Blank),
            (8, log(EMPTY, 0, false)),
        ];
        let p = plan(5, Some(&[5, 6]), logs);
        assert_eq!(p.keep, vec![5]);
        assert_eq!(removed(&p), vec![3, 6, 7, 8]);
        assert_eq!(p.problems, vec![]);
    }

    #[test]
    fn missing_recorded_log_is_a_problem_unless_a_complete_gc_replaced_it() {
        let p = plan(5, Some(&[5, 6]), vec![(6, log(DATA, 0, false))]);
        assert_eq!(p.problems, vec![PmProblem::Missing(5)]);
        let logs = vec![(6, log(DATA, 0, false)), (9, log(DATA, 5, true))];
        let p = plan(5, Some(&[5, 6]), logs);
        assert_eq!((p.keep, p.problems), (vec![6, 9], vec![]));
        let p = plan(5, Some(&[5]), vec![(5, PmLogState::Blank)]);
        assert_eq!(
            p.problems,
            vec![PmProblem::Missing(5)],
            "a recorded log is never blank"
        );
    }

    #[test]
    fn crash_between_gc_complete_and_its_record_keeps_the_replacement() {
        let logs = vec![(5, log(DATA, 0, false)), (8, log(DATA, 5, true))];
        let p = plan(5, Some(&[5]), logs);
        assert_eq!((p.keep.clone(), removed(&p)), (vec![8], vec![5]));
        assert_eq!(p.problems, vec![]);
    }

    #[test]
    fn unrecorded_log_with_entries_is_a_problem_but_an_unfinished_gc_is_not() {
        let logs = vec![
            (5, log(DATA, 0, false)),
            (7, log(DATA, 0, false)),
            (8, log(DATA, 5, false)),
        ];
        let p = plan(5, Some(&[5]), logs);
        assert_eq!(removed(&p), vec![8]);
        let unrecorded = PmProblem::Unrecorded {
            number: 7,
            used_size: DATA,
        };
        assert_eq!(p.problems, vec![unrecorded]);
    }

    /// A switch queues its log's record (`db/buffer_records.rs`): a crash before the manifest
    /// append leaves the newest logs unrecorded, at or above the manifest's next file number.
    /// They are kept and are no problem; an unfinished GC replacement among them still goes.
    #[test]
    fn unrecorded_logs_whose_record_was_in_flight_are_kept() {
        let logs = vec![
            (5, log(DATA, 0, false)),
            (NEXT_FILE, log(DATA, 0, false)),
            (NEXT_FILE + 1, log(DATA, 0, false)),
            (NEXT_FILE + 2, log(DATA, NEXT_FILE + 1, false)),
        ];
        let p = plan(5, Some(&[5]), logs);
        assert_eq!(p.keep, vec![5, NEXT_FILE, NEXT_FILE + 1]);
        assert_eq!(removed(&p), vec![NEXT_FILE + 2]);
        assert!(p.problems.is_empty(), "{:?}", p.problems);
    }

    #[test]
    fn manifest_without_the_pm_log_set_keeps_the_old_rules_and_reports_nothing() {
        let logs = vec![
            (5, log(DATA, 0, false)),
            (7, log(DATA, 0, false)),
            (8, log(DATA, 5, false)),
        ];
        let p = plan(0, None, logs);
        assert_eq!((p.keep.clone(), removed(&p)), (vec![5, 7], vec![8]));
        assert_eq!(p.problems, vec![]);
    }
}
