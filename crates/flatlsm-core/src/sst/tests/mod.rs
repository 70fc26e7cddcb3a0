//! Scenario tests for the SSTable module, over in-memory files (and the OS file system for the
//! table cache). Helpers here build tables from sorted entry lists and read them back.

mod batch_get;
mod cache;
mod compression;
mod corruption;
mod model;
mod offsets;
mod reverse;
mod roundtrip;
mod seek_get;

use super::{Table, TableBuildOptions, TableBuilder, TableSummary};
use crate::error::Error;
use crate::fs::{RandomAccessFile, WritableFile};
use crate::iter::InternalIterator;
use crate::sst::BlockCache;
use crate::types::{make_internal_key, ValueKind};
use parking_lot::Mutex;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// (internal key, value) pairs.
pub(super) type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// A writable file appending to a shared in-memory buffer; fails once `fail_after` bytes are hit.
pub(super) struct MemWritable {
    pub(super) buf: Arc<Mutex<Vec<u8>>>,
    pub(super) fail_after: Option<usize>,
    pub(super) synced: Arc<Mutex<bool>>,
}

impl WritableFile for MemWritable {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        let mut b = self.buf.lock();
        if self.fail_after.is_some_and(|n| b.len() + data.len() > n) {
            return Err(io::Error::other("injected write failure"));
        }
        b.extend_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        *self.synced.lock() = true;
        Ok(())
    }
    fn len(&self) -> u64 {
        self.buf.lock().len() as u64
    }
}

/// A read-only in-memory file.
pub(super) struct MemFile(pub(super) Vec<u8>);

impl RandomAccessFile for MemFile {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let start = usize::try_from(offset).map_err(|_| io::ErrorKind::UnexpectedEof)?;
        let src = start
            .checked_add(buf.len())
            .and_then(|end| self.0.get(start..end))
            .ok_or(io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(src);
        Ok(())
    }
    fn size(&self) -> io::Result<u64> {
        Ok(self.0.len() as u64)
    }
}

/// The path every in-memory test table pretends to live at.
pub(super) fn test_path() -> PathBuf {
    PathBuf::from("/db/000007.sst")
}

/// An internal key for a value.
pub(super) fn ik(user: &[u8], seq: u64) -> Vec<u8> {
    make_internal_key(user, seq, ValueKind::Value)
}

/// Builds a table from sorted entries; returns its bytes and summary.
pub(super) fn build(
    entries: &[(Vec<u8>, Vec<u8>)],
    opts: TableBuildOptions,
) -> (Vec<u8>, TableSummary) {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let synced = Arc::new(Mutex::new(false));
    let file = MemWritable {
        buf: buf.clone(),
        fail_after: None,
        synced: synced.clone(),
    };
    let mut b = TableBuilder::new(Box::new(file), test_path(), opts);
    for (k, v) in entries {
        b.add(k, v).unwrap();
    }
    assert_eq!(b.num_entries(), entries.len() as u64);
    let summary = b.finish().unwrap();
    assert!(*synced.lock(), "finish must sync the file");
    let bytes = buf.lock().clone();
    assert_eq!(summary.file_size, bytes.len() as u64);
    (bytes, summary)
}

/// Opens in-memory table bytes.
pub(super) fn open(bytes: Vec<u8>, cache: Option<Arc<BlockCache>>) -> crate::Result<Arc<Table>> {
    let size = bytes.len() as u64;
    Table::open(Arc::new(MemFile(bytes)), test_path(), 7, size, cache)
}

/// Every entry from `seek_to_first` on, plus the iterator's final status.
pub(super) fn scan(table: &Arc<Table>) -> (Entries, crate::Result<()>) {
    let mut it = table.iter();
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    (out, it.status())
}

/// Asserts `e` is a corruption error naming `path`.
pub(super) fn assert_corruption_at(e: &Error, path: &Path) {
    match e {
        Error::Corruption { file, .. } => assert_eq!(file, path, "{e}"),
        other => panic!("expected corruption in {}, got {other}", path.display()),
    }
}

#[test]
fn shared_types_are_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    fn owned<T: Send>() {}
    shared::<Table>();
    shared::<crate::sst::Block>();
    shared::<BlockCache>();
    shared::<crate::sst::TableCache>();
    owned::<crate::sst::TableIterator>();
    owned::<TableBuilder>();
}
