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

use super::causes;
use super::verdict::{judged_row, ratio, write_side, Claim};
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
const CLAIM: Claim = Claim::Within(
    0.95,
    1.20,
    "\"the improvement is slight\": read as −5 % (a run's noise) to +20 % of the smallest",
);
const REFERENCE: Claim = Claim::Unstated("the smallest capacity, the reference");

/// Runs FlatLSM once per PMTable count and judges each against the smallest.
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

/// FlatLSM's fill once per PMTable count, each on a fresh database.
fn run_counts(
    ctx: &Context<'_>,
    base: &BenchConfig,
    spent: &Spending,
) -> Result<Vec<Outcome>, String> {
    let mut outcomes = Vec::new();
    for tables in TABLE_COUNTS {
        let one = with_tables(base, spent, tables, ctx.budget.dram)?;
        println!("== {FIGURE}: FlatLSM with {tables} PMTables");
        outcomes.extend(profiles::measure_design(&one, ctx.work, &label(tables))?);
    }
    Ok(outcomes)
}

fn setup(base: &BenchConfig, spent: &Spending) -> String {
    let (size, _, flush_at) = spent.write_buffer;
    format!(
        "FlatLSM alone: db_bench fillrandom, 16 B keys, 4 KB values, {} writes ({}) per count \
         (the paper: 80 GB); 4–7 PMTables of {} each (the budget's PM over six; the paper: \
         2 GB each, 8–14 GB), flush at {flush_at} immutables at every count; DRAM: the \
         tables' indexes, the block cache the rest of the budget's. Scale: 8 GiB per count \
         at --scale 1.",
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

const HEADER: &str = "| PMTables | capacity | ops/s | over the smallest's (this run) | paper | \
                      verdict | measured |\n|---|---|---|---|---|---|---|\n";

/// The rows, one per count, and the bars of the plot.
fn table(outcomes: &[Outcome], size: u64) -> Result<(String, Vec<plot::BarGroup>), String> {
    let fill = |tables| find(outcomes, &label(tables), "fillrandom", FIGURE);
    let smallest = fill(TABLE_COUNTS[0])?.ops_per_sec();
    let (mut out, mut groups) = (String::from(HEADER), Vec::new());
    for tables in TABLE_COUNTS {
        let o = fill(tables)?;
        let (capacity, over) = (
            budget::mib(tables as u64 * size),
            ratio(o.ops_per_sec(), smallest),
        );
        out += &row(o, tables, &capacity, over);
        groups.push((capacity, vec![("FlatLSM".to_string(), over)]));
    }
    Ok((out, groups))
}

/// One count's row: throughput, its ratio to the smallest capacity's, the verdict, and the
/// write amplification, stall intervals and lowest interval behind it.
fn row(o: &Outcome, tables: usize, capacity: &str, over: f64) -> String {
    let claim = match tables == TABLE_COUNTS[0] {
        true => REFERENCE,
        false => CLAIM,
    };
    let cells = [
        tables.to_string(),
        capacity.to_string(),
        format!("{:.0}", o.ops_per_sec()),
    ];
    let lowest = match o.interval_stats.count {
        0 => "no full interval".to_string(),
        _ => format!("lowest interval {:.0} ops/s", o.interval_stats.min),
    };
    let measured = format!("{}; {lowest}", write_side(o));
    judged_row(&cells, over, claim, &measured, causes::UNEXPLAINED)
}

#[cfg(test)]
mod tests {
    use super::super::by_size::tests::outcome;
    use super::*;

    fn fill(tables: usize, ops: u64) -> Outcome {
        outcome(&label(tables), "fillrandom", ops)
    }

    /// 4 tables the reference; +10 % agrees, +50 % is no "slight" gain, −10 % a loss.
    #[test]
    fn each_larger_capacity_is_judged_against_the_smallest() {
        let runs = [fill(4, 1000), fill(5, 1100), fill(6, 1500), fill(7, 900)];
        let (t, groups) = table(&runs, 170 << 20).unwrap();
        let verdict = |n: usize| {
            let line = t
                .lines()
                .find(|l| l.starts_with(&format!("| {n} |")))
                .unwrap();
            let cell = line.split(" | ").nth(5).unwrap();
            cell.split(" — why:").next().unwrap().to_string()
        };
        assert_eq!(verdict(4), "not judged");
        assert_eq!(verdict(5), "agrees");
        assert_eq!(verdict(6), "contradicts");
        assert_eq!(verdict(7), "contradicts");
        assert!(t.contains("| 5 | 850 MiB | 1100 | 1.10× |"), "{t}");
        assert_eq!(groups.len(), 4);
    }
}
