//! Where a database's files live and who may use them: the data directory and the PM
//! directory (`pm_path`, else `<db>/pm`) with the SSTables each holds (`SstDirs`: level 0 of
//! `leveled` with `level0_in_pm` is kept in the PM directory), the PM device over the PM
//! directory, the `LOCK` file ([`lock`]) and the `IDENTITY` that ties a database to its PM
//! directory ([`identity`]).
//!
//! Layering: below `designs`, `db` and `inspect`, which all place files through it; it imports
//! only the building blocks, `options` and `pmtable`'s file names.

pub(crate) mod identity;
pub(crate) mod lock;
pub(crate) mod wal_files;

use crate::error::{IoContext, Result};
use crate::fs::FileSystem;
use crate::options::{Options, PmModeOption};
use crate::pm::mmap::{MmapPmDevice, PmModeRequest};
use crate::pm::PmDeviceRef;
use crate::sst::{parse_sst_file_name, SstDirs};
use std::path::{Path, PathBuf};

/// The SSTables in the PM directory of `dirs` (level 0 of `leveled` with `level0_in_pm`), if
/// it is another directory and exists.
pub(crate) fn pm_sst_names(fs: &dyn FileSystem, dirs: &SstDirs) -> Result<Vec<String>> {
    if dirs.pm == dirs.data || !fs.exists(&dirs.pm) {
        return Ok(Vec::new());
    }
    let names = fs
        .list_dir(&dirs.pm)
        .context(|| format!("listing {}", dirs.pm.display()))?;
    let ssts = names.into_iter();
    Ok(ssts.filter(|n| parse_sst_file_name(n).is_some()).collect())
}

/// The directories SSTables of the database at `path` live in.
pub(crate) fn sst_dirs(path: &Path, opts: &Options) -> SstDirs {
    SstDirs {
        data: path.to_path_buf(),
        pm: pm_dir_of(path, opts),
    }
}

/// The PM directory: `pm_path`, or `<db>/pm`.
pub(crate) fn pm_dir_of(path: &Path, opts: &Options) -> PathBuf {
    opts.pm_path.clone().unwrap_or_else(|| path.join("pm"))
}

/// The PM device `opts` inject, else that of the PM directory they select (created if
/// missing).
pub(crate) fn open_pm_device(path: &Path, opts: &Options) -> Result<PmDeviceRef> {
    if let Some(device) = &opts.pm_device {
        return Ok(device.clone()); // an injected device (a test's, a read-only view)
    }
    let dir = pm_dir_of(path, opts);
    std::fs::create_dir_all(&dir).context(|| format!("creating PM directory {}", dir.display()))?;
    let request = match opts.pm_mode {
        PmModeOption::Auto => PmModeRequest::Auto,
        PmModeOption::Msync => PmModeRequest::Msync,
        PmModeOption::Emulated => PmModeRequest::Emulated {
            write_latency_ns: opts.pm_write_latency_ns,
            read_latency_ns: opts.pm_read_latency_ns,
        },
    };
    let device: PmDeviceRef = MmapPmDevice::open(&dir, request)?;
    Ok(device)
}
