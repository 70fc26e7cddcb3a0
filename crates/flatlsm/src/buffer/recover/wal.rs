//! The DRAM write buffers of leveled and MatrixKV after a restart: each write-ahead log recovery
//! kept is replayed, its whole records before any torn tail or hole, into a fresh sealed table
//! of its number on the write-buffer device (a PMTable on `DramPmDevice`, or on PM used
//! volatile for the placement study), which joins the immutables like any other.
//!
//! Invariant: every log given was judged by recovery's rules (`recovery/wal_rules.rs`) while
//! [`TableSizes`] counted, in the same read, the bytes its replay takes; so a table never fills
//! during its replay (if it does, that is a bug: `InvalidState`). Recovery rule: the logs are the
//! truth; buffers a previous run left on the device are removed before the replay (never data),
//! and the logs themselves are only read.

use crate::buffer::BufferRef;
use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::pm::PmDevice;
use crate::pmtable::log::{encoded_entry_len, LogEntry, PM_LOG_HEADER_LEN};
use crate::pmtable::PmTable;
use crate::types::ValueKind;
use crate::wal::WalReplay;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// The table bytes each log's replay takes (its entries and a table header), counted while
/// recovery reads the logs to judge them: one read of each log serves both.
#[derive(Debug, Default)]
pub(crate) struct TableSizes(BTreeMap<u64, u64>);

impl TableSizes {
    /// Reads log `n` of `dir` up to its first damage (core's `wal::replay_prefix`, whose answer
    /// this returns), counting the bytes of its entries.
    pub(crate) fn scan(
        &mut self,
        fs: &dyn FileSystem,
        dir: &Path,
        n: u64,
    ) -> Result<(WalReplay, Option<Error>)> {
        let need = self.0.entry(n).or_insert(PM_LOG_HEADER_LEN as u64);
        crate::wal::replay_prefix(fs, dir, n, |_, _, k, v| {
            *need += encoded_entry_len(k.len(), v.len()) as u64;
            Ok(())
        })
    }

    fn of(&self, n: u64) -> u64 {
        self.0.get(&n).copied().unwrap_or(0)
    }
}

/// The write-ahead logs to replay and where their tables go.
pub(crate) struct WalSources<'a> {
    pub fs: &'a dyn FileSystem,
    /// The WAL directory.
    pub dir: &'a Path,
    /// The write-buffer device the tables are created on.
    pub device: &'a dyn PmDevice,
    /// The logs kept, oldest first.
    pub logs: Vec<u64>,
    /// What each log's replay takes, counted when it was judged.
    pub sizes: TableSizes,
    /// The smallest table to create (`Options::pmtable_size`).
    pub table_size: usize,
}

/// Clears the device of stale buffers, then replays every log (oldest first): the tables
/// holding entries, newest first. A log that replays to nothing is not kept.
pub(super) fn replay(w: WalSources<'_>) -> Result<Vec<BufferRef>> {
    discard_stale_buffers(w.device)?;
    let mut tables = Vec::new();
    for &n in &w.logs {
        if let Some(t) = replay_log(&w, n)? {
            tables.push(t as BufferRef);
        }
    }
    tables.reverse();
    Ok(tables)
}

/// Removes what a previous run left on the write-buffer device (a device that keeps regions,
/// such as PM holding memtables for the placement study): those buffers are rebuilt from their
/// logs, and the logs are the truth. A DRAM device starts empty.
fn discard_stale_buffers(device: &dyn PmDevice) -> Result<()> {
    let names = device.list_regions()?;
    let buffers = names
        .into_iter()
        .filter(|n| crate::pmtable::is_buffer_region(n));
    for name in buffers.collect::<Vec<_>>() {
        device.remove_region(&name)?;
    }
    Ok(())
}

/// Replays log `n` (judged and kept: its whole records before any torn tail or hole) into a
/// sealed DRAM table of that number, as large as the log needs; `None` if it holds no entry.
fn replay_log(w: &WalSources<'_>, n: u64) -> Result<Option<Arc<PmTable>>> {
    let size = w.table_size.max(w.sizes.of(n) as usize);
    let table = PmTable::create(w.device, n, size, None)?;
    // The damage after the kept records (recovery to a point in time) was judged already.
    crate::wal::replay_prefix(w.fs, w.dir, n, |seq, kind, key, value| {
        append_one(&table, seq, kind, key, value)
    })?;
    table.seal()?;
    Ok((!table.is_empty()).then_some(table))
}

pub(super) fn append_one(
    table: &PmTable,
    seq: u64,
    kind: ValueKind,
    key: &[u8],
    value: &[u8],
) -> Result<()> {
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
