//! Throughput per interval: the timeline behind "instant throughput" plots, its min / median /
//! max, the stall intervals (below half the mean), and the CSV file.

use std::io::Write;
use std::path::Path;

/// One throughput sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Seconds since the benchmark started, at the interval's end.
    pub end_secs: f64,
    /// Operations completed in the interval.
    pub ops: u64,
    /// Operations per second in the interval.
    pub qps: f64,
}

impl Interval {
    /// A sample of `ops` operations over `length` seconds ending at `end_secs`.
    pub fn new(end_secs: f64, length: f64, ops: u64) -> Interval {
        Interval {
            end_secs,
            ops,
            qps: ops as f64 / length.max(1e-9),
        }
    }
}

/// Summary of a timeline.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IntervalStats {
    /// Number of intervals.
    pub count: usize,
    /// Lowest interval throughput.
    pub min: f64,
    /// Median interval throughput.
    pub median: f64,
    /// Highest interval throughput.
    pub max: f64,
    /// Mean interval throughput.
    pub mean: f64,
    /// Intervals below 50% of the mean.
    pub stalls: usize,
}

/// Summarises a timeline (all zeros when empty).
pub fn summarize(intervals: &[Interval]) -> IntervalStats {
    if intervals.is_empty() {
        return IntervalStats::default();
    }
    let mut q: Vec<f64> = intervals.iter().map(|i| i.qps).collect();
    q.sort_by(f64::total_cmp);
    let mean = q.iter().sum::<f64>() / q.len() as f64;
    let median = if q.len() % 2 == 1 {
        q[q.len() / 2]
    } else {
        (q[q.len() / 2 - 1] + q[q.len() / 2]) / 2.0
    };
    IntervalStats {
        count: q.len(),
        min: q[0],
        median,
        max: q[q.len() - 1],
        mean,
        stalls: q.iter().filter(|&&x| x < 0.5 * mean).count(),
    }
}

/// The line printed under each result line.
pub fn describe(s: &IntervalStats, interval_secs: f64) -> String {
    format!(
        "  intervals ({interval_secs} s): {} | throughput min {:.0} median {:.0} max {:.0} ops/sec | stall intervals (< 50% of mean {:.0}): {}",
        s.count, s.min, s.median, s.max, s.mean, s.stalls
    )
}

/// Appends one benchmark's intervals to the CSV at `path` (header written when the file is new).
pub fn append_csv(
    path: &Path,
    engine: &str,
    benchmark: &str,
    intervals: &[Interval],
) -> Result<(), String> {
    let fresh = !path.exists();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("opening report file {}: {e}", path.display()))?;
    let mut text = String::new();
    if fresh {
        text += "engine,benchmark,secs_elapsed,interval_ops,interval_qps\n";
    }
    for i in intervals {
        text += &format!(
            "{engine},{benchmark},{:.3},{},{:.0}\n",
            i.end_secs, i.ops, i.qps
        );
    }
    f.write_all(text.as_bytes())
        .map_err(|e| format!("writing report file {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tl(qps: &[u64]) -> Vec<Interval> {
        qps.iter()
            .enumerate()
            .map(|(i, &q)| Interval::new(i as f64 + 1.0, 1.0, q))
            .collect()
    }

    #[test]
    fn stall_intervals_are_those_below_half_the_mean() {
        let s = summarize(&tl(&[100, 100, 100, 100, 10]));
        assert_eq!(s.mean, 82.0);
        assert_eq!((s.min, s.median, s.max), (10.0, 100.0, 100.0));
        assert_eq!(s.stalls, 1);
        assert_eq!(summarize(&[]).stalls, 0);
    }

    #[test]
    fn csv_has_header_once_and_one_row_per_interval() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.csv");
        append_csv(&p, "FlatLSM", "fillrandom", &tl(&[5, 6])).unwrap();
        append_csv(&p, "FlatLSM", "readrandom", &tl(&[7])).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "engine,benchmark,secs_elapsed,interval_ops,interval_qps"
        );
        assert_eq!(lines[1], "FlatLSM,fillrandom,1.000,5,5");
        assert_eq!(lines.len(), 4);
    }
}
