//! [`StripedCounter`]: a statistics counter many threads add to at once without sharing a
//! cache line: each thread adds to one of [`STRIPES`] cells (picked once per thread, in the
//! order threads first count), and a read adds the cells up. For counters touched on every
//! read (block-cache hits, filter answers), where one shared atomic bounced between cores.
//!
//! Invariant: after all adds have returned, [`StripedCounter::get`] is their exact sum; a read
//! while others add may miss the adds in flight. Relaxed atomics, no lock, nothing persistent.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Cells per counter (and stripes per histogram, `histogram.rs`).
pub const STRIPES: usize = 8;

/// One cell, on cache lines of its own.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Cell(AtomicU64);

/// A `u64` counter striped over [`STRIPES`] cells (module documentation).
///
/// ```
/// use flatlsm_core::counter::StripedCounter;
/// let c = StripedCounter::default();
/// c.add(2);
/// c.add(3);
/// assert_eq!(c.get(), 5);
/// ```
#[derive(Debug)]
pub struct StripedCounter {
    cells: Box<[Cell]>,
}

impl Default for StripedCounter {
    fn default() -> Self {
        StripedCounter {
            cells: (0..STRIPES).map(|_| Cell::default()).collect(),
        }
    }
}

impl StripedCounter {
    /// Adds `n` in this thread's cell.
    pub fn add(&self, n: u64) {
        self.cells[stripe_index()].0.fetch_add(n, Ordering::Relaxed);
    }

    /// The sum of the cells.
    pub fn get(&self) -> u64 {
        self.cells.iter().map(|c| c.0.load(Ordering::Relaxed)).sum()
    }
}

/// This thread's stripe (`0..STRIPES`): threads are numbered in the order they first ask.
pub fn stripe_index() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static INDEX: usize = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES;
    }
    INDEX.with(|i| *i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn adds_from_many_threads_sum_exactly() {
        let c = Arc::new(StripedCounter::default());
        let threads: Vec<_> = (0..12)
            .map(|_| {
                let c = c.clone();
                std::thread::spawn(move || (0..1000).for_each(|_| c.add(1)))
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(c.get(), 12_000);
    }
}
