//! How a row of the report is judged against the paper: agrees, smaller gap or contradicts
//! (not judged where the paper states nothing for the row), from FlatLSM's ratio to a design in
//! this run and the paper's claim for that row; and why, where a row does not agree: the cause
//! each figure names for its rows ([`Why`], texts in `causes.rs`).

use crate::bench::outcome::Outcome;

/// What the paper claims for one row.
#[derive(Clone, Copy, Debug)]
pub enum Claim {
    /// FlatLSM is at least this many times the other (the low end of the paper's range, or
    /// its one number; below 1 where the paper has FlatLSM behind), as the text says.
    AtLeast(f64, &'static str),
    /// FlatLSM is "close to" the others (reads): within 20 % of the best, or ahead.
    Close(&'static str),
    /// The ratio lies between the two bounds (Fig. 12: a "slight" change).
    Within(f64, f64, &'static str),
    /// The paper gives no claim for the row: it is measured, not judged.
    Unstated(&'static str),
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
    /// No claim to judge against.
    NotJudged,
}

/// Why a row may not agree with the paper: the cause of a smaller gap and of a contradiction,
/// as this project measured them (docs/design-decisions.md), or [`super::causes::NOT_ANALYSED`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Why {
    /// Why FlatLSM leads by less than the paper says.
    pub smaller_gap: &'static str,
    /// Why the row goes the other way.
    pub contradicts: &'static str,
}

impl Why {
    /// The cause of `verdict`; `None` for a row that agrees or is not judged.
    pub fn of(&self, verdict: Verdict) -> Option<&'static str> {
        match verdict {
            Verdict::SmallerGap => Some(self.smaller_gap),
            Verdict::Contradicts => Some(self.contradicts),
            Verdict::Agrees | Verdict::NotJudged => None,
        }
    }
}

/// Below this share of the best other design, FlatLSM is no longer "close".
const CLOSE_SHARE: f64 = 0.8;

impl Claim {
    /// The claim as the report states it.
    pub fn text(&self) -> String {
        match self {
            Claim::AtLeast(x, what) => format!("≥ {x:.2}× ({what})"),
            Claim::Close(what) => format!("close: ≥ {CLOSE_SHARE:.2}× ({what})"),
            Claim::Within(low, high, what) => format!("{low:.2}–{high:.2}× ({what})"),
            Claim::Unstated(what) => format!("— ({what})"),
        }
    }

    /// A row's verdict cell: the verdict on `ratio`, and why where the row does not agree
    /// ("contradicts — why: …").
    pub fn verdict_cell(&self, ratio: f64, why: Why) -> String {
        let verdict = self.judge(ratio);
        match why.of(verdict) {
            Some(cause) => format!("{} — why: {cause}", verdict.label()),
            None => verdict.label().to_string(),
        }
    }

    /// The verdict on FlatLSM's `ratio` to the design (or to the best of them).
    pub fn judge(&self, ratio: f64) -> Verdict {
        match *self {
            Claim::AtLeast(low, _) if ratio >= low => Verdict::Agrees,
            Claim::AtLeast(..) if ratio >= 1.0 => Verdict::SmallerGap,
            Claim::Close(_) if ratio >= CLOSE_SHARE => Verdict::Agrees,
            Claim::Within(low, high, _) if (low..=high).contains(&ratio) => Verdict::Agrees,
            Claim::Unstated(_) => Verdict::NotJudged,
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
            Verdict::NotJudged => "not judged",
        }
    }
}

/// `ours / theirs`: infinite when only `theirs` is 0 (a stalled interval), 1 when both are.
pub fn ratio(ours: f64, theirs: f64) -> f64 {
    match (theirs > 0.0, ours > 0.0) {
        (true, _) => ours / theirs,
        (false, true) => f64::INFINITY,
        (false, false) => 1.0,
    }
}

/// The claim that FlatLSM's `value` is `share` of the other's or less (a running time, a
/// latency), as a ratio of the other's to FlatLSM's: at least `1 / share`.
pub const fn at_most_share(share: f64, what: &'static str) -> Claim {
    Claim::AtLeast(1.0 / share, what)
}

/// A table row: `cells`, then FlatLSM's ratio in this run, the paper's claim, the verdict (with
/// `why` where it does not agree) and what this run `measured` that bears on it.
pub fn judged_row(cells: &[String], ratio: f64, claim: Claim, measured: &str, why: Why) -> String {
    format!(
        "| {} | {ratio:.2}× | {} | {} | {measured} |\n",
        cells.join(" | "),
        claim.text(),
        claim.verdict_cell(ratio, why)
    )
}

/// What this run measured that bears on a write row: each side's [`write_side`].
pub fn write_evidence(flatlsm: &Outcome, other: &Outcome) -> String {
    format!(
        "FlatLSM {}; {} {}",
        write_side(flatlsm),
        other.engine,
        write_side(other)
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
        format!(
            "mean {:.1} µs{found}{}{}",
            o.latency.average,
            from_disk(o),
            others_cpu(o)
        )
    };
    let (ours, theirs) = (side(flatlsm), side(other));
    format!("FlatLSM {ours}; {} {theirs}", other.engine)
}

/// ", N MiB from the disk" where the benchmark's device reads were measured: whether a
/// design's reads found its data in memory.
pub fn from_disk(o: &Outcome) -> String {
    o.device_read_bytes.map_or(String::new(), |b| {
        format!(", {:.0} MiB from the disk", b as f64 / 1_048_576.0)
    })
}

/// ", others' CPU N s" where it was measured.
fn others_cpu(o: &Outcome) -> String {
    o.others_cpu_seconds
        .map_or(String::new(), |s| format!(", others' CPU {s:.0} s"))
}

/// One design's settled write amplification, stall intervals (1-s intervals below half the
/// mean) and the CPU other processes took while it ran (a shared machine: rows with much of
/// it are not comparable).
pub fn write_side(o: &Outcome) -> String {
    let wa = o
        .settle
        .map_or(o.stats.write_amplification(), |s| s.write_amplification);
    let (stalls, of) = (o.interval_stats.stalls, o.interval_stats.count);
    format!("WA {wa:.2}, {stalls}/{of} stall intervals{}", others_cpu(o))
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
        theirs.device_read_bytes = Some(300 << 20);
        assert_eq!(
            read_evidence(&ours, &theirs),
            "FlatLSM mean 0.0 µs (6 of 10 found); matrixkv 256 B mean 0.0 µs, \
             300 MiB from the disk, others' CPU 2 s"
        );
    }

    /// Fig. 18 at 16 KB: the paper has FlatLSM 8.25 % behind; ahead or less behind agrees.
    #[test]
    fn a_claim_below_parity_agrees_down_to_the_papers_number_and_no_further() {
        let behind = Claim::AtLeast(0.9175, "−8.25 %");
        assert_eq!(behind.judge(0.95), Verdict::Agrees);
        assert_eq!(behind.judge(1.3), Verdict::Agrees);
        assert_eq!(behind.judge(0.8), Verdict::Contradicts);
    }

    #[test]
    fn a_slight_change_agrees_within_its_bounds_only() {
        let slight = Claim::Within(0.95, 1.2, "slight");
        assert_eq!(slight.judge(1.05), Verdict::Agrees);
        assert_eq!(slight.judge(0.96), Verdict::Agrees);
        assert_eq!(slight.judge(1.5), Verdict::Contradicts);
        assert_eq!(slight.judge(0.9), Verdict::Contradicts);
        assert_eq!(slight.text(), "0.95–1.20× (slight)");
    }

    #[test]
    fn a_row_without_a_claim_is_measured_but_not_judged() {
        let none = Claim::Unstated("no number in the text");
        assert_eq!(none.judge(0.1).label(), "not judged");
        assert_eq!(none.text(), "— (no number in the text)");
    }

    #[test]
    fn a_judged_row_ends_with_ratio_claim_verdict_and_evidence() {
        let cells = ["4096 B".to_string(), "novelsm".to_string()];
        let why = Why {
            smaller_gap: "a faster SSD",
            contradicts: "not analysed yet",
        };
        let row = judged_row(&cells, 1.5, Claim::AtLeast(3.65, "Fig. 9a"), "WA 1.1", why);
        assert_eq!(
            row,
            "| 4096 B | novelsm | 1.50× | ≥ 3.65× (Fig. 9a) | smaller gap — why: a faster SSD | \
             WA 1.1 |\n"
        );
        let agrees = judged_row(&cells, 4.0, Claim::AtLeast(3.65, "Fig. 9a"), "WA 1.1", why);
        assert!(agrees.ends_with("| agrees | WA 1.1 |\n"), "{agrees}");
        let behind = Claim::AtLeast(3.65, "Fig. 9a").verdict_cell(0.9, why);
        assert_eq!(behind, "contradicts — why: not analysed yet");
    }

    #[test]
    fn ratios_to_zero_are_infinite_and_a_share_becomes_its_inverse() {
        assert_eq!(ratio(3.0, 2.0), 1.5);
        assert_eq!(ratio(3.0, 0.0), f64::INFINITY);
        assert_eq!(ratio(0.0, 0.0), 1.0);
        let share = at_most_share(0.25, "a quarter of the time");
        assert_eq!(share.judge(4.0), Verdict::Agrees);
        assert_eq!(share.judge(2.0), Verdict::SmallerGap);
    }
}
