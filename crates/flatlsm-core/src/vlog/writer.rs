//! [`VlogWriter`]: appends records to a new value-log file.
//!
//! The file is written through a [`DirectWriter`]: large aligned buffers, written by an I/O
//! thread while the caller fills the next one, with O_DIRECT unless turned off or refused (then
//! through the page cache; [`VlogWriter::is_direct`] tells which). The writer cuts the zero
//! padding of the last block on every sync, so a finished log holds exactly its header and
//! records (docs/vlog-format.md).
//!
//! Durability: appended records are buffered; they are durable only after [`VlogWriter::sync`] or
//! [`VlogWriter::finish`]. The engine must finish a value log before a manifest edit that refers to
//! it (or to SSTs pointing into it) is written. The directory entry is synced at creation.
//!
//! Thread-safety: `Send`, one owner. After an I/O error the writer refuses further appends, since
//! the file's tail is unknown.

use super::record::{encode_header, encode_record_header, record_len};
use super::vlog_file_name;
use crate::error::{Error, IoContext, Result};
use crate::fs::{DirectWriter, FileSystem, WritableFile};
use crate::types::ValuePointer;
use std::path::{Path, PathBuf};

/// How a value log is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VlogIo {
    /// Bypass the page cache where the file system allows it (O_DIRECT).
    pub direct: bool,
    /// With `direct`, have the platform read each written buffer back into the page cache in
    /// the background (see [`DirectWriter::caching_written`]).
    pub cache_written: bool,
}

/// Writes one value-log file sequentially.
pub struct VlogWriter {
    file: DirectWriter,
    path: PathBuf,
    number: u64,
    failed: bool,
}

impl std::fmt::Debug for VlogWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VlogWriter")
            .field("path", &self.path)
            .field("len", &self.file.len())
            .finish()
    }
}

impl VlogWriter {
    /// Creates (or truncates) `dir/{number:06}.vlog`, writes the header and syncs the directory.
    /// `io` says whether writes bypass the page cache and whether they are read back into it.
    pub fn create(fs: &dyn FileSystem, dir: &Path, number: u64, io: VlogIo) -> Result<Self> {
        let path = dir.join(vlog_file_name(number));
        let file = fs
            .create_direct(&path, io.direct)
            .context(|| format!("creating {}", path.display()))?;
        let mut file = DirectWriter::new(file).caching_written(io.cache_written);
        file.append(&encode_header())
            .context(|| format!("writing header of {}", path.display()))?;
        fs.sync_dir(dir)
            .context(|| format!("syncing directory {}", dir.display()))?;
        Ok(VlogWriter {
            file,
            path,
            number,
            failed: false,
        })
    }

    /// Appends one record and returns the pointer to it. [`Error::InvalidArgument`] if the
    /// record would exceed 4 GiB; [`Error::InvalidState`] after an earlier I/O error.
    pub fn append(&mut self, key: &[u8], value: &[u8]) -> Result<ValuePointer> {
        self.check_usable()?;
        let record_len = record_len(key.len(), value.len()).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "value-log record (key {} bytes, value {} bytes) exceeds 4 GiB",
                key.len(),
                value.len()
            ))
        })?;
        let ptr = ValuePointer {
            file_number: self.number,
            offset: self.file.len(),
            value_len: value.len() as u32,
            record_len,
        };
        let header = encode_record_header(key, value);
        let res = self
            .file
            .append(&header)
            .and_then(|()| self.file.append(key))
            .and_then(|()| self.file.append(value));
        self.track(res)?;
        Ok(ptr)
    }

    /// Makes every record appended so far durable.
    pub fn sync(&mut self) -> Result<()> {
        self.check_usable()?;
        let res = self.file.sync();
        self.track(res)
    }

    /// The file number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// Bytes written so far, including the file header.
    pub fn len(&self) -> u64 {
        self.file.len()
    }

    /// True if the file bypasses the page cache (O_DIRECT asked for and accepted).
    pub fn is_direct(&self) -> bool {
        self.file.is_direct()
    }

    /// True if no record was appended yet.
    pub fn is_empty(&self) -> bool {
        self.file.len() <= super::record::VLOG_HEADER_LEN
    }

    /// Syncs the file and returns its size in bytes.
    pub fn finish(mut self) -> Result<u64> {
        self.sync()?;
        Ok(self.file.len())
    }

    fn check_usable(&self) -> Result<()> {
        if self.failed {
            return Err(Error::InvalidState(format!(
                "value log {} failed earlier",
                self.path.display()
            )));
        }
        Ok(())
    }

    fn track(&mut self, res: std::io::Result<()>) -> Result<()> {
        if res.is_err() {
            self.failed = true;
        }
        res.context(|| format!("writing {}", self.path.display()))
    }
}
