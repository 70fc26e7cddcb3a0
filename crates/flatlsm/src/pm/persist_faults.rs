//! Test-only [`PersistFaults`]: a simulated PM device whose persists fail with EIO once a budget
//! is used up (as a failing `msync` would), for tests of what a failed step leaves behind.

use super::simulated::SimulatedPmDevice;
use super::{PmDevice, PmMode, PmRegion};
use crate::error::Result;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A [`SimulatedPmDevice`] whose persists fail after `budget` successful ones.
pub(crate) struct PersistFaults {
    /// The device underneath (inspect its regions with `region_names`).
    pub inner: Arc<SimulatedPmDevice>,
    budget: Arc<AtomicU64>,
}

impl PersistFaults {
    /// A fresh device on which `budget` persists succeed and every later one fails.
    pub fn new(budget: u64) -> Self {
        PersistFaults {
            inner: SimulatedPmDevice::new(),
            budget: Arc::new(AtomicU64::new(budget)),
        }
    }

    /// From now on, `budget` more persists succeed and every later one fails.
    pub fn set_budget(&self, budget: u64) {
        self.budget.store(budget, Ordering::SeqCst);
    }

    fn wrap(&self, inner: Arc<dyn PmRegion>) -> Arc<dyn PmRegion> {
        let budget = self.budget.clone();
        Arc::new(FaultyRegion { inner, budget })
    }
}

impl PmDevice for PersistFaults {
    fn mode(&self) -> PmMode {
        self.inner.mode()
    }
    fn dir(&self) -> &Path {
        self.inner.dir()
    }
    fn create_region(&self, name: &str, size: usize) -> Result<Arc<dyn PmRegion>> {
        self.inner.create_region(name, size).map(|r| self.wrap(r))
    }
    fn open_region(&self, name: &str) -> Result<Arc<dyn PmRegion>> {
        self.inner.open_region(name).map(|r| self.wrap(r))
    }
    fn remove_region(&self, name: &str) -> Result<()> {
        self.inner.remove_region(name)
    }
    fn list_regions(&self) -> Result<Vec<String>> {
        self.inner.list_regions()
    }
    fn sync_dir(&self) -> Result<()> {
        self.inner.sync_dir()
    }
}

struct FaultyRegion {
    inner: Arc<dyn PmRegion>,
    budget: Arc<AtomicU64>,
}

impl PmRegion for FaultyRegion {
    fn path(&self) -> &Path {
        self.inner.path()
    }
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn mode(&self) -> PmMode {
        self.inner.mode()
    }
    fn read(&self, offset: usize, len: usize) -> &[u8] {
        self.inner.read(offset, len)
    }
    fn write(&self, offset: usize, data: &[u8]) {
        self.inner.write(offset, data)
    }
    fn store_u64(&self, offset: usize, value: u64) {
        self.inner.store_u64(offset, value)
    }
    fn load_u64(&self, offset: usize) -> u64 {
        self.inner.load_u64(offset)
    }
    fn persist(&self, offset: usize, len: usize) -> io::Result<()> {
        let spent = self
            .budget
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |b| b.checked_sub(1));
        match spent {
            Ok(_) => self.inner.persist(offset, len),
            Err(_) => Err(io::Error::from_raw_os_error(libc::EIO)),
        }
    }
}
