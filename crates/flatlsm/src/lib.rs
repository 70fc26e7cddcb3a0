//! FlatLSM: a write-optimized LSM-tree key-value store for machines with DRAM, persistent memory
//! (PM) and SSD, after "FlatLSM: Write-Optimized LSM-Tree for PM-Based KV Stores" (ACM TOS 2023).
//!
//! Architecture (one folder per concept):
//! - [`pm`]: PM regions and persistence (DAX flush, msync, DRAM emulation, crash simulation).
//! - [`pmtable`]: PMTables, a DRAM index over a PM Log with a DRAM Buffer Log; they are L0.
//! - [`sst`]: SSTables of the Ordered-L1 and L2 on SSD.
//! - [`vlog`]: value logs for key-value separation.
//! - [`version`]: versions of the SSD tree and the manifest that records them.
//! - [`compaction`]: parallel flush/compaction with KV separation, L1→L2, value-log GC.
//! - [`db`]: the public database: write path, read path, background work.
//! - [`fs`]: file I/O traits (so tests can inject faults).
//! - [`file_names`]: which numbered file a database-directory name is.
//! - [`inspect`]: read-only checks and dumps of database files (the CLI's `check` and `dump`).

mod buffer;
pub mod compaction;
pub mod db;
pub mod designs;
#[doc(hidden)]
pub mod fuzz_api;
pub mod inspect;
pub mod pmtable;
mod values;

pub use error::{Error, Result};
#[cfg(test)]
use flatlsm_core::testing;
pub use flatlsm_core::{
    error, file_names, fs, iter, pm, pmskiplist, sst, types, version, vlog, wal,
};
pub mod options;

pub use db::{Db, Stats, WriteBatch};
pub use designs::leveled::LeveledOptions;
pub use designs::Profile;
pub use options::{Options, Placement, PmModeOption, ReadOptions, Snapshot, WriteOptions};
