//! Fig. 22 (section 5.3.3): the average random-write latency of FlatLSM, `leveled` (RocksDB),
//! `novelsm` and `matrixkv` at 256 B and 4 KB values, split into Write Stall, Mem (memtable
//! data and index) and WAL latency. The writes are Fig. 9a's (the same run, its parts timed).
//!
//! The paper's claims: at 256 B FlatLSM's stall is 8.6 % of its latency and Mem 91.4 %, "similar
//! to Mem + WAL of MatrixKV", its overall latency similar to MatrixKV's and "much lower than
//! RocksDB and NoveLSM"; at 4 KB its latency is lower than all three and its stall share (18 %)
//! "much lower than other designs". "Much" gives no number: read as lower.

use super::breakdown::{self, Judge, OfFig9a, FLATLSM};
use super::by_size::{Peer, BASELINES};
use super::causes;
use super::verdict::{Claim, Why};
use super::{Context, Section};

const SIZES: [usize; 2] = [256, 4096];
const DESIGNS: [Peer; 4] = [FLATLSM, BASELINES[0], BASELINES[1], BASELINES[2]];

/// The latency claims: FlatLSM's over each design's (its µs / FlatLSM's).
fn latency_claim(design: &str, size: usize) -> Claim {
    match (design, size) {
        ("matrixkv", 256) => Claim::Close("similar overall latency to MatrixKV at 256 B"),
        (_, 256) => Claim::AtLeast(1.0, "much lower than RocksDB and NoveLSM at 256 B"),
        _ => Claim::AtLeast(1.0, "FlatLSM's latency the lowest at 4 KB"),
    }
}

/// The stall-share claims (its share / FlatLSM's): a number for FlatLSM alone at 256 B.
fn stall_claim(_design: &str, size: usize) -> Claim {
    match size {
        256 => Claim::Unstated("the paper gives FlatLSM's 8.6 % only"),
        _ => Claim::AtLeast(1.0, "FlatLSM's 18 % much lower than other designs"),
    }
}

fn paper(design: &str, size: usize) -> &'static str {
    match (design, size) {
        ("FlatLSM", 256) => "stall 8.6 %, Mem 91.4 %",
        ("FlatLSM", _) => "stall 18 %",
        ("matrixkv", 256) => "Mem + WAL ≈ FlatLSM's Mem",
        _ => "—",
    }
}

const LATENCY: Judge = breakdown::latency_judge(latency_claim, paper);

const STALL_SHARE: Judge = Judge {
    ratio_name: "its stall share / FlatLSM's",
    ratio: breakdown::stall_share_ratio,
    claim: stall_claim,
    paper,
    why: |_, _| Why {
        contradicts: causes::FLUSH_SHARES_TWO_CORES,
        ..causes::UNEXPLAINED
    },
};

/// Takes Fig. 9a's writes (running them if no earlier figure did) and breaks them down.
pub fn run(ctx: &Context<'_>) -> Result<Section, String> {
    OfFig9a {
        figure: "Fig. 22",
        title: "Write latency breakdown: stall, Mem, WAL, at 256 B and 4 KB",
        which: "Fig. 9a's writes at 256 B and 4 KB",
        second: "the stall's share of it",
        designs: &DESIGNS,
        sizes: &SIZES,
        judges: [&LATENCY, &STALL_SHARE],
    }
    .run(ctx)
}

#[cfg(test)]
mod tests {
    use super::super::breakdown::tests::timed_outcome;
    use super::*;

    /// FlatLSM at 2 µs with a tenth stalled; every other design at `other` µs, half stalled.
    fn runs(other: f64) -> Vec<crate::bench::outcome::Outcome> {
        let mut runs = Vec::new();
        for size in SIZES {
            runs.push(timed_outcome(
                &format!("FlatLSM {size} B"),
                10,
                2.0,
                [2000, 0, 9000, 9000],
            ));
            for (label, _) in BASELINES {
                let half_stalled = (other * 5e3) as u64;
                let name = format!("{label} {size} B");
                runs.push(timed_outcome(&name, 10, other, [half_stalled, 0, 0, 0]));
            }
        }
        runs
    }

    #[test]
    fn matrixkv_a_little_faster_at_256_b_is_still_similar_but_not_at_4_kb() {
        let t = breakdown::table(&runs(1.8), &DESIGNS, &SIZES, &LATENCY).unwrap();
        let row = |size: &str, d: &str| t.lines().find(|l| l.contains(size) && l.contains(d));
        assert!(
            row("256 B", "matrixkv").unwrap().contains("| agrees |"),
            "{t}"
        );
        assert!(
            row("4096 B", "matrixkv")
                .unwrap()
                .contains("| contradicts — why: "),
            "{t}"
        );
        assert!(
            row("256 B", "FlatLSM")
                .unwrap()
                .contains("| stall 8.6 %, Mem 91.4 % |"),
            "{t}"
        );
    }

    #[test]
    fn stall_shares_are_judged_at_4_kb_and_measured_at_256_b() {
        let t = breakdown::table(&runs(4.0), &DESIGNS, &SIZES, &STALL_SHARE).unwrap();
        let at = |size: &'static str| {
            let rows = t
                .lines()
                .filter(move |l| l.starts_with(&format!("| {size}")));
            rows.collect::<Vec<_>>()
        };
        let peers = &at("4096 B")[1..];
        assert!(
            peers
                .iter()
                .all(|l| l.contains("| 5.00× |") && l.contains("agrees")),
            "{t}"
        );
        assert!(at("256 B").iter().all(|l| l.contains("not judged")), "{t}");
    }
}
