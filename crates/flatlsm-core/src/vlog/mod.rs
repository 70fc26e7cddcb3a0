//! Value logs for key-value separation (paper §4.4).
//!
//! Flush and compaction write each key with a [`ValuePointer`] into the SSTables and the key-value
//! pair itself into a value log, so compactions rewrite keys, not values.
//!
//! File `{number:06}.vlog` (see `docs/vlog-format.md`):
//! - header, 16 bytes: magic `b"FLATVLOG"` | format version u32 LE = 1 | reserved u32 LE = 0;
//! - records: `crc32c u32 LE (over everything after it) | key_len u32 LE | value_len u32 LE |
//!   key | value`.
//!
//! A [`ValuePointer`] addresses a record's first byte; `record_len = 12 + key_len + value_len`.
//! Value logs are append-only and immutable once finished; they are deleted whole (by value-log
//! GC through a manifest edit), never rewritten in place. Value-log GC copies a log's live
//! records into a new log and records where each went in a [`RedirectTable`] (`redirect`),
//! through which pointers into the old log are translated.
//!
//! Thread-safety: [`VlogWriter`] is `Send` with one owner; [`VlogReader`] and [`VlogSet`] are
//! `Send + Sync` and shared by all readers of the database.

mod reader;
mod record;
pub mod redirect;
mod writer;

#[cfg(test)]
mod redirect_tests;
#[cfg(test)]
mod tests;

pub use reader::VlogReader;
pub use record::{
    check_header, decode_record, RECORD_HEADER_LEN, VLOG_FORMAT_VERSION, VLOG_HEADER_LEN,
    VLOG_MAGIC,
};
pub use redirect::{RedirectEntry, RedirectSet, RedirectTable};
pub use writer::{VlogIo, VlogWriter};

use crate::error::Result;
pub use crate::file_names::{parse_vlog_file_name, vlog_file_name};
use crate::fs::{FileSystem, ReadAhead, Retired};
use crate::types::ValuePointer;
use arc_swap::ArcSwap;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Open readers by file number, shared by all readers of the database.
///
/// Readers are opened on first use and kept until [`VlogSet::evict`] (call it before deleting the
/// file). A read takes no lock and touches no shared reference count: the map is replaced
/// whole (copy on write, under `update`) when a reader is added or evicted, which happens once
/// per log, and read through an `arc_swap` guard. Opening happens outside the lock; two threads
/// racing to open the same file keep the first reader inserted.
///
/// Invariant: an evicted reader is closed by [`VlogSet::close_retired`], never by a reader
/// thread (why: [`Retired`]).
pub struct VlogSet {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    readers: ArcSwap<HashMap<u64, Arc<VlogReader>>>,
    update: Mutex<()>,
    /// Evicted readers, until no one else holds them.
    retired: Retired<VlogReader>,
    /// Readers map their files for point reads ([`VlogReader::open_mapped`]).
    mapped_reads: bool,
}

impl std::fmt::Debug for VlogSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VlogSet")
            .field("dir", &self.dir)
            .field("open", &self.readers.load().len())
            .finish()
    }
}

impl VlogSet {
    /// An empty set over the value logs in `dir`.
    pub fn new(fs: Arc<dyn FileSystem>, dir: PathBuf) -> Self {
        VlogSet {
            fs,
            dir,
            readers: ArcSwap::from_pointee(HashMap::new()),
            update: Mutex::new(()),
            retired: Retired::default(),
            mapped_reads: false,
        }
    }

    /// Has the readers it opens map their files for point reads (`VlogReader::open_mapped`).
    pub fn with_mapped_reads(mut self, mapped: bool) -> Self {
        self.mapped_reads = mapped;
        self
    }

    /// The reader of value log `number` for point reads (no readahead), opening it if needed.
    /// Sequential readers (value-log GC) open their own [`VlogReader`] instead.
    pub fn reader(&self, number: u64) -> Result<Arc<VlogReader>> {
        if let Some(r) = self.readers.load().get(&number) {
            return Ok(Arc::clone(r));
        }
        let opened = match self.mapped_reads {
            true => VlogReader::open_mapped(&*self.fs, &self.dir, number)?,
            false => VlogReader::open(&*self.fs, &self.dir, number)?,
        };
        let opened = Arc::new(opened);
        opened.advise_random();
        Ok(self.change(|map| Arc::clone(map.entry(number).or_insert(opened))))
    }

    /// Reads the value `ptr` addresses, through the reader of its file.
    pub fn read_value(&self, ptr: &ValuePointer) -> Result<Vec<u8>> {
        if let Some(r) = self.readers.load().get(&ptr.file_number) {
            return r.read_value(ptr);
        }
        self.reader(ptr.file_number)?.read_value(ptr)
    }

    /// Reads the value `ptr` addresses through a scan's read-ahead windows
    /// ([`VlogReader::read_value_ahead`]).
    pub fn read_value_ahead(&self, ptr: &ValuePointer, ahead: &mut ReadAhead) -> Result<Vec<u8>> {
        if let Some(r) = self.readers.load().get(&ptr.file_number) {
            return r.read_value_ahead(ptr, ahead);
        }
        self.reader(ptr.file_number)?.read_value_ahead(ptr, ahead)
    }

    /// Starts loading the record `ptr` addresses into the CPU cache if its log is open and
    /// mapped ([`VlogReader::hint_mapped`]); nothing otherwise.
    pub fn hint_mapped(&self, ptr: &ValuePointer) {
        if let Some(r) = self.readers.load().get(&ptr.file_number) {
            r.hint_mapped(ptr);
        }
    }

    /// Hints that the value `ptr` addresses will be read soon ([`VlogReader::prefetch`]):
    /// true when the hint went to the device. A log that cannot be opened is left to the read
    /// that follows to report.
    pub fn prefetch(&self, ptr: &ValuePointer) -> bool {
        match self.reader(ptr.file_number) {
            Ok(reader) => reader.prefetch(ptr),
            Err(_) => false,
        }
    }

    /// Applies `f` to a copy of the map and publishes the copy.
    fn change<T>(&self, f: impl FnOnce(&mut HashMap<u64, Arc<VlogReader>>) -> T) -> T {
        let _g = self.update.lock();
        let mut map = HashMap::clone(&self.readers.load());
        let out = f(&mut map);
        self.readers.store(Arc::new(map));
        out
    }

    /// Forgets the reader of value log `number` (in-flight users keep their `Arc`); its handle
    /// stays open until [`VlogSet::close_retired`] finds no one using it.
    pub fn evict(&self, number: u64) {
        if let Some(reader) = self.change(|map| map.remove(&number)) {
            self.retired.push(reader);
        }
    }

    /// Closes the evicted readers no one uses any more (call it from a background thread after
    /// deleting files); returns how many are still in use.
    pub fn close_retired(&self) -> usize {
        self.retired.close_unused()
    }
}
