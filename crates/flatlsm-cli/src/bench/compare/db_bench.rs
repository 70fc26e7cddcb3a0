//! RocksDB's own db_bench (Debian's rocksdb-tools, 7.8.3, built with assertions on) run as a
//! subprocess with flags equivalent to ours, one invocation per benchmark so each has its own
//! report CSV and statistics; after `freshdb` the next invocation starts a new database
//! (`--use_existing_db=0`, which has db_bench destroy the old one).
//!
//! Write benchmarks get a second invocation, `--use_existing_db=1 --benchmarks=waitforcompaction`,
//! whose statistics give the bytes written while settling. db_bench's waitforcompaction first
//! sleeps 5 s ("give background threads a chance to wake"); the settle time reported is that
//! process's wall time minus those 5 s (it includes reopening the database and flushing the
//! recovered WAL).

use super::super::config::BenchConfig;
use super::super::cpu;
use super::super::engine::EngineStats;
use super::super::histogram::Summary;
use super::super::outcome::{Outcome, Settle};
use super::super::runner::Measured;
use super::super::suite::{benchmark_seed, DB_BENCH_NAMES, FRESH_DB};
use super::parse::{parse_output, parse_report_csv, DbBenchOutput};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Benchmarks that write (and so get a settle phase).
const WRITES: &[&str] = &[
    "fillseq",
    "fillrandom",
    "overwrite",
    "readrandomwriterandom",
    "updaterandom",
];

/// The fixed sleep at the start of db_bench's waitforcompaction.
const WAIT_SLEEP_SECS: f64 = 5.0;

/// Where db_bench keeps its database and WAL.
pub struct DbBenchDirs {
    /// Database directory.
    pub db: PathBuf,
    /// WAL directory (in the PM directory's sibling when --pm_path is given).
    pub wal: Option<PathBuf>,
    /// Directory for report CSVs.
    pub scratch: PathBuf,
}

/// db_bench flags equivalent to this run's configuration, for benchmark `bench`.
/// `seed` is per benchmark: db_bench gives each benchmark of one process new seeds, and each
/// benchmark here is its own process, so the seed must differ (readrandom must not replay
/// fillrandom's keys).
pub fn db_bench_args(
    cfg: &BenchConfig,
    bench: &str,
    dirs: &DbBenchDirs,
    use_existing: bool,
    report: &Path,
    seed: u64,
) -> Vec<String> {
    let a = &cfg.args;
    let o = &cfg.options;
    let mut v = vec![
        format!("--benchmarks={bench}"),
        format!("--num={}", cfg.num),
        format!("--reads={}", cfg.reads),
        format!("--value_size={}", cfg.value_size),
        format!("--key_size={}", cfg.key_size),
        format!("--threads={}", a.threads),
        format!("--duration={}", a.duration),
        format!("--use_existing_db={}", u8::from(use_existing)),
        format!("--db={}", dirs.db.display()),
        format!("--sync={}", u8::from(a.sync)),
        format!("--seed={seed}"),
        "--histogram=1".into(),
        "--statistics=1".into(),
        format!(
            "--report_interval_seconds={}",
            a.report_interval_seconds.round().max(1.0) as u64
        ),
        format!("--report_file={}", report.display()),
        format!("--seek_nexts={}", cfg.seek_nexts),
        format!("--readwritepercent={}", a.readwritepercent),
        format!("--compression_type={}", cfg.compression()),
        "--bloom_bits=10".into(),
        format!("--write_buffer_size={}", o.pmtable_size),
        format!("--max_write_buffer_number={}", o.max_write_buffer_number),
        format!("--cache_size={}", o.block_cache_size),
        format!("--block_size={}", o.block_size),
        format!("--max_background_jobs={}", o.flush_threads.max(2)),
    ];
    if let Some(w) = &dirs.wal {
        v.push(format!("--wal_dir={}", w.display()));
    }
    v
}

/// Runs db_bench once; returns its parsed output, wall seconds and CPU seconds (user + system,
/// from the growth of this process's `RUSAGE_CHILDREN`: the bench runs one child at a time).
fn run_db_bench(bin: &Path, args: &[String]) -> Result<(DbBenchOutput, f64, Option<f64>), String> {
    let cpu_before = cpu::children_cpu_seconds();
    let start = Instant::now();
    let out = Command::new(bin)
        .args(args)
        .output()
        .map_err(|e| format!("running {}: {e}", bin.display()))?;
    let secs = start.elapsed().as_secs_f64();
    let cpu = cpu_before
        .zip(cpu::children_cpu_seconds())
        .map(|(a, b)| b - a);
    // The header (version, "Assertions are enabled") goes to stderr, results to stdout.
    let text = String::from_utf8_lossy(&out.stdout);
    let header = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!(
            "{} {} failed ({}): {}{}",
            bin.display(),
            args.join(" "),
            out.status,
            text.lines().rev().take(5).collect::<Vec<_>>().join(" | "),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .rev()
                .take(3)
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    let mut parsed = parse_output(&text);
    let head = parse_output(&header);
    parsed.assertions_enabled |= head.assertions_enabled;
    if parsed.version.is_empty() {
        parsed.version = head.version;
    }
    Ok((parsed, secs, cpu))
}

/// Runs every supported benchmark of `cfg` through db_bench; returns outcomes (engine
/// "db_bench") and the version/assertions note.
pub fn run(cfg: &BenchConfig, dirs: &DbBenchDirs) -> Result<(Vec<Outcome>, String), String> {
    let bin = &cfg.args.db_bench;
    std::fs::create_dir_all(&dirs.scratch)
        .map_err(|e| format!("creating {}: {e}", dirs.scratch.display()))?;
    let mut outcomes = Vec::new();
    let mut note = String::new();
    let mut existing = cfg.args.use_existing_db;
    for (index, bench) in cfg.benchmarks.iter().enumerate() {
        let seed = benchmark_seed(cfg, index);
        if bench == FRESH_DB {
            existing = false; // the next invocation recreates the database
            continue;
        }
        if !DB_BENCH_NAMES.contains(&bench.as_str()) {
            println!("db_bench: {bench} has no db_bench equivalent; skipped");
            continue;
        }
        let report = dirs.scratch.join(format!("db_bench-{bench}.csv"));
        let (out, _, cpu) = run_db_bench(
            bin,
            &db_bench_args(cfg, bench, dirs, existing, &report, seed),
        )?;
        existing = true;
        note = format!(
            "db_bench {}{}",
            out.version,
            if out.assertions_enabled {
                " (Debian build, assertions enabled: pessimistic timings)"
            } else {
                ""
            }
        );
        let csv = std::fs::read_to_string(&report).unwrap_or_default();
        let mut o = outcome(
            cfg,
            bench,
            &out,
            parse_report_csv(&csv, cfg.args.report_interval_seconds),
        )?;
        o.measured.cpu_seconds = cpu;
        if WRITES.contains(&bench.as_str()) {
            let (settle, secs, _) = run_db_bench(
                bin,
                &db_bench_args(cfg, "waitforcompaction", dirs, true, &report, seed),
            )?;
            let extra = ssd_bytes(&settle);
            o.settle = Some(Settle {
                seconds: (secs - WAIT_SLEEP_SECS).max(0.0),
                write_amplification: (o.stats.ssd_bytes + extra) as f64
                    / o.stats.user_bytes.max(1) as f64,
            });
        }
        print!(
            "[db_bench] {}",
            o.report(false, cfg.args.report_interval_seconds)
        );
        outcomes.push(o);
    }
    Ok((outcomes, note))
}

fn ssd_bytes(out: &DbBenchOutput) -> u64 {
    let t = |k: &str| out.tickers.get(k).copied().unwrap_or(0);
    t("rocksdb.flush.write.bytes") + t("rocksdb.compact.write.bytes")
}

/// Turns one db_bench run's output into an outcome.
fn outcome(
    cfg: &BenchConfig,
    bench: &str,
    out: &DbBenchOutput,
    intervals: Vec<super::super::intervals::Interval>,
) -> Result<Outcome, String> {
    let idx = out
        .results
        .iter()
        .position(|r| r.name == bench)
        .ok_or_else(|| format!("db_bench printed no result line for {bench}"))?;
    let r = &out.results[idx];
    let t = |k: &str| out.tickers.get(k).copied().unwrap_or(0);
    let writes = WRITES.contains(&bench);
    let stats = EngineStats {
        stall_micros: t("rocksdb.stall.micros"),
        user_bytes: if writes {
            t("rocksdb.number.keys.written") * (cfg.key_size + cfg.value_size) as u64
        } else {
            0
        },
        ssd_bytes: ssd_bytes(out),
        pm_bytes: t("rocksdb.wal.bytes"),
        flush_bytes: t("rocksdb.flush.write.bytes"),
        flush_micros: out
            .histogram_sums
            .get("rocksdb.db.flush.micros")
            .copied()
            .unwrap_or(0),
        store_compactions: Vec::new(),
        // db_bench prints no file sizes: no files line for it.
        ..EngineStats::default()
    };
    let measured = Measured {
        ops: r.ops,
        bytes: r
            .mb_per_sec
            .map_or(0, |mb| (mb * r.seconds * 1_048_576.0) as u64),
        wall_seconds: r.seconds,
        thread_seconds: r.micros_per_op * r.ops as f64 / 1e6,
        intervals,
        ..Measured::default()
    };
    // The message minus the MB/s figure: the result line is rebuilt from the numbers.
    let msg = &out.messages[idx];
    let msg = msg
        .split_once("MB/s")
        .map_or(msg.as_str(), |(_, rest)| rest);
    let mut o = Outcome::new("db_bench", bench, measured, msg.to_string(), stats);
    // The histogram with most operations stands for the benchmark (e.g. "write" for fills).
    if let Some(h) = out.histograms.iter().max_by_key(|h| h.summary.count) {
        o.latency = h.summary;
        o.external_cdf = Some(h.cdf.clone());
    } else {
        o.latency = Summary::default();
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn db_bench_args_give_each_benchmark_its_own_seed() {
        // One db_bench process per benchmark: with one seed, readrandom replayed fillrandom's
        // keys and found every key.
        let flags = crate::bench::flags::parse_for_test(&[
            "--benchmarks=fillrandom,readrandom",
            "--pmtable_size=1024",
        ])
        .unwrap();
        let cfg = BenchConfig::resolve(flags).unwrap();
        let dirs = DbBenchDirs {
            db: "/x/db".into(),
            wal: Some("/x/wal".into()),
            scratch: "/x/s".into(),
        };
        let args = |i: usize| {
            db_bench_args(
                &cfg,
                &cfg.benchmarks[i],
                &dirs,
                i > 0,
                Path::new("/x/r.csv"),
                benchmark_seed(&cfg, i),
            )
        };
        let seed = |v: Vec<String>| v.into_iter().find(|a| a.starts_with("--seed=")).unwrap();
        assert_ne!(seed(args(0)), seed(args(1)));
        let a = args(1);
        for want in [
            "--compression_type=none",
            "--bloom_bits=10",
            "--write_buffer_size=1024",
            "--wal_dir=/x/wal",
            "--use_existing_db=1",
        ] {
            assert!(a.iter().any(|x| x == want), "{want} missing in {a:?}");
        }
    }
}
