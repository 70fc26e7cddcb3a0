//! Fig. 9a (and Fig. 15's writes): random writes at 256 B, 1 KB, 4 KB, 16 KB and 64 KB values,
//! FlatLSM against `leveled` (RocksDB), `novelsm`, `matrixkv` and `leveled+vsep` (Titan), every
//! design at the run's budget, the same bytes at each size.

use super::verdict::{judged_row, ratio, write_evidence, Claim};
use super::{find_at_size, relative, Context, Section};
use crate::bench::outcome::Outcome;
use crate::bench::profiles;

/// The value sizes (the paper also runs 512 B and 8 KB).
const SIZES: [usize; 5] = [256, 1024, 4096, 16384, 65536];
/// Bytes written at each size at `--scale 1` (the paper: 80 GB).
const BYTES: u64 = 4 << 30;
/// The designs after FlatLSM, with the role each plays and the paper's claim.
const PEERS: [(&str, &str); 4] = [
    ("leveled", "RocksDB"),
    ("novelsm", "NoveLSM"),
    ("matrixkv", "MatrixKV"),
    ("leveled+vsep", "Titan"),
];

/// The paper's claim for FlatLSM over `peer` at `size` (Fig. 9a's ranges over 256 B–64 KB;
/// Fig. 15's numbers per size for Titan).
fn claim(peer: &str, size: usize) -> Claim {
    match peer {
        "leveled" => Claim::AtLeast(6.54, "6.54–27.73× over all sizes"),
        "novelsm" => Claim::AtLeast(3.65, "3.65–10.6× over all sizes"),
        "matrixkv" => Claim::AtLeast(1.01, "1.01–5.2× over all sizes"),
        _ => titan_claim(size),
    }
}

/// Fig. 15: 3.44/2.82/2.09/1.27/1.47/1.48/1.39× Titan at 256 B, 512 B, 1, 4, 8, 16, 64 KB.
fn titan_claim(size: usize) -> Claim {
    match size {
        256 => Claim::AtLeast(3.44, "Fig. 15 at 256 B"),
        1024 => Claim::AtLeast(2.09, "Fig. 15 at 1 KB"),
        4096 => Claim::AtLeast(1.27, "Fig. 15 at 4 KB"),
        16384 => Claim::AtLeast(1.48, "Fig. 15 at 16 KB"),
        _ => Claim::AtLeast(1.39, "Fig. 15 at 64 KB"),
    }
}

/// Runs the sweep and judges every (size, design) row.
pub fn run(ctx: &Context<'_>) -> Result<Section, String> {
    let mut cfg = ctx.figure_config("fig9a");
    cfg.benchmarks = vec!["fillrandom".into()];
    cfg.value_sizes = SIZES.to_vec();
    cfg.sweep_bytes = ctx.bytes(BYTES, 4 << 20);
    let designs = std::iter::once("FlatLSM").chain(PEERS.iter().map(|p| p.0));
    cfg.variants = designs.map(str::to_string).collect();
    let (outcomes, _) = profiles::run(&cfg, ctx.work)?;
    let mut table = String::from(HEADER);
    for size in SIZES {
        table += &JUDGE.rows(&outcomes, size)?;
    }
    let plot = ctx.dir.join("fig9a").join("by_value_size_fillrandom.png");
    Ok(Section {
        figure: "Fig. 9a".into(),
        title: "Random writes by value size (Fig. 15's Titan column too)".into(),
        setup: format!(
            "db_bench fillrandom, 16 B keys, {} of writes at each value size (the paper: 80 GB), \
             uniform keys; each design from a fresh database.",
            super::super::budget::mib(cfg.sweep_bytes)
        ),
        table,
        plots: vec![relative(&ctx.dir, &plot)],
        seconds: 0.0,
    })
}

/// The header of [`BySize::rows`].
pub const HEADER: &str = "| value | vs | FlatLSM ops/s | its ops/s | FlatLSM / it (this run) | \
                          paper | verdict | measured |\n|---|---|---|---|---|---|---|---|\n";

/// How a figure by value size judges FlatLSM against each peer at each size (Figs. 9a, 18).
pub struct BySize {
    /// "Fig. 9a", for error messages.
    pub figure: &'static str,
    /// The designs after FlatLSM, with the role each plays.
    pub peers: &'static [(&'static str, &'static str)],
    /// The paper's claim for FlatLSM over a peer at a size.
    pub claim: fn(&str, usize) -> Claim,
    /// What the run measured that bears on a row (FlatLSM's outcome, then the peer's).
    pub evidence: fn(&Outcome, &Outcome) -> String,
}

impl BySize {
    /// The rows of one value size: FlatLSM against each peer.
    pub fn rows(&self, outcomes: &[Outcome], size: usize) -> Result<String, String> {
        let flatlsm = find_at_size(outcomes, "FlatLSM", size, self.figure)?;
        let mut out = String::new();
        for &(peer, role) in self.peers {
            let other = find_at_size(outcomes, peer, size, self.figure)?;
            let (ours, theirs) = (flatlsm.ops_per_sec(), other.ops_per_sec());
            let cells = [
                format!("{size} B"),
                format!("{peer} ({role})"),
                format!("{ours:.0}"),
                format!("{theirs:.0}"),
            ];
            let (claim, evidence) = ((self.claim)(peer, size), (self.evidence)(flatlsm, other));
            out += &judged_row(&cells, ratio(ours, theirs), claim, &evidence);
        }
        Ok(out)
    }
}

const JUDGE: BySize = BySize {
    figure: "Fig. 9a",
    peers: &PEERS,
    claim,
    evidence: write_evidence,
};
