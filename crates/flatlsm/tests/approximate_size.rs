//! `Db::approximate_size` on real trees: half the keys take about half the bytes (within 30%;
//! values are incompressible, so sizes on disk stay near the bytes written),
//! with one large SST (straddled by the bound, measured by its index) or many small ones,
//! value-log bytes are counted with the files that reference them, and empty or missed ranges
//! are 0.

mod common;

use flatlsm::{Db, Options};

const KEYS: usize = 10_000;

fn key(i: usize) -> String {
    format!("key{i:06}")
}

/// `len` bytes no block compression shrinks much (a linear congruential sequence from `seed`).
fn noise(seed: usize, len: usize) -> Vec<u8> {
    let mut x = seed as u64 * 2 + 1;
    let mut step = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 56) as u8
    };
    (0..len).map(|_| step()).collect()
}

/// `KEYS` keys with `value_len`-byte incompressible values, flushed and compacted into L2.
fn filled(options: Options, value_len: usize) -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options).unwrap();
    for i in 0..KEYS {
        db.put(key(i), noise(i, value_len)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    db.wait_for_background_work().unwrap();
    (dir, db)
}

/// Default options (64 MiB PMTables, 4 KiB blocks) on simulated PM: one SST holds every key.
fn one_big_file() -> Options {
    let mut o = Options::default();
    o.pm_device = Some(flatlsm_core::pm::simulated::SimulatedPmDevice::new());
    o
}

fn assert_about_half(db: &Db, what: &str) -> u64 {
    let all = db.approximate_size::<&str>(..).unwrap();
    let half = db.approximate_size(..key(KEYS / 2)).unwrap();
    let ratio = half as f64 / (all as f64 / 2.0);
    assert!((0.7..=1.3).contains(&ratio), "{what}: {half} of {all}");
    let rest = db.approximate_size(key(KEYS / 2)..).unwrap();
    let sum = (half + rest) as f64 / all as f64;
    assert!(
        (0.9..=1.1).contains(&sum),
        "{what}: halves {half} + {rest} of {all}"
    );
    all
}

#[test]
fn half_the_keys_of_one_large_file_are_about_half_its_size() {
    let (_dir, db) = filled(one_big_file(), 100);
    let all = assert_about_half(&db, "one file");
    assert!(all >= (KEYS * 100) as u64, "{all}");
    assert!(all <= (KEYS * 200) as u64, "{all}");
    assert_eq!(
        db.stats().levels[2].files,
        1,
        "the bound straddles one file"
    );
}

#[test]
fn half_the_keys_of_many_small_files_are_about_half_their_size() {
    let mut o = common::simulated(1);
    o.kv_separation_threshold = usize::MAX;
    let (_dir, db) = filled(o, 100);
    assert_about_half(&db, "many files");
    assert!(db.stats().levels[2].files > 10, "{:?}", db.stats().levels);
}

#[test]
fn values_in_value_logs_are_counted_with_the_files_pointing_at_them() {
    let (_dir, db) = filled(common::simulated(1), 1000);
    let all = assert_about_half(&db, "separated values");
    assert!(all >= (KEYS * 1000) as u64, "value bytes counted: {all}");
}

#[test]
fn empty_and_missed_ranges_are_zero() {
    let (_dir, db) = filled(one_big_file(), 100);
    assert_eq!(db.approximate_size(key(5)..key(5)).unwrap(), 0);
    assert_eq!(db.approximate_size(key(9)..key(5)).unwrap(), 0);
    assert_eq!(db.approximate_size("zzz"..).unwrap(), 0, "after every key");
    assert_eq!(db.approximate_size(.."a").unwrap(), 0, "before every key");
    let one = db.approximate_size(key(10)..=key(10)).unwrap();
    assert!(one <= 8192, "one key: at most a block or two, {one}");
}

#[test]
fn a_closed_database_is_refused() {
    let (_dir, db) = filled(common::simulated(1), 10);
    db.close().unwrap();
    assert!(matches!(
        db.approximate_size::<&str>(..),
        Err(flatlsm::Error::Closed)
    ));
}
