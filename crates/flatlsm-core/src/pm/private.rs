//! [`PrivatePmDevice`]: a PM directory seen through copy-on-write mappings, for opening a
//! database read-only. Every region of the directory reads as it is on the device; whatever the
//! engine writes, creates, renames or removes stays in this process (private mappings and DRAM
//! regions) and never reaches the directory. `persist` is a no-op: nothing is ever durable here.
//!
//! Invariants: a file region is mapped once, on first open, and kept (a later open returns the
//! same mapping, with the process's changes); a removed name stays removed from this view even
//! though its file still exists.
//!
//! Thread-safety: `Send + Sync`; the name sets are behind mutexes.

use super::dram::DramPmDevice;
use super::raw::RawMapping;
use super::{PmDevice, PmMode, PmRegion};
use crate::error::{Error, IoContext, Result};
use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A read-only view of PM directory `dir` that keeps the process's changes in memory.
pub struct PrivatePmDevice {
    dir: PathBuf,
    regions: Arc<DramPmDevice>,
    removed: Mutex<BTreeSet<String>>,
}

impl PrivatePmDevice {
    /// The view of `dir` (which must exist).
    pub fn open(dir: &Path) -> Result<Arc<PrivatePmDevice>> {
        if !dir.is_dir() {
            return Err(Error::InvalidArgument(format!(
                "PM directory {} does not exist",
                dir.display()
            )));
        }
        Ok(Arc::new(PrivatePmDevice {
            dir: dir.to_path_buf(),
            regions: DramPmDevice::new(dir),
            removed: Mutex::new(BTreeSet::new()),
        }))
    }

    /// Maps file region `name` privately and keeps it as this view's region.
    fn adopt_file(&self, name: &str) -> Result<Arc<dyn PmRegion>> {
        let path = self.dir.join(name);
        let (file, len) = super::mmap::open_region_file(&path, false)?;
        let map = RawMapping::map_file_private(&file, len)
            .context(|| format!("mapping PM region {} privately", path.display()))?;
        Ok(self.regions.adopt(name, map))
    }

    /// The region files of the directory (not those removed from this view).
    fn files(&self) -> Result<Vec<String>> {
        let rd = std::fs::read_dir(&self.dir)
            .context(|| format!("listing PM directory {}", self.dir.display()))?;
        let removed = self.removed.lock();
        let mut names = Vec::new();
        for entry in rd {
            let entry = entry.context(|| format!("listing PM directory {}", self.dir.display()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let is_file = entry.file_type().map(|t| t.is_file()).unwrap_or(false);
            if is_file && !super::mmap::is_device_work_file(&name) && !removed.contains(&name) {
                names.push(name);
            }
        }
        Ok(names)
    }
}

impl PmDevice for PrivatePmDevice {
    fn mode(&self) -> PmMode {
        PmMode::ReadOnlyView
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn create_region(&self, name: &str, size: usize) -> Result<Arc<dyn PmRegion>> {
        self.removed.lock().remove(name);
        self.regions.create_region(name, size)
    }

    fn open_region(&self, name: &str) -> Result<Arc<dyn PmRegion>> {
        if self.regions.has(name) {
            return self.regions.open_region(name);
        }
        if self.removed.lock().contains(name) {
            return Err(Error::InvalidState(format!(
                "PM region {} was removed",
                self.dir.join(name).display()
            )));
        }
        self.adopt_file(name)
    }

    fn remove_region(&self, name: &str) -> Result<()> {
        self.regions.remove_region(name)?;
        self.removed.lock().insert(name.to_string());
        Ok(())
    }

    fn rename_region(&self, from: &str, to: &str) -> Result<()> {
        self.open_region(from)?;
        self.regions.rename_region(from, to)?;
        let mut removed = self.removed.lock();
        removed.insert(from.to_string());
        removed.remove(to);
        Ok(())
    }

    fn list_regions(&self) -> Result<Vec<String>> {
        let mut names: BTreeSet<String> = self.files()?.into_iter().collect();
        names.extend(self.regions.list_regions()?);
        Ok(names.into_iter().collect())
    }

    fn sync_dir(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_to_a_private_view_never_reach_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("000001.pmlog"), [7u8; 4096]).unwrap();
        let dev = PrivatePmDevice::open(dir.path()).unwrap();
        let r = dev.open_region("000001.pmlog").unwrap();
        assert_eq!(r.read(0, 4), &[7u8; 4][..]);
        r.write(0, &[1, 2, 3, 4]);
        r.persist(0, 4).unwrap();
        assert_eq!(
            dev.open_region("000001.pmlog").unwrap().read(0, 4),
            &[1, 2, 3, 4][..]
        );
        dev.create_region("000002.pmlog", 4096).unwrap();
        dev.rename_region("000001.pmlog", "000003.pmlog").unwrap();
        dev.remove_region("000002.pmlog").unwrap();
        assert_eq!(
            dev.list_regions().unwrap(),
            vec!["000003.pmlog".to_string()]
        );
        let on_disk: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(on_disk, vec![std::ffi::OsString::from("000001.pmlog")]);
        assert_eq!(
            std::fs::read(dir.path().join("000001.pmlog")).unwrap(),
            vec![7u8; 4096]
        );
    }
}
