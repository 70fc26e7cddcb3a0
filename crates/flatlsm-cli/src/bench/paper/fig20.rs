//! Figs. 20–21 (section 5.3.2): instant throughput under 4 KB random writes, FlatLSM against
//! `novelsm` (NoveLSM) and `matrixkv` (MatrixKV) — Fig. 20 — and `leveled` (RocksDB) — Fig. 21
//! — from one run of every design at the budget: each design's running time, FlatLSM's as a
//! share of each other's (the paper: 11.46 % of NoveLSM's, 28.40 % of MatrixKV's, 3.83 % of
//! RocksDB's), its lowest interval throughput ("much higher than that of the baseline": no
//! number, read as ≥ 2×) and stall intervals, and one throughput-over-time plot per figure.
//!
//! Scale at `--scale 1`: preset `designs-4k`'s 8 GiB of 4 KB random writes (the paper: 80 GB),
//! throughput sampled every `--report_interval_seconds` (1 s; the paper: 10 s); a few minutes
//! in all. Table 1 reads its latencies from the same run: a report runs it once.

use super::causes;
use super::verdict::{at_most_share, judged_row, ratio, write_evidence, Claim};
use super::{find, relative, Context, Section};
use crate::bench::budget::mib;
use crate::bench::config::BenchConfig;
use crate::bench::outcome::Outcome;
use crate::bench::{plot, preset, profiles};

const FIGURE: &str = "Figs. 20–21";
/// The name Table 1 finds this run by.
const RANDOM_WRITES: &str = "4 KB random writes";
/// The preset whose data size this run writes.
const DESIGNS_PRESET: &str = "designs-4k";
const VALUE: usize = 4096;
/// The designs, FlatLSM first, each with the role it plays.
const DESIGNS: [(&str, &str); 4] = [
    ("FlatLSM", "FlatLSM"),
    ("leveled", "RocksDB"),
    ("novelsm", "NoveLSM"),
    ("matrixkv", "MatrixKV"),
];
/// The paper's running-time claim against each other design.
const RUNNING_TIME: [(&str, Claim); 3] = [
    (
        "novelsm",
        at_most_share(0.1146, "FlatLSM's time 11.46 % of NoveLSM's, Fig. 20"),
    ),
    (
        "matrixkv",
        at_most_share(0.2840, "28.40 % of MatrixKV's, Fig. 20"),
    ),
    (
        "leveled",
        at_most_share(0.0383, "3.83 % of RocksDB's, Fig. 21"),
    ),
];
const LOWEST: Claim = Claim::AtLeast(2.0, "\"much higher\"; no number, read as ≥ 2×");
/// A run shorter than one interval has no lowest interval to judge.
const NO_INTERVAL: Claim = Claim::Unstated("a run shorter than one interval");

/// The 4 KB random-write run of every design at the budget, once per report.
pub fn random_writes(ctx: &Context<'_>) -> Result<Vec<Outcome>, String> {
    ctx.shared_run(RANDOM_WRITES, || {
        let cfg = config(ctx)?;
        profiles::run(&cfg, ctx.work).map(|(outcomes, _)| outcomes)
    })
}

fn config(ctx: &Context<'_>) -> Result<BenchConfig, String> {
    let mut cfg = ctx.figure_config("fig20");
    cfg.benchmarks = vec!["fillrandom".into()];
    cfg.value_size = VALUE;
    let writes = preset::lookup(DESIGNS_PRESET)?.num.unwrap_or(0);
    cfg.num = ctx.count(writes, 1000);
    cfg.variants = DESIGNS.iter().map(|d| d.0.to_string()).collect();
    Ok(cfg)
}

/// The run's setup in prose (Table 1 states it too).
pub fn setup(ctx: &Context<'_>) -> Result<String, String> {
    let num = config(ctx)?.num;
    Ok(format!(
        "db_bench fillrandom, 16 B keys, 4 KB values, {num} writes ({}; the paper: 80 GB; \
         preset {DESIGNS_PRESET}'s 8 GiB at --scale 1), uniform keys, each design from a fresh \
         database at the budget; throughput sampled every {} s (the paper: 10 s). One run \
         serves Figs. 20–21 and Table 1. Running time is the writers' wall time (background \
         work settling after it is shown apart).",
        mib(num * (ctx.cfg.key_size + VALUE) as u64),
        ctx.cfg.args.report_interval_seconds
    ))
}

/// The fillrandom outcome of design `label` in `outcomes`.
pub fn fill<'a>(outcomes: &'a [Outcome], label: &str) -> Result<&'a Outcome, String> {
    find(outcomes, label, "fillrandom", FIGURE)
}

/// Runs (or reuses) the 4 KB random writes, tabulates each design's timeline and judges
/// FlatLSM's running time and lowest interval against each other design's.
pub fn run(ctx: &Context<'_>) -> Result<Section, String> {
    let outcomes = random_writes(ctx)?;
    let mut table = designs_table(&outcomes)?;
    table += &format!("\n{HEADER}");
    for (peer, claim) in RUNNING_TIME {
        table += &peer_rows(fill(&outcomes, "FlatLSM")?, fill(&outcomes, peer)?, claim);
    }
    Ok(Section {
        figure: FIGURE.into(),
        title: "Instant throughput under 4 KB random writes".into(),
        setup: setup(ctx)?,
        table,
        plots: plots(ctx, &outcomes)?,
        seconds: 0.0,
    })
}

const DESIGNS_HEADER: &str = "| design | running time s | ops/s | settled after s | \
                              intervals | lowest | median | highest ops/s | \
                              stall intervals (< half the mean) |\n\
                              |---|---|---|---|---|---|---|---|---|\n";

/// One row per design: its running time and its timeline's summary.
fn designs_table(outcomes: &[Outcome]) -> Result<String, String> {
    let mut out = String::from(DESIGNS_HEADER);
    for (label, role) in DESIGNS {
        out += &design_row(fill(outcomes, label)?, role);
    }
    Ok(out)
}

fn design_row(o: &Outcome, role: &str) -> String {
    let s = &o.interval_stats;
    let settled = o.settle.map_or(0.0, |st| st.seconds);
    format!(
        "| {} ({role}) | {:.1} | {:.0} | {settled:.1} | {} | {:.0} | {:.0} | {:.0} | {} |\n",
        o.engine,
        o.measured.wall_seconds,
        o.ops_per_sec(),
        s.count,
        s.min,
        s.median,
        s.max,
        s.stalls
    )
}

const HEADER: &str = "| vs | measure | FlatLSM | it | FlatLSM's advantage (this run) | paper | \
                      verdict | measured |\n|---|---|---|---|---|---|---|---|\n";

/// FlatLSM against `other`: running time (its over FlatLSM's, judged on `claim`) and lowest
/// interval throughput (FlatLSM's over its).
fn peer_rows(flatlsm: &Outcome, other: &Outcome, claim: Claim) -> String {
    let vs = format!("{} ({})", other.engine, role(&other.engine));
    let evidence = write_evidence(flatlsm, other);
    time_row(&vs, flatlsm, other, claim, &evidence) + &lowest_row(&vs, flatlsm, other, &evidence)
}

fn time_row(vs: &str, flatlsm: &Outcome, other: &Outcome, claim: Claim, evidence: &str) -> String {
    let (ours, theirs) = (flatlsm.measured.wall_seconds, other.measured.wall_seconds);
    let share = 100.0 / ratio(theirs, ours);
    let cells = [
        vs.to_string(),
        format!("running time (FlatLSM's {share:.2} % of it)"),
        format!("{ours:.1} s"),
        format!("{theirs:.1} s"),
    ];
    let why = causes::write_row(&other.engine);
    judged_row(&cells, ratio(theirs, ours), claim, evidence, why)
}

fn lowest_row(vs: &str, flatlsm: &Outcome, other: &Outcome, evidence: &str) -> String {
    let (ours, theirs) = (&flatlsm.interval_stats, &other.interval_stats);
    let claim = match ours.count.min(theirs.count) {
        0 => NO_INTERVAL,
        _ => LOWEST,
    };
    let cells = [
        vs.to_string(),
        "lowest interval ops/s".into(),
        format!("{:.0}", ours.min),
        format!("{:.0}", theirs.min),
    ];
    let why = causes::write_row(&other.engine);
    judged_row(&cells, ratio(ours.min, theirs.min), claim, evidence, why)
}

/// The paper's name for design `label`.
fn role(label: &str) -> &'static str {
    DESIGNS.iter().find(|d| d.0 == label).map_or("", |d| d.1)
}

/// The designs of each figure's plot: Fig. 20's and Fig. 21's.
const PLOTS: [(&str, &[&str]); 2] = [
    ("Fig. 20", &["FlatLSM", "novelsm", "matrixkv"]),
    ("Fig. 21", &["FlatLSM", "leveled"]),
];

/// One throughput-over-time plot per figure; their paths relative to the report.
fn plots(ctx: &Context<'_>, outcomes: &[Outcome]) -> Result<Vec<String>, String> {
    let dir = ctx.dir.join("fig20");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let mut paths = Vec::new();
    for (figure, labels) in PLOTS {
        let path = dir.join(format!("{}_throughput.png", figure.replace("Fig. ", "fig")));
        let title = format!("{figure}: instant throughput, 4 KB random writes");
        plot::throughput_over_time(&path, &title, &timelines(outcomes, labels)?)?;
        paths.push(relative(&ctx.dir, &path));
    }
    Ok(paths)
}

/// The timelines of the designs `labels`.
fn timelines(outcomes: &[Outcome], labels: &[&str]) -> Result<Vec<plot::Series>, String> {
    let line = |l: &&str| Ok(super::super::timeline(fill(outcomes, l)?, series_label(l)));
    labels.iter().map(line).collect()
}

/// "novelsm (NoveLSM)".
fn series_label(label: &str) -> String {
    format!("{label} ({})", role(label))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::intervals::Interval;
    use crate::bench::runner::Measured;

    /// `engine` wrote 1000 ops in `seconds`, its intervals at `qps` each.
    fn fill_run(engine: &str, seconds: f64, qps: &[u64]) -> Outcome {
        let intervals = qps.iter().enumerate();
        let m = Measured {
            ops: 1000,
            wall_seconds: seconds,
            intervals: intervals
                .map(|(i, &q)| Interval::new(i as f64 + 1.0, 1.0, q))
                .collect(),
            ..Default::default()
        };
        Outcome::new(engine, "fillrandom", m, String::new(), Default::default())
    }

    /// FlatLSM in 10 s against NoveLSM in 100 s (10 %: agrees with 11.46 %), its lowest
    /// interval 1.5× NoveLSM's (a smaller gap than "much higher").
    #[test]
    fn running_time_and_lowest_interval_are_judged_per_peer() {
        let flatlsm = fill_run("FlatLSM", 10.0, &[150, 100, 150]);
        let novelsm = fill_run("novelsm", 100.0, &[100, 0, 100].map(|q| q + 66));
        let rows = peer_rows(&flatlsm, &novelsm, RUNNING_TIME[0].1);
        let lines: Vec<&str> = rows.lines().collect();
        let time = "| novelsm (NoveLSM) | running time (FlatLSM's 10.00 % of it) | 10.0 s | \
                    100.0 s | 10.00× | ≥ 8.73×";
        assert!(lines[0].starts_with(time), "{}", lines[0]);
        assert!(lines[0].contains("| agrees |"), "{}", lines[0]);
        assert!(lines[1].contains("| 100 | 66 | 1.52× |"), "{}", lines[1]);
        assert!(lines[1].contains("| smaller gap — why: "), "{}", lines[1]);
        let short = fill_run("matrixkv", 0.5, &[]);
        let rows = peer_rows(&flatlsm, &short, RUNNING_TIME[1].1);
        assert!(
            rows.lines().nth(1).unwrap().contains("| not judged |"),
            "{rows}"
        );
    }

    #[test]
    fn the_designs_table_has_a_row_per_design_with_its_timeline() {
        let runs = DESIGNS.map(|(label, _)| fill_run(label, 4.0, &[300, 200, 10]));
        let t = designs_table(&runs).unwrap();
        assert!(
            t.contains("| matrixkv (MatrixKV) | 4.0 | 250 | 0.0 | 3 | 10 | 200 | 300 | 1 |"),
            "{t}"
        );
        assert_eq!(t.lines().count(), 2 + DESIGNS.len());
    }
}
