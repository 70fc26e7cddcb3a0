//! [`FileSystem`] over the operating system's files.
//!
//! Direct files are opened with `O_DIRECT`. Where the file system refuses it (`EINVAL`: tmpfs
//! on older kernels, some FUSE file systems), at open or at the first write, the file is
//! reopened without it and written through the page cache; [`DirectFile::is_direct`] then
//! says so. No `unsafe` is needed here: the flag goes through `OpenOptionsExt`, aligned buffers
//! are made by [`super::DirectWriter`], and mappings by [`FileMap`] (over `pm/raw.rs`).

use super::{DirectFile, FileMap, FileSystem, RandomAccessFile, WritableFile};
use parking_lot::Mutex;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The real file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct OsFileSystem;

struct OsWritableFile {
    writer: BufWriter<File>,
    len: u64,
}

impl WritableFile for OsWritableFile {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        self.writer.write_all(data)?;
        self.len += data.len() as u64;
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
    fn sync(&mut self) -> io::Result<()> {
        self.writer.flush()?;
        self.writer.get_ref().sync_data()
    }
    fn len(&self) -> u64 {
        self.len
    }
}

struct OsRandomAccessFile {
    file: File,
}

impl RandomAccessFile for OsRandomAccessFile {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }
    fn size(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }
    fn advise_random(&self) -> io::Result<()> {
        rustix::fs::fadvise(&self.file, 0, None, rustix::fs::Advice::Random).map_err(Into::into)
    }
    fn will_need(&self, offset: u64, len: u64) -> io::Result<()> {
        let len = std::num::NonZeroU64::new(len);
        rustix::fs::fadvise(&self.file, offset, len, rustix::fs::Advice::WillNeed)
            .map_err(Into::into)
    }
    fn map(&self) -> io::Result<Option<FileMap>> {
        match self.size()? {
            0 => Ok(None),
            len => FileMap::new(&self.file, len).map(Some),
        }
    }
}

const WRITE_BUFFER: usize = 1 << 20;

/// `O_DIRECT` where the platform has it; 0 (never direct) elsewhere.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
const O_DIRECT: libc::c_int = libc::O_DIRECT;
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
const O_DIRECT: libc::c_int = 0;

/// A file written in aligned blocks, with `O_DIRECT` unless the file system refused it.
struct OsDirectFile {
    path: PathBuf,
    /// Swapped for a buffered descriptor if a direct write is refused.
    file: Mutex<File>,
    direct: AtomicBool,
}

impl OsDirectFile {
    fn create(path: &Path, direct: bool) -> io::Result<OsDirectFile> {
        let open = |flags| {
            OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .custom_flags(flags)
                .open(path)
        };
        let direct = direct && O_DIRECT != 0;
        let (file, direct) = match open(if direct { O_DIRECT } else { 0 }) {
            Ok(f) => (f, direct),
            Err(e) if direct && refused(&e) => (open(0)?, false),
            Err(e) => return Err(e),
        };
        Ok(OsDirectFile {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            direct: AtomicBool::new(direct),
        })
    }

    /// Falls back to a buffered descriptor after the file system refused a direct write.
    fn reopen_buffered(&self, file: &mut File) -> io::Result<()> {
        *file = OpenOptions::new().write(true).open(&self.path)?;
        self.direct.store(false, Ordering::Relaxed);
        log::info!(
            "{}: direct I/O refused, writing through the page cache",
            self.path.display()
        );
        Ok(())
    }
}

/// True if `e` is the file system refusing `O_DIRECT`.
fn refused(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EINVAL)
}

impl DirectFile for OsDirectFile {
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut file = self.file.lock();
        match file.write_all_at(data, offset) {
            Err(e) if refused(&e) && self.direct.load(Ordering::Relaxed) => {
                self.reopen_buffered(&mut file)?;
                file.write_all_at(data, offset)
            }
            r => r,
        }
    }
    fn cache_written(&self, offset: u64, len: u64) -> io::Result<()> {
        if !self.direct.load(Ordering::Relaxed) {
            return Ok(()); // buffered writes left the data in the page cache already
        }
        let len = std::num::NonZeroU64::new(len);
        let file = self.file.lock();
        rustix::fs::fadvise(&*file, offset, len, rustix::fs::Advice::WillNeed).map_err(Into::into)
    }
    fn write_behind(&self, offset: u64, len: u64) -> io::Result<()> {
        if self.direct.load(Ordering::Relaxed) {
            return Ok(()); // direct writes reach the device before they return
        }
        let lag = super::WRITE_BEHIND_LAG;
        crate::pm::raw::write_behind(&self.file.lock(), offset, len, lag)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.lock().set_len(len)
    }
    fn sync(&self) -> io::Result<()> {
        self.file.lock().sync_data()
    }
    fn is_direct(&self) -> bool {
        self.direct.load(Ordering::Relaxed)
    }
}

impl FileSystem for OsFileSystem {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        fs::create_dir_all(path)
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let file = File::create(path)?;
        Ok(Box::new(OsWritableFile {
            writer: BufWriter::with_capacity(WRITE_BUFFER, file),
            len: 0,
        }))
    }
    fn create_direct(&self, path: &Path, direct: bool) -> io::Result<Arc<dyn DirectFile>> {
        Ok(Arc::new(OsDirectFile::create(path, direct)?))
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new().append(true).open(path)?;
        let len = file.metadata()?.len();
        Ok(Box::new(OsWritableFile {
            writer: BufWriter::with_capacity(64 << 10, file),
            len,
        }))
    }
    fn open(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        Ok(Arc::new(OsRandomAccessFile {
            file: File::open(path)?,
        }))
    }
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        fs::read(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for e in fs::read_dir(path)? {
            names.push(e?.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(names)
    }
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        File::open(path)?.sync_all()
    }
}
