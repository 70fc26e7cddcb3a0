//! How a row of the report is judged against the paper: agrees, smaller gap or contradicts,
//! from FlatLSM's ratio to a design in this run and the paper's claim for that row.

use crate::bench::outcome::Outcome;

/// What the paper claims for one row.
#[derive(Clone, Copy, Debug)]
pub enum Claim {
    /// FlatLSM is at least this many times the other (the low end of the paper's range, or
    /// its one number), as the text says.
    AtLeast(f64, &'static str),
    /// FlatLSM is "close to" the others (reads): within 20 % of the best, or ahead.
    Close(&'static str),
}

/// A row's agreement with the paper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// As the paper says, or more so.
    Agrees,
    /// FlatLSM ahead, but by less than the paper's low end.
    SmallerGap,
    /// The other way round.
    Contradicts,
}

/// Below this share of the best other design, FlatLSM is no longer "close".
const CLOSE_SHARE: f64 = 0.8;

impl Claim {
    /// The claim as the report states it.
    pub fn text(&self) -> String {
        match self {
            Claim::AtLeast(x, what) => format!("≥ {x:.2}× ({what})"),
            Claim::Close(what) => format!("close: ≥ {CLOSE_SHARE:.2}× ({what})"),
        }
    }

    /// The verdict on FlatLSM's `ratio` to the design (or to the best of them).
    pub fn judge(&self, ratio: f64) -> Verdict {
        match *self {
            Claim::AtLeast(low, _) if ratio >= low => Verdict::Agrees,
            Claim::AtLeast(..) if ratio >= 1.0 => Verdict::SmallerGap,
            Claim::Close(_) if ratio >= CLOSE_SHARE => Verdict::Agrees,
            _ => Verdict::Contradicts,
        }
    }
}

impl Verdict {
    /// "agrees", "smaller gap", "contradicts".
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Agrees => "agrees",
            Verdict::SmallerGap => "smaller gap",
            Verdict::Contradicts => "contradicts",
        }
    }
}

/// What this run measured that bears on a write row: each side's settled write amplification,
/// stall intervals (1-s intervals below half the mean) and the CPU other processes took while
/// it ran (a shared machine: rows with much of it are not comparable).
pub fn write_evidence(flatlsm: &Outcome, other: &Outcome) -> String {
    let side = |o: &Outcome| {
        let wa = o
            .settle
            .map_or(o.stats.write_amplification(), |s| s.write_amplification);
        let (stalls, of) = (o.interval_stats.stalls, o.interval_stats.count);
        format!("WA {wa:.2}, {stalls}/{of} stall intervals{}", others_cpu(o))
    };
    format!(
        "FlatLSM {}; {} {}",
        side(flatlsm),
        other.engine,
        side(other)
    )
}

/// What this run measured that bears on a read row: each side's mean latency, what a point
/// read found (its result line's "(F of N found)": a random load leaves about 63 % of the key
/// range) and the CPU other processes took while it ran.
pub fn read_evidence(flatlsm: &Outcome, other: &Outcome) -> String {
    let side = |o: &Outcome| {
        let found = o.extra.trim();
        let found = match found.is_empty() {
            true => String::new(),
            false => format!(" {found}"),
        };
        format!("mean {:.1} µs{found}{}", o.latency.average, others_cpu(o))
    };
    let (ours, theirs) = (side(flatlsm), side(other));
    format!("FlatLSM {ours}; {} {theirs}", other.engine)
}

/// ", others' CPU N s" where it was measured.
fn others_cpu(o: &Outcome) -> String {
    o.others_cpu_seconds
        .map_or(String::new(), |s| format!(", others' CPU {s:.0} s"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_is_judged_against_the_papers_low_end_and_against_parity() {
        let claim = Claim::AtLeast(3.65, "NoveLSM, Fig. 9a");
        assert_eq!(claim.judge(4.0), Verdict::Agrees);
        assert_eq!(claim.judge(1.2), Verdict::SmallerGap);
        assert_eq!(claim.judge(0.9), Verdict::Contradicts);
        let close = Claim::Close("YCSB-C");
        assert_eq!(close.judge(0.85), Verdict::Agrees);
        assert_eq!(close.judge(0.7), Verdict::Contradicts);
        assert!(claim.text().starts_with("≥ 3.65×"), "{}", claim.text());
        assert_eq!(close.text(), "close: ≥ 0.80× (YCSB-C)");
    }

    #[test]
    fn a_read_row_shows_each_sides_mean_latency_and_what_it_found() {
        let m = crate::bench::runner::Measured {
            ops: 10,
            wall_seconds: 1.0,
            ..Default::default()
        };
        let stats = crate::bench::engine::EngineStats::default();
        let found = " (6 of 10 found)".to_string();
        let ours = Outcome::new(
            "FlatLSM 256 B",
            "readrandom",
            m.clone(),
            found,
            stats.clone(),
        );
        let mut theirs = Outcome::new("matrixkv 256 B", "readseq", m, String::new(), stats);
        theirs.others_cpu_seconds = Some(2.0);
        assert_eq!(
            read_evidence(&ours, &theirs),
            "FlatLSM mean 0.0 µs (6 of 10 found); matrixkv 256 B mean 0.0 µs, others' CPU 2 s"
        );
    }
}
