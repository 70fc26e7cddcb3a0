//! File I/O for the SSD tier (SSTables, value logs, manifest) goes through these traits so tests
//! can inject faults and simulate a crash that drops unsynced data.
//!
//! Large sequential outputs (value logs) are written through a [`DirectFile`]: whole aligned
//! blocks that bypass the page cache where the platform allows (O_DIRECT), driven by a
//! [`DirectWriter`] (aligned double buffers, an I/O thread, the padded tail).
//!
//! [`OverlayFs`] is a copy-on-write view of another file system: a database opened read-only
//! runs its usual open (new manifest, clean-up) against it and changes nothing on disk.
//!
//! Thread-safety: a [`FileSystem`], a [`RandomAccessFile`] and a [`DirectFile`] are shared
//! between threads; a [`WritableFile`] has one owner at a time.

#[cfg(any(test, feature = "test-support"))]
mod crash_fs;
mod direct_writer;
#[cfg(any(test, feature = "test-support"))]
mod fault;
#[cfg(any(test, feature = "test-support"))]
mod fault_plan;
mod file_map;
mod os;
mod overlay;
mod read_ahead;
mod retired;

#[cfg(any(test, feature = "test-support"))]
pub use crash_fs::{CallHook, CrashFs, FsCall, FsImage, PAGE_SIZE};
pub use direct_writer::DirectWriter;
#[cfg(any(test, feature = "test-support"))]
pub use fault::FaultFs;
#[cfg(any(test, feature = "test-support"))]
pub use fault_plan::{FaultKind, FaultPlan};
pub use file_map::FileMap;
pub use os::OsFileSystem;
pub use overlay::OverlayFs;
pub use read_ahead::ReadAhead;
pub use retired::Retired;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A file being written sequentially (SSTable, value log, manifest).
pub trait WritableFile: Send {
    /// Appends bytes (may be buffered until [`WritableFile::flush`] or [`WritableFile::sync`]).
    fn append(&mut self, data: &[u8]) -> io::Result<()>;
    /// Hands buffered bytes to the operating system (survives a process crash, not a power loss).
    fn flush(&mut self) -> io::Result<()>;
    /// Makes everything appended so far durable (fdatasync).
    fn sync(&mut self) -> io::Result<()>;
    /// Bytes appended so far.
    fn len(&self) -> u64;
    /// True if nothing was appended.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A file read at arbitrary offsets, shared between threads.
pub trait RandomAccessFile: Send + Sync {
    /// Reads exactly `buf.len()` bytes at `offset`; an `UnexpectedEof` error past the end.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    /// Current size of the file in bytes.
    fn size(&self) -> io::Result<u64>;
    /// Tells the OS that reads will be random (no readahead), as RocksDB's
    /// `advise_random_on_open` does. Point reads of 4 KB values otherwise each pull in the
    /// device's whole readahead window (8 MiB on the test machine). Default: nothing.
    fn advise_random(&self) -> io::Result<()> {
        Ok(())
    }
    /// Tells the OS that `len` bytes at `offset` will be read soon, so it can start reading
    /// them from the device now (`posix_fadvise(WILLNEED)`): a scan hints the values it will
    /// reach, and the device serves the hints in parallel. A hint only; default: nothing.
    fn will_need(&self, offset: u64, len: u64) -> io::Result<()> {
        let _ = (offset, len);
        Ok(())
    }
    /// The file mapped read-only into memory ([`FileMap`]) for reads without a system call,
    /// for a file nobody changes while it is mapped; `Ok(None)` where this file system does
    /// not map files (the default: test file systems, whose faults only reads can show) or
    /// the file is empty.
    fn map(&self) -> io::Result<Option<FileMap>> {
        Ok(None)
    }
}

/// Alignment of every [`DirectFile::write_at`]: file offset, length and buffer address are
/// multiples of it. O_DIRECT needs the device's logical block size; 4 KiB covers every common
/// device (512-byte and 4 KiB sectors).
pub const DIRECT_ALIGN: usize = 4096;

/// A file written in whole aligned blocks, bypassing the page cache where the platform allows
/// (O_DIRECT). [`DirectWriter`] turns it into a sequential [`WritableFile`].
pub trait DirectFile: Send + Sync {
    /// Writes `data` at `offset` (both multiples of [`DIRECT_ALIGN`], `data` at an aligned
    /// address), overwriting what is there and extending the file if needed.
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()>;
    /// Sets the file's length (cuts the zero padding after the last real byte).
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// Makes the written blocks and the length durable (fdatasync).
    fn sync(&self) -> io::Result<()>;
    /// True if writes bypass the page cache; false for buffered files (direct I/O not asked
    /// for or refused by the file system, e.g. tmpfs; in-memory test file systems).
    fn is_direct(&self) -> bool;
    /// Asks the platform to read `[offset, offset + len)`, just written, back into the page
    /// cache in the background (a hint: reads stay correct without it). Direct writes leave
    /// the page cache without the data; this puts it back by DMA, without the CPU copy a
    /// buffered write costs. The default does nothing.
    fn cache_written(&self, offset: u64, len: u64) -> io::Result<()> {
        let _ = (offset, len);
        Ok(())
    }
    /// For a buffered file: starts writing `[offset, offset + len)`, just written, to the
    /// device, and waits for the write-back started earlier below `offset -`
    /// [`WRITE_BEHIND_LAG`]. The data stays in the page cache (clean), dirty pages stay
    /// bounded to about the lag and one buffer, and the final `sync` finds little left to
    /// write. A hint: durability still comes from `sync`. Direct
    /// files and the default do nothing.
    fn write_behind(&self, offset: u64, len: u64) -> io::Result<()> {
        let _ = (offset, len);
        Ok(())
    }
}

/// Bytes below a write-behind range whose write-back may still be under way when the next
/// range is handed to the device ([`DirectFile::write_behind`]): the device's queue holds
/// several buffers while the writer copies the next one, instead of draining between buffers.
pub const WRITE_BEHIND_LAG: u64 = 8 << 20;

/// The directory-level operations the engine needs.
pub trait FileSystem: Send + Sync + 'static {
    /// Creates a directory and its parents.
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Creates (or truncates) a file for writing.
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>>;
    /// Creates (or truncates) a file for block writes; with `direct`, asks the platform to
    /// bypass the page cache and silently falls back to buffered writes where it refuses
    /// ([`DirectFile::is_direct`] tells which). Test file systems give an ordinary file.
    fn create_direct(&self, path: &Path, direct: bool) -> io::Result<Arc<dyn DirectFile>>;
    /// Opens an existing file for appending (used to continue a manifest).
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>>;
    /// Opens an existing file for random reads.
    fn open(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>>;
    /// Reads a whole (small) file.
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// Atomically renames `from` to `to` (replacing `to`).
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// The names (not paths) of the entries of a directory.
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>>;
    /// True if the path exists.
    fn exists(&self, path: &Path) -> bool;
    /// Makes the directory's entries (creates, renames, removes) durable.
    fn sync_dir(&self, path: &Path) -> io::Result<()>;
}

/// Shared handle to a file system implementation.
pub type FsRef = Arc<dyn FileSystem>;

/// Writes `data` to `path` durably and atomically: temp file, sync, rename, sync directory.
pub fn write_file_atomic(fs: &dyn FileSystem, path: &Path, data: &[u8]) -> io::Result<()> {
    let tmp = tmp_path(path);
    let mut f = fs.create(&tmp)?;
    f.append(data)?;
    f.sync()?;
    drop(f);
    fs.rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        fs.sync_dir(dir)?;
    }
    Ok(())
}

/// Where `path` is written before the rename that commits it (`<path>.tmp`; open removes
/// leftovers).
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}
