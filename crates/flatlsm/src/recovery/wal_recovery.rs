//! Recovery of a design whose write buffers live in DRAM behind write-ahead logs (`leveled`,
//! `matrixkv`): the decisions. The manifest names the logs of unflushed buffers exactly as it
//! names PM Logs (tag 9, below `min_unflushed_pmlog` retired); this file judges them and has
//! each kept log replayed into a fresh DRAM table of its number (`buffer/recover/wal.rs`), which
//! joins the immutables and is flushed by the background as any other.
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
//! Reads only, apart from the replay's clearing of stale buffers from the write-buffer device
//! (never data: the logs are): like the PM recovery, every refusal happens before the replay
//! and before open writes anything. The writing phase of open then seals the logs it kept
//! (`seal_recovered_wals`) before its new manifest names a newer log, so that a log is never
//! older than another with an unsynced or torn tail.

use super::consistency;
use super::open::{KindInput, Recovered};
use super::wal_rules::{plan_wals, KeptWal, WalDir, WalPlan};
use crate::buffer::recover::{rebuild, Sources, TableSizes, WalSources};
use crate::buffer::BufferRef;
use crate::error::{IoContext, Result};
use crate::file_names::{parse_wal_file_name, wal_file_name};
use crate::fs::{write_file_atomic, FileSystem};
use crate::observe::info_log::{event, InfoLog};
use crate::options::Options;
use crate::version::RecoveredManifest;
use std::path::Path;

/// The logs recovery kept, and the warnings on what it dropped.
#[derive(Debug, Default)]
pub(super) struct RecoveredWals {
    /// The logs of the recovered tables, oldest first: sealed before the new manifest.
    pub keep: Vec<KeptWal>,
    /// What recovery dropped (a torn tail: file, offset, bytes; the hole recovery to a point in
    /// time stopped at): written to the info log by [`start_wals`], once it is open.
    pub notes: Vec<String>,
}

/// Verifies the tree files the manifest names, judges the logs and has those kept replayed.
pub(super) fn recover_from_wal(input: KindInput<'_>) -> Result<Recovered> {
    let (fs, path, pm, manifest, opts) = input.parts();
    let (state, redirects) = consistency::verified_tree(fs, path, manifest.as_ref(), opts)?;
    let dir = opts.wal_dir_for(path);
    let (plan, sizes) = match &manifest {
        Some(m) => judge(fs, (path, &dir), m, opts)?,
        None => Default::default(),
    };
    let sources = WalSources {
        fs,
        dir: &dir,
        device: &**pm,
        logs: plan.keep.iter().map(|k| k.number).collect(),
        sizes,
        table_size: opts.pmtable_size,
    };
    let rebuilt = rebuild(Sources::Wals(sources), opts.bloom_bits_per_key)?;
    let wals = replayed_wals(plan, &rebuilt.tables);
    Ok(Recovered {
        state,
        tables: rebuilt.tables,
        remove: Vec::new(),
        emptied: Vec::new(),
        redirects,
        wals,
    })
}

/// Refuses what the design's store and the logs of `dir` (the WAL directory of the database at
/// `path`) say is wrong with `m`; else the logs to replay and the table bytes each takes.
fn judge(
    fs: &dyn FileSystem,
    (path, dir): (&Path, &Path),
    m: &RecoveredManifest,
    opts: &Options,
) -> Result<(WalPlan, TableSizes)> {
    verify_store(fs, path, opts, m)?;
    let mut sizes = TableSizes::default();
    let mut plan = judge_wals(fs, dir, m, opts, &mut sizes)?;
    consistency::refuse_if_any(std::mem::take(&mut plan.problems))?;
    Ok((plan, sizes))
}

/// The kept logs whose replay left a table (to seal before the new manifest), and the notes
/// on what recovery dropped.
fn replayed_wals(plan: WalPlan, tables: &[BufferRef]) -> RecoveredWals {
    let replayed = |k: &KeptWal| tables.iter().any(|t| t.number() == k.number);
    RecoveredWals {
        keep: plan.keep.into_iter().filter(replayed).collect(),
        notes: plan.notes,
    }
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

/// Applies the rules of `recovery/wal_rules.rs` to the logs in `dir`, counting in `sizes` the
/// table bytes each log's replay takes (the same read).
fn judge_wals(
    fs: &dyn FileSystem,
    dir: &Path,
    m: &RecoveredManifest,
    opts: &Options,
    sizes: &mut TableSizes,
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
    plan_wals(&w, |n| sizes.scan(fs, dir, n))
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
