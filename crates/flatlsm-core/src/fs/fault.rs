//! [`FaultFs`]: the OS file system with switchable faults, for tests of error handling
//! (a failing manifest or value-log write, a disk that fills up under a flush).
//!
//! Thread-safety: the switches are atomics; flip them from any thread while the engine runs.

use super::{DirectFile, FileSystem, OsFileSystem, RandomAccessFile, WritableFile};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The OS file system, failing on demand.
#[derive(Default)]
pub struct FaultFs {
    /// While set, every `append`/`flush`/`sync` (and every direct file's `write_at`/`set_len`/
    /// `sync`) of a file this file system opened for writing fails with "injected write failure".
    pub fail_writes: Arc<AtomicBool>,
    /// While set, creating a file fails with ENOSPC, as on a full disk.
    pub disk_full: Arc<AtomicBool>,
}

struct FaultFile {
    inner: Box<dyn WritableFile>,
    fail: Arc<AtomicBool>,
}

impl FaultFile {
    fn check(&self) -> io::Result<()> {
        check(&self.fail)
    }
}

impl WritableFile for FaultFile {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        self.check()?;
        self.inner.append(data)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.check()?;
        self.inner.flush()
    }
    fn sync(&mut self) -> io::Result<()> {
        self.check()?;
        self.inner.sync()
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
}

/// A direct file failing on demand, like [`FaultFile`].
struct FaultDirect {
    inner: Arc<dyn DirectFile>,
    fail: Arc<AtomicBool>,
}

impl DirectFile for FaultDirect {
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        check(&self.fail)?;
        self.inner.write_at(offset, data)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        check(&self.fail)?;
        self.inner.set_len(len)
    }
    fn sync(&self) -> io::Result<()> {
        check(&self.fail)?;
        self.inner.sync()
    }
    fn is_direct(&self) -> bool {
        self.inner.is_direct()
    }
    fn cache_written(&self, offset: u64, len: u64) -> io::Result<()> {
        self.inner.cache_written(offset, len)
    }
}

fn check(fail: &AtomicBool) -> io::Result<()> {
    if fail.load(Ordering::SeqCst) {
        return Err(io::Error::other("injected write failure"));
    }
    Ok(())
}

impl FaultFs {
    fn check_space(&self) -> io::Result<()> {
        if self.disk_full.load(Ordering::SeqCst) {
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        Ok(())
    }

    fn wrap(&self, inner: Box<dyn WritableFile>) -> Box<dyn WritableFile> {
        Box::new(FaultFile {
            inner,
            fail: Arc::clone(&self.fail_writes),
        })
    }
}

impl FileSystem for FaultFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        OsFileSystem.create_dir_all(path)
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.check_space()?;
        Ok(self.wrap(OsFileSystem.create(path)?))
    }
    fn create_direct(&self, path: &Path, direct: bool) -> io::Result<Arc<dyn DirectFile>> {
        self.check_space()?;
        Ok(Arc::new(FaultDirect {
            inner: OsFileSystem.create_direct(path, direct)?,
            fail: Arc::clone(&self.fail_writes),
        }))
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        Ok(self.wrap(OsFileSystem.open_append(path)?))
    }
    fn open(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        OsFileSystem.open(path)
    }
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        OsFileSystem.read_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        OsFileSystem.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        OsFileSystem.remove_file(path)
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        OsFileSystem.list_dir(path)
    }
    fn exists(&self, path: &Path) -> bool {
        OsFileSystem.exists(path)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        OsFileSystem.sync_dir(path)
    }
}
