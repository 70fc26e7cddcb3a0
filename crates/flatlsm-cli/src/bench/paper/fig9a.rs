//! Fig. 9a (and Fig. 15's writes): random writes (`fillrandom`) at 256 B, 1 KB, 4 KB, 16 KB and
//! 64 KB values, FlatLSM against `leveled` (RocksDB), `novelsm`, `matrixkv` and `leveled+vsep`
//! (Titan), every design at the run's budget, for the same time at each size: 35 s at `--scale
//! 1` (at least 1 s at the run's scale, else 4 GiB of writes, 1/20 of the paper's 80 GB), over
//! a key space of 16 GiB (12 GiB at 16 and 64 KB, where FlatLSM's value logs reach 33 GB in
//! 35 s, as much as this disk holds beside the rest). The paper writes each key once (80 GB);
//! this disk holds no 35 s of that at 4 KB and above, so keys are overwritten (FlatLSM, the
//! fastest, most: its value-log GC runs within the load).

use super::by_size::{self, share_of_paper, Judged, Sweep, Timed, WITH_TITAN};
use super::causes;
use super::verdict::{write_evidence, Claim};
use super::{Context, Section};
use crate::bench::budget::mib;
use crate::bench::outcome::Outcome;

const SWEEP: Sweep = Sweep {
    dir: "fig9a",
    benchmarks: &["fillrandom"],
    bytes: 4 << 30,
    reads: None,
    peers: &WITH_TITAN,
    timed: Some(TIMED),
};

const TIMED: Timed = Timed {
    seconds: 35.0,
    key_bytes: 16 << 30,
    large_from: 16384,
    large_bytes: 12 << 30,
};

const JUDGED: Judged = Judged {
    bench: "fillrandom",
    claim,
    evidence: write_evidence,
    why: |row| causes::write_row(row.peer),
    beside: None,
};

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

/// Runs the sweep (or takes it from an earlier figure) and judges every (size, design) row.
pub fn run(ctx: &Context<'_>) -> Result<Section, String> {
    let outcomes = outcomes(ctx)?;
    Ok(Section {
        figure: "Fig. 9a".into(),
        title: "Random writes by value size (Fig. 15's Titan column too)".into(),
        setup: format!(
            "{} Each write's parts are timed for Figs. 16 and 22 (a few clock reads per write, \
             in every design alike).",
            workload(ctx)
        ),
        table: by_size::table(&outcomes, SWEEP.peers, &JUDGED)?,
        plots: vec![SWEEP.plot(ctx, "fillrandom")],
        seconds: 0.0,
    })
}

/// The sweep's outcomes, its writes timed part by part: run once, kept for the latency
/// breakdowns of Figs. 16 and 22, which show the same writes.
pub fn outcomes(ctx: &Context<'_>) -> Result<Vec<Outcome>, String> {
    ctx.shared_run("9a", || SWEEP.run_timed(ctx).map(|s| s.outcomes))
}

/// The workload, in prose.
pub fn workload(ctx: &Context<'_>) -> String {
    let (small, large) = TIMED.key_spaces_at(ctx);
    let load = match TIMED.seconds_at(ctx) {
        0 => format!("{} of writes", share_of_paper(SWEEP.bytes_at(ctx))),
        s => format!(
            "{s} s of writes over a key space of {} ({} at 16 and 64 KB)",
            mib(small),
            mib(large)
        ),
    };
    format!(
        "db_bench fillrandom, 16 B keys, {load} at each value size, uniform keys; each design \
         from a fresh database."
    )
}
