//! The `wal` target: a write-ahead log replayed as recovery replays it (`wal::replay`), through
//! a file system holding just that file.

use super::{inconsistent, path, u64_at};
use crate::error::Result;
use crate::fs::{DirectFile, FileSystem, RandomAccessFile, WritableFile};
use crate::wal::replay;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// A whole log; its number is the one its header names (so only the bytes after it matter).
/// Every entry handed to the replay's callback is counted against what the replay reports.
pub(super) fn wal(data: &[u8]) -> Result<()> {
    let fs = OneFile(data.to_vec());
    let (mut entries, mut max_seq) = (0u64, 0u64);
    let replayed = replay(&fs, path("wal"), u64_at(data, 8), |seq, _, key, value| {
        entries += 1;
        max_seq = max_seq.max(seq);
        std::hint::black_box((key, value));
        Ok(())
    })?;
    if (replayed.entries, replayed.max_sequence) != (entries, max_seq) {
        let what = format!("reported {replayed:?} after {entries} entries up to {max_seq}");
        return Err(inconsistent("wal", what));
    }
    Ok(())
}

/// A read-only file system whose every file holds the same bytes (the replay reads one).
struct OneFile(Vec<u8>);

fn unsupported() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "the fuzz file system only reads",
    )
}

impl FileSystem for OneFile {
    fn create_dir_all(&self, _: &Path) -> io::Result<()> {
        Err(unsupported())
    }
    fn create(&self, _: &Path) -> io::Result<Box<dyn WritableFile>> {
        Err(unsupported())
    }
    fn create_direct(&self, _: &Path, _: bool) -> io::Result<Arc<dyn DirectFile>> {
        Err(unsupported())
    }
    fn open_append(&self, _: &Path) -> io::Result<Box<dyn WritableFile>> {
        Err(unsupported())
    }
    fn open(&self, _: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        Ok(Arc::new(super::MemFile(self.0.clone())))
    }
    fn read_all(&self, _: &Path) -> io::Result<Vec<u8>> {
        Ok(self.0.clone())
    }
    fn rename(&self, _: &Path, _: &Path) -> io::Result<()> {
        Err(unsupported())
    }
    fn remove_file(&self, _: &Path) -> io::Result<()> {
        Err(unsupported())
    }
    fn list_dir(&self, _: &Path) -> io::Result<Vec<String>> {
        Err(unsupported())
    }
    fn exists(&self, _: &Path) -> bool {
        true
    }
    fn sync_dir(&self, _: &Path) -> io::Result<()> {
        Err(unsupported())
    }
}
