//! [`FileSystem`] over the operating system's files.

use super::{FileSystem, RandomAccessFile, WritableFile};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
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
}

const WRITE_BUFFER: usize = 1 << 20;

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
