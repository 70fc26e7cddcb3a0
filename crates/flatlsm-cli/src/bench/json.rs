//! `--json FILE`: every outcome (result line figures, latencies, timeline, engine counters and
//! write-path breakdown, settling, memory, bytes read from the disk, reopen time) in one
//! machine-readable document.

use super::histogram::Summary;
use super::outcome::Outcome;
use serde_json::{json, Value};
use std::path::Path;

fn latency(s: &Summary) -> Value {
    json!({
        "count": s.count, "average_us": s.average, "stddev_us": s.stddev,
        "min_us": s.min, "p50_us": s.median, "p75_us": s.p75, "p99_us": s.p99,
        "p99_9_us": s.p999, "p99_99_us": s.p9999, "max_us": s.max,
    })
}

/// The write path's parts in nanoseconds over all writes (zeros unless timed:
/// `--write_breakdown`).
fn breakdown(o: &Outcome) -> Value {
    let [stall, wal, mem_data, mem_index] = o.stats.breakdown.parts();
    json!({ "stall": stall, "wal": wal, "mem_data": mem_data, "mem_index": mem_index })
}

/// One outcome as JSON.
pub fn outcome_json(o: &Outcome) -> Value {
    let m = &o.measured;
    let i = &o.interval_stats;
    let per_kind: serde_json::Map<String, Value> = m
        .hists
        .iter()
        .map(|(k, h)| (k.label().to_string(), latency(&h.summary())))
        .collect();
    json!({
        "engine": o.engine,
        "benchmark": o.name,
        "result_line": o.result_line(),
        "operations": m.ops,
        "seconds": m.wall_seconds,
        "ops_per_sec": o.ops_per_sec(),
        "micros_per_op": m.thread_seconds * 1e6 / m.ops.max(1) as f64,
        "bytes": m.bytes,
        "found": m.found,
        "message": o.extra.trim(),
        "latency": latency(&o.latency),
        "latency_by_kind": per_kind,
        "intervals": {
            "count": i.count, "min_ops_per_sec": i.min, "median_ops_per_sec": i.median,
            "max_ops_per_sec": i.max, "mean_ops_per_sec": i.mean, "stall_intervals": i.stalls,
            "timeline": m.intervals.iter().map(|x| json!([x.end_secs, x.qps])).collect::<Vec<_>>(),
        },
        "engine_stats": {
            "stall_micros": o.stats.stall_micros,
            "user_bytes": o.stats.user_bytes,
            "ssd_bytes_written": o.stats.ssd_bytes,
            "pm_bytes_written": o.stats.pm_bytes,
            "write_amplification_at_end": o.stats.write_amplification(),
            "flush_bytes": o.stats.flush_bytes,
            "flush_micros": o.stats.flush_micros,
            "flush_mb_per_sec": o.stats.flush_mb_per_sec(),
            "write_nanos": breakdown(o),
        },
        "settle": o.settle.map(|s| json!({
            "seconds": s.seconds, "write_amplification": s.write_amplification,
        })),
        "memory_bytes": {
            "block_cache": o.memory.block_cache, "page_cache": o.memory.page_cache,
            "pm_resident": o.memory.pm_resident, "rss_anon": o.memory.rss_anon,
        },
        "device_read_bytes": o.device_read_bytes,
        "reopen_seconds": o.reopen_seconds,
        "cpu_seconds": m.cpu_seconds,
        "cpu_seconds_per_million_ops": o.cpu_per_million_ops(),
    })
}

/// Writes all outcomes (and the configuration summary) to `path`.
pub fn write(path: &Path, config: Value, outcomes: &[Outcome], extra: Value) -> Result<(), String> {
    let doc = json!({
        "config": config,
        "results": outcomes.iter().map(outcome_json).collect::<Vec<_>>(),
        "comparison": extra,
    });
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n").map_err(|e| format!("writing {}: {e}", path.display()))
}
