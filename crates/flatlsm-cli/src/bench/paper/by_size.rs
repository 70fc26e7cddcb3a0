//! The figures by value size (Figs. 9a, 9b, 10 and 15's reads): one `--compare profiles` sweep
//! over the paper's value sizes in which FlatLSM and each peer, every one from a fresh database
//! at the run's budget, run the figure's benchmarks in order (a load, then any reads); then per
//! judged benchmark a table of one row per (size, peer): both throughputs, FlatLSM's ratio, the
//! paper's claim, the verdict and what the run measured.

use super::verdict::{judged_row, ratio, Claim, Why};
use super::{relative, Context};
use crate::bench::config::BenchConfig;
use crate::bench::outcome::Outcome;
use crate::bench::profiles;

/// The value sizes (the paper also runs 512 B and 8 KB).
pub const SIZES: [usize; 5] = [256, 1024, 4096, 16384, 65536];

/// A design FlatLSM is compared with: its `--compare profiles` label and the system it plays.
pub type Peer = (&'static str, &'static str);

/// The paper's micro-benchmark baselines (Figs. 9 and 10).
pub const BASELINES: [Peer; 3] = [
    ("leveled", "RocksDB"),
    ("novelsm", "NoveLSM"),
    ("matrixkv", "MatrixKV"),
];

/// The baselines and Titan's role (Fig. 9's rows also carry Fig. 15's Titan column).
pub const WITH_TITAN: [Peer; 4] = [
    BASELINES[0],
    BASELINES[1],
    BASELINES[2],
    ("leveled+vsep", "Titan"),
];

/// The paper's data per value size (80 GB), which the figures' shares are of.
const PAPER_BYTES: f64 = 80.0 * (1u64 << 30) as f64;
/// The smallest load a scaled run writes at each size.
const MIN_BYTES: u64 = 4 << 20;
/// The fewest reads a scaled run does at each size.
const MIN_READS: u64 = 1000;

/// What a figure by value size runs.
pub struct Sweep {
    /// The report's sub-directory for the figure's plots ("fig9a").
    pub dir: &'static str,
    /// The benchmarks every design runs at each size, in order.
    pub benchmarks: &'static [&'static str],
    /// Bytes the load writes at each size at `--scale 1`.
    pub bytes: u64,
    /// Reads at each size at `--scale 1` (`None`: db_bench's default, as many as the writes).
    pub reads: Option<u64>,
    /// The designs FlatLSM is compared with.
    pub peers: &'static [Peer],
    /// A load that runs for a time over a key space instead (`None`: it writes `bytes`).
    pub timed: Option<Timed>,
}

/// A load that runs for a time over a key space (below one second at the run's scale, the
/// sweep's `bytes` are written instead).
pub struct Timed {
    /// Seconds every design writes at each size at `--scale 1`.
    pub seconds: f64,
    /// The key space in bytes at `--scale 1`.
    pub key_bytes: u64,
    /// From this value size on the key space is `large_bytes` (the disk holds no more).
    pub large_from: usize,
    /// The key space of the largest values at `--scale 1`.
    pub large_bytes: u64,
}

impl Timed {
    /// Seconds of writes at the run's scale (0: too short, the sweep writes its bytes).
    pub fn seconds_at(&self, ctx: &Context<'_>) -> u64 {
        (self.seconds * ctx.scale) as u64
    }

    /// The key space at the run's scale: below `large_from`, and from it on.
    pub fn key_spaces_at(&self, ctx: &Context<'_>) -> (u64, u64) {
        let at = |bytes| ctx.bytes(bytes, MIN_BYTES);
        (at(self.key_bytes), at(self.large_bytes))
    }
}

/// How one benchmark's rows are judged.
pub struct Judged {
    /// The benchmark.
    pub bench: &'static str,
    /// The paper's claim for FlatLSM over a peer (its label) at a value size.
    pub claim: fn(&str, usize) -> Claim,
    /// What the run measured that bears on a row: from FlatLSM's outcome and the peer's.
    pub evidence: fn(&Outcome, &Outcome) -> String,
    /// Why a row may not agree with the paper, from the peer, the size and what both measured.
    pub why: fn(&Pair<'_>) -> Why,
    /// A benchmark whose two throughputs each row also states, unjudged (Fig. 15 judges reads
    /// from the disk and states them as the load left the page cache beside).
    pub beside: Option<&'static str>,
}

/// One judged row's two sides: FlatLSM's outcome and the peer's, at one value size.
pub struct Pair<'a> {
    /// The peer's label.
    pub peer: &'a str,
    /// The value size in bytes.
    pub size: usize,
    /// FlatLSM's outcome of the judged benchmark.
    pub flatlsm: &'a Outcome,
    /// The peer's outcome of the judged benchmark.
    pub other: &'a Outcome,
}

/// What a sweep ran: every outcome (engines named "label N B") and its scaled amounts.
pub struct Swept {
    /// Every design's outcomes at every size.
    pub outcomes: Vec<Outcome>,
    /// Bytes the load wrote at each size.
    pub bytes: u64,
    /// Reads at each size (`None`: as many as the writes).
    pub reads: Option<u64>,
}

impl Sweep {
    /// Runs the benchmarks at every size, FlatLSM first, then the peers.
    pub fn run(&self, ctx: &Context<'_>) -> Result<Swept, String> {
        self.run_config(ctx, self.config(ctx))
    }

    /// [`Sweep::run`] with the engine timing every part of the write path (the latency
    /// breakdowns share such a run with a throughput figure).
    pub fn run_timed(&self, ctx: &Context<'_>) -> Result<Swept, String> {
        self.run_config(ctx, super::breakdown::timed(self.config(ctx)))
    }

    fn run_config(&self, ctx: &Context<'_>, cfg: BenchConfig) -> Result<Swept, String> {
        let (outcomes, _) = profiles::run(&cfg, ctx.work)?;
        Ok(Swept {
            outcomes,
            bytes: cfg.sweep_bytes,
            reads: cfg.args.reads,
        })
    }

    /// The figure's configuration: the sizes, its benchmarks and designs, the scaled amounts.
    fn config(&self, ctx: &Context<'_>) -> BenchConfig {
        let mut cfg = ctx.figure_config(self.dir);
        cfg.benchmarks = self.benchmarks.iter().map(|b| b.to_string()).collect();
        cfg.value_sizes = SIZES.to_vec();
        cfg.sweep_bytes = self.bytes_at(ctx);
        // As a flag: the sweep gives every size this count instead of one per write.
        cfg.args.reads = self.reads.map(|n| ctx.count(n, MIN_READS));
        cfg.variants = self.designs();
        if let Some(t) = self.timed.as_ref().filter(|t| t.seconds_at(ctx) > 0) {
            let (small, large) = t.key_spaces_at(ctx);
            cfg.args.duration = t.seconds_at(ctx);
            cfg.sweep_bytes = small;
            cfg.sweep_bytes_large = Some((t.large_from, large));
        }
        cfg
    }

    /// Bytes the load writes at each size at this run's scale.
    pub fn bytes_at(&self, ctx: &Context<'_>) -> u64 {
        ctx.bytes(self.bytes, MIN_BYTES)
    }

    fn designs(&self) -> Vec<String> {
        let peers = self.peers.iter().map(|p| p.0);
        std::iter::once("FlatLSM")
            .chain(peers)
            .map(String::from)
            .collect()
    }

    /// The plot of `bench` by value size that the sweep draws, relative to the report.
    pub fn plot(&self, ctx: &Context<'_>, bench: &str) -> String {
        let name = format!("by_value_size_{bench}.png");
        relative(&ctx.dir, &ctx.dir.join(self.dir).join(name))
    }

    /// The table of one judged benchmark: a row per size and peer.
    pub fn table(&self, swept: &Swept, judged: &Judged) -> Result<String, String> {
        table(&swept.outcomes, self.peers, judged)
    }
}

/// The table of one judged benchmark of a sweep's `outcomes`: a row per size and peer.
pub fn table(outcomes: &[Outcome], peers: &[Peer], judged: &Judged) -> Result<String, String> {
    let mut table = String::from(HEADER);
    for size in SIZES {
        table += &rows_at(outcomes, peers, size, judged)?;
    }
    Ok(table)
}

/// The rows of one value size: FlatLSM against each peer.
pub fn rows_at(
    outcomes: &[Outcome],
    peers: &[Peer],
    size: usize,
    judged: &Judged,
) -> Result<String, String> {
    let rows = peers.iter().map(|&peer| row(outcomes, peer, size, judged));
    rows.collect()
}

/// "4096 MiB (1/20 of the paper's 80 GB)": a load's size and its share of the paper's.
pub fn share_of_paper(bytes: u64) -> String {
    let share = PAPER_BYTES / bytes.max(1) as f64;
    format!(
        "{} (1/{share:.0} of the paper's 80 GB)",
        super::super::budget::mib(bytes)
    )
}

/// Where the reads of a read figure find the data: the page cache as the load left it, or
/// dropped before each read benchmark (`--drop_caches`).
pub fn page_cache_note(ctx: &Context<'_>) -> &'static str {
    match ctx.cfg.args.drop_caches {
        true => "the OS page cache dropped before each read benchmark (--drop_caches)",
        false => {
            "the OS page cache as the load left it (the data fits in this machine's RAM, where \
             the paper's 80 GB did not: SSD reads cost little here)"
        }
    }
}

const HEADER: &str = "| value | vs | FlatLSM ops/s | its ops/s | FlatLSM / it (this run) | \
                      paper | verdict | measured |\n|---|---|---|---|---|---|---|---|\n";

/// FlatLSM against `peer` at `size` in the judged benchmark.
fn row(outcomes: &[Outcome], peer: Peer, size: usize, judged: &Judged) -> Result<String, String> {
    let flatlsm = find(outcomes, "FlatLSM", size, judged.bench)?;
    let other = find(outcomes, peer.0, size, judged.bench)?;
    let (ours, theirs) = (flatlsm.ops_per_sec(), other.ops_per_sec());
    let cells = [
        format!("{size} B"),
        format!("{} ({})", peer.0, peer.1),
        format!("{ours:.0}"),
        format!("{theirs:.0}"),
    ];
    let claim = (judged.claim)(peer.0, size);
    let evidence = (judged.evidence)(flatlsm, other) + &beside(outcomes, peer, size, judged)?;
    let why = (judged.why)(&Pair {
        peer: peer.0,
        size,
        flatlsm,
        other,
    });
    Ok(judged_row(
        &cells,
        ratio(ours, theirs),
        claim,
        &evidence,
        why,
    ))
}

/// "; readrandom: FlatLSM N, it M ops/s (R×)": the row's `beside` benchmark, if it has one.
fn beside(
    outcomes: &[Outcome],
    peer: Peer,
    size: usize,
    judged: &Judged,
) -> Result<String, String> {
    let Some(bench) = judged.beside else {
        return Ok(String::new());
    };
    let ours = find(outcomes, "FlatLSM", size, bench)?.ops_per_sec();
    let theirs = find(outcomes, peer.0, size, bench)?.ops_per_sec();
    Ok(format!(
        "; {bench}: FlatLSM {ours:.0}, {} {theirs:.0} ops/s ({:.2}×)",
        peer.0,
        ratio(ours, theirs)
    ))
}

/// The `bench` outcome of design `label` at `size` (the sweep names engines "label N B").
pub fn find<'a>(
    outcomes: &'a [Outcome],
    label: &str,
    size: usize,
    bench: &str,
) -> Result<&'a Outcome, String> {
    let engine = format!("{label} {size} B");
    outcomes
        .iter()
        .find(|o| o.engine == engine && o.name == bench)
        .ok_or_else(|| format!("no {bench} result of {engine}"))
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::bench::engine::EngineStats;
    use crate::bench::runner::Measured;
    use crate::bench::workdir::WorkDir;

    /// `engine` ran `bench`: `ops` operations in one second.
    pub fn outcome(engine: &str, bench: &str, ops: u64) -> Outcome {
        let m = Measured {
            ops,
            wall_seconds: 1.0,
            ..Default::default()
        };
        Outcome::new(engine, bench, m, String::new(), EngineStats::default())
    }

    /// A sweep's outcomes: every design at every size ran `bench`, FlatLSM at `flatlsm` ops/s
    /// and every other at `other`.
    pub fn swept(peers: &[Peer], bench: &str, flatlsm: u64, other: u64) -> Swept {
        let mut outcomes = Vec::new();
        for size in SIZES {
            outcomes.push(outcome(&format!("FlatLSM {size} B"), bench, flatlsm));
            for (label, _) in peers {
                outcomes.push(outcome(&format!("{label} {size} B"), bench, other));
            }
        }
        Swept {
            outcomes,
            bytes: 4 << 20,
            reads: None,
        }
    }

    fn sweep(peers: &'static [Peer]) -> Sweep {
        Sweep {
            dir: "figx",
            benchmarks: &["fillseq", "readrandom"],
            bytes: 1 << 30,
            reads: Some(100_000),
            peers,
            timed: None,
        }
    }

    fn ahead(_: &str, _: usize) -> Claim {
        Claim::AtLeast(1.5, "test")
    }

    fn no_evidence(_: &Outcome, _: &Outcome) -> String {
        "-".into()
    }

    const JUDGED: Judged = Judged {
        bench: "readrandom",
        claim: ahead,
        evidence: no_evidence,
        why: |_| crate::bench::paper::causes::UNEXPLAINED,
        beside: None,
    };

    #[test]
    fn every_size_gets_a_judged_row_per_peer_of_the_judged_benchmark() {
        let sweep = sweep(&BASELINES);
        let swept = swept(&BASELINES, "readrandom", 300, 200);
        let table = sweep.table(&swept, &JUDGED).unwrap();
        let rows: Vec<&str> = table.lines().skip(2).collect();
        assert_eq!(rows.len(), SIZES.len() * BASELINES.len(), "{table}");
        let row =
            "| 4096 B | novelsm (NoveLSM) | 300 | 200 | 1.50× | ≥ 1.50× (test) | agrees | - |";
        assert!(rows.contains(&row), "{table}");
    }

    #[test]
    fn a_benchmark_the_sweep_did_not_run_is_an_error_naming_it() {
        let swept = swept(&BASELINES, "fillseq", 300, 200);
        let e = sweep(&BASELINES).table(&swept, &JUDGED).unwrap_err();
        assert_eq!(e, "no readrandom result of FlatLSM 256 B");
    }

    /// The preset's configuration, as `--preset flatlsm-paper` resolves it.
    fn paper_config() -> BenchConfig {
        let flags = ["--preset", "flatlsm-paper", "--pm_path", "/dev/shm/x"];
        BenchConfig::resolve(crate::bench::flags::parse_for_test(&flags).unwrap()).unwrap()
    }

    /// The figures' context at `scale` (nothing is created: no figure runs).
    fn context_at<'a>(cfg: &'a BenchConfig, work: &'a WorkDir, scale: f64) -> Context<'a> {
        Context {
            cfg,
            work,
            scale,
            budget: cfg.budget.unwrap(),
            dir: "/nonexistent/report".into(),
            disk: crate::bench::paper::disk::DiskSpeed {
                bytes_per_second: 0.5e9,
                probe_bytes: 4 << 20,
            },
            runs: Default::default(),
        }
    }

    #[test]
    fn loads_and_reads_are_scaled_down_to_their_floors() {
        let (cfg, work) = (
            paper_config(),
            WorkDir::new(Some("/nonexistent/db".as_ref())),
        );
        let full = sweep(&WITH_TITAN).config(&context_at(&cfg, &work, 1.0));
        assert_eq!(
            (full.sweep_bytes, full.args.reads),
            (1 << 30, Some(100_000))
        );
        let designs = ["FlatLSM", "leveled", "novelsm", "matrixkv", "leveled+vsep"];
        assert_eq!(
            (full.variants, full.value_sizes),
            (designs.map(String::from).to_vec(), SIZES.to_vec())
        );
        let tiny = sweep(&BASELINES).config(&context_at(&cfg, &work, 1e-6));
        assert_eq!((tiny.sweep_bytes, tiny.args.reads), (4 << 20, Some(1000)));
    }

    /// Fig. 9a's load at `--scale 1` runs 35 s over 16 GiB of keys (12 GiB from 16 KB on); at
    /// a scale where that is under a second it writes the sweep's bytes instead.
    #[test]
    fn a_timed_load_runs_its_seconds_over_its_key_space_unless_scaled_below_one() {
        let (cfg, work) = (
            paper_config(),
            WorkDir::new(Some("/nonexistent/db".as_ref())),
        );
        let timed = Sweep {
            timed: Some(Timed {
                seconds: 35.0,
                key_bytes: 16 << 30,
                large_from: 16384,
                large_bytes: 12 << 30,
            }),
            ..sweep(&WITH_TITAN)
        };
        let full = timed.config(&context_at(&cfg, &work, 1.0));
        assert_eq!(full.args.duration, 35);
        assert_eq!(full.sweep_bytes, 16 << 30);
        assert_eq!(full.sweep_bytes_large, Some((16384, 12 << 30)));
        let quarter = timed.config(&context_at(&cfg, &work, 0.25));
        assert_eq!((quarter.args.duration, quarter.sweep_bytes), (8, 4 << 30));
        let tiny = timed.config(&context_at(&cfg, &work, 0.01));
        assert_eq!(tiny.args.duration, 0);
        let hundredth = ((1u64 << 30) as f64 * 0.01) as u64;
        assert_eq!(
            (tiny.sweep_bytes, tiny.sweep_bytes_large),
            (hundredth, None)
        );
    }

    #[test]
    fn a_load_is_stated_as_its_share_of_the_papers_80_gb() {
        assert_eq!(
            share_of_paper(4 << 30),
            "4096 MiB (1/20 of the paper's 80 GB)"
        );
        assert_eq!(
            share_of_paper(2 << 30),
            "2048 MiB (1/40 of the paper's 80 GB)"
        );
    }
}
