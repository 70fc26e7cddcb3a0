//! Bad API input gets a clear error: oversized keys and values, use after close, out-of-range
//! options. Empty keys are allowed (as in RocksDB and LevelDB) and behave like any other key.

use flatlsm::options::{MAX_KEY_SIZE, MAX_VALUE_SIZE};
use flatlsm::{Db, Error, Options, PmModeOption, ReadOptions, WriteBatch, WriteOptions};
use std::path::Path;

fn options(dir: &Path) -> Options {
    Options {
        pm_path: Some(dir.join("pm")),
        pm_mode: PmModeOption::Msync,
        pmtable_size: 256 << 10,
        flush_immutable_num: 1,
        max_write_buffer_number: 3,
        flush_threads: 1,
        block_cache_size: 1 << 20,
        ..Options::default()
    }
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
    db.put(&w, b"", b"empty").unwrap();
    db.put(&w, b"a", b"1").unwrap();
    assert_eq!(db.get(&r, b"").unwrap().as_deref(), Some(&b"empty"[..]));
    db.flush().unwrap();
    assert_eq!(db.get(&r, b"").unwrap().as_deref(), Some(&b"empty"[..]));
    let it = db.iter(&r).unwrap();
    assert!(
        it.valid() && it.key().is_empty(),
        "the empty key sorts first"
    );
    db.compact_range(None, None).unwrap();
    db.close().unwrap();
    drop(db);
    let db = Db::open(&path, options(&path)).unwrap();
    assert_eq!(db.get(&r, b"").unwrap().as_deref(), Some(&b"empty"[..]));
    db.delete(&w, b"").unwrap();
    assert_eq!(db.get(&r, b"").unwrap(), None);
    assert_eq!(db.get(&r, b"a").unwrap().as_deref(), Some(&b"1"[..]));
}

#[test]
fn key_over_the_limit_is_rejected_and_the_limit_itself_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Db::open(&path, options(&path)).unwrap();
    let w = WriteOptions::default();
    let big = vec![b'k'; MAX_KEY_SIZE + 1];
    invalid_argument(db.put(&w, &big, b"v"), "key of 65537 bytes");
    invalid_argument(db.delete(&w, &big), "exceeds the limit");
    let mut b = WriteBatch::new();
    b.put(b"ok", b"v").put(&big, b"v");
    invalid_argument(db.write(&w, &b), "key");
    assert_eq!(
        db.get(&ReadOptions::default(), b"ok").unwrap(),
        None,
        "batch not applied"
    );
    let max = vec![b'k'; MAX_KEY_SIZE];
    db.put(&w, &max, b"v").unwrap();
    db.flush().unwrap();
    assert_eq!(
        db.get(&ReadOptions::default(), &max).unwrap().as_deref(),
        Some(&b"v"[..])
    );
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
    invalid_argument(db.put(&w, b"k", &vec![0; limit + 1]), "value of");
    db.put(&w, b"k", &vec![7; limit - 100]).unwrap();
    assert_eq!(
        db.get(&ReadOptions::default(), b"k")
            .unwrap()
            .map(|v| v.len()),
        Some(limit - 100)
    );
}

#[test]
fn every_operation_after_close_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Db::open(&path, options(&path)).unwrap();
    let w = WriteOptions::default();
    let r = ReadOptions::default();
    db.put(&w, b"k", b"v").unwrap();
    db.close().unwrap();
    db.close().unwrap(); // idempotent
    let closed = |what: &str, e: Option<Error>| {
        assert!(
            matches!(e, Some(Error::Closed)),
            "{what} after close: {e:?}"
        );
    };
    closed("put", db.put(&w, b"k", b"v").err());
    closed("delete", db.delete(&w, b"k").err());
    closed("write", db.write(&w, &WriteBatch::new()).err());
    closed("get", db.get(&r, b"k").err());
    closed("iter", db.iter(&r).err());
    closed("range", db.range(&r, None, None).err());
    closed("flush", db.flush().err());
    closed("compact_range", db.compact_range(None, None).err());
    closed(
        "insert_if_absent",
        db.insert_if_absent(&w, b"n", b"v").err(),
    );
    closed(
        "update_if_present",
        db.update_if_present(&w, b"k", b"v").err(),
    );
    closed(
        "wait_for_background_work",
        db.wait_for_background_work().err(),
    );
    drop(db);
    let db = Db::open(&path, options(&path)).unwrap();
    assert_eq!(db.get(&r, b"k").unwrap().as_deref(), Some(&b"v"[..]));
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
        ("block_size", Box::new(|o| o.block_size = 16)),
        ("block_size", Box::new(|o| o.target_file_size = 100)),
        ("l1_capacity", Box::new(|o| o.l1_capacity = 0)),
        (
            "pm_persist_interval_ms",
            Box::new(|o| o.pm_persist_interval_ms = 0),
        ),
        (
            "bloom_bits_per_key",
            Box::new(|o| o.bloom_bits_per_key = usize::MAX),
        ),
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
    let o = Options {
        pmtable_gc_ratio: f64::NAN,
        ..Options::default()
    };
    invalid_argument(o.validate(), "pmtable_gc_ratio");
}

/// Regression: `pmtable_size = usize::MAX` passed validation and failed later as an I/O error
/// while allocating the PM region.
#[test]
fn huge_pmtable_size_is_invalid_argument_not_an_io_error() {
    let o = Options {
        pmtable_size: usize::MAX,
        ..Options::default()
    };
    invalid_argument(o.validate(), "pmtable_size");
}

/// Regression: an unbounded `bloom_bits_per_key` made every flush allocate
/// `keys * bits_per_key` bits (overflowing for large values).
#[test]
fn huge_bloom_bits_per_key_is_rejected() {
    let o = Options {
        bloom_bits_per_key: 1 << 40,
        ..Options::default()
    };
    invalid_argument(o.validate(), "bloom_bits_per_key");
}
