//! Latency histograms: per-thread hdrhistograms (nanoseconds) merged per benchmark, printed in
//! db_bench's format (Count/Average/StdDev, Min/Median/Max, Percentiles, bucket table).

use hdrhistogram::Histogram;

/// Longest latency tracked exactly (1 hour); longer ones saturate.
const MAX_TRACKED_NS: u64 = 3_600_000_000_000;

/// A latency histogram in nanoseconds.
#[derive(Clone)]
pub struct Latencies {
    hist: Histogram<u64>,
}

impl Default for Latencies {
    fn default() -> Self {
        Latencies {
            // 3 significant digits: 0.1% relative error, as precise as db_bench's output needs.
            hist: Histogram::new_with_bounds(1, MAX_TRACKED_NS, 3).expect("valid bounds"),
        }
    }
}

/// Summary figures in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Summary {
    /// Operations recorded.
    pub count: u64,
    /// Mean.
    pub average: f64,
    /// Standard deviation.
    pub stddev: f64,
    /// Minimum.
    pub min: f64,
    /// Median.
    pub median: f64,
    /// Maximum.
    pub max: f64,
    /// 75th percentile.
    pub p75: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// 99.99th percentile.
    pub p9999: f64,
}

impl Latencies {
    /// Records one operation's latency.
    pub fn record_ns(&mut self, ns: u64) {
        self.hist.saturating_record(ns.max(1));
    }

    /// Adds another histogram's counts (merging per-thread histograms).
    pub fn merge(&mut self, other: &Latencies) {
        // Same bounds on both sides, so `add` cannot fail.
        let _ = self.hist.add(&other.hist);
    }

    /// Operations recorded.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// The latency (µs) at quantile `q` in `[0, 1]`.
    pub fn micros_at(&self, q: f64) -> f64 {
        self.hist.value_at_quantile(q) as f64 / 1000.0
    }

    /// Count, mean, deviation and percentiles in microseconds.
    pub fn summary(&self) -> Summary {
        let h = &self.hist;
        let us = |ns: u64| ns as f64 / 1000.0;
        Summary {
            count: h.len(),
            average: h.mean() / 1000.0,
            stddev: h.stdev() / 1000.0,
            min: us(h.min()),
            median: self.micros_at(0.5),
            max: us(h.max()),
            p75: self.micros_at(0.75),
            p90: self.micros_at(0.90),
            p99: self.micros_at(0.99),
            p999: self.micros_at(0.999),
            p9999: self.micros_at(0.9999),
        }
    }

    /// (latency µs, cumulative fraction) points of the CDF, for plots.
    pub fn cdf_points(&self) -> Vec<(f64, f64)> {
        if self.count() == 0 {
            return Vec::new();
        }
        let mut pts: Vec<(f64, f64)> = (0..=400)
            .map(|i| {
                // Dense towards the tail: q = 1 - 10^(-i/80) reaches 0.99999 at i = 400.
                let q = if i == 0 {
                    0.0
                } else {
                    1.0 - 10f64.powf(-(i as f64) / 80.0)
                };
                (self.micros_at(q), q)
            })
            .collect();
        pts.push((self.hist.max() as f64 / 1000.0, 1.0));
        pts
    }

    /// db_bench's histogram text (HistogramImpl::ToString), values in microseconds.
    pub fn to_db_bench_string(&self) -> String {
        let s = self.summary();
        let mut out = format!(
            "Count: {} Average: {:.4}  StdDev: {:.2}\n",
            s.count, s.average, s.stddev
        );
        out += &format!(
            "Min: {}  Median: {:.4}  Max: {}\n",
            s.min as u64, s.median, s.max as u64
        );
        out += &format!(
            "Percentiles: P50: {:.2} P75: {:.2} P99: {:.2} P99.9: {:.2} P99.99: {:.2}\n",
            s.median, s.p75, s.p99, s.p999, s.p9999
        );
        out += "------------------------------------------------------\n";
        out += &self.bucket_table();
        out
    }

    /// The bucket lines: `[ left, right ) count percent cumulative% ####`.
    fn bucket_table(&self) -> String {
        let limits = bucket_limits();
        let mut counts = vec![0u64; limits.len()];
        for v in self.hist.iter_recorded() {
            let micros = v.value_iterated_to() / 1000;
            // RocksDB puts v into the first bucket whose limit is >= v (lower_bound).
            let b = limits
                .partition_point(|&l| l < micros)
                .min(limits.len() - 1);
            counts[b] += v.count_at_value();
        }
        let total = self.count().max(1) as f64;
        let mut cumulative = 0.0;
        let mut out = String::new();
        for (b, &c) in counts.iter().enumerate().filter(|(_, &c)| c > 0) {
            let left = if b == 0 { 0 } else { limits[b - 1] };
            let pct = 100.0 * c as f64 / total;
            cumulative += pct;
            let marks = (20.0 * c as f64 / total + 0.5) as usize;
            out += &format!(
                "{} {:7}, {:7} ] {:8} {:7.3}% {:7.3}% {}\n",
                if b == 0 { '[' } else { '(' },
                left,
                limits[b],
                c,
                pct,
                cumulative,
                "#".repeat(marks)
            );
        }
        out
    }
}

/// RocksDB's histogram bucket limits: 1, 2, then x1.5 rounded to two significant digits.
pub fn bucket_limits() -> Vec<u64> {
    let mut limits = vec![1u64, 2];
    let mut v = 2.0f64;
    loop {
        v *= 1.5;
        if v > u64::MAX as f64 / 2.0 {
            return limits;
        }
        let (mut b, mut pow) = (v as u64, 1u64);
        while b / 10 > 10 {
            b /= 10;
            pow *= 10;
        }
        limits.push(b * pow);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_limits_match_rocksdb() {
        let l = bucket_limits();
        assert_eq!(
            &l[..14],
            &[1, 2, 3, 4, 6, 10, 15, 22, 34, 51, 76, 110, 170, 250]
        );
        assert!(l.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn histogram_text_has_db_bench_lines() {
        let mut h = Latencies::default();
        for us in [1u64, 2, 3, 4, 100] {
            h.record_ns(us * 1000);
        }
        let t = h.to_db_bench_string();
        let lines: Vec<&str> = t.lines().collect();
        // hdrhistogram keeps 3 significant digits, so figures are exact to about 0.1%.
        assert!(
            lines[0].starts_with("Count: 5 Average: 22.0"),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains("  StdDev: 39.0"), "{}", lines[0]);
        assert!(lines[1].starts_with("Min: 1  Median: 3.00"), "{}", lines[1]);
        assert!(lines[1].ends_with("  Max: 100"), "{}", lines[1]);
        assert!(
            lines[2].starts_with("Percentiles: P50: 3.00 P75: 4.00 P99: 100."),
            "{}",
            lines[2]
        );
        assert_eq!(
            lines[3],
            "------------------------------------------------------"
        );
        assert_eq!(
            lines[4],
            "[       0,       1 ]        1  20.000%  20.000% ####"
        );
        assert_eq!(
            lines[5],
            "(       1,       2 ]        1  20.000%  40.000% ####"
        );
        assert!(
            lines[8].starts_with("(      76,     110 ]        1  20.000% 100.000%"),
            "{}",
            lines[8]
        );
        assert!(t.trim_end().ends_with("100.000% ####"), "{t}");
    }

    #[test]
    fn merged_histograms_count_everything() {
        let mut a = Latencies::default();
        let mut b = Latencies::default();
        a.record_ns(1000);
        b.record_ns(3000);
        a.merge(&b);
        assert_eq!(a.count(), 2);
        assert!((a.summary().max - 3.0).abs() < 0.01, "{}", a.summary().max);
        let cdf = a.cdf_points();
        assert_eq!(cdf.last().unwrap().1, 1.0);
    }
}
