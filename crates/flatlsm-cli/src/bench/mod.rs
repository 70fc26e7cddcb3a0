//! `flatlsm bench`: a db_bench-compatible benchmark tool with YCSB A–F, per-interval throughput,
//! latency histograms, plots, and a side-by-side comparison with RocksDB.
//!
//! Result lines use db_bench's format:
//! `fillrandom   :       3.123 micros/op 320234 ops/sec 12.497 seconds 4000000 operations;  1250.3 MB/s`
//! See docs/bench.md for flags, outputs and the paper-scaled comparison.

mod budget;
mod cgroup;
mod compare;
mod config;
mod cpu;
mod device_reads;
mod engine;
mod fill;
mod flags;
mod flush_cost;
mod histogram;
mod intervals;
mod json;
mod keys;
mod machine_load;
mod memory;
mod mixed;
mod outcome;
mod page_cache;
mod paper;
mod placement;
mod plot;
mod preset;
mod profiles;
mod progress;
mod read;
mod result_line;
mod runner;
mod suite;
mod sweep;
mod warm_memory;
mod workdir;
mod ycsb_gen;
mod ycsb_grid;
mod ycsb_workload;

/// Flags of `flatlsm bench` (boxed: the flag set is large and lives in [`flags`]).
#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    #[command(flatten)]
    flags: Box<flags::BenchFlags>,
}

use config::BenchConfig;
use engine::{Engine, FlatLsmEngine};
use outcome::Outcome;
use serde_json::json;
use workdir::WorkDir;

/// Runs the requested benchmarks (and the comparison, if asked for).
pub fn run(args: BenchArgs) -> Result<(), String> {
    let cfg = BenchConfig::resolve(*args.flags)?;
    let _confined = match cfg.memory_limit {
        Some(limit) => Some(confine(limit)?),
        None => None,
    };
    let work = WorkDir::new(cfg.args.db.as_deref());
    let result = run_in(&cfg, &work);
    if let Some(file) = &cfg.warm_file {
        warm_memory::remove(file);
    }
    work.cleanup(compare::SIBLINGS);
    result
}

/// Moves the run into a memory cgroup of `limit` bytes (left when the value drops).
fn confine(limit: u64) -> Result<cgroup::MemoryCgroup, String> {
    let group = cgroup::MemoryCgroup::enter(limit)?;
    println!("memory cgroup: {}", group.path().display());
    Ok(group)
}

fn run_in(cfg: &BenchConfig, work: &WorkDir) -> Result<(), String> {
    print_header(cfg);
    if let Some(parent) = cfg
        .report_file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("creating {}: {e}", parent.display()))?;
    }
    let _ = std::fs::remove_file(&cfg.report_file);
    if cfg.placement_study {
        let outcomes = placement::run(cfg, work)?;
        return finish(cfg, &outcomes, serde_json::Value::Null);
    }
    if !cfg.memory_data_ratios.is_empty() {
        // Each point drew its own figures; one figure of every point would be unreadable.
        let (outcomes, summary) = ycsb_grid::run(cfg, work)?;
        return finish_without_plots(cfg, &outcomes, summary);
    }
    if !cfg.l1_ratios.is_empty() {
        let outcomes = sweep::run(cfg, work)?;
        return finish(cfg, &outcomes, serde_json::Value::Null);
    }
    if cfg.args.preset.as_deref() == Some("flatlsm-paper") {
        return paper::run(cfg, work);
    }
    if cfg.args.compare.as_deref() == Some("profiles") {
        let (outcomes, summary) = profiles::run(cfg, work)?;
        return finish(cfg, &outcomes, summary);
    }
    let mut outcomes = run_flatlsm(cfg, work)?;
    if cfg.args.compare.is_some() && !cfg.args.keep_db {
        remove_flatlsm_files(cfg, work)?;
    }
    let comparison = match &cfg.args.compare {
        Some(other) => {
            let (more, summary) = compare::run(cfg, work, other, &outcomes)?;
            outcomes.extend(more);
            summary
        }
        None => serde_json::Value::Null,
    };
    finish(cfg, &outcomes, comparison)
}

/// Figures, the CSV's path and the JSON report of a finished run.
fn finish(
    cfg: &BenchConfig,
    outcomes: &[Outcome],
    comparison: serde_json::Value,
) -> Result<(), String> {
    if let Some(dir) = &plot_dir(cfg) {
        print_plots(plot_outcomes(dir, outcomes, "")?);
    }
    finish_without_plots(cfg, outcomes, comparison)
}

/// The CSV's path and the JSON report of a finished run.
fn finish_without_plots(
    cfg: &BenchConfig,
    outcomes: &[Outcome],
    comparison: serde_json::Value,
) -> Result<(), String> {
    println!("interval throughput CSV: {}", cfg.report_file.display());
    if let Some(path) = &cfg.args.json {
        json::write(path, config_json(cfg), outcomes, comparison)?;
        println!("json: {}", path.display());
    }
    Ok(())
}

/// Runs the benchmarks on FlatLSM (the configured profile), each part of the list (split at
/// `freshdb`) on a new database unless `--use_existing_db` keeps the first one.
fn run_flatlsm(cfg: &BenchConfig, work: &WorkDir) -> Result<Vec<Outcome>, String> {
    let mut open = |part: &BenchConfig| -> Result<Box<dyn Engine>, String> {
        if !part.args.use_existing_db {
            remove_flatlsm_files(part, work)?;
        }
        let engine = FlatLsmEngine::open(&work.db, part.options.clone(), part.args.sync)?;
        Ok(Box::new(engine))
    };
    suite::run_parts(cfg, &mut open)
}

/// Deletes FlatLSM's database (and PM Logs) once measured, to free the disk for the next engine.
fn remove_flatlsm_files(cfg: &BenchConfig, work: &WorkDir) -> Result<(), String> {
    workdir::clear_for_fresh_run(&work.db, &workdir::is_flatlsm_file)?;
    if let Some(pm) = &cfg.pm_path {
        workdir::clear_for_fresh_run(pm, &workdir::is_pm_file)?;
    }
    if let Some(wal) = &cfg.options.wal_dir {
        workdir::clear_for_fresh_run(wal, &workdir::is_flatlsm_file)?;
    }
    Ok(())
}

/// db_bench's preamble (keys, values, entries), plus this tool's extras.
fn print_header(cfg: &BenchConfig) {
    println!("Keys:       {} bytes each", cfg.key_size);
    println!("Values:     {} bytes each", cfg.value_size);
    println!("Entries:    {}", cfg.num);
    println!("Threads:    {}", cfg.args.threads);
    println!(
        "FileSize:   {:.1} MB (estimated)",
        (cfg.key_size + cfg.value_size) as f64 * cfg.num as f64 / 1048576.0
    );
    if let Some(p) = &cfg.args.preset {
        println!("Preset:     {p}");
    }
    if let Some(limit) = cfg.memory_limit {
        println!(
            "Memory:     {} MiB (memory cgroup; heap, page cache and tmpfs)",
            limit >> 20
        );
    }
    println!("------------------------------------------------");
}

fn config_json(cfg: &BenchConfig) -> serde_json::Value {
    let o = &cfg.options;
    json!({
        "benchmarks": cfg.benchmarks, "num": cfg.num, "reads": cfg.reads,
        "key_size": cfg.key_size, "value_size": cfg.value_size, "threads": cfg.args.threads,
        "duration": cfg.args.duration, "seed": cfg.args.seed, "preset": cfg.args.preset,
        "pm_path": cfg.pm_path, "pm_mode": format!("{:?}", o.pm_mode),
        "pmtable_size": o.pmtable_size, "flush_immutable_num": o.flush_immutable_num,
        "max_write_buffer_number": o.max_write_buffer_number, "l1_capacity": o.l1_capacity, "l1_merge_trigger": o.l1_merge_trigger,
        "flush_threads": o.flush_threads, "kv_separation_threshold": o.kv_separation_threshold, "value_cache": o.value_cache,
        "slowdown_immutable_num": o.slowdown_trigger(), "delayed_write_rate": o.delayed_write_rate,
        "rocksdb_blob": cfg.args.rocksdb_blob,
        "report_interval_seconds": cfg.args.report_interval_seconds,
    })
}

/// Where figures go: `--plot`, else a default directory for comparisons and the placement
/// study (a comparison always gets its figures).
fn plot_dir(cfg: &BenchConfig) -> Option<std::path::PathBuf> {
    cfg.args.plot.clone().or_else(|| {
        let default = match (&cfg.args.compare, cfg.placement_study) {
            (Some(_), _) => "flatlsm-compare-plots",
            (None, true) => "flatlsm-placement-plots",
            (None, false) => return None,
        };
        Some(std::path::PathBuf::from(default))
    })
}

fn print_plots(files: Vec<std::path::PathBuf>) {
    for f in files {
        println!("plot: {}", f.display());
    }
}

/// `o`'s throughput per interval over time, a line labelled `label`.
fn timeline(o: &Outcome, label: String) -> plot::Series {
    let points = o.measured.intervals.iter();
    plot::Series {
        label,
        points: points.map(|i| (i.end_secs, i.qps)).collect(),
    }
}

/// One throughput figure and one CDF figure holding every run (all engines, all benchmarks
/// that have a timeline), named with `prefix`.
fn plot_outcomes(
    dir: &std::path::Path,
    outcomes: &[Outcome],
    prefix: &str,
) -> Result<Vec<std::path::PathBuf>, String> {
    let with_ops: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| o.measured.ops > 1 || o.external_cdf.is_some())
        .collect();
    let label = |o: &Outcome| format!("{} {}", o.engine, o.name);
    let timelines: Vec<plot::Series> = with_ops
        .iter()
        .filter(|o| !o.measured.intervals.is_empty())
        .map(|o| timeline(o, label(o)))
        .collect();
    let cdfs: Vec<plot::Series> = with_ops
        .iter()
        .map(|o| plot::Series {
            label: label(o),
            points: o.cdf(),
        })
        .collect();
    let mut files = plot::write_figures(dir, prefix, &timelines, &cdfs)?;
    let spans: Vec<plot::Spans> = with_ops
        .iter()
        .filter(|o| !o.stats.store_compactions.is_empty())
        .map(|o| plot::Spans {
            label: label(o),
            spans: o.stats.store_compaction_spans(o.measured.wall_seconds),
        })
        .collect();
    if !spans.is_empty() {
        let path = dir.join(format!("{prefix}column_compactions.png"));
        plot::compaction_spans(&path, "Column compactions (L0-L1)", &spans)?;
        files.push(path);
    }
    Ok(files)
}
