//! [`DramPmDevice`]: "PM regions" in plain DRAM, for designs whose write buffer is made durable
//! by a write-ahead log instead (the RocksDB-style `leveled` profile's memtable). Nothing here
//! survives the process, by design: the device is never used where PM's durability is relied
//! on, and `persist` is a no-op. Regions live in a name → region map of this process, so the
//! PM Log pool can recycle them (rename) as it does on a real device.
//!
//! Thread-safety: the device and its regions are `Send + Sync`; the byte-level contract of
//! [`PmRegion`] (no concurrent write to a range being read) is the caller's, as on PM.

use super::raw::RawMapping;
use super::{PmDevice, PmMode, PmRegion};
use crate::error::{Error, Result};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A region of DRAM (zero-filled on creation).
pub struct DramRegion {
    path: PathBuf,
    map: RawMapping,
}

impl PmRegion for DramRegion {
    fn path(&self) -> &Path {
        &self.path
    }

    fn len(&self) -> usize {
        self.map.len()
    }

    fn mode(&self) -> PmMode {
        PmMode::Dram
    }

    fn read(&self, offset: usize, len: usize) -> &[u8] {
        self.map.read(offset, len)
    }

    fn write(&self, offset: usize, data: &[u8]) {
        self.map.write(offset, data)
    }

    fn store_u64(&self, offset: usize, value: u64) {
        self.map.store_u64(offset, value)
    }

    fn load_u64(&self, offset: usize) -> u64 {
        self.map.load_u64(offset)
    }

    fn persist(&self, _offset: usize, _len: usize) -> io::Result<()> {
        Ok(()) // DRAM: durability comes from the write-ahead log.
    }
}

/// A device whose regions are DRAM buffers of this process.
pub struct DramPmDevice {
    /// A label for messages (no directory exists).
    label: PathBuf,
    regions: Mutex<BTreeMap<String, Arc<DramRegion>>>,
}

impl DramPmDevice {
    /// A new, empty device; `label` names it in messages (e.g. `<db>/[dram]`).
    pub fn new(label: impl Into<PathBuf>) -> Arc<DramPmDevice> {
        Arc::new(DramPmDevice {
            label: label.into(),
            regions: Mutex::new(BTreeMap::new()),
        })
    }

    /// Adds `map` as region `name` (a private copy of a file, `pm/private.rs`).
    pub(crate) fn adopt(&self, name: &str, map: RawMapping) -> Arc<dyn PmRegion> {
        let region = Arc::new(DramRegion {
            path: self.label.join(name),
            map,
        });
        self.regions.lock().insert(name.to_string(), region.clone());
        region
    }

    /// True if region `name` exists.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.regions.lock().contains_key(name)
    }

    fn missing(&self, name: &str) -> Error {
        Error::InvalidState(format!(
            "DRAM region {name} of {} does not exist (DRAM holds nothing across a restart)",
            self.label.display()
        ))
    }
}

impl PmDevice for DramPmDevice {
    fn mode(&self) -> PmMode {
        PmMode::Dram
    }

    fn dir(&self) -> &Path {
        &self.label
    }

    fn create_region(&self, name: &str, size: usize) -> Result<Arc<dyn PmRegion>> {
        let mut regions = self.regions.lock();
        if regions.contains_key(name) {
            return Err(Error::InvalidArgument(format!(
                "DRAM region {name} of {} already exists",
                self.label.display()
            )));
        }
        let region = Arc::new(DramRegion {
            path: self.label.join(name),
            map: RawMapping::anonymous(size),
        });
        regions.insert(name.to_string(), region.clone());
        Ok(region)
    }

    fn open_region(&self, name: &str) -> Result<Arc<dyn PmRegion>> {
        let regions = self.regions.lock();
        let region = regions.get(name).ok_or_else(|| self.missing(name))?;
        Ok(region.clone())
    }

    fn remove_region(&self, name: &str) -> Result<()> {
        self.regions.lock().remove(name);
        Ok(())
    }

    fn rename_region(&self, from: &str, to: &str) -> Result<()> {
        let mut regions = self.regions.lock();
        if regions.contains_key(to) {
            return Err(Error::InvalidArgument(format!(
                "DRAM region {to} of {} already exists",
                self.label.display()
            )));
        }
        let region = regions.remove(from).ok_or_else(|| self.missing(from))?;
        regions.insert(to.to_string(), region);
        Ok(())
    }

    fn list_regions(&self) -> Result<Vec<String>> {
        Ok(self.regions.lock().keys().cloned().collect())
    }

    fn sync_dir(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_are_created_zeroed_renamed_and_removed_in_memory() {
        let dev = DramPmDevice::new("/db/[dram]");
        let r = dev.create_region("000001.pmlog", 4096).unwrap();
        assert_eq!((r.len(), r.read(0, 8)), (4096, &[0u8; 8][..]));
        r.store_u64(8, 42);
        assert!(dev.create_region("000001.pmlog", 64).is_err());
        dev.rename_region("000001.pmlog", "000002.pmlog").unwrap();
        assert_eq!(dev.open_region("000002.pmlog").unwrap().load_u64(8), 42);
        assert!(dev.open_region("000001.pmlog").is_err());
        assert_eq!(
            dev.list_regions().unwrap(),
            vec!["000002.pmlog".to_string()]
        );
        dev.remove_region("000002.pmlog").unwrap();
        assert!(dev.list_regions().unwrap().is_empty());
        assert_eq!(dev.mode(), PmMode::Dram);
    }
}
