//! The database lock: at most one open handle per database, across processes and within one.
//!
//! `<db>/LOCK` carries a POSIX record lock (`fcntl(F_SETLK)`), as in RocksDB, rather than
//! `flock`: an `flock` lock is shared with every child forked while it is held, so in a
//! multi-threaded program a fork in another thread could keep a closed database "locked" until
//! that child execs. A POSIX lock is not inherited, but belongs to the whole process and is
//! dropped when the process closes *any* descriptor of the file; so this module also keeps a
//! process-wide set of held directories, refuses a second handle in the same process, and
//! closes its descriptor before it forgets the directory.
//!
//! Thread-safety: [`DirLock`] is `Send + Sync`; the set is behind a mutex.

use crate::error::{Error, IoContext, Result};
use parking_lot::Mutex;
use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Name of the lock file in the database directory.
pub const LOCK_FILE: &str = "LOCK";

/// Canonical paths of the database directories this process holds.
static HELD: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

/// A held database lock; released on drop.
#[derive(Debug)]
pub struct DirLock {
    file: Option<File>,
    key: PathBuf,
}

impl DirLock {
    /// Locks the database in `dir`. With `create` false, a missing `LOCK` file gives `Ok(None)`
    /// (a database never opened needs no lock, and nothing is created). A database held by
    /// another process or another handle of this one is [`Error::Locked`].
    pub fn acquire(dir: &Path, create: bool) -> Result<Option<DirLock>> {
        let key = dir
            .canonicalize()
            .context(|| format!("resolving {}", dir.display()))?;
        // Held while the file is opened: no descriptor of a held LOCK is ever closed here.
        let mut held = HELD.lock();
        let set = held.get_or_insert_with(HashSet::new);
        if set.contains(&key) {
            return Err(Error::Locked {
                path: dir.to_path_buf(),
                detail: format!(
                    "database {} is already open in this process (close the other handle first)",
                    dir.display()
                ),
            });
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
        let locked =
            crate::pm::try_lock_posix(&file).context(|| format!("locking {}", path.display()))?;
        if !locked {
            return Err(Error::Locked {
                path: dir.to_path_buf(),
                detail: format!(
                    "database {} is locked by another process (close it first)",
                    dir.display()
                ),
            });
        }
        set.insert(key.clone());
        Ok(Some(DirLock {
            file: Some(file),
            key,
        }))
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let mut held = HELD.lock();
        // Close first: while the key is still held nobody in this process can open the file.
        drop(self.file.take());
        if let Some(set) = held.as_mut() {
            set.remove(&self.key);
        }
    }
}
