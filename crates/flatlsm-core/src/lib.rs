//! FlatLSM's building blocks: everything the storage designs share and nothing that knows about
//! any one of them. A module here never names a design, a write buffer, a compaction policy or
//! the database handle; being a separate crate makes an upward import a compile error.
//!
//! - [`error`], [`types`]: the error type and internal keys, sequence numbers, value pointers.
//! - [`file_names`]: which numbered file a database-directory name is.
//! - [`fs`]: file I/O traits for the SSD tier (so tests can inject faults), O_DIRECT writers.
//! - [`pm`]: PM regions and persistence (DAX flush, msync, DRAM emulation, crash simulation).
//! - [`pmskiplist`]: a persistent skiplist in a PM region (NoveLSM's and SLM-DB's memtable).
//! - [`range_del`]: range tombstones (`delete_range`) and their fragmented lookup.
//! - [`rowtable`]: RowTables in the pages of a PM matrix container, with cross-row hint search
//!   (MatrixKV's level 0).
//! - [`compression`]: LZ4 and zstd block compression (SST data blocks).
//! - [`sst`]: SSTables (blocks, bloom filters, block cache, table cache).
//! - [`vlog`]: value logs for key-value separation and their GC redirect tables.
//! - [`version`]: versions of the SSD tree (levels of files) and the manifest that records them;
//!   a design's own state rides in a version as an opaque extension (`version::extension`).
//! - [`wal`]: write-ahead logs of write buffers kept in DRAM.
//! - [`iter`]: internal iterators (merging, level concatenation) and the user-facing iterator.
//! - [`histogram`]: lock-free latency histograms (the engine's per-operation statistics).
//!
//! Test doubles (crash-simulating and fault-injecting file systems, the simulated PM device)
//! are compiled only with the `test-support` feature.
//!
//! Layers, bottom first: `error` < `types` < `counter` < `coding` < `file_names` <
//! `range_del` < `histogram` < `pm` < `fs` < `compression` < `iter` < `sst` < `version` <
//! `vlog` < `wal` < `pmskiplist` < `pmbtree` < `rowtable` < `testing`.
//!
//! A module imports only modules before it in this list (its own tests aside);
//! `crates/flatlsm/tests/layers.rs` checks every `crate::` path of both crates against the
//! lists, so an upward import fails the default tests.

pub(crate) mod coding;
pub mod compression;
pub mod counter;
pub mod error;
pub mod file_names;
pub mod fs;
pub mod histogram;
pub mod iter;
pub mod pm;
pub mod pmbtree;
pub mod pmskiplist;
pub mod range_del;
pub mod rowtable;
pub mod sst;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;
pub mod types;
pub mod version;
pub mod vlog;
pub mod wal;

pub use error::{Error, Result};
