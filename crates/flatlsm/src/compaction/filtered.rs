//! [`Filtered`]: a forward stream over a merged source that drops the versions no reader can
//! see (`VersionFilter`, tombstones kept), for flushes whose writer reads its input as an
//! iterator (MatrixKV's RowTable builder makes two passes: one to size the row, one to write).
//!
//! Only forward positioning is meaningful: `seek_to_first` and `seek` restart the filter;
//! `seek_to_last` and `prev` leave the stream invalid with an error, since a backward walk
//! cannot tell which versions a forward one would drop.

use super::filter::VersionFilter;
use crate::error::{Error, Result};
use crate::iter::{copy_error, InternalIterator};
use crate::types::SequenceNumber;

/// A filtered forward stream over `inner`.
pub(crate) struct Filtered<I> {
    inner: I,
    oldest_snapshot: SequenceNumber,
    filter: VersionFilter,
    error: Option<Error>,
}

impl<I: InternalIterator> Filtered<I> {
    /// Drops versions below the newest one visible at `oldest_snapshot`.
    pub fn new(inner: I, oldest_snapshot: SequenceNumber) -> Self {
        Filtered {
            inner,
            oldest_snapshot,
            filter: VersionFilter::new(oldest_snapshot),
            error: None,
        }
    }

    /// Skips entries the filter drops.
    fn settle(&mut self) {
        while self.inner.valid() && !self.filter.keep(self.inner.key(), |_| false) {
            self.inner.next();
        }
    }

    fn restart(&mut self) {
        self.filter = VersionFilter::new(self.oldest_snapshot);
        self.error = None;
    }

    fn refuse(&mut self, what: &str) {
        let msg = format!("{what} on a forward-only filtered flush stream");
        self.error = Some(Error::InvalidState(msg));
    }
}

impl<I: InternalIterator> InternalIterator for Filtered<I> {
    fn valid(&self) -> bool {
        self.error.is_none() && self.inner.valid()
    }

    fn seek_to_first(&mut self) {
        self.restart();
        self.inner.seek_to_first();
        self.settle();
    }

    fn seek(&mut self, target: &[u8]) {
        self.restart();
        self.inner.seek(target);
        self.settle();
    }

    fn next(&mut self) {
        self.inner.next();
        self.settle();
    }

    fn seek_to_last(&mut self) {
        self.refuse("seek_to_last");
    }

    fn prev(&mut self) {
        self.refuse("prev");
    }

    fn key(&self) -> &[u8] {
        self.inner.key()
    }

    fn value(&self) -> &[u8] {
        self.inner.value()
    }

    fn status(&self) -> Result<()> {
        match &self.error {
            Some(e) => Err(copy_error(e)),
            None => self.inner.status(),
        }
    }
}
