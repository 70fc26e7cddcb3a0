//! The YCSB grid (`--preset ycsb`, issue 26): YCSB A–F on FlatLSM, RocksDB and RocksDB+BlobDB
//! at every value size and every data size relative to the memory, all in one run.
//!
//! Memory is the `--memory_limit` cgroup when there is one (the preset's 4 GiB), else the
//! machine's free memory when the run starts (`MemAvailable`). At each point (data ratio ×
//! value size) each engine loads `ratio × memory / (value + 24)` records (YCSB keys are
//! `user` and up to 20 digits) into a fresh database, then runs the workloads in the listed
//! order; E (scans) runs `scan_reads` operations. The engines run one after the other, so no
//! two ever share the machine.
//!
//! Output: the comparison tables of each point as it finishes, then one summary table (per
//! point and workload: each engine's ops/s, FlatLSM's ratios, P99 and P99.9), and per point a
//! figure `ycsb_<size>B_<ratio>x.png` of each engine's ops/s over RocksDB's, beside the timeline
//! and CDF figures of the point.

use super::compare;
use super::config::BenchConfig;
use super::outcome::Outcome;
use super::workdir::WorkDir;
use serde_json::{json, Value};

/// Bytes of a YCSB record besides its value: the key, `user` and up to 20 digits.
const YCSB_KEY_BYTES: u64 = 24;

/// One point of the grid and what every engine did there.
struct Point {
    label: String,
    outcomes: Vec<Outcome>,
}

/// Runs the grid; returns every outcome and the JSON of the summary.
pub fn run(cfg: &BenchConfig, work: &WorkDir) -> Result<(Vec<Outcome>, Value), String> {
    let memory = memory_bytes(cfg)?;
    println!("YCSB grid: memory {} MiB", memory >> 20);
    let mut points = Vec::new();
    for &ratio in &cfg.memory_data_ratios {
        for &size in &cfg.value_sizes {
            points.push(run_point(
                &point_config(cfg, memory, ratio, size),
                work,
                ratio,
            )?);
        }
    }
    let summary = summary_table(&points);
    println!("{summary}");
    let all = points.into_iter().flat_map(|p| p.outcomes).collect();
    Ok((all, json!({ "ycsb_summary": summary })))
}

/// The memory the data sizes are multiples of: the cgroup limit, else `MemAvailable`.
fn memory_bytes(cfg: &BenchConfig) -> Result<u64, String> {
    if let Some(limit) = cfg.memory_limit {
        return Ok(limit);
    }
    super::memory::meminfo_bytes("MemAvailable").map_err(|e| {
        format!(
            "reading MemAvailable from /proc/meminfo for the free memory: {e}; give --memory_limit"
        )
    })
}

/// The configuration of one point: its value size and record count.
fn point_config(cfg: &BenchConfig, memory: u64, ratio: f64, size: usize) -> BenchConfig {
    let mut one = cfg.clone();
    one.value_size = size;
    one.num = ((memory as f64 * ratio) as u64 / (size as u64 + YCSB_KEY_BYTES)).max(1);
    one
}

/// FlatLSM, then the in-process RocksDB engines, at one point; prints its tables and figures.
fn run_point(cfg: &BenchConfig, work: &WorkDir, ratio: f64) -> Result<Point, String> {
    let label = format!("{}B_{ratio}x", cfg.value_size);
    println!(
        "\n== YCSB point {label}: {} B values, {} records (data {ratio} x memory)",
        cfg.value_size, cfg.num
    );
    let mut outcomes = super::run_flatlsm(cfg, work)?;
    super::remove_flatlsm_files(cfg, work)?;
    let (others, note) = compare::in_process_rocksdb(cfg, work)?;
    if let Some(n) = note {
        return Err(format!("the YCSB grid needs RocksDB in process: {n}"));
    }
    outcomes.extend(others);
    for name in workloads(&outcomes) {
        let runs: Vec<&Outcome> = outcomes.iter().filter(|o| o.name == name).collect();
        println!("{}", compare::table::table(&name, &runs));
    }
    if let Some(dir) = super::plot_dir(cfg) {
        super::print_plots(super::plot_outcomes(&dir, &outcomes, &format!("{label}_"))?);
        super::print_plots(vec![ratio_figure(&dir, &label, &outcomes)?]);
    }
    Ok(Point { label, outcomes })
}

/// Benchmark names in the order they first ran.
fn workloads(outcomes: &[Outcome]) -> Vec<String> {
    first_seen(outcomes, |o| &o.name)
}

/// Engine names in the order they ran (FlatLSM first).
fn engines(outcomes: &[Outcome]) -> Vec<String> {
    first_seen(outcomes, |o| &o.engine)
}

/// The distinct values of `field` over `outcomes`, in the order they first appear.
fn first_seen(outcomes: &[Outcome], field: fn(&Outcome) -> &String) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in outcomes.iter().map(field) {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
}

/// `ycsb_<label>.png`: per workload, each engine's ops/s over RocksDB's (the second engine).
fn ratio_figure(
    dir: &std::path::Path,
    label: &str,
    outcomes: &[Outcome],
) -> Result<std::path::PathBuf, String> {
    let names = engines(outcomes);
    let ops = |engine: &str, w: &str| {
        let o = outcomes.iter().find(|o| o.engine == engine && o.name == w);
        o.map_or(0.0, Outcome::ops_per_sec)
    };
    let base = names.get(1).cloned().unwrap_or_default();
    let group = |w: &String| -> super::plot::BarGroup {
        let b = ops(&base, w);
        let ratio = |e: &String| (e.clone(), if b > 0.0 { ops(e, w) / b } else { 0.0 });
        (w.clone(), names.iter().map(ratio).collect())
    };
    let groups: Vec<_> = workloads(outcomes).iter().map(group).collect();
    let path = dir.join(format!("ycsb_{label}.png"));
    let title = format!("YCSB {label}: ops/s over {base}'s");
    super::plot::grouped_bars(&path, &title, &format!("ops/s over {base}'s"), &groups)?;
    Ok(path)
}

/// One table for every point: ops/s per engine, FlatLSM's ratio to each other engine, and
/// each engine's P99 and P99.9 (µs).
fn summary_table(points: &[Point]) -> String {
    let names = points.first().map_or(Vec::new(), |p| engines(&p.outcomes));
    let mut out = format!(
        "=== YCSB summary (ops/s; {0}'s ratio to each; P99 and P99.9 in µs, {1}) ===\n",
        names.first().map_or("FlatLSM", String::as_str),
        names.join(" / ")
    );
    out += &format!("{:<14} | {:<10}", "point", "workload");
    for n in &names {
        out += &format!(" | {n:>12}");
    }
    for n in names.iter().skip(1) {
        out += &format!(" | {:>10}", format!("/{n}"));
    }
    out += " | P99 | P99.9\n";
    for p in points {
        for w in workloads(&p.outcomes) {
            out += &summary_row(&p.label, &w, &names, &p.outcomes);
        }
    }
    out
}

/// One workload's row of the summary.
fn summary_row(label: &str, w: &str, names: &[String], outcomes: &[Outcome]) -> String {
    let cell = |e: &String| outcomes.iter().find(|o| &o.engine == e && o.name == w);
    let cells: Vec<Option<&Outcome>> = names.iter().map(cell).collect();
    let ops: Vec<f64> = cells
        .iter()
        .map(|c| c.map_or(0.0, Outcome::ops_per_sec))
        .collect();
    let mut line = format!("{label:<14} | {w:<10}");
    for v in &ops {
        line += &format!(" | {v:>12.0}");
    }
    for v in ops.iter().skip(1) {
        let r = if *v > 0.0 { ops[0] / v } else { 0.0 };
        line += &format!(" | {:>10}", format!("{r:.2}x"));
    }
    let tail = |f: fn(&Outcome) -> f64| {
        let v: Vec<String> = cells
            .iter()
            .map(|c| c.map_or("-".into(), |o| format!("{:.1}", f(o))))
            .collect();
        v.join(" / ")
    };
    line + &format!(
        " | {} | {}\n",
        tail(|o| o.latency.p99),
        tail(|o| o.latency.p999)
    )
}

#[cfg(test)]
mod tests {
    use super::super::engine::EngineStats;
    use super::super::runner::Measured;
    use super::*;

    fn outcome(engine: &str, name: &str, ops: u64) -> Outcome {
        let m = Measured {
            ops,
            wall_seconds: 1.0,
            thread_seconds: 1.0,
            ..Measured::default()
        };
        Outcome::new(engine, name, m, String::new(), EngineStats::default())
    }

    #[test]
    fn a_point_holds_its_share_of_the_memory_in_records() {
        let flags =
            crate::bench::flags::parse_for_test(&["--preset", "ycsb", "--pm_path", "/dev/shm/x"])
                .unwrap();
        let cfg = BenchConfig::resolve(flags).unwrap();
        assert_eq!(cfg.memory_limit, Some(4 << 30));
        assert_eq!((cfg.reads, cfg.scan_reads), (200_000, 20_000));
        let one = point_config(&cfg, 4 << 30, 1.5, 1000);
        assert_eq!((one.value_size, one.num), (1000, (6u64 << 30) / 1024));
    }

    #[test]
    fn memory_data_ratios_pick_points_of_the_grid_and_refuse_non_ratios() {
        let resolve = |ratios: &str| {
            let args = ["--preset", "ycsb", "--pm_path", "/dev/shm/x"];
            let more = ["--memory_data_ratios", ratios];
            let flags = crate::bench::flags::parse_for_test(&[&args[..], &more[..]].concat());
            BenchConfig::resolve(flags.unwrap())
        };
        assert_eq!(resolve("1.5").unwrap().memory_data_ratios, vec![1.5]);
        let e = resolve("0.5,x").err().unwrap();
        assert!(e.contains("--memory_data_ratios: \"x\""), "{e}");
    }

    #[test]
    fn the_summary_has_a_row_per_point_and_workload_with_ratios() {
        let outcomes = vec![
            outcome("FlatLSM", "ycsba", 300),
            outcome("FlatLSM", "ycsbc", 400),
            outcome("RocksDB", "ycsba", 100),
            outcome("RocksDB", "ycsbc", 200),
            outcome("RocksDB+Blob", "ycsba", 150),
            outcome("RocksDB+Blob", "ycsbc", 400),
        ];
        let points = [Point {
            label: "1024B_0.5x".into(),
            outcomes,
        }];
        let t = summary_table(&points);
        let a = t.lines().find(|l| l.contains("ycsba")).unwrap();
        assert!(a.contains("3.00x") && a.contains("2.00x"), "{a}");
        let c = t.lines().find(|l| l.contains("ycsbc")).unwrap();
        assert!(c.contains("2.00x") && c.contains("1.00x"), "{c}");
        assert_eq!(t.lines().count(), 4, "{t}");
    }
}
