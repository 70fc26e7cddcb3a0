//! `Options::write_breakdown`: off, the write path reads no clock for its parts and the
//! counters stay 0; on, each design's parts land where its write buffer puts them (no WAL time
//! for FlatLSM or the PM skiplist, whose node writes are its data and its links its index).

use super::Db;
use crate::options::{Options, Profile};
use crate::pm::simulated::SimulatedPmDevice;
use crate::Stats;

/// `writes` puts of 256 B into a fresh database of `profile`, the breakdown `on` or not.
fn stats_after_puts(profile: Profile, on: bool, writes: u32) -> Stats {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        profile,
        pm_device: Some(SimulatedPmDevice::new()),
        write_breakdown: on,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..writes {
        db.put(format!("key{i:08}"), [5u8; 256]).unwrap();
    }
    db.stats()
}

/// The WAL, data and index parts, in that order.
fn parts(s: &Stats) -> [u64; 3] {
    [
        s.write_wal_nanos,
        s.write_mem_data_nanos,
        s.write_mem_index_nanos,
    ]
}

#[test]
fn the_breakdown_is_off_by_default_and_then_counts_nothing() {
    assert!(!Options::default().write_breakdown);
    let s = stats_after_puts(Profile::Leveled, false, 100);
    assert_eq!(parts(&s), [0, 0, 0]);
}

#[test]
fn flatlsm_times_its_pm_log_and_index_but_has_no_wal_time() {
    let [wal, data, index] = parts(&stats_after_puts(Profile::FlatLsm, true, 100));
    assert_eq!(wal, 0);
    assert!(data > 0 && index > 0, "data {data}, index {index}");
}

#[test]
fn leveled_times_its_wal_beside_its_dram_memtable() {
    let [wal, data, index] = parts(&stats_after_puts(Profile::Leveled, true, 100));
    assert!(wal > 0 && data > 0 && index > 0, "{wal} {data} {index}");
}

#[test]
fn the_pm_skiplist_times_its_node_writes_apart_from_its_links() {
    let [wal, data, index] = parts(&stats_after_puts(Profile::NoveLsm, true, 100));
    assert_eq!(wal, 0);
    assert!(data > 0 && index > 0, "data {data}, index {index}");
}
