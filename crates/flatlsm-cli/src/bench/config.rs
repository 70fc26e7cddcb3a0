//! The resolved configuration of one bench invocation: flags, then the preset, then db_bench's
//! defaults, in that order of precedence.

use super::budget::Budget;
use super::flags::BenchFlags;
use super::preset::{self, Preset};
use crate::parse_pm_mode;
use flatlsm::{Options, PmModeOption};
use std::path::PathBuf;

/// Everything a benchmark run needs, with every default applied.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// Benchmark names in run order.
    pub benchmarks: Vec<String>,
    /// Keys (and writes per thread).
    pub num: u64,
    /// Operations per thread of read and YCSB run phases.
    pub reads: u64,
    /// Value size in bytes.
    pub value_size: usize,
    /// Key size in bytes (db_bench keys).
    pub key_size: usize,
    /// The flags as given (seed, threads, histogram, ...).
    pub args: BenchFlags,
    /// PM directory, if any.
    pub pm_path: Option<PathBuf>,
    /// Engine options for FlatLSM.
    pub options: Options,
    /// Where interval throughput goes (CSV).
    pub report_file: PathBuf,
    /// Ordered-L1 / data ratios to sweep (empty: one run with `options.l1_capacity`).
    pub l1_ratios: Vec<f64>,
    /// Run the PM placement study's nine workloads (`--preset placement`).
    pub placement_study: bool,
    /// Value sizes `--compare profiles` or the YCSB grid sweeps (empty: one run at
    /// `value_size`).
    pub value_sizes: Vec<usize>,
    /// Bytes written at each value size of the sweep.
    pub sweep_bytes: u64,
    /// From value size `.0` on, the sweep's bytes are `.1` instead of `sweep_bytes` (a figure
    /// of the paper preset whose largest values would not fit the disk; `None`: the same at
    /// every size).
    pub sweep_bytes_large: Option<(usize, u64)>,
    /// `--compare profiles` configures the peers as the MatrixKV paper does (the MatrixKV
    /// presets: `Preset::matrixkv_peers`).
    pub matrixkv_peers: bool,
    /// `--compare profiles` gives `leveled` and `novelsm` LevelDB's defaults (the SLM-DB
    /// presets: `Preset::leveldb_peers`).
    pub leveldb_peers: bool,
    /// The designs `--compare profiles` runs, by label (empty: the default set).
    pub variants: Vec<String>,
    /// Emulated PM write latencies a `--compare profiles` preset sweeps (ns per line).
    pub pm_write_latencies: Vec<u64>,
    /// Entries seekrandom reads after each seek.
    pub seek_nexts: usize,
    /// Read and YCSB operations per write of the fill, when no count is given
    /// (`Preset::read_fraction`; `None`: as many as the writes).
    pub read_fraction: Option<f64>,
    /// readseq and readreverse walk the whole database (`Preset::scan_whole_db`).
    pub scan_whole_db: bool,
    /// YCSB updates write only existing keys (`Preset::ycsb_update_if_present`).
    pub ycsb_update_if_present: bool,
    /// Operations of YCSB-E (each a scan): `reads`, or a preset's fraction of it.
    pub scan_reads: u64,
    /// The memory cgroup limit of the run in bytes (`None`: no limit).
    pub memory_limit: Option<u64>,
    /// Data sizes as multiples of the memory, for the YCSB grid (empty: no grid).
    pub memory_data_ratios: Vec<f64>,
    /// The DRAM and PM every design of `--compare profiles` gets (`None`: each its options).
    pub budget: Option<Budget>,
    /// The sparse file `--warm_memory` reads before each engine's run (`None`: no warming).
    pub warm_file: Option<PathBuf>,
}

/// db_bench's default key count.
const DEFAULT_NUM: u64 = 1_000_000;
/// db_bench's default value size.
const DEFAULT_VALUE_SIZE: usize = 100;
/// db_bench's default key size.
const DEFAULT_KEY_SIZE: usize = 16;
/// db_bench's default list, restricted to what this tool runs.
const DEFAULT_BENCHMARKS: &str = "fillseq,fillrandom,overwrite,readrandom,readseq";

impl BenchConfig {
    /// The compression every engine writes every level with (`--compression_type`, default
    /// none).
    pub fn compression(&self) -> flatlsm::Compression {
        self.args.compression_type.unwrap_or_default()
    }

    /// This configuration for `profile`: its defaults, then the preset and the flags.
    pub fn with_profile(&self, profile: flatlsm::Profile) -> Result<BenchConfig, String> {
        let mut args = self.args.clone();
        args.profile = Some(profile.name().to_string());
        let p = match &args.preset {
            Some(name) => preset::lookup(name)?,
            None => Preset::default(),
        };
        let mut one = self.clone();
        one.options = engine_options(&args, &p, self.pm_path.as_ref())?;
        one.args = args;
        Ok(one)
    }

    /// Applies the preset (if any) and the defaults; rejects inconsistent flags.
    pub fn resolve(mut args: BenchFlags) -> Result<BenchConfig, String> {
        let p = match &args.preset {
            Some(name) => preset::lookup(name)?,
            None => Preset::default(),
        };
        let pm_path = args.pm_path.clone();
        if p.needs_pm_path && pm_path.is_none() {
            return Err(format!(
                "--preset {} needs --pm_path DIR (a tmpfs directory such as /dev/shm/flatlsm-pm)",
                args.preset.as_deref().unwrap_or_default()
            ));
        }
        let num = args.num.or(p.num).unwrap_or(DEFAULT_NUM);
        let key_size = args.key_size.or(p.key_size).unwrap_or(DEFAULT_KEY_SIZE);
        if key_size < 8 {
            return Err(format!(
                "--key_size {key_size}: must be at least 8 (db_bench keys hold a 64-bit number)"
            ));
        }
        if args.threads == 0 {
            return Err("--threads must be at least 1".into());
        }
        if args.report_interval_seconds <= 0.0 {
            return Err("--report_interval_seconds must be > 0".into());
        }
        args.rate_limit_ops = args.rate_limit_ops.or(p.rate_limit_ops);
        if args
            .rate_limit_ops
            .is_some_and(|r| !(r.is_finite() && r > 0.0))
        {
            return Err(
                "--rate_limit_ops must be a positive number of operations per second".into(),
            );
        }
        if args.readwritepercent > 100 {
            return Err("--readwritepercent must be within 0..=100".into());
        }
        if args.compare.is_none() {
            args.compare = p.compare.map(str::to_string);
        }
        let known = |c: &&str| *c == "rocksdb" || *c == "profiles";
        if let Some(other) = args.compare.as_deref().filter(|c| !known(c)) {
            return Err(format!(
                "--compare {other:?}: expected \"rocksdb\" or \"profiles\""
            ));
        }
        let benchmarks = args
            .benchmarks
            .clone()
            .or(p.benchmarks.map(str::to_string))
            .unwrap_or_else(|| DEFAULT_BENCHMARKS.to_string())
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        let options = engine_options(&args, &p, pm_path.as_ref())?;
        let value_sizes = match &args.value_sizes {
            Some(list) => parse_sizes(list)?,
            None => p.value_sizes.map(<[usize]>::to_vec).unwrap_or_default(),
        };
        let report_file = report_file(&args);
        let ratios = args.l1_ratios.as_deref().or(p.l1_ratios);
        let l1_ratios = ratios
            .map(|l| parse_ratios("--l1_ratios", l))
            .transpose()?
            .unwrap_or_default();
        if !l1_ratios.is_empty() && args.compare.is_some() {
            return Err("--l1_ratios sweeps FlatLSM alone: drop --compare".into());
        }
        let sweep_bytes = args.sweep_bytes.or(p.sweep_bytes);
        if sweep_bytes == Some(0) {
            return Err("--sweep_bytes must be at least 1".into());
        }
        let seek_nexts = args.seek_nexts.or(p.seek_nexts).unwrap_or(0);
        let reads = args
            .reads
            .or(p.reads)
            .unwrap_or_else(|| reads_for(num, p.read_fraction));
        let memory_data_ratios = match &args.memory_data_ratios {
            Some(list) => parse_ratios("--memory_data_ratios", list)?,
            None => p.memory_data_ratios.unwrap_or_default().to_vec(),
        };
        if !memory_data_ratios.is_empty() && args.compare.as_deref() != Some("rocksdb") {
            return Err("the YCSB grid compares with RocksDB: keep --compare rocksdb".into());
        }
        let budget = budget(&args, &p)?;
        let variants = variants(&args, &p);
        Ok(BenchConfig {
            warm_file: args.warm_memory.then(|| sibling_file(&args, "-warm")),
            sweep_bytes_large: None,
            budget,
            variants,
            benchmarks,
            num,
            reads,
            scan_reads: (args.scan_fraction.or(p.scan_fraction))
                .map_or(reads, |f| reads_for(reads, Some(f))),
            memory_limit: args.memory_limit.or(p.memory_limit).filter(|&b| b > 0),
            memory_data_ratios,
            value_size: args
                .value_size
                .or(p.value_size)
                .unwrap_or(DEFAULT_VALUE_SIZE),
            key_size,
            args,
            pm_path,
            options,
            report_file,
            l1_ratios,
            placement_study: p.placement_study,
            value_sizes,
            sweep_bytes: sweep_bytes.unwrap_or(super::preset::PM_MEMTABLES_BYTES),
            matrixkv_peers: p.matrixkv_peers,
            leveldb_peers: p.leveldb_peers,
            pm_write_latencies: p
                .pm_write_latencies
                .map(<[u64]>::to_vec)
                .unwrap_or_default(),
            seek_nexts,
            read_fraction: p.read_fraction,
            scan_whole_db: p.scan_whole_db,
            ycsb_update_if_present: p.ycsb_update_if_present,
        })
    }
}

/// The designs of `--designs` (labels checked when the comparison runs), else the preset's.
fn variants(args: &BenchFlags, p: &Preset) -> Vec<String> {
    match &args.designs {
        Some(list) => list.split(',').map(|s| s.trim().to_string()).collect(),
        None => (p.variants.unwrap_or_default().iter())
            .map(|s| s.to_string())
            .collect(),
    }
}

/// The budget of `--dram_budget` and `--pm_budget` (both or neither), else the preset's;
/// only `--compare profiles` spends one.
fn budget(args: &BenchFlags, p: &Preset) -> Result<Option<Budget>, String> {
    let given = match (args.dram_budget, args.pm_budget) {
        (Some(dram), Some(pm)) => Some(Budget { dram, pm }),
        (None, None) => p.budget,
        _ => return Err("--dram_budget and --pm_budget go together: give both".into()),
    };
    let profiles = args.compare.as_deref() == Some("profiles");
    match given {
        Some(_) if !profiles => Err("a memory budget needs --compare profiles".into()),
        Some(b) if b.dram == 0 || b.pm == 0 => {
            Err(format!("budget {}: both must be > 0", b.describe()))
        }
        other => Ok(other),
    }
}

/// Read and YCSB operations for a fill of `num` writes: `fraction` of them (at least one), or
/// `num` without a fraction (db_bench's default).
pub fn reads_for(num: u64, fraction: Option<f64>) -> u64 {
    match fraction {
        Some(f) => ((num as f64 * f).round() as u64).max(1),
        None => num,
    }
}

/// `--value_sizes`: comma-separated sizes in bytes, each > 0.
fn parse_sizes(list: &str) -> Result<Vec<usize>, String> {
    list.split(',')
        .map(|s| match s.trim().parse::<usize>() {
            Ok(v) if v > 0 => Ok(v),
            _ => Err(format!("--value_sizes: {s:?} is not a size in bytes > 0")),
        })
        .collect()
}

/// `--l1_ratios`, `--memory_data_ratios` (named `flag` in errors): comma-separated ratios,
/// each finite and > 0.
fn parse_ratios(flag: &str, list: &str) -> Result<Vec<f64>, String> {
    list.split(',')
        .map(|r| match r.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
            _ => Err(format!("{flag}: {r:?} is not a ratio > 0")),
        })
        .collect()
}

/// The interval CSV's path (see the `--report_file` flag).
fn report_file(args: &BenchFlags) -> PathBuf {
    if let Some(f) = &args.report_file {
        return f.clone();
    }
    if let Some(plot) = &args.plot {
        return plot.join("intervals.csv");
    }
    sibling_file(args, "-intervals.csv")
}

/// `<db><suffix>` beside the database directory (in the temporary directory without `--db`).
fn sibling_file(args: &BenchFlags, suffix: &str) -> PathBuf {
    match &args.db {
        Some(db) => {
            let mut name = db.file_name().unwrap_or_default().to_os_string();
            name.push(suffix);
            db.with_file_name(name)
        }
        None => std::env::temp_dir().join(format!("flatlsm_bench{}", suffix.replace('-', "_"))),
    }
}

/// FlatLSM options from the flags, the preset and the engine defaults.
fn engine_options(
    args: &BenchFlags,
    p: &Preset,
    pm_path: Option<&PathBuf>,
) -> Result<Options, String> {
    let profile = match &args.profile {
        Some(name) => name.parse().map_err(|e: flatlsm::Error| e.to_string())?,
        None => p.profile.unwrap_or_default(),
    };
    let d = Options::for_profile(profile);
    let placement = |flag: &Option<String>, default| {
        flag.as_deref()
            .map_or(Ok(default), super::flags::parse_placement)
    };
    let pm_mode = match (&args.pm_mode, p.pm_mode, pm_path) {
        (Some(m), _, _) => parse_pm_mode(m)?,
        (None, Some(m), _) => m,
        (None, None, Some(path)) if preset::is_tmpfs(path) => PmModeOption::Emulated,
        (None, None, _) => PmModeOption::Auto,
    };
    let wal_dir = args.wal_dir.clone().or_else(|| {
        let mut name = pm_path?.file_name()?.to_os_string();
        name.push("-wal");
        Some(pm_path?.with_file_name(name))
    });
    Ok({
        let mut o = d.clone();
        o.wal_dir = wal_dir;
        o.pm_path = pm_path.cloned();
        o.pm_mode = pm_mode;
        o.pm_write_latency_ns = args
            .pm_write_latency_ns
            .or(p.pm_write_latency_ns)
            .unwrap_or(d.pm_write_latency_ns);
        o.pm_read_latency_ns = args
            .pm_read_latency_ns
            .or(p.pm_read_latency_ns)
            .unwrap_or(d.pm_read_latency_ns);
        o.memtable_placement = placement(&args.memtable_placement, d.memtable_placement)?;
        o.block_cache_placement = placement(&args.block_cache_placement, d.block_cache_placement)?;
        o.pmtable_size = args
            .pmtable_size
            .or(p.pmtable_size)
            .unwrap_or(d.pmtable_size);
        o.flush_immutable_num = args
            .flush_immutable_num
            .or(p.flush_immutable_num)
            .unwrap_or(d.flush_immutable_num);
        o.max_write_buffer_number = args
            .max_write_buffer_number
            .or(p.max_write_buffer_number)
            .unwrap_or(d.max_write_buffer_number);
        o.l1_capacity = args.l1_capacity.or(p.l1_capacity).unwrap_or(d.l1_capacity);
        o.l1_data_ratio = args.l1_data_ratio.unwrap_or(d.l1_data_ratio);
        o.vlog_gc_total_garbage_ratio = args
            .vlog_gc_total_garbage_ratio
            .unwrap_or(d.vlog_gc_total_garbage_ratio);
        o.vlog_gc_quiet_garbage_ratio = args
            .vlog_gc_quiet_garbage_ratio
            .unwrap_or(d.vlog_gc_quiet_garbage_ratio);
        o.vlog_gc_slowdown_garbage_ratio = args
            .vlog_gc_slowdown_garbage_ratio
            .unwrap_or(d.vlog_gc_slowdown_garbage_ratio);
        o.flush_threads = args.flush_threads.unwrap_or(d.flush_threads);
        o.background_nice = args.background_nice.unwrap_or(d.background_nice);
        o.write_breakdown = args.write_breakdown.unwrap_or(d.write_breakdown);
        o.l1_merge_trigger = args.l1_merge_trigger.unwrap_or(d.l1_merge_trigger);
        o.kv_separation_threshold = args
            .kv_separation_threshold
            .unwrap_or(d.kv_separation_threshold);
        o.slowdown_immutable_num = args.slowdown_immutable_num;
        o.delayed_write_rate = args.delayed_write_rate;
        o.vlog_direct_writes = args.vlog_direct_writes.unwrap_or(d.vlog_direct_writes);
        o.vlog_cache_written = args.vlog_cache_written.unwrap_or(d.vlog_cache_written);
        o.value_cache = args.value_cache.unwrap_or(d.value_cache);
        o.vlog_mmap_reads = args.vlog_mmap_reads.unwrap_or(d.vlog_mmap_reads);
        o.block_size = args.block_size.unwrap_or(d.block_size);
        o.block_cache_size = args
            .cache_size
            .or(p.cache_size)
            .unwrap_or(d.block_cache_size);
        o.matrixkv = matrixkv_options(args, p);
        o.leveled = leveled_options(args, o.leveled);
        o.slmdb = slmdb_options(args, o.slmdb);
        o.max_open_files = args.open_files.filter(|&n| n > 0).map(|n| n as usize);
        o.compression_per_level = vec![args.compression_type.unwrap_or_default()];
        o
    })
}

/// The leveled tree's options: flags, else the defaults (RocksDB's).
fn leveled_options(args: &BenchFlags, d: flatlsm::LeveledOptions) -> flatlsm::LeveledOptions {
    let mut l = d;
    l.level0_in_pm = args.level0_in_pm.unwrap_or(l.level0_in_pm);
    l
}

/// The `slmdb` options: flags, else SLM-DB's defaults.
fn slmdb_options(args: &BenchFlags, d: flatlsm::SlmDbOptions) -> flatlsm::SlmDbOptions {
    let mut o = d;
    o.btree_size = args.btree_size.unwrap_or(o.btree_size);
    o.live_key_threshold = args.live_key_threshold.unwrap_or(o.live_key_threshold);
    o.leaf_node_threshold = args.leaf_node_threshold.unwrap_or(o.leaf_node_threshold);
    let seq = args.sequentiality_threshold;
    o.sequentiality_threshold = seq.unwrap_or(o.sequentiality_threshold);
    o
}

/// The `matrixkv` options: flags, else the preset's, else the defaults.
fn matrixkv_options(args: &BenchFlags, p: &Preset) -> flatlsm::MatrixKvOptions {
    let mut m = p.matrixkv.unwrap_or_default();
    let set = |slot: &mut u64, v: Option<u64>| *slot = v.unwrap_or(*slot);
    set(&mut m.container_size, args.container_size);
    set(&mut m.column_lower_bound, args.column_lower_bound);
    set(&mut m.column_upper_bound, args.column_upper_bound);
    m.page_size = args.container_page_size.unwrap_or(m.page_size);
    m.receiver_limit = args.receiver_limit.unwrap_or(m.receiver_limit);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_sizes_parse_as_a_comma_separated_list_of_positive_sizes() {
        assert_eq!(parse_sizes("4096").unwrap(), vec![4096]);
        assert_eq!(parse_sizes("256, 1024").unwrap(), vec![256, 1024]);
        assert!(parse_sizes("0").unwrap_err().contains("--value_sizes"));
        assert!(parse_sizes("4k").is_err());
    }

    /// `--open_files` bounds the open SSTs as db_bench's does; -1 leaves them unbounded.
    #[test]
    fn open_files_sets_max_open_files_and_minus_one_leaves_it_unbounded() {
        let cfg = |n: &str| {
            let flags = crate::bench::flags::parse_for_test(&["--open_files", n]).unwrap();
            BenchConfig::resolve(flags).unwrap().options.max_open_files
        };
        assert_eq!((cfg("64"), cfg("-1")), (Some(64), None));
    }

    /// `--compression_type` compresses every level (none without it: the bench compares
    /// uncompressed engines); names db_bench lacks are refused.
    #[test]
    fn compression_type_sets_every_level_and_defaults_to_none() {
        use flatlsm::Compression;
        let cfg = |args: &[&str]| {
            let flags = crate::bench::flags::parse_for_test(args)?;
            Ok::<_, String>(BenchConfig::resolve(flags)?.options)
        };
        let zstd = cfg(&["--compression_type", "zstd"]).unwrap();
        assert_eq!(zstd.compression_for_level(0), Compression::ZSTD);
        assert_eq!(zstd.compression_for_level(6), Compression::ZSTD);
        let plain = cfg(&[]).unwrap();
        assert_eq!(plain.compression_for_level(4), Compression::None);
        assert!(cfg(&["--compression_type", "snappy"]).is_err());
        assert!(cfg(&["--compression_type", "zstd:9"]).is_err());
    }

    /// `--write_breakdown` (bare or `=1`) times the write path's parts; off without it.
    #[test]
    fn write_breakdown_turns_the_engines_part_timers_on_and_is_off_by_default() {
        let on = |args: &[&str]| {
            let flags = crate::bench::flags::parse_for_test(args).unwrap();
            BenchConfig::resolve(flags).unwrap().options.write_breakdown
        };
        assert!(!on(&[]));
        assert!(on(&["--write_breakdown"]));
        assert!(!on(&["--write_breakdown", "0"]));
    }

    #[test]
    fn a_read_fraction_scales_the_reads_to_the_writes() {
        assert_eq!(reads_for(1000, Some(0.2)), 200);
        assert_eq!(reads_for(2, Some(0.2)), 1, "at least one operation");
        assert_eq!(reads_for(1000, None), 1000);
    }
}
