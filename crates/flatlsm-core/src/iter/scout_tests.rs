//! Scenario tests for a scan's look-ahead ([`super::scout`]): which values it hints, when it
//! starts and stops, and that the entries a scan yields are the same with or without it.

use super::scout::{FIRST_WINDOW, MAX_WINDOW};
use super::{DbIterator, ValueResolver, VecIterator};
use crate::error::Result;
use crate::types::{make_internal_key, ValueKind, ValuePointer, MAX_SEQUENCE};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Resolves a pointer to its offset's decimal digits; records hints and reads by offset. The
/// value at `slow_at` takes `SLOW_READ` to read; values are on the device (a hint goes to it)
/// unless `in_memory`.
#[derive(Default)]
struct Recording {
    hinted: Mutex<Vec<u64>>,
    read: Mutex<Vec<u64>>,
    slow_at: Option<u64>,
    in_memory: bool,
}

/// How long the read of a [`Recording`]'s slow value takes.
const SLOW_READ: Duration = Duration::from_millis(5);

impl ValueResolver for Recording {
    fn resolve(&self, ptr: &ValuePointer) -> Result<Vec<u8>> {
        self.read.lock().push(ptr.offset);
        if self.slow_at == Some(ptr.offset) {
            std::thread::sleep(SLOW_READ);
        }
        Ok(ptr.offset.to_string().into_bytes())
    }
    fn prefetch(&self, ptr: &ValuePointer) -> bool {
        self.hinted.lock().push(ptr.offset);
        !self.in_memory
    }
}

/// `n` keys `k000`…, key i pointing at offset i; key 5 is deleted at a newer sequence.
fn entries(n: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    for i in 0..n {
        let key = format!("k{i:03}");
        if i == 5 {
            out.push((
                make_internal_key(key.as_bytes(), 2, ValueKind::Deletion),
                vec![],
            ));
        }
        let ptr = ValuePointer {
            file_number: 1,
            offset: i,
            value_len: 1,
            record_len: 1,
        };
        let ikey = make_internal_key(key.as_bytes(), 1, ValueKind::ValuePointer);
        out.push((ikey, ptr.encode().to_vec()));
    }
    out
}

fn cursor(n: u64, resolver: &Arc<Recording>) -> DbIterator {
    let inner = Box::new(VecIterator::new(entries(n)));
    DbIterator::new(inner, resolver.clone(), MAX_SEQUENCE, None, None, vec![])
}

/// A cursor over `n` keys with a scout started by reads of `slow` or longer.
fn scouted(n: u64, resolver: &Arc<Recording>, slow: Duration) -> DbIterator {
    let for_scout = resolver.clone();
    cursor(n, resolver).with_scout_fn(move || cursor(n, &for_scout), slow)
}

fn walk(it: &mut DbIterator, steps: usize) -> Vec<Vec<u8>> {
    let mut keys = Vec::new();
    for _ in 0..steps {
        if !it.valid() {
            break;
        }
        keys.push(it.key().to_vec());
        it.advance();
    }
    keys
}

#[test]
fn a_scan_whose_values_are_slow_hints_the_values_ahead_of_it_and_yields_the_same_entries() {
    let plain = Arc::new(Recording::default());
    let mut without = cursor(300, &plain);
    without.seek(b"k000");
    let hints = Arc::new(Recording::default());
    let mut with = scouted(300, &hints, Duration::ZERO);
    with.seek(b"k000");
    assert_eq!(walk(&mut with, 400), walk(&mut without, 400));
    assert_eq!(*hints.read.lock(), *plain.read.lock());
    let hinted = hints.hinted.lock().clone();
    assert!(
        !hinted.contains(&5),
        "a deleted key's value is never hinted"
    );
    assert!(
        hinted.contains(&299),
        "a long scan is hinted to its end: {hinted:?}"
    );
}

#[test]
fn the_scout_stays_within_its_window_ahead_of_the_main_cursor() {
    let hints = Arc::new(Recording::default());
    let mut it = scouted(300, &hints, Duration::ZERO);
    it.seek(b"k000");
    let farthest = |h: &Recording| h.hinted.lock().iter().copied().max().unwrap_or(0);
    // Started on k000: hinted the first window past it (k005 is deleted, so one more).
    assert_eq!(farthest(&hints), FIRST_WINDOW as u64 + 1);
    for step in 1..200u64 {
        it.advance();
        let main = it.key().to_vec();
        let at: u64 = std::str::from_utf8(&main[1..]).unwrap().parse().unwrap();
        assert!(at >= step, "the main cursor walks on");
        assert!(farthest(&hints) > at, "the scout stays ahead of {main:?}");
        assert!(
            farthest(&hints) <= at + MAX_WINDOW as u64 + 1,
            "and within its window"
        );
    }
}

#[test]
fn a_scan_served_fast_never_builds_its_scout() {
    let resolver = Arc::new(Recording::default());
    let built = Arc::new(AtomicBool::new(false));
    let (flag, for_scout) = (built.clone(), resolver.clone());
    let make = move || {
        flag.store(true, Ordering::SeqCst);
        cursor(50, &for_scout)
    };
    let mut it = cursor(50, &resolver).with_scout_fn(make, Duration::from_secs(3600));
    it.seek(b"k000");
    assert_eq!(walk(&mut it, 100).len(), 49);
    assert!(!built.load(Ordering::SeqCst));
    assert!(resolver.hinted.lock().is_empty());
}

#[test]
fn one_slow_read_in_a_scan_served_from_memory_hints_one_window_then_stops_the_scout() {
    let scan = |in_memory| {
        let resolver = Arc::new(Recording {
            slow_at: Some(10),
            in_memory,
            ..Recording::default()
        });
        let mut it = scouted(300, &resolver, SLOW_READ / 2);
        it.seek(b"k000");
        assert_eq!(walk(&mut it, 400).len(), 299);
        let hinted = resolver.hinted.lock().clone();
        hinted
    };
    let from_memory = scan(true);
    // The scout's seek to k010 hints its value, then one window past it; none more.
    assert_eq!(
        from_memory,
        (10..=10 + FIRST_WINDOW as u64).collect::<Vec<_>>()
    );
    let from_device = scan(false);
    assert!(from_device.contains(&299), "{from_device:?}");
}

#[test]
fn a_seek_restarts_the_scout_from_the_new_key() {
    let hints = Arc::new(Recording::default());
    let mut it = scouted(300, &hints, Duration::ZERO);
    it.seek(b"k000");
    walk(&mut it, 3);
    hints.hinted.lock().clear();
    it.seek(b"k200");
    let hinted = hints.hinted.lock().clone();
    assert!(hinted.iter().all(|&o| o >= 200), "{hinted:?}");
    assert!(hinted.contains(&(200 + FIRST_WINDOW as u64)), "{hinted:?}");
}

#[test]
fn a_backward_scan_hints_nothing() {
    let hints = Arc::new(Recording::default());
    let mut it = scouted(100, &hints, Duration::ZERO);
    it.seek_to_last();
    for _ in 0..50 {
        it.prev();
    }
    assert!(it.valid());
    assert!(hints.hinted.lock().is_empty());
}
