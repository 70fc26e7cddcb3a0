//! Command-line flags of `flatlsm bench`, named and defaulted as RocksDB's db_bench names them.
//!
//! Boolean flags accept db_bench's spelling (`--histogram=1`, `--sync=0`) as well as a bare
//! `--histogram`. Flags a preset may set are `Option`s so that an explicit flag always wins
//! over the preset, and the preset over the db_bench default (see [`super::preset`]).

use std::path::PathBuf;

/// Flags of `flatlsm bench`, named as db_bench names them.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchFlags {
    /// Comma-separated list: fillseq, fillrandom, overwrite, readrandom, readseq, readreverse,
    /// seekrandom, readrandomwriterandom, updaterandom, ycsba..ycsbf, reopen, flush; `freshdb`
    /// starts the benchmarks after it on a new, empty database.
    #[arg(long)]
    pub benchmarks: Option<String>,
    /// Number of keys (db_bench: 1000000). Each thread performs this many writes.
    #[arg(long)]
    pub num: Option<u64>,
    /// Operations per thread of read and YCSB run phases (default: num).
    #[arg(long)]
    pub reads: Option<u64>,
    /// Value size in bytes (db_bench: 100).
    #[arg(long = "value_size")]
    pub value_size: Option<usize>,
    /// Key size in bytes (db_bench keys: 8-byte big-endian number padded with '0').
    #[arg(long = "key_size")]
    pub key_size: Option<usize>,
    /// Worker threads; each runs the benchmark's operations.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Run each benchmark for this many seconds instead of a fixed count (0: off).
    #[arg(long, default_value_t = 0)]
    pub duration: u64,
    /// Open the database as it is instead of starting from an empty one.
    #[arg(long = "use_existing_db", default_value_t = false, num_args = 0..=1,
          default_missing_value = "true", value_parser = parse_flag_bool)]
    pub use_existing_db: bool,
    /// Database directory (default: a fresh temporary directory, removed afterwards).
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Design to benchmark: flatlsm (default).
    #[arg(long)]
    pub profile: Option<String>,
    /// PM directory (a tmpfs such as /dev/shm/x runs in emulated mode).
    #[arg(long = "pm_path")]
    pub pm_path: Option<PathBuf>,
    /// PM mode: auto, msync or emulated (default auto; emulated when pm_path is on tmpfs).
    #[arg(long = "pm_mode")]
    pub pm_mode: Option<String>,
    /// Sync every write.
    #[arg(long, default_value_t = false, num_args = 0..=1,
          default_missing_value = "true", value_parser = parse_flag_bool)]
    pub sync: bool,
    /// Random seed (db_bench's default base seed).
    #[arg(long, default_value_t = 301)]
    pub seed: u64,
    /// Print latency histograms (db_bench format).
    #[arg(long, default_value_t = false, num_args = 0..=1,
          default_missing_value = "true", value_parser = parse_flag_bool)]
    pub histogram: bool,
    /// Print engine counters (db_bench ticker format) after each benchmark.
    #[arg(long, default_value_t = false, num_args = 0..=1,
          default_missing_value = "true", value_parser = parse_flag_bool)]
    pub statistics: bool,
    /// Length of one throughput interval in seconds.
    #[arg(long = "report_interval_seconds", default_value_t = 1.0)]
    pub report_interval_seconds: f64,
    /// CSV of per-interval throughput (engine,benchmark,secs_elapsed,interval_ops,interval_qps).
    /// Default: `<plot>/intervals.csv` with --plot, else `<db>-intervals.csv` with --db, else
    /// `flatlsm_bench_report.csv` in the temporary directory.
    #[arg(long = "report_file")]
    pub report_file: Option<PathBuf>,
    /// Entries read after each seek of seekrandom (db_bench: 0; a preset may set it).
    #[arg(long = "seek_nexts")]
    pub seek_nexts: Option<usize>,
    /// Keys per `Db::multi_get` call of multireadrandom (db_bench's flag and default).
    #[arg(long = "batch_size", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub batch_size: u64,
    /// Percentage of reads in readrandomwriterandom.
    #[arg(long = "readwritepercent", default_value_t = 90)]
    pub readwritepercent: u32,
    /// Write everything measured as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write PNG plots (throughput over time, latency CDF) into this directory.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// A named configuration: `paper-scaled` (the FlatLSM paper's micro-benchmark on 2 cores,
    /// PM on tmpfs) or `no-pm-disk` (the same workload with the PM Logs in msync mode under
    /// --db, for machines without PM).
    #[arg(long)]
    pub preset: Option<String>,
    /// `--preset flatlsm-paper`: the directory the report (report.md) and its plots go to.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// `--preset flatlsm-paper`: the figures to run, comma-separated (default: all it has:
    /// 9a, 9b, 10, 11, table1, table2, 12, 15, 16, 17, 18, 19, 20 — Figs. 20 and 21 — and 22).
    #[arg(long)]
    pub figures: Option<String>,
    /// `--preset flatlsm-paper`: multiplies its data and budgets (default 1: the scale
    /// docs/bench.md states; small values make a smoke test of seconds).
    #[arg(long)]
    pub scale: Option<f64>,
    /// Run the same workload on another engine and print a comparison: `rocksdb`.
    #[arg(long)]
    pub compare: Option<String>,
    /// Keep each engine's database after a `--compare` run (default: removed after each
    /// engine's run so three paper-scaled databases need not fit on the disk at once).
    #[arg(long = "keep_db", default_value_t = false, num_args = 0..=1,
          default_missing_value = "true", value_parser = parse_flag_bool)]
    pub keep_db: bool,
    /// Before each read benchmark, close the database, write dirty pages back, drop the OS page
    /// cache (`echo 3 > /proc/sys/vm/drop_caches`; needs root, else skipped with a note) and
    /// open the database again (the kernel keeps pages a process maps), as the FlatLSM paper's
    /// evaluation drops caches every minute: reads then measure each engine's read path, not
    /// which engine happened to write through the page cache.
    #[arg(long = "drop_caches", default_value_t = false, num_args = 0..=1,
          default_missing_value = "true", value_parser = parse_flag_bool)]
    pub drop_caches: bool,
    /// Before each engine's run (and after each drop of the page cache), fill free memory with
    /// clean page cache of a sparse file beside the database (`<db>-warm`, no disk space), so
    /// every engine's files take pages reclaim hands over instead of free memory. On a virtual
    /// machine whose balloon reports free pages to the host, the first touch of a free page
    /// costs about 9 µs (docs/results/2026-11-28/session9.md), and which engine pays it
    /// would depend on the run order [default: false]
    #[arg(long = "warm_memory", default_value_t = false, num_args = 0..=1,
          default_missing_value = "true", value_parser = parse_flag_bool)]
    pub warm_memory: bool,
    /// With `--compare rocksdb`, also run RocksDB with integrated BlobDB in process
    /// (enable_blob_files, min_blob_size = kv_separation_threshold, blob GC on).
    #[arg(long = "rocksdb_blob", default_value_t = true, num_args = 0..=1,
          default_missing_value = "true", value_parser = parse_flag_bool)]
    pub rocksdb_blob: bool,
    /// db_bench binary used by `--compare rocksdb` (skipped when absent).
    #[arg(long = "db_bench", default_value = "/usr/bin/db_bench")]
    pub db_bench: PathBuf,
    /// PMTable (PM Log) size in bytes; RocksDB's write_buffer_size when comparing.
    #[arg(long = "pmtable_size")]
    pub pmtable_size: Option<usize>,
    /// Immutable PMTables that trigger a flush.
    #[arg(long = "flush_immutable_num")]
    pub flush_immutable_num: Option<usize>,
    /// Maximum number of PMTables (RocksDB: memtables).
    #[arg(long = "max_write_buffer_number")]
    pub max_write_buffer_number: Option<usize>,
    /// Ordered-L1 capacity in bytes (the most its share of the data may reach).
    #[arg(long = "l1_capacity")]
    pub l1_capacity: Option<u64>,
    /// The Ordered-L1's target as a share of all the data (`Options::l1_data_ratio`).
    #[arg(long = "l1_data_ratio")]
    pub l1_data_ratio: Option<f64>,
    /// YCSB-E runs this share of `--reads` as scans (the `ycsb` preset: 0.1; default 1).
    #[arg(long = "scan_fraction")]
    pub scan_fraction: Option<f64>,
    /// Value-log GC also runs while more than this share of all value-log bytes is garbage
    /// (`Options::vlog_gc_total_garbage_ratio`; 1 turns it off).
    #[arg(long = "vlog_gc_total_garbage_ratio")]
    pub vlog_gc_total_garbage_ratio: Option<f64>,
    /// The total-garbage ratio once writes are quiet and while settling
    /// (`Options::vlog_gc_quiet_garbage_ratio`; 1 turns it off).
    #[arg(long = "vlog_gc_quiet_garbage_ratio")]
    pub vlog_gc_quiet_garbage_ratio: Option<f64>,
    /// Writes are paced while more than this share of all value-log bytes is garbage
    /// (`Options::vlog_gc_slowdown_garbage_ratio`; 1 turns it off).
    #[arg(long = "vlog_gc_slowdown_garbage_ratio")]
    pub vlog_gc_slowdown_garbage_ratio: Option<f64>,
    /// FlatLSM: run the benchmarks once per Ordered-L1 / data ratio in this comma-separated
    /// list (`l1_capacity` = ratio × num × (key + value size)) and print one table (the
    /// paper's Fig. 13). Not with `--compare`.
    #[arg(long = "l1_ratios")]
    pub l1_ratios: Option<String>,
    /// FlatLSM: L1 runs (one per flush) that start a background merge into the ordered L1.
    #[arg(long = "l1_merge_trigger")]
    pub l1_merge_trigger: Option<usize>,
    /// FlatLSM: nice value added to the background threads (0 keeps the process's priority).
    #[arg(long = "background_nice")]
    pub background_nice: Option<i32>,
    /// Threads of a parallel flush.
    #[arg(long = "flush_threads")]
    pub flush_threads: Option<usize>,
    /// Values at least this large go to the value log.
    #[arg(long = "kv_separation_threshold")]
    pub kv_separation_threshold: Option<usize>,
    /// Fixes the request rate: operations per second across all threads (YCSB's target
    /// throughput; the paper's tail-latency tables run YCSB-A at a fixed rate). Default: flat
    /// out.
    #[arg(long = "rate_limit_ops")]
    pub rate_limit_ops: Option<f64>,
    /// Value sizes a `--compare profiles` preset or the `ycsb` preset sweeps,
    /// comma-separated (default: the preset's).
    #[arg(long = "value_sizes")]
    pub value_sizes: Option<String>,
    /// The `ycsb` preset's data sizes as multiples of the memory, comma-separated (default:
    /// 0.5,1.5), to rerun some points of the grid.
    #[arg(long = "memory_data_ratios")]
    pub memory_data_ratios: Option<String>,
    /// Runs the whole benchmark in a Linux memory cgroup of this many bytes, so every engine
    /// gets the same memory (heap, page cache and tmpfs pages alike; see docs/bench.md). 0:
    /// no limit (the `ycsb` preset's default is 4 GiB).
    #[arg(long = "memory_limit")]
    pub memory_limit: Option<u64>,
    /// `--compare profiles`: the designs to run, comma-separated labels (FlatLSM, leveled,
    /// leveled+vsep, leveled-L0-PM, novelsm, matrixkv, slmdb; default: the preset's, else the
    /// default set).
    #[arg(long)]
    pub designs: Option<String>,
    /// `--compare profiles`: bytes of DRAM every design gets (write buffers, their DRAM
    /// indexes, block cache), spent as its paper spends it (bench/budget.rs). With
    /// `--pm_budget`; a preset may set both. Overrides the write-buffer and cache flags.
    #[arg(long = "dram_budget")]
    pub dram_budget: Option<u64>,
    /// `--compare profiles`: bytes of PM every design gets (PMTables, PM skiplists, the matrix
    /// container, the B+-tree, write-ahead logs).
    #[arg(long = "pm_budget")]
    pub pm_budget: Option<u64>,
    /// Bytes of user data each value size of a `--compare profiles` sweep writes (default: the
    /// preset's); `--num` instead fixes the key count at every size.
    #[arg(long = "sweep_bytes")]
    pub sweep_bytes: Option<u64>,
    /// matrixkv: bytes of the PM matrix container (L1's target size too; default 1 GiB).
    #[arg(long = "container_size")]
    pub container_size: Option<u64>,
    /// matrixkv: bytes per container page (default 64 KiB).
    #[arg(long = "container_page_size")]
    pub container_page_size: Option<usize>,
    /// matrixkv: share of the container at which the receiver becomes the compactor (0.6).
    #[arg(long = "receiver_limit")]
    pub receiver_limit: Option<f64>,
    /// matrixkv: a column compaction merges at least this many row bytes (default 40 MiB).
    #[arg(long = "column_lower_bound")]
    pub column_lower_bound: Option<u64>,
    /// matrixkv: ... and at most about this many (default 80 MiB).
    #[arg(long = "column_upper_bound")]
    pub column_upper_bound: Option<u64>,
    /// Most SSTs kept open (db_bench's `--open_files`; -1 or absent: no bound).
    #[arg(long = "open_files", allow_hyphen_values = true)]
    pub open_files: Option<i64>,
    /// slmdb: bytes of PM for the B+-tree (default 1 GiB; fixed when the database is made).
    #[arg(long = "btree_size")]
    pub btree_size: Option<u64>,
    /// slmdb: an SST whose live keys fall below this share is a compaction candidate (0.7).
    #[arg(long = "live_key_threshold")]
    pub live_key_threshold: Option<f64>,
    /// slmdb: a leaf scan flags more files than this behind two SSTs' worth of keys (10).
    #[arg(long = "leaf_node_threshold")]
    pub leaf_node_threshold: Option<usize>,
    /// slmdb: a range query flags more files than this behind one 30-key sub-range (8).
    #[arg(long = "sequentiality_threshold")]
    pub sequentiality_threshold: Option<usize>,
    /// FlatLSM: immutable PMTables from which writes are slowed down (default
    /// max_write_buffer_number - 1; max_write_buffer_number turns the slowdown off).
    #[arg(long = "slowdown_immutable_num")]
    pub slowdown_immutable_num: Option<usize>,
    /// FlatLSM: pace of writes in the slowdown phase, PM Log bytes/s (default: half the
    /// measured flush rate). RocksDB keeps its own default.
    #[arg(long = "delayed_write_rate")]
    pub delayed_write_rate: Option<u64>,
    /// FlatLSM: time each part of a write (WAL, write-buffer data, index) into the engine's
    /// write breakdown (`Options::write_breakdown`; default 0: no clock read per part).
    #[arg(long = "write_breakdown", num_args = 0..=1,
          default_missing_value = "true", value_parser = parse_flag_bool)]
    pub write_breakdown: Option<bool>,
    /// Write value logs with O_DIRECT (default 0: through the page cache with write-behind, so
    /// fresh values are read from memory; 1 saves the page-cache copy, and first reads go to
    /// the device).
    #[arg(long = "vlog_direct_writes", num_args = 0..=1,
          default_missing_value = "true", value_parser = parse_flag_bool)]
    pub vlog_direct_writes: Option<bool>,
    /// With O_DIRECT value logs, have the kernel read what was written back into the page
    /// cache in the background (default 0).
    #[arg(long = "vlog_cache_written", num_args = 0..=1,
          default_missing_value = "true", value_parser = parse_flag_bool)]
    pub vlog_cache_written: Option<bool>,
    /// FlatLSM copies values within one page from a mapping of their value log instead of
    /// `pread` (`Options::vlog_mmap_reads`; default 1).
    #[arg(long = "vlog_mmap_reads", num_args = 0..=1,
          default_missing_value = "true", value_parser = parse_flag_bool)]
    pub vlog_mmap_reads: Option<bool>,
    /// FlatLSM keeps the values gets read from value logs in its block cache (default 0).
    #[arg(long = "value_cache", num_args = 0..=1,
          default_missing_value = "true", value_parser = parse_flag_bool)]
    pub value_cache: Option<bool>,
    /// SSTable data block size in bytes for every engine (FlatLSM and RocksDB in process;
    /// default 4096, db_bench's).
    #[arg(long = "block_size")]
    pub block_size: Option<usize>,
    /// Block cache capacity in bytes for every engine (FlatLSM, RocksDB in process, db_bench);
    /// default FlatLSM's 64 MiB.
    #[arg(long = "cache_size")]
    pub cache_size: Option<usize>,
    /// Injected PM write latency per cache line (emulated mode).
    #[arg(long = "pm_write_latency_ns")]
    pub pm_write_latency_ns: Option<u64>,
    /// Directory of the write-ahead logs of `--profile leveled` (default: next to `--pm_path`,
    /// as RocksDB's WAL in the comparison; else the database directory).
    #[arg(long = "wal_dir")]
    pub wal_dir: Option<PathBuf>,
    /// Injected PM read latency per cache line read (emulated mode).
    #[arg(long = "pm_read_latency_ns")]
    pub pm_read_latency_ns: Option<u64>,
    /// Where the memtables of `--profile leveled` live: dram (default) or pm.
    #[arg(long = "memtable_placement")]
    pub memtable_placement: Option<String>,
    /// Where the block cache lives: dram (default) or pm.
    #[arg(long = "block_cache_placement")]
    pub block_cache_placement: Option<String>,
    /// `--profile leveled`/`novelsm`: keep level-0 files in the PM directory (RocksDB's
    /// `db_paths` with PM first; the MatrixKV paper's RocksDB-L0-NVM).
    #[arg(long = "level0_in_pm", value_parser = parse_flag_bool, num_args = 0..=1, default_missing_value = "true")]
    pub level0_in_pm: Option<bool>,
    /// Compression of the SST data blocks of every level, every engine (db_bench's
    /// `--compression_type`): none (default: the bench compares uncompressed engines), lz4 or
    /// zstd.
    #[arg(long = "compression_type", value_parser = parse_compression)]
    pub compression_type: Option<flatlsm::Compression>,
}

/// Parses db_bench's compression names this engine has: none, lz4, zstd.
pub fn parse_compression(s: &str) -> Result<flatlsm::Compression, String> {
    match s {
        "none" | "lz4" | "zstd" => s.parse().map_err(|e: flatlsm::Error| e.to_string()),
        _ => Err(format!("expected none, lz4 or zstd, got {s:?}")),
    }
}

/// Parses a placement: dram or pm.
pub fn parse_placement(s: &str) -> Result<flatlsm::Placement, String> {
    match s.to_ascii_lowercase().as_str() {
        "dram" => Ok(flatlsm::Placement::Dram),
        "pm" | "pmem" => Ok(flatlsm::Placement::Pm),
        _ => Err(format!("expected dram or pm, got {s:?}")),
    }
}

/// Parses db_bench-style booleans: 1/0, true/false, yes/no.
pub fn parse_flag_bool(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(format!("expected 1/0 or true/false, got {s:?}")),
    }
}

/// The flags `bench` would parse from `args` (the command name not included): tests build
/// configurations with it.
#[cfg(test)]
pub fn parse_for_test(args: &[&str]) -> Result<BenchFlags, String> {
    use clap::Parser;
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        flags: BenchFlags,
    }
    let argv = std::iter::once("bench").chain(args.iter().copied());
    Cli::try_parse_from(argv)
        .map(|c| c.flags)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: BenchFlags,
    }

    fn parse(list: &[&str]) -> BenchFlags {
        let mut v = vec!["bench"];
        v.extend_from_slice(list);
        Wrapper::try_parse_from(v).unwrap().args
    }

    #[test]
    fn defaults_follow_db_bench() {
        let a = parse(&[]);
        assert_eq!(a.threads, 1);
        assert_eq!(a.seed, 301);
        assert!(!a.histogram && !a.sync && !a.use_existing_db);
        assert_eq!(a.report_interval_seconds, 1.0);
        assert_eq!(a.readwritepercent, 90);
        assert!(a.num.is_none() && a.value_size.is_none());
        assert!(a.rocksdb_blob && a.preset.is_none());
    }

    #[test]
    fn db_bench_boolean_spellings_parse() {
        let a = parse(&[
            "--histogram=1",
            "--sync=0",
            "--use_existing_db",
            "--statistics=true",
        ]);
        assert!(a.histogram && !a.sync && a.use_existing_db && a.statistics);
        assert!(!parse(&["--rocksdb_blob=0"]).rocksdb_blob);
        assert!(parse(&["--rocksdb_blob"]).rocksdb_blob);
        assert_eq!(
            parse(&["--preset", "no-pm-disk"]).preset.as_deref(),
            Some("no-pm-disk")
        );
        assert!(Wrapper::try_parse_from(["bench", "--histogram=maybe"]).is_err());
    }

    #[test]
    fn engine_and_workload_flags_parse() {
        let a = parse(&[
            "--num=5",
            "--value_size",
            "4096",
            "--pmtable_size=1024",
            "--threads=2",
            "--seek_nexts=10",
            "--benchmarks=ycsba,ycsbf",
            "--slowdown_immutable_num=6",
            "--delayed_write_rate",
            "1048576",
        ]);
        assert_eq!(
            (a.num, a.value_size, a.pmtable_size),
            (Some(5), Some(4096), Some(1024))
        );
        assert_eq!((a.threads, a.seek_nexts), (2, Some(10)));
        assert_eq!(a.benchmarks.as_deref(), Some("ycsba,ycsbf"));
        assert_eq!(
            (a.slowdown_immutable_num, a.delayed_write_rate),
            (Some(6), Some(1 << 20))
        );
    }
}
