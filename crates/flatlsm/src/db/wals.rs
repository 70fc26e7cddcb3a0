//! [`Wals`]: the write-ahead logs of a design whose write buffers live in DRAM (`leveled`,
//! `matrixkv`), behind one type, as pebble's WAL manager: the log the mutable buffer appends
//! to, its roll to a new log when the buffer is sealed, sync and seal, and which logs of the
//! WAL directory are obsolete. Designs without a WAL hold an empty one (every call a no-op).
//!
//! Life of a log (docs/wal-format.md): created and synced before the manifest names it (by
//! recovery for the first log of an open, by [`Wals::roll`] after), appended to under the
//! write lock, synced when a write asks or before the next log starts (so only the newest log
//! can have an unsynced tail: the recovery rule of `recovery/wal_rules.rs`), sealed at close,
//! and deleted by the purge once its buffer's flush is installed ([`Wals::remove_stale`]).
//! At open, recovery judges the logs (`recovery/wal_recovery.rs`) and `buffer/recover/wal.rs`
//! replays those it keeps.
//!
//! Thread-safety: the current log sits behind a leaf mutex; callers that append or roll hold
//! the database's write lock.

use crate::error::Result;
use crate::fs::FileSystem;
use crate::layout::wal_files;
use crate::types::{SequenceNumber, ValueKind};
use crate::wal::WalWriter;
use parking_lot::Mutex;
use std::path::{Path, PathBuf};

/// The write-ahead logs of one open database.
pub(crate) struct Wals {
    /// `Options::wal_dir`, default the database directory.
    dir: PathBuf,
    /// The log of the mutable write buffer (`None`: a design without one).
    current: Mutex<Option<WalWriter>>,
}

impl Wals {
    /// The logs in `dir`, appending to `current` (recovery created it; `None` for a design
    /// without a WAL).
    pub fn new(dir: PathBuf, current: Option<WalWriter>) -> Wals {
        Wals {
            dir,
            current: Mutex::new(current),
        }
    }

    /// Appends one batch (`first` is its first sequence number), synced first if `sync`.
    pub fn log_batch<'a>(
        &self,
        first: SequenceNumber,
        entries: impl ExactSizeIterator<Item = (ValueKind, &'a [u8], &'a [u8])>,
        sync: bool,
    ) -> Result<()> {
        match self.current.lock().as_mut() {
            Some(w) => w.add_batch(first, entries, sync),
            None => Ok(()),
        }
    }

    /// Makes every write in the current log durable.
    pub fn sync(&self) -> Result<()> {
        self.current.lock().as_mut().map_or(Ok(()), WalWriter::sync)
    }

    /// Syncs and seals the current log (close): its seal record attests that every byte
    /// before it was synced, so damage there is refused, not dropped as a torn tail.
    pub fn seal(&self) -> Result<()> {
        self.current.lock().as_mut().map_or(Ok(()), WalWriter::seal)
    }

    /// Starts the log of write buffer `number` after syncing the current one; its marker
    /// records `after`, the last sequence handed out. Nothing for a design without a WAL.
    pub fn roll(&self, fs: &dyn FileSystem, number: u64, after: SequenceNumber) -> Result<()> {
        let mut current = self.current.lock();
        let Some(old) = current.as_mut() else {
            return Ok(());
        };
        old.sync()?;
        *current = Some(WalWriter::create(fs, &self.dir, number, after)?);
        Ok(())
    }

    /// The names in the WAL directory when it is not `db_dir` (where the purge sees the logs
    /// among the database's files) and the design has logs; listed *before* the purge collects
    /// the live numbers, so a log created meanwhile is not taken for stale.
    pub fn list_separate(&self, fs: &dyn FileSystem, db_dir: &Path) -> Result<Vec<String>> {
        let separate = self.current.lock().is_some() && self.dir != db_dir;
        match separate {
            true => wal_files::list_wals(fs, &self.dir),
            false => Ok(Vec::new()),
        }
    }

    /// Removes the logs among `names` (from [`Wals::list_separate`]) no number in `live` owns.
    pub fn remove_stale(&self, fs: &dyn FileSystem, names: &[String], live: &[u64]) -> Result<()> {
        wal_files::remove_stale_wals(fs, &self.dir, names, live)
    }
}
