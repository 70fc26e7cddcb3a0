//! FlatLSM: a write-optimized LSM-tree key-value store for machines with DRAM, persistent memory
//! (PM) and SSD, after "FlatLSM: Write-Optimized LSM-Tree for PM-Based KV Stores" (ACM TOS 2023).
//!
//! ```
//! use flatlsm::{Db, Options, ReadOptions, WriteOptions};
//! # fn main() -> flatlsm::Result<()> {
//! let dir = tempfile::tempdir().unwrap();
//! let mut opts = Options::default();
//! opts.pm_path = Some(dir.path().join("pm")); // ordinary files, persisted with msync
//! let db = Db::open(dir.path().join("db"), opts)?;
//! db.put(b"key", b"value")?;
//! assert_eq!(db.get(b"key")?, Some(b"value".to_vec()));
//! db.close()?;
//! # Ok(())
//! # }
//! ```
//!
//! The public API is the list of `pub use` items below plus three modules: [`options`] (every
//! knob and its limits), [`inspect`] (offline `check` and `dump` of database files) and the
//! storage seams [`fs`] and [`pm`] (bring your own file system or PM device). Everything else is
//! internal; the building blocks live in the `flatlsm-core` crate. The architecture is described
//! in `docs/architecture.md`:
//! - `snapshot`: snapshot handles and the registry of open ones.
//! - `options`: every knob, the [`Profile`] and each design's option struct.
//! - `observe`: the info log, statistics, latency histograms and properties.
//! - `pmtable`: PMTables, a DRAM index over a PM Log with a DRAM Buffer Log; they are L0.
//! - `buffer`: the write buffers of every design (PMTable, DRAM memtable + WAL, PM skiplist),
//!   and their rebuild at open from what recovery kept.
//! - `values`: resolving value pointers into the value logs.
//! - `layout`: where a database's files live: data and PM directories, the PM device, LOCK,
//!   IDENTITY.
//! - `compaction`: one job type, a context it runs against, and one pure policy per design.
//! - `designs`: one room per design (FlatLSM, leveled, NoveLSM, MatrixKV, SLM-DB): what it
//!   recovers and builds.
//! - `db`: the database handle: write path, read path, stalls, the shared state.
//! - `jobs`: background work: flushes, compactions, value-log GC, checkpoints.
//! - `recovery`: opening a database: the manifest, which write buffers are kept or refused,
//!   consistency checks.
//! - `repair`: rebuilding a manifest from whatever files are readable (`repair`).
//! - `inspect`: offline `check` and `dump`; `kv_lines`, `fuzz_api` and `tool_support` (hidden,
//!   not part of the API) serve the tools and tests.
//!
//! Layers, bottom first (the building blocks of `flatlsm-core` below them all): `snapshot` <
//! `options` < `observe` < `pmtable` < `buffer` < `values` < `layout` < `compaction` <
//! `designs` < `db` < `jobs` < `recovery` < `repair` < `inspect` < `kv_lines` < `fuzz_api` < `tool_support`.
//!
//! A module imports only modules before it in this list (its own tests aside);
//! `tests/layers.rs` checks every `crate::` path against it, so an upward import fails the
//! default tests.

mod buffer;
mod compaction;
mod db;
mod designs;
#[doc(hidden)]
pub mod fuzz_api;
pub mod inspect;
mod jobs;
#[doc(hidden)]
pub mod kv_lines;
mod layout;
mod observe;
pub mod options;
mod pmtable;
mod recovery;
mod repair;
mod snapshot;
#[doc(hidden)]
pub mod tool_support;
mod values;

/// The file-system seam: every file the engine touches goes through a [`fs::FileSystem`]
/// (see [`Options::file_system`]). The traits and the production file system only; test
/// doubles (crash-simulating and fault-injecting file systems) are in `flatlsm_core::fs` with
/// its `test-support` feature.
pub mod fs {
    pub use flatlsm_core::fs::{
        DirectFile, FileSystem, FsRef, OsFileSystem, RandomAccessFile, WritableFile,
    };
    // The engine itself uses the whole module; only the names above are public.
    #[allow(unused_imports)]
    pub(crate) use flatlsm_core::fs::*;
}

/// The PM seam: regions of persistent memory and how they are made durable (see
/// [`Options::pm_device`] and [`Options::pm_mode`]). The traits and the production devices
/// only (a file or DAX mapping, DRAM); the simulated crash-testing device is in
/// `flatlsm_core::pm::simulated` with its `test-support` feature.
pub mod pm {
    pub use flatlsm_core::pm::{
        DramPmDevice, MmapPmDevice, PmDevice, PmDeviceRef, PmMode, PmModeRequest, PmRegion,
    };
    // The engine itself uses the whole module; only the names above are public.
    #[allow(unused_imports)]
    pub(crate) use flatlsm_core::pm::*;
}
#[cfg(test)]
use flatlsm_core::testing;
use flatlsm_core::{
    error, file_names, histogram, iter, pmbtree, pmskiplist, range_del, rowtable, sst, types,
    version, vlog, wal,
};

pub use db::prefix_end;
pub use db::{BlockCacheStats, BloomStats, LatencyStats, LatencySummary, LATENCY_OPERATIONS};
pub use db::{Db, LevelStats, Stats, StoreCompactionStat, VlogStats, WriteBatch, PROPERTY_NAMES};
pub use designs::profile_of;
pub use error::{Error, Result};
pub use iter::DbIterator;
pub use jobs::CheckpointOptions;
pub use options::{
    load_options, Compression, LeveledOptions, MatrixKvOptions, Options, Placement, PmModeOption,
    Profile, ReadOptions, SlmDbOptions, Snapshot, WriteOptions,
};
pub use repair::{repair, RepairReport, LOST_DIR};
pub use types::SequenceNumber;
