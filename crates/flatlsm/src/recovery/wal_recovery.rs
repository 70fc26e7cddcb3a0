//! Recovery of a design whose write buffers live in DRAM behind write-ahead logs (`leveled`,
//! `matrixkv`): the manifest names the logs of unflushed buffers exactly as it names PM Logs
//! (tag 9, below `min_unflushed_pmlog` retired), and each is replayed into a fresh DRAM table of
//! its number, which joins the immutables and is flushed by the background as any other.
//!
//! Rules (`recovery/wal_rules.rs`; the persist order is in `wal/mod.rs` and docs/wal-format.md):
//! - a log the manifest names must exist and replay without damage; only the newest may end in
//!   a torn tail (its unsynced tail a power cut left, pages written back out of order
//!   included: dropped with a warning in the info log naming the file, the offset and the
//!   bytes dropped); each must start where the older ones end. A hole is
//!   `Corruption` (the open is refused) unless `wal_point_in_time_recovery`, which stops at the
//!   first hole and drops every later write;
//! - a log the manifest does not name that holds writes is `Corruption` (the manifest lost the
//!   record naming it); one without writes is an interrupted creation, removed;
//! - a log that replays to nothing is not kept (the new manifest no longer names it and the
//!   orphan purge deletes it with every log the manifest does not name).
//!
//! Reads only, apart from clearing the write-buffer device of stale buffers (never data: the
//! logs are): like the PM recovery, every refusal happens before open writes anything. The
//! writing phase of open then seals the logs it kept (`seal_recovered_wals`) before its new
//! manifest names a newer log, so that a log is never older than another with an unsynced or
//! torn tail.

use super::consistency;
use super::open::Recovered;
use super::wal_rules::{plan_wals, KeptWal, WalDir, WalPlan};
use crate::error::{Error, IoContext, Result};
use crate::file_names::{parse_wal_file_name, wal_file_name};
use crate::fs::{write_file_atomic, FileSystem};
use crate::observe::info_log::{event, InfoLog};
use crate::options::Options;
use crate::pm::PmDeviceRef;
use crate::pmtable::log::{encoded_entry_len, LogEntry, PM_LOG_HEADER_LEN};
use crate::pmtable::PmTable;
use crate::types::ValueKind;
use crate::version::RecoveredManifest;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// The logs recovery kept, and the warnings on what it dropped.
#[derive(Debug, Default)]
pub(super) struct RecoveredWals {
    /// The logs of the recovered tables, oldest first: sealed before the new manifest.
    pub keep: Vec<KeptWal>,
    /// What recovery dropped (a torn tail: file, offset, bytes; the hole recovery to a point in
    /// time stopped at): written to the info log by [`start_wals`], once it is open.
    pub notes: Vec<String>,
}

/// Verifies the tree files the manifest names, judges the logs and replays those kept.
pub(super) fn recover_from_wal(
    fs: &dyn FileSystem,
    path: &Path,
    pm: &PmDeviceRef,
    manifest: Option<RecoveredManifest>,
    opts: &Options,
) -> Result<Recovered> {
    let (state, redirects) = consistency::verified_tree(fs, path, manifest.as_ref(), opts)?;
    if let Some(m) = &manifest {
        verify_store(fs, path, opts, m)?;
    }
    let dir = opts.wal_dir_for(path);
    let mut needs = BTreeMap::new();
    let plan = match &manifest {
        Some(m) => judge_wals(fs, &dir, m, opts, &mut needs)?,
        None => WalPlan::default(),
    };
    consistency::refuse_if_any(plan.problems)?;
    discard_stale_buffers(pm)?;
    let (mut tables, mut wals) = (Vec::new(), RecoveredWals::default());
    wals.notes = plan.notes;
    for k in plan.keep {
        let need = needs.get(&k.number).copied().unwrap_or(0);
        if let Some(t) = replay_log(fs, &dir, pm, (k.number, need), opts)? {
            tables.push(t as crate::buffer::BufferRef);
            wals.keep.push(k);
        }
    }
    tables.reverse(); // newest first
    Ok(Recovered {
        state,
        tables,
        remove: Vec::new(),
        emptied: Vec::new(),
        redirects,
        wals,
    })
}

/// Refuses a version that records rows of a design's store (MatrixKV's container) when the
/// store is missing (`recovery/consistency.rs`).
fn verify_store(
    fs: &dyn FileSystem,
    path: &Path,
    opts: &Options,
    m: &RecoveredManifest,
) -> Result<()> {
    let design = crate::designs::design_of(opts);
    let pm = (
        opts.pm_device.as_ref(),
        crate::layout::pm_dir_of(path, opts),
    );
    let regions = design.store().store_regions();
    consistency::refuse_if_any(consistency::store_problems(fs, regions, (pm.0, &pm.1), m)?)
}

/// Applies the rules of `recovery/wal_rules.rs` to the logs in `dir`, noting in `needs` the table
/// bytes each log's replay takes.
fn judge_wals(
    fs: &dyn FileSystem,
    dir: &Path,
    m: &RecoveredManifest,
    opts: &Options,
    needs: &mut BTreeMap<u64, u64>,
) -> Result<WalPlan> {
    let names = crate::layout::wal_files::list_wals(fs, dir)?;
    let present: Vec<u64> = names
        .iter()
        .filter_map(|n| parse_wal_file_name(n))
        .collect();
    let w = WalDir {
        dir,
        manifest: m,
        present: &present,
        point_in_time: opts.wal_point_in_time_recovery,
    };
    plan_wals(&w, |n| {
        let need = needs.entry(n).or_insert(PM_LOG_HEADER_LEN as u64);
        crate::wal::replay_prefix(fs, dir, n, |_, _, k, v| {
            *need += encoded_entry_len(k.len(), v.len()) as u64;
            Ok(())
        })
    })
}

/// Removes what a previous run left on the write-buffer device (a device that keeps regions,
/// such as PM holding memtables for the placement study): those buffers are rebuilt from their
/// logs, and the logs are the truth. A DRAM device starts empty.
fn discard_stale_buffers(pm: &PmDeviceRef) -> Result<()> {
    let names = pm.list_regions()?;
    let buffers = names
        .into_iter()
        .filter(|n| crate::pmtable::is_buffer_region(n));
    for name in buffers.collect::<Vec<_>>() {
        pm.remove_region(&name)?;
    }
    Ok(())
}

/// Replays log `n` of `dir` (judged and kept: its whole records before any torn tail or hole)
/// into a sealed DRAM table of that number and `need` bytes of entries; `None` if it holds no
/// entry.
fn replay_log(
    fs: &dyn FileSystem,
    dir: &Path,
    pm: &PmDeviceRef,
    (n, need): (u64, u64),
    opts: &Options,
) -> Result<Option<Arc<PmTable>>> {
    let table = PmTable::create(&**pm, n, opts.pmtable_size.max(need as usize), None)?;
    // The damage after the kept records (recovery to a point in time) was judged already.
    crate::wal::replay_prefix(fs, dir, n, |seq, kind, key, value| {
        append_one(&table, seq, kind, key, value)
    })?;
    table.seal()?;
    if table.is_empty() {
        return Ok(None);
    }
    table.build_filter(opts.bloom_bits_per_key);
    Ok(Some(table))
}

/// The writing phase of open for a design with write-ahead logs, before its new manifest:
/// warns in `info_log` of what recovery dropped, seals the logs recovered, then creates log
/// `number` of the new mutable buffer, whose marker says the older logs end at sequence
/// `after`.
pub(super) fn start_wals(
    fs: &dyn FileSystem,
    dir: &Path,
    wals: RecoveredWals,
    (number, after): (u64, u64),
    info_log: &InfoLog,
) -> Result<crate::wal::WalWriter> {
    for note in wals.notes {
        event!(info_log, Warn, note);
    }
    seal_recovered_wals(fs, dir, &wals.keep)?;
    crate::layout::wal_files::create_wal(fs, dir, number, after)
}

/// Makes the kept logs durable exactly as recovered, before the new manifest names a newer log
/// (the writing phase of open): a log with bytes after its kept records (a torn tail, or a hole
/// recovery to a point in time stopped at) is cut back to them by an atomic rewrite; any other
/// is synced (a process crash may have left its last records in the page cache only). Else a
/// later crash could leave it torn or short behind a newer log: a hole.
fn seal_recovered_wals(fs: &dyn FileSystem, dir: &Path, wals: &[KeptWal]) -> Result<()> {
    for k in wals {
        let path = dir.join(wal_file_name(k.number));
        let sealed = match k.end < k.len {
            true => cut_back(fs, &path, k.end),
            false => fs.open_append(&path).and_then(|mut f| f.sync()),
        };
        sealed.context(|| format!("sealing recovered write-ahead log {}", path.display()))?;
    }
    Ok(())
}

/// Rewrites `path` with its first `end` bytes (temporary file, sync, rename, directory sync).
pub(crate) fn cut_back(fs: &dyn FileSystem, path: &Path, end: u64) -> std::io::Result<()> {
    let data = fs.read_all(path)?;
    let keep = &data[..(end as usize).min(data.len())];
    write_file_atomic(fs, path, keep)
}

fn append_one(table: &PmTable, seq: u64, kind: ValueKind, key: &[u8], value: &[u8]) -> Result<()> {
    let entry = [LogEntry {
        seq,
        kind,
        key,
        value,
    }];
    match table.append_batch(&entry)? {
        true => Ok(()),
        false => Err(Error::InvalidState(format!(
            "replaying write-ahead log {}: the table sized for it is full",
            table.number()
        ))),
    }
}
