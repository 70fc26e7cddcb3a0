//! [`BgState`]: what background work and the threads waiting on it share — the signal
//! mutex and condition variable they wait on, the first background error, the shutdown and
//! closed flags, and the locks that serialize jobs.
//!
//! Locking: `signal` is a leaf lock apart from `error`, which waiters take under it (see
//! `waits.rs`); `error` takes none. `compaction_lock` serializes the run merge and L1 → L2
//! compactions; `vlog_gc_lock` serializes value-log GC jobs, and no flush, compaction or writer
//! ever takes it. Invariant: once set, the error and the two flags never clear for this handle.

use crate::error::Error;
use parking_lot::{Condvar, Mutex, MutexGuard};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The mutex background threads and stalled writers wait on; the conditions themselves live
/// in the super version and the counters.
#[derive(Default)]
pub(crate) struct BgSignal;

/// Shared state of background work and its waiters.
#[derive(Default)]
pub(crate) struct BgState {
    signal: Mutex<BgSignal>,
    /// Wakes background threads (new work) and waiting foreground threads (work done).
    cv: Condvar,
    error: Mutex<Option<Arc<Error>>>,
    shutting_down: AtomicBool,
    closed: AtomicBool,
    compaction_lock: Mutex<()>,
    vlog_gc_lock: Mutex<()>,
}

impl BgState {
    /// Locks the signal mutex; test a wait's condition under it, then wait.
    pub fn signal(&self) -> MutexGuard<'_, BgSignal> {
        self.signal.lock()
    }

    /// Waits up to `timeout` for a wake-up, releasing `guard` meanwhile.
    pub fn wait_for(&self, guard: &mut MutexGuard<'_, BgSignal>, timeout: Duration) {
        self.cv.wait_for(guard, timeout);
    }

    /// Waits until `deadline` at the latest for a wake-up, releasing `guard` meanwhile.
    pub fn wait_until(&self, guard: &mut MutexGuard<'_, BgSignal>, deadline: Instant) {
        self.cv.wait_until(guard, deadline);
    }

    /// Wakes every waiter; the caller holds the signal mutex.
    pub fn notify_all(&self) {
        self.cv.notify_all();
    }

    /// Wakes every background thread and every waiting writer.
    pub fn wake_all(&self) {
        let _g = self.signal.lock();
        self.cv.notify_all();
    }

    /// The first background failure, if any.
    pub fn error(&self) -> Option<Arc<Error>> {
        self.error.lock().clone()
    }

    /// True once background work failed.
    pub fn failed(&self) -> bool {
        self.error.lock().is_some()
    }

    /// Records `cause` unless a failure is recorded already (the first one is kept).
    pub fn record_error(&self, cause: impl FnOnce() -> Arc<Error>) {
        let mut g = self.error.lock();
        if g.is_none() {
            *g = Some(cause());
        }
    }

    /// True once the handle shuts down its background threads.
    pub fn shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::Acquire)
    }

    /// Tells background threads and waiters to stop.
    pub fn begin_shutdown(&self) {
        self.shutting_down.store(true, Ordering::Release);
    }

    /// True once the handle is closed.
    pub fn closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Marks the handle closed; true if it was closed already.
    pub fn mark_closed(&self) -> bool {
        self.closed.swap(true, Ordering::AcqRel)
    }

    /// Holds off every other run merge and L1 → L2 compaction.
    pub fn compaction_lock(&self) -> MutexGuard<'_, ()> {
        self.compaction_lock.lock()
    }

    /// Holds off every other value-log GC job.
    pub fn vlog_gc_lock(&self) -> MutexGuard<'_, ()> {
        self.vlog_gc_lock.lock()
    }
}
