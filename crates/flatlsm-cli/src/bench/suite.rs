//! Runs the `--benchmarks` list, in order, on one engine, printing each result as db_bench does;
//! `freshdb` in the list splits it into parts, each run on a new, empty database
//! ([`run_parts`]).

use super::config::BenchConfig;
use super::device_reads::DeviceReadsSince;
use super::engine::{Direction, Engine, EngineStats};
use super::fill::{fill, KeyOrder};
use super::flush_cost::flush_cost;
use super::histogram::Latencies;
use super::outcome::{Outcome, Settle};
use super::runner::{Measured, OpKind, Plan};
use super::{intervals, memory, mixed, page_cache, read, ycsb_workload};
use std::time::{Duration, Instant};

/// The benchmarks db_bench has under the same names (the ones `--compare` can run through it).
pub const DB_BENCH_NAMES: &[&str] = &[
    "fillseq",
    "fillrandom",
    "overwrite",
    "readrandom",
    "readseq",
    "readreverse",
    "seekrandom",
    "readrandomwriterandom",
    "updaterandom",
];

/// The benchmarks of this tool only.
const OWN_NAMES: &[&str] = &[
    "ycsba",
    "ycsbb",
    "ycsbc",
    "ycsbd",
    "ycsbe",
    "ycsbf",
    "reopen",
    "flush",
    "multireadrandom",
    page_cache::COLD_READ_RANDOM,
];

/// The pseudo-benchmark that starts the benchmarks after it on a new, empty database (the
/// SLM-DB paper deletes and reloads its database before YCSB E).
pub const FRESH_DB: &str = "freshdb";

/// Opens the engine for one part of the benchmark list, given the part's configuration.
pub type Opener<'a> = dyn FnMut(&BenchConfig) -> Result<Box<dyn Engine>, String> + 'a;

/// Runs the benchmark list part by part (split at each `freshdb`), each part on the engine
/// `open` gives for its configuration; every part after the first has `use_existing_db` off,
/// so the opener starts it on an empty database.
pub fn run_parts(cfg: &BenchConfig, open: &mut Opener<'_>) -> Result<Vec<Outcome>, String> {
    check_names(&cfg.benchmarks, true)?;
    let mut all = Vec::new();
    for part in fresh_db_parts(cfg) {
        // Each engine starts without the heap the engines before it freed (cpu.rs).
        super::cpu::release_free_heap();
        let mut engine = open(&part)?; // removes what an earlier run left first
        warm_if_asked(cfg);
        let result = run_suite(&part, &mut *engine);
        let closed = engine.close();
        all.extend(result?);
        closed?;
    }
    Ok(all)
}

/// The configuration of each part of the benchmark list split at `freshdb`, in order.
fn fresh_db_parts(cfg: &BenchConfig) -> Vec<BenchConfig> {
    let (mut parts, mut start) = (Vec::new(), 0);
    for chunk in cfg.benchmarks.split(|b| b == FRESH_DB) {
        if !chunk.is_empty() {
            parts.push(part_config(cfg, chunk, start, parts.is_empty()));
        }
        start += chunk.len() + 1;
    }
    parts
}

/// One part: its benchmarks, with the seeds their places in the whole list (from `start`) give
/// them, on the existing database only if it is the first part and the flag asks for it.
fn part_config(cfg: &BenchConfig, chunk: &[String], start: usize, first: bool) -> BenchConfig {
    let mut one = cfg.clone();
    one.benchmarks = chunk.to_vec();
    one.args.seed = benchmark_seed(cfg, start);
    one.args.use_existing_db &= first;
    one
}

/// Refuses a name that is no benchmark (`freshdb` only where the list is split at it).
fn check_names(names: &[String], fresh_db: bool) -> Result<(), String> {
    let mut known = [DB_BENCH_NAMES, OWN_NAMES].concat();
    if fresh_db {
        known.push(FRESH_DB);
    }
    match names.iter().find(|n| !known.contains(&n.as_str())) {
        Some(name) => Err(format!(
            "unknown benchmark {name:?}; known: {}",
            known.join(", ")
        )),
        None => Ok(()),
    }
}

/// Runs every benchmark of `cfg` on `engine`; prints and returns the outcomes.
pub fn run_suite(cfg: &BenchConfig, engine: &mut dyn Engine) -> Result<Vec<Outcome>, String> {
    check_names(&cfg.benchmarks, false)?;
    println!("{}", engine.describe());
    let mut table: Option<ycsb_workload::Table> = None;
    let mut outcomes = Vec::new();
    for (i, name) in cfg.benchmarks.iter().enumerate() {
        let plan = plan(cfg, i);
        if name.starts_with("ycsb") && table.is_none() {
            if !cfg.args.use_existing_db {
                let before = engine.stats();
                let empty = ycsb_workload::Table::with_records(0);
                let m = ycsb_workload::load(&*engine, plan, cfg.num, &empty)?;
                let o = settled(&*engine, "ycsb_load", m, String::new())?;
                outcomes.push(emit(cfg, &*engine, o, &before)?);
            }
            table = Some(ycsb_workload::Table::with_records(cfg.num));
        }
        let undropped =
            page_cache::drops_before(cfg.args.drop_caches, name) && !cold_start(cfg, engine)?;
        let before = engine.stats();
        let device_reads = DeviceReadsSince::now();
        let mut o = run_one(cfg, engine, name, plan, table.as_ref())?;
        o.device_read_bytes = device_reads.bytes();
        if undropped {
            o.extra = format!("{} {}", o.extra, page_cache::NOT_DROPPED);
        }
        outcomes.push(emit(cfg, &*engine, o, &before)?);
    }
    Ok(outcomes)
}

/// Closes the engine, drops the page cache and opens the engine again; true if the cache was
/// dropped. The close is what makes the drop whole: the kernel drops no page a process has
/// mapped (a value log read through `mmap` keeps every page a read faulted in, and its
/// neighbours), and the engine's own caches go too.
fn cold_start(cfg: &BenchConfig, engine: &mut dyn Engine) -> Result<bool, String> {
    engine.close()?;
    let dropped = drop_caches(cfg);
    engine.reopen()?;
    Ok(dropped)
}

/// Drops the page cache (then warms memory again if asked); true if it was dropped.
fn drop_caches(cfg: &BenchConfig) -> bool {
    let dropped = page_cache::drop_page_cache();
    warm_if_asked(cfg);
    dropped
}

/// `--warm_memory`: fills free memory with clean page cache before an engine runs.
fn warm_if_asked(cfg: &BenchConfig) {
    if let Some(file) = &cfg.warm_file {
        super::warm_memory::warm(file, cfg.memory_limit);
    }
}

/// Prints an outcome (and tickers), appends its intervals to the CSV, and makes its stall and
/// flush figures the benchmark's own (the engine counters are cumulative; `before` holds them
/// as the benchmark started).
fn emit(
    cfg: &BenchConfig,
    engine: &dyn Engine,
    mut o: Outcome,
    before: &EngineStats,
) -> Result<Outcome, String> {
    o.stats = o.stats.since(before);
    o.memory = memory::measure(engine);
    print!(
        "{}",
        o.report(cfg.args.histogram, cfg.args.report_interval_seconds)
    );
    if cfg.args.statistics {
        print_tickers(engine);
    }
    intervals::append_csv(&cfg.report_file, &o.engine, &o.name, &o.measured.intervals)?;
    Ok(o)
}

/// The base seed of the `index`-th benchmark: each benchmark draws new keys, as in db_bench.
pub fn benchmark_seed(cfg: &BenchConfig, index: usize) -> u64 {
    cfg.args.seed.wrapping_add(1000 * index as u64)
}

/// The worker plan of the `index`-th benchmark.
fn plan(cfg: &BenchConfig, index: usize) -> Plan {
    Plan {
        ops_per_thread: cfg.num,
        duration: (cfg.args.duration > 0).then(|| Duration::from_secs(cfg.args.duration)),
        threads: cfg.args.threads,
        interval: Duration::from_secs_f64(cfg.args.report_interval_seconds),
        seed: benchmark_seed(cfg, index),
        value_size: cfg.value_size,
        rate_limit: cfg.args.rate_limit_ops,
    }
}

fn run_one(
    cfg: &BenchConfig,
    engine: &mut dyn Engine,
    name: &str,
    plan: Plan,
    table: Option<&ycsb_workload::Table>,
) -> Result<Outcome, String> {
    let reads = Plan {
        ops_per_thread: cfg.reads,
        ..plan
    };
    let scans = scan_plan(cfg, reads);
    let (num, ks) = (cfg.num, cfg.key_size);
    let e: &dyn Engine = &*engine;
    let (m, extra, writes) = match name {
        "fillseq" => (
            fill(name, e, plan, KeyOrder::Sequential, num, ks)?,
            String::new(),
            true,
        ),
        "fillrandom" | "overwrite" => (
            fill(name, e, plan, KeyOrder::Random, num, ks)?,
            String::new(),
            true,
        ),
        "readrandom" | page_cache::COLD_READ_RANDOM => {
            with_extra(read::read_random(e, reads, num, ks)?, false)
        }
        "multireadrandom" => {
            let batch = cfg.args.batch_size as usize;
            with_extra(read::multi_read_random(e, reads, num, ks, batch)?, false)
        }
        "readseq" => (
            read::read_ordered(name, e, scans, Direction::Forward)?,
            String::new(),
            false,
        ),
        "readreverse" => (
            read::read_ordered(name, e, scans, Direction::Reverse)?,
            String::new(),
            false,
        ),
        "seekrandom" => with_extra(read::seek_random(e, reads, num, ks, cfg.seek_nexts)?, false),
        "readrandomwriterandom" => with_extra(
            mixed::read_random_write_random(e, reads, num, ks, cfg.args.readwritepercent)?,
            true,
        ),
        "updaterandom" => with_extra(mixed::update_random(e, reads, num, ks)?, true),
        "reopen" => return reopen(engine),
        "flush" => with_extra(flush_cost(e)?, false),
        ycsb => {
            let table = table.ok_or("YCSB table not loaded")?;
            let conditional = cfg.ycsb_update_if_present;
            let ops = match ycsb {
                "ycsbe" => Plan {
                    ops_per_thread: cfg.scan_reads,
                    ..reads
                },
                _ => reads,
            };
            with_extra(ycsb_workload::run(ycsb, e, ops, table, conditional)?, true)
        }
    };
    if writes {
        settled(e, name, m, extra)
    } else {
        Ok(Outcome::new(&e.name(), name, m, extra, e.stats()))
    }
}

/// The plan of readseq and readreverse: `reads` entries, or with `scan_whole_db` up to `num`
/// (every key a fill of `num` writes can have made: one pass over the whole database).
fn scan_plan(cfg: &BenchConfig, reads: Plan) -> Plan {
    match cfg.scan_whole_db {
        true => Plan {
            ops_per_thread: cfg.num,
            ..reads
        },
        false => reads,
    }
}

fn with_extra((m, extra): (Measured, String), writes: bool) -> (Measured, String, bool) {
    (m, extra, writes)
}

/// Builds the outcome of a write benchmark: stats at the end, then after background work settles.
fn settled(e: &dyn Engine, name: &str, m: Measured, extra: String) -> Result<Outcome, String> {
    let mut o = Outcome::new(&e.name(), name, m, extra, e.stats());
    let start = Instant::now();
    e.wait_for_background_work()?;
    o.settle = Some(Settle {
        seconds: start.elapsed().as_secs_f64(),
        write_amplification: e.stats().write_amplification(),
    });
    Ok(o)
}

/// The `reopen` benchmark: close, then time a reopen (recovery).
fn reopen(engine: &mut dyn Engine) -> Result<Outcome, String> {
    let took = engine.reopen()?;
    let mut hist = Latencies::default();
    hist.record_ns(took.as_nanos() as u64);
    let m = Measured {
        ops: 1,
        wall_seconds: took.as_secs_f64(),
        thread_seconds: took.as_secs_f64(),
        hists: [(OpKind::Write, hist)].into_iter().collect(),
        ..Measured::default()
    };
    let resident = engine
        .recovery_bytes()
        .map(|b| {
            format!(
                ", {:.3} GiB of PMTables recovered",
                b as f64 / (1u64 << 30) as f64
            )
        })
        .unwrap_or_default();
    let extra = format!(" (reopen took {:.3} s{resident})", took.as_secs_f64());
    let mut o = Outcome::new(&engine.name(), "reopen", m, extra, engine.stats());
    o.reopen_seconds = Some(took.as_secs_f64());
    Ok(o)
}

fn print_tickers(engine: &dyn Engine) {
    println!("STATISTICS:");
    for (k, v) in engine.tickers() {
        println!("{k} COUNT : {v}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::engine::MemEngine;

    /// A configuration from flags, its interval CSV in `dir`.
    fn resolve(dir: &std::path::Path, args: &[&str]) -> BenchConfig {
        let csv = dir.join("intervals.csv").display().to_string();
        let all: Vec<&str> = ["--report_file", &csv]
            .into_iter()
            .chain(args.iter().copied())
            .collect();
        BenchConfig::resolve(crate::bench::flags::parse_for_test(&all).unwrap()).unwrap()
    }

    /// Runs `cfg` on in-memory engines, a new one per part; returns the outcomes' names and
    /// how many engines were opened.
    fn run_on_mem(cfg: &BenchConfig) -> (Vec<(String, u64)>, usize) {
        let mut opened = 0;
        let mut open = |_: &BenchConfig| -> Result<Box<dyn Engine>, String> {
            opened += 1;
            Ok(Box::new(MemEngine::default()))
        };
        let outcomes = run_parts(cfg, &mut open).unwrap();
        let names = outcomes.iter().map(|o| (o.name.clone(), o.measured.ops));
        (names.collect(), opened)
    }

    /// The error of running `cfg` on in-memory engines (empty if it ran).
    fn run_on_mem_err(cfg: &BenchConfig) -> String {
        let mut open = |_: &BenchConfig| -> Result<Box<dyn Engine>, String> {
            Ok(Box::new(MemEngine::default()))
        };
        run_parts(cfg, &mut open).err().unwrap_or_default()
    }

    /// SLM-DB's YCSB order: E runs on a new database, loaded again, with the seed of its place.
    #[test]
    fn freshdb_starts_the_rest_of_the_list_on_a_new_loaded_database() {
        let dir = tempfile::tempdir().unwrap();
        let args = ["--benchmarks", "ycsbc,ycsbd,freshdb,ycsbe", "--num", "300"];
        let cfg = resolve(dir.path(), &[&args[..], &["--reads", "50"]].concat());
        let parts = fresh_db_parts(&cfg);
        assert_eq!(parts[1].benchmarks, ["ycsbe"]);
        assert_eq!(parts[1].args.seed, benchmark_seed(&cfg, 3));
        let (names, opened) = run_on_mem(&cfg);
        let loads = names
            .iter()
            .filter(|(n, ops)| n == "ycsb_load" && *ops == 300);
        assert_eq!((opened, loads.count(), names.len()), (2, 2, 5), "{names:?}");
        assert!(check_names(&cfg.benchmarks, false).is_err());
        let typo = resolve(dir.path(), &["--benchmarks", "ycsbc,freshd"]);
        assert!(run_on_mem_err(&typo).contains("unknown benchmark \"freshd\""));
    }

    /// slmdb-ops at a tiny scale: 0.2 reads per write, range queries of 1 + 100 entries, and a
    /// sequential read of every key the fill made (about 63 % of `num`), not 0.2 × num.
    #[test]
    fn slmdb_ops_reads_a_fifth_of_the_writes_and_scans_the_whole_database() {
        let dir = tempfile::tempdir().unwrap();
        let flags = [
            "--preset",
            "slmdb-ops",
            "--pm_path",
            "/dev/shm/x",
            "--num",
            "1000",
        ];
        let cfg = resolve(dir.path(), &flags);
        assert_eq!((cfg.reads, cfg.seek_nexts), (200, 100));
        let (names, opened) = run_on_mem(&cfg);
        let ops = |name: &str| names.iter().find(|(n, _)| n == name).unwrap().1;
        assert_eq!(
            (opened, ops("readrandom"), ops("seekrandom")),
            (1, 200, 200)
        );
        assert!((500..1000).contains(&ops("readseq")), "{names:?}");
    }
}
