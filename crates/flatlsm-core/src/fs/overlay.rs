//! [`OverlayFs`]: a file system that reads through to another one and keeps every change in
//! memory, for opening a database read-only. Files created, appended, renamed or removed exist
//! (or stop existing) only in this view; the files underneath are only ever opened for reading.
//!
//! Invariants: a path is in at most one of `files` (the view's own content) and `removed`
//! (hidden files of the base); a base file that is renamed or reopened for appending is copied
//! into `files` first, so the base is never written.
//!
//! Thread-safety: `Send + Sync`; the view's state is behind one mutex, each in-memory file's
//! bytes behind their own.

use super::{DirectFile, FileSystem, FsRef, RandomAccessFile, WritableFile};
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

type Bytes = Arc<RwLock<Vec<u8>>>;

#[derive(Default)]
struct View {
    files: BTreeMap<PathBuf, Bytes>,
    removed: BTreeSet<PathBuf>,
    dirs: BTreeSet<PathBuf>,
}

/// A copy-on-write view of `base`.
pub struct OverlayFs {
    base: FsRef,
    view: Mutex<View>,
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{} does not exist", path.display()),
    )
}

impl OverlayFs {
    /// A view of `base` with no changes yet.
    pub fn new(base: FsRef) -> Arc<OverlayFs> {
        Arc::new(OverlayFs {
            base,
            view: Mutex::new(View::default()),
        })
    }

    /// The bytes of `path` as this view has them, copied into the view if they are the base's.
    fn own(&self, path: &Path) -> io::Result<Bytes> {
        if let Some(b) = self.view.lock().files.get(path) {
            return Ok(b.clone());
        }
        let data = self.read_all(path)?;
        let bytes: Bytes = Arc::new(RwLock::new(data));
        let mut view = self.view.lock();
        view.files.insert(path.to_path_buf(), bytes.clone());
        Ok(bytes)
    }

    /// A new empty file at `path` in the view.
    fn fresh(&self, path: &Path) -> Bytes {
        let bytes: Bytes = Arc::default();
        let mut view = self.view.lock();
        view.removed.remove(path);
        view.files.insert(path.to_path_buf(), bytes.clone());
        bytes
    }

    /// True if the base's file at `path` is visible here.
    fn in_base(&self, path: &Path) -> bool {
        !self.view.lock().removed.contains(path) && self.base.exists(path)
    }
}

impl FileSystem for OverlayFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.view.lock().dirs.insert(path.to_path_buf());
        Ok(())
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        Ok(Box::new(MemFile(self.fresh(path))))
    }

    fn create_direct(&self, path: &Path, _direct: bool) -> io::Result<Arc<dyn DirectFile>> {
        Ok(Arc::new(MemFile(self.fresh(path))))
    }

    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        Ok(Box::new(MemFile(self.own(path)?)))
    }

    fn open(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        if let Some(b) = self.view.lock().files.get(path) {
            return Ok(Arc::new(MemFile(b.clone())));
        }
        match self.in_base(path) {
            true => self.base.open(path),
            false => Err(not_found(path)),
        }
    }

    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        if let Some(b) = self.view.lock().files.get(path) {
            return Ok(b.read().clone());
        }
        match self.in_base(path) {
            true => self.base.read_all(path),
            false => Err(not_found(path)),
        }
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let bytes = self.own(from)?;
        let mut view = self.view.lock();
        view.files.remove(from);
        view.removed.insert(from.to_path_buf());
        view.removed.remove(to);
        view.files.insert(to.to_path_buf(), bytes);
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let in_base = self.in_base(path);
        let mut view = self.view.lock();
        if view.files.remove(path).is_none() && !in_base {
            return Err(not_found(path));
        }
        view.removed.insert(path.to_path_buf());
        Ok(())
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let base = match self.base.list_dir(path) {
            Ok(names) => names,
            Err(_) if self.view.lock().dirs.contains(path) => Vec::new(),
            Err(e) => return Err(e),
        };
        let view = self.view.lock();
        let mut names: BTreeSet<String> = base
            .into_iter()
            .filter(|n| !view.removed.contains(&path.join(n)))
            .collect();
        let own = view.files.keys().filter(|p| p.parent() == Some(path));
        names.extend(
            own.filter_map(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned()),
        );
        Ok(names.into_iter().collect())
    }

    fn exists(&self, path: &Path) -> bool {
        let view = self.view.lock();
        let own = view.files.contains_key(path) || view.dirs.contains(path);
        own || (!view.removed.contains(path) && self.base.exists(path))
    }

    fn sync_dir(&self, _path: &Path) -> io::Result<()> {
        Ok(())
    }
}

/// A file of the view: its bytes, shared by every handle.
struct MemFile(Bytes);

impl WritableFile for MemFile {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        self.0.write().extend_from_slice(data);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn len(&self) -> u64 {
        self.0.read().len() as u64
    }
}

impl RandomAccessFile for MemFile {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let data = self.0.read();
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let src = start
            .checked_add(buf.len())
            .and_then(|end| data.get(start..end))
            .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end"))?;
        buf.copy_from_slice(src);
        Ok(())
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.0.read().len() as u64)
    }
}

impl DirectFile for MemFile {
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut bytes = self.0.write();
        let start = usize::try_from(offset).map_err(io::Error::other)?;
        let end = start + data.len();
        if bytes.len() < end {
            bytes.resize(end, 0);
        }
        bytes[start..end].copy_from_slice(data);
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let len = usize::try_from(len).map_err(io::Error::other)?;
        self.0.write().resize(len, 0);
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        Ok(())
    }

    fn is_direct(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::OsFileSystem;

    fn names(dir: &Path) -> Vec<String> {
        let mut n: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    }

    #[test]
    fn every_change_stays_in_the_view_and_the_base_is_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        std::fs::write(&a, b"base a").unwrap();
        std::fs::write(&b, b"base b").unwrap();
        let fs = OverlayFs::new(Arc::new(OsFileSystem));
        let mut w = fs.create(&c).unwrap();
        w.append(b"new c").unwrap();
        w.sync().unwrap();
        fs.rename(&c, &a).unwrap();
        fs.remove_file(&b).unwrap();
        let mut appended = fs.open_append(&a).unwrap();
        appended.append(b"!").unwrap();
        assert_eq!(fs.read_all(&a).unwrap(), b"new c!");
        assert!(!fs.exists(&b) && fs.open(&b).is_err() && !fs.exists(&c));
        assert_eq!(fs.list_dir(dir.path()).unwrap(), vec!["a".to_string()]);
        let mut buf = [0u8; 3];
        fs.open(&a).unwrap().read_exact_at(2, &mut buf).unwrap();
        assert_eq!(&buf, b"w c");
        assert_eq!(names(dir.path()), vec!["a".to_string(), "b".to_string()]);
        assert_eq!(std::fs::read(&a).unwrap(), b"base a");
    }
}
