//! The persistent-memory tier: regions of PM mapped into the address space, and how they are
//! made durable.
//!
//! A [`PmDevice`] is a directory of PM regions (one file each). Three real modes exist:
//! - [`PmMode::Dax`]: the directory is on a DAX file system (`mmap(MAP_SYNC)` succeeds);
//!   persist = cache-line write-back (clwb, else clflushopt, else clflush) + sfence.
//! - [`PmMode::Msync`]: an ordinary file system; persist = `msync` of the covering pages.
//! - [`PmMode::Emulated`]: a DRAM-backed tmpfs (e.g. /dev/shm) that the user explicitly asked
//!   for; persist = flush + fence plus an optional injected latency per cache line. A reboot
//!   loses its contents, and the engine says so when it opens one.
//!
//! [`PmMode::Dram`] ([`DramPmDevice`]) holds write buffers in plain DRAM for designs that make
//! them durable with a write-ahead log instead.
//!
//! [`PmMode::Simulated`] is a test backend that keeps persisted and unpersisted cache lines
//! apart so a test can "pull the plug" and keep only what a real power loss could leave.
//!
//! Thread-safety: regions are shared (`Send + Sync`). The byte-level contract of
//! [`PmRegion::read`]/[`PmRegion::write`] (no concurrent write to a range being read) is upheld
//! by the append-only PM Log: readers read only below the published tail, the single writer
//! writes only above it.

pub mod arena;
pub mod dram;
pub mod mmap;
pub mod private;
pub(crate) mod raw;
pub use raw::{prefetch, prefetch_read, try_lock_posix};
#[cfg(any(test, feature = "test-support"))]
pub mod simulated;

pub use arena::{PmArena, PmSpan};
pub use dram::DramPmDevice;
pub use mmap::{MmapPmDevice, MmapPmRegion, PmModeRequest};
#[cfg(any(test, feature = "test-support"))]
pub use simulated::{SimulatedPmDevice, SimulatedPmRegion};

use crate::error::{Error, Result};
use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// Size of a CPU cache line, the unit of PM persistence.
pub const CACHE_LINE: usize = 64;

/// How a PM region is made durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PmMode {
    /// Real persistent memory on a DAX mount: cache-line flush + fence.
    Dax,
    /// An ordinary file: `msync` of the covering pages.
    Msync,
    /// PM emulated in DRAM (tmpfs) with flush + fence and an injected latency per cache line.
    Emulated {
        /// Spin time after each persisted cache line, in nanoseconds.
        write_latency_ns: u64,
        /// Spin time per cache line a read touches, in nanoseconds.
        read_latency_ns: u64,
    },
    /// In-memory test backend that can simulate a power failure.
    Simulated,
    /// Plain DRAM, never durable: only for write buffers a write-ahead log protects
    /// ([`DramPmDevice`]).
    Dram,
    /// A read-only open's copy-on-write view of a PM directory ([`private::PrivatePmDevice`]):
    /// reads see the device, nothing is ever written to it.
    ReadOnlyView,
}

impl PmMode {
    /// True when `persist` is cheap enough to run on every large write (not an msync).
    pub fn persists_by_cache_line(&self) -> bool {
        !matches!(self, PmMode::Msync)
    }
}

impl fmt::Display for PmMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PmMode::Dax => write!(f, "dax (cache-line flush + fence)"),
            PmMode::Msync => write!(f, "msync (ordinary file)"),
            PmMode::Emulated {
                write_latency_ns,
                read_latency_ns,
            } => write!(
                f,
                "emulated in DRAM (flush + fence, {write_latency_ns} ns per written line, \
                 {read_latency_ns} ns per read line; lost at reboot)"
            ),
            PmMode::Simulated => write!(f, "simulated (test backend)"),
            PmMode::Dram => write!(f, "DRAM (not durable; a write-ahead log protects it)"),
            PmMode::ReadOnlyView => write!(f, "read-only view (copy-on-write; nothing written)"),
        }
    }
}

/// A fixed-size region of PM, mapped into memory.
pub trait PmRegion: Send + Sync {
    /// The file backing the region (for error messages).
    fn path(&self) -> &Path;
    /// Size of the region in bytes.
    fn len(&self) -> usize;
    /// True if the region has no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// How `persist` works for this region.
    fn mode(&self) -> PmMode;
    /// The bytes `[offset, offset + len)`. Contract: no concurrent `write` to that range.
    /// Panics if the range is outside the region (a caller bug, not bad input).
    fn read(&self, offset: usize, len: usize) -> &[u8];
    /// Copies `data` to `offset` (not yet durable). Contract: the caller owns the range
    /// exclusively (no concurrent reader or writer of it).
    fn write(&self, offset: usize, data: &[u8]);
    /// Like [`PmRegion::write`], but large copies may bypass the CPU caches (non-temporal
    /// stores, as PMDK's `pmem_memcpy` does), so streaming values into PM neither evicts the
    /// writer's hot data nor leaves dirty lines to flush. Such bytes are ordered before later
    /// stores (and visible to other threads that synchronise with those) only after
    /// [`PmRegion::drain_streaming`]. Same contract as `write`.
    fn write_streaming(&self, offset: usize, data: &[u8]) {
        self.write(offset, data)
    }
    /// Orders every earlier [`PmRegion::write_streaming`] before later stores (`sfence`).
    fn drain_streaming(&self) {}
    /// Atomic 8-byte store at an 8-aligned offset (not yet durable).
    fn store_u64(&self, offset: usize, value: u64);
    /// Atomic 8-byte load at an 8-aligned offset.
    fn load_u64(&self, offset: usize) -> u64;
    /// Makes `[offset, offset + len)` durable; returns after it is.
    fn persist(&self, offset: usize, len: usize) -> io::Result<()>;
}

/// A directory of PM regions.
pub trait PmDevice: Send + Sync {
    /// The mode every region of this device uses.
    fn mode(&self) -> PmMode;
    /// The directory (for messages).
    fn dir(&self) -> &Path;
    /// Creates a zero-filled region of `size` bytes named `name` (fails if it exists).
    fn create_region(&self, name: &str, size: usize) -> Result<Arc<dyn PmRegion>>;
    /// Maps an existing region.
    fn open_region(&self, name: &str) -> Result<Arc<dyn PmRegion>>;
    /// Deletes a region (its mapping stays valid for holders of the `Arc`).
    fn remove_region(&self, name: &str) -> Result<()>;
    /// Gives region `from` the name `to` (which must not exist), durably on return. Mappings of
    /// it stay valid and keep their pages (used to recycle PM Logs without re-faulting them).
    fn rename_region(&self, from: &str, to: &str) -> Result<()>;
    /// Names of the regions present, sorted.
    fn list_regions(&self) -> Result<Vec<String>>;
    /// True if region `name` is present.
    fn has_region(&self, name: &str) -> Result<bool> {
        Ok(self.list_regions()?.iter().any(|n| n == name))
    }
    /// Makes creations and removals of regions durable (directory sync).
    fn sync_dir(&self) -> Result<()>;
}

/// True if `dir` lies on a DRAM-backed file system (tmpfs, ramfs): what is written there is
/// lost at reboot. False when it cannot be told.
pub fn is_dram_backed(dir: &Path) -> bool {
    raw::fs_magic(dir).is_ok_and(|m| m == raw::TMPFS_MAGIC || m == raw::RAMFS_MAGIC)
}

/// Shared handle to a PM device.
pub type PmDeviceRef = Arc<dyn PmDevice>;

/// Removes region `name`, which a step that then failed had created, and returns that step's
/// error `cause`: a leftover would hold PM until the next open, one more region per retry. If
/// the removal fails too it is only logged; recovery deletes such a region (its log header or
/// its GC was never completed).
pub fn discard_region(device: &dyn PmDevice, name: &str, cause: Error) -> Error {
    if let Err(e) = device.remove_region(name) {
        log::warn!("removing PM region {name} after a failed step: {e}");
    }
    cause
}
