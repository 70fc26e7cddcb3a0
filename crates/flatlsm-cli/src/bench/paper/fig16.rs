//! Fig. 16 (section 5.2.6): FlatLSM's and Titan's (`leveled+vsep`) random-write latency by
//! value size, split into stall, WAL and memtable (data, index). The writes are Fig. 9a's
//! (the same run, its parts timed; Fig. 15's writes are its Titan rows).
//!
//! The paper's claims, without numbers: at small values FlatLSM's latency is "much lower"
//! than Titan's (Titan does not separate them and behaves as RocksDB), read at 256 B as lower;
//! at "relatively large" values (read as 4 KB and up) FlatLSM's Mem latency is higher than
//! Titan's (PM against DRAM). The gap in between is measured, not judged.

use super::breakdown::{self, Judge, OfFig9a, Parts, FLATLSM};
use super::by_size::{Peer, SIZES};
use super::causes;
use super::verdict::{ratio, Claim, Why};
use super::{Context, Section};

const DESIGNS: [Peer; 2] = [FLATLSM, ("leveled+vsep", "Titan")];

fn latency_claim(_design: &str, size: usize) -> Claim {
    match size {
        256 => Claim::AtLeast(1.0, "much lower than Titan at small values"),
        _ => Claim::Unstated("no number above small values"),
    }
}

/// FlatLSM's Mem latency over Titan's (PM against DRAM: higher at large values).
fn mem_ratio(flatlsm: &Parts, titan: &Parts) -> f64 {
    ratio(flatlsm.mem(), titan.mem())
}

fn mem_claim(_design: &str, size: usize) -> Claim {
    match size {
        4096.. => Claim::AtLeast(1.0, "FlatLSM's Mem latency higher at large values"),
        _ => Claim::Unstated("no claim below large values"),
    }
}

fn paper(_design: &str, _size: usize) -> &'static str {
    "—"
}

const LATENCY: Judge = breakdown::latency_judge(latency_claim, paper);

const MEM: Judge = Judge {
    ratio_name: "FlatLSM's Mem µs / its",
    ratio: mem_ratio,
    claim: mem_claim,
    paper,
    why: mem_why,
};

/// A large-value Mem row FlatLSM does not lose: PM runs at DRAM's speed here.
fn mem_why(_design: &str, _size: usize) -> Why {
    Why {
        smaller_gap: causes::NOT_ANALYSED,
        contradicts: causes::PM_LOG_AT_DRAM_SPEED,
    }
}

/// Takes Fig. 9a's writes (running them if no earlier figure did) and breaks them down.
pub fn run(ctx: &Context<'_>) -> Result<Section, String> {
    OfFig9a {
        figure: "Fig. 16",
        title: "Write latency breakdown against Titan, by value size",
        which: "Fig. 9a's writes of FlatLSM and `leveled+vsep` (Titan, its WAL beside the PM \
                directory)",
        second: "the Mem part (data + index)",
        designs: &DESIGNS,
        sizes: &SIZES,
        judges: [&LATENCY, &MEM],
    }
    .run(ctx)
}

#[cfg(test)]
mod tests {
    use super::super::breakdown::tests::timed_outcome;
    use super::*;

    #[test]
    fn small_values_judge_the_latency_and_large_ones_the_mem_part() {
        let mut runs = Vec::new();
        for size in SIZES {
            runs.push(timed_outcome(
                &format!("FlatLSM {size} B"),
                10,
                2.0,
                [0, 0, 10_000, 10_000],
            ));
            let titan = format!("leveled+vsep {size} B");
            runs.push(timed_outcome(&titan, 10, 4.0, [0, 10_000, 5_000, 5_000]));
        }
        let t = breakdown::table(&runs, &DESIGNS, &SIZES, &LATENCY).unwrap();
        let m = breakdown::table(&runs, &DESIGNS, &SIZES, &MEM).unwrap();
        let verdicts = |t: &str| {
            t.lines()
                .filter(|l| l.contains("Titan"))
                .map(|l| l.contains("agrees"))
                .collect::<Vec<_>>()
        };
        assert_eq!(verdicts(&t), [true, false, false, false, false], "{t}");
        assert_eq!(verdicts(&m), [false, false, true, true, true], "{m}");
        assert!(
            m.contains("| 2.00× | ≥ 1.00× (FlatLSM's Mem latency higher"),
            "{m}"
        );
    }

    /// Session 18's 64 KB row: FlatLSM's Mem part 0.91× Titan's, a copy into DRAM in both.
    #[test]
    fn a_large_value_mem_part_below_titans_names_pm_at_dram_speed() {
        let flatlsm = timed_outcome("FlatLSM 65536 B", 10, 165.0, [0, 0, 165_000, 22_000]);
        let titan = timed_outcome("leveled+vsep 65536 B", 10, 211.0, [0, 0, 186_000, 19_000]);
        let m = breakdown::table(&[flatlsm, titan], &DESIGNS, &[65536], &MEM).unwrap();
        let why = format!("contradicts — why: {}", causes::PM_LOG_AT_DRAM_SPEED);
        assert!(m.contains(&why), "{m}");
    }
}
