//! What open sets up besides the manifest and the write buffers: the first write-ahead log of
//! this open (designs with one) and the block cache, on the heap or in a PM region used as
//! memory; and the removal of write-ahead logs no unflushed buffer owns in a separate WAL
//! directory (also run by the obsolete-file purge); and the copy-on-write views
//! a read-only open runs against.

use crate::error::{IoContext, Result};
use crate::file_names::parse_wal_file_name;
use crate::fs::FileSystem;
use crate::fs::FsRef;
use crate::layout::{open_pm_device, pm_dir_of};
use crate::options::{Options, Placement};
use crate::pm::PmArena;
use crate::sst::BlockCache;
use crate::wal::WalWriter;
use std::path::Path;
use std::sync::Arc;

/// Creates the first write-ahead log of this open in `dir` (created if missing), its marker
/// saying the older logs end at sequence `after`, warning when `dir` is DRAM-backed: a reboot
/// would lose the writes not yet flushed.
pub(super) fn create_wal(
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

/// Name of the block cache's region in the PM directory (`block_cache_placement = Pm`).
pub(crate) const BLOCK_CACHE_REGION: &str = "blockcache.pmvol";

/// The block cache `opts` ask for: none, on the heap, or in a region of the PM directory used
/// as memory (a stale region of an earlier run is replaced; `Db::close` removes it).
pub(super) fn block_cache(path: &Path, opts: &Options) -> Result<Option<Arc<BlockCache>>> {
    if opts.block_cache_size == 0 {
        return Ok(None);
    }
    if opts.block_cache_placement == Placement::Dram {
        return Ok(Some(BlockCache::new(opts.block_cache_size)));
    }
    let pm = open_pm_device(path, opts)?;
    if pm.has_region(BLOCK_CACHE_REGION)? {
        pm.remove_region(BLOCK_CACHE_REGION)?;
    }
    let region = pm.create_region(BLOCK_CACHE_REGION, opts.block_cache_size)?;
    Ok(Some(BlockCache::in_pm(PmArena::new(region))))
}

/// `opts` and `fs` for a read-only open of an existing database: copy-on-write views of the
/// file system and of the PM directory (if the design has one), no background work.
pub(super) fn read_only_views(
    path: &Path,
    mut opts: Options,
    fs: FsRef,
) -> Result<(Options, FsRef)> {
    let design = crate::designs::design_of(&opts);
    if opts.pm_device.is_none() && design.uses_pm_dir() {
        let dir = pm_dir_of(path, &opts);
        opts.pm_device = Some(crate::pm::private::PrivatePmDevice::open(&dir)?);
    }
    let overlay: FsRef = crate::fs::OverlayFs::new(fs);
    opts.file_system = Some(overlay.clone());
    opts.background_work = false;
    Ok((opts, overlay))
}
