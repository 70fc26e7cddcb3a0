//! The crate's error type.
//!
//! Every error that concerns bytes on PM or SSD names the file and the byte offset, so an operator can
//! find the damage (`flatlsm dump`/`check` take the same coordinates).

use std::path::PathBuf;
use std::sync::Arc;

/// Result alias used throughout the crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong in FlatLSM. New variants may be added (`#[non_exhaustive]`):
/// match the ones you handle and keep a catch-all arm.
///
/// ```
/// # fn main() {
/// let e = flatlsm_core::error::Error::corruption("/db/000012.sst", 4096, "bad block checksum");
/// assert!(e.is_corruption());
/// assert_eq!(
///     e.to_string(),
///     "corruption in /db/000012.sst at offset 4096: bad block checksum"
/// );
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system I/O call failed.
    #[error("I/O error while {context}: {source}")]
    Io {
        /// What the engine was doing (names the file where there is one).
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Persistent bytes failed validation (bad magic, checksum, length or encoding).
    #[error("corruption in {} at offset {offset}: {detail}", file.display())]
    Corruption {
        /// The damaged file.
        file: PathBuf,
        /// Byte offset of the damaged record or field.
        offset: u64,
        /// What was expected and what was found.
        detail: String,
    },
    /// The caller passed something the engine does not accept.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The database (or its PM directory) is in a state that does not allow the operation.
    #[error("{0}")]
    InvalidState(String),
    /// A background flush, compaction or GC failed earlier; writes are refused until reopen.
    /// The failure keeps its kind: match on the inner error (e.g. an `Io` error with
    /// `ErrorKind::StorageFull`, or a `Corruption` naming the file).
    #[error("database is in error state after a background failure (reads still work): {0}")]
    Background(Arc<Error>),
    /// Another process, or another handle in this one, holds the database's `LOCK` file.
    #[error("{detail}")]
    Locked {
        /// The database directory.
        path: PathBuf,
        /// The whole message: the database, who holds it, and what to do.
        detail: String,
    },
    /// The database was closed.
    #[error("database is closed")]
    Closed,
    /// The database was opened read-only (`Db::open_read_only`): writes, flushes and
    /// compactions are refused.
    #[error("database {} is open read-only", .0.display())]
    ReadOnly(PathBuf),
    /// A write with `WriteOptions::no_slowdown` (flatlsm) would have been delayed or would have
    /// waited for a free PMTable; nothing was written (RocksDB's `Status::Incomplete("Write
    /// stall")`). The message names the cause. Retrying later is safe.
    #[error("write stall: {0}")]
    WriteStall(String),
}

impl Error {
    /// Wraps an I/O error with a description of what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// Builds a corruption error for `file` at `offset`.
    pub fn corruption(file: impl Into<PathBuf>, offset: u64, detail: impl Into<String>) -> Self {
        Error::Corruption {
            file: file.into(),
            offset,
            detail: detail.into(),
        }
    }

    /// True when this error reports damaged persistent data.
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corruption { .. })
    }
}

/// Extension to attach context to `std::io::Result`.
pub trait IoContext<T> {
    /// Converts an I/O error into [`Error::Io`] with the given context.
    fn context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| Error::io(what(), e))
    }
}
