//! Concurrent readers and writers while flush, compaction and value-log GC run.

mod common;

use flatlsm::{Db, ReadOptions};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const WRITERS: u32 = 2;
const KEYS: u32 = 150;
const ROUNDS: u32 = 12;

fn value(writer: u32, key: u32, round: u32) -> Vec<u8> {
    let mut v = format!("{writer}:{key}:{round:08}:").into_bytes();
    v.resize(if key.is_multiple_of(2) { 40 } else { 300 }, b'x');
    v
}

fn round_of(v: &[u8]) -> u32 {
    let s = String::from_utf8_lossy(v);
    s.split(':').nth(2).unwrap().parse().unwrap()
}

#[test]
fn readers_see_monotonic_values_while_writers_flush_and_compact() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = common::simulated(2);
    opts.l1_capacity = 8 << 10;
    // A merge is due after two flushes: on a loaded machine flushes batch many PMTables, and
    // with the default trigger (4 runs) three flushes left no compaction to observe.
    opts.l1_merge_trigger = 2;
    let db = Arc::new(Db::open(dir.path(), opts).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let db = db.clone();
            std::thread::spawn(move || {
                for round in 0..ROUNDS {
                    for k in 0..KEYS {
                        let key = format!("w{w}-k{k:04}");
                        db.put(key.as_bytes(), value(w, k, round)).unwrap();
                    }
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut last = vec![0u32; (WRITERS * KEYS) as usize];
                let mut reads = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for w in 0..WRITERS {
                        for k in (r..KEYS).step_by(7) {
                            let key = format!("w{w}-k{k:04}");
                            if let Some(v) = db.get(key.as_bytes()).unwrap() {
                                let round = round_of(&v);
                                let slot = &mut last[(w * KEYS + k) as usize];
                                assert!(round >= *slot, "value went back in time for {key}");
                                assert_eq!(v, value(w, k, round));
                                *slot = round;
                                reads += 1;
                            }
                        }
                    }
                    // A snapshot iterator sees each key once, in order, with a consistent value.
                    let snap = db.snapshot();
                    let ro = ReadOptions {
                        snapshot: Some(&snap),
                        ..ReadOptions::default()
                    };
                    let mut prev: Option<Vec<u8>> = None;
                    for item in db.iter_opt(&ro).unwrap() {
                        let (k, v) = item.unwrap();
                        assert!(
                            prev.as_ref().is_none_or(|p| p < &k),
                            "iterator out of order"
                        );
                        let parts: Vec<u32> = String::from_utf8_lossy(&k)[1..]
                            .split("-k")
                            .map(|s| s.parse().unwrap())
                            .collect();
                        assert_eq!(v, value(parts[0], parts[1], round_of(&v)));
                        prev = Some(k);
                    }
                }
                reads
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    db.wait_for_background_work().unwrap();
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    for w in 0..WRITERS {
        for k in 0..KEYS {
            let key = format!("w{w}-k{k:04}");
            let v = db.get(key.as_bytes()).unwrap();
            assert_eq!(v, Some(value(w, k, ROUNDS - 1)), "final value of {key}");
        }
    }
    let st = db.stats();
    assert!(
        st.flushes > 0 && st.compactions > 0,
        "background work did not run: {st}"
    );
}
