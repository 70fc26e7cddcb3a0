//! Fig. 11: YCSB A–F (and the load) at 4 KB values, FlatLSM against `leveled` (RocksDB),
//! `novelsm` and `matrixkv` at the run's budget, each design loading its own database.

use super::causes;
use super::verdict::{ratio, Claim, Why};
use super::{find, relative, Context, Section};
use crate::bench::config::BenchConfig;
use crate::bench::outcome::Outcome;
use crate::bench::plot;
use crate::bench::profiles;

/// Records loaded at `--scale 1` (4 KB each: 4 GiB).
const RECORDS: u64 = 1_000_000;
/// Operations per workload at `--scale 1`; E runs a tenth (each a scan of up to 100).
const OPERATIONS: u64 = 500_000;
const PEERS: [&str; 3] = ["leveled", "novelsm", "matrixkv"];
/// The workloads as the report lists them, with the paper's claim for FlatLSM over the best
/// other design.
const WORKLOADS: [(&str, &str, Claim); 7] = [
    (
        "ycsb_load",
        "Load",
        Claim::AtLeast(1.0, "ahead; Fig. 9b: 1.55–2.06× MatrixKV"),
    ),
    (
        "ycsba",
        "A",
        Claim::AtLeast(2.55, "2.55× the best baseline"),
    ),
    ("ycsbb", "B", Claim::Close("close to the baselines")),
    ("ycsbc", "C", Claim::Close("close to the baselines")),
    ("ycsbd", "D", Claim::Close("close to the baselines")),
    (
        "ycsbe",
        "E",
        Claim::AtLeast(1.0, "performs well: fewer layers to scan"),
    ),
    (
        "ycsbf",
        "F",
        Claim::AtLeast(2.68, "2.68× the best baseline"),
    ),
];

/// The name Table 2 finds this figure's run by (its YCSB-A writes).
pub const YCSB_RUN: &str = "YCSB at 4 KB";

/// The YCSB run of this figure with `benchmarks` (after the load): 4 KB records, every design
/// at the budget.
pub fn ycsb_config(ctx: &Context<'_>, benchmarks: &[&str]) -> BenchConfig {
    let mut cfg = ctx.figure_config("fig11");
    cfg.benchmarks = benchmarks.iter().map(|b| b.to_string()).collect();
    cfg.value_size = 4096;
    cfg.num = ctx.count(RECORDS, 1000);
    cfg.reads = ctx.count(OPERATIONS, 200);
    cfg.scan_reads = (cfg.reads / 10).max(1);
    let designs = std::iter::once("FlatLSM").chain(PEERS);
    cfg.variants = designs.map(str::to_string).collect();
    cfg
}

/// Loads, runs A–F and judges each workload against the best of the other designs.
pub fn run(ctx: &Context<'_>) -> Result<Section, String> {
    let cfg = ycsb_config(ctx, &["ycsba", "ycsbb", "ycsbc", "ycsbd", "ycsbf", "ycsbe"]);
    let (outcomes, _) = profiles::run(&cfg, ctx.work)?;
    ctx.keep_run(YCSB_RUN, &outcomes);
    let (mut table, groups) = table(&outcomes)?;
    table += &others_line(&outcomes);
    table += &disk_reads_line(&outcomes);
    let path = ctx.dir.join("fig11").join("ycsb_over_leveled.png");
    let title = "YCSB at 4 KB: ops/s over leveled's (the paper: over RocksDB's)";
    plot::grouped_bars(&path, title, "ops/s over leveled's", &groups)?;
    Ok(Section {
        figure: "Fig. 11".into(),
        title: "YCSB A–F at 4 KB values".into(),
        setup: format!(
            "YCSB: {} records of 4 KB loaded (YCSB's hashed keys: a random-order load, where \
             the paper loads sequentially), then A, B, C, D, F with {} operations each and E \
             with {} (scans of up to 100), one database per design, in that order (the paper \
             reloads randomly for E).",
            cfg.num, cfg.reads, cfg.scan_reads
        ),
        table,
        plots: vec![relative(&ctx.dir, &path)],
        seconds: 0.0,
    })
}

/// The judged rows, one per workload, and their bar groups.
fn table(outcomes: &[Outcome]) -> Result<(String, Vec<plot::BarGroup>), String> {
    let mut table = String::from(HEADER);
    let mut groups = Vec::new();
    for (bench, name, claim) in WORKLOADS {
        let (row, group) = row(outcomes, bench, name, claim)?;
        table += &row;
        groups.push(group);
    }
    Ok((table, groups))
}

const HEADER: &str = "| workload | FlatLSM | leveled (RocksDB) | novelsm | matrixkv | \
                      FlatLSM / best other (this run) | paper | verdict |\n\
                      |---|---|---|---|---|---|---|---|\n";

/// Why a workload's row may not agree with the paper.
const WHY: Why = Why {
    smaller_gap: causes::YCSB_SMALL_DATA,
    contradicts: causes::NOT_ANALYSED,
};

/// Why a workload's row may not agree, from the run's own device reads: a loss whose reads
/// went to the disk where the best other design's did not says so ([`causes::waited_for_disk`]).
fn why(flatlsm: &Outcome, best: &Outcome) -> Why {
    let disk = causes::waited_for_disk(flatlsm.device_read_bytes, best.device_read_bytes);
    match disk {
        true => Why {
            contradicts: causes::WAITED_FOR_DISK,
            ..WHY
        },
        false => WHY,
    }
}

/// One workload's row and its bar group (ops/s over leveled's).
fn row(
    outcomes: &[Outcome],
    bench: &str,
    name: &str,
    claim: Claim,
) -> Result<(String, plot::BarGroup), String> {
    let run = |label: &str| find(outcomes, label, bench, "Fig. 11");
    let flatlsm = run("FlatLSM")?;
    let ours = flatlsm.ops_per_sec();
    let theirs = PEERS
        .iter()
        .map(|p| run(p).map(Outcome::ops_per_sec))
        .collect::<Result<Vec<_>, _>>()?;
    let best = theirs.iter().copied().fold(0.0, f64::max);
    let ratio = ratio(ours, best);
    let best_peer = PEERS[theirs.iter().position(|&t| t == best).unwrap_or(0)];
    let why = why(flatlsm, run(best_peer)?);
    let cells: Vec<String> = theirs.iter().map(|t| format!("{t:.0}")).collect();
    let row = format!(
        "| {name} | {ours:.0} | {} | {ratio:.2}× | {} | {} |\n",
        cells.join(" | "),
        claim.text(),
        claim.verdict_cell(ratio, why)
    );
    let base = theirs[0].max(f64::MIN_POSITIVE);
    let bars = std::iter::once(("FlatLSM", ours)).chain(PEERS.into_iter().zip(theirs));
    let group = (
        name.to_string(),
        bars.map(|(l, v)| (l.to_string(), v / base)).collect(),
    );
    Ok((row, group))
}

/// "CPU of other processes during each design's run: ..." (the machine may be shared).
pub fn others_line(outcomes: &[Outcome]) -> String {
    let designs = std::iter::once("FlatLSM").chain(PEERS);
    let cells: Vec<String> = designs
        .filter_map(|d| {
            let o = outcomes.iter().find(|o| o.engine == d)?;
            Some(format!("{d} {:.0} s", o.others_cpu_seconds?))
        })
        .collect();
    format!(
        "\nCPU other processes used during each design's run: {}.\n",
        cells.join(", ")
    )
}

/// What each design read from the disk during each workload (its reads served from memory or
/// not), where measured.
fn disk_reads_line(outcomes: &[Outcome]) -> String {
    let designs = std::iter::once("FlatLSM").chain(PEERS);
    let cells: Vec<String> = designs
        .filter_map(|d| {
            let per: Vec<String> = outcomes
                .iter()
                .filter(|o| o.engine == d)
                .filter_map(|o| Some(format!("{} {}", workload(o), mib(o.device_read_bytes?))))
                .collect();
            (!per.is_empty()).then(|| format!("{d} ({})", per.join(", ")))
        })
        .collect();
    match cells.is_empty() {
        true => String::new(),
        false => format!(
            "\nMiB read from the disk during each workload: {}.\n",
            cells.join("; ")
        ),
    }
}

/// A YCSB benchmark's workload letter ("Load" for the load).
fn workload(o: &Outcome) -> String {
    match o.name.strip_prefix("ycsb") {
        Some("_load") => "Load".into(),
        Some(w) => w.to_uppercase(),
        None => o.name.clone(),
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.0}", bytes as f64 / 1_048_576.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::runner::Measured;

    /// `engine`'s run of YCSB benchmark `bench` at `ops` ops/s, having read `disk_mib` MiB
    /// from the disk.
    fn run(engine: &str, bench: &str, ops: u64, disk_mib: u64) -> Outcome {
        let m = Measured {
            ops,
            wall_seconds: 1.0,
            ..Measured::default()
        };
        let mut o = Outcome::new(engine, bench, m, String::new(), Default::default());
        o.device_read_bytes = Some(disk_mib << 20);
        o
    }

    /// Every workload with FlatLSM at 100 ops/s and the others at 50, but A (FlatLSM 70
    /// against leveled's 100, FlatLSM's reads from the disk) and C (the same, no disk).
    fn runs() -> Vec<Outcome> {
        let mut all = Vec::new();
        for (bench, _, _) in WORKLOADS {
            let (ours, disk) = match bench {
                "ycsba" => (70, 300),
                "ycsbc" => (70, 0),
                _ => (100, 0),
            };
            all.push(run("FlatLSM", bench, ours, disk));
            all.push(run("leveled", bench, if ours == 70 { 100 } else { 50 }, 0));
            all.push(run("novelsm", bench, 50, 0));
            all.push(run("matrixkv", bench, 50, 0));
        }
        all
    }

    #[test]
    fn a_loss_whose_reads_went_to_the_disk_says_so_and_one_without_says_it_is_unexplained() {
        let (t, _) = table(&runs()).unwrap();
        let line = |w: &str| {
            t.lines()
                .find(|l| l.starts_with(&format!("| {w} |")))
                .unwrap()
        };
        let disk = format!("contradicts — why: {}", causes::WAITED_FOR_DISK);
        assert!(line("A").contains(&disk), "{t}");
        let unexplained = format!("contradicts — why: {}", causes::NOT_ANALYSED);
        assert!(line("C").contains(&unexplained), "{t}");
        assert!(line("B").contains("| agrees |"), "{t}");
    }

    #[test]
    fn each_designs_disk_reads_are_listed_per_workload() {
        let line = disk_reads_line(&runs());
        assert!(line.contains("FlatLSM (Load 0, A 300, B 0,"), "{line}");
        assert!(line.contains("; leveled (Load 0, A 0,"), "{line}");
    }
}
