//! The database lock: one writer, or any number of read-only handles, per database, across
//! processes and within one.
//!
//! `<db>/LOCK` carries a POSIX record lock (`fcntl(F_SETLK)`), as in RocksDB, rather than
//! `flock`: an `flock` lock is shared with every child forked while it is held, so in a
//! multi-threaded program a fork in another thread could keep a closed database "locked" until
//! that child execs. A POSIX lock is not inherited, but belongs to the whole process and is
//! dropped when the process closes *any* descriptor of the file; so this module also keeps a
//! process-wide table of held directories: it refuses a second writer or a writer beside
//! readers in the same process, lets readers share the one descriptor (and its read lock), and
//! closes that descriptor only when the last holder lets go.
//!
//! Thread-safety: [`DirLock`] is `Send + Sync`; the table is behind a mutex.

use crate::error::{Error, IoContext, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Name of the lock file in the database directory.
pub const LOCK_FILE: &str = "LOCK";

/// A directory this process holds: the locked descriptor, and how.
struct Held {
    /// Kept open: closing any descriptor of the file drops the process's lock.
    _file: File,
    /// Read-only handles sharing the lock; 0 for the one writer.
    readers: usize,
}

/// The database directories this process holds, by canonical path.
static HELD: Mutex<Option<HashMap<PathBuf, Held>>> = Mutex::new(None);

/// A held database lock; released on drop.
#[derive(Debug)]
pub struct DirLock {
    key: PathBuf,
}

fn locked_by_us(dir: &Path, detail: &str) -> Error {
    Error::Locked {
        path: dir.to_path_buf(),
        detail: format!("database {} is {detail}", dir.display()),
    }
}

fn locked_by_other(dir: &Path, what: &str) -> Error {
    Error::Locked {
        path: dir.to_path_buf(),
        detail: format!(
            "database {} is {what} by another process (close it first)",
            dir.display()
        ),
    }
}

impl DirLock {
    /// Locks the database in `dir` for its one writer. With `create` false, a missing `LOCK`
    /// file gives `Ok(None)` (a database never opened needs no lock, and nothing is created). A
    /// database held by another process or another handle of this one is [`Error::Locked`].
    pub fn acquire(dir: &Path, create: bool) -> Result<Option<DirLock>> {
        let key = canonical(dir)?;
        // Held while the file is opened: no descriptor of a held LOCK is ever closed here.
        let mut held = HELD.lock();
        let table = held.get_or_insert_with(HashMap::new);
        if table.contains_key(&key) {
            return Err(locked_by_us(
                dir,
                "already open in this process (close the other handle first)",
            ));
        }
        let path = dir.join(LOCK_FILE);
        let opened = std::fs::OpenOptions::new()
            .create(create)
            .truncate(false)
            .write(true)
            .open(&path);
        let file = match opened {
            Ok(f) => f,
            Err(e) if !create && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(format!("opening {}", path.display()), e)),
        };
        let locked = crate::pm::try_lock_posix(&file, true)
            .context(|| format!("locking {}", path.display()))?;
        if !locked {
            return Err(locked_by_other(dir, "locked"));
        }
        table.insert(
            key.clone(),
            Held {
                _file: file,
                readers: 0,
            },
        );
        Ok(Some(DirLock { key }))
    }

    /// Locks the database in `dir` for reading: beside other readers (of any process), never
    /// beside a writer. Creates nothing: a database without `LOCK` was never opened.
    pub fn acquire_shared(dir: &Path) -> Result<DirLock> {
        let key = canonical(dir)?;
        let mut held = HELD.lock();
        let table = held.get_or_insert_with(HashMap::new);
        match table.get_mut(&key) {
            Some(h) if h.readers == 0 => {
                return Err(locked_by_us(dir, "open for writing in this process"))
            }
            Some(h) => {
                h.readers += 1;
                return Ok(DirLock { key });
            }
            None => {}
        }
        let path = dir.join(LOCK_FILE);
        let file = File::open(&path).context(|| {
            format!(
                "opening {} (every database has one once opened for writing)",
                path.display()
            )
        })?;
        let locked = crate::pm::try_lock_posix(&file, false)
            .context(|| format!("locking {}", path.display()))?;
        if !locked {
            return Err(locked_by_other(dir, "open for writing"));
        }
        table.insert(
            key.clone(),
            Held {
                _file: file,
                readers: 1,
            },
        );
        Ok(DirLock { key })
    }
}

fn canonical(dir: &Path) -> Result<PathBuf> {
    dir.canonicalize()
        .context(|| format!("resolving {}", dir.display()))
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let mut held = HELD.lock();
        let Some(table) = held.as_mut() else {
            return;
        };
        let last = match table.get_mut(&self.key) {
            Some(h) if h.readers > 1 => {
                h.readers -= 1;
                false
            }
            Some(_) => true,
            None => false,
        };
        if last {
            // Closed while the table is locked: nobody in this process can reopen it meanwhile.
            table.remove(&self.key);
        }
    }
}
