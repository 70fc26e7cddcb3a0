//! Is the old manifest [`super::repair`] found current, or stale (an older copy, or cut short
//! after records that had taken effect)? The same rules open's consistency check applies
//! (`recovery/consistency.rs`), read against the files present before repair moves anything:
//! - every SST, value log and redirect table it records must be present: files are deleted only
//!   after the record that stops naming them is durable, so a recorded file that is missing
//!   means a later record is lost (or the file was removed by hand);
//! - every write buffer it records as unflushed (PM Log, PM skiplist, write-ahead log, at or
//!   above `min_unflushed_pmlog`) must be present, a PM Log unless a complete PMTable-GC
//!   replacement took its place: a flush removes its buffer only after its record;
//! - a write buffer holding writes that it does not record, below the next file number it
//!   records, means it lost records (such a buffer's record comes first, `db/buffer_records.rs`;
//!   one at or above it was in flight at a crash: no sign);
//! - an SST it records that is present, verifies, but has another size is another file.
//!
//! SSTs it does not record are not a sign on their own: an interrupted job leaves its outputs,
//! numbered above the manifest's `next_file_number`, beside a current manifest. Whenever they
//! hold the only copy of some data, the job that wrote them had removed its inputs (recorded
//! files or buffers), which the rules above catch.

use super::scan::ScannedSst;
use crate::buffer::skiplist::SkiplistBuffer;
use crate::buffer::WriteBuffer;
use crate::error::{IoContext, Result};
use crate::file_names::{
    parse_pm_log_file_name, parse_skiplist_region_name, pm_log_file_name, skiplist_region_name,
};
use crate::file_names::{parse_wal_file_name, redirect_file_name, wal_file_name};
use crate::fs::FileSystem;
use crate::pm::PmDeviceRef;
use crate::pmtable::log::PmLog;
use crate::recovery::consistency::{plan_pm_logs, PmLogState, PmProblem};
use crate::sst::SstDirs;
use crate::version::{ManifestState, Version};
use crate::vlog::vlog_file_name;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What the files present say about the old manifest.
#[derive(Debug, Default)]
pub(super) struct Staleness {
    /// Recorded files that are missing, with what the manifest recorded each as.
    pub missing: Vec<(PathBuf, String)>,
    /// Other signs that the manifest lost records.
    pub signs: Vec<String>,
}

impl Staleness {
    pub fn is_stale(&self) -> bool {
        !self.missing.is_empty() || !self.signs.is_empty()
    }

    /// Every sign, one line each, for the report (`manifest`: the old manifest's name).
    pub fn describe(&self, manifest: &str) -> Vec<String> {
        let missing = self.missing.iter().map(|(path, what)| {
            let file = path.file_name().unwrap_or_default().to_string_lossy();
            format!("{manifest} records {file} ({what}), which is missing")
        });
        let others = self.signs.iter().map(|s| format!("{s} ({manifest})"));
        missing.chain(others).collect()
    }
}

/// A database's write buffers: their kind and where they live.
pub(super) enum Buffers<'a> {
    /// PM Logs (PMTables) on this device.
    PmLogs(&'a PmDeviceRef),
    /// PM skiplists on this device.
    Skiplists(&'a PmDeviceRef),
    /// Write-ahead logs in this directory.
    Wals(&'a Path),
}

/// Reads `state` against the tree files in `dirs` and the write buffers present (reads only).
pub(super) fn staleness(
    fs: &dyn FileSystem,
    dirs: &SstDirs,
    state: &ManifestState,
    buffers: &Buffers<'_>,
) -> Result<Staleness> {
    let mut found = Staleness {
        missing: missing_tree_files(fs, dirs, &state.version),
        signs: Vec::new(),
    };
    if state.pm_logs.is_some() {
        match *buffers {
            Buffers::PmLogs(pm) => pm_log_signs(pm, state, &mut found)?,
            Buffers::Skiplists(pm) => skiplist_signs(pm, state, &mut found)?,
            Buffers::Wals(dir) => wal_signs(fs, dir, state, &mut found)?,
        }
    }
    Ok(found)
}

/// The SSTs, value logs and redirect tables `version` records that are not present.
fn missing_tree_files(
    fs: &dyn FileSystem,
    dirs: &SstDirs,
    version: &Version,
) -> Vec<(PathBuf, String)> {
    let recorded = recorded_tree_files(dirs, version).into_iter();
    recorded.filter(|(path, _)| !fs.exists(path)).collect()
}

/// Every SST, value log and redirect table `version` records, with what it records it as.
fn recorded_tree_files(dirs: &SstDirs, version: &Version) -> Vec<(PathBuf, String)> {
    let levels = version.levels.iter().enumerate();
    let ssts = levels.flat_map(|(level, files)| {
        files
            .iter()
            .map(move |f| (dirs.path(f.number, f.dir), format!("a level-{level} SST")))
    });
    let vlogs = version
        .vlogs
        .keys()
        .map(|&n| (dirs.data.join(vlog_file_name(n)), "a value log".to_string()));
    let redirects = version.redirects.values().map(|r| {
        let what = format!("the redirect table of value log {}", r.victim);
        (dirs.data.join(redirect_file_name(r.number)), what)
    });
    ssts.chain(vlogs).chain(redirects).collect()
}

/// The SSTs `version` records that verified with another size than recorded.
pub(super) fn resized_ssts(version: &Version, ssts: &[ScannedSst]) -> Vec<String> {
    let recorded: BTreeMap<u64, u64> = version
        .levels
        .iter()
        .flatten()
        .map(|f| (f.number, f.file_size))
        .collect();
    let resized = ssts.iter().filter_map(|s| {
        let size = *recorded.get(&s.meta.number)?;
        (size != s.meta.file_size).then(|| {
            let (n, actual) = (s.meta.number, s.meta.file_size);
            format!("SST {n} has {actual} bytes, but the old manifest records {size}")
        })
    });
    resized.collect()
}

/// The PM Log rules open applies (`consistency::plan_pm_logs`).
fn pm_log_signs(pm: &PmDeviceRef, state: &ManifestState, found: &mut Staleness) -> Result<()> {
    let regions = pm.list_regions()?;
    let numbers: Vec<u64> = regions
        .iter()
        .filter_map(|n| parse_pm_log_file_name(n))
        .collect();
    let plan = plan_pm_logs(state, &numbers, |n| Ok(pm_log_state(pm, n)))?;
    for problem in plan.problems {
        match problem {
            PmProblem::Missing(n) => found.missing.push((
                pm.dir().join(pm_log_file_name(n)),
                "a PM Log holding writes not yet flushed".to_string(),
            )),
            PmProblem::Unrecorded { number, used_size } => found.signs.push(format!(
                "PM Log {number} holds writes (up to offset {used_size}) that it does not record"
            )),
        }
    }
    Ok(())
}

/// PM Log `n` as the consistency rules see it (an unreadable header stays undecided).
fn pm_log_state(pm: &PmDeviceRef, n: u64) -> PmLogState {
    match PmLog::open_if_initialized(&**pm, &pm_log_file_name(n)) {
        Ok(None) => PmLogState::Blank,
        Ok(Some(log)) => PmLogState::Header(log.header()),
        Err(_) => PmLogState::Unreadable,
    }
}

/// The buffers `state` records as unflushed.
fn unflushed(state: &ManifestState) -> BTreeSet<u64> {
    let named = state.pm_logs.iter().flatten().copied();
    named.filter(|&n| n >= state.min_unflushed_pmlog).collect()
}

/// Recorded skiplists missing; unrecorded ones (at or above the minimum, not in flight) holding
/// writes.
fn skiplist_signs(pm: &PmDeviceRef, state: &ManifestState, found: &mut Staleness) -> Result<()> {
    let regions = pm.list_regions()?;
    let present: BTreeSet<u64> = regions
        .iter()
        .filter_map(|n| parse_skiplist_region_name(n))
        .collect();
    let holds_writes = |n: u64| SkiplistBuffer::recover(&**pm, n).is_ok_and(|b| !b.is_empty());
    let what = "a PM skiplist holding writes not yet flushed";
    let path = |n: u64| pm.dir().join(skiplist_region_name(n));
    buffer_signs(state, &present, holds_writes, (what, path), found);
    Ok(())
}

/// Recorded write-ahead logs missing; unrecorded ones (at or above the minimum, not in flight)
/// holding writes.
fn wal_signs(
    fs: &dyn FileSystem,
    dir: &Path,
    state: &ManifestState,
    found: &mut Staleness,
) -> Result<()> {
    let names = fs
        .list_dir(dir)
        .context(|| format!("listing {}", dir.display()))?;
    let present: BTreeSet<u64> = names
        .iter()
        .filter_map(|n| parse_wal_file_name(n))
        .collect();
    let holds_writes = |n: u64| wal_holds_writes(fs, dir, n);
    let what = "a write-ahead log holding writes not yet flushed";
    let path = |n: u64| dir.join(wal_file_name(n));
    buffer_signs(state, &present, holds_writes, (what, path), found);
    Ok(())
}

/// True if write-ahead log `n` in `dir` replays at least one write.
fn wal_holds_writes(fs: &dyn FileSystem, dir: &Path, n: u64) -> bool {
    let mut entries = 0u64;
    let replay = crate::wal::replay(fs, dir, n, |_, _, _, _| {
        entries += 1;
        Ok(())
    });
    replay.is_ok() && entries > 0
}

/// The buffer rules for skiplists and write-ahead logs: `present` against what `state`
/// records; `(what, path)` names a missing one.
fn buffer_signs(
    state: &ManifestState,
    present: &BTreeSet<u64>,
    mut holds_writes: impl FnMut(u64) -> bool,
    (what, path): (&str, impl Fn(u64) -> PathBuf),
    found: &mut Staleness,
) {
    let recorded = unflushed(state);
    for &n in recorded.difference(present) {
        found.missing.push((path(n), what.to_string()));
    }
    // A buffer at or above the next file number had its record in flight (no sign).
    let unrecorded = present.iter().filter(|&&n| n >= state.min_unflushed_pmlog);
    let unrecorded = unrecorded.filter(|&&n| !crate::recovery::consistency::in_flight(state, n));
    for &n in unrecorded.filter(|n| !recorded.contains(n)) {
        if holds_writes(n) {
            found.signs.push(format!(
                "write buffer {n} holds writes that it does not record"
            ));
        }
    }
}
