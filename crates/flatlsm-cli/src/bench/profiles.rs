//! `--compare profiles`: the benchmarks once per design, each from a fresh database with its
//! profile's defaults and the flags given — `flatlsm`, `leveled` without value separation (the
//! RocksDB/LevelDB baseline), `leveled` with it (`leveled+vsep`, the Titan/BlobDB role, at
//! `--kv_separation_threshold` or FlatLSM's default), `novelsm` and `matrixkv` — and, in the
//! MatrixKV presets, `leveled-L0-PM` (the MatrixKV paper's RocksDB-L0-NVM: level 0 kept in the
//! PM directory and enlarged to the container's size), with `novelsm` given two memtables of
//! half the container, as that paper runs NoveLSM — then RocksDB when this build has it in
//! process; one table per benchmark with every engine and the ratios of FlatLSM to each, and
//! one timeline figure. A preset's sweep (value sizes, PM write latencies) runs all that per
//! point, then prints one table per benchmark: ops/s, mean µs and SSD bytes by point and design.

use super::budget;
use super::compare;
use super::config::{self, BenchConfig};
use super::outcome::Outcome;
use super::suite;
use super::workdir::WorkDir;
use flatlsm::Profile;
use serde_json::{json, Value};

/// One point of a preset's sweep: a value size, and an emulated PM write latency if the sweep
/// varies it.
#[derive(Clone, Copy)]
struct Point {
    size: usize,
    latency: Option<u64>,
}

impl Point {
    fn label(&self) -> String {
        match self.latency {
            Some(ns) => format!("{} B @{ns} ns", self.size),
            None => format!("{} B", self.size),
        }
    }
}

/// Runs the comparison, once per point of the preset's sweep (PM write latencies × value
/// sizes) if it has one.
pub fn run(cfg: &BenchConfig, work: &WorkDir) -> Result<(Vec<Outcome>, Value), String> {
    if cfg.value_sizes.is_empty() && cfg.pm_write_latencies.is_empty() {
        return run_once(cfg, work);
    }
    let sizes = match cfg.value_sizes.is_empty() {
        true => vec![cfg.value_size],
        false => cfg.value_sizes.clone(),
    };
    let latencies: Vec<Option<u64>> = match cfg.pm_write_latencies.is_empty() {
        true => vec![None],
        false => cfg.pm_write_latencies.iter().map(|&l| Some(l)).collect(),
    };
    let points = latencies
        .iter()
        .flat_map(|&latency| sizes.iter().map(move |&size| Point { size, latency }));
    let (mut runs, mut ran, mut summaries) = (Vec::new(), Vec::new(), Vec::new());
    for point in points {
        let (outcomes, summary) = run_point(cfg, work, point)?;
        runs.push((point.label(), outcomes));
        ran.push(point);
        summaries.push(summary);
    }
    for bench in cfg.benchmarks.iter().filter(|b| *b != suite::FRESH_DB) {
        print!("{}", sweep_table(bench, &runs));
        if let Some(dir) = super::plot_dir(cfg) {
            let path = match cfg.pm_write_latencies.is_empty() {
                true => sweep_figure(&dir, bench, &runs)?,
                false => latency_figure(&dir, bench, &ran, &runs)?,
            };
            println!("plot: {}", path.display());
        }
    }
    let all = runs.into_iter().flat_map(|(label, outcomes)| {
        outcomes.into_iter().map(move |mut o| {
            o.engine = format!("{} {label}", o.engine);
            o
        })
    });
    Ok((all.collect(), json!({ "by_value_size": summaries })))
}

/// The comparison at one point of the sweep, with its figures.
fn run_point(cfg: &BenchConfig, work: &WorkDir, p: Point) -> Result<(Vec<Outcome>, Value), String> {
    let one = point_config(cfg, p);
    println!("==== {}, {} writes", p.label(), one.num);
    let (outcomes, summary) = run_once(&one, work)?;
    // One set of figures per point too (the MatrixKV paper's Fig. 12 is one size).
    if let Some(dir) = super::plot_dir(cfg) {
        let prefix = p.label().replace([' ', '@'], "");
        super::print_plots(super::plot_outcomes(
            &dir,
            &outcomes,
            &format!("{prefix}_"),
        )?);
    }
    Ok((outcomes, summary))
}

/// The runs of one sweep point: its label, and every design's outcomes.
type PointRuns = (String, Vec<Outcome>);

/// The configuration of sweep point `p`.
fn point_config(cfg: &BenchConfig, p: Point) -> BenchConfig {
    let mut one = cfg.clone();
    one.value_size = p.size;
    if let Some(ns) = p.latency {
        // As a flag: each design's options are rebuilt from the flags and the preset.
        one.args.pm_write_latency_ns = Some(ns);
        one.options.pm_write_latency_ns = ns;
    }
    if cfg.args.num.is_none() {
        one.num = sweep_bytes(cfg, p.size) / (cfg.key_size + p.size) as u64;
        let scaled = config::reads_for(one.num, cfg.read_fraction);
        one.reads = cfg.args.reads.unwrap_or(scaled);
    }
    one
}

/// The bytes the sweep writes (or spans in keys, under `--duration`) at value size `size`.
fn sweep_bytes(cfg: &BenchConfig, size: usize) -> u64 {
    match cfg.sweep_bytes_large {
        Some((from, bytes)) if size >= from => bytes,
        _ => cfg.sweep_bytes,
    }
}

/// Throughput, mean latency and SSD bytes of benchmark `bench` by sweep point and design.
fn sweep_table(bench: &str, points: &[PointRuns]) -> String {
    let mut out = format!(
        "\n=== By value size, {bench} (ops/s, mean µs per op, MiB written to SSD since the \
         database was created; ratio of the first design's ops/s to each) ===\n"
    );
    for (label, outcomes) in points {
        let cells: Vec<&Outcome> = outcomes.iter().filter(|o| o.name == bench).collect();
        out += &sweep_row(label, &cells);
    }
    out
}

/// `by_value_size_<bench>.png` in `dir`: per point, each design's ops/s over the first
/// design's (SLM-DB's Figs. 6 and 7 normalize to LevelDB the same way).
fn sweep_figure(
    dir: &std::path::Path,
    bench: &str,
    points: &[PointRuns],
) -> Result<std::path::PathBuf, String> {
    let groups: Vec<super::plot::BarGroup> = points
        .iter()
        .map(|(label, outcomes)| {
            let cells: Vec<&Outcome> = outcomes.iter().filter(|o| o.name == bench).collect();
            let first = cells.first().map_or(0.0, |o| o.ops_per_sec());
            let ratio = |o: &&Outcome| match first > 0.0 {
                true => o.ops_per_sec() / first,
                false => 0.0,
            };
            (
                label.clone(),
                cells.iter().map(|o| (o.engine.clone(), ratio(o))).collect(),
            )
        })
        .collect();
    let path = dir.join(format!("by_value_size_{bench}.png"));
    let first = groups
        .first()
        .and_then(|g| g.1.first())
        .map_or("the first design", |b| b.0.as_str());
    let y = format!("ops/s over {first}'s");
    super::plot::grouped_bars(&path, &format!("{bench}, by value size"), &y, &groups)?;
    Ok(path)
}

/// `by_pm_latency_<bench>.png` in `dir`: per value size, the first design's mean latency at
/// each emulated PM write latency over its latency at the first one (SLM-DB's Fig. 5
/// normalizes to DRAM's the same way).
fn latency_figure(
    dir: &std::path::Path,
    bench: &str,
    points: &[Point],
    runs: &[PointRuns],
) -> Result<std::path::PathBuf, String> {
    let mean = |i: usize| {
        let first = runs[i].1.iter().find(|o| o.name == bench);
        first.map_or(0.0, |o| o.latency.average)
    };
    let mut sizes: Vec<usize> = Vec::new();
    for p in points {
        if !sizes.contains(&p.size) {
            sizes.push(p.size);
        }
    }
    let group = |size: usize| -> super::plot::BarGroup {
        let at: Vec<usize> = (0..points.len())
            .filter(|&i| points[i].size == size)
            .collect();
        let base = at.first().map_or(0.0, |&i| mean(i));
        let ratio = |i: usize| if base > 0.0 { mean(i) / base } else { 0.0 };
        let bar = |&i: &usize| (format!("{} ns", points[i].latency.unwrap_or(0)), ratio(i));
        (format!("{size} B"), at.iter().map(bar).collect())
    };
    let groups: Vec<_> = sizes.iter().map(|&s| group(s)).collect();
    let path = dir.join(format!("by_pm_latency_{bench}.png"));
    let title = format!("{bench}, mean latency by PM write latency");
    super::plot::grouped_bars(&path, &title, "latency over the first's", &groups)?;
    Ok(path)
}

/// One point's row: per design its ops/s, mean µs, SSD MiB and the first design's ratio to it.
fn sweep_row(label: &str, cells: &[&Outcome]) -> String {
    let first = cells.first().map_or(0.0, |o| o.ops_per_sec());
    let mut out = format!("{label:>16}");
    for o in cells {
        let (ops, ssd) = (o.ops_per_sec(), o.stats.ssd_bytes as f64 / MIB);
        let ratio = if ops > 0.0 { first / ops } else { 0.0 };
        let mean = o.latency.average;
        out += &format!(
            " | {} {ops:.0} {mean:.1} µs {ssd:.0} MiB ({ratio:.2}x)",
            o.engine
        );
    }
    out + "\n"
}

/// Bytes in a MiB.
const MIB: f64 = 1_048_576.0;

/// Runs every profile (FlatLSM's first, the reference of the ratios); returns the outcomes,
/// engines labelled by profile, and the comparison summary.
fn run_once(cfg: &BenchConfig, work: &WorkDir) -> Result<(Vec<Outcome>, Value), String> {
    if let Some(bad) = (cfg.variants.iter()).find(|l| VARIANTS.iter().all(|v| v.label != *l)) {
        let labels: Vec<&str> = VARIANTS.iter().map(|v| v.label).collect();
        return Err(format!(
            "--designs: no design {bad:?} (expected: {})",
            labels.join(", ")
        ));
    }
    let mut all = Vec::new();
    let chosen = |v: &&Variant| match cfg.variants.is_empty() {
        true => v.by_default,
        false => cfg.variants.iter().any(|l| l == v.label),
    };
    let variants = VARIANTS.iter().filter(chosen);
    for v in variants {
        let (label, one) = (v.label, variant_config(cfg, v)?);
        println!("== {label}{}", separation_note(&one));
        if let Some(spent) = spending(cfg, v)? {
            println!("   budget spent: {}", spent.describe());
        }
        all.extend(measure_design(&one, work, label)?);
    }
    let (rocksdb, note) = match rocksdb_left_out(cfg) {
        Some(why) => (Vec::new(), Some(why.to_string())),
        None => compare::in_process_rocksdb(cfg, work)?,
    };
    all.extend(rocksdb);
    let summary = print_tables(cfg, &all, note);
    Ok((all, summary))
}

/// Runs the benchmarks of `one` on a fresh database of its design, then deletes it; the
/// outcomes carry `label` and the CPU other processes took meanwhile.
pub fn measure_design(
    one: &BenchConfig,
    work: &WorkDir,
    label: &str,
) -> Result<Vec<Outcome>, String> {
    let others = super::machine_load::OthersSince::now();
    let mut outcomes = super::run_flatlsm(one, work)?;
    let busy = others.and_then(|o| o.seconds());
    super::remove_flatlsm_files(one, work)?;
    if let Some(s) = busy {
        println!("   other processes used {s:.1} CPU s during this design's run");
    }
    for o in &mut outcomes {
        o.engine = label.to_string();
        o.others_cpu_seconds = busy;
    }
    Ok(outcomes)
}

/// Why this comparison leaves in-process RocksDB out, if it does.
fn rocksdb_left_out(cfg: &BenchConfig) -> Option<&'static str> {
    match (cfg.budget, &cfg.args.report) {
        // RocksDB's memory is its own options': it would not be an equal comparison.
        (Some(_), _) => Some(NO_ROCKSDB_UNDER_A_BUDGET),
        // The paper's report compares this engine's designs, even where no budget binds them
        // (Fig. 18's memtables).
        (None, Some(_)) => Some(NO_ROCKSDB_IN_THE_REPORT),
        (None, None) => None,
    }
}

/// Why a comparison at a budget leaves RocksDB out.
const NO_ROCKSDB_UNDER_A_BUDGET: &str =
    "in-process RocksDB not run: a budget binds this engine's designs only (`leveled` plays RocksDB)";
/// Why the paper's report leaves RocksDB out.
const NO_ROCKSDB_IN_THE_REPORT: &str =
    "in-process RocksDB not run: the report compares this engine's designs (`leveled` plays RocksDB)";

/// One design compared.
struct Variant {
    label: &'static str,
    profile: Profile,
    /// Whether `leveled` separates values (`None`: the profile's own rule).
    separate: Option<bool>,
    /// Level 0 in the PM directory, enlarged to the matrix container's size.
    level0_in_pm: bool,
    /// Run unless a preset names the variants to run.
    by_default: bool,
}

const fn variant(label: &'static str, profile: Profile, separate: Option<bool>) -> Variant {
    Variant {
        label,
        profile,
        separate,
        level0_in_pm: false,
        by_default: true,
    }
}

/// The designs compared, FlatLSM first (the reference of the ratios when it runs). A preset
/// may name the ones to run (`leveled-L0-PM` and `slmdb` run only when named).
const VARIANTS: [Variant; 7] = [
    variant("FlatLSM", Profile::FlatLsm, None),
    variant("leveled", Profile::Leveled, Some(false)),
    variant("leveled+vsep", Profile::Leveled, Some(true)),
    Variant {
        level0_in_pm: true,
        by_default: false,
        ..variant("leveled-L0-PM", Profile::Leveled, Some(false))
    },
    variant("novelsm", Profile::NoveLsm, None),
    variant("matrixkv", Profile::MatrixKv, None),
    Variant {
        by_default: false,
        ..variant("slmdb", Profile::SlmDb, None)
    },
];

/// RocksDB-L0-NVM as the MatrixKV paper builds it: level 0 in PM, enlarged to the container's
/// size — its compaction trigger is the container in memtables, slowdown and stop 9/8 and 10/8
/// of that (MatrixKV's scripts: 128, 144 and 160 files of 64 MB for 8 GB).
fn enlarge_level0_in_pm(o: &mut flatlsm::Options) {
    let files = (o.matrixkv.container_size / o.pmtable_size.max(1) as u64).max(4) as usize;
    o.leveled.level0_in_pm = true;
    o.leveled.level0_file_num_compaction_trigger = files;
    o.leveled.level0_slowdown_writes_trigger = files * 9 / 8;
    o.leveled.level0_stop_writes_trigger = files * 10 / 8;
}

/// NoveLSM as the MatrixKV paper runs it: its NVM (the container's size) holds two persistent
/// memtables of half of it each.
fn halve_container_into_memtables(o: &mut flatlsm::Options) {
    let half = o.matrixkv.container_size / 2;
    o.pmtable_size = usize::try_from(half).unwrap_or(usize::MAX);
    o.max_write_buffer_number = 2;
    o.flush_immutable_num = 1;
}

/// LevelDB 1.20's defaults, as the SLM-DB paper runs LevelDB ("default values for all
/// parameters except the MemTable size"): 2 MiB files, level 1 of 10 MiB growing tenfold,
/// level-0 compaction at 4 files, slowdown at 8, stop at 12, one flush thread.
fn leveldb_defaults(o: &mut flatlsm::Options) {
    o.target_file_size = 2 << 20;
    o.flush_threads = 1;
    let l = &mut o.leveled;
    l.max_bytes_for_level_base = 10 << 20;
    l.max_bytes_for_level_multiplier = 10.0;
    l.level0_file_num_compaction_trigger = 4;
    l.level0_slowdown_writes_trigger = 8;
    l.level0_stop_writes_trigger = 12;
}

/// ` (values >= N B in value logs)` when the variant separates values.
fn separation_note(cfg: &BenchConfig) -> String {
    match cfg.options.kv_separation_threshold {
        usize::MAX => String::new(),
        n => format!(" (values >= {n} B in value logs)"),
    }
}

/// The configuration of one variant: the profile's options, with value separation forced off
/// or on (at the flag's threshold, else FlatLSM's default) where the variant says.
fn variant_config(cfg: &BenchConfig, v: &Variant) -> Result<BenchConfig, String> {
    let mut one = cfg.with_profile(v.profile)?;
    if v.level0_in_pm {
        enlarge_level0_in_pm(&mut one.options);
    }
    if cfg.matrixkv_peers && v.profile == Profile::NoveLsm {
        halve_container_into_memtables(&mut one.options);
    }
    if cfg.leveldb_peers && matches!(v.profile, Profile::Leveled | Profile::NoveLsm) {
        leveldb_defaults(&mut one.options);
    }
    if let Some(spent) = spending(cfg, v)? {
        budget::apply(&spent, &mut one.options);
    }
    let default = flatlsm::Options::default().kv_separation_threshold;
    match v.separate {
        Some(false) => one.options.kv_separation_threshold = usize::MAX,
        Some(true) => {
            let flag = cfg.args.kv_separation_threshold;
            one.options.kv_separation_threshold = flag.unwrap_or(default);
        }
        None => {}
    }
    Ok(one)
}

/// "every design got DRAM X, PM Y" when the comparison has a budget.
fn budget_note(cfg: &BenchConfig) -> Option<String> {
    let b = cfg.budget?;
    Some(format!(
        "equal budget per design: {} (bench/budget.rs)",
        b.describe()
    ))
}

/// How variant `v` spends the comparison's budget at its value size (`None`: no budget).
fn spending(cfg: &BenchConfig, v: &Variant) -> Result<Option<budget::Spending>, String> {
    let Some(b) = cfg.budget else {
        return Ok(None);
    };
    let entries = budget::Entries {
        key: cfg.key_size,
        value: cfg.value_size,
    };
    budget::spend(b, v.profile, v.level0_in_pm, entries).map(Some)
}

/// One table per benchmark (every engine that ran it, FlatLSM first).
fn print_tables(cfg: &BenchConfig, all: &[Outcome], note: Option<String>) -> Value {
    println!("\n=== Comparison of designs ===");
    let note = budget_note(cfg)
        .into_iter()
        .chain(note)
        .reduce(|a, b| format!("{a}; {b}"));
    if let Some(n) = &note {
        println!("note: {n}");
    }
    let mut tables = Vec::new();
    for bench in &cfg.benchmarks {
        let runs: Vec<&Outcome> = all.iter().filter(|o| &o.name == bench).collect();
        if runs.len() > 1 {
            let t = compare::table::table(bench, &runs);
            println!("{t}");
            let mut j = compare::table::table_json(bench, &runs);
            j["table"] = json!(t);
            tables.push(j);
        }
    }
    json!({ "notes": note.into_iter().collect::<Vec<_>>(), "tables": tables })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(args: &[&str]) -> BenchConfig {
        BenchConfig::resolve(crate::bench::flags::parse_for_test(args).unwrap()).unwrap()
    }

    /// The SLM-DB presets give LevelDB's roles LevelDB's defaults and leave `slmdb` its own.
    #[test]
    fn slmdb_presets_run_leveled_and_novelsm_with_leveldb_defaults() {
        let cfg = resolve(&["--preset", "slmdb-writes", "--pm_path", "/dev/shm/x"]);
        let of = |label: &str| VARIANTS.iter().find(|v| v.label == label).unwrap();
        for label in ["leveled", "novelsm"] {
            let o = variant_config(&cfg, of(label)).unwrap().options;
            assert_eq!(o.target_file_size, 2 << 20, "{label}");
            assert_eq!(o.leveled.max_bytes_for_level_base, 10 << 20, "{label}");
            assert_eq!(o.leveled.level0_stop_writes_trigger, 12, "{label}");
        }
        let slmdb = variant_config(&cfg, of("slmdb")).unwrap().options;
        assert_eq!(
            slmdb.target_file_size,
            flatlsm::Options::default().target_file_size
        );
        let other = resolve(&["--preset", "designs-4k", "--pm_path", "/dev/shm/x"]);
        let leveled = variant_config(&other, of("leveled")).unwrap().options;
        assert_ne!(leveled.leveled.level0_stop_writes_trigger, 12);
    }

    /// A figure's larger key space cap (Fig. 9a: 12 GiB from 16 KB on) gives those sizes their
    /// own bytes; the smaller sizes keep the sweep's.
    #[test]
    fn sizes_from_the_large_threshold_take_the_large_bytes() {
        let mut cfg = resolve(&["--preset", "slmdb-ops", "--pm_path", "/dev/shm/x"]);
        cfg.sweep_bytes_large = Some((16384, 1 << 30));
        let at = |size| {
            let latency = None;
            point_config(&cfg, Point { size, latency }).num
        };
        let entry = |size: usize| (cfg.key_size + size) as u64;
        assert_eq!(at(4096), (2u64 << 30) / entry(4096));
        assert_eq!(at(16384), (1u64 << 30) / entry(16384));
        assert_eq!(at(65536), (1u64 << 30) / entry(65536));
    }

    /// slmdb-ops and slmdb-ycsb: `leveled` (no value separation) against `slmdb`, each point
    /// writing 2 GiB and reading 0.2 of its writes; `--sweep_bytes` and `--reads` override.
    #[test]
    fn slmdb_read_presets_compare_leveled_and_slmdb_at_a_fifth_of_the_writes() {
        for preset in ["slmdb-ops", "slmdb-ycsb"] {
            let cfg = resolve(&["--preset", preset, "--pm_path", "/dev/shm/x"]);
            assert_eq!(cfg.variants, ["leveled", "slmdb"]);
            assert_eq!(cfg.value_sizes, [1024, 4096, 16384, 65536]);
            let one = point_config(
                &cfg,
                Point {
                    size: 4096,
                    latency: None,
                },
            );
            assert_eq!(one.num, (2u64 << 30) / 4116);
            assert_eq!(one.reads, (one.num as f64 * 0.2).round() as u64);
            let chosen = VARIANTS
                .iter()
                .filter(|v| cfg.variants.iter().any(|l| l == v.label));
            let profiles: Vec<Profile> = chosen.map(|v| v.profile).collect();
            assert_eq!(profiles, [Profile::Leveled, Profile::SlmDb]);
            let small = ["--sweep_bytes", "1044000", "--reads", "7"];
            let cfg = resolve(&[&["--preset", preset, "--pm_path", "/x"][..], &small].concat());
            let one = point_config(
                &cfg,
                Point {
                    size: 1024,
                    latency: None,
                },
            );
            assert_eq!((one.num, one.reads), (1000, 7));
        }
        let ycsb = resolve(&["--preset", "slmdb-ycsb", "--pm_path", "/dev/shm/x"]);
        assert!(ycsb.ycsb_update_if_present && !ycsb.scan_whole_db);
        let ops = resolve(&["--preset", "slmdb-ops", "--pm_path", "/dev/shm/x"]);
        assert!(ops.scan_whole_db && !ops.ycsb_update_if_present);
        assert_eq!(ops.seek_nexts, 100);
    }

    /// `engine` ran `bench`: `ops` operations in 1 s, `ssd` MiB on SSD since creation.
    fn outcome(engine: &str, bench: &str, ops: u64, ssd: u64) -> Outcome {
        let m = super::super::runner::Measured {
            ops,
            wall_seconds: 1.0,
            ..Default::default()
        };
        let stats = super::super::engine::EngineStats {
            ssd_bytes: ssd << 20,
            ..Default::default()
        };
        Outcome::new(engine, bench, m, String::new(), stats)
    }

    /// One table per benchmark: a row per point, per design its ops/s, SSD MiB and ratio.
    #[test]
    fn the_sweep_table_of_a_benchmark_shows_every_design_at_every_point() {
        let point = |label: &str, k: u64| {
            let runs = ["fillrandom", "readrandom"].iter().flat_map(|b| {
                [
                    outcome("leveled", b, 400 * k, 30),
                    outcome("slmdb", b, 200 * k, 10),
                ]
            });
            (label.to_string(), runs.collect::<Vec<_>>())
        };
        let points = [point("1024 B", 1), point("4096 B", 2)];
        let t = sweep_table("readrandom", &points);
        assert!(t.contains("=== By value size, readrandom"), "{t}");
        let row = t.lines().find(|l| l.contains("4096 B")).unwrap();
        assert!(row.contains("| slmdb 400 0.0 µs 10 MiB (2.00x)"), "{row}");
        assert_eq!(t.matches("leveled").count(), 2, "{t}");
    }

    /// Regression: the PM latency sweep set the latency in the options it then rebuilt per
    /// design from the preset, so every point ran at the preset's 500 ns.
    #[test]
    fn each_point_of_a_latency_sweep_runs_every_design_at_its_latency() {
        let args = crate::bench::flags::parse_for_test(&[
            "--preset",
            "slmdb-pm-latency",
            "--pm_path",
            "/dev/shm/flatlsm-test-pm",
        ])
        .unwrap();
        let cfg = BenchConfig::resolve(args).unwrap();
        assert_eq!(cfg.pm_write_latencies, vec![0, 300, 500, 900]);
        for ns in [0, 300, 900] {
            let one = point_config(
                &cfg,
                Point {
                    size: 1024,
                    latency: Some(ns),
                },
            );
            let slmdb = VARIANTS.iter().find(|v| v.label == "slmdb").unwrap();
            let run = variant_config(&one, slmdb).unwrap();
            assert_eq!(run.options.pm_write_latency_ns, ns);
            assert_eq!(run.value_size, 1024);
        }
    }
}
