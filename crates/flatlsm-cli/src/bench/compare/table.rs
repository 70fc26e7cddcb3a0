//! The comparison table: one row per metric, one column per engine, then one ratio column per
//! other engine. Every ratio is FlatLSM's value divided by the other engine's; each row says
//! whether higher or lower is better.

use super::super::memory::in_mib;
use super::super::outcome::Outcome;
use serde_json::{json, Value};

/// A metric row: name, extractor, and whether higher is better.
struct Metric {
    name: &'static str,
    value: fn(&Outcome) -> Option<f64>,
    higher_is_better: bool,
}

const METRICS: &[Metric] = &[
    Metric {
        name: "throughput (ops/s)",
        value: |o| Some(o.ops_per_sec()),
        higher_is_better: true,
    },
    Metric {
        name: "average latency (us)",
        value: |o| Some(o.latency.average),
        higher_is_better: false,
    },
    Metric {
        name: "P50 latency (us)",
        value: |o| Some(o.latency.median),
        higher_is_better: false,
    },
    Metric {
        name: "P90 latency (us)",
        value: |o| Some(o.latency.p90),
        higher_is_better: false,
    },
    Metric {
        name: "P99 latency (us)",
        value: |o| Some(o.latency.p99),
        higher_is_better: false,
    },
    Metric {
        name: "P99.9 latency (us)",
        value: |o| Some(o.latency.p999),
        higher_is_better: false,
    },
    Metric {
        name: "stall intervals",
        value: |o| Some(o.interval_stats.stalls as f64),
        higher_is_better: false,
    },
    Metric {
        name: "intervals (context)",
        value: |o| Some(o.interval_stats.count as f64),
        higher_is_better: true,
    },
    Metric {
        name: "write amp. at end",
        value: |o| (o.stats.user_bytes > 0).then(|| o.stats.write_amplification()),
        higher_is_better: false,
    },
    Metric {
        name: "write amp. settled",
        value: |o| o.settle.map(|s| s.write_amplification),
        higher_is_better: false,
    },
    Metric {
        name: "settle time (s)",
        value: |o| o.settle.map(|s| s.seconds),
        higher_is_better: false,
    },
    Metric {
        name: "stall micros",
        value: |o| Some(o.stats.stall_micros as f64),
        higher_is_better: false,
    },
    Metric {
        name: "flush MB/s",
        value: |o| o.stats.flush_mb_per_sec(),
        higher_is_better: true,
    },
    Metric {
        name: "CPU s / Mops",
        value: |o| o.cpu_per_million_ops(),
        higher_is_better: false,
    },
    Metric {
        name: "block cache (MiB)",
        value: |o| in_mib(o.memory.block_cache),
        higher_is_better: false,
    },
    Metric {
        name: "page cache (MiB)",
        value: |o| in_mib(o.memory.page_cache),
        higher_is_better: false,
    },
    Metric {
        name: "read from disk (MiB)",
        value: |o| in_mib(o.device_read_bytes),
        higher_is_better: false,
    },
    Metric {
        name: "PM (tmpfs) (MiB)",
        value: |o| in_mib(o.memory.pm_resident),
        higher_is_better: false,
    },
    Metric {
        name: "RssAnon (MiB)",
        value: |o| in_mib(o.memory.rss_anon),
        higher_is_better: false,
    },
];

/// One row: the metric, each engine's value, and FlatLSM's ratio to each other engine.
struct Row {
    metric: &'static Metric,
    values: Vec<Option<f64>>,
    ratios: Vec<Option<f64>>,
}

impl Metric {
    /// The interval count only says how long each run took: it has no ratio and no "better".
    fn is_context(&self) -> bool {
        self.name.ends_with("(context)")
    }

    fn row(&'static self, runs: &[&Outcome]) -> Row {
        let values: Vec<Option<f64>> = runs.iter().map(|r| (self.value)(r)).collect();
        let ratios = values[1..]
            .iter()
            .map(|v| match (values[0], *v) {
                _ if self.is_context() => None,
                (Some(a), Some(b)) if b != 0.0 => Some(a / b),
                _ => None,
            })
            .collect();
        Row {
            metric: self,
            values,
            ratios,
        }
    }

    fn verdict(&self) -> &'static str {
        match (self.is_context(), self.higher_is_better) {
            (true, _) => "",
            (false, true) => "  (higher is better)",
            (false, false) => "  (lower is better)",
        }
    }
}

fn cell(v: Option<f64>) -> String {
    match v {
        Some(x) if x.abs() >= 100.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.3}"),
        None => "-".into(),
    }
}

/// The table for one benchmark: `runs[0]` (FlatLSM, or the first design a preset compares) is
/// the reference, the rest are compared against it.
pub fn table(bench: &str, runs: &[&Outcome]) -> String {
    let mut out = format!("{:<22}", format!("== {bench}"));
    for r in runs {
        out += &format!(" | {:>12}", r.engine);
    }
    let reference = runs.first().map_or("FlatLSM", |r| r.engine.as_str());
    for r in &runs[1..] {
        out += &format!(" | {:>16}", format!("{reference}/{}", r.engine));
    }
    out += "\n";
    for row in METRICS.iter().map(|m| m.row(runs)) {
        let mut line = format!("{:<22}", row.metric.name);
        for v in &row.values {
            line += &format!(" | {:>12}", cell(*v));
        }
        for r in &row.ratios {
            let ratio = r.map_or_else(|| "-".to_string(), |x| format!("{x:.2}x"));
            line += &format!(" | {ratio:>16}");
        }
        out += &line;
        out += row.metric.verdict();
        out += "\n";
    }
    out
}

/// The same table as JSON: the engines, then per row the metric, each engine's value, FlatLSM's
/// ratio to each other engine and whether higher is better (`null` where there is none).
pub fn table_json(bench: &str, runs: &[&Outcome]) -> Value {
    let rows: Vec<Value> = METRICS
        .iter()
        .map(|m| {
            let row = m.row(runs);
            json!({
                "metric": m.name,
                "values": row.values,
                "flatlsm_ratios": row.ratios,
                "higher_is_better": (!m.is_context()).then_some(m.higher_is_better),
            })
        })
        .collect();
    json!({
        "benchmark": bench,
        "engines": runs.iter().map(|r| r.engine.as_str()).collect::<Vec<_>>(),
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::super::super::engine::EngineStats;
    use super::super::super::runner::Measured;
    use super::*;

    fn o(engine: &str, ops: u64) -> Outcome {
        let m = Measured {
            ops,
            wall_seconds: 1.0,
            thread_seconds: 1.0,
            ..Measured::default()
        };
        Outcome::new(
            engine,
            "fillrandom",
            m,
            String::new(),
            EngineStats::default(),
        )
    }

    #[test]
    fn table_has_one_row_per_metric_and_ratios() {
        let (a, b) = (o("FlatLSM", 500), o("RocksDB", 100));
        let t = table("fillrandom", &[&a, &b]);
        assert!(t.lines().next().unwrap().contains("FlatLSM/RocksDB"));
        let tp = t.lines().find(|l| l.starts_with("throughput")).unwrap();
        assert!(tp.contains("5.00x"), "{tp}");
        assert_eq!(t.lines().count(), 1 + METRICS.len());
        let ctx = t
            .lines()
            .find(|l| l.starts_with("intervals (context)"))
            .unwrap();
        assert!(
            ctx.trim_end().ends_with('-') && !ctx.contains("better"),
            "{ctx}"
        );
    }

    /// An outcome of 1 s with `ops` operations, `cpu` CPU seconds and `mb` MB flushed in 2 s.
    fn costed(engine: &str, ops: u64, cpu: f64, mb: u64) -> Outcome {
        let mut r = o(engine, ops);
        r.measured.cpu_seconds = Some(cpu);
        r.stats.flush_bytes = mb << 20;
        r.stats.flush_micros = 2_000_000;
        r
    }

    fn cells<'a>(t: &'a str, row: &str) -> Vec<&'a str> {
        let line = t.lines().find(|l| l.starts_with(row)).unwrap();
        line.split('|').map(str::trim).collect()
    }

    #[test]
    fn blob_engine_gets_its_column_and_flush_and_cpu_rows_their_ratios() {
        let f = costed("FlatLSM", 2_000_000, 4.0, 400);
        let r = costed("RocksDB", 1_000_000, 8.0, 100);
        let b = costed("RocksDB+Blob", 1_000_000, 2.0, 200);
        let t = table("fillrandom", &[&f, &r, &b]);
        let head = t.lines().next().unwrap();
        for col in ["RocksDB+Blob", "FlatLSM/RocksDB", "FlatLSM/RocksDB+Blob"] {
            assert!(head.contains(col), "{head}");
        }
        // FlatLSM 200 MB/s, RocksDB 50, with blobs 100.
        let flush = cells(&t, "flush MB/s");
        assert_eq!(
            flush[1..],
            ["200", "50.000", "100", "4.00x", "2.00x  (higher is better)"]
        );
        // 2 s per million ops against 8 and 2.
        let cpu = cells(&t, "CPU s / Mops");
        assert_eq!(
            cpu[1..],
            [
                "2.000",
                "8.000",
                "2.000",
                "0.25x",
                "1.00x  (lower is better)"
            ]
        );
        let none = o("RocksDB", 1);
        let t = table("readrandom", &[&o("FlatLSM", 1), &none]);
        assert_eq!(
            cells(&t, "flush MB/s")[1..],
            ["-", "-", "-  (higher is better)"]
        );
    }

    #[test]
    fn table_json_holds_every_row_with_values_and_ratios() {
        let f = costed("FlatLSM", 2_000_000, 4.0, 400);
        let b = costed("RocksDB+Blob", 1_000_000, 2.0, 200);
        let j = table_json("fillrandom", &[&f, &b]);
        assert_eq!(j["engines"], json!(["FlatLSM", "RocksDB+Blob"]));
        let rows = j["rows"].as_array().unwrap();
        assert_eq!(rows.len(), METRICS.len());
        let cpu = rows.iter().find(|r| r["metric"] == "CPU s / Mops").unwrap();
        assert_eq!(cpu["values"], json!([2.0, 2.0]));
        assert_eq!(cpu["flatlsm_ratios"], json!([1.0]));
        assert_eq!(cpu["higher_is_better"], json!(false));
        let ctx = rows
            .iter()
            .find(|r| r["metric"] == "intervals (context)")
            .unwrap();
        assert_eq!(ctx["flatlsm_ratios"], json!([null]));
        assert_eq!(ctx["higher_is_better"], Value::Null);
    }
}
