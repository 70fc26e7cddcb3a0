//! The one condition every wait on background progress ends on, and the guard that turns a
//! panic in a background thread into that condition.
//!
//! Invariant: once the background error is set, no background job starts again (the loops test
//! `healthy`, `flush_one` refuses through the flush queue, writes through `check_writable`),
//! so nothing a waiter waits for — a flush, a compaction, room in level 0 or in the container —
//! will ever happen. Every wait on such progress therefore tests [`DbInner::stop_waiting`]
//! (shutdown or background error) on each round, under the lock its wake-up is sent under,
//! and `set_bg_error` wakes every such waiter; a new wait loop must do the same. A background
//! thread's panic is caught at the thread's top ([`DbInner::catch_panics`]) and recorded as
//! the background error, so it ends the waits as a failed job does.

use super::state::DbInner;
use crate::error::{Error, Result};
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// Why a wait on background progress must end now.
#[derive(Clone, Debug)]
pub(crate) enum StopWaiting {
    /// The database is shutting down: the wait gives up, nothing failed.
    Closing,
    /// Background work failed or panicked (the cause, never itself an `Error::Background`).
    Failed(Arc<Error>),
}

impl StopWaiting {
    /// The failure `e`, unwrapped if it only reports an earlier background failure, so a
    /// cause is never nested in another `Error::Background`.
    pub fn failed(e: &Error) -> StopWaiting {
        StopWaiting::Failed(cause_of(e))
    }

    /// The error a waiter returns: `Closed`, or `Background` with the cause.
    pub fn into_error(self) -> Error {
        match self {
            StopWaiting::Closing => Error::Closed,
            StopWaiting::Failed(cause) => Error::Background(cause),
        }
    }

    /// For a waiter that gives up quietly at shutdown: `Ok(false)` (nothing was done), or the
    /// background error.
    pub fn give_up(self) -> Result<bool> {
        match self {
            StopWaiting::Closing => Ok(false),
            failed => Err(failed.into_error()),
        }
    }
}

/// The cause to record for `e`: the inner error of an `Error::Background`, else a copy of `e`.
pub(crate) fn cause_of(e: &Error) -> Arc<Error> {
    match e {
        Error::Background(cause) => cause.clone(),
        other => Arc::new(crate::iter::copy_error(other)),
    }
}

impl DbInner {
    /// `Some` once a wait on background progress must end (module docs): the database shuts
    /// down, or background work failed. Takes `bg_error`, a leaf lock (callers may hold
    /// `bg_signal` or the flush queue's lock).
    pub(crate) fn stop_waiting(&self) -> Option<StopWaiting> {
        if self.bg.shutting_down() {
            return Some(StopWaiting::Closing);
        }
        self.bg.error().map(StopWaiting::Failed)
    }

    /// For waits that give up quietly at shutdown: `Ok(true)` to keep waiting, `Ok(false)` when
    /// the database shuts down, the background error once background work failed.
    pub(crate) fn keep_waiting(&self) -> Result<bool> {
        self.stop_waiting().map_or(Ok(true), StopWaiting::give_up)
    }

    /// Runs the body of background thread `thread`. A panic in it becomes the background error
    /// (naming the thread and the panic's message), which wakes and ends every wait, instead
    /// of ending the thread silently while writers wait for its work forever.
    pub(crate) fn catch_panics(&self, thread: &str, body: impl FnOnce()) {
        // Unwind safety: a job's outputs become visible only at its install (the commit
        // protocol), so readers see nothing half-done; writes and jobs stop at the error.
        if let Err(payload) = catch_unwind(AssertUnwindSafe(body)) {
            let message = panic_message(&*payload);
            let e = Error::InvalidState(format!("background thread {thread} panicked: {message}"));
            self.set_bg_error(&e);
        }
    }
}

/// The message a panic was raised with (`panic!` gives a `&str` or a `String`).
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        return (*s).to_string();
    }
    match payload.downcast_ref::<String>() {
        Some(s) => s.clone(),
        None => "a panic without a message".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_background_failure_is_recorded_once_not_nested() {
        let io = Error::InvalidState("disk gone".into());
        let wrapped = Error::Background(Arc::new(io));
        let StopWaiting::Failed(cause) = StopWaiting::failed(&wrapped) else {
            panic!("not a failure");
        };
        assert!(matches!(&*cause, Error::InvalidState(m) if m == "disk gone"));
        assert!(matches!(StopWaiting::Closing.give_up(), Ok(false)));
    }

    #[test]
    fn panic_messages_are_read_from_str_and_string_payloads() {
        let caught = |f: fn()| catch_unwind(f).unwrap_err();
        assert_eq!(panic_message(&*caught(|| panic!("plain"))), "plain");
        assert_eq!(panic_message(&*caught(|| panic!("n = {}", 3))), "n = 3");
    }
}
