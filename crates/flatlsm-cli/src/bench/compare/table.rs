//! The comparison table: one row per metric, one column per engine, then one ratio column per
//! other engine. Every ratio is FlatLSM's value divided by the other engine's; each row says
//! whether higher or lower is better.

use super::super::outcome::Outcome;

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
        name: "P50 latency (us)",
        value: |o| Some(o.latency.median),
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
];

fn cell(v: Option<f64>) -> String {
    match v {
        Some(x) if x.abs() >= 100.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.3}"),
        None => "-".into(),
    }
}

/// The table for one benchmark: `runs[0]` is FlatLSM, the rest are compared against it.
pub fn table(bench: &str, runs: &[&Outcome]) -> String {
    let mut head = format!("{:<22}", format!("== {bench}"));
    for r in runs {
        head += &format!(" | {:>12}", r.engine);
    }
    for r in &runs[1..] {
        head += &format!(" | {:>16}", format!("FlatLSM/{}", r.engine));
    }
    let mut out = head + "\n";
    for m in METRICS {
        let vals: Vec<Option<f64>> = runs.iter().map(|r| (m.value)(r)).collect();
        let mut line = format!("{:<22}", m.name);
        for v in &vals {
            line += &format!(" | {:>12}", cell(*v));
        }
        for v in &vals[1..] {
            let ratio = match (vals[0], *v) {
                // The interval count only says how long each run took; a ratio means nothing.
                _ if m.name.ends_with("(context)") => "-".into(),
                (Some(a), Some(b)) if b != 0.0 => format!("{:.2}x", a / b),
                _ => "-".into(),
            };
            line += &format!(" | {:>16}", ratio);
        }
        line += if m.name.ends_with("(context)") {
            ""
        } else if m.higher_is_better {
            "  (higher is better)"
        } else {
            "  (lower is better)"
        };
        out += &line;
        out += "\n";
    }
    out
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
}
