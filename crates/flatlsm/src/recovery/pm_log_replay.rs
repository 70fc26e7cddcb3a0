//! The FlatLSM paper's Fig. 17 for the bench (`tool_support::replay_pm_logs`): the PM Logs of
//! a closed database rebuilt into write buffers, then dropped — in place (copy-free: the
//! index rebuilt over the mapped logs, the code open runs) or copy-required (each entry copied
//! into a fresh DRAM table, as RocksDB replays its write-ahead log into a memtable).
//!
//! Not part of open, and no verdict on the logs: every initialized PM Log in the directory is
//! replayed (after a clean close those are the logs open keeps; the manifest is not read).
//! Reads only: tails are cut in memory, nothing is written to PM or the database.

use crate::buffer::recover::{rebuild, Sources};
use crate::error::Result;
use crate::file_names::parse_pm_log_file_name;
use crate::layout::open_pm_device;
use crate::options::Options;
use crate::pm::{DramPmDevice, PmDeviceRef};
use crate::pmtable::log::PmLog;
use std::path::Path;
use std::sync::Arc;

/// How the bench rebuilds the PM Logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PmLogReplay {
    /// Copy-free: the logs mapped where they lie, the DRAM index pointing into them.
    InPlace,
    /// Copy-required: every entry copied into a fresh DRAM table.
    Copy,
}

/// What a replay rebuilt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplayCount {
    /// PM Logs read.
    pub logs: usize,
    /// Entries in the rebuilt tables.
    pub entries: u64,
}

/// Rebuilds the PM Logs of the closed database at `path` (PM directory and mode from `opts`)
/// as `how` says, and drops the tables.
pub fn replay_pm_logs(path: &Path, opts: &Options, how: PmLogReplay) -> Result<ReplayCount> {
    let pm = open_pm_device(path, opts)?;
    let logs = initialized_logs(&pm)?;
    let count = logs.len();
    let dram = DramPmDevice::new(path.join("[dram]"));
    let sources = match how {
        PmLogReplay::InPlace => Sources::PmLogs(logs),
        PmLogReplay::Copy => Sources::CopiedPmLogs(&*dram, logs),
    };
    let rebuilt = rebuild(sources, opts.bloom_bits_per_key)?;
    let entries = rebuilt.tables.iter().map(|t| t.contents().0).sum();
    Ok(ReplayCount {
        logs: count,
        entries,
    })
}

/// The PM Logs of `pm` that hold a header, oldest first.
fn initialized_logs(pm: &PmDeviceRef) -> Result<Vec<Arc<PmLog>>> {
    let mut numbers: Vec<u64> = (pm.list_regions()?.iter())
        .filter_map(|n| parse_pm_log_file_name(n))
        .collect();
    numbers.sort_unstable();
    let mut logs = Vec::new();
    for n in numbers {
        let name = crate::file_names::pm_log_file_name(n);
        logs.extend(PmLog::open_if_initialized(&**pm, &name)?);
    }
    Ok(logs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Db;

    /// Both replays rebuild every entry of the logs a closed database left, and neither
    /// changes what the next open recovers.
    #[test]
    fn copy_free_and_copy_required_replays_rebuild_the_same_entries() {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options::default()
            .pmtable_size(1 << 20)
            .background_work(false);
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        for i in 0..500u32 {
            db.put(format!("key{i:05}").as_bytes(), [7u8; 300]).unwrap();
        }
        db.close().unwrap();
        drop(db);
        let free = replay_pm_logs(dir.path(), &opts, PmLogReplay::InPlace).unwrap();
        let copied = replay_pm_logs(dir.path(), &opts, PmLogReplay::Copy).unwrap();
        assert_eq!(free, copied);
        assert_eq!(free.entries, 500);
        let db = Db::open(dir.path(), opts).unwrap();
        assert_eq!(
            db.get(b"key00499").unwrap().as_deref(),
            Some(&[7u8; 300][..])
        );
    }
}
