//! Parses db_bench's output: result lines, "Microseconds per ..." histograms (summary and
//! bucket table, which gives the latency CDF), STATISTICS tickers, and the report CSV.

use super::super::histogram::Summary;
use super::super::intervals::Interval;
use super::super::result_line::{parse_result_line, ParsedResult};
use std::collections::BTreeMap;

/// One histogram printed by db_bench.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedHistogram {
    /// Operation kind ("write", "read", ...).
    pub kind: String,
    /// Count, average, percentiles (µs).
    pub summary: Summary,
    /// CDF points (bucket upper bound µs, cumulative fraction).
    pub cdf: Vec<(f64, f64)>,
}

/// What one db_bench run printed.
#[derive(Debug, Clone, Default)]
pub struct DbBenchOutput {
    /// Result lines in order.
    pub results: Vec<ParsedResult>,
    /// The text after "operations;" of each result line.
    pub messages: Vec<String>,
    /// Histograms in order.
    pub histograms: Vec<ParsedHistogram>,
    /// STATISTICS tickers.
    pub tickers: BTreeMap<String, u64>,
    /// The SUM of each STATISTICS histogram (e.g. `rocksdb.db.flush.micros`).
    pub histogram_sums: BTreeMap<String, u64>,
    /// The "Assertions are enabled" warning was printed.
    pub assertions_enabled: bool,
    /// The RocksDB version line, e.g. "7.8.3".
    pub version: String,
}

fn num_after(line: &str, label: &str) -> Option<f64> {
    let rest = &line[line.find(label)? + label.len()..];
    rest.split_whitespace().next()?.parse().ok()
}

/// Parses db_bench's stdout.
pub fn parse_output(text: &str) -> DbBenchOutput {
    let mut out = DbBenchOutput::default();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if let Some(r) = parse_result_line(l) {
            out.messages
                .push(l.split_once("operations;").map_or("", |x| x.1).to_string());
            out.results.push(r);
        } else if let Some(kind) = l.strip_prefix("Microseconds per ") {
            let (h, used) = parse_histogram(kind.trim_end_matches(':'), &lines[i + 1..]);
            out.histograms.push(h);
            i += used;
        } else if let Some((name, sum)) = parse_histogram_sum(l) {
            out.histogram_sums.insert(name, sum);
        } else if let Some((name, v)) = l.split_once(" COUNT : ") {
            if let Ok(v) = v.trim().parse() {
                out.tickers.insert(name.trim().to_string(), v);
            }
        } else if l.contains("Assertions are enabled") {
            out.assertions_enabled = true;
        } else if let Some(v) = l.strip_prefix("RocksDB:") {
            out.version = v.trim().trim_start_matches("version").trim().to_string();
        }
        i += 1;
    }
    out
}

/// A STATISTICS histogram line, `name P50 : .. P95 : .. P99 : .. P100 : .. COUNT : n SUM : s`:
/// its name and SUM.
fn parse_histogram_sum(line: &str) -> Option<(String, u64)> {
    let (head, sum) = line.split_once(" SUM : ")?;
    let name = head.split_whitespace().next()?;
    Some((name.to_string(), sum.trim().parse().ok()?))
}

/// Parses the lines after "Microseconds per X:"; returns the histogram and lines consumed.
fn parse_histogram(kind: &str, lines: &[&str]) -> (ParsedHistogram, usize) {
    let mut h = ParsedHistogram {
        kind: kind.to_string(),
        ..Default::default()
    };
    let mut used = 0;
    for l in lines {
        let t = l.trim_start();
        if t.starts_with("Count:") {
            h.summary.count = num_after(t, "Count:").unwrap_or(0.0) as u64;
            h.summary.average = num_after(t, "Average:").unwrap_or(0.0);
            h.summary.stddev = num_after(t, "StdDev:").unwrap_or(0.0);
        } else if t.starts_with("Min:") {
            h.summary.min = num_after(t, "Min:").unwrap_or(0.0);
            h.summary.max = num_after(t, "Max:").unwrap_or(0.0);
        } else if t.starts_with("Percentiles:") {
            h.summary.median = num_after(t, "P50:").unwrap_or(0.0);
            h.summary.p75 = num_after(t, "P75:").unwrap_or(0.0);
            h.summary.p99 = num_after(t, "P99:").unwrap_or(0.0);
            h.summary.p999 = num_after(t, "P99.9:").unwrap_or(0.0);
            h.summary.p9999 = num_after(t, "P99.99:").unwrap_or(0.0);
        } else if t.starts_with('[') || t.starts_with('(') {
            // "(       2,       3 ]     3361  16.805%  16.820% ###"
            let f: Vec<&str> = t[1..].split([',', ']']).collect();
            let upper = f.get(1).and_then(|s| s.trim().parse::<f64>().ok());
            let cum = t
                .split('%')
                .nth(1)
                .and_then(|s| s.split_whitespace().last()?.parse::<f64>().ok());
            if let (Some(u), Some(c)) = (upper, cum) {
                h.cdf.push((u, c / 100.0));
            }
        } else if !t.starts_with("---") {
            break;
        }
        used += 1;
    }
    (h, used)
}

/// Parses db_bench's `--report_file` CSV (`secs_elapsed,interval_qps`).
pub fn parse_report_csv(text: &str, interval_secs: f64) -> Vec<Interval> {
    text.lines()
        .filter_map(|l| {
            let (t, q) = l.split_once(',')?;
            let t: f64 = t.trim().parse().ok()?;
            let q: f64 = q.trim().parse().ok()?;
            Some(Interval {
                end_secs: t,
                ops: (q * interval_secs) as u64,
                qps: q,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "RocksDB:    version 7.8.3\n\
WARNING: Assertions are enabled; benchmarks unnecessarily slow\n\
fillrandom   :      32.281 micros/op 30042 ops/sec 0.666 seconds 20000 operations;   11.9 MB/s\n\
Microseconds per write:\n\
Count: 20000 Average: 33.0487  StdDev: 898.97\n\
Min: 2  Median: 4.2051  Max: 56555\n\
Percentiles: P50: 4.21 P75: 5.37 P99: 14.39 P99.9: 10583.33 P99.99: 50000.00\n\
------------------------------------------------------\n\
(       1,       2 ]        3   0.015%   0.015% \n\
(       2,       3 ]     3361  16.805%  16.820% ###\n\
(   50000,   75000 ]        2   0.010% 100.000% \n\
\n\
STATISTICS:\n\
rocksdb.stall.micros COUNT : 191506\n\
rocksdb.compact.write.bytes COUNT : 8186865\n\
rocksdb.db.flush.micros P50 : 2150.000000 P95 : 9000.000000 P99 : 9500.000000 P100 : 9612.000000 COUNT : 3 SUM : 13710\n";

    #[test]
    fn db_bench_output_parses() {
        let o = parse_output(SAMPLE);
        assert_eq!(o.version, "7.8.3");
        assert!(o.assertions_enabled);
        assert_eq!(o.results[0].ops, 20000);
        assert_eq!(o.messages[0].trim(), "11.9 MB/s");
        let h = &o.histograms[0];
        assert_eq!(h.kind, "write");
        assert_eq!(h.summary.count, 20000);
        assert_eq!(
            (h.summary.p99, h.summary.p999, h.summary.max),
            (14.39, 10583.33, 56555.0)
        );
        let want = [(2.0, 0.00015), (3.0, 0.1682), (75000.0, 1.0)];
        assert_eq!(h.cdf.len(), want.len());
        for (got, want) in h.cdf.iter().zip(want) {
            assert!(
                got.0 == want.0 && (got.1 - want.1).abs() < 1e-9,
                "{got:?} vs {want:?}"
            );
        }
        assert_eq!(o.tickers["rocksdb.stall.micros"], 191506);
        assert_eq!(o.tickers["rocksdb.compact.write.bytes"], 8186865);
        assert_eq!(o.histogram_sums["rocksdb.db.flush.micros"], 13710);
        assert!(!o.tickers.contains_key("rocksdb.db.flush.micros"));
    }

    #[test]
    fn report_csv_parses() {
        let v = parse_report_csv("secs_elapsed,interval_qps\n1,33916\n2,35074\n", 1.0);
        assert_eq!(v.len(), 2);
        assert_eq!((v[1].end_secs, v[1].qps), (2.0, 35074.0));
    }
}
