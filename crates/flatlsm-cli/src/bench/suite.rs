//! Runs the `--benchmarks` list, in order, on one engine, printing each result as db_bench does.

use super::config::BenchConfig;
use super::engine::{Direction, Engine, EngineStats};
use super::fill::{fill, KeyOrder};
use super::flush_cost::flush_cost;
use super::histogram::Latencies;
use super::outcome::{Outcome, Settle};
use super::runner::{Measured, OpKind, Plan};
use super::{intervals, mixed, page_cache, read, ycsb_workload};
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
    "ycsba", "ycsbb", "ycsbc", "ycsbd", "ycsbe", "ycsbf", "reopen", "flush",
];

/// Runs every benchmark of `cfg` on `engine`; prints and returns the outcomes.
pub fn run_suite(cfg: &BenchConfig, engine: &mut dyn Engine) -> Result<Vec<Outcome>, String> {
    for name in &cfg.benchmarks {
        if !DB_BENCH_NAMES.contains(&name.as_str()) && !OWN_NAMES.contains(&name.as_str()) {
            return Err(format!(
                "unknown benchmark {name:?}; known: {}",
                [DB_BENCH_NAMES, OWN_NAMES].concat().join(", ")
            ));
        }
    }
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
        if cfg.args.drop_caches && page_cache::is_read_benchmark(name) {
            page_cache::drop_page_cache();
        }
        let before = engine.stats();
        let o = run_one(cfg, engine, name, plan, table.as_ref())?;
        outcomes.push(emit(cfg, &*engine, o, &before)?);
    }
    Ok(outcomes)
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
        "readrandom" => with_extra(read::read_random(e, reads, num, ks)?, false),
        "readseq" => (
            read::read_ordered(name, e, reads, Direction::Forward)?,
            String::new(),
            false,
        ),
        "readreverse" => (
            read::read_ordered(name, e, reads, Direction::Reverse)?,
            String::new(),
            false,
        ),
        "seekrandom" => with_extra(
            read::seek_random(e, reads, num, ks, cfg.args.seek_nexts)?,
            false,
        ),
        "readrandomwriterandom" => with_extra(
            mixed::read_random_write_random(e, reads, num, ks, cfg.args.readwritepercent)?,
            true,
        ),
        "updaterandom" => with_extra(mixed::update_random(e, reads, num, ks)?, true),
        "reopen" => return reopen(engine),
        "flush" => with_extra(flush_cost(e)?, false),
        ycsb => {
            let table = table.ok_or("YCSB table not loaded")?;
            with_extra(ycsb_workload::run(ycsb, e, reads, table)?, true)
        }
    };
    if writes {
        settled(e, name, m, extra)
    } else {
        Ok(Outcome::new(&e.name(), name, m, extra, e.stats()))
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
