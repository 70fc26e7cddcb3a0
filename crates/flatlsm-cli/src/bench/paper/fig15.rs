//! Fig. 15's reads: random reads against Titan (`leveled+vsep` plays it) at 256 B, 1 KB, 4 KB,
//! 16 KB and 64 KB values, as the paper runs them: each design loads its own database with
//! sequential writes (`fillseq`), then reads 100,000 keys at random twice: as the load left
//! the page cache (`readrandom`, what a user sees right after the writes), and after dropping
//! it (`readrandom_cold`, from the disk, as the paper's 80 GB, which did not fit in memory,
//! was read). The rows are judged on the second: the first measures which design's fresh
//! data reclaim happened to keep (session 21: one row 0.42× in one run, 2.35× in the next),
//! and is stated beside. At `--scale 1` the load is 4 GiB per size (1/20 of the paper's
//! 80 GB; two designs at five sizes take about eight minutes on two cores). Fig. 15's random
//! writes are Fig. 9a's Titan rows.

use super::by_size::{page_cache_note, share_of_paper, Judged, Pair, Peer, Sweep, Swept};
use super::causes;
use super::verdict::{read_evidence, Claim, Why};
use super::{Context, Section};
use crate::bench::page_cache::COLD_READ_RANDOM;

const TITAN: [Peer; 1] = [("leveled+vsep", "Titan")];

const SWEEP: Sweep = Sweep {
    dir: "fig15",
    benchmarks: &["fillseq", "readrandom", COLD_READ_RANDOM],
    bytes: 4 << 30,
    reads: Some(100_000),
    peers: &TITAN,
    timed: None,
};

const JUDGED: Judged = Judged {
    bench: COLD_READ_RANDOM,
    claim,
    evidence: read_evidence,
    why: random_why,
    beside: Some("readrandom"),
};

/// Within this share of the peer's throughput, two designs reading as many bytes from the disk
/// are level: the run-to-run spread of reads from this disk. Five runs of the 64 KB row on one
/// build (session 22, FlatLSM / Titan): 0.91×, 0.95×, 0.95×, 0.97×, 1.06×.
const LEVEL_SHARE: f64 = 0.90;

/// Why a row does not agree: level with Titan (within [`LEVEL_SHARE`]) and reading as many
/// bytes from the disk, below the separation threshold through the same SST code, above it
/// through the same value logs. (The reads judged start from a dropped page cache, so which
/// design's data reclaim kept no longer explains a row, as it did in session 21.)
fn random_why(row: &Pair<'_>) -> Why {
    let contradicts = if !level(row) || !same_disk_reads(row) {
        causes::NOT_ANALYSED
    } else if row.size < separation_default() {
        causes::INLINE_VALUES_READ_ALIKE
    } else {
        causes::SEPARATED_VALUES_READ_ALIKE
    };
    Why {
        contradicts,
        ..causes::UNEXPLAINED
    }
}

/// Both designs read as many bytes from the disk ([`causes::read_alike_from_disk`]).
fn same_disk_reads(row: &Pair<'_>) -> bool {
    causes::read_alike_from_disk(row.flatlsm.device_read_bytes, row.other.device_read_bytes)
}

/// FlatLSM within [`LEVEL_SHARE`] of the peer's throughput.
fn level(row: &Pair<'_>) -> bool {
    row.flatlsm.ops_per_sec() >= LEVEL_SHARE * row.other.ops_per_sec()
}

/// The value size from which `leveled+vsep` separates values by default (the preset keeps it).
fn separation_default() -> usize {
    flatlsm::Options::default().kv_separation_threshold
}

/// "FlatLSM is up to 14% higher than Titan" (its PMTables read faster than Titan's SSD):
/// higher, read as at least Titan's throughput at every size; the 14 % is a maximum, not a floor.
fn claim(_peer: &str, _size: usize) -> Claim {
    Claim::AtLeast(1.0, "up to 14% higher than Titan: ≥ Titan at every size")
}

/// Loads sequentially, reads at random, and judges each size's row.
pub fn run(ctx: &Context<'_>) -> Result<Section, String> {
    let swept = SWEEP.run(ctx)?;
    Ok(Section {
        figure: "Fig. 15 (reads)".into(),
        title: "Random reads after a sequential load, against Titan".into(),
        setup: setup(ctx, &swept),
        table: SWEEP.table(&swept, &JUDGED)?,
        plots: vec![
            SWEEP.plot(ctx, COLD_READ_RANDOM),
            SWEEP.plot(ctx, "readrandom"),
        ],
        seconds: 0.0,
    })
}

fn setup(ctx: &Context<'_>, swept: &Swept) -> String {
    format!(
        "Each design loads its own database at each value size with db_bench fillseq, 16 B keys \
         in order, {}, waits for its background work, then reads {} uniform keys (every one \
         present; the paper: 100,000) twice: readrandom with {}, then readrandom_cold after \
         closing the database, `sync; echo 3 > /proc/sys/vm/drop_caches` and opening it again \
         (from the disk, as the paper's data, which did not fit in memory, was read; the kernel \
         drops no page a process maps). The rows are judged on readrandom_cold; readrandom's \
         throughputs are in the last column. `leveled+vsep` separates values of {} B and more \
         (below that it is `leveled`). Fig. 15's random writes are in Fig. 9a.",
        share_of_paper(swept.bytes),
        swept.reads.unwrap_or_default(),
        page_cache_note(ctx),
        separation_threshold(ctx)
    )
}

/// The value size from which `leveled+vsep` separates values, as `profiles` sets it.
fn separation_threshold(ctx: &Context<'_>) -> usize {
    let default = separation_default();
    ctx.cfg.args.kv_separation_threshold.unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::super::by_size::tests::{outcome, swept};
    use super::super::verdict::Verdict;
    use super::*;

    #[test]
    fn reads_against_titan_are_judged_as_flatlsm_at_least_level_with_it() {
        let c = claim("leveled+vsep", 4096);
        assert_eq!(
            (c.judge(1.14), c.judge(1.0)),
            (Verdict::Agrees, Verdict::Agrees)
        );
        assert_eq!(c.judge(0.97), Verdict::Contradicts);
        assert!(c.text().contains("up to 14%"), "{}", c.text());
    }

    #[test]
    fn each_size_has_one_row_against_titan() {
        let t = SWEEP.table(&both_reads(110, 100), &JUDGED).unwrap();
        assert_eq!(t.matches("| leveled+vsep (Titan) |").count(), 5, "{t}");
        assert_eq!(t.matches("| 1.10× |").count(), 5, "{t}");
        let beside = "; readrandom: FlatLSM 220, leveled+vsep 100 ops/s (2.20×) |";
        assert_eq!(t.matches(beside).count(), 5, "{t}");
    }

    /// Both reads of every design at every size: cold at `flatlsm` and `other` ops/s, as loaded
    /// at twice `flatlsm` and at `other`.
    fn both_reads(flatlsm: u64, other: u64) -> super::super::by_size::Swept {
        let mut both = swept(&TITAN, COLD_READ_RANDOM, flatlsm, other);
        let warm = swept(&TITAN, "readrandom", 2 * flatlsm, other);
        both.outcomes.extend(warm.outcomes);
        both
    }

    /// The row's cause, from FlatLSM's and Titan's ops/s and MiB read from the disk.
    fn cause(size: usize, ours: (u64, u64), theirs: (u64, u64)) -> &'static str {
        let side = |name: &str, (ops, mib): (u64, u64)| {
            let mut o = outcome(name, COLD_READ_RANDOM, ops);
            o.device_read_bytes = Some(mib << 20);
            o
        };
        let (flatlsm, other) = (side("FlatLSM", ours), side("leveled+vsep", theirs));
        let row = Pair {
            peer: "leveled+vsep",
            size,
            flatlsm: &flatlsm,
            other: &other,
        };
        random_why(&row).contradicts
    }

    #[test]
    fn a_256_byte_row_level_with_titan_names_the_shared_read_path() {
        // Session 22's row read 842 and 854 MiB from the disk; 0.96× and 0.80× of Titan.
        let why = cause(256, (12_000, 842), (12_459, 854));
        assert_eq!(why, causes::INLINE_VALUES_READ_ALIKE);
        assert_eq!(
            cause(256, (10_000, 842), (12_459, 854)),
            causes::NOT_ANALYSED
        );
        assert_eq!(
            cause(256, (12_000, 1000), (12_459, 854)),
            causes::NOT_ANALYSED
        );
    }

    #[test]
    fn a_separated_row_level_with_titan_and_as_many_disk_reads_names_the_shared_value_logs() {
        // Session 22's 64 KB row: 11,117 against 11,472 ops/s, 3,254 and 3,236 MiB from the disk.
        let why = cause(65536, (11_117, 3254), (11_472, 3236));
        assert_eq!(why, causes::SEPARATED_VALUES_READ_ALIKE);
        let more_reads = cause(4096, (11_117, 3600), (11_472, 3236));
        assert_eq!(more_reads, causes::NOT_ANALYSED);
        assert_eq!(
            cause(4096, (10_000, 766), (11_472, 748)),
            causes::NOT_ANALYSED
        );
    }
}
