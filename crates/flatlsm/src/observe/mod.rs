//! Observability: what the engine reports about itself, below the jobs and the database
//! handle that report into it. The info log (`LOG`, LevelDB's format), the counters behind
//! [`Stats`], the latency histograms of every operation, and the named properties
//! (RocksDB-style `flatlsm.*` strings over a [`Stats`] snapshot).
//!
//! Layering: imports only the building blocks and `options`; `compaction`, `designs` and `db`
//! all write into it, so it can never import them.

pub(crate) mod info_log;
pub(crate) mod latency;
pub(crate) mod properties;
pub(crate) mod stats;

pub use latency::{LatencyStats, LatencySummary};
pub use properties::{LATENCY_OPERATIONS, PROPERTY_NAMES};
pub use stats::{BlockCacheStats, BloomStats, LevelStats, Stats, StoreCompactionStat, VlogStats};
