//! Fig. 19 (section 5.3.1): the latency of the three memtable kinds of Fig. 18 — PMTables,
//! `novelsm`'s PM skiplist ("PM Memtable"), `leveled`'s DRAM memtable with its WAL in PM —
//! split into WAL, Mem Index and Mem Data, at 256 B and 4 KB, in Fig. 18's write buffers
//! (nothing flushes). Its own run of Fig. 18's configuration, so Fig. 18's throughputs pay no
//! clock reads.
//!
//! The paper's claims: at small values (read as 256 B) PMTables are faster than both, the gain
//! over the PM memtable from Mem Index (85.66 % of its latency), over DRAM + WAL from the WAL;
//! at "large value size" (Fig. 19b, read as 4 KB) PMTables' latency is 29.63 % below the PM
//! memtable's and 36.92 % below DRAM + WAL's. The PM skiplist's Mem Data is writing and
//! persisting its nodes (key and value live in them), its Mem Index finding and linking them.

use super::breakdown::{self, Judge, HOW_TIMED};
use super::by_size::Peer;
use super::verdict::{at_most_share, Claim};
use super::{fig18, Context, Section};
use crate::bench::profiles;

const SIZES: [usize; 2] = [256, 4096];
const DESIGNS: [Peer; 3] = [("FlatLSM", "PMTable"), fig18::PEERS[0], fig18::PEERS[1]];

fn claim(design: &str, size: usize) -> Claim {
    match (design, size) {
        ("novelsm", 256) => Claim::AtLeast(1.0, "lower, from Mem Index"),
        (_, 256) => Claim::AtLeast(1.0, "lower, from the WAL"),
        ("novelsm", _) => at_most_share(0.7037, "−29.63 %, Fig. 19b read as 4 KB"),
        _ => at_most_share(0.6308, "−36.92 %, Fig. 19b read as 4 KB"),
    }
}

fn paper(design: &str, size: usize) -> &'static str {
    match (design, size) {
        ("novelsm", 256) => "Mem Index 85.66 % of the latency",
        ("FlatLSM", 4096) => "Mem Data 46.99 % below DRAM+WAL's WAL + Mem Data",
        _ => "—",
    }
}

const LATENCY: Judge = Judge {
    ratio_name: "its µs / PMTable's",
    ..breakdown::latency_judge(claim, paper)
};

/// Runs the three memtables at 256 B and 4 KB, every part timed, and breaks them down.
pub fn run(ctx: &Context<'_>) -> Result<Section, String> {
    let mut cfg = breakdown::timed(fig18::config(ctx, "fig19")?);
    cfg.value_sizes = SIZES.to_vec();
    let (outcomes, _) = profiles::run(&cfg, ctx.work)?;
    Ok(Section {
        figure: "Fig. 19".into(),
        title: "Memtable latency breakdown: WAL, Mem Index, Mem Data".into(),
        setup: format!(
            "Fig. 18's run at 256 B and 4 KB: {} {HOW_TIMED}",
            fig18::setup(&cfg)?
        ),
        table: breakdown::table(&outcomes, &DESIGNS, &SIZES, &LATENCY)?,
        plots: Vec::new(),
        seconds: 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_values_need_the_papers_reductions_and_small_ones_a_lower_latency() {
        assert_eq!(claim("novelsm", 4096).judge(1.5).label(), "agrees");
        assert_eq!(claim("leveled", 4096).judge(1.5).label(), "smaller gap");
        assert_eq!(claim("leveled", 256).judge(0.9).label(), "contradicts");
        assert!(claim("leveled", 256).text().contains("from the WAL"));
    }
}
