//! Named properties (RocksDB's `GetProperty` / `GetIntProperty`): the common figures of
//! [`Stats`] under stable names with the `flatlsm.` prefix, for tools that ask by name.
//!
//! Every name maps onto a `Stats` field or a sum of them, so a property and `stats()` taken at
//! the same moment agree.

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
    ("flatlsm.num-compactions", |s| s.compactions),
    ("flatlsm.bytes-written-to-ssd", |s| s.ssd_bytes_written()),
];

/// The property names `Db::property` answers (`<N>`: a level number, from 0).
pub const PROPERTY_NAMES: &[&str] = &[
    "flatlsm.stats",
    "flatlsm.num-files-at-level<N>",
    "flatlsm.num-snapshots",
    "flatlsm.num-range-deletions",
    "flatlsm.num-immutable-mem-table",
    "flatlsm.cur-size-all-mem-tables",
    "flatlsm.total-sst-files-size",
    "flatlsm.num-files",
    "flatlsm.live-blob-file-size",
    "flatlsm.total-blob-file-size",
    "flatlsm.is-write-stopped",
    "flatlsm.actual-delayed-write-rate",
    "flatlsm.background-errors",
    "flatlsm.latest-sequence-number",
    "flatlsm.num-flushes",
    "flatlsm.num-compactions",
    "flatlsm.bytes-written-to-ssd",
];

/// The integer property `name` of `stats`, if it is one.
pub(super) fn int_property(stats: &Stats, name: &str) -> Option<u64> {
    if let Some(level) = name.strip_prefix("flatlsm.num-files-at-level") {
        let l: usize = level.parse().ok()?;
        return Some(stats.levels.get(l).map_or(0, |l| l.files as u64));
    }
    let (_, read) = INT_PROPERTIES.iter().find(|(n, _)| *n == name)?;
    Some(read(stats))
}

/// The property `name` as text: `flatlsm.stats` is the whole report, the others their number.
pub(super) fn property(stats: &Stats, name: &str) -> Option<String> {
    match name {
        "flatlsm.stats" => Some(stats.to_string()),
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
            let name = name.replace("<N>", "0");
            assert!(property(&s, &name).is_some(), "{name}");
        }
        assert_eq!(property(&s, "rocksdb.stats"), None);
        assert_eq!(int_property(&s, "flatlsm.num-files-at-levelx"), None);
        assert_eq!(int_property(&s, "flatlsm.stats"), None);
    }
}
