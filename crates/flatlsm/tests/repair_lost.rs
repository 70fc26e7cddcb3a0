//! `flatlsm::repair` and the files it cannot keep whole: a PM Log damaged below its durable end
//! is salvaged to its valid prefix (the original copied to `lost/`), and a copy into `lost/`
//! never replaces an earlier one.
//!
//! Regressions: repair checked only the header of the PM Logs it kept, so a log damaged in its
//! durable part made the repaired database refuse to open ("corruption in …/000007.pmlog at
//! offset 13764: PM log entry crc mismatch"); and the MatrixKV container (a fixed name) copied
//! to `lost/` by a second repair overwrote the first repair's copy.

mod common;

use flatlsm::{repair, Db, Options, Profile};
use std::path::{Path, PathBuf};

fn key(i: u32) -> Vec<u8> {
    format!("k-{i:05}").into_bytes()
}

fn value(i: u32, round: u32) -> Vec<u8> {
    let mut v = format!("value-{i}-{round}-").into_bytes();
    v.resize(if i.is_multiple_of(3) { 150 } else { 20 }, b'x');
    v
}

/// Keys `0..n`: round 0 flushed to SSTs, round 1 left in the PM Log of the mutable PMTable.
fn populate(dir: &Path, opts: &Options, n: u32) {
    let db = Db::open(dir, opts.clone()).unwrap();
    for round in 0..2 {
        for i in 0..n {
            db.put(key(i), value(i, round)).unwrap();
        }
        if round == 0 {
            db.flush().unwrap();
        }
    }
    db.close().unwrap();
}

/// The PM Log of `pm_dir` holding the most bytes, and its `used_size` (header offset 16).
fn fullest_pm_log(pm_dir: &Path) -> (PathBuf, usize) {
    let logs = std::fs::read_dir(pm_dir)
        .unwrap()
        .map(|e| e.unwrap().path());
    let logs = logs.filter(|p| p.extension().is_some_and(|e| e == "pmlog"));
    let used = |p: &PathBuf| {
        let bytes = std::fs::read(p).unwrap();
        u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize
    };
    let (used, log) = logs.map(|p| (used(&p), p)).max().expect("a PM Log");
    (log, used)
}

/// Flips 8 bytes in the middle of the durable part of `log` (`used` bytes); returns the bytes.
fn damage_durable_part(log: &Path, used: usize) -> Vec<u8> {
    let mut bytes = std::fs::read(log).unwrap();
    let at = 64 + (used - 64) / 2;
    bytes[at..at + 8].iter_mut().for_each(|b| *b ^= 0x5a);
    std::fs::write(log, &bytes).unwrap();
    bytes
}

#[test]
fn a_pm_log_damaged_below_its_durable_end_is_salvaged_to_its_valid_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let opts = common::for_profile(dir.path(), Profile::FlatLsm);
    let n = 300;
    populate(dir.path(), &opts, n);
    let (log, used) = fullest_pm_log(&dir.path().join("pmdir"));
    assert!(used > 64 + 1000, "round 1 is in the log ({used} bytes)");
    let damaged = damage_durable_part(&log, used);
    let report = repair(dir.path(), opts.clone()).unwrap();
    let db = Db::open(dir.path(), opts.clone()).unwrap_or_else(|e| panic!("open: {e}\n{report}"));
    let newest = (0..n)
        .map(|i| (i, db.get(key(i)).unwrap()))
        .inspect(|(i, got)| {
            let old_or_new = [Some(value(*i, 0)), Some(value(*i, 1))];
            assert!(old_or_new.contains(got), "key {i}: {got:?}\n{report}");
        })
        .filter(|(i, got)| got.as_ref() == Some(&value(*i, 1)))
        .count();
    assert!(
        newest > 0 && newest < n as usize,
        "{newest} of {n}: {report}"
    );
    db.close().unwrap();
    assert!(!report.is_complete(), "{report}");
    assert!(report.files_lost.iter().any(|(p, _)| *p == log), "{report}");
    let copy = dir.path().join("lost").join(log.file_name().unwrap());
    let copied = std::fs::read(&copy).unwrap() == damaged;
    assert!(copied, "the original is in lost/: {report}");
    // The cut log damaged again: its second copy takes a new name in lost/.
    let used = u64::from_le_bytes(std::fs::read(&log).unwrap()[16..24].try_into().unwrap());
    let damaged_again = damage_durable_part(&log, used as usize);
    let report = repair(dir.path(), opts.clone()).unwrap();
    let first_kept = std::fs::read(&copy).unwrap() == damaged;
    assert!(first_kept, "the first copy is kept: {report}");
    let mut second = copy.into_os_string();
    second.push(".1");
    let copied = std::fs::read(&second).unwrap() == damaged_again;
    assert!(copied, "the second original is in lost/ as .1: {report}");
    Db::open(dir.path(), opts).unwrap_or_else(|e| panic!("open: {e}\n{report}"));
}

/// The first pages of every row the container `region` holds (page size 4 KiB).
fn row_pages(region: &dyn flatlsm::pm::PmRegion) -> Vec<usize> {
    let page_size = 4 << 10;
    (1..region.len() / page_size)
        .map(|p| p * page_size)
        .filter(|&at| region.read(at, 8) == b"FLSMROW2")
        .collect()
}

/// Writes `prefix-0..300` into MatrixKV rows, then damages an entry of every row found.
fn matrixkv_rows_damaged(dir: &Path, opts: &Options, prefix: &str) {
    let db = Db::open(dir, opts.clone()).unwrap();
    for i in 0..300u32 {
        db.put(format!("{prefix}-{i:05}"), value(i, 0)).unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    let pm = opts.pm_device.clone().expect("a simulated PM device");
    let container = pm.open_region("matrix.pmc").unwrap();
    let rows = row_pages(&*container);
    assert!(!rows.is_empty(), "rows were written");
    for at in rows {
        container.write(at + 600, b"garbage!");
    }
}

#[test]
fn a_second_repair_never_overwrites_the_container_the_first_one_copied_to_lost() {
    let dir = tempfile::tempdir().unwrap();
    let opts = common::for_profile(dir.path(), Profile::MatrixKv);
    let lost = dir.path().join("lost");
    matrixkv_rows_damaged(dir.path(), &opts, "a");
    let first = repair(dir.path(), opts.clone()).unwrap();
    assert!(!first.is_complete(), "{first}");
    let first_copy = std::fs::read(lost.join("matrix.pmc")).unwrap();
    matrixkv_rows_damaged(dir.path(), &opts, "b");
    let second = repair(dir.path(), opts.clone()).unwrap();
    assert!(!second.is_complete(), "{second}");
    let kept = std::fs::read(lost.join("matrix.pmc")).unwrap() == first_copy;
    assert!(kept, "the first copy is kept: {second}");
    let second_copy = std::fs::read(lost.join("matrix.pmc.1"));
    let second_copy = second_copy.unwrap_or_else(|e| panic!("{e}: {second}"));
    assert!(second_copy != first_copy, "{second}");
    assert!(second.to_string().contains("matrix.pmc.1"), "{second}");
}
