//! [`MmapPmDevice`]: PM regions as memory-mapped files in a directory, in one of three modes
//! (see docs/pm-modes.md):
//! - `Dax`: the directory is on a DAX file system (`MAP_SYNC` maps succeed); persist = flush the
//!   covering cache lines + sfence.
//! - `Msync`: an ordinary file system; persist = `msync(MS_SYNC)` of the covering pages.
//! - `Emulated`: the user explicitly asked for PM emulated in DRAM (typically tmpfs); persist =
//!   flush + sfence, then spin `write_latency_ns` per persisted cache line, as the PM papers did.
//!
//! `Auto` refuses a DRAM-backed directory (tmpfs/ramfs): a reboot would silently lose the data,
//! so that has to be an explicit opt-in (`Emulated`).

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::raw::{self, RawMapping, RAMFS_MAGIC, TMPFS_MAGIC};
use super::{PmDevice, PmMode, PmRegion};
use crate::error::{Error, IoContext, Result};

/// Name prefix of the temporary file used to probe for DAX (never listed as a region).
const PROBE_PREFIX: &str = ".flatlsm-dax-probe";

/// Name prefix of a region being created (sized and synced before it is renamed into place).
const CREATING_PREFIX: &str = ".creating-";

/// Which mode the caller wants for an [`MmapPmDevice`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PmModeRequest {
    /// `Dax` if the directory accepts `MAP_SYNC`, else `Msync`; refuses DRAM-backed directories.
    Auto,
    /// Always `msync` (refuses DRAM-backed directories like `Auto`).
    Msync,
    /// PM emulated in DRAM (explicit opt-in to losing the data at reboot), with injected latency.
    Emulated {
        /// Spin time per persisted cache line, in nanoseconds.
        write_latency_ns: u64,
        /// Spin time per cache line a read touches, in nanoseconds (0: DRAM speed).
        read_latency_ns: u64,
    },
}

/// A directory of memory-mapped PM region files.
#[derive(Debug)]
pub struct MmapPmDevice {
    dir: PathBuf,
    mode: PmMode,
    /// Test seam: the step of region creation that fails with ENOSPC (see `injected_fault`).
    #[cfg(test)]
    fail_step: parking_lot::Mutex<Option<&'static str>>,
}

impl MmapPmDevice {
    /// Opens (creating if needed) the directory `dir` as a PM device in the requested mode.
    ///
    /// Errors: [`Error::InvalidArgument`] when `Auto`/`Msync` is asked for a DRAM-backed
    /// directory; [`Error::Io`] naming the directory when it cannot be created or probed.
    pub fn open(dir: &Path, request: PmModeRequest) -> Result<Arc<MmapPmDevice>> {
        fs::create_dir_all(dir).context(|| format!("creating PM directory {}", dir.display()))?;
        let magic =
            raw::fs_magic(dir).context(|| format!("statfs of PM directory {}", dir.display()))?;
        let dram_backed = magic == TMPFS_MAGIC || magic == RAMFS_MAGIC;
        let mode = match request {
            PmModeRequest::Emulated {
                write_latency_ns,
                read_latency_ns,
            } => {
                warn_emulated(dir, dram_backed);
                PmMode::Emulated {
                    write_latency_ns,
                    read_latency_ns,
                }
            }
            PmModeRequest::Auto | PmModeRequest::Msync if dram_backed => {
                return Err(Error::InvalidArgument(format!(
                    "PM directory {} is DRAM-backed (tmpfs/ramfs): a reboot would lose the data \
                     it holds. To use it anyway, open it with emulated PM \
                     (PmModeRequest::Emulated, `--pm-mode emulated`); otherwise move the PM \
                     directory to a DAX mount or a disk-backed file system",
                    dir.display()
                )));
            }
            PmModeRequest::Auto => probe_mode(dir)?,
            PmModeRequest::Msync => PmMode::Msync,
        };
        log::info!("PM device at {} uses mode {mode}", dir.display());
        remove_interrupted_creations(dir)?;
        Ok(Arc::new(MmapPmDevice {
            dir: dir.to_path_buf(),
            mode,
            #[cfg(test)]
            fail_step: Default::default(),
        }))
    }

    fn region_path(&self, name: &str) -> Result<PathBuf> {
        validate_name(name)?;
        Ok(self.dir.join(name))
    }

    /// Creates `temp` with `size` bytes reserved and synced (region creation before the rename).
    fn create_sized(&self, temp: &Path, path: &Path, size: usize) -> Result<File> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(temp)
            .context(|| format!("creating PM region {}", temp.display()))?;
        let allocated = self
            .injected_fault("allocate")
            .and_then(|()| raw::preallocate(&file, size as u64))
            .context(|| format!("allocating {size} bytes for PM region {}", path.display()))?;
        if !allocated {
            file.set_len(size as u64)
                .context(|| format!("sizing PM region {}", path.display()))?;
        }
        file.sync_all()
            .context(|| format!("syncing PM region {}", path.display()))?;
        Ok(file)
    }

    /// Test seam: an ENOSPC at `step` of region creation when a test asked for one, as a full
    /// disk gives; nothing outside the crate's test builds.
    fn injected_fault(&self, step: &'static str) -> io::Result<()> {
        #[cfg(test)]
        if *self.fail_step.lock() == Some(step) {
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        let _ = step;
        Ok(())
    }

    /// Maps `file`; a `fresh` region (just created, about to be written from the start) is
    /// pre-faulted so its writer takes no page faults.
    fn map(&self, file: &File, path: &Path, len: usize, fresh: bool) -> Result<Arc<dyn PmRegion>> {
        self.injected_fault("map")
            .context(|| format!("mapping PM region {}", path.display()))?;
        let map = RawMapping::map_file(file, len, self.mode == PmMode::Dax)
            .context(|| format!("mapping PM region {}", path.display()))?;
        if fresh {
            map.populate();
        }
        Ok(Arc::new(MmapPmRegion {
            path: path.to_path_buf(),
            map,
            mode: self.mode,
        }))
    }
}

/// The region file at `path` (opened for writing too if `write`) and its length; an empty
/// file is refused (regions are created under a temporary name, so an empty one was damaged).
pub(crate) fn open_region_file(path: &Path, write: bool) -> Result<(File, usize)> {
    let file = OpenOptions::new()
        .read(true)
        .write(write)
        .open(path)
        .context(|| format!("opening PM region {}", path.display()))?;
    let len = file
        .metadata()
        .context(|| format!("stat of PM region {}", path.display()))?
        .len();
    let len = usize::try_from(len).map_err(|_| {
        Error::InvalidArgument(format!("PM region {} is too large", path.display()))
    })?;
    if len == 0 {
        let expected = "PM region file is empty; expected at least a 64-byte PM log header";
        return Err(Error::corruption(path, 0, expected));
    }
    Ok((file, len))
}

/// Removes `path`, which a failed step of region creation created, and returns that step's
/// error. A leftover would hold its space until the next open, one more file per retry; if it
/// cannot be removed either, the next open removes it (a `.creating-*` file) or recovery does
/// (a region whose log header was never written).
fn remove_after_failure(path: &Path, cause: Error) -> Error {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            log::warn!("removing {} after a failed creation: {e}", path.display());
        }
        _ => {}
    }
    cause
}

/// Removes regions whose creation a crash interrupted before the rename into place (they never
/// held data). The caller holds the database lock, so no creation is in progress.
fn remove_interrupted_creations(dir: &Path) -> Result<()> {
    let listing = || format!("listing PM directory {}", dir.display());
    for entry in fs::read_dir(dir).context(listing)? {
        let entry = entry.context(listing)?;
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(CREATING_PREFIX)
        {
            let path = entry.path();
            log::warn!("removing {}: its creation was interrupted", path.display());
            fs::remove_file(&path).context(|| format!("removing {}", path.display()))?;
        }
    }
    Ok(())
}

fn warn_emulated(dir: &Path, dram_backed: bool) {
    if dram_backed {
        log::warn!(
            "PM is emulated in DRAM at {}: a reboot loses what it holds",
            dir.display()
        );
    } else {
        log::warn!(
            "PM is emulated at {} (cache-line flush, no msync): a power loss may lose what it holds",
            dir.display()
        );
    }
}

/// Maps a small temporary file with `MAP_SYNC`: success means DAX.
fn probe_mode(dir: &Path) -> Result<PmMode> {
    let path = dir.join(format!("{PROBE_PREFIX}-{}", std::process::id()));
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .context(|| format!("creating DAX probe file {}", path.display()))?;
    let probed = file
        .set_len(4096)
        .context(|| format!("sizing DAX probe file {}", path.display()))
        .map(|()| RawMapping::map_file(&file, 4096, true).is_ok());
    let removed = fs::remove_file(&path).context(|| format!("removing {}", path.display()));
    let dax = probed?;
    removed?;
    Ok(mode_for_probe(dir, dax, raw::has_cache_line_writeback()))
}

/// DAX only when `MAP_SYNC` worked *and* the CPU can write cache lines back from user space:
/// elsewhere a DAX mapping would promise durability that no instruction delivers, so such a
/// directory is used in msync mode (which the kernel makes durable on any architecture).
fn mode_for_probe(dir: &Path, map_sync_works: bool, writeback: bool) -> PmMode {
    if map_sync_works && !writeback {
        log::warn!(
            "PM directory {} is on a DAX file system, but this CPU architecture has no \
             user-space cache-line write-back FlatLSM knows: using msync mode",
            dir.display()
        );
    }
    if map_sync_works && writeback {
        PmMode::Dax
    } else {
        PmMode::Msync
    }
}

/// True for the names the device itself uses for work in progress (a region being created, a
/// DAX probe), which are never regions.
pub fn is_device_work_file(name: &str) -> bool {
    name.starts_with(PROBE_PREFIX) || name.starts_with(CREATING_PREFIX)
}

/// Region names are plain file names: no separators, not `.`/`..`, not empty, no NUL.
fn validate_name(name: &str) -> Result<()> {
    let bad = name.is_empty()
        || name == "."
        || name == ".."
        || name.contains(['/', '\\', '\0'])
        || is_device_work_file(name);
    if bad {
        return Err(Error::InvalidArgument(format!(
            "invalid PM region name {name:?}: must be a plain file name"
        )));
    }
    Ok(())
}

impl PmDevice for MmapPmDevice {
    fn mode(&self) -> PmMode {
        self.mode
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn create_region(&self, name: &str, size: usize) -> Result<Arc<dyn PmRegion>> {
        let path = self.region_path(name)?;
        if size == 0 {
            return Err(Error::InvalidArgument(format!(
                "PM region {} must not be empty",
                path.display()
            )));
        }
        if path.exists() {
            return Err(Error::InvalidState(format!(
                "PM region {} already exists",
                path.display()
            )));
        }
        // Sized and synced under a temporary name, then renamed: a crash never leaves an empty
        // or short file under a region name (which recovery would have to report as damage).
        // A failed step removes the file it leaves behind.
        let temp = self.dir.join(format!("{CREATING_PREFIX}{name}"));
        let file = self
            .create_sized(&temp, &path, size)
            .map_err(|e| remove_after_failure(&temp, e))?;
        self.injected_fault("rename")
            .and_then(|()| fs::rename(&temp, &path))
            .context(|| format!("renaming {} into place", temp.display()))
            .map_err(|e| remove_after_failure(&temp, e))?;
        self.map(&file, &path, size, true)
            .and_then(|region| self.sync_dir().map(|()| region))
            .map_err(|e| remove_after_failure(&path, e))
    }

    fn open_region(&self, name: &str) -> Result<Arc<dyn PmRegion>> {
        let path = self.region_path(name)?;
        let (file, len) = open_region_file(&path, true)?;
        self.map(&file, &path, len, false)
    }

    fn remove_region(&self, name: &str) -> Result<()> {
        let path = self.region_path(name)?;
        fs::remove_file(&path).context(|| format!("removing PM region {}", path.display()))
    }

    fn rename_region(&self, from: &str, to: &str) -> Result<()> {
        let (src, dst) = (self.region_path(from)?, self.region_path(to)?);
        if dst.exists() {
            return Err(Error::InvalidState(format!(
                "PM region {} already exists",
                dst.display()
            )));
        }
        fs::rename(&src, &dst)
            .context(|| format!("renaming PM region {} to {to}", src.display()))?;
        self.sync_dir()
    }

    fn list_regions(&self) -> Result<Vec<String>> {
        let rd = fs::read_dir(&self.dir)
            .context(|| format!("listing PM directory {}", self.dir.display()))?;
        let mut names = Vec::new();
        for entry in rd {
            let entry = entry.context(|| format!("listing PM directory {}", self.dir.display()))?;
            let is_file = entry.file_type().map(|t| t.is_file()).unwrap_or(false);
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_file && !is_device_work_file(&name) {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    }

    fn sync_dir(&self) -> Result<()> {
        self.injected_fault("sync_dir")
            .and_then(|()| File::open(&self.dir))
            .and_then(|d| d.sync_all())
            .context(|| format!("syncing PM directory {}", self.dir.display()))
    }
}

/// One mapped region file of an [`MmapPmDevice`].
pub struct MmapPmRegion {
    path: PathBuf,
    map: RawMapping,
    mode: PmMode,
}

impl MmapPmRegion {
    /// Flush + fence of the covering lines; returns how many lines were written back.
    fn flush_fence(&self, offset: usize, len: usize) -> usize {
        let lines = self.map.flush(offset, len);
        raw::fence();
        lines
    }
}

impl PmRegion for MmapPmRegion {
    fn path(&self) -> &Path {
        &self.path
    }

    fn len(&self) -> usize {
        self.map.len()
    }

    fn mode(&self) -> PmMode {
        self.mode
    }

    fn read(&self, offset: usize, len: usize) -> &[u8] {
        if let PmMode::Emulated {
            read_latency_ns, ..
        } = self.mode
        {
            spin_for(Duration::from_nanos(
                read_latency_ns.saturating_mul(lines_touched(offset, len)),
            ));
        }
        self.map.read(offset, len)
    }

    fn write(&self, offset: usize, data: &[u8]) {
        self.map.write(offset, data)
    }

    fn write_streaming(&self, offset: usize, data: &[u8]) {
        self.map.write_streaming(offset, data)
    }

    fn drain_streaming(&self) {
        raw::fence()
    }

    fn store_u64(&self, offset: usize, value: u64) {
        self.map.store_u64(offset, value)
    }

    fn load_u64(&self, offset: usize) -> u64 {
        self.map.load_u64(offset)
    }

    fn persist(&self, offset: usize, len: usize) -> io::Result<()> {
        match self.mode {
            PmMode::Msync => self.map.msync(offset, len),
            PmMode::Dax | PmMode::Simulated | PmMode::Dram | PmMode::ReadOnlyView => {
                self.flush_fence(offset, len);
                Ok(())
            }
            PmMode::Emulated {
                write_latency_ns, ..
            } => {
                let lines = self.flush_fence(offset, len) as u64;
                spin_for(Duration::from_nanos(write_latency_ns.saturating_mul(lines)));
                Ok(())
            }
        }
    }
}

/// Cache lines `[offset, offset + len)` touches.
fn lines_touched(offset: usize, len: usize) -> u64 {
    if len == 0 {
        return 0;
    }
    let first = offset / super::CACHE_LINE;
    let last = (offset + len - 1) / super::CACHE_LINE;
    (last - first + 1) as u64
}

/// Busy-waits (PM write latency is too short for sleeping to be accurate).
fn spin_for(d: Duration) {
    if d.is_zero() {
        return;
    }
    let until = Instant::now() + d;
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

#[cfg(test)]
#[path = "mmap_tests.rs"]
mod tests;
