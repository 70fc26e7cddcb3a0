//! The `leveled` profile through the public API: write-ahead logs replayed at reopen, levels
//! beyond L2 filled by leveled compaction, the profile recorded and enforced, damaged or missing
//! logs refused.

mod common;

use flatlsm::{Db, Error, Options, Profile};
use std::path::Path;

fn put_range(db: &Db, range: std::ops::Range<u32>, tag: &str) {
    for i in range {
        let (k, v) = (
            format!("key{i:06}"),
            format!("{tag}-{i}-{}", "v".repeat(i as usize % 90)),
        );
        db.put(k.as_bytes(), v.as_bytes()).unwrap();
    }
}

fn check_range(db: &Db, range: std::ops::Range<u32>, tag: &str) {
    for i in range {
        let k = format!("key{i:06}");
        let want = format!("{tag}-{i}-{}", "v".repeat(i as usize % 90));
        let got = db.get(k.as_bytes()).unwrap();
        assert_eq!(got.as_deref(), Some(want.as_bytes()), "{k}");
    }
}

/// The names in `dir` ending with `suffix`, sorted.
fn files_ending(dir: &Path, suffix: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(suffix))
        .collect();
    names.sort();
    names
}

fn wal_files(dir: &Path) -> Vec<String> {
    files_ending(dir, ".log")
}

/// Unflushed writes live only in the memtable and its log: a reopen replays them.
#[test]
fn unflushed_writes_are_replayed_from_the_write_ahead_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = common::leveled(1, false);
    opts.background_work = false;
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    put_range(&db, 0..300, "a");
    assert_eq!(db.stats().flushes, 0);
    assert!(!wal_files(dir.path()).is_empty());
    drop(db);
    let db = Db::open(dir.path(), opts).unwrap();
    check_range(&db, 0..300, "a");
    db.flush().unwrap();
    db.wait_for_background_work().unwrap();
    assert_eq!(
        wal_files(dir.path()).len(),
        1,
        "flushed logs must be deleted"
    );
}

/// Enough writes fill level 0 past its trigger and levels past their targets: data reaches
/// level 3 and deeper, every key reads back, and reads survive a reopen.
#[test]
fn leveled_compaction_fills_levels_beyond_two() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), common::leveled(2, false)).unwrap();
    put_range(&db, 0..20_000, "b");
    db.wait_for_background_work().unwrap();
    let st = db.stats();
    assert_eq!(st.profile, Profile::Leveled);
    assert_eq!(st.levels.len(), 7, "{st}");
    assert_eq!(st.levels[3].name, "L3");
    assert!(
        st.levels[3..].iter().any(|l| l.files > 0),
        "nothing below L2: {st}"
    );
    assert!(st.levels[0].files < 20, "level 0 not compacted: {st}");
    check_range(&db, 0..20_000, "b");
    drop(db);
    let db = Db::open(dir.path(), common::leveled(2, false)).unwrap();
    check_range(&db, 19_000..20_000, "b");
}

/// A database keeps the profile it was created with: opening it as another is refused, in both
/// directions, and modifies nothing.
#[test]
fn a_leveled_database_is_not_opened_as_flatlsm_nor_the_reverse() {
    let dir = tempfile::tempdir().unwrap();
    let leveled = dir.path().join("leveled");
    drop(Db::open(&leveled, common::leveled(1, false)).unwrap());
    let err = Db::open(&leveled, common::tiny_options(1)).err().unwrap();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert!(
        err.to_string().contains("created with profile 'leveled'"),
        "{err}"
    );
    let flat = dir.path().join("flat");
    drop(Db::open(&flat, common::tiny_options(1)).unwrap());
    let err = Db::open(&flat, common::leveled(1, false)).err().unwrap();
    assert!(
        err.to_string().contains("created with profile 'flatlsm'"),
        "{err}"
    );
    assert_eq!(
        flatlsm::profile_of(&leveled).unwrap(),
        Some(Profile::Leveled)
    );
}

/// A log the manifest names must be there: its writes would be lost.
#[test]
fn a_missing_write_ahead_log_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = common::leveled(1, false);
    opts.background_work = false;
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    put_range(&db, 0..50, "c");
    drop(db);
    for name in wal_files(dir.path()) {
        std::fs::remove_file(dir.path().join(name)).unwrap();
    }
    let err = Db::open(dir.path(), opts).err().unwrap();
    assert!(err.is_corruption(), "{err}");
    assert!(
        err.to_string().contains(".log") && err.to_string().contains("missing"),
        "{err}"
    );
}

/// Damage in the middle of a log is refused with the file and offset, never skipped.
#[test]
fn a_damaged_write_ahead_log_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = common::leveled(1, false);
    opts.background_work = false;
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    put_range(&db, 0..50, "d");
    drop(db);
    let name = wal_files(dir.path()).pop().unwrap();
    let path = dir.path().join(&name);
    let mut data = std::fs::read(&path).unwrap();
    data[40] ^= 0xff;
    std::fs::write(&path, &data).unwrap();
    let err = Db::open(dir.path(), opts).err().unwrap();
    assert!(err.is_corruption(), "{err}");
    assert!(err.to_string().contains(&name), "{err}");
}

/// Regression: a crash while a leveled database was being created left its first write-ahead
/// log beside the first manifest, before CURRENT existed; the next open called the directory
/// "not a FlatLSM database" instead of starting the creation over.
#[test]
fn regression_a_log_left_by_a_crashed_creation_does_not_block_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("000002.log"), b"FLSMWAL").unwrap();
    std::fs::write(dir.path().join("MANIFEST-000001"), b"").unwrap();
    let db = Db::open(dir.path(), common::leveled(1, false)).unwrap();
    db.put(b"k", b"v").unwrap();
    drop(db);
    let db = Db::open(dir.path(), common::leveled(1, false)).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

/// `Options::for_profile` gives the leveled defaults: no value separation, RocksDB's triggers.
#[test]
fn leveled_defaults_follow_rocksdb() {
    let o = Options::for_profile(Profile::Leveled);
    assert_eq!(o.profile, Profile::Leveled);
    assert_eq!(o.kv_separation_threshold, usize::MAX);
    let l = o.leveled;
    assert_eq!(
        (
            l.level0_file_num_compaction_trigger,
            l.level0_slowdown_writes_trigger,
            l.level0_stop_writes_trigger
        ),
        (4, 20, 36)
    );
    assert_eq!(
        (l.max_bytes_for_level_base, l.max_bytes_for_level_multiplier),
        (256 << 20, 10.0)
    );
    let mut bad = o.clone();
    bad.leveled.level0_stop_writes_trigger = 3;
    assert!(bad
        .validate()
        .unwrap_err()
        .to_string()
        .contains("level0_stop_writes_trigger"));
}

/// The placement study's configurations: memtables and block cache in PM used as memory.
/// Reads and writes work, the write-ahead logs keep the data across a reopen, and close leaves
/// nothing in the PM directory.
#[test]
fn memtable_and_block_cache_placed_in_pm_work_and_leave_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = common::leveled(1, false);
    opts.pm_path = Some(dir.path().join("pm"));
    opts.pm_mode = flatlsm::PmModeOption::Emulated;
    opts.memtable_placement = flatlsm::Placement::Pm;
    opts.block_cache_placement = flatlsm::Placement::Pm;
    let db = Db::open(dir.path().join("db"), opts.clone()).unwrap();
    put_range(&db, 0..3000, "p");
    assert!(std::fs::read_dir(dir.path().join("pm")).unwrap().count() > 1);
    check_range(&db, 0..3000, "p");
    check_range(&db, 0..3000, "p");
    db.close().unwrap();
    drop(db);
    let left: Vec<_> = std::fs::read_dir(dir.path().join("pm"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left in PM: {left:?}");
    let db = Db::open(dir.path().join("db"), opts).unwrap();
    check_range(&db, 0..3000, "p");
}

/// `wal_dir` moves the write-ahead logs (RocksDB's option): they are written, replayed and
/// deleted there, never in the database directory, and `check` finds them there.
#[test]
fn write_ahead_logs_live_in_wal_dir() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, wal_dir) = (dir.path().join("db"), dir.path().join("wal"));
    let mut opts = common::leveled(1, false);
    opts.wal_dir = Some(wal_dir.clone());
    opts.background_work = false;
    let db = Db::open(&db_dir, opts.clone()).unwrap();
    put_range(&db, 0..300, "w");
    drop(db);
    assert!(wal_files(&db_dir).is_empty());
    assert!(!wal_files(&wal_dir).is_empty());
    let report = flatlsm::inspect::check_database_with_wal(&db_dir, &db_dir.join("pm"), &wal_dir);
    assert!(report.unwrap().is_ok());
    let db = Db::open(&db_dir, opts).unwrap();
    check_range(&db, 0..300, "w");
    db.flush().unwrap();
    assert_eq!(
        wal_files(&wal_dir).len(),
        1,
        "flushed logs must be deleted from wal_dir"
    );
}

/// Regression: with the write-ahead logs in their own directory, a purge listed that directory
/// *after* collecting the live buffer numbers, so the log of a memtable sealed in between was
/// deleted as stale; the reopen then refused the database ("the manifest names this
/// write-ahead log but it is missing"). Found by the matrixkv profile, whose logs live in PM.
#[test]
fn a_purge_never_deletes_the_log_of_a_memtable_sealed_while_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = common::leveled(1, false);
    o.wal_dir = Some(dir.path().join("wal"));
    let db = Db::open(dir.path().join("db"), o.clone()).unwrap();
    for round in 0..3u32 {
        for i in 0..4000u32 {
            let key = format!("k{:05}", (i * 7919) % 4000);
            let value = format!("{round}-{}", "v".repeat(100));
            db.put(key.as_bytes(), value.as_bytes()).unwrap();
        }
        db.wait_for_background_work().unwrap();
    }
    drop(db);
    let db = Db::open(dir.path().join("db"), o).unwrap();
    let got = db.get(b"k00042").unwrap().unwrap();
    assert!(got.starts_with(b"2-"));
}

fn ssts_in(dir: &Path) -> Vec<String> {
    files_ending(dir, ".sst")
}

/// `leveled` without background threads, level 0 in `pm_dir` (msync PM).
fn level0_in_pm(pm_dir: &Path) -> flatlsm::Options {
    let mut opts = common::leveled(1, false);
    opts.background_work = false;
    opts.leveled.level0_in_pm = true;
    opts.pm_path = Some(pm_dir.to_path_buf());
    opts.pm_mode = flatlsm::PmModeOption::Msync;
    opts
}

/// `level0_in_pm` (RocksDB-L0-NVM): flushes write level-0 files into the PM directory,
/// compactions write L1 and above into the database directory and delete the PM copies; each
/// file's directory is in the manifest, so the database reopens without the option and `check`
/// finds every file where it is.
#[test]
fn level0_files_live_in_the_pm_directory_and_compactions_move_them_to_ssd() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, pm_dir) = (dir.path().join("db"), dir.path().join("pm"));
    let opts = level0_in_pm(&pm_dir);
    let db = Db::open(&db_dir, opts.clone()).unwrap();
    put_range(&db, 0..400, "a");
    db.flush().unwrap();
    put_range(&db, 200..600, "b");
    db.flush().unwrap();
    assert_eq!(ssts_in(&pm_dir).len(), 2, "one level-0 file per flush");
    assert!(ssts_in(&db_dir).is_empty());
    let stats = db.stats();
    assert!(
        stats.flush_pm_bytes > 0 && stats.flush_sst_bytes == 0,
        "{stats:?}"
    );
    assert_eq!(
        stats.ssd_bytes_written(),
        stats.manifest_bytes,
        "flushes wrote to PM only"
    );
    drop(db);
    let report = flatlsm::inspect::check_database(&db_dir, &pm_dir).unwrap();
    assert!(report.is_ok() && report.files_checked >= 3, "{report:?}");
    let mut without = opts.clone();
    without.leveled.level0_in_pm = false;
    let db = Db::open(&db_dir, without).unwrap();
    check_range(&db, 0..200, "a");
    check_range(&db, 200..600, "b");
    db.compact_range(None, None).unwrap();
    assert!(
        ssts_in(&pm_dir).is_empty(),
        "compacted level-0 files are deleted"
    );
    assert!(!ssts_in(&db_dir).is_empty());
    check_range(&db, 200..600, "b");
    drop(db);
    let report = flatlsm::inspect::check_database(&db_dir, &pm_dir).unwrap();
    assert!(report.is_ok(), "{report:?}");
}

/// A level-0 file missing from the PM directory is refused at open, naming the file there.
#[test]
fn a_missing_level0_file_in_the_pm_directory_is_refused_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, pm_dir) = (dir.path().join("db"), dir.path().join("pm"));
    let opts = level0_in_pm(&pm_dir);
    let db = Db::open(&db_dir, opts.clone()).unwrap();
    put_range(&db, 0..100, "a");
    db.flush().unwrap();
    drop(db);
    let name = ssts_in(&pm_dir).pop().unwrap();
    std::fs::remove_file(pm_dir.join(&name)).unwrap();
    let err = Db::open(&db_dir, opts)
        .err()
        .expect("a missing file is refused");
    let text = err.to_string();
    assert!(
        text.contains(&format!("pm/{name}")) && text.contains("missing"),
        "{text}"
    );
}
