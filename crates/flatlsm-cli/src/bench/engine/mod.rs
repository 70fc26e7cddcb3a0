//! The storage engines a benchmark can drive: FlatLSM, and (feature `rocksdb`) RocksDB in
//! process. Both see the same keys, values and operation mix.

mod flatlsm_engine;
#[cfg(test)]
mod mem_engine;
#[cfg(feature = "rocksdb")]
mod rocksdb_engine;

pub use flatlsm_engine::FlatLsmEngine;
#[cfg(test)]
pub use mem_engine::MemEngine;
#[cfg(feature = "rocksdb")]
pub use rocksdb_engine::{RocksDbEngine, RocksDbSetup};

/// Counters an engine reports after a benchmark.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineStats {
    /// Microseconds writers spent stopped or delayed (slowdown) by the engine.
    pub stall_micros: u64,
    /// Bytes of keys and values the user wrote.
    pub user_bytes: u64,
    /// Bytes the engine wrote to SSD (flush, compaction, value logs, manifest).
    pub ssd_bytes: u64,
    /// Bytes written to PM (PM Logs; RocksDB: WAL bytes when the WAL is on PM).
    pub pm_bytes: u64,
    /// Bytes flushes wrote (FlatLSM: SSTs and value logs; RocksDB: `rocksdb.flush.write.bytes`,
    /// blob files included with integrated BlobDB).
    pub flush_bytes: u64,
    /// Time flushes took (FlatLSM: `Stats::flush_micros`; RocksDB: the sum of the
    /// `rocksdb.db.flush.micros` histogram).
    pub flush_micros: u64,
}

/// Bytes in one MB of the MB/s figures (db_bench's MB).
const MB: f64 = 1_048_576.0;

impl EngineStats {
    /// The counters of one benchmark: the stall and flush figures since `before` (the counters
    /// when it started); byte totals stay cumulative, as write amplification is reported over
    /// everything written since the database was created.
    pub fn since(mut self, before: &EngineStats) -> EngineStats {
        self.stall_micros = self.stall_micros.saturating_sub(before.stall_micros);
        self.flush_bytes = self.flush_bytes.saturating_sub(before.flush_bytes);
        self.flush_micros = self.flush_micros.saturating_sub(before.flush_micros);
        self
    }

    /// Flush throughput: bytes flushed / time flushing, in MB/s (`None` without a flush).
    pub fn flush_mb_per_sec(&self) -> Option<f64> {
        (self.flush_micros > 0)
            .then(|| self.flush_bytes as f64 / MB / (self.flush_micros as f64 / 1e6))
    }

    /// SSD bytes written / user bytes (0 before any write).
    pub fn write_amplification(&self) -> f64 {
        if self.user_bytes == 0 {
            0.0
        } else {
            self.ssd_bytes as f64 / self.user_bytes as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_benchmark_stats_subtract_stall_and_flush_figures_only() {
        let before = EngineStats {
            stall_micros: 5,
            user_bytes: 100,
            flush_bytes: 1 << 20,
            flush_micros: 1_000_000,
            ..EngineStats::default()
        };
        let after = EngineStats {
            stall_micros: 7,
            user_bytes: 300,
            flush_bytes: 5 << 20,
            flush_micros: 3_000_000,
            ..EngineStats::default()
        };
        let b = after.since(&before);
        assert_eq!((b.stall_micros, b.user_bytes), (2, 300));
        assert_eq!(b.flush_mb_per_sec(), Some(2.0));
        assert_eq!(EngineStats::default().flush_mb_per_sec(), None);
    }
}

/// Which way an ordered scan walks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Ascending key order.
    Forward,
    /// Descending key order.
    Reverse,
}

/// One key-value engine under test. Shared by all worker threads of a benchmark.
pub trait Engine: Sync {
    /// Short name for tables and plots ("FlatLSM", "RocksDB").
    fn name(&self) -> String;
    /// A one-line description of the setup (PM mode, directories).
    fn describe(&self) -> String;
    /// Writes one key.
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String>;
    /// Reads one key.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, String>;
    /// Walks up to `limit` entries from `start` (or the first/last key), calling `visit` with
    /// each entry's size in bytes until it returns false; returns the entries visited.
    fn scan(
        &self,
        start: Option<&[u8]>,
        dir: Direction,
        limit: u64,
        visit: &mut dyn FnMut(usize) -> bool,
    ) -> Result<u64, String>;
    /// Current counters.
    fn stats(&self) -> EngineStats;
    /// Engine-specific counters in db_bench's ticker format (`name COUNT : n`).
    fn tickers(&self) -> Vec<(String, u64)>;
    /// Blocks until no flush or compaction is due.
    fn wait_for_background_work(&self) -> Result<(), String>;
    /// Closes and reopens the database (recovery), returning how long the reopen took.
    fn reopen(&mut self) -> Result<std::time::Duration, String>;
    /// Bytes of write buffers recovery has to make usable again (FlatLSM: PMTables on PM),
    /// if the engine reports it.
    fn recovery_bytes(&self) -> Option<u64>;
    /// Closes the database.
    fn close(&mut self) -> Result<(), String>;
    /// Flushes every write buffer (FlatLSM: all PMTables) to SSD; returns the bytes they held.
    fn flush_pmtables(&self) -> Result<u64, String> {
        Err(format!("{} cannot run the flush benchmark", self.name()))
    }
}
