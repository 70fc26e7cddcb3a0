//! Recovery of a design whose write buffers are PMTables on PM (`flatlsm`): the decisions. The
//! PM Logs present are planned against the manifest (`consistency::plan_pm_logs`, the rule book
//! `check` and repair share), the recovered state is verified against the files present, and
//! the logs kept are mapped in place as PMTables by `buffer/recover/pm_log.rs` (copy-free).
//! Reads only: every refusal of open on damaged or missing files is here, before open writes.
//!
//! Rules (the persist order they rely on is in `pmtable/log.rs` and docs/pm-log-format.md):
//! - PM Logs numbered below `min_unflushed_pmlog` were flushed before the crash: removed.
//! - A PMTable-GC replacement log without GC_COMPLETE (never recorded) is removed (its source is
//!   intact); with GC_COMPLETE, its source is removed.
//! - A manifest that tracks PM Logs (every snapshot since they are recorded) names each log that
//!   may hold unflushed data: a named log must be present (or replaced by a complete GC log),
//!   else `Corruption` unless `allow_missing_pm`; a log holding entries that the manifest does
//!   not name is `Corruption` (the manifest lost records); an unnamed empty log is removed.
//! - Every other PM Log is mapped and indexed in place (copy-free) as an immutable PMTable; one
//!   a power failure tore to nothing is removed too, its header reset first.
//! - Removals happen in the writing phase of open (`open.rs`), only once the new manifest no
//!   longer records the logs.

use super::consistency::{self, plan_pm_logs, PmLogState, PmPlan, PmProblem};
use super::open::{new_state, pm_numbers, KindInput, Recovered};
use super::wal_recovery::RecoveredWals;
use crate::buffer::recover::{rebuild, Rebuilt, Sources};
use crate::error::{Error, Result};
use crate::file_names::pm_log_file_name;
use crate::fs::FileSystem;
use crate::layout::sst_dirs;
use crate::options::Options;
use crate::pm::PmDeviceRef;
use crate::pmtable::log::PmLog;
use crate::pmtable::PmTable;
use crate::sst::SstDirs;
use crate::version::RecoveredManifest;
use crate::vlog::RedirectTable;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Plans the PM Logs, verifies the recovered state against the files present and has the kept
/// logs mapped as PMTables. Reads only: every refusal of open on damaged or missing files is here.
pub(super) fn recover_pm_logs(input: KindInput<'_>) -> Result<Recovered> {
    let (fs, path, pm, manifest, opts) = input.parts();
    let state = manifest
        .as_ref()
        .map_or_else(|| new_state(opts.profile), |m| m.state.clone());
    let mut logs = BTreeMap::new();
    let plan = plan_pm_logs(&state, &pm_numbers(pm)?, |n| read_pm_log(pm, n, &mut logs))?;
    let redirects = match &manifest {
        Some(m) => verified(fs, (path, pm), m, &plan, opts)?,
        None => Vec::new(),
    };
    let kept = plan
        .keep
        .iter()
        .map(|n| logs.remove(n).ok_or_else(|| unreadable_log(pm, *n)));
    let kept = kept.collect::<Result<_>>()?;
    let Rebuilt { tables, emptied } = rebuild(Sources::PmLogs(kept), opts.bloom_bits_per_key)?;
    Ok(Recovered {
        state,
        tables,
        remove: removals(plan.remove, &emptied),
        emptied,
        redirects,
        wals: RecoveredWals::default(),
    })
}

/// The logs the plan removes and those a torn tail emptied, as (region name, why).
fn removals(planned: Vec<(u64, String)>, emptied: &[Arc<PmTable>]) -> Vec<(String, String)> {
    // A log a power failure tore to nothing: its header is reset before the new manifest drops
    // it (commit_open), so a crash in between leaves an empty log, not an unrecorded one with
    // a tail.
    let why = |n: u64| format!("log {n} holds no entries after its torn tail");
    let torn = emptied.iter().map(|t| (t.number(), why(t.number())));
    let all = planned.into_iter().chain(torn);
    all.map(|(n, why)| (pm_log_file_name(n), why)).collect()
}

/// The redirect tables of `m`, once the recovered state and the PM Log plan check (`verify`).
fn verified(
    fs: &dyn FileSystem,
    (path, pm): (&Path, &PmDeviceRef),
    m: &RecoveredManifest,
    plan: &PmPlan,
    opts: &Options,
) -> Result<Vec<Arc<RedirectTable>>> {
    let dirs = sst_dirs(path, opts);
    verify(fs, &dirs, pm, m, plan, opts.allow_missing_pm)?;
    consistency::load_redirect_tables(fs, path, &m.state.version)
}

/// Refuses a recovered state that does not match the files present (`recovery/consistency.rs`);
/// with `allow_missing_pm`, missing PM Logs are accepted with a warning.
fn verify(
    fs: &dyn FileSystem,
    dirs: &SstDirs,
    pm: &PmDeviceRef,
    m: &RecoveredManifest,
    plan: &PmPlan,
    allow_missing_pm: bool,
) -> Result<()> {
    if let Some(note) = &m.torn_tail {
        log::warn!("{note}");
    }
    let mut problems = consistency::tree_file_problems(fs, dirs, m);
    for p in &plan.problems {
        let e = p.to_error(pm.dir(), m);
        if allow_missing_pm && matches!(p, PmProblem::Missing(_)) {
            log::warn!("{e}: accepted (allow_missing_pm), its writes are lost");
        } else {
            problems.push(e);
        }
    }
    consistency::refuse_if_any(problems)
}

/// The header of PM Log `n`, keeping the opened log for recovery.
fn read_pm_log(
    pm: &PmDeviceRef,
    n: u64,
    logs: &mut BTreeMap<u64, Arc<PmLog>>,
) -> Result<PmLogState> {
    Ok(
        match PmLog::open_if_initialized(&**pm, &pm_log_file_name(n))? {
            None => PmLogState::Blank,
            Some(log) => {
                let header = log.header();
                logs.insert(n, log);
                PmLogState::Header(header)
            }
        },
    )
}

/// Open never plans to keep a log it could not read (it fails instead): a bug if reached.
fn unreadable_log(pm: &PmDeviceRef, n: u64) -> Error {
    Error::InvalidState(format!(
        "PM log {} was planned for recovery but not read",
        pm.dir().join(pm_log_file_name(n)).display()
    ))
}
