//! What the latency breakdowns (Figs. 16, 19 and 22) share: a write benchmark's average
//! latency split into the parts the engine timed (`Options::write_breakdown`: stall, WAL,
//! memtable data, memtable index; "other" is the rest of the measured average: sequence
//! numbers, locks, switching write buffers, the benchmark's own loop), and the table of one
//! row per (value size, design) with each part's µs and share, the paper's numbers for the
//! design where it gives any, and a judged comparison with FlatLSM.

use super::by_size::{self, Peer};
use super::verdict::{judged_row, ratio, Claim, Why};
use super::{fig9a, Context, Section};
use crate::bench::config::BenchConfig;
use crate::bench::outcome::Outcome;

/// FlatLSM itself, the first row of every size.
pub const FLATLSM: Peer = ("FlatLSM", "FlatLSM");

/// One outcome's average write latency and its timed parts, in µs per write.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Parts {
    /// The measured average latency of a write.
    pub total: f64,
    /// Stall, WAL, memtable data, memtable index.
    pub timed: [f64; 4],
}

/// The parts' names, in the order of [`Parts::timed`].
pub const PART_NAMES: [&str; 4] = ["stall", "WAL", "mem data", "mem index"];

impl Parts {
    /// The parts of `o`: the engine's nanoseconds over its writes, beside its mean latency.
    pub fn of(o: &Outcome) -> Parts {
        let writes = o.measured.ops.max(1) as f64;
        let us = |nanos: u64| nanos as f64 / writes / 1e3;
        Parts {
            total: o.latency.average,
            timed: o.stats.breakdown.parts().map(us),
        }
    }

    /// The write-buffer part (data and index: the paper's "Mem latency").
    pub fn mem(&self) -> f64 {
        self.timed[2] + self.timed[3]
    }

    /// `part`'s share of the average (0 without a measured average).
    pub fn share(&self, part: f64) -> f64 {
        match self.total > 0.0 {
            true => part / self.total,
            false => 0.0,
        }
    }

    /// What the timed parts leave of the average (never below 0).
    pub fn other(&self) -> f64 {
        (self.total - self.timed.iter().sum::<f64>()).max(0.0)
    }

    /// "1.23 (45 %)".
    fn cell(&self, part: f64) -> String {
        format!("{part:.2} ({:.0} %)", 100.0 * self.share(part))
    }
}

/// How one breakdown table compares each design with FlatLSM.
pub struct Judge {
    /// The ratio's column heading ("its µs / FlatLSM's").
    pub ratio_name: &'static str,
    /// FlatLSM's ratio to the design, from FlatLSM's parts and the design's.
    pub ratio: fn(&Parts, &Parts) -> f64,
    /// The paper's claim for the design (its label) at a value size.
    pub claim: fn(&str, usize) -> Claim,
    /// The paper's numbers for the design at a value size ("—" where it gives none).
    pub paper: fn(&str, usize) -> &'static str,
    /// Why the design's row at a value size may not agree with the paper.
    pub why: fn(&str, usize) -> Why,
}

/// The judge of a design's average latency against FlatLSM's (the other's µs over FlatLSM's),
/// on the figure's `claim`, beside its `paper` numbers, no cause named yet.
pub const fn latency_judge(
    claim: fn(&str, usize) -> Claim,
    paper: fn(&str, usize) -> &'static str,
) -> Judge {
    Judge {
        ratio_name: "its µs / FlatLSM's",
        ratio: latency_ratio,
        claim,
        paper,
        why: crate::bench::paper::causes::unexplained,
    }
}

/// The ratio of the designs' average latencies: the other's over FlatLSM's.
pub fn latency_ratio(flatlsm: &Parts, other: &Parts) -> f64 {
    ratio(other.total, flatlsm.total)
}

/// The ratio of the stall shares: the other's over FlatLSM's.
pub fn stall_share_ratio(flatlsm: &Parts, other: &Parts) -> f64 {
    ratio(other.share(other.timed[0]), flatlsm.share(flatlsm.timed[0]))
}

/// The table of `bench` in a sweep's `outcomes`: per size, a row per design (FlatLSM first).
pub fn table(
    outcomes: &[Outcome],
    designs: &[Peer],
    sizes: &[usize],
    judge: &Judge,
) -> Result<String, String> {
    let mut out = header(judge.ratio_name);
    for &size in sizes {
        let flatlsm = Parts::of(by_size::find(outcomes, FLATLSM.0, size, "fillrandom")?);
        for &design in designs {
            let o = by_size::find(outcomes, design.0, size, "fillrandom")?;
            out += &row(size, design, &flatlsm, o, judge);
        }
    }
    Ok(out)
}

fn header(ratio_name: &str) -> String {
    format!(
        "| value | design | µs/write | {} | other | paper | {ratio_name} (this run) | claim | \
         verdict | measured |\n|{}\n",
        PART_NAMES.map(|p| format!("{p} µs (share)")).join(" | "),
        "---|".repeat(13)
    )
}

/// One design's row; FlatLSM's own is measured, not judged.
fn row(size: usize, design: Peer, flatlsm: &Parts, o: &Outcome, judge: &Judge) -> String {
    let parts = Parts::of(o);
    let mut cells = vec![format!("{size} B"), format!("{} ({})", design.0, design.1)];
    cells.push(format!("{:.2}", parts.total));
    cells.extend(parts.timed.iter().map(|&p| parts.cell(p)));
    cells.push(parts.cell(parts.other()));
    cells.push((judge.paper)(design.0, size).to_string());
    let claim = match design.0 == FLATLSM.0 {
        true => Claim::Unstated("FlatLSM itself"),
        false => (judge.claim)(design.0, size),
    };
    let measured = format!("{} writes", o.measured.ops);
    let why = (judge.why)(design.0, size);
    judged_row(
        &cells,
        (judge.ratio)(flatlsm, &parts),
        claim,
        &measured,
        why,
    )
}

/// `cfg` with every part of the write path timed (`Options::write_breakdown`).
pub fn timed(mut cfg: BenchConfig) -> BenchConfig {
    cfg.args.write_breakdown = Some(true);
    cfg
}

/// How the parts were timed, for a figure's setup.
pub const HOW_TIMED: &str = "Parts timed by the engine (Options::write_breakdown: a clock \
    read around the WAL append, the write buffer's data append — the PM Log or DRAM log \
    append, the PM skiplist's node writes and persists — and the whole append, whose rest is \
    the index insert; the stall part is the slowdown delays and stops), in µs per write; \
    \"other\" is what they leave of the measured average (sequence numbers, locks, switching \
    write buffers, the benchmark's loop).";

/// A breakdown of Fig. 9a's writes (Figs. 16 and 22): its designs and sizes, and the two
/// tables it judges (the overall latency first).
pub struct OfFig9a<'a> {
    /// "Fig. 22".
    pub figure: &'static str,
    /// What the figure shows.
    pub title: &'static str,
    /// Which of Fig. 9a's writes it takes, before the workload's description.
    pub which: &'static str,
    /// What the second table judges, after the parts' description.
    pub second: &'static str,
    /// The designs, FlatLSM first.
    pub designs: &'a [Peer],
    /// The value sizes.
    pub sizes: &'a [usize],
    /// The judges of the two tables.
    pub judges: [&'a Judge; 2],
}

impl OfFig9a<'_> {
    /// Takes Fig. 9a's writes (running them if no earlier figure did) and breaks them down.
    pub fn run(&self, ctx: &Context<'_>) -> Result<Section, String> {
        let outcomes = fig9a::outcomes(ctx)?;
        let tables = self
            .judges
            .map(|j| table(&outcomes, self.designs, self.sizes, j));
        let [first, second] = tables;
        Ok(Section {
            figure: self.figure.into(),
            title: self.title.into(),
            setup: format!(
                "{}: {} {HOW_TIMED} The first table judges the overall latency, the second {}.",
                self.which,
                fig9a::workload(ctx),
                self.second
            ),
            table: format!("{}\n{}", first?, second?),
            plots: Vec::new(),
            seconds: 0.0,
        })
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::bench::engine::{EngineStats, WriteBreakdown};
    use crate::bench::runner::Measured;

    /// `engine` wrote `ops` times with `parts` nanoseconds in all and a mean of `mean` µs.
    pub fn timed_outcome(engine: &str, ops: u64, mean: f64, parts: [u64; 4]) -> Outcome {
        let m = Measured {
            ops,
            wall_seconds: 1.0,
            ..Default::default()
        };
        let [stall_nanos, wal_nanos, mem_data_nanos, mem_index_nanos] = parts;
        let breakdown = WriteBreakdown {
            stall_nanos,
            wal_nanos,
            mem_data_nanos,
            mem_index_nanos,
        };
        let stats = EngineStats {
            breakdown,
            ..EngineStats::default()
        };
        let mut o = Outcome::new(engine, "fillrandom", m, String::new(), stats);
        o.latency.average = mean;
        o
    }

    #[test]
    fn parts_are_nanoseconds_per_write_in_microseconds_and_other_is_the_rest() {
        let o = timed_outcome(
            "FlatLSM 256 B",
            1000,
            10.0,
            [1e6 as u64, 0, 2e6 as u64, 5e6 as u64],
        );
        let p = Parts::of(&o);
        assert_eq!(p.timed, [1.0, 0.0, 2.0, 5.0]);
        assert_eq!((p.mem(), p.other(), p.share(p.timed[0])), (7.0, 2.0, 0.1));
        assert_eq!(p.cell(p.timed[3]), "5.00 (50 %)");
    }

    fn no_paper(_: &str, _: usize) -> &'static str {
        "—"
    }

    fn lower(_: &str, _: usize) -> Claim {
        Claim::AtLeast(1.0, "lower")
    }

    const LATENCY: Judge = latency_judge(lower, no_paper);

    #[test]
    fn flatlsm_is_measured_and_each_other_design_judged_on_its_latency_ratio() {
        let runs = [
            timed_outcome("FlatLSM 256 B", 100, 2.0, [0, 0, 50_000, 100_000]),
            timed_outcome(
                "leveled 256 B",
                100,
                5.0,
                [100_000, 100_000, 50_000, 100_000],
            ),
        ];
        let peers = [FLATLSM, ("leveled", "RocksDB")];
        let t = table(&runs, &peers, &[256], &LATENCY).unwrap();
        let rows: Vec<&str> = t.lines().skip(2).collect();
        assert_eq!(rows.len(), 2, "{t}");
        assert!(
            rows[0].contains("| 1.00× | — (FlatLSM itself) | not judged |"),
            "{t}"
        );
        assert!(
            rows[1].starts_with("| 256 B | leveled (RocksDB) | 5.00 | 1.00 (20 %) |"),
            "{t}"
        );
        assert!(
            rows[1].contains("| 2.50× | ≥ 1.00× (lower) | agrees | 100 writes |"),
            "{t}"
        );
        assert!(table(&runs, &peers, &[4096], &LATENCY).is_err());
    }

    #[test]
    fn a_design_stalling_more_of_its_time_has_the_larger_stall_share_ratio() {
        let ours = Parts::of(&timed_outcome("a", 10, 10.0, [10_000, 0, 0, 0]));
        let theirs = Parts::of(&timed_outcome("b", 10, 10.0, [40_000, 0, 0, 0]));
        assert_eq!(stall_share_ratio(&ours, &theirs), 4.0);
        assert_eq!(latency_ratio(&ours, &theirs), 1.0);
    }
}
