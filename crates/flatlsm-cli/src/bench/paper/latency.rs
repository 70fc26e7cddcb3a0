//! What Tables 1 and 2 share: a design's latencies (average, P90, P99, P99.9), the paper's row
//! for it, and the table of this run's latencies beside the paper's.

use crate::bench::histogram::Summary;

/// Average, P90, P99 and P99.9, in µs.
pub type Latency = [f64; 4];

/// The names of a [`Latency`]'s figures, in order.
pub const STATS: [&str; 4] = ["avg", "P90", "P99", "P99.9"];

/// A summary's figures as a [`Latency`].
pub fn of(s: &Summary) -> Latency {
    [s.average, s.p90, s.p99, s.p999]
}

/// One design's row in the paper's table.
pub struct PaperRow {
    /// The design here ("leveled").
    pub label: &'static str,
    /// The system the paper measured ("RocksDB").
    pub role: &'static str,
    /// The paper's latencies.
    pub paper: Latency,
}

/// The paper's best baseline (the lowest of the rows after the first) over FlatLSM's latency
/// (the first row's) at figure `stat`.
pub fn best_other_over_first(rows: &[PaperRow], stat: usize) -> f64 {
    let best = rows[1..]
        .iter()
        .map(|r| r.paper[stat])
        .fold(f64::MAX, f64::min);
    best / rows[0].paper[stat]
}

const HEADER: &str = "| design | avg µs | P90 | P99 | P99.9 | paper: avg µs | P90 | P99 | \
                      P99.9 |\n|---|---|---|---|---|---|---|---|---|\n";

/// Every design's latencies in this run (`measured` by label) beside the paper's.
pub fn side_by_side(
    rows: &[PaperRow],
    measured: impl Fn(&str) -> Result<Latency, String>,
) -> Result<String, String> {
    let cells = |l: &Latency| l.map(|us| format!("{us:.2}")).join(" | ");
    let mut out = String::from(HEADER);
    for r in rows {
        let ours = measured(r.label)?;
        out += &format!(
            "| {} ({}) | {} | {} |\n",
            r.label,
            r.role,
            cells(&ours),
            cells(&r.paper)
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROWS: [PaperRow; 2] = [
        PaperRow {
            label: "FlatLSM",
            role: "FlatLSM",
            paper: [10.0, 12.0, 20.0, 80.0],
        },
        PaperRow {
            label: "matrixkv",
            role: "MatrixKV",
            paper: [20.0, 30.0, 40.0, 40.0],
        },
    ];

    #[test]
    fn each_design_shows_this_runs_latencies_then_the_papers() {
        let t = side_by_side(&ROWS, |label| Ok([label.len() as f64, 2.0, 3.0, 4.5])).unwrap();
        let row = t.lines().find(|l| l.starts_with("| matrixkv")).unwrap();
        assert_eq!(
            row,
            "| matrixkv (MatrixKV) | 8.00 | 2.00 | 3.00 | 4.50 | 20.00 | 30.00 | 40.00 | 40.00 |"
        );
        assert!(side_by_side(&ROWS, |_| Err("none".into())).is_err());
    }

    #[test]
    fn the_papers_ratio_is_its_best_baseline_over_flatlsm() {
        assert_eq!(best_other_over_first(&ROWS, 0), 2.0);
        assert_eq!(best_other_over_first(&ROWS, 3), 0.5);
    }
}
