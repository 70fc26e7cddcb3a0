//! FlatLSM's PMTables after a restart: each PM Log recovery kept is mapped where it lies and its
//! DRAM index rebuilt from its entries (copy-free: the log is the table's data, `PmTable::recover`).
//!
//! [`copy_into`] is Fig. 17's copy-required baseline, for the bench only
//! (`tool_support::replay_pm_logs`): the entries copied into fresh tables, as RocksDB replays
//! its write-ahead log into a memtable.
//!
//! Invariant: the logs come in oldest first and every one was read and kept by recovery's plan
//! (`recovery/pm_log_recovery.rs`); a damaged entry below the log's `used_size` fails here.
//! Recovery rule: reads only; a tail a crash tore is cut in DRAM, made durable later by
//! `PmTable::persist_recovered_tail` in the writing phase of open.

use crate::buffer::BufferRef;
use crate::error::Result;
use crate::pm::PmDevice;
use crate::pmtable::log::PmLog;
use crate::pmtable::PmTable;
use std::sync::Arc;

/// The tables of `logs` (oldest first) that hold entries, newest first, and apart those a torn
/// tail left empty, newest first.
pub(super) fn map_in_place(logs: Vec<Arc<PmLog>>) -> Result<(Vec<BufferRef>, Vec<Arc<PmTable>>)> {
    let (mut tables, mut emptied) = (Vec::new(), Vec::new());
    for log in logs.into_iter().rev() {
        let table = PmTable::recover(log)?;
        // Empty only when a power failure tore the whole tail: nothing to keep.
        match table.is_empty() {
            true => emptied.push(table),
            false => tables.push(table as BufferRef),
        }
    }
    Ok((tables, emptied))
}

/// The copy-required replay of `logs` (oldest first): each log's entries copied, one append
/// per entry as a write-ahead log replay does, into a fresh sealed table of the log's number
/// and capacity on `device`; the tables holding entries, newest first. The logs are only read.
pub(super) fn copy_into(logs: Vec<Arc<PmLog>>, device: &dyn PmDevice) -> Result<Vec<BufferRef>> {
    let mut tables = Vec::new();
    for log in logs.into_iter().rev() {
        let size = log.header().file_size as usize;
        let table = PmTable::create(device, log.number(), size, None)?;
        log.for_each_entry(|_, e| super::wal::append_one(&table, e.seq, e.kind, e.key, e.value))?;
        table.seal()?;
        if !table.is_empty() {
            tables.push(table as BufferRef);
        }
    }
    Ok(tables)
}
