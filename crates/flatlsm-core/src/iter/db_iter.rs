//! The user-facing iterator: newest visible version of each user key, tombstones hidden,
//! separated values fetched from the value log, optional bounds, both directions.
//!
//! Invariants (after LevelDB's / RocksDB's DBIter):
//! - When valid, `key`/`value` hold the newest version with sequence <= the read sequence of
//!   the current user key, that version is not a deletion, and `lower <= key < upper`.
//! - Moving forward, the inner cursor is on that newest visible version of `key`.
//! - Moving backward, the inner cursor is on the last entry before every version of `key`
//!   (invalid if there is none), so `key`/`value` are copies saved during the backward scan.
//!
//! Direction switches restore the other invariant first, then scan as usual.
//!
//! Range tombstones ([`DbIterator::with_range_dels`]): a version a tombstone visible at the read
//! sequence covers counts as a deletion. Keys are checked one by one (a covered key is stepped
//! over like a deleted one, never skipped by a seek): a key in a deleted range may have newer
//! versions written after the tombstone, which stay visible.
//!
//! As a Rust iterator it is double-ended: `next` walks this cursor forward, `next_back` a
//! second cursor over the same pinned sources ([`DbIterator::with_back`]) backward from the
//! last key; the walk ends where the two meet (a key yielded from one end is never yielded
//! from the other).
//!
//! Latency ([`DbIterator::with_latency`]): each public positioning call (`seek*`) is timed as
//! one seek, each `advance`/`prev` (so each `next`/`next_back` of the Rust iterator) as one
//! next; one clock read pair per call, none without histograms.

use super::scout::{HintOnly, Scout};
use super::{copy_error, InternalIterator};
use crate::error::{Error, Result};
use crate::fs::ReadAhead;
use crate::histogram::Histogram;
use crate::range_del::RangeTombstones;
use crate::types::{make_internal_key, parse_internal_key, user_key_of, ValueKind, ValuePointer};
use crate::types::{SequenceNumber, KIND_FOR_SEEK, MAX_SEQUENCE};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Fetches values that were separated into a value log.
pub trait ValueResolver: Send + Sync {
    /// Reads the value a pointer refers to.
    fn resolve(&self, ptr: &ValuePointer) -> Result<Vec<u8>>;
    /// Reads the value a pointer refers to for a cursor that keeps `ahead` across its values,
    /// so values stored one after another cost one read (default: [`ValueResolver::resolve`]).
    fn resolve_ahead(&self, ptr: &ValuePointer, ahead: &mut ReadAhead) -> Result<Vec<u8>> {
        let _ = ahead;
        self.resolve(ptr)
    }
    /// Hints that the value a pointer refers to will be read soon (a scan's look-ahead,
    /// `iter::scout`); errors are left to the read that follows. True when it asked the
    /// device for the value; false when it knows the value in memory (a hint would only cost a
    /// system call) or gave no hint. Default: nothing, false.
    fn prefetch(&self, ptr: &ValuePointer) -> bool {
        let _ = ptr;
        false
    }
}

/// Where iterators record how long their calls took (nanoseconds), shared by all iterators of
/// a database.
#[derive(Debug, Default)]
pub struct IterLatency {
    /// `seek`, `seek_to_first`, `seek_to_last`, `seek_for_prev`.
    pub seek: Histogram,
    /// `advance` and `prev` (`next` and `next_back` of the Rust iterator).
    pub next: Histogram,
}

/// Which invariant the inner cursor currently satisfies (see the module docs).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Direction {
    Forward,
    Reverse,
}

/// Iterator over user keys and values, in ascending key order by default and backward on
/// request ([`DbIterator::prev`], [`DbIterator::seek_to_last`], [`DbIterator::seek_for_prev`]).
pub struct DbIterator {
    inner: Box<dyn InternalIterator>,
    resolver: Arc<dyn ValueResolver>,
    /// The value-log windows this cursor's values are read through.
    ahead: ReadAhead,
    read_seq: SequenceNumber,
    range_dels: Arc<RangeTombstones>,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    key: Vec<u8>,
    value: Vec<u8>,
    valid: bool,
    direction: Direction,
    error: Option<Error>,
    // Set once the `Iterator` adapters have yielded the error, so they end instead of
    // repeating it forever; cleared by every positioning call.
    error_yielded: bool,
    // Keeps the snapshot (and what it pins) alive for the iterator's lifetime.
    _pins: Vec<Box<dyn std::any::Any + Send>>,
    /// The cursor `next_back` walks (made on its first use), and whether it has been
    /// positioned at the last key.
    back: Option<(BackCursor, bool)>,
    /// The last keys yielded by `next` and by `next_back`: the ends meet between them.
    front_yielded: Option<Vec<u8>>,
    back_yielded: Option<Vec<u8>>,
    /// Where calls are timed, if anywhere.
    latency: Option<Arc<IterLatency>>,
    /// The look-ahead cursor that hints a forward scan's values once they come from the
    /// device, if the iterator has one.
    scout: Option<Scout>,
}

impl DbIterator {
    /// Wraps a merged internal iterator. `lower` is inclusive, `upper` exclusive.
    pub fn new(
        inner: Box<dyn InternalIterator>,
        resolver: Arc<dyn ValueResolver>,
        read_seq: SequenceNumber,
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
        pins: Vec<Box<dyn std::any::Any + Send>>,
    ) -> Self {
        DbIterator {
            inner,
            resolver,
            ahead: ReadAhead::default(),
            read_seq,
            range_dels: Arc::default(),
            lower,
            upper,
            key: Vec::new(),
            value: Vec::new(),
            valid: false,
            direction: Direction::Forward,
            error: None,
            error_yielded: false,
            _pins: pins,
            back: None,
            front_yielded: None,
            back_yielded: None,
            latency: None,
            scout: None,
        }
    }

    /// Times its calls (and its back cursor's) into `latency` from now on.
    pub fn with_latency(mut self, latency: Arc<IterLatency>) -> Self {
        self.latency = Some(latency);
        self
    }

    /// Runs `op`, timed into the histogram `pick` chooses if the iterator has histograms.
    fn timed(&mut self, pick: fn(&IterLatency) -> &Histogram, op: impl FnOnce(&mut Self)) {
        let start = self.latency.is_some().then(Instant::now);
        op(self);
        if let (Some(latency), Some(start)) = (&self.latency, start) {
            pick(latency).record_since(start);
        }
    }

    /// Hides every version the range tombstones `range_dels` delete at the read sequence.
    pub fn with_range_dels(mut self, range_dels: Arc<RangeTombstones>) -> Self {
        self.range_dels = range_dels;
        self
    }

    /// True if the version `p` is a deletion at the read sequence (a tombstone, or covered by
    /// a range tombstone).
    fn deleted(&self, p: &crate::types::ParsedInternalKey<'_>) -> bool {
        p.kind == ValueKind::Deletion || self.range_dels.covers(p.user_key, p.seq, self.read_seq)
    }

    /// Gives the iterator the cursor `next_back` walks: one over the same pinned sources,
    /// sequence and bounds, unpositioned.
    pub fn with_back(mut self, back: DbIterator) -> Self {
        let cursor = BackCursor {
            made: Some(Box::new(back)),
            make: None,
        };
        self.back = Some((cursor, false));
        self
    }

    /// As [`DbIterator::with_back`], the cursor made by `make` when `next_back` first needs
    /// it (a forward-only walk never builds it).
    pub fn with_back_fn(mut self, make: impl FnOnce() -> DbIterator + Send + 'static) -> Self {
        let cursor = BackCursor {
            made: None,
            make: Some(Box::new(make)),
        };
        self.back = Some((cursor, false));
        self
    }

    /// Gives the iterator a look-ahead cursor (`iter::scout`), made by `make` when a forward
    /// step's value read first takes `slow` or longer: one over the same pinned sources,
    /// sequence and bounds, whose values are hinted, never read.
    pub fn with_scout_fn(
        mut self,
        make: impl FnOnce() -> DbIterator + Send + 'static,
        slow: Duration,
    ) -> Self {
        let device_hints = Arc::new(AtomicU64::new(0));
        let counted = device_hints.clone();
        let hinting = move || make().hints_only(counted);
        self.scout = Some(Scout::new(Box::new(hinting), device_hints, slow));
        self
    }

    /// This iterator with every value hinted instead of read (a scout's cursor), counting the
    /// hints that went to the device in `device_hints`.
    fn hints_only(mut self, device_hints: Arc<AtomicU64>) -> Self {
        self.resolver = Arc::new(HintOnly {
            inner: self.resolver,
            device_hints,
        });
        self
    }

    /// True if positioned on an entry.
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// Moves to the first key (at or above the lower bound).
    pub fn seek_to_first(&mut self) {
        self.timed(|l| &l.seek, Self::first)
    }

    fn first(&mut self) {
        match self.lower.clone() {
            Some(l) => self.at_or_after(&l),
            None => {
                self.start_positioning(Direction::Forward);
                self.inner.seek_to_first();
                self.find_next_visible(None);
            }
        }
    }

    /// Moves to the first key >= `key` (and >= the lower bound).
    pub fn seek(&mut self, key: &[u8]) {
        self.timed(|l| &l.seek, |it| it.at_or_after(key))
    }

    fn at_or_after(&mut self, key: &[u8]) {
        self.start_positioning(Direction::Forward);
        let target = match &self.lower {
            Some(l) if l.as_slice() > key => l.clone(),
            _ => key.to_vec(),
        };
        self.inner
            .seek(&make_internal_key(&target, MAX_SEQUENCE, KIND_FOR_SEEK));
        self.find_next_visible(None);
    }

    /// Moves to the last key (below the upper bound); invalid if the range holds no key.
    pub fn seek_to_last(&mut self) {
        self.timed(|l| &l.seek, Self::last)
    }

    fn last(&mut self) {
        self.start_positioning(Direction::Reverse);
        match self.upper.clone() {
            Some(u) => self.position_before(&u),
            None => self.inner.seek_to_last(),
        }
        self.find_prev_visible();
    }

    /// Moves to the last key <= `key` (and below the upper bound, at or above the lower
    /// bound); invalid if there is none.
    pub fn seek_for_prev(&mut self, key: &[u8]) {
        self.timed(|l| &l.seek, |it| it.at_or_before(key))
    }

    fn at_or_before(&mut self, key: &[u8]) {
        self.start_positioning(Direction::Reverse);
        match self.upper.clone() {
            Some(u) if key >= u.as_slice() => self.position_before(&u),
            // Sequence 0 with the smallest kind sorts after every version of `key`.
            _ => self
                .inner
                .seek_for_prev(&make_internal_key(key, 0, ValueKind::Deletion)),
        }
        self.find_prev_visible();
    }

    /// Moves to the next key. Requires `valid()` (does nothing otherwise).
    pub fn advance(&mut self) {
        self.timed(|l| &l.next, Self::step_forward)
    }

    fn step_forward(&mut self) {
        if !self.valid {
            return;
        }
        if self.direction == Direction::Reverse {
            self.switch_to_forward();
        }
        let skip = std::mem::take(&mut self.key);
        self.find_next_visible(Some(&skip));
    }

    /// Moves to the previous key. Requires `valid()` (does nothing otherwise).
    pub fn prev(&mut self) {
        self.timed(|l| &l.next, Self::step_back)
    }

    fn step_back(&mut self) {
        if !self.valid {
            return;
        }
        if self.direction == Direction::Forward {
            self.switch_to_reverse();
        }
        self.find_prev_visible();
    }

    /// The current user key.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The current value.
    pub fn value(&self) -> &[u8] {
        &self.value
    }

    /// The first error met (I/O or corruption), if any, with its original kind (a damaged
    /// file stays `Error::Corruption` naming the file and offset); the iterator is invalid
    /// after one.
    pub fn status(&self) -> Result<()> {
        match &self.error {
            Some(e) => Err(copy_error(e)),
            None => self.inner.status(),
        }
    }

    /// Every positioning call starts a new walk: the back end starts again from the last key.
    fn start_positioning(&mut self, direction: Direction) {
        self.direction = direction;
        self.error_yielded = false;
        self.front_yielded = None;
        self.back_yielded = None;
        if let Some((_, started)) = &mut self.back {
            *started = false;
        }
        self.stop_scout();
    }

    fn stop_scout(&mut self) {
        if let Some(scout) = &mut self.scout {
            scout.stop();
        }
    }

    /// Puts the inner cursor on the last entry whose user key is < `user_key`.
    fn position_before(&mut self, user_key: &[u8]) {
        self.inner
            .seek(&make_internal_key(user_key, MAX_SEQUENCE, KIND_FOR_SEEK));
        if self.inner.valid() {
            self.inner.prev();
        } else if self.inner.status().is_ok() {
            self.inner.seek_to_last();
        }
    }

    /// From the reverse invariant (inner just before every version of `key`) to the forward
    /// scan start: inner on the first version of `key` (or later).
    fn switch_to_forward(&mut self) {
        self.direction = Direction::Forward;
        if self.inner.valid() {
            self.inner.next();
        } else {
            match self.lower.clone() {
                Some(l) => self
                    .inner
                    .seek(&make_internal_key(&l, MAX_SEQUENCE, KIND_FOR_SEEK)),
                None => self.inner.seek_to_first(),
            }
        }
    }

    /// From the forward invariant (inner on a version of `key`) to the reverse invariant:
    /// steps back past the newer versions of `key`.
    fn switch_to_reverse(&mut self) {
        self.direction = Direction::Reverse;
        self.stop_scout();
        while self.inner.valid() && user_key_of(self.inner.key()) >= self.key.as_slice() {
            self.inner.prev();
        }
    }

    /// Scans forward from the inner position to the next visible, non-deleted user key,
    /// skipping every version of `skip` (the key just returned).
    fn find_next_visible(&mut self, skip: Option<&[u8]>) {
        self.valid = false;
        let mut skipping: Option<Vec<u8>> = skip.map(|s| s.to_vec());
        while self.inner.valid() {
            let Some(p) = parse_internal_key(self.inner.key()) else {
                self.error = Some(unparsable_key());
                return;
            };
            if let Some(u) = &self.upper {
                if p.user_key >= u.as_slice() {
                    return;
                }
            }
            let shadowed = skipping.as_deref() == Some(p.user_key);
            if p.seq > self.read_seq || shadowed {
                self.inner.next();
                continue;
            }
            // Newest visible version of a new user key: it decides.
            skipping = Some(p.user_key.to_vec());
            if !self.deleted(&p) {
                let (user_key, kind) = (p.user_key.to_vec(), p.kind);
                let raw = self.inner.value().to_vec();
                return self.make_current(user_key, kind, raw);
            }
            self.inner.next();
        }
        self.record_inner_error();
    }

    /// Scans backward from the inner position to the previous visible, non-deleted user key
    /// at or above the lower bound. Versions of one user key appear oldest first, so the
    /// last visible version seen before the user key changes is the newest one; it is kept in
    /// `key`/`value` (raw) until a smaller visible user key proves the scan past it.
    fn find_prev_visible(&mut self) {
        self.valid = false;
        let mut saved_kind = ValueKind::Deletion;
        while self.inner.valid() {
            let Some(p) = parse_internal_key(self.inner.key()) else {
                self.error = Some(unparsable_key());
                return;
            };
            if self.lower.as_deref().is_some_and(|l| p.user_key < l) {
                break;
            }
            if p.seq <= self.read_seq {
                if saved_kind != ValueKind::Deletion && p.user_key < self.key.as_slice() {
                    break; // The saved key's newest visible version is complete and live.
                }
                saved_kind = match self.deleted(&p) {
                    true => ValueKind::Deletion,
                    false => p.kind,
                };
                self.key.clear();
                self.key.extend_from_slice(p.user_key);
                self.value.clear();
                self.value.extend_from_slice(self.inner.value());
            }
            self.inner.prev();
        }
        if self.record_inner_error() || saved_kind == ValueKind::Deletion {
            return;
        }
        let (key, raw) = (
            std::mem::take(&mut self.key),
            std::mem::take(&mut self.value),
        );
        self.make_current(key, saved_kind, raw);
    }

    /// Keeps the inner cursor's error, if it stopped on one; true if it did.
    fn record_inner_error(&mut self) -> bool {
        if self.inner.valid() {
            return false;
        }
        match self.inner.status() {
            Ok(()) => false,
            Err(e) => {
                self.error = Some(e);
                true
            }
        }
    }

    /// Makes `user_key` current with `raw` (inline bytes, or a pointer to resolve).
    fn make_current(&mut self, user_key: Vec<u8>, kind: ValueKind, raw: Vec<u8>) {
        let scouted = kind == ValueKind::ValuePointer && self.direction == Direction::Forward;
        let started = (scouted && self.scout.is_some()).then(Instant::now);
        let value = match kind {
            ValueKind::ValuePointer => ValuePointer::decode(&raw)
                .ok_or_else(|| Error::InvalidState("malformed value pointer".into()))
                .and_then(|ptr| self.resolver.resolve_ahead(&ptr, &mut self.ahead)),
            _ => Ok(raw),
        };
        match value {
            Ok(v) => {
                self.key = user_key;
                self.value = v;
                self.valid = true;
                self.follow(started);
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// Lets the scout follow a forward step whose value read began at `started`.
    fn follow(&mut self, started: Option<Instant>) {
        if let (Some(scout), Some(started)) = (&mut self.scout, started) {
            scout.follow(&self.key, started.elapsed());
        }
    }

    fn missing_back(&mut self) -> Option<Result<(Vec<u8>, Vec<u8>)>> {
        if self.error_yielded {
            return None;
        }
        self.error_yielded = true;
        let e = "this iterator has no back cursor (build it with DbIterator::with_back)";
        Some(Err(Error::InvalidState(e.into())))
    }

    /// The `Iterator` adapters' end: the error once, then nothing.
    fn end_of_entries(&mut self) -> Option<Result<(Vec<u8>, Vec<u8>)>> {
        if self.error_yielded {
            return None;
        }
        self.error_yielded = true;
        self.status().err().map(Err)
    }
}

fn unparsable_key() -> Error {
    Error::InvalidState("unparsable internal key".into())
}

impl Iterator for DbIterator {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    /// Yields the current entry and advances; call `seek`/`seek_to_first` first. After the
    /// last entry, yields the iterator's error (if any) once, then `None`.
    fn next(&mut self) -> Option<Self::Item> {
        if !self.valid {
            return self.end_of_entries();
        }
        if self.back_yielded.as_ref().is_some_and(|b| self.key >= *b) {
            return None; // met the back end
        }
        let item = (self.key.clone(), self.value.clone());
        self.front_yielded = Some(item.0.clone());
        self.advance();
        Some(Ok(item))
    }
}

/// The back end's cursor: made, or still the function that makes it.
struct BackCursor {
    made: Option<Box<DbIterator>>,
    make: Option<Box<dyn FnOnce() -> DbIterator + Send>>,
}

impl BackCursor {
    /// The cursor, made now if need be (timed into `latency`, the front cursor's).
    fn get(&mut self, latency: &Option<Arc<IterLatency>>) -> &mut DbIterator {
        if self.made.is_none() {
            let make = self.make.take().expect("a back cursor is made or makeable");
            self.made = Some(Box::new(make()));
        }
        let cursor = self.made.as_mut().expect("made above");
        if cursor.latency.is_none() {
            cursor.latency.clone_from(latency);
        }
        cursor
    }
}

/// Walks the second cursor backward from the last key within the bounds; ends where the
/// front end has been. An iterator built without a back cursor yields an error once.
impl DoubleEndedIterator for DbIterator {
    fn next_back(&mut self) -> Option<Self::Item> {
        let Some((back, started)) = &mut self.back else {
            return self.missing_back();
        };
        let cursor = back.get(&self.latency);
        if !*started {
            cursor.seek_to_last();
            *started = true;
        }
        if !cursor.valid {
            return cursor.end_of_entries();
        }
        if self
            .front_yielded
            .as_ref()
            .is_some_and(|f| cursor.key <= *f)
        {
            return None; // met the front end
        }
        let item = (cursor.key.clone(), cursor.value.clone());
        cursor.prev();
        self.back_yielded = Some(item.0.clone());
        Some(Ok(item))
    }
}
