//! [`Writes`]: what serializes writers and publishes their work — the write lock, the
//! write-ahead logs (designs with a DRAM write buffer) and the visible sequence number.
//!
//! Invariants: writers append, roll the mutable buffer and its log, and advance the visible
//! sequence only under the write lock (the first lock of the order in `state.rs`); a sequence
//! is published only after every entry up to it is in the write buffer, so a reader at the
//! visible sequence never sees half a batch.

use super::wals::Wals;
use parking_lot::{Mutex, MutexGuard};
use std::sync::atomic::{AtomicU64, Ordering};

/// The write side of one open database.
pub(crate) struct Writes {
    lock: Mutex<()>,
    wals: Wals,
    visible_seq: AtomicU64,
}

impl Writes {
    /// Writes continuing after sequence `last_seq`, logged to `wals`.
    pub fn new(wals: Wals, last_seq: u64) -> Writes {
        Writes {
            lock: Mutex::new(()),
            wals,
            visible_seq: AtomicU64::new(last_seq),
        }
    }

    /// Takes the write lock.
    pub fn lock(&self) -> MutexGuard<'_, ()> {
        self.lock.lock()
    }

    /// The write-ahead logs.
    pub fn wals(&self) -> &Wals {
        &self.wals
    }

    /// The latest visible sequence number.
    pub fn visible(&self) -> u64 {
        self.visible_seq.load(Ordering::Acquire)
    }

    /// Makes every write up to `seq` visible; the caller holds the write lock.
    pub fn publish(&self, seq: u64) {
        self.visible_seq.store(seq, Ordering::Release);
    }
}
