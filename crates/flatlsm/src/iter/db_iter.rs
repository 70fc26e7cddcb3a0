//! The user-facing iterator: newest visible version of each user key, tombstones hidden,
//! separated values fetched from the value log, optional bounds.
//!
//! Invariant: when valid, `key`/`value` hold the newest version with sequence <= the read
//! sequence of the current user key, and that version is not a deletion.

use super::InternalIterator;
use crate::error::{Error, Result};
use crate::types::{make_internal_key, parse_internal_key, ValueKind, ValuePointer, KIND_FOR_SEEK};
use crate::types::{SequenceNumber, MAX_SEQUENCE};
use std::sync::Arc;

/// Fetches values that were separated into a value log.
pub trait ValueResolver: Send + Sync {
    /// Reads the value a pointer refers to.
    fn resolve(&self, ptr: &ValuePointer) -> Result<Vec<u8>>;
}

/// Iterator over user keys and values in ascending key order.
pub struct DbIterator {
    inner: Box<dyn InternalIterator>,
    resolver: Arc<dyn ValueResolver>,
    read_seq: SequenceNumber,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    key: Vec<u8>,
    value: Vec<u8>,
    valid: bool,
    error: Option<Error>,
    // Keeps the snapshot (and what it pins) alive for the iterator's lifetime.
    _pins: Vec<Box<dyn std::any::Any + Send>>,
}

impl DbIterator {
    /// Wraps a merged internal iterator. `lower` is inclusive, `upper` exclusive.
    pub(crate) fn new(
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
            read_seq,
            lower,
            upper,
            key: Vec::new(),
            value: Vec::new(),
            valid: false,
            error: None,
            _pins: pins,
        }
    }

    /// True if positioned on an entry.
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// Moves to the first key (at or above the lower bound).
    pub fn seek_to_first(&mut self) {
        match self.lower.clone() {
            Some(l) => self.seek(&l),
            None => {
                self.inner.seek_to_first();
                self.find_next_visible(None);
            }
        }
    }

    /// Moves to the first key >= `key` (and >= the lower bound).
    pub fn seek(&mut self, key: &[u8]) {
        let target = match &self.lower {
            Some(l) if l.as_slice() > key => l.clone(),
            _ => key.to_vec(),
        };
        self.inner
            .seek(&make_internal_key(&target, MAX_SEQUENCE, KIND_FOR_SEEK));
        self.find_next_visible(None);
    }

    /// Moves to the next key. Requires `valid()`.
    pub fn advance(&mut self) {
        debug_assert!(self.valid);
        let skip = std::mem::take(&mut self.key);
        self.find_next_visible(Some(&skip));
    }

    /// The current user key.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The current value.
    pub fn value(&self) -> &[u8] {
        &self.value
    }

    /// The first error met (I/O or corruption), if any; the iterator is invalid after one.
    pub fn status(&self) -> Result<()> {
        match &self.error {
            Some(e) => Err(Error::InvalidState(e.to_string())),
            None => self.inner.status(),
        }
    }

    /// Scans forward from the inner position to the next visible, non-deleted user key,
    /// skipping every version of `skip` (the key just returned).
    fn find_next_visible(&mut self, skip: Option<&[u8]>) {
        self.valid = false;
        let mut skipping: Option<Vec<u8>> = skip.map(|s| s.to_vec());
        while self.inner.valid() {
            let Some(p) = parse_internal_key(self.inner.key()) else {
                self.error = Some(Error::InvalidState("unparsable internal key".into()));
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
            match p.kind {
                ValueKind::Deletion => {}
                ValueKind::Value => {
                    self.key = p.user_key.to_vec();
                    self.value = self.inner.value().to_vec();
                    self.valid = true;
                    return;
                }
                ValueKind::ValuePointer => return self.load_pointer(p.user_key.to_vec()),
            }
            self.inner.next();
        }
        if let Err(e) = self.inner.status() {
            self.error = Some(e);
        }
    }

    fn load_pointer(&mut self, user_key: Vec<u8>) {
        let resolved = ValuePointer::decode(self.inner.value())
            .ok_or_else(|| Error::InvalidState("malformed value pointer".into()))
            .and_then(|ptr| self.resolver.resolve(&ptr));
        match resolved {
            Ok(v) => {
                self.key = user_key;
                self.value = v;
                self.valid = true;
            }
            Err(e) => self.error = Some(e),
        }
    }
}

impl Iterator for DbIterator {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    /// Yields the current entry and advances; call `seek`/`seek_to_first` first.
    fn next(&mut self) -> Option<Self::Item> {
        if !self.valid {
            return self.status().err().map(Err);
        }
        let item = (self.key.clone(), self.value.clone());
        self.advance();
        Some(Ok(item))
    }
}
