//! [`Retired`]: open files evicted from a cache because they were deleted, held until no one
//! else uses them, so that the last handle is closed by the thread that asks, never by a reader.
//!
//! Why: closing the last handle of a deleted file frees its blocks — a truncate and, on a disk
//! mounted with `discard`, a synchronous discard (tens of milliseconds, seen in the stack of a
//! point read during YCSB-F). A reader that happened to drop the last reference would pay for
//! it; the background purge that deleted the file should.
//!
//! Invariant: an item only this list holds cannot be reached again (its cache no longer names
//! it), so one whose count is 1 may be dropped. Thread-safety: `Send + Sync` (one lock, taken
//! at evictions and closes only).

use parking_lot::Mutex;
use std::sync::Arc;

/// Evicted handles, until their other users are done.
#[derive(Debug)]
pub struct Retired<T>(Mutex<Vec<Arc<T>>>);

impl<T> Default for Retired<T> {
    fn default() -> Self {
        Retired(Mutex::new(Vec::new()))
    }
}

impl<T> Retired<T> {
    /// Keeps `handle` (just evicted from its cache) until [`Retired::close_unused`] finds it
    /// unused.
    pub fn push(&self, handle: Arc<T>) {
        self.0.lock().push(handle);
    }

    /// Drops (closes) the handles no one else holds; returns how many are still in use.
    pub fn close_unused(&self) -> usize {
        let mut held = self.0.lock();
        held.retain(|h| Arc::strong_count(h) > 1);
        held.len()
    }
}
