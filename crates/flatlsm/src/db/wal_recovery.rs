//! Recovery of a design whose write buffers live in DRAM behind write-ahead logs (`leveled`):
//! the manifest names the logs of unflushed buffers exactly as it names PM Logs (tag 9, below
//! `min_unflushed_pmlog` retired), and each is replayed into a fresh DRAM table of its number,
//! which joins the immutables and is flushed by the background as any other.
//!
//! Rules (the persist order is in `wal/mod.rs` and docs/wal-format.md):
//! - a log the manifest names must exist, else `Corruption` naming it: its writes would be lost;
//! - a torn tail is dropped with a warning; damage is `Corruption` (the open is refused);
//! - a log that replays to nothing is not kept (the new manifest no longer names it and the
//!   orphan purge deletes it with every log the manifest does not name).
//!
//! Reads only, apart from clearing the write-buffer device of stale buffers (never data: the
//! logs are): like the PM recovery, every refusal happens before open writes anything.

use super::consistency;
use super::open::Recovered;
use crate::error::{Error, Result};
use crate::file_names::wal_file_name;
use crate::fs::FileSystem;
use crate::options::Options;
use crate::pm::PmDeviceRef;
use crate::pmtable::log::{encoded_entry_len, LogEntry, PM_LOG_HEADER_LEN};
use crate::pmtable::PmTable;
use crate::types::ValueKind;
use crate::version::{ManifestState, RecoveredManifest};
use std::path::Path;
use std::sync::Arc;

/// Verifies the tree files the manifest names and replays every log it names.
pub(super) fn recover_from_wal(
    fs: &dyn FileSystem,
    path: &Path,
    pm: &PmDeviceRef,
    manifest: Option<RecoveredManifest>,
    opts: &Options,
) -> Result<Recovered> {
    let (state, redirects) =
        consistency::verified_tree(fs, &super::dirs::sst_dirs(path, opts), manifest.as_ref())?;
    discard_stale_buffers(pm)?;
    let mut tables = Vec::new();
    for n in unflushed_logs(&state) {
        if let Some(t) = replay_log(fs, path, pm, n, opts)? {
            tables.push(t as crate::buffer::BufferRef);
        }
    }
    tables.reverse(); // newest first
    Ok(Recovered {
        state,
        tables,
        remove: Vec::new(),
        emptied: Vec::new(),
        redirects,
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

/// The logs the manifest names that may hold unflushed writes, oldest first.
fn unflushed_logs(state: &ManifestState) -> Vec<u64> {
    let min = state.min_unflushed_pmlog;
    let logs = state.pm_logs.iter().flatten().copied();
    logs.filter(|&n| n >= min).collect()
}

/// Replays log `n` into a sealed DRAM table of that number; `None` if it holds no entry.
fn replay_log(
    fs: &dyn FileSystem,
    path: &Path,
    pm: &PmDeviceRef,
    n: u64,
    opts: &Options,
) -> Result<Option<Arc<PmTable>>> {
    let dir = opts.wal_dir_for(path);
    let name = dir.join(wal_file_name(n));
    if !fs.exists(&name) {
        let detail =
            "the manifest names this write-ahead log but it is missing: its writes are lost";
        return Err(Error::corruption(&name, 0, detail));
    }
    let mut need = PM_LOG_HEADER_LEN as u64;
    crate::wal::replay(fs, &dir, n, |_, _, k, v| {
        need += encoded_entry_len(k.len(), v.len()) as u64;
        Ok(())
    })?;
    let table = PmTable::create(&**pm, n, opts.pmtable_size.max(need as usize), None)?;
    let r = crate::wal::replay(fs, &dir, n, |seq, kind, key, value| {
        append_one(&table, seq, kind, key, value)
    })?;
    if let Some(note) = &r.torn_tail {
        log::warn!("write-ahead log torn tail dropped: {note}");
    }
    table.seal()?;
    if table.is_empty() {
        return Ok(None);
    }
    table.build_filter(opts.bloom_bits_per_key);
    Ok(Some(table))
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
