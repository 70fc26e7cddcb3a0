//! The outcome of one benchmark on one engine, and its text report (result line, histograms,
//! interval summary, engine counters).

use super::cpu;
use super::engine::EngineStats;
use super::histogram::Summary;
use super::intervals::{self, IntervalStats};
use super::memory::{self, MemoryUse};
use super::result_line::result_line;
use super::runner::{Measured, OpKind};

/// How background work settled after a write benchmark.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settle {
    /// Seconds `wait_for_background_work` took.
    pub seconds: f64,
    /// Write amplification once settled.
    pub write_amplification: f64,
}

/// One benchmark's results on one engine.
#[derive(Clone)]
pub struct Outcome {
    /// Engine name.
    pub engine: String,
    /// Benchmark name (as printed in the result line).
    pub name: String,
    /// Worker measurements.
    pub measured: Measured,
    /// Extra text of the result line, e.g. " (F of N found)".
    pub extra: String,
    /// Engine counters when the workers finished.
    pub stats: EngineStats,
    /// Settling after writes (write benchmarks only).
    pub settle: Option<Settle>,
    /// Summary of the timeline.
    pub interval_stats: IntervalStats,
    /// Summary of all latencies.
    pub latency: Summary,
    /// Reopen time in seconds (the `reopen` benchmark).
    pub reopen_seconds: Option<f64>,
    /// Latency CDF points (µs, fraction) when no histogram was recorded here (parsed db_bench
    /// output); otherwise the CDF comes from the histograms.
    pub external_cdf: Option<Vec<(f64, f64)>>,
    /// The memory the engine occupied when the benchmark ended (not taken: all `None`).
    pub memory: MemoryUse,
    /// CPU seconds other processes used while this engine ran (`--compare profiles`; `None`
    /// where not measured).
    pub others_cpu_seconds: Option<f64>,
    /// Bytes the process read from storage devices during the benchmark (its settling
    /// included; `device_reads.rs`); `None` where not measured.
    pub device_read_bytes: Option<u64>,
}

impl Outcome {
    /// Builds an outcome, summarising timeline and latencies.
    pub fn new(
        engine: &str,
        name: &str,
        measured: Measured,
        extra: String,
        stats: EngineStats,
    ) -> Outcome {
        let interval_stats = intervals::summarize(&measured.intervals);
        let latency = measured.all_latencies().summary();
        Outcome {
            engine: engine.to_string(),
            name: name.to_string(),
            measured,
            extra,
            stats,
            settle: None,
            interval_stats,
            latency,
            reopen_seconds: None,
            external_cdf: None,
            memory: MemoryUse::default(),
            others_cpu_seconds: None,
            device_read_bytes: None,
        }
    }

    /// The latency CDF (µs, fraction of operations).
    pub fn cdf(&self) -> Vec<(f64, f64)> {
        match &self.external_cdf {
            Some(c) => c.clone(),
            None => self.measured.all_latencies().cdf_points(),
        }
    }

    /// The latencies of one kind of operation alone (a mixed workload's writes, e.g.
    /// YCSB-A's updates; `None` when none ran).
    pub fn latency_of(&self, kind: OpKind) -> Option<Summary> {
        let h = self.measured.hists.get(&kind)?;
        (h.count() > 0).then(|| h.summary())
    }

    /// Operations per second over the whole benchmark.
    pub fn ops_per_sec(&self) -> f64 {
        self.measured.ops as f64 / self.measured.wall_seconds.max(1e-9)
    }

    /// Process CPU seconds per million operations (`None` where CPU was not measured).
    pub fn cpu_per_million_ops(&self) -> Option<f64> {
        cpu::per_million_ops(self.measured.cpu_seconds, self.measured.ops)
    }

    /// The db_bench result line.
    pub fn result_line(&self) -> String {
        let m = &self.measured;
        result_line(
            &self.name,
            m.ops,
            m.wall_seconds,
            m.thread_seconds,
            m.bytes,
            &self.extra,
        )
    }

    /// Everything printed after a benchmark.
    pub fn report(&self, histogram: bool, interval_secs: f64) -> String {
        let mut out = self.result_line() + "\n";
        if self.reopen_seconds.is_some() {
            return out; // one timed operation: no timeline, no engine work to report
        }
        if histogram {
            for (kind, h) in &self.measured.hists {
                out += &format!(
                    "Microseconds per {}:\n{}\n",
                    kind.label(),
                    h.to_db_bench_string()
                );
            }
        }
        out += &intervals::describe(&self.interval_stats, interval_secs);
        out += "\n";
        let s = &self.stats;
        out += &format!(
            "  engine: stall micros {} | write amplification {:.3} at end | PM bytes written {} | SSD bytes written {}\n",
            s.stall_micros,
            s.write_amplification(),
            s.pm_bytes,
            s.ssd_bytes
        );
        out += &self.cost_line();
        out += &self.memory_line();
        out += &s.files_line().unwrap_or_default();
        out += &s.store_compaction_line().unwrap_or_default();
        if let Some(st) = &self.settle {
            out += &format!(
                "  settled in {:.3} s | write amplification {:.3} after settling\n",
                st.seconds, st.write_amplification
            );
        }
        out
    }

    /// `  memory (MiB): block cache ... | page cache ... | PM (tmpfs) ... | RssAnon ...`
    /// (see [`memory`]).
    fn memory_line(&self) -> String {
        let m = &self.memory;
        format!(
            "  memory (MiB): block cache {} | page cache {} | PM (tmpfs) {} | RssAnon {}\n",
            memory::mib(m.block_cache),
            memory::mib(m.page_cache),
            memory::mib(m.pm_resident),
            memory::mib(m.rss_anon)
        )
    }

    /// `  process CPU ... | flushes ...`: what the benchmark cost the machine, and how fast its
    /// flushes went (MB = 2^20 bytes, as in the result line).
    fn cost_line(&self) -> String {
        let cpu = match (self.measured.cpu_seconds, self.cpu_per_million_ops()) {
            (Some(c), Some(per)) => format!("{c:.3} s = {per:.3} s per million ops"),
            _ => "-".into(),
        };
        let s = &self.stats;
        let flush = match s.flush_mb_per_sec() {
            Some(rate) => format!(
                "{:.1} MB in {:.3} s = {rate:.1} MB/s",
                s.flush_bytes as f64 / 1_048_576.0,
                s.flush_micros as f64 / 1e6
            ),
            None => "none".into(),
        };
        format!("  process CPU {cpu} | flushes {flush}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::histogram::Latencies;

    /// A YCSB-A-like outcome: slow reads, fast writes; the writes' summary leaves reads out.
    #[test]
    fn the_latency_of_one_kind_leaves_the_other_kinds_out() {
        let hist = |us: u64, n: usize| {
            let mut h = Latencies::default();
            (0..n).for_each(|_| h.record_ns(us * 1000));
            h
        };
        let mut m = Measured::default();
        m.hists.insert(OpKind::Read, hist(100, 10));
        m.hists.insert(OpKind::Write, hist(10, 30));
        let o = Outcome::new("FlatLSM", "ycsba", m, String::new(), EngineStats::default());
        let writes = o.latency_of(OpKind::Write).unwrap();
        assert_eq!(writes.count, 30);
        assert!((writes.average - 10.0).abs() < 0.1, "{}", writes.average);
        assert_eq!(o.latency.count, 40);
        assert!(o.latency_of(OpKind::Seek).is_none());
    }
}
