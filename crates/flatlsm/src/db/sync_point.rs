//! Test-only sync points (after RocksDB's `SyncPoint`): named places in the engine where a test
//! runs its own code, typically to pause one thread until another has done something, so a
//! race is reproduced deterministically instead of by luck.
//!
//! Compiled only into the crate's own test builds: `DbInner::sync_point` is an empty inline
//! function otherwise, and nothing here is public API. Each database has its own set, so tests
//! running in parallel never trigger each other's callbacks.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::time::Duration;

type Callback = Arc<dyn Fn() + Send + Sync>;

/// The callbacks of one database, by point name.
#[derive(Default)]
pub(crate) struct SyncPoints {
    callbacks: Mutex<HashMap<&'static str, Callback>>,
}

impl SyncPoints {
    /// Runs `f` whenever a thread reaches `point` (replacing an earlier callback).
    pub fn set(&self, point: &'static str, f: impl Fn() + Send + Sync + 'static) {
        self.callbacks.lock().insert(point, Arc::new(f));
    }

    /// Called by the engine at `point`. The callback runs without the registry's lock held,
    /// so it may block (that is what it is for).
    pub fn hit(&self, point: &'static str) {
        let callback = self.callbacks.lock().get(point).cloned();
        if let Some(f) = callback {
            f();
        }
    }

    /// Makes the first thread that reaches `point` wait there until the returned
    /// [`Pause`] is resumed (or dropped); later threads pass.
    pub fn pause_once(&self, point: &'static str) -> Pause {
        let (reached_tx, reached) = channel();
        let (resume, resume_rx) = channel::<()>();
        let once = Mutex::new(Some((reached_tx, resume_rx)));
        self.set(point, move || {
            // Taken in a statement of its own: a guard in the `if let` would be held while
            // this thread waits, and every later thread would wait for it instead of passing.
            let first = once.lock().take();
            if let Some((reached_tx, resume_rx)) = first {
                let _ = reached_tx.send(());
                let _ = resume_rx.recv();
            }
        });
        Pause { reached, resume }
    }
}

/// A thread held at a sync point by [`SyncPoints::pause_once`].
pub(crate) struct Pause {
    reached: Receiver<()>,
    resume: Sender<()>,
}

impl Pause {
    /// Waits until a thread is held at the point; panics after `timeout` (a test bug).
    pub fn wait_reached(&self, timeout: Duration) {
        self.reached
            .recv_timeout(timeout)
            .expect("no thread reached the sync point");
    }

    /// Lets the held thread continue.
    pub fn resume(self) {
        let _ = self.resume.send(());
    }
}
