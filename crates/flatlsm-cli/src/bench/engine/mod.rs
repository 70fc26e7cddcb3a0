//! The storage engines a benchmark can drive: FlatLSM, and (feature `rocksdb`) RocksDB in
//! process. Both see the same keys, values and operation mix.

mod breakdown;
mod flatlsm_engine;
#[cfg(test)]
mod mem_engine;
#[cfg(feature = "rocksdb")]
mod rocksdb_engine;

pub use breakdown::WriteBreakdown;
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
    /// Compactions out of a design's level-0 store (matrixkv's column compactions), oldest
    /// first: (finished, ms since the Unix epoch; duration µs; store bytes merged).
    pub store_compactions: Vec<(u64, u64, u64)>,
    /// When these counters were read, ms since the Unix epoch (places the compactions on the
    /// benchmark's clock; 0 where unknown).
    pub taken_ms: u64,
    /// Bytes of the live SST files (FlatLSM: every level; RocksDB: `total-sst-files-size`).
    pub sst_file_bytes: u64,
    /// Bytes of the value files (FlatLSM's value logs, RocksDB's blob files): in total, and
    /// those still referenced (the rest is garbage a GC has yet to reclaim).
    pub value_file_bytes: u64,
    /// See `value_file_bytes`.
    pub live_value_bytes: u64,
    /// Where foreground writes spent their time (stall, WAL, memtable data and index).
    pub breakdown: WriteBreakdown,
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
        self.breakdown = self.breakdown.since(&before.breakdown);
        let earlier = before
            .store_compactions
            .len()
            .min(self.store_compactions.len());
        self.store_compactions.drain(..earlier);
        self
    }

    /// `  column compactions: ...` (count, mean and largest size and duration), if any ran.
    pub fn store_compaction_line(&self) -> Option<String> {
        let c = &self.store_compactions;
        let n = c.len() as f64;
        let max_mb = c.iter().map(|x| x.2).max()? as f64 / MB;
        let mean_mb = c.iter().map(|x| x.2 as f64).sum::<f64>() / n / MB;
        let max_ms = c.iter().map(|x| x.1).max()? as f64 / 1e3;
        let mean_ms = c.iter().map(|x| x.1 as f64).sum::<f64>() / n / 1e3;
        Some(format!(
            "  column compactions: {} | rows {mean_mb:.1} MB each (max {max_mb:.1}) | {mean_ms:.0} ms each (max {max_ms:.0})\n",
            c.len()
        ))
    }

    /// `  files (MiB): SSTs ... | value files ... (live ..., garbage ...%)`, if the engine has
    /// files.
    pub fn files_line(&self) -> Option<String> {
        let mib = |b: u64| b as f64 / MB;
        let total = self.sst_file_bytes + self.value_file_bytes;
        let garbage = self.value_file_bytes.saturating_sub(self.live_value_bytes);
        let pct = 100.0 * garbage as f64 / self.value_file_bytes.max(1) as f64;
        (total > 0).then(|| {
            format!(
                "  files (MiB): SSTs {:.1} | value files {:.1} (live {:.1}, garbage {pct:.0}%)\n",
                mib(self.sst_file_bytes),
                mib(self.value_file_bytes),
                mib(self.live_value_bytes)
            )
        })
    }

    /// Flush throughput: bytes flushed / time flushing, in MB/s (`None` without a flush).
    pub fn flush_mb_per_sec(&self) -> Option<f64> {
        (self.flush_micros > 0)
            .then(|| self.flush_bytes as f64 / MB / (self.flush_micros as f64 / 1e6))
    }

    /// The store compactions on the clock of a benchmark that ran `wall_seconds` until these
    /// counters were read: (start s, end s, MB merged).
    pub fn store_compaction_spans(&self, wall_seconds: f64) -> Vec<(f64, f64, f64)> {
        let start_ms = self.taken_ms as f64 - wall_seconds * 1e3;
        let span = |&(finished, micros, bytes): &(u64, u64, u64)| {
            let end = (finished as f64 - start_ms) / 1e3;
            (end - micros as f64 / 1e6, end, bytes as f64 / MB)
        };
        self.store_compactions.iter().map(span).collect()
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

    #[test]
    fn column_compactions_are_summarised_per_benchmark() {
        let before = EngineStats {
            store_compactions: vec![(1, 9_000_000, 1 << 30)],
            ..EngineStats::default()
        };
        let after = EngineStats {
            store_compactions: vec![
                (1, 9_000_000, 1 << 30),
                (2, 2_000, 2 << 20),
                (3, 4_000, 4 << 20),
            ],
            ..EngineStats::default()
        };
        let line = after.since(&before).store_compaction_line().unwrap();
        assert!(
            line.contains("column compactions: 2 | rows 3.0 MB each (max 4.0) | 3 ms each (max 4)"),
            "{line}"
        );
        assert_eq!(EngineStats::default().store_compaction_line(), None);
        let clocked = EngineStats {
            store_compactions: vec![(10_500, 500_000, 3 << 20)],
            taken_ms: 12_000,
            ..EngineStats::default()
        };
        assert_eq!(clocked.store_compaction_spans(4.0), vec![(2.0, 2.5, 3.0)]);
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
    /// Reads many keys in one call (RocksDB's `MultiGet`); by default one `get` each.
    fn multi_get(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, String> {
        keys.iter().map(|k| self.get(k)).collect()
    }
    /// Writes `key` only if it holds a value (SLM-DB's "insert if exists"); returns whether it
    /// did. By default a lookup, then a put (not atomic: a benchmark's updates only).
    fn update_if_present(&self, key: &[u8], value: &[u8]) -> Result<bool, String> {
        let present = self.get(key)?.is_some();
        if present {
            self.put(key, value)?;
        }
        Ok(present)
    }
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
    /// Where its files live: (directories on the data disk, PM directories), for the memory
    /// report ([`super::memory`]).
    fn directories(&self) -> (Vec<std::path::PathBuf>, Vec<std::path::PathBuf>) {
        (Vec::new(), Vec::new())
    }
    /// Bytes its block cache holds now (`None` where the engine does not say).
    fn block_cache_bytes(&self) -> Option<u64> {
        None
    }
    /// Flushes every write buffer (FlatLSM: all PMTables) to SSD; returns the bytes they held.
    fn flush_pmtables(&self) -> Result<u64, String> {
        Err(format!("{} cannot run the flush benchmark", self.name()))
    }
}
