//! Opening a database (LevelDB's recovery, `DB::Open`): the lock, the manifest, the write
//! buffers by kind, the design's store, and the checks that the recovered state matches the
//! files present; then the clean-up of what an interrupted job left behind.
//!
//! This room decides; it does not replay. For each kind of write buffer it judges what the
//! manifest names against what is present — what is refused, kept, removed — and hands what it
//! keeps to `buffer::recover::rebuild` (`buffer/recover/`: PM Logs mapped in place, write-ahead
//! logs replayed into DRAM tables, PM skiplists recovered in place), which applies
//! none of the rules.
//!
//! Room: `open.rs` (the two phases of open), `consistency.rs` (the rule book open, `check` and
//! repair share), the decisions per buffer kind (`pm_log_recovery.rs`; `wal_recovery.rs` with
//! the hole rules of `wal_rules.rs`, and the sealing of the logs kept; `skiplist_recovery.rs`),
//! `open_stores.rs` (block cache, read-only views), `dirs.rs` (the orphan purge). Layering:
//! above `db` (it builds the state the handle runs on) and below `repair` and `inspect`, which
//! apply its rules.

pub(crate) mod consistency;
mod dirs;
mod open;
mod open_stores;
mod pm_log_recovery;
pub(crate) mod pm_log_replay;
pub(crate) mod skiplist_recovery;
pub(crate) mod wal_recovery;
pub(crate) mod wal_rules;
#[cfg(test)]
mod wal_rules_tests;

pub(crate) use open::new_state;
pub use open::{is_database_file_name, is_pm_dir_file_name};

use crate::db::Db;
use crate::error::Result;
use crate::options::Options;
use std::path::Path;

impl Db {
    /// Opens (or creates) the database at `path`, recovering PMTables in place from PM.
    pub fn open(path: impl AsRef<Path>, opts: Options) -> Result<Db> {
        Self::open_with(path.as_ref(), opts, open::Access::ReadWrite)
    }

    /// Opens an existing database for reading only: nothing in its directory or its PM
    /// directory is written (no new PM Log, no manifest record, no clean-up), and any number
    /// of read-only handles, in any processes, may be open at once — but not beside a writer
    /// ([`Error::Locked`](crate::Error::Locked)). It sees the database as a reopen after a crash would: recovery runs
    /// against copy-on-write views whose changes stay in memory. Writes, `flush` and
    /// `compact_range` return [`Error::ReadOnly`](crate::Error::ReadOnly).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let opts = flatlsm::Options::default().pm_path(dir.path().join("pm"));
    /// # let path = dir.path().join("db");
    /// let db = flatlsm::Db::open(&path, opts.clone())?;
    /// db.put("k", "v")?;
    /// db.close()?;
    /// let reader = flatlsm::Db::open_read_only(&path, opts.clone())?;
    /// let another = flatlsm::Db::open_read_only(&path, opts)?;
    /// assert_eq!(reader.get("k")?.as_deref(), Some(&b"v"[..]));
    /// assert!(matches!(another.put("k", "w"), Err(flatlsm::Error::ReadOnly(_))));
    /// # Ok::<(), flatlsm::Error>(())
    /// ```
    pub fn open_read_only(path: impl AsRef<Path>, opts: Options) -> Result<Db> {
        Self::open_with(path.as_ref(), opts, open::Access::ReadOnly)
    }

    fn open_with(path: &Path, opts: Options, access: open::Access) -> Result<Db> {
        let (inner, lock) = open::open(path, opts, access)?;
        let threads = crate::jobs::background::start(&inner);
        Ok(Db::from_parts(inner, lock, threads))
    }
}
