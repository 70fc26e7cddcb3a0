//! `--preset placement`: the PM placement study (RocksDB's block cache and memtable moved from
//! DRAM to PM): readrandomwriterandom (after a fill) with 1 %, 50 % and 90 % reads, each in
//! three scenarios —
//! both in DRAM; block cache in PM; block cache and memtable in PM — on the `leveled` profile,
//! each from a fresh database. One table (throughput and its ratio to the DRAM scenario, next
//! to the study's own ratios) and one figure with the nine timelines.

use super::config::BenchConfig;
use super::outcome::Outcome;
use super::workdir::WorkDir;
use flatlsm::Placement;

/// Read percentages of the study's workloads.
const READ_PERCENTS: [u32; 3] = [1, 50, 90];
/// The study's scenarios: (label, block cache placement, memtable placement).
const SCENARIOS: [(&str, Placement, Placement); 3] = [
    ("DRAM", Placement::Dram, Placement::Dram),
    ("cache in PM", Placement::Pm, Placement::Dram),
    ("cache+memtable in PM", Placement::Pm, Placement::Pm),
];
/// The study's throughput of the two PM scenarios relative to DRAM, by read percentage
/// (its section 4: 28/30 and 29/30 MB/s; 36/57 and 36/57; 77/253 and 74/253).
const STUDY_RATIOS: [(f64, f64); 3] = [(0.93, 0.97), (0.63, 0.63), (0.30, 0.29)];
/// Seconds per run unless `--duration` says otherwise (the study ran 900 s).
const DEFAULT_SECONDS: u64 = 60;

/// Runs the nine workloads; returns their outcomes, engines labelled by scenario and reads.
pub fn run(cfg: &BenchConfig, work: &WorkDir) -> Result<Vec<Outcome>, String> {
    let mut all = Vec::new();
    let mut rows = Vec::new();
    for reads in READ_PERCENTS {
        let mut row = Vec::new();
        for (label, cache, memtable) in SCENARIOS {
            let one = scenario(cfg, reads, cache, memtable);
            println!("== {reads}% reads, {label}");
            let mut outcomes = super::run_flatlsm(&one, work)?;
            super::remove_flatlsm_files(&one, work)?;
            for o in &mut outcomes {
                o.engine = format!("{label}, {reads}% reads");
            }
            let mixed = outcomes.iter().find(|o| o.name == "readrandomwriterandom");
            row.push(mixed.map_or(0.0, Outcome::ops_per_sec));
            all.extend(outcomes);
        }
        rows.push((reads, row));
    }
    print!("{}", table(&rows));
    Ok(all)
}

/// `cfg` for one workload of one scenario.
fn scenario(cfg: &BenchConfig, reads: u32, cache: Placement, memtable: Placement) -> BenchConfig {
    let mut one = cfg.clone();
    one.args.readwritepercent = reads;
    if one.args.duration == 0 {
        one.args.duration = DEFAULT_SECONDS;
    }
    one.options.block_cache_placement = cache;
    one.options.memtable_placement = memtable;
    one
}

/// The study's table: throughput per scenario and its ratio to DRAM, beside the study's.
fn table(rows: &[(u32, Vec<f64>)]) -> String {
    let mut out =
        String::from("\n=== PM placement study (readrandomwriterandom, 1 KB values) ===\n");
    out += "reads | DRAM ops/s | cache in PM ops/s (ratio; study) | cache+memtable in PM ops/s (ratio; study)\n";
    for ((reads, ops), (s1, s2)) in rows.iter().zip(STUDY_RATIOS) {
        let ratio = |x: f64| if ops[0] > 0.0 { x / ops[0] } else { 0.0 };
        out += &format!(
            "{reads:>4}% | {:>10.0} | {:>12.0} ({:.2}; {s1:.2}) | {:>12.0} ({:.2}; {s2:.2})\n",
            ops[0],
            ops[1],
            ratio(ops[1]),
            ops[2],
            ratio(ops[2])
        );
    }
    out
}
