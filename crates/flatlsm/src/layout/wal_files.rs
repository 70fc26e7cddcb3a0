//! The write-ahead log files of a WAL directory (designs with DRAM write buffers): creating
//! the next log, listing them, and removing the logs no unflushed buffer owns. Open, the
//! write path (a new memtable's log) and the obsolete-file purge all go through here.

use crate::error::{IoContext, Result};
use crate::file_names::parse_wal_file_name;
use crate::fs::FileSystem;
use crate::wal::WalWriter;
use std::path::Path;

/// Creates the first write-ahead log of this open in `dir` (created if missing), its marker
/// saying the older logs end at sequence `after`, warning when `dir` is DRAM-backed: a reboot
/// would lose the writes not yet flushed.
pub(crate) fn create_wal(
    fs: &dyn FileSystem,
    dir: &Path,
    number: u64,
    after: u64,
) -> Result<WalWriter> {
    fs.create_dir_all(dir)
        .context(|| format!("creating the WAL directory {}", dir.display()))?;
    if crate::pm::is_dram_backed(dir) {
        log::warn!(
            "write-ahead logs in {} are on a DRAM-backed file system: a reboot loses the writes \
             not yet flushed",
            dir.display()
        );
    }
    WalWriter::create(fs, dir, number, after)
}

/// Removes the write-ahead logs in a separate WAL directory that no unflushed buffer owns (of
/// flushes or opens a crash interrupted). Only `NNNNNN.log` files: the directory may be shared.
pub(crate) fn remove_unnamed_wals(fs: &dyn FileSystem, dir: &Path, live: &[u64]) -> Result<()> {
    let names = list_wals(fs, dir)?;
    remove_stale_wals(fs, dir, &names, live)
}

/// The names in a WAL directory (none if it does not exist: no log was ever written there).
/// A purge lists them *before* it collects the live numbers, so a log created meanwhile is
/// not in the list rather than deleted as stale.
pub(crate) fn list_wals(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<String>> {
    if !fs.exists(dir) {
        return Ok(Vec::new());
    }
    fs.list_dir(dir)
        .context(|| format!("listing {}", dir.display()))
}

/// Removes the logs among `names` that no number in `live` owns.
pub(crate) fn remove_stale_wals(
    fs: &dyn FileSystem,
    dir: &Path,
    names: &[String],
    live: &[u64],
) -> Result<()> {
    for name in names {
        let stale = parse_wal_file_name(name).is_some_and(|n| !live.contains(&n));
        if stale {
            match fs.remove_file(&dir.join(name)) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                other => other.context(|| format!("removing write-ahead log {name}"))?,
            }
        }
    }
    Ok(())
}
