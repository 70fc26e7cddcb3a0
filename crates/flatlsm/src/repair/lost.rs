//! The `<db>/lost/` directory of [`super::repair`]: files repair cannot use are moved there, and
//! what it is about to replace or free (old manifests, a damaged PM Log before it is cut, a
//! design's store region) is copied there first. Nothing is ever deleted.
//!
//! Invariant: nothing in `lost/` is ever replaced. A name already taken gets the first free
//! suffix `.1`, `.2`, … (a second repair finding the same damage — MatrixKV's `matrix.pmc`, a
//! PM Log cut again — keeps the first repair's copy). Repair holds the database's lock, so no
//! one else takes a name between the check and the write.
//!
//! Persist order: a copy is written as `<name>.tmp`, synced, renamed to its name and the
//! directory synced, so a crash leaves the whole copy or none (a leftover `.tmp` is rewritten by
//! the next copy to that name). A move is a rename; across file systems (a PM or WAL directory
//! elsewhere), a copy as above and then the removal of the original.

use crate::error::{IoContext, Result};
use crate::fs::{tmp_path, write_file_atomic, FileSystem};
use crate::pm::PmRegion;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Bytes of a region copied per write.
const CHUNK: usize = 1 << 20;

/// `lost/<name>` if free, else `lost/<name>.<n>` for the smallest free `n` ≥ 1.
fn free_path(fs: &dyn FileSystem, lost: &Path, name: &OsString) -> PathBuf {
    let candidate = |n: u64| {
        let mut s = name.clone();
        if n > 0 {
            s.push(format!(".{n}"));
        }
        lost.join(s)
    };
    let free = (0..).map(candidate).find(|p| !fs.exists(p));
    free.expect("some suffix is free")
}

/// Where a copy or move of `from` into `lost` (created if missing) goes.
fn destination(fs: &dyn FileSystem, lost: &Path, from: &Path) -> Result<PathBuf> {
    fs.create_dir_all(lost)
        .context(|| format!("creating {}", lost.display()))?;
    let name = from.file_name().unwrap_or("unnamed".as_ref()).to_owned();
    Ok(free_path(fs, lost, &name))
}

/// Moves `from` into `lost`; returns where it went.
pub(super) fn move_to_lost(fs: &dyn FileSystem, lost: &Path, from: &Path) -> Result<PathBuf> {
    let to = destination(fs, lost, from)?;
    if fs.rename(from, &to).is_ok() {
        return Ok(to);
    }
    // Another file system (a PM or WAL directory elsewhere): copy, then remove.
    let to = copy_to_lost(fs, lost, from)?;
    fs.remove_file(from)
        .context(|| format!("removing {}", from.display()))?;
    Ok(to)
}

/// Copies file `from` into `lost` (atomically); returns the copy's path.
pub(super) fn copy_to_lost(fs: &dyn FileSystem, lost: &Path, from: &Path) -> Result<PathBuf> {
    let data = fs
        .read_all(from)
        .context(|| format!("reading {}", from.display()))?;
    let to = destination(fs, lost, from)?;
    write_file_atomic(fs, &to, &data)
        .context(|| format!("copying {} to {}", from.display(), to.display()))?;
    Ok(to)
}

/// Copies `region` (a PM Log, a design's store) into `lost` under its name (atomically);
/// returns the copy's path.
pub(super) fn copy_region_to_lost(
    fs: &dyn FileSystem,
    lost: &Path,
    region: &dyn PmRegion,
) -> Result<PathBuf> {
    let to = destination(fs, lost, region.path())?;
    let tmp = tmp_path(&to);
    let mut file = fs
        .create(&tmp)
        .context(|| format!("creating {}", tmp.display()))?;
    for at in (0..region.len()).step_by(CHUNK) {
        let len = CHUNK.min(region.len() - at);
        file.append(region.read(at, len))
            .context(|| format!("writing {}", tmp.display()))?;
    }
    file.sync()
        .context(|| format!("syncing {}", tmp.display()))?;
    fs.rename(&tmp, &to)
        .context(|| format!("renaming {} to {}", tmp.display(), to.display()))?;
    fs.sync_dir(lost)
        .context(|| format!("syncing {}", lost.display()))?;
    Ok(to)
}
