//! A forward scan's look-ahead: once a scan's value reads go to the device, a second cursor
//! over the same pinned sources walks ahead of it and hints the values it will reach
//! ([`ValueResolver::prefetch`]), so the device serves them in parallel rather than one at a
//! time (values of hashed keys lie in many logs, in no useful order: read-ahead windows cannot
//! help them).
//!
//! Invariants:
//! - The scout only hints: it yields nothing, and every value it hints is read and checked by
//!   the main cursor like any other. A wasted or failed hint costs speed, never correctness.
//! - It starts only after one of the main cursor's value reads took at least `slow` (that value
//!   was not in memory), so a scan served from memory never builds or moves it.
//! - While running, it stands `ahead` visible entries past the main cursor's key (counted, and
//!   re-seeked if it is found at or behind that key). When `ahead` falls below half the window
//!   it is topped up to the window, and the window doubles from [`FIRST_WINDOW`] up to
//!   [`MAX_WINDOW`], as the kernel's read-ahead ramps: a short scan hints little it will not
//!   read, a long one keeps up to `MAX_WINDOW` reads in flight.
//! - Every positioning call and direction change of the main cursor stops it; the next slow
//!   read starts it again from the main cursor's key.
//! - A top-up none of whose hints went to the device (the resolver found every value in
//!   memory: [`ValueResolver::prefetch`] returned false) stops it too: one slow read (a
//!   preempted thread, a log opened) must not make a scan served from memory walk a second
//!   cursor and hint every value. (A scan of 1 KB values from memory spent 33 % of its time in
//!   the scout and 15 % in `fadvise` before this rule.)

use super::{DbIterator, ValueResolver};
use crate::error::Result;
use crate::fs::ReadAhead;
use crate::types::ValuePointer;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Entries hinted when the scout starts.
pub const FIRST_WINDOW: usize = 8;
/// The most entries hinted ahead of the main cursor.
pub const MAX_WINDOW: usize = 64;

/// A value read slower than this came from the device (a read from the page cache takes a few
/// microseconds, one from an SSD tens to hundreds).
pub const SLOW_VALUE_READ: Duration = Duration::from_micros(20);

/// The look-ahead cursor of one [`DbIterator`] (module docs).
pub(super) struct Scout {
    cursor: Option<Box<DbIterator>>,
    make: Option<Box<dyn FnOnce() -> DbIterator + Send>>,
    /// Hints the cursor's resolver sent to the device, ever ([`HintOnly`]).
    device_hints: Arc<AtomicU64>,
    slow: Duration,
    running: bool,
    ahead: usize,
    window: usize,
}

impl Scout {
    /// A scout whose cursor `make` builds on its first start, started by reads of `slow` or
    /// longer; the cursor's resolver counts its device hints in `device_hints`.
    pub(super) fn new(
        make: Box<dyn FnOnce() -> DbIterator + Send>,
        device_hints: Arc<AtomicU64>,
        slow: Duration,
    ) -> Self {
        Scout {
            cursor: None,
            make: Some(make),
            device_hints,
            slow,
            running: false,
            ahead: 0,
            window: FIRST_WINDOW,
        }
    }

    /// The main cursor moved other than one step forward: the scout waits for the next slow
    /// read.
    pub(super) fn stop(&mut self) {
        self.running = false;
        self.window = FIRST_WINDOW;
    }

    /// The main cursor stepped forward onto `key`, whose value read took `took`.
    pub(super) fn follow(&mut self, key: &[u8], took: Duration) {
        if !self.running {
            if took < self.slow {
                return;
            }
            self.start(key);
        } else {
            self.ahead = self.ahead.saturating_sub(1);
            if self.cursor().valid() && self.cursor().key() <= key {
                self.start(key);
            }
        }
        if self.ahead < self.window / 2 {
            self.top_up();
        }
    }

    /// Puts the scout on `key` (a key the main cursor has read), nothing hinted past it yet.
    fn start(&mut self, key: &[u8]) {
        self.cursor().seek(key);
        self.running = true;
        self.ahead = 0;
    }

    /// Hints entries until `window` are hinted past the main cursor, then widens the window;
    /// stops when none of those hints went to the device.
    fn top_up(&mut self) {
        let before = self.device_hints.load(Ordering::Relaxed);
        while self.ahead < self.window && self.cursor().valid() {
            self.cursor().advance();
            self.ahead += 1;
        }
        self.window = (self.window * 2).min(MAX_WINDOW);
        if self.device_hints.load(Ordering::Relaxed) == before {
            self.stop();
        }
    }

    /// The cursor, made now if need be.
    fn cursor(&mut self) -> &mut DbIterator {
        if let Some(make) = self.make.take() {
            self.cursor = Some(Box::new(make()));
        }
        self.cursor
            .as_mut()
            .expect("a scout cursor is made or makeable")
    }
}

/// The scout cursor's resolver: hints each value through the real resolver and reads none,
/// counting the hints that went to the device.
pub(super) struct HintOnly {
    pub(super) inner: Arc<dyn ValueResolver>,
    pub(super) device_hints: Arc<AtomicU64>,
}

impl ValueResolver for HintOnly {
    fn resolve(&self, ptr: &ValuePointer) -> Result<Vec<u8>> {
        if self.inner.prefetch(ptr) {
            self.device_hints.fetch_add(1, Ordering::Relaxed);
        }
        Ok(Vec::new())
    }

    fn resolve_ahead(&self, ptr: &ValuePointer, _ahead: &mut ReadAhead) -> Result<Vec<u8>> {
        self.resolve(ptr)
    }
}
