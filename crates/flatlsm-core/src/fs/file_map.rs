//! [`FileMap`]: a whole file mapped read-only into memory, so a read is a copy from the page
//! cache with no system call (RocksDB's `allow_mmap_reads`, Lucene's `MMapDirectory`).
//!
//! Only for files nobody changes while they are mapped: sealed value logs, which are never
//! written again and only ever deleted whole (a mapping keeps a deleted file's pages until it is
//! dropped). The trade-off, as for every mapped read: a truncation by another process or a
//! device error under the mapping arrives as `SIGBUS`, not as an `io::Error`; a damaged byte is
//! still caught by the record checksums readers verify on every read.

use crate::pm::raw::RawMapping;
use std::fs::File;
use std::io;

/// A read-only mapping of the first [`FileMap::len`] bytes of a file.
pub struct FileMap {
    raw: RawMapping,
}

impl std::fmt::Debug for FileMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileMap")
            .field("len", &self.raw.len())
            .finish()
    }
}

impl FileMap {
    /// Maps the first `len` bytes of `file` (`len > 0`), advising random access.
    pub(crate) fn new(file: &File, len: u64) -> io::Result<Self> {
        let len = usize::try_from(len).map_err(|_| io::Error::other("file too large to map"))?;
        Ok(FileMap {
            raw: RawMapping::map_file_for_reads(file, len)?,
        })
    }

    /// Bytes mapped.
    pub fn len(&self) -> u64 {
        self.raw.len() as u64
    }

    /// True if nothing is mapped (never: an empty file is not mapped).
    pub fn is_empty(&self) -> bool {
        self.raw.len() == 0
    }

    /// The `len` bytes at `offset`, or `None` if they reach past the mapping (the file may
    /// have grown since it was mapped: the caller reads them another way).
    pub fn get(&self, offset: u64, len: usize) -> Option<&[u8]> {
        let start = usize::try_from(offset).ok()?;
        let end = start.checked_add(len)?;
        (end <= self.raw.len()).then(|| self.raw.read(start, len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_mapped_file_reads_what_was_written_and_nothing_past_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::File::create(&path)
            .unwrap()
            .write_all(b"hello, mapped world")
            .unwrap();
        let file = File::open(&path).unwrap();
        let map = FileMap::new(&file, 19).unwrap();
        assert_eq!(map.len(), 19);
        assert_eq!(map.get(7, 6), Some(&b"mapped"[..]));
        assert_eq!(map.get(13, 6), Some(&b" world"[..]));
        assert_eq!(map.get(14, 6), None, "past the end");
        assert_eq!(map.get(u64::MAX, 1), None);
        assert!(
            FileMap::new(&file, 0).is_err(),
            "an empty mapping is refused"
        );
    }
}
