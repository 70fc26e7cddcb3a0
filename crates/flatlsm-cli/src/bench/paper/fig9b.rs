//! Fig. 9b: sequential writes (`fillseq`) at 256 B, 1 KB, 4 KB, 16 KB and 64 KB values, FlatLSM
//! against `leveled` (RocksDB), `novelsm`, `matrixkv` and `leveled+vsep` (Titan, as in Fig. 9a),
//! every design at the run's budget, the same bytes at each size: 2 GiB at `--scale 1` (1/40 of
//! the paper's 80 GB; half of Fig. 9a's, so that the five designs at five sizes take about ten
//! minutes on two cores).

use super::by_size::{share_of_paper, Judged, Pair, Sweep, WITH_TITAN};
use super::causes;
use super::verdict::{write_evidence, Claim, Why};
use super::{Context, Section};

const SWEEP: Sweep = Sweep {
    dir: "fig9b",
    benchmarks: &["fillseq"],
    bytes: 2 << 30,
    reads: None,
    peers: &WITH_TITAN,
    timed: None,
};

const JUDGED: Judged = Judged {
    bench: "fillseq",
    claim,
    evidence: write_evidence,
    why,
    beside: None,
};

/// At 256 B and 1 KB FlatLSM persists every entry as it writes it (the Buffer Log takes only
/// smaller ones); the hardware explains the smaller gaps.
fn why(row: &Pair<'_>) -> Why {
    let contradicts = match row.size {
        ..=1024 => causes::PERSIST_PER_WRITE,
        _ => causes::NOT_ANALYSED,
    };
    Why {
        contradicts,
        ..causes::write_row(row.peer)
    }
}

/// The paper's claim for FlatLSM over `peer`: 1.55–2.06× MatrixKV; for the others only words
/// ("much better scalability than other methods"), read as FlatLSM ahead. Titan is not in the
/// paper's Fig. 9b: its row is judged as the others'.
fn claim(peer: &str, _size: usize) -> Claim {
    match peer {
        "matrixkv" => Claim::AtLeast(1.55, "1.55–2.06× over all sizes"),
        "leveled+vsep" => Claim::AtLeast(1.0, "not in the paper's Fig. 9b; read as ahead"),
        _ => Claim::AtLeast(1.0, "\"much better scalability than other methods\": ahead"),
    }
}

/// Runs the sweep and judges every (size, design) row.
pub fn run(ctx: &Context<'_>) -> Result<Section, String> {
    let swept = SWEEP.run(ctx)?;
    Ok(Section {
        figure: "Fig. 9b".into(),
        title: "Sequential writes by value size".into(),
        setup: format!(
            "db_bench fillseq, 16 B keys in ascending order, {} of writes at each value size; \
             each design from a fresh database.",
            share_of_paper(swept.bytes)
        ),
        table: SWEEP.table(&swept, &JUDGED)?,
        plots: vec![SWEEP.plot(ctx, "fillseq")],
        seconds: 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::paper::verdict::Verdict;

    #[test]
    fn sequential_writes_are_judged_against_matrixkvs_range() {
        let matrixkv = claim("matrixkv", 4096);
        assert_eq!(matrixkv.judge(1.6), Verdict::Agrees);
        assert_eq!(matrixkv.judge(1.2), Verdict::SmallerGap);
        assert_eq!(matrixkv.judge(0.9), Verdict::Contradicts);
        assert!(
            matrixkv.text().starts_with("≥ 1.55×"),
            "{}",
            matrixkv.text()
        );
    }

    #[test]
    fn against_the_others_sequential_writes_need_flatlsm_ahead() {
        for peer in ["leveled", "novelsm", "leveled+vsep"] {
            let c = claim(peer, 256);
            assert_eq!(c.judge(1.01), Verdict::Agrees, "{peer}");
            assert_eq!(c.judge(0.98), Verdict::Contradicts, "{peer}");
        }
        assert!(claim("novelsm", 256)
            .text()
            .contains("much better scalability"));
    }
}
