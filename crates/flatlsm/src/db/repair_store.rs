//! Repair and a design's own PM store: what repair cannot read of it is kept by copying the
//! whole region to `<db>/lost/` before the repaired manifest frees its space.

use crate::error::{IoContext, Result};
use crate::fs::{tmp_path, FileSystem};
use crate::pm::PmRegion;
use std::path::{Path, PathBuf};

/// Bytes copied per write.
const CHUNK: usize = 1 << 20;

/// Copies `region` to `lost/<its name>` (created if missing): written as `.tmp`, synced,
/// renamed, so a crash leaves the whole copy or none. Returns the copy's path.
pub(super) fn copy_region_to_lost(
    fs: &dyn FileSystem,
    lost: &Path,
    region: &dyn PmRegion,
) -> Result<PathBuf> {
    fs.create_dir_all(lost)
        .context(|| format!("creating {}", lost.display()))?;
    let name = region.path().file_name().unwrap_or("store.pm".as_ref());
    let to = lost.join(name);
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
