//! Rebuilding the write buffers a database held when it last stopped, one kind each: PM Logs
//! mapped and indexed in place as PMTables (`pm_log.rs`, FlatLSM), write-ahead logs replayed
//! into fresh DRAM tables (`wal.rs`, leveled and MatrixKV), PM skiplists recovered in place
//! (`skiplist.rs`, NoveLSM and SLM-DB). One entry point, [`rebuild`], whose input says which.
//!
//! This room replays; it does not judge. What is kept, refused or removed — the manifest's
//! names, the PM Log plan, the write-ahead logs' hole rules, missing regions — is decided by
//! `recovery/` before anything here runs, and the input is what those decisions kept (opened
//! PM Logs, logs judged whole, regions named and present). An error here (a damaged entry or
//! node, a table too small for its log) still fails the open, but is no verdict on consistency.
//!
//! Invariants of the result: buffers newest first (the order reads search immutables in), each
//! holding at least one entry and its bloom filter built where its kind has one; a PMTable left
//! empty by a torn tail is returned apart ([`Rebuilt::emptied`]), since its log's header must be
//! reset before the new manifest drops it.
//!
//! Recovery rule: nothing here writes data. PM Logs keep their torn tails cut in DRAM only
//! until `PmTable::persist_recovered_tail`, a skiplist batch a crash interrupted is unlinked
//! (idempotent, and it was never acknowledged), and a replayed table is a new region rebuilt
//! from its log at every open (stale ones on the device are removed first: the logs are the
//! truth). A crash during a rebuild leaves the inputs as they were.

mod pm_log;
mod skiplist;
mod wal;

pub(crate) use wal::{TableSizes, WalSources};

use super::BufferRef;
use crate::error::Result;
use crate::pm::PmDevice;
use crate::pmtable::log::PmLog;
use crate::pmtable::PmTable;
use std::sync::Arc;

/// What recovery kept of one kind of write buffer, oldest first.
pub(crate) enum Sources<'a> {
    /// The PM Logs kept, opened while recovery planned them (FlatLSM's PMTables).
    PmLogs(Vec<Arc<PmLog>>),
    /// The write-ahead logs judged and kept, to replay into DRAM tables.
    Wals(WalSources<'a>),
    /// The PM skiplist regions named and present on their device, by number.
    Skiplists(&'a dyn PmDevice, Vec<u64>),
    /// PM Logs whose entries are copied into fresh tables on the device (Fig. 17's
    /// copy-required baseline; the bench only, never open).
    CopiedPmLogs(&'a dyn PmDevice, Vec<Arc<PmLog>>),
}

/// The write buffers rebuilt.
pub(crate) struct Rebuilt {
    /// Buffers holding entries, newest first, sealed, bloom filters built.
    pub tables: Vec<BufferRef>,
    /// PMTables whose log holds no entry once its torn tail is cut, newest first.
    pub emptied: Vec<Arc<PmTable>>,
}

/// Rebuilds the buffers of `sources`; filters take `bloom_bits_per_key` bits per key.
pub(crate) fn rebuild(sources: Sources<'_>, bloom_bits_per_key: usize) -> Result<Rebuilt> {
    let (tables, emptied) = match sources {
        Sources::PmLogs(logs) => pm_log::map_in_place(logs)?,
        Sources::Wals(wals) => (wal::replay(wals)?, Vec::new()),
        Sources::Skiplists(device, numbers) => (skiplist::recover(device, &numbers)?, Vec::new()),
        Sources::CopiedPmLogs(device, logs) => (pm_log::copy_into(logs, device)?, Vec::new()),
    };
    for t in &tables {
        t.build_filter(bloom_bits_per_key); // a no-op for skiplists: NoveLSM has none
    }
    Ok(Rebuilt { tables, emptied })
}
