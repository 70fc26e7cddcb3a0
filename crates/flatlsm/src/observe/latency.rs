//! Per-operation latency: the live histograms the database handle and its iterators record
//! into (nanoseconds, lock-free, [`crate::histogram`]), and the summaries [`super::Stats`]
//! reports (microseconds).
//!
//! What is timed, once per call of the public API (failed calls too, except those refused up
//! front because the database is closed): `get` ([`crate::Db::get`]), `put` (single-key
//! writes: put, delete, insert_if_absent, update_if_present), `write` (batches,
//! [`crate::Db::write`]), `seek` (each positioning call of an iterator, including the one that
//! places a new iterator on its first key) and `next` (each step of an iterator, either
//! direction). `multi_get` and `delete_range` are not timed. Counts are since open; nothing is
//! persisted.

use crate::histogram::{Histogram, HistogramSnapshot};
use crate::iter::IterLatency;
use std::fmt;
use std::sync::Arc;

/// The live histograms.
#[derive(Debug, Default)]
pub(crate) struct Latency {
    pub(crate) get: Histogram,
    pub(crate) put: Histogram,
    pub(crate) write: Histogram,
    /// Shared with every iterator the database hands out.
    pub(crate) iter: Arc<IterLatency>,
}

impl Latency {
    /// The summaries of every operation now.
    pub(crate) fn stats(&self) -> LatencyStats {
        let of = |h: &Histogram| LatencySummary::of(&h.snapshot());
        LatencyStats {
            get: of(&self.get),
            put: of(&self.put),
            write: of(&self.write),
            seek: of(&self.iter.seek),
            next: of(&self.iter.next),
        }
    }
}

/// One operation's latency since open, in microseconds. Percentiles are upper bounds of
/// histogram buckets: at most 12.5% above the exact value, never above `max_micros`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct LatencySummary {
    /// Number of calls.
    pub count: u64,
    /// Mean time of a call.
    pub mean_micros: f64,
    /// Median.
    pub p50_micros: f64,
    /// 99th percentile.
    pub p99_micros: f64,
    /// 99.9th percentile.
    pub p999_micros: f64,
    /// Longest call.
    pub max_micros: f64,
}

impl LatencySummary {
    fn of(s: &HistogramSnapshot) -> LatencySummary {
        let micros = |nanos: u64| nanos as f64 / 1000.0;
        LatencySummary {
            count: s.count(),
            mean_micros: s.mean() / 1000.0,
            p50_micros: micros(s.percentile(0.5)),
            p99_micros: micros(s.percentile(0.99)),
            p999_micros: micros(s.percentile(0.999)),
            max_micros: micros(s.max()),
        }
    }
}

/// Latency per operation (see the module documentation for what each one times).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct LatencyStats {
    /// Point reads.
    pub get: LatencySummary,
    /// Single-key writes.
    pub put: LatencySummary,
    /// Write batches.
    pub write: LatencySummary,
    /// Iterator positioning.
    pub seek: LatencySummary,
    /// Iterator steps.
    pub next: LatencySummary,
}

impl LatencyStats {
    /// Every operation with its name, in a fixed order.
    pub fn by_name(&self) -> [(&'static str, &LatencySummary); 5] {
        [
            ("get", &self.get),
            ("put", &self.put),
            ("write", &self.write),
            ("seek", &self.seek),
            ("next", &self.next),
        ]
    }
}

/// A table: a header line, then one line per operation.
impl fmt::Display for LatencyStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<14}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}",
            "latency (us)", "count", "mean", "p50", "p99", "p99.9", "max"
        )?;
        for (name, s) in self.by_name() {
            write!(
                f,
                "\n{name:<14}{:>10}{:>10.2}{:>10.2}{:>10.2}{:>10.2}{:>10.2}",
                s.count, s.mean_micros, s.p50_micros, s.p99_micros, s.p999_micros, s.max_micros
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_are_in_microseconds_and_the_table_has_a_line_per_operation() {
        let l = Latency::default();
        for nanos in [1_000, 2_000, 3_000, 100_000] {
            l.get.record(nanos);
        }
        l.iter.next.record(500);
        let s = l.stats();
        assert_eq!(
            (s.get.count, s.get.mean_micros, s.get.max_micros),
            (4, 26.5, 100.0)
        );
        assert_eq!(s.get.p50_micros, 2.047, "top of the bucket holding 2000 ns");
        assert_eq!((s.next.count, s.next.p99_micros, s.put.count), (1, 0.5, 0));
        let text = s.to_string();
        assert_eq!(text.lines().count(), 6);
        assert!(text
            .lines()
            .any(|l| l.starts_with("get") && l.contains("100.00")));
    }
}
