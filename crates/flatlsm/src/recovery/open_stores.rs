//! What open sets up besides the manifest and the write buffers: the block cache, on the heap
//! or in a PM region used as memory, and the copy-on-write views a read-only open runs
//! against.

use crate::error::Result;
use crate::file_names::BLOCK_CACHE_REGION;
use crate::fs::FsRef;
use crate::layout::{open_pm_device, pm_dir_of};
use crate::options::{Options, Placement};
use crate::pm::PmArena;
use crate::sst::BlockCache;
use std::path::Path;
use std::sync::Arc;

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
