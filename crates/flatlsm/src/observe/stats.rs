//! Counters the engine keeps, and the [`Stats`] snapshot `Db::stats` returns.
//!
//! Counters are relaxed atomics: each is exact, but a `Stats` taken while work runs is not a
//! single consistent cut. The block cache's and the bloom filters' counters live in the core
//! (`BlockCache`, `FilterCounters` of the table cache) and are read from there; latencies are
//! histograms (`latency.rs`).

use super::latency::{Latency, LatencyStats};
use crate::pm::PmMode;
use crate::sst::TableCache;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// Live counters, updated by foreground and background work.
#[derive(Debug, Default)]
pub struct Counters {
    pub(crate) user_bytes: AtomicU64,
    pub(crate) user_writes: AtomicU64,
    pub(crate) pm_bytes_written: AtomicU64,
    pub(crate) pm_gc_bytes: AtomicU64,
    pub(crate) flush_sst_bytes: AtomicU64,
    pub(crate) flush_vlog_bytes: AtomicU64,
    pub(crate) flush_pm_bytes: AtomicU64,
    pub(crate) compaction_bytes: AtomicU64,
    pub(crate) vlog_gc_bytes: AtomicU64,
    pub(crate) manifest_bytes: AtomicU64,
    pub(crate) stall_micros: AtomicU64,
    pub(crate) stall_count: AtomicU64,
    pub(crate) delayed_writes: AtomicU64,
    pub(crate) delayed_write_micros: AtomicU64,
    pub(crate) write_stall_nanos: AtomicU64,
    pub(crate) write_wal_nanos: AtomicU64,
    pub(crate) write_mem_data_nanos: AtomicU64,
    pub(crate) write_mem_index_nanos: AtomicU64,
    pub(crate) slowdown_count: AtomicU64,
    pub(crate) flush_micros: AtomicU64,
    pub(crate) flushes: AtomicU64,
    pub(crate) compactions: AtomicU64,
    pub(crate) vlog_gcs: AtomicU64,
    pub(crate) pmtable_gcs: AtomicU64,
    pub(crate) vlog_direct_files: AtomicU64,
    pub(crate) vlog_buffered_files: AtomicU64,
    /// Every compaction out of a design's level-0 store, oldest first (the last 10,000).
    pub(crate) store_compactions: parking_lot::Mutex<Vec<StoreCompactionStat>>,
    /// Per-operation latency histograms.
    pub(crate) latency: Latency,
}

impl Counters {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// Size and file count of one level.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LevelStats {
    /// The level's name in its design (FlatLSM: `L1 runs`, `L1`, `L2`; leveled: `L0`..).
    pub name: String,
    /// Number of SST files.
    pub files: usize,
    /// Bytes of SST files.
    pub bytes: u64,
    /// SST bytes plus the value-log bytes the files reference (compared with `l1_capacity`).
    pub data_bytes: u64,
}

/// A value-log file and how much of it is garbage.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct VlogStats {
    /// File number.
    pub number: u64,
    /// Bytes of records written to it.
    pub total_bytes: u64,
    /// Bytes still referenced by the current version.
    pub live_bytes: u64,
}

/// The block cache's figures since open (all 0 without a block cache).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct BlockCacheStats {
    /// Bytes of blocks and values it may hold.
    pub capacity: u64,
    /// Bytes of blocks and values it holds.
    pub usage: u64,
    /// Lookups that found their block.
    pub hits: u64,
    /// Lookups that read their block from the file.
    pub misses: u64,
    /// Blocks admitted.
    pub inserts: u64,
    /// Blocks and values dropped to make room (not those of deleted files).
    pub evictions: u64,
    /// Gets that found their value in the cache (`Options::value_cache`).
    pub value_hits: u64,
    /// Gets that read their value from its value log.
    pub value_misses: u64,
    /// Values admitted.
    pub value_inserts: u64,
}

impl BlockCacheStats {
    /// The figures of `tables`' block cache.
    pub(crate) fn of(tables: &TableCache) -> BlockCacheStats {
        let Some(c) = tables.block_cache() else {
            return BlockCacheStats::default();
        };
        BlockCacheStats {
            capacity: c.capacity() as u64,
            usage: c.usage() as u64,
            hits: c.hits(),
            misses: c.misses(),
            inserts: c.inserts(),
            evictions: c.evictions(),
            value_hits: c.value_hits(),
            value_misses: c.value_misses(),
            value_inserts: c.value_inserts(),
        }
    }
}

/// What the SSTs' bloom filters answered on point lookups since open (PMTables' filters are
/// not counted).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct BloomStats {
    /// Lookups that asked a table's filter.
    pub checked: u64,
    /// Lookups the filter answered "absent" (a block read spared).
    pub useful: u64,
    /// Lookups the filter let through that found no entry of the key in the table.
    pub false_positives: u64,
}

impl BloomStats {
    /// The figures of `tables`' filters.
    pub(crate) fn of(tables: &TableCache) -> BloomStats {
        let c = tables.filter_counters();
        BloomStats {
            checked: c.checked(),
            useful: c.useful(),
            false_positives: c.false_positives(),
        }
    }
}

/// One compaction out of a design's level-0 store (MatrixKV's column compaction; its Fig. 14
/// plots these).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct StoreCompactionStat {
    /// When it finished, in milliseconds since the Unix epoch.
    pub finished_ms: u64,
    /// How long it ran.
    pub micros: u64,
    /// Bytes of the store (rows) it merged.
    pub store_bytes: u64,
    /// Bytes of L1 files it wrote.
    pub written_bytes: u64,
}

/// A point-in-time report of the engine's work. Serializable with serde (field names are
/// stable; the profile and PM mode as their names), e.g. `serde_json::to_string(&db.stats())`.
#[derive(Clone, Debug, Default, serde::Serialize)]
#[non_exhaustive]
pub struct Stats {
    /// The design of the database.
    #[serde(serialize_with = "by_name")]
    pub profile: crate::options::Profile,
    /// How PM is persisted.
    #[serde(serialize_with = "by_display")]
    pub pm_mode: Option<PmMode>,
    /// Key + value bytes the user wrote.
    pub user_bytes: u64,
    /// Number of user writes (batch entries).
    pub user_writes: u64,
    /// Bytes appended to PM Logs (entries written by the user path).
    pub pm_bytes_written: u64,
    /// Bytes appended to PM Logs by PMTable GC.
    pub pm_gc_bytes: u64,
    /// SST bytes written by flushes (PMTable → L1 merges).
    pub flush_sst_bytes: u64,
    /// Value-log bytes written by flushes.
    pub flush_vlog_bytes: u64,
    /// Bytes flushes wrote to PM, not SSD: MatrixKV's rows, level-0 files kept in the PM
    /// directory (`LeveledOptions::level0_in_pm`).
    pub flush_pm_bytes: u64,
    /// SST bytes written by L1 → L2 compactions.
    pub compaction_bytes: u64,
    /// Value-log and redirect-table bytes written by value-log GC.
    pub vlog_gc_bytes: u64,
    /// Manifest bytes written.
    pub manifest_bytes: u64,
    /// Time writers spent blocked because every PMTable was in use (the stop phase).
    pub stall_micros: u64,
    /// Number of times a writer blocked (stop episodes; each logs a start and an end line).
    pub stall_count: u64,
    /// Writes delayed in the slowdown phase (`Options::slowdown_immutable_num`).
    pub delayed_writes: u64,
    /// Time writes spent delayed in the slowdown phase.
    pub delayed_write_micros: u64,
    /// Number of slowdown episodes (each logs a start and an end line).
    pub slowdown_count: u64,
    /// Time foreground writes waited on the write stall: slowdown delays and stops, in
    /// nanoseconds (always counted). The paper's "Write Stall Latency" (Fig. 22).
    pub write_stall_nanos: u64,
    /// Time foreground writes spent appending to the write-ahead log, in nanoseconds (0 for
    /// designs without one, FlatLSM's; counted only under `Options::write_breakdown`).
    pub write_wal_nanos: u64,
    /// Time foreground writes spent appending their data to the write buffer (the PM Log of a
    /// PMTable, the DRAM log of a DRAM memtable, writing and persisting the PM skiplist's
    /// nodes), in nanoseconds (under `Options::write_breakdown`).
    pub write_mem_data_nanos: u64,
    /// Time foreground writes spent inserting into the write buffer's index (the PM
    /// skiplist: finding the predecessors, linking, committing the batch), in nanoseconds
    /// (under `Options::write_breakdown`).
    pub write_mem_index_nanos: u64,
    /// True while writes are in the slowdown phase.
    pub writes_slowed: bool,
    /// True while a writer waits for a free PMTable (the stop phase).
    pub writes_stopped: bool,
    /// The pace of writes in the slowdown phase now, in PM Log bytes per second (it applies
    /// only while `writes_slowed`).
    pub delayed_write_rate: u64,
    /// Time flushes spent merging PMTables into L1 (busy time, from reserving the inputs to
    /// installing the outputs): with [`Stats::flush_bytes`], the flush throughput.
    pub flush_micros: u64,
    /// Completed flushes (PMTable → L1 merges).
    pub flushes: u64,
    /// Completed L1 → L2 compactions.
    pub compactions: u64,
    /// Completed value-log GC runs (each copied one log's live records and redirected it).
    pub vlog_gcs: u64,
    /// Completed PMTable GC rewrites.
    pub pmtable_gcs: u64,
    /// Value logs finished with direct writes (O_DIRECT, no page-cache copy).
    pub vlog_direct_files: u64,
    /// Value logs finished with buffered writes (`vlog_direct_writes` off, or O_DIRECT refused
    /// by the file system).
    pub vlog_buffered_files: u64,
    /// Number of PMTables (mutable + immutable) and their PM Log bytes.
    pub pmtables: usize,
    /// PM Log bytes in use by all PMTables.
    pub pmtable_bytes: u64,
    /// DRAM the PMTables' indexes hold (skiplist arenas, point indexes, filters).
    pub pmtable_index_bytes: u64,
    /// Entries in the write buffers and the SSTs (RocksDB's `estimate-num-keys`): an upper
    /// bound of the keys, counting every version and tombstone not yet merged away (a design's
    /// level-0 store in PM is not counted).
    pub estimated_keys: u64,
    /// Per SSD level the design uses ([`crate::options::Profile::num_levels`]); FlatLSM: 0 = L1's
    /// unmerged runs, 1 = the ordered L1, 2 = L2.
    pub levels: Vec<LevelStats>,
    /// How many unmerged runs L1 holds (level 0; merged at `l1_merge_trigger`).
    pub l1_runs: usize,
    /// Value-log files.
    pub vlogs: Vec<VlogStats>,
    /// Value logs GC redirected whose redirect tables some SST still needs (each log's data
    /// file is gone or going; its records live on in the log it was copied to).
    pub vlog_redirects: usize,
    /// Range tombstones (`delete_range`) some data may still lie under (retired once none
    /// can).
    pub range_tombstones: usize,
    /// Open snapshots.
    pub snapshots: usize,
    /// Compactions out of the design's level-0 store (MatrixKV's column compactions), oldest
    /// first: the last 10,000.
    pub store_compactions: Vec<StoreCompactionStat>,
    /// Last visible sequence number.
    pub last_sequence: u64,
    /// Set when background work failed and writes are refused.
    pub background_error: Option<String>,
    /// Per-operation latency since open.
    pub latency: LatencyStats,
    /// The block cache's hits, misses and size.
    pub block_cache: BlockCacheStats,
    /// What the SSTs' bloom filters answered.
    pub bloom: BloomStats,
}

fn by_name<S: serde::Serializer>(p: &crate::options::Profile, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(p.name())
}

fn by_display<S: serde::Serializer>(m: &Option<PmMode>, s: S) -> Result<S::Ok, S::Error> {
    match m {
        Some(m) => s.serialize_some(&m.to_string()),
        None => s.serialize_none(),
    }
}

impl Stats {
    /// The integer property `name` of this report ([`crate::Db::property_int`] without taking
    /// a new report: a tool reading many properties takes one report and asks it each).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let opts = flatlsm::Options::default().pm_path(dir.path().join("pm"));
    /// let db = flatlsm::Db::open(dir.path().join("db"), opts)?;
    /// db.put("k", "v")?;
    /// let stats = db.stats();
    /// assert_eq!(stats.property_int("flatlsm.latest-sequence-number"), Some(1));
    /// assert_eq!(stats.property_int("flatlsm.no-such-property"), None);
    /// # Ok::<(), flatlsm::Error>(())
    /// ```
    pub fn property_int(&self, name: &str) -> Option<u64> {
        super::properties::int_property(self, name)
    }

    /// Bytes flushes wrote (SSTs, value logs, and what went to PM).
    pub fn flush_bytes(&self) -> u64 {
        self.flush_sst_bytes + self.flush_vlog_bytes + self.flush_pm_bytes
    }

    /// Bytes written to SSD (SSTs, value logs, manifest; not what flushes wrote to PM).
    pub fn ssd_bytes_written(&self) -> u64 {
        self.flush_sst_bytes
            + self.flush_vlog_bytes
            + self.compaction_bytes
            + self.vlog_gc_bytes
            + self.manifest_bytes
    }

    /// SSD bytes written / user bytes (0 before any write).
    pub fn write_amplification(&self) -> f64 {
        if self.user_bytes == 0 {
            return 0.0;
        }
        self.ssd_bytes_written() as f64 / self.user_bytes as f64
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = self.pm_mode.map(|m| m.to_string()).unwrap_or_default();
        writeln!(f, "PM mode: {mode}")?;
        writeln!(
            f,
            "user bytes: {} in {} writes",
            self.user_bytes, self.user_writes
        )?;
        writeln!(
            f,
            "PM written: {} (GC {}, flushes {})",
            self.pm_bytes_written, self.pm_gc_bytes, self.flush_pm_bytes
        )?;
        writeln!(
            f,
            "SSD written: flush sst {} + flush vlog {} + compaction {} + vlog GC {} + manifest {}",
            self.flush_sst_bytes,
            self.flush_vlog_bytes,
            self.compaction_bytes,
            self.vlog_gc_bytes,
            self.manifest_bytes
        )?;
        writeln!(f, "write amplification: {:.3}", self.write_amplification())?;
        writeln!(
            f,
            "value logs written: {} direct, {} buffered",
            self.vlog_direct_files, self.vlog_buffered_files
        )?;
        writeln!(
            f,
            "stall: {} us in {} stalls; slowdown: {} writes delayed {} us in {} slowdowns",
            self.stall_micros,
            self.stall_count,
            self.delayed_writes,
            self.delayed_write_micros,
            self.slowdown_count
        )?;
        writeln!(
            f,
            "flush: {} bytes in {} us",
            self.flush_bytes(),
            self.flush_micros
        )?;
        writeln!(
            f,
            "PMTables: {} using {} bytes of PM, {} bytes of DRAM for their indexes",
            self.pmtables, self.pmtable_bytes, self.pmtable_index_bytes
        )?;
        for l in &self.levels {
            let (name, files, bytes, data) = (&l.name, l.files, l.bytes, l.data_bytes);
            writeln!(f, "{name}: {files} files, {bytes} bytes, {data} data bytes")?;
        }
        for v in &self.vlogs {
            writeln!(
                f,
                "vlog {}: {} live of {} bytes",
                v.number, v.live_bytes, v.total_bytes
            )?;
        }
        writeln!(f, "vlog redirects: {}", self.vlog_redirects)?;
        writeln!(f, "range tombstones: {}", self.range_tombstones)?;
        writeln!(f, "{}", self.block_cache)?;
        writeln!(f, "{}", self.bloom)?;
        writeln!(f, "{}", self.latency)?;
        write!(
            f,
            "flushes {} compactions {} vlog GCs {} PMTable GCs {}",
            self.flushes, self.compactions, self.vlog_gcs, self.pmtable_gcs
        )
    }
}

impl fmt::Display for BlockCacheStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "block cache: {} of {} bytes, {} hits, {} misses, {} inserts, {} evictions; values: \
             {} hits, {} misses, {} inserts",
            self.usage,
            self.capacity,
            self.hits,
            self.misses,
            self.inserts,
            self.evictions,
            self.value_hits,
            self.value_misses,
            self.value_inserts
        )
    }
}

impl fmt::Display for BloomStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bloom filters: {} checked, {} useful, {} false positives",
            self.checked, self.useful, self.false_positives
        )
    }
}
