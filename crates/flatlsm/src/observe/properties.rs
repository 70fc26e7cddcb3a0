//! Named properties (RocksDB's `GetProperty` / `GetIntProperty`): the common figures of
//! [`Stats`] under stable names with the `flatlsm.` prefix, for tools that ask by name.
//!
//! Every name maps onto a `Stats` field or a sum of them, so a property and `stats()` taken at
//! the same moment agree. Latencies are integer microseconds, rounded
//! (`flatlsm.latency-<OP>-<FIGURE>`); `stats()` and the text property `flatlsm.latency` have
//! them with fractions.

use super::latency::LatencySummary;
use super::stats::Stats;

/// How an integer property is read from the report.
type Reader = fn(&Stats) -> u64;

/// The integer properties, by name: RocksDB's names where one exists.
const INT_PROPERTIES: &[(&str, Reader)] = &[
    ("flatlsm.num-snapshots", |s| s.snapshots as u64),
    ("flatlsm.num-range-deletions", |s| s.range_tombstones as u64),
    ("flatlsm.num-immutable-mem-table", |s| {
        s.pmtables.saturating_sub(1) as u64
    }),
    ("flatlsm.cur-size-all-mem-tables", |s| s.pmtable_bytes),
    ("flatlsm.pmtable-index-bytes", |s| s.pmtable_index_bytes),
    ("flatlsm.estimate-num-keys", |s| s.estimated_keys),
    ("flatlsm.total-sst-files-size", |s| {
        s.levels.iter().map(|l| l.bytes).sum()
    }),
    ("flatlsm.num-files", |s| {
        s.levels.iter().map(|l| l.files as u64).sum()
    }),
    ("flatlsm.live-blob-file-size", |s| {
        s.vlogs.iter().map(|v| v.live_bytes).sum()
    }),
    ("flatlsm.total-blob-file-size", |s| {
        s.vlogs.iter().map(|v| v.total_bytes).sum()
    }),
    ("flatlsm.is-write-stopped", |s| s.writes_stopped as u64),
    ("flatlsm.actual-delayed-write-rate", |s| {
        s.delayed_write_rate
    }),
    ("flatlsm.background-errors", |s| {
        s.background_error.is_some() as u64
    }),
    ("flatlsm.latest-sequence-number", |s| s.last_sequence),
    ("flatlsm.num-flushes", |s| s.flushes),
    ("flatlsm.write-stall-nanos", |s| s.write_stall_nanos),
    ("flatlsm.write-wal-nanos", |s| s.write_wal_nanos),
    ("flatlsm.write-mem-data-nanos", |s| s.write_mem_data_nanos),
    ("flatlsm.write-mem-index-nanos", |s| s.write_mem_index_nanos),
    ("flatlsm.num-compactions", |s| s.compactions),
    ("flatlsm.bytes-written-to-ssd", |s| s.ssd_bytes_written()),
    ("flatlsm.block-cache-capacity", |s| s.block_cache.capacity),
    ("flatlsm.block-cache-usage", |s| s.block_cache.usage),
    ("flatlsm.block-cache-hit", |s| s.block_cache.hits),
    ("flatlsm.block-cache-miss", |s| s.block_cache.misses),
    ("flatlsm.block-cache-add", |s| s.block_cache.inserts),
    ("flatlsm.block-cache-evict", |s| s.block_cache.evictions),
    ("flatlsm.value-cache-hit", |s| s.block_cache.value_hits),
    ("flatlsm.value-cache-miss", |s| s.block_cache.value_misses),
    ("flatlsm.value-cache-add", |s| s.block_cache.value_inserts),
    ("flatlsm.bloom-filter-checked", |s| s.bloom.checked),
    ("flatlsm.bloom-filter-useful", |s| s.bloom.useful),
    ("flatlsm.bloom-filter-false-positive", |s| {
        s.bloom.false_positives
    }),
];

/// How a latency figure is read from one operation's summary (`<FIGURE>` of a latency name).
type FigureReader = fn(&LatencySummary) -> f64;

/// The figures of `flatlsm.latency-<OP>-<FIGURE>`.
const LATENCY_FIGURES: &[(&str, FigureReader)] = &[
    ("count", |l| l.count as f64),
    ("mean-micros", |l| l.mean_micros),
    ("p50-micros", |l| l.p50_micros),
    ("p99-micros", |l| l.p99_micros),
    ("p999-micros", |l| l.p999_micros),
    ("max-micros", |l| l.max_micros),
];

/// The property names `Db::property` answers (`<N>`: a level number, from 0; `<OP>`: one of
/// [`LATENCY_OPERATIONS`]).
pub const PROPERTY_NAMES: &[&str] = &[
    "flatlsm.stats",
    "flatlsm.num-files-at-level<N>",
    "flatlsm.num-snapshots",
    "flatlsm.num-range-deletions",
    "flatlsm.num-immutable-mem-table",
    "flatlsm.cur-size-all-mem-tables",
    "flatlsm.pmtable-index-bytes",
    "flatlsm.estimate-num-keys",
    "flatlsm.total-sst-files-size",
    "flatlsm.num-files",
    "flatlsm.live-blob-file-size",
    "flatlsm.total-blob-file-size",
    "flatlsm.is-write-stopped",
    "flatlsm.actual-delayed-write-rate",
    "flatlsm.background-errors",
    "flatlsm.latest-sequence-number",
    "flatlsm.num-flushes",
    "flatlsm.write-stall-nanos",
    "flatlsm.write-wal-nanos",
    "flatlsm.write-mem-data-nanos",
    "flatlsm.write-mem-index-nanos",
    "flatlsm.num-compactions",
    "flatlsm.bytes-written-to-ssd",
    "flatlsm.block-cache-capacity",
    "flatlsm.block-cache-usage",
    "flatlsm.block-cache-hit",
    "flatlsm.block-cache-miss",
    "flatlsm.block-cache-add",
    "flatlsm.block-cache-evict",
    "flatlsm.value-cache-hit",
    "flatlsm.value-cache-miss",
    "flatlsm.value-cache-add",
    "flatlsm.bloom-filter-checked",
    "flatlsm.bloom-filter-useful",
    "flatlsm.bloom-filter-false-positive",
    "flatlsm.latency",
    "flatlsm.latency-<OP>-count",
    "flatlsm.latency-<OP>-mean-micros",
    "flatlsm.latency-<OP>-p50-micros",
    "flatlsm.latency-<OP>-p99-micros",
    "flatlsm.latency-<OP>-p999-micros",
    "flatlsm.latency-<OP>-max-micros",
];

/// The operations `<OP>` of the latency names stands for.
pub const LATENCY_OPERATIONS: &[&str] = &["get", "put", "write", "seek", "next"];

/// The integer property `name` of `stats`, if it is one.
pub(crate) fn int_property(stats: &Stats, name: &str) -> Option<u64> {
    if let Some(level) = name.strip_prefix("flatlsm.num-files-at-level") {
        let l: usize = level.parse().ok()?;
        return Some(stats.levels.get(l).map_or(0, |l| l.files as u64));
    }
    if let Some(rest) = name.strip_prefix("flatlsm.latency-") {
        return latency_property(stats, rest);
    }
    let (_, read) = INT_PROPERTIES.iter().find(|(n, _)| *n == name)?;
    Some(read(stats))
}

/// `<OP>-<FIGURE>` of the latency report, rounded to an integer.
fn latency_property(stats: &Stats, op_figure: &str) -> Option<u64> {
    let (op, figure) = op_figure.split_once('-')?;
    let (_, summary) = stats
        .latency
        .by_name()
        .into_iter()
        .find(|(n, _)| *n == op)?;
    let (_, read) = LATENCY_FIGURES.iter().find(|(n, _)| *n == figure)?;
    Some(read(summary).round() as u64)
}

/// The property `name` as text: `flatlsm.stats` is the whole report, the others their number.
pub(crate) fn property(stats: &Stats, name: &str) -> Option<String> {
    match name {
        "flatlsm.stats" => Some(stats.to_string()),
        "flatlsm.latency" => Some(stats.latency.to_string()),
        _ => int_property(stats, name).map(|n| n.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every listed name (with a level for the per-level one) answers; other names do not.
    #[test]
    fn every_listed_name_answers_and_unknown_ones_do_not() {
        let s = Stats::default();
        for name in PROPERTY_NAMES {
            for op in LATENCY_OPERATIONS {
                let name = name.replace("<N>", "0").replace("<OP>", op);
                assert!(property(&s, &name).is_some(), "{name}");
            }
        }
        assert_eq!(property(&s, "flatlsm.latency-get-p42-micros"), None);
        assert_eq!(property(&s, "flatlsm.latency-scan-count"), None);
        assert_eq!(property(&s, "rocksdb.stats"), None);
        assert_eq!(int_property(&s, "flatlsm.num-files-at-levelx"), None);
        assert_eq!(int_property(&s, "flatlsm.stats"), None);
    }

    /// The write breakdown's four parts answer under their names, each its own field.
    #[test]
    fn the_write_breakdown_parts_answer_by_name() {
        let s = Stats {
            write_stall_nanos: 1,
            write_wal_nanos: 2,
            write_mem_data_nanos: 3,
            write_mem_index_nanos: 4,
            ..Stats::default()
        };
        let names = ["stall", "wal", "mem-data", "mem-index"];
        for (i, part) in names.iter().enumerate() {
            let name = format!("flatlsm.write-{part}-nanos");
            assert_eq!(int_property(&s, &name), Some(i as u64 + 1), "{name}");
        }
    }
}
