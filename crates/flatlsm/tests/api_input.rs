//! Bad API input gets a clear error: oversized keys and values, use after close, out-of-range
//! options. Empty keys are allowed (as in RocksDB and LevelDB) and behave like any other key.

use flatlsm::options::{MAX_KEY_SIZE, MAX_VALUE_SIZE};
use flatlsm::{Db, Error, Options, PmModeOption, ReadOptions, WriteBatch, WriteOptions};
use std::path::Path;

fn options(dir: &Path) -> Options {
    let mut o = Options::default();
    o.pm_path = Some(dir.join("pm"));
    o.pm_mode = PmModeOption::Msync;
    o.pmtable_size = 256 << 10;
    o.flush_immutable_num = 1;
    o.max_write_buffer_number = 3;
    o.flush_threads = 1;
    o.block_cache_size = 1 << 20;
    o
}

fn invalid_argument(r: flatlsm::Result<impl std::fmt::Debug>, mentions: &str) {
    match r {
        Err(Error::InvalidArgument(m)) => assert!(m.contains(mentions), "{m:?} lacks {mentions:?}"),
        other => panic!("expected InvalidArgument mentioning {mentions:?}, got {other:?}"),
    }
}

#[test]
fn empty_key_is_an_ordinary_key_in_pm_sst_and_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let w = WriteOptions::default();
    let r = ReadOptions::default();
    let db = Db::open(&path, options(&path)).unwrap();
    db.put_opt(b"", b"empty", &w).unwrap();
    db.put_opt(b"a", b"1", &w).unwrap();
    assert_eq!(db.get_opt(b"", &r).unwrap().as_deref(), Some(&b"empty"[..]));
    db.flush().unwrap();
    assert_eq!(db.get_opt(b"", &r).unwrap().as_deref(), Some(&b"empty"[..]));
    let it = db.iter_opt(&r).unwrap();
    assert!(
        it.valid() && it.key().is_empty(),
        "the empty key sorts first"
    );
    db.compact_range(None, None).unwrap();
    db.close().unwrap();
    drop(db);
    let db = Db::open(&path, options(&path)).unwrap();
    assert_eq!(db.get_opt(b"", &r).unwrap().as_deref(), Some(&b"empty"[..]));
    db.delete_opt(b"", &w).unwrap();
    assert_eq!(db.get_opt(b"", &r).unwrap(), None);
    assert_eq!(db.get_opt(b"a", &r).unwrap().as_deref(), Some(&b"1"[..]));
}

#[test]
fn key_over_the_limit_is_rejected_and_the_limit_itself_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Db::open(&path, options(&path)).unwrap();
    let w = WriteOptions::default();
    let big = vec![b'k'; MAX_KEY_SIZE + 1];
    invalid_argument(db.put_opt(&big, b"v", &w), "key of 65537 bytes");
    invalid_argument(db.delete_opt(&big, &w), "exceeds the limit");
    let mut b = WriteBatch::new();
    b.put(b"ok", b"v").put(&big, b"v");
    invalid_argument(db.write_opt(&b, &w), "key");
    assert_eq!(db.get(b"ok").unwrap(), None, "batch not applied");
    let max = vec![b'k'; MAX_KEY_SIZE];
    db.put_opt(&max, b"v", &w).unwrap();
    db.flush().unwrap();
    assert_eq!(db.get(&max).unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn value_over_the_limit_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let opts = options(&path);
    let limit = opts.max_value_size();
    assert!(limit <= MAX_VALUE_SIZE);
    let db = Db::open(&path, opts).unwrap();
    let w = WriteOptions::default();
    invalid_argument(db.put_opt(b"k", vec![0; limit + 1], &w), "value of");
    db.put_opt(b"k", vec![7; limit - 100], &w).unwrap();
    assert_eq!(db.get(b"k").unwrap().map(|v| v.len()), Some(limit - 100));
}

#[test]
fn every_operation_after_close_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Db::open(&path, options(&path)).unwrap();
    let w = WriteOptions::default();
    let r = ReadOptions::default();
    db.put_opt(b"k", b"v", &w).unwrap();
    db.close().unwrap();
    db.close().unwrap(); // idempotent
    let closed = |what: &str, e: Option<Error>| {
        assert!(
            matches!(e, Some(Error::Closed)),
            "{what} after close: {e:?}"
        );
    };
    closed("put", db.put_opt(b"k", b"v", &w).err());
    closed("delete", db.delete_opt(b"k", &w).err());
    closed("write", db.write_opt(&WriteBatch::new(), &w).err());
    closed("get", db.get_opt(b"k", &r).err());
    closed("iter", db.iter_opt(&r).err());
    closed("range", db.range_opt::<&[u8]>(.., &r).err());
    closed("flush", db.flush().err());
    closed("compact_range", db.compact_range(None, None).err());
    closed(
        "insert_if_absent",
        db.put_if_opt(b"n", b"v", false, &w).err(),
    );
    closed(
        "update_if_present",
        db.put_if_opt(b"k", b"v", true, &w).err(),
    );
    closed(
        "wait_for_background_work",
        db.wait_for_background_work().err(),
    );
    drop(db);
    let db = Db::open(&path, options(&path)).unwrap();
    assert_eq!(db.get_opt(b"k", &r).unwrap().as_deref(), Some(&b"v"[..]));
}

/// Changes one option to a bad value.
type SetOption = Box<dyn Fn(&mut Options)>;

#[test]
fn out_of_range_options_are_rejected_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let cases: Vec<(&str, SetOption)> = vec![
        ("pmtable_size", Box::new(|o| o.pmtable_size = 0)),
        ("pmtable_size", Box::new(|o| o.pmtable_size = usize::MAX)),
        (
            "flush_immutable_num",
            Box::new(|o| o.flush_immutable_num = 0),
        ),
        (
            "max_write_buffer_number",
            Box::new(|o| o.max_write_buffer_number = o.flush_immutable_num),
        ),
        ("flush_threads", Box::new(|o| o.flush_threads = 0)),
        ("pmtable_gc_ratio", Box::new(|o| o.pmtable_gc_ratio = 0.5)),
        (
            "pmtable_gc_ratio",
            Box::new(|o| o.pmtable_gc_ratio = f64::NAN),
        ),
        (
            "vlog_gc_garbage_ratio",
            Box::new(|o| o.vlog_gc_garbage_ratio = 1.5),
        ),
        (
            "vlog_gc_garbage_ratio",
            Box::new(|o| o.vlog_gc_garbage_ratio = f64::NAN),
        ),
        (
            "vlog_gc_total_garbage_ratio",
            Box::new(|o| o.vlog_gc_total_garbage_ratio = -0.5),
        ),
        (
            "vlog_gc_quiet_garbage_ratio",
            Box::new(|o| o.vlog_gc_quiet_garbage_ratio = 1.5),
        ),
        (
            "vlog_gc_slowdown_garbage_ratio",
            Box::new(|o| o.vlog_gc_slowdown_garbage_ratio = -1.0),
        ),
        ("block_size", Box::new(|o| o.block_size = 16)),
        ("block_size", Box::new(|o| o.target_file_size = 100)),
        ("l1_capacity", Box::new(|o| o.l1_capacity = 0)),
        ("l1_data_ratio", Box::new(|o| o.l1_data_ratio = 0.0)),
        ("l1_data_ratio", Box::new(|o| o.l1_data_ratio = 1.5)),
        ("l1_data_ratio", Box::new(|o| o.l1_data_ratio = f64::NAN)),
        (
            "pm_persist_interval_ms",
            Box::new(|o| o.pm_persist_interval_ms = 0),
        ),
        (
            "bloom_bits_per_key",
            Box::new(|o| o.bloom_bits_per_key = usize::MAX),
        ),
        ("background_nice", Box::new(|o| o.background_nice = -1)),
        ("background_nice", Box::new(|o| o.background_nice = 20)),
    ];
    for (name, set) in cases {
        let mut o = options(&path);
        set(&mut o);
        invalid_argument(Db::open(&path, o).map(drop), name);
    }
    assert!(
        !path.exists(),
        "a rejected open must not create the database"
    );
}

/// Regression: `pmtable_gc_ratio = NaN` passed validation (`NaN <= 1.0` is false), making the
/// PMTable GC trigger meaningless.
#[test]
fn nan_pmtable_gc_ratio_is_rejected() {
    let o = {
        let mut o = Options::default();
        o.pmtable_gc_ratio = f64::NAN;
        o
    };
    invalid_argument(o.validate(), "pmtable_gc_ratio");
}

/// Regression: `pmtable_size = usize::MAX` passed validation and failed later as an I/O error
/// while allocating the PM region.
#[test]
fn huge_pmtable_size_is_invalid_argument_not_an_io_error() {
    let o = {
        let mut o = Options::default();
        o.pmtable_size = usize::MAX;
        o
    };
    invalid_argument(o.validate(), "pmtable_size");
}

/// Regression: an unbounded `bloom_bits_per_key` made every flush allocate
/// `keys * bits_per_key` bits (overflowing for large values).
#[test]
fn huge_bloom_bits_per_key_is_rejected() {
    let o = {
        let mut o = Options::default();
        o.bloom_bits_per_key = 1 << 40;
        o
    };
    invalid_argument(o.validate(), "bloom_bits_per_key");
}

/// Regression (issue 9, item 8): `flush_immutable_num = usize::MAX` overflowed inside
/// `Options::validate` (a panic with overflow checks, accepted without them), and
/// `pm_write_latency_ns = u64::MAX` made open spin for centuries. Every numeric option at the
/// extremes of its type is now refused with a message naming the option, its value and the
/// accepted range, or accepted because every such value is meaningful.
#[test]
fn options_with_huge_numbers_are_refused_without_panic() {
    let refused: Vec<(&str, &str, SetOption)> = vec![
        (
            "pm_write_latency_ns",
            "18446744073709551615",
            Box::new(|o| o.pm_write_latency_ns = u64::MAX),
        ),
        (
            "pm_persist_interval_ms",
            "18446744073709551615",
            Box::new(|o| o.pm_persist_interval_ms = u64::MAX),
        ),
        (
            "pmtable_size",
            "18446744073709551615",
            Box::new(|o| o.pmtable_size = usize::MAX),
        ),
        (
            "flush_immutable_num",
            "18446744073709551615",
            Box::new(|o| o.flush_immutable_num = usize::MAX),
        ),
        (
            "max_write_buffer_number",
            "18446744073709551615",
            Box::new(|o| o.max_write_buffer_number = usize::MAX),
        ),
        (
            "flush_threads",
            "18446744073709551615",
            Box::new(|o| o.flush_threads = usize::MAX),
        ),
        (
            "pmtable_gc_ratio",
            "-inf",
            Box::new(|o| o.pmtable_gc_ratio = f64::NEG_INFINITY),
        ),
        ("l1_capacity", "= 0", Box::new(|o| o.l1_capacity = 0)),
        (
            "target_file_size",
            "= 0",
            Box::new(|o| o.target_file_size = 0),
        ),
        (
            "block_size",
            "18446744073709551615",
            Box::new(|o| o.block_size = usize::MAX),
        ),
        (
            "bloom_bits_per_key",
            "18446744073709551615",
            Box::new(|o| o.bloom_bits_per_key = usize::MAX),
        ),
        (
            "vlog_gc_garbage_ratio",
            "inf",
            Box::new(|o| o.vlog_gc_garbage_ratio = f64::INFINITY),
        ),
        (
            "vlog_gc_garbage_ratio",
            "-1",
            Box::new(|o| o.vlog_gc_garbage_ratio = -1.0),
        ),
    ];
    for (name, value, set) in refused {
        let mut o = Options::default();
        set(&mut o);
        match o.validate() {
            Err(Error::InvalidArgument(m)) => assert!(
                m.contains(name) && m.contains(value) && m.contains("accepted range"),
                "{m:?} should name {name}, its value {value} and the accepted range"
            ),
            other => panic!("{name} = {value}: expected InvalidArgument, got {other:?}"),
        }
    }
    let accepted: Vec<SetOption> = vec![
        Box::new(|o| o.l1_capacity = u64::MAX),
        Box::new(|o| o.target_file_size = u64::MAX),
        Box::new(|o| o.kv_separation_threshold = usize::MAX),
        Box::new(|o| o.block_cache_size = usize::MAX),
        Box::new(|o| o.pmtable_gc_ratio = f64::INFINITY),
        Box::new(|o| o.pm_write_latency_ns = flatlsm::options::MAX_PM_WRITE_LATENCY_NS),
        Box::new(|o| {
            o.max_write_buffer_number = flatlsm::options::MAX_WRITE_BUFFER_NUMBER;
            o.flush_immutable_num = o.max_write_buffer_number - 1;
        }),
    ];
    for set in accepted {
        let mut o = Options::default();
        set(&mut o);
        o.validate().unwrap();
    }
}

/// The open that spun forever now fails at once, before it creates anything.
#[test]
fn open_with_unbounded_pm_write_latency_fails_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut o = options(&path);
    o.pm_mode = PmModeOption::Emulated;
    o.pm_write_latency_ns = u64::MAX;
    invalid_argument(Db::open(&path, o).map(drop), "pm_write_latency_ns");
    assert!(!path.exists());
}

/// Options whose every value is accepted work end to end at both ends of their type.
#[test]
fn options_accepting_any_value_work_at_both_ends() {
    let w = WriteOptions::default();
    let ends: [fn(&mut Options); 2] = [
        |o| {
            o.l1_capacity = u64::MAX;
            o.target_file_size = u64::MAX;
            o.kv_separation_threshold = usize::MAX;
            o.block_cache_size = usize::MAX;
            o.pmtable_gc_ratio = f64::INFINITY;
        },
        |o| {
            o.kv_separation_threshold = 0;
            o.block_cache_size = 0;
        },
    ];
    for set in ends {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let mut o = options(&path);
        set(&mut o);
        let db = Db::open(&path, o).unwrap();
        for i in 0..200u32 {
            db.put_opt(i.to_be_bytes(), vec![i as u8; i as usize % 3 * 350], &w)
                .unwrap();
        }
        db.compact_range(None, None).unwrap();
        for i in [0u32, 1, 2, 199] {
            let got = db.get(i.to_be_bytes()).unwrap();
            assert_eq!(got, Some(vec![i as u8; i as usize % 3 * 350]));
        }
    }
}

/// The slowdown options: the trigger lies between the flush trigger and the PMTable budget
/// (the budget itself turns the slowdown off), the rate within its bounds; `None` derives both.
#[test]
fn slowdown_options_are_validated_naming_the_range() {
    use flatlsm::options::{MAX_DELAYED_WRITE_RATE, MIN_DELAYED_WRITE_RATE};
    let refused: Vec<(&str, &str, SetOption)> = vec![
        (
            "slowdown_immutable_num",
            "accepted range 2..=6",
            Box::new(|o| o.slowdown_immutable_num = Some(1)),
        ),
        (
            "slowdown_immutable_num",
            "18446744073709551615",
            Box::new(|o| o.slowdown_immutable_num = Some(usize::MAX)),
        ),
        (
            "delayed_write_rate",
            "= 0",
            Box::new(|o| o.delayed_write_rate = Some(0)),
        ),
        (
            "delayed_write_rate",
            "18446744073709551615",
            Box::new(|o| o.delayed_write_rate = Some(u64::MAX)),
        ),
    ];
    for (name, detail, set) in refused {
        let mut o = Options::default();
        set(&mut o);
        invalid_argument(o.validate(), name);
        invalid_argument(o.validate(), detail);
    }
    let accepted: Vec<SetOption> = vec![
        Box::new(|o| o.slowdown_immutable_num = Some(o.flush_immutable_num)),
        Box::new(|o| o.slowdown_immutable_num = Some(o.max_write_buffer_number)),
        Box::new(|o| o.delayed_write_rate = Some(MIN_DELAYED_WRITE_RATE)),
        Box::new(|o| o.delayed_write_rate = Some(MAX_DELAYED_WRITE_RATE)),
    ];
    for set in accepted {
        let mut o = Options::default();
        set(&mut o);
        o.validate().unwrap();
    }
    // Default: as soon as more tables wait than one flush takes, below the stop.
    let d = Options::default();
    assert_eq!(d.slowdown_trigger(), d.flush_immutable_num + 1);
    let tight = {
        let mut o = Options::default();
        o.flush_immutable_num = 4;
        o.max_write_buffer_number = 5;
        o
    };
    assert_eq!(tight.slowdown_trigger(), 4);
}
