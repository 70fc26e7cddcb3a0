//! Fig. 12: FlatLSM alone under 4 KB random writes with 4, 5, 6 and 7 PMTables of one size, the
//! budget's PM over six (the paper: 2 GB each, 8–14 GB in all), so the total PMTable capacity
//! runs from 4/6 to 7/6 of the budget's PM; the rest as the budget sets it (flush at its
//! trigger, the slowdown derived from it; DRAM: the tables' indexes, the block cache the rest).
//! The flush trigger stays put so that only the room to absorb bursts grows, as the paper's
//! fixed "flush at 4 in use" does.
//!
//! Scale at `--scale 1`: 8 GiB of writes per count (the paper: 80 GB), PMTables of 170 MiB
//! (683 MiB to 1.2 GiB in all); under a minute per count (Fig. 9a's quiet run wrote 4 KB
//! values at ~160k ops/s). The paper: "increasing the total size of PMTable will improve
//! performance, but the improvement is slight"; each larger capacity is judged against the
//! smallest: 0.95–1.20× of its ops/s agrees (a slight gain, or a loss within a run's noise),
//! beyond either bound contradicts.
//!
//! The smallest count runs twice, first and last, and is the mean of both: their difference
//! is the spread of this run (the disk's speed drifts from minute to minute), and a row beyond
//! the band by no more than that spread says so ([`causes::WITHIN_RUN_SPREAD`]). Every row
//! shows the seconds writers were paced or stopped and the flush's speed (bytes written per
//! second of flush work): a row beyond the band whose flush speed moved the same way as its
//! throughput, by most of the row's distance from the reference, says so
//! ([`causes::FLUSH_SPEED_MOVED`]) — the writer is paced by the flush, so a faster or slower
//! disk minute is a faster or slower count.

use super::causes;
use super::verdict::{judged_row, ratio, write_side, Claim, Why};
use super::{find, relative, Context, Section};
use crate::bench::budget::{self, Entries, Spending};
use crate::bench::config::BenchConfig;
use crate::bench::outcome::Outcome;
use crate::bench::{plot, profiles};
use flatlsm::Profile;

const FIGURE: &str = "Fig. 12";
/// The PMTable counts (the paper: 4–7 of 2 GB), the smallest the reference.
const TABLE_COUNTS: [usize; 4] = [4, 5, 6, 7];
const VALUE: usize = 4096;
/// Bytes written per count at `--scale 1` (preset `designs-4k`'s 8 GiB would do too; this
/// figure runs FlatLSM alone, so it states its own).
const BYTES: u64 = 8 << 30;
/// The claim's band over the reference: a slight gain, or a loss within a run's noise.
const BAND: (f64, f64) = (0.95, 1.20);
const CLAIM: Claim = Claim::Within(
    BAND.0,
    BAND.1,
    "\"the improvement is slight\": read as −5 % (a run's noise) to +20 % of the smallest",
);
const REFERENCE: Claim = Claim::Unstated("the smallest capacity, the reference");

/// Runs FlatLSM once per PMTable count (the smallest again at the end) and judges each
/// against the smallest.
pub fn run(ctx: &Context<'_>) -> Result<Section, String> {
    let (base, spent) = (base_config(ctx)?, flatlsm_spending(ctx)?);
    let outcomes = run_counts(ctx, &base, &spent)?;
    let (table, groups) = table(&outcomes, spent.write_buffer.0 as u64)?;
    let path = ctx.dir.join("fig12").join("pmtable_capacity.png");
    let title = "4 KB random writes by total PMTable capacity";
    plot::grouped_bars(&path, title, "ops/s over the smallest's", &groups)?;
    Ok(Section {
        figure: FIGURE.into(),
        title: "Write throughput by total PMTable capacity".into(),
        setup: setup(&base, &spent),
        table,
        plots: vec![relative(&ctx.dir, &path)],
        seconds: 0.0,
    })
}

/// FlatLSM's fill once per PMTable count and the smallest's again last, each on a fresh
/// database.
fn run_counts(
    ctx: &Context<'_>,
    base: &BenchConfig,
    spent: &Spending,
) -> Result<Vec<Outcome>, String> {
    let runs = TABLE_COUNTS.map(|tables| (tables, label(tables)));
    let again = (TABLE_COUNTS[0], again_label());
    let mut outcomes = Vec::new();
    for (tables, name) in runs.into_iter().chain([again]) {
        let one = with_tables(base, spent, tables, ctx.budget.dram)?;
        println!("== {FIGURE}: {name}");
        outcomes.extend(profiles::measure_design(&one, ctx.work, &name)?);
    }
    Ok(outcomes)
}

fn setup(base: &BenchConfig, spent: &Spending) -> String {
    let (size, _, flush_at) = spent.write_buffer;
    format!(
        "FlatLSM alone: db_bench fillrandom, 16 B keys, 4 KB values, {} writes ({}) per count \
         (the paper: 80 GB); 4–7 PMTables of {} each (the budget's PM over six; the paper: \
         2 GB each, 8–14 GB), flush at {flush_at} immutables at every count; DRAM: the \
         tables' indexes, the block cache the rest of the budget's; 4 PMTables run first and \
         again last, the reference their mean. Scale: 8 GiB per count at --scale 1.",
        base.num,
        budget::mib(base.num * (base.key_size + VALUE) as u64),
        budget::mib(size as u64)
    )
}

/// The run's configuration before the PMTables are set: FlatLSM's options, 4 KB writes.
fn base_config(ctx: &Context<'_>) -> Result<BenchConfig, String> {
    let mut cfg = ctx.figure_config("fig12").with_profile(Profile::FlatLsm)?;
    cfg.benchmarks = vec!["fillrandom".into()];
    cfg.value_size = VALUE;
    cfg.num = ctx.bytes(BYTES, 4 << 20) / (cfg.key_size + VALUE) as u64;
    Ok(cfg)
}

/// How FlatLSM spends the budget at 4 KB: the PMTable size and flush trigger every count keeps.
fn flatlsm_spending(ctx: &Context<'_>) -> Result<Spending, String> {
    let entries = Entries {
        key: ctx.cfg.key_size,
        value: VALUE,
    };
    budget::spend(ctx.budget, Profile::FlatLsm, false, entries)
}

/// `base` with `tables` PMTables of the budget's size and the DRAM their indexes leave to the
/// block cache.
fn with_tables(
    base: &BenchConfig,
    spent: &Spending,
    tables: usize,
    dram: u64,
) -> Result<BenchConfig, String> {
    let size = spent.write_buffer.0 as u64;
    let entry = flatlsm::tool_support::encoded_entry_len(base.key_size, VALUE) as u64;
    let indexes = tables as u64 * budget::index_bytes(size, entry, base.key_size);
    let cache = dram
        .checked_sub(indexes)
        .ok_or_else(|| format!("{FIGURE}: {tables} PMTables' indexes exceed the DRAM budget"))?;
    let mut wider = spent.clone();
    wider.write_buffer.1 = tables;
    wider.block_cache = cache as usize;
    let mut one = base.clone();
    budget::apply(&wider, &mut one.options);
    Ok(one)
}

fn label(tables: usize) -> String {
    format!("FlatLSM {tables} PMTables")
}

/// The label of the smallest count's second run.
fn again_label() -> String {
    format!("{} again", label(TABLE_COUNTS[0]))
}

const HEADER: &str =
    "| PMTables | capacity | ops/s | over the smallest's (mean of its two runs) | paper | \
                      verdict | measured |\n|---|---|---|---|---|---|---|\n";

/// The share of a count's distance from the reference its flush's own change must reach, the
/// same way, to be named the cause.
const FLUSH_SHARE: f64 = 2.0 / 3.0;

/// The smallest count's two runs: their mean (the reference), their spread (difference over
/// mean), and the mean of their flushes' speed.
struct Reference {
    ops: f64,
    spread: f64,
    flush: f64,
}

impl Reference {
    fn of(first: &Outcome, again: &Outcome) -> Reference {
        let ops = (first.ops_per_sec() + again.ops_per_sec()) / 2.0;
        let spread = (first.ops_per_sec() - again.ops_per_sec()).abs() / ops.max(1e-9);
        let flush = (flush_speed(first) + flush_speed(again)) / 2.0;
        Reference { ops, spread, flush }
    }

    /// Why count `o` (at `over` the reference) lies outside the band: the run's spread if it
    /// reaches that far, the flush's speed if it moved the same way by most of the distance.
    fn why(&self, over: f64, o: &Outcome) -> Why {
        let beyond = (BAND.0 - over).max(over - BAND.1);
        let cause = match beyond <= self.spread {
            true => causes::WITHIN_RUN_SPREAD,
            false if self.flush_moved_with(o, over) => causes::FLUSH_SPEED_MOVED,
            false => return causes::UNEXPLAINED,
        };
        Why {
            contradicts: cause,
            ..causes::UNEXPLAINED
        }
    }

    /// True when `o`'s flush speed moved from the reference's the same way as its throughput
    /// (`over` the reference), by at least [`FLUSH_SHARE`] of that distance.
    fn flush_moved_with(&self, o: &Outcome, over: f64) -> bool {
        let moved = flush_speed(o) / self.flush.max(1e-9) - 1.0;
        let same_way = moved * (over - 1.0) > 0.0;
        self.flush > 0.0 && same_way && moved.abs() >= FLUSH_SHARE * (over - 1.0).abs()
    }
}

/// Seconds the engine delayed or stopped writers during `o`'s run.
fn paced_seconds(o: &Outcome) -> f64 {
    o.stats.stall_micros as f64 / 1e6
}

/// Bytes `o`'s flushes wrote per second of flush work (0 without a flush).
fn flush_speed(o: &Outcome) -> f64 {
    o.stats.flush_bytes as f64 / (o.stats.flush_micros as f64 / 1e6).max(1e-9)
}

/// The rows, one per count and the smallest's second run last, and the bars of the plot.
fn table(outcomes: &[Outcome], size: u64) -> Result<(String, Vec<plot::BarGroup>), String> {
    let fill = |name: &str| find(outcomes, name, "fillrandom", FIGURE);
    let (first, again) = (fill(&label(TABLE_COUNTS[0]))?, fill(&again_label())?);
    let reference = Reference::of(first, again);
    let (mut out, mut groups) = (String::from(HEADER), Vec::new());
    for tables in TABLE_COUNTS {
        let o = fill(&label(tables))?;
        let capacity = budget::mib(tables as u64 * size);
        let over = ratio(o.ops_per_sec(), reference.ops);
        let claim = if tables == TABLE_COUNTS[0] {
            REFERENCE
        } else {
            CLAIM
        };
        out += &row(o, &tables.to_string(), &capacity, (over, claim), &reference);
        groups.push((capacity, vec![("FlatLSM".to_string(), over)]));
    }
    let over = ratio(again.ops_per_sec(), reference.ops);
    let capacity = budget::mib(TABLE_COUNTS[0] as u64 * size);
    let name = format!("{} (again)", TABLE_COUNTS[0]);
    out += &row(again, &name, &capacity, (over, REFERENCE), &reference);
    Ok((out, groups))
}

/// One count's row: throughput, its ratio to the reference and the claim it is judged by,
/// the verdict, and the write amplification, stall intervals and lowest interval behind it
/// (the reference's rows also the run's spread).
fn row(
    o: &Outcome,
    tables: &str,
    capacity: &str,
    judged: (f64, Claim),
    reference: &Reference,
) -> String {
    let (over, claim) = judged;
    let cells = [
        tables.to_string(),
        capacity.to_string(),
        format!("{:.0}", o.ops_per_sec()),
    ];
    let lowest = match o.interval_stats.count {
        0 => "no full interval".to_string(),
        _ => format!("lowest interval {:.0} ops/s", o.interval_stats.min),
    };
    let (paced, flush) = (paced_seconds(o), flush_speed(o) / 1e6);
    let mut measured = format!(
        "{}; {lowest}; writers paced {paced:.1} s; flush {flush:.0} MB/s",
        write_side(o)
    );
    if matches!(claim, Claim::Unstated(_)) {
        measured += &format!("; the two runs {:.0} % apart", reference.spread * 100.0);
    }
    judged_row(&cells, over, claim, &measured, reference.why(over, o))
}

#[cfg(test)]
mod tests {
    use super::super::by_size::tests::outcome;
    use super::*;

    fn fill(tables: usize, ops: u64) -> Outcome {
        outcome(&label(tables), "fillrandom", ops)
    }

    fn again(ops: u64) -> Outcome {
        outcome(&again_label(), "fillrandom", ops)
    }

    /// The verdict cell of the row for `tables` (before its cause).
    fn verdict_of(table: &str, tables: &str) -> String {
        let line = table
            .lines()
            .find(|l| l.starts_with(&format!("| {tables} |")))
            .unwrap();
        line.split(" | ").nth(5).unwrap().to_string()
    }

    /// 4 tables the reference; +10 % agrees, +50 % is no "slight" gain, −10 % a loss.
    #[test]
    fn each_larger_capacity_is_judged_against_the_smallest() {
        let runs = [
            fill(4, 1000),
            fill(5, 1100),
            fill(6, 1500),
            fill(7, 900),
            again(1000),
        ];
        let (t, groups) = table(&runs, 170 << 20).unwrap();
        let verdict = |n: &str| {
            verdict_of(&t, n)
                .split(" — why:")
                .next()
                .unwrap()
                .to_string()
        };
        assert_eq!(verdict("4"), "not judged");
        assert_eq!(verdict("4 (again)"), "not judged");
        assert_eq!(verdict("5"), "agrees");
        assert_eq!(verdict("6"), "contradicts");
        assert_eq!(verdict("7"), "contradicts");
        assert!(t.contains("| 5 | 850 MiB | 1100 | 1.10× |"), "{t}");
        assert!(t.contains("the two runs 0 % apart"), "{t}");
        assert_eq!(groups.len(), 4);
    }

    /// Session 18's preset had 5 and 6 tables at 0.95× and 0.93× of 4: with the smallest's two
    /// runs 8 % apart, 0.93× is within the run's spread of the band; 0.80× is not.
    #[test]
    fn a_count_beyond_the_band_by_less_than_the_runs_spread_says_so() {
        let runs = [
            fill(4, 1040),
            fill(5, 930),
            fill(6, 800),
            fill(7, 1000),
            again(960),
        ];
        let (t, _) = table(&runs, 170 << 20).unwrap();
        assert!(t.contains("the two runs 8 % apart"), "{t}");
        let five = verdict_of(&t, "5");
        assert_eq!(
            five,
            format!("contradicts — why: {}", causes::WITHIN_RUN_SPREAD)
        );
        let six = verdict_of(&t, "6");
        assert_eq!(six, format!("contradicts — why: {}", causes::NOT_ANALYSED));
        assert!(verdict_of(&t, "7").starts_with("agrees"));
    }

    /// A run of `ops` writes labelled `name` whose flushes wrote at `flush` MB/s.
    fn flushed(name: &str, ops: u64, flush: u64) -> Outcome {
        let mut o = outcome(name, "fillrandom", ops);
        (o.stats.flush_bytes, o.stats.flush_micros) = (flush * 1_000_000, 1_000_000);
        o.stats.stall_micros = 12_500_000;
        o
    }

    /// The table of five runs — 4, 5, 6, 7 PMTables and 4 again — each `(ops, flush MB/s)`.
    fn flush_table(runs: [(u64, u64); 5]) -> String {
        let names = [label(4), label(5), label(6), label(7), again_label()];
        let outcomes = names
            .iter()
            .zip(runs)
            .map(|(n, (ops, mb))| flushed(n, ops, mb));
        table(&outcomes.collect::<Vec<_>>(), 170 << 20).unwrap().0
    }

    /// Session 20's preset: 6 and 7 tables 1.24× and 1.34× of 4, their flushes at 339 and 372
    /// MB/s against the reference's 288 and 281: the flush's own speed-up is most of the gain.
    /// A count as fast whose flush ran at the reference's speed (5 here) has no named cause.
    #[test]
    fn a_count_above_the_band_whose_flush_ran_faster_says_so() {
        let t = flush_table([
            (1000, 288),
            (1300, 290),
            (1240, 339),
            (1340, 372),
            (1000, 281),
        ]);
        let moved = format!("contradicts — why: {}", causes::FLUSH_SPEED_MOVED);
        assert_eq!(verdict_of(&t, "6"), moved);
        assert_eq!(verdict_of(&t, "7"), moved);
        let five = verdict_of(&t, "5");
        assert_eq!(five, format!("contradicts — why: {}", causes::NOT_ANALYSED));
        assert!(t.contains("writers paced 12.5 s; flush 372 MB/s"), "{t}");
    }

    /// Below the band the same rule holds the other way: a slower flush by most of the loss is
    /// named; a flush that sped up while the count lost is not.
    #[test]
    fn a_count_below_the_band_whose_flush_ran_slower_says_so() {
        let t = flush_table([
            (1000, 300),
            (800, 250),
            (800, 330),
            (1000, 300),
            (1000, 300),
        ]);
        let moved = format!("contradicts — why: {}", causes::FLUSH_SPEED_MOVED);
        assert_eq!(verdict_of(&t, "5"), moved);
        let six = verdict_of(&t, "6");
        assert_eq!(six, format!("contradicts — why: {}", causes::NOT_ANALYSED));
    }
}
