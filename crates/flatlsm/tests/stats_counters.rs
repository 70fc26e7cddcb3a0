//! The statistics a user reads back: per-operation latency counts equal the calls made, the
//! block cache counts a miss then hits, bloom filters count the absent keys they turned away,
//! and the named properties agree with `stats()`.

mod common;

use flatlsm::{Db, WriteBatch};

fn open() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), common::simulated(1)).unwrap();
    (dir, db)
}

fn key(i: u32) -> String {
    format!("key{i:05}")
}

/// Every even key of `0..n`, flushed to SSTs, with background work settled.
fn flushed(n: u32) -> (tempfile::TempDir, Db) {
    let (dir, db) = open();
    for i in (0..n).step_by(2) {
        db.put(key(i), "value").unwrap();
    }
    db.flush().unwrap();
    db.wait_for_background_work().unwrap();
    (dir, db)
}

#[test]
fn latency_counts_equal_the_calls_of_each_operation() {
    let (_dir, db) = open();
    for i in 0..100 {
        db.put(key(i), "v").unwrap();
    }
    db.delete(key(0)).unwrap();
    assert!(db.insert_if_absent(key(1000), "v").unwrap());
    for _ in 0..5 {
        let mut b = WriteBatch::new();
        b.put("a", "1").put("b", "2");
        db.write(&b).unwrap();
    }
    for i in 0..42 {
        db.get(key(i)).unwrap();
    }
    let yielded = db.iter().unwrap().count();
    let mut it = db.iter().unwrap();
    it.seek(key(50).as_bytes());
    assert_eq!(db.range(key(10)..key(20)).unwrap().rev().count(), 10);
    let l = db.stats().latency;
    let counts = [l.put.count, l.write.count, l.get.count];
    assert_eq!(counts, [102, 5, 42]);
    assert_eq!(yielded, 102, "99 keys + key01000 + a + b");
    assert_eq!(
        l.seek.count, 5,
        "three new iterators, one seek, the back end's seek_to_last"
    );
    assert_eq!(
        l.next.count,
        102 + 10,
        "one step per key yielded, from either end"
    );
    assert!(l.get.p50_micros <= l.get.p99_micros && l.get.p99_micros <= l.get.max_micros);
    assert_eq!(db.property_int("flatlsm.latency-get-count"), Some(42));
    assert_eq!(db.property_int("flatlsm.latency-write-count"), Some(5));
    assert_eq!(db.property("flatlsm.latency").unwrap().lines().count(), 6);
}

#[test]
fn bloom_filters_turn_away_most_absent_keys_and_count_them() {
    let (_dir, db) = flushed(2000);
    let before = db.stats().bloom;
    for i in (1..1998).step_by(2) {
        assert_eq!(db.get(key(i)).unwrap(), None); // between two keys of a table
    }
    let after = db.stats().bloom;
    let checked = after.checked - before.checked;
    let useful = after.useful - before.useful;
    let false_positives = after.false_positives - before.false_positives;
    assert!(
        checked >= 999,
        "each absent key asked at least one filter: {checked}"
    );
    assert_eq!(useful + false_positives, checked, "every key was absent");
    assert!(
        useful * 10 >= checked * 9,
        "{useful} of {checked} turned away"
    );
    assert_eq!(
        db.property_int("flatlsm.bloom-filter-useful"),
        Some(after.useful)
    );
    assert_eq!(
        db.property_int("flatlsm.bloom-filter-false-positive"),
        Some(after.false_positives)
    );
}

#[test]
fn the_block_cache_counts_a_miss_then_hits_for_one_block() {
    let (_dir, db) = flushed(2000);
    let before = db.stats().block_cache;
    assert_eq!(before.capacity, 1 << 20);
    assert_eq!(db.get(key(500)).unwrap().as_deref(), Some(&b"value"[..]));
    let first = db.stats().block_cache;
    assert_eq!(
        first.misses - before.misses,
        1,
        "the block was read from the file"
    );
    assert_eq!(first.inserts - before.inserts, 1);
    for _ in 0..3 {
        db.get(key(500)).unwrap();
    }
    let after = db.stats().block_cache;
    assert_eq!((after.hits - first.hits, after.misses), (3, first.misses));
    assert!(after.usage > 0 && after.usage <= after.capacity);
    assert_eq!(db.property_int("flatlsm.block-cache-hit"), Some(after.hits));
    assert_eq!(
        db.property_int("flatlsm.block-cache-miss"),
        Some(after.misses)
    );
    assert!(db
        .property("flatlsm.stats")
        .unwrap()
        .contains("block cache: "));
}

/// A hot separated value: the first get reads it from its value log and keeps it in the block
/// cache, later gets find it there; a scan neither fills nor counts the value cache; with
/// `value_cache` off every get reads the log.
#[test]
fn a_separated_value_read_twice_comes_from_the_value_cache() {
    for cache_values in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = common::simulated(1);
        opts.value_cache = cache_values;
        let db = Db::open(dir.path(), opts).unwrap();
        let big = vec![b'v'; 2000]; // above kv_separation_threshold: kept in a value log
        for i in 0..50 {
            db.put(key(i), &big).unwrap();
        }
        db.flush().unwrap();
        db.wait_for_background_work().unwrap();
        let before = db.stats().block_cache;
        for _ in 0..4 {
            assert_eq!(db.get(key(7)).unwrap().as_deref(), Some(&big[..]));
        }
        let mut it = db.iter().unwrap();
        it.seek_to_first();
        while it.valid() {
            it.advance();
        }
        let after = db.stats().block_cache;
        let seen = |s: &flatlsm::BlockCacheStats| (s.value_hits, s.value_misses, s.value_inserts);
        let (h0, m0, i0) = seen(&before);
        let (h, m, i) = seen(&after);
        match cache_values {
            true => assert_eq!((h - h0, m - m0, i - i0), (3, 1, 1)),
            false => assert_eq!((h - h0, m - m0, i - i0), (0, 0, 0)),
        }
        assert_eq!(db.property_int("flatlsm.value-cache-hit"), Some(h));
    }
}
