//! Where a value pointer's record lives in one version.
//!
//! Value-log GC does not rewrite SSTables: it copies the live records of a log V into a new log
//! N and records the move in a redirect table (`vlog::redirect`), named in the version
//! (`Version::redirects`). A pointer into V is therefore translated through V's table before the
//! value is read (reads, iterators), and rewritten to N when flush or compaction copies it into
//! a new SSTable (`compaction::output`), so new SSTables never name V.
//!
//! Invariant (value-log GC, docs/design-decisions.md): in a version, every pointer into a
//! redirected log has an entry in its table; a pointer without one is `Corruption` naming the
//! log and offset. A pointer into a log the version does not redirect is read as is: its log is
//! live in that version, so its file exists while the version is held.
//!
//! Point reads keep the values they read in the block cache ([`read_value`], with
//! `Options::value_cache`): a value read again is served from memory without a read of its
//! log. Scans read the logs directly, so one long scan does not push the point reads' values
//! out, through each cursor's read-ahead windows (`fs::ReadAhead`): a flush writes a table's
//! values in key order, so a scan's values mostly follow each other in a few logs.
//!
//! Thread-safety: a [`ValueLocator`] is immutable and shared (`Send + Sync`).

use crate::error::Result;
use crate::fs::ReadAhead;
use crate::iter::ValueResolver;
use crate::sst::{Block, BlockCache};
use crate::types::ValuePointer;
use crate::version::Version;
use crate::vlog::{RedirectSet, VlogSet};
use std::sync::Arc;

/// Resolves pointers as `version` sees them.
pub(crate) struct ValueLocator {
    version: Arc<Version>,
    vlogs: Arc<VlogSet>,
    redirects: Arc<RedirectSet>,
}

impl ValueLocator {
    /// A locator for `version` (which it keeps alive, and with it the files it names) over the
    /// database's open value logs and loaded redirect tables.
    pub fn new(version: Arc<Version>, vlogs: Arc<VlogSet>, redirects: Arc<RedirectSet>) -> Self {
        ValueLocator {
            version,
            vlogs,
            redirects,
        }
    }

    /// The record's pointer now: `ptr` itself, or its translation if its log is redirected.
    pub fn locate(&self, ptr: &ValuePointer) -> Result<ValuePointer> {
        locate(&self.version, &self.redirects, ptr)
    }
}

/// Where `ptr`'s record is as `version` sees it (through `redirects`' tables): for a read that
/// holds its version already and needs no locator of its own.
pub(crate) fn locate(
    version: &Version,
    redirects: &RedirectSet,
    ptr: &ValuePointer,
) -> Result<ValuePointer> {
    match version.redirects.get(&ptr.file_number) {
        None => Ok(*ptr),
        Some(r) => redirects.get(r.number)?.translate(ptr),
    }
}

/// The value of the record at `at` (a located pointer): from `cache` if it holds it, else
/// read from its log and kept in `cache` (when one is given).
pub(crate) fn read_value(
    vlogs: &VlogSet,
    cache: Option<&BlockCache>,
    at: &ValuePointer,
) -> Result<Vec<u8>> {
    let Some(cache) = cache else {
        return vlogs.read_value(at);
    };
    if let Some(hit) = cache.get_value(at.file_number, at.offset) {
        return Ok(hit.value(0).to_vec());
    }
    let value = vlogs.read_value(at)?;
    let cached = Arc::new(Block::single_value(value.clone()));
    cache.insert_value(at.file_number, at.offset, cached);
    Ok(value)
}

impl ValueResolver for ValueLocator {
    fn resolve(&self, ptr: &ValuePointer) -> Result<Vec<u8>> {
        self.vlogs.read_value(&self.locate(ptr)?)
    }

    fn resolve_ahead(&self, ptr: &ValuePointer, ahead: &mut ReadAhead) -> Result<Vec<u8>> {
        self.vlogs.read_value_ahead(&self.locate(ptr)?, ahead)
    }

    fn prefetch(&self, ptr: &ValuePointer) -> bool {
        match self.locate(ptr) {
            Ok(at) => self.vlogs.prefetch(&at),
            Err(_) => false,
        }
    }
}
