//! [`Forward`]: a forward stream over a source that skips the entries a [`KeepRule`] drops.
//! [`Filtered`] drops the versions no reader can see (`VersionFilter`, tombstones kept), for
//! flushes whose writer reads its input as an iterator (MatrixKV's RowTable builder); SLM-DB's
//! compaction inputs keep only the keys its index still points at (`designs/slmdb/`).
//!
//! Only forward positioning is meaningful: `seek_to_first` and `seek` restart the rule;
//! `seek_to_last` and `prev` leave the stream invalid with an error, since a backward walk
//! cannot tell which entries a forward one would drop.

use crate::error::{Error, Result};
use crate::iter::VersionFilter;
use crate::iter::{copy_error, InternalIterator};
use crate::range_del::RangeTombstones;
use crate::types::SequenceNumber;
use std::sync::Arc;

/// What a [`Forward`] stream keeps, deciding entry by entry in internal-key order.
pub(crate) trait KeepRule: Send {
    /// Forgets what earlier entries told (the stream was positioned anew).
    fn restart(&mut self);
    /// Whether to keep the entry with `internal_key`; an error ends the stream.
    fn keep(&mut self, internal_key: &[u8]) -> Result<bool>;
}

/// A forward stream over `inner` keeping what `rule` keeps.
pub(crate) struct Forward<I, R> {
    inner: I,
    rule: R,
    error: Option<Error>,
}

/// Drops the versions below the newest one visible at the oldest snapshot.
pub(crate) struct VisibleVersions {
    oldest_snapshot: SequenceNumber,
    range_dels: Arc<RangeTombstones>,
    filter: VersionFilter,
}

impl KeepRule for VisibleVersions {
    fn restart(&mut self) {
        self.filter = VersionFilter::new(self.oldest_snapshot, &self.range_dels);
    }

    fn keep(&mut self, internal_key: &[u8]) -> Result<bool> {
        Ok(self.filter.keep(internal_key, |_| false))
    }
}

/// A flush stream without the versions no reader can see.
pub(crate) type Filtered<I> = Forward<I, VisibleVersions>;

impl<I: InternalIterator> Filtered<I> {
    /// Drops versions below the newest one visible at `oldest_snapshot`, and those the range
    /// tombstones `range_dels` delete for every reader.
    pub fn new(
        inner: I,
        oldest_snapshot: SequenceNumber,
        range_dels: &Arc<RangeTombstones>,
    ) -> Self {
        let rule = VisibleVersions {
            oldest_snapshot,
            range_dels: range_dels.clone(),
            filter: VersionFilter::new(oldest_snapshot, range_dels),
        };
        Forward::with_rule(inner, rule)
    }
}

impl<I: InternalIterator, R: KeepRule> Forward<I, R> {
    /// `inner`, keeping what `rule` keeps.
    pub fn with_rule(inner: I, rule: R) -> Self {
        Forward {
            inner,
            rule,
            error: None,
        }
    }

    /// Skips entries the rule drops.
    fn settle(&mut self) {
        while self.error.is_none() && self.inner.valid() {
            match self.rule.keep(self.inner.key()) {
                Ok(true) => return,
                Ok(false) => self.inner.next(),
                Err(e) => self.error = Some(e),
            }
        }
    }

    fn restart(&mut self) {
        self.rule.restart();
        self.error = None;
    }

    fn refuse(&mut self, what: &str) {
        let msg = format!("{what} on a forward-only filtered stream");
        self.error = Some(Error::InvalidState(msg));
    }
}

impl<I: InternalIterator, R: KeepRule> InternalIterator for Forward<I, R> {
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
