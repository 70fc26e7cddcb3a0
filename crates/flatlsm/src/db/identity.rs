//! Database identity: ties a data directory to its PM directory, so that opening a database
//! with the wrong PM directory (another database's, or an empty one while this database's PM
//! Logs live elsewhere) is refused instead of silently dropping the writes held in PM.
//!
//! Files: `<db>/IDENTITY` and `<pm dir>/IDENTITY`, both
//! `flatlsm-id <32 hex digits>\npm-path <PM directory at creation>\n`, written with
//! [`write_file_atomic`] (temp file, sync, rename, directory sync).
//!
//! Persist order at creation: the data directory's IDENTITY first, then the PM directory's, then
//! the first manifest (`CURRENT` is the commit point of creation). So the PM directory can only
//! hold our identity if the data directory already does.
//!
//! Rules at open (only for a PM directory on a file system; injected test devices skip them):
//! - New database (no `CURRENT`): the PM directory must hold no PM Logs and no identity other
//!   than the data directory's own (left by a crash during creation).
//! - Existing database: both identities must be present and equal. A PM directory without an
//!   identity means the PM Logs are elsewhere or were lost (emulated PM after a reboot): refused
//!   unless `Options::allow_missing_pm`, which accepts losing the writes that were only in PM.
//! - An existing database without an identity (made before identities existed) adopts a new
//!   one, unless its PM directory holds another database's identity.
//!
//! All checks read only; [`IdentityPlan::apply`] writes, after the caller took the lock.

use crate::error::{Error, IoContext, Result};
use crate::fs::{write_file_atomic, FileSystem};
use crate::pmtable::log::parse_log_file_name;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};

/// Name of the identity file in both directories.
pub(crate) const IDENTITY_FILE: &str = "IDENTITY";

/// What open must write, decided before anything is modified.
#[derive(Debug)]
pub(crate) struct IdentityPlan {
    id: String,
    write_db: bool,
    write_pm: bool,
}

/// The parsed contents of an IDENTITY file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    id: String,
    pm_path: String,
}

impl IdentityPlan {
    /// Writes the identity files the plan calls for, data directory first.
    pub(crate) fn apply(&self, fs: &dyn FileSystem, db: &Path, pm: &Path) -> Result<()> {
        let contents = format!("flatlsm-id {}\npm-path {}\n", self.id, pm.display());
        for (write, dir) in [(self.write_db, db), (self.write_pm, pm)] {
            if write {
                let path = dir.join(IDENTITY_FILE);
                write_file_atomic(fs, &path, contents.as_bytes())
                    .context(|| format!("writing {}", path.display()))?;
            }
        }
        Ok(())
    }
}

/// Decides whether `pm` belongs to the database in `db` (see the module rules). Reads only.
pub(crate) fn plan(
    fs: &dyn FileSystem,
    db: &Path,
    pm: &Path,
    db_exists: bool,
    allow_missing_pm: bool,
) -> Result<IdentityPlan> {
    let db_id = read_identity(fs, &db.join(IDENTITY_FILE))?;
    let pm_id = read_identity(fs, &pm.join(IDENTITY_FILE))?;
    if let (Some(d), Some(p)) = (&db_id, &pm_id) {
        if d.id != p.id {
            return Err(foreign_pm(db, pm, Some(d), p));
        }
        return Ok(IdentityPlan {
            id: d.id.clone(),
            write_db: false,
            write_pm: false,
        });
    }
    if let Some(p) = &pm_id {
        // The PM directory has an identity, the data directory none: never ours (ours is
        // written to the data directory first).
        return Err(foreign_pm(db, pm, None, p));
    }
    if !db_exists {
        refuse_pm_logs_of_another_db(fs, db, pm)?;
    } else if let Some(d) = &db_id {
        if !allow_missing_pm {
            return Err(missing_pm(db, pm, d));
        }
        log::warn!(
            "opening {} with PM directory {} that lacks its identity (allow_missing_pm): \
             writes that were only in PM are lost",
            db.display(),
            pm.display()
        );
    }
    Ok(IdentityPlan {
        id: db_id.as_ref().map_or_else(new_id, |d| d.id.clone()),
        write_db: db_id.is_none(),
        write_pm: true,
    })
}

/// A new database must not take over a PM directory holding another database's PM Logs.
fn refuse_pm_logs_of_another_db(fs: &dyn FileSystem, db: &Path, pm: &Path) -> Result<()> {
    if !fs.exists(pm) {
        return Ok(());
    }
    let names = fs
        .list_dir(pm)
        .context(|| format!("listing PM directory {}", pm.display()))?;
    if let Some(log) = names.iter().find(|n| parse_log_file_name(n).is_some()) {
        return Err(Error::InvalidState(format!(
            "PM directory {} holds PM Logs ({log}) of another database, but {} is a new \
             database; choose an empty PM directory",
            pm.display(),
            db.display()
        )));
    }
    Ok(())
}

fn foreign_pm(db: &Path, pm: &Path, db_id: Option<&Identity>, pm_id: &Identity) -> Error {
    let ours = match db_id {
        Some(d) => format!(
            "{} has identity {} and was created with PM directory {}",
            db.display(),
            d.id,
            d.pm_path
        ),
        None => format!("{} has no identity yet", db.display()),
    };
    Error::InvalidState(format!(
        "PM directory {} belongs to another FlatLSM database (identity {}, data directory \
         created with PM directory {}); {ours}. Pass the PM directory this database was created \
         with (--pm-path)",
        pm.display(),
        pm_id.id,
        pm_id.pm_path
    ))
}

fn missing_pm(db: &Path, pm: &Path, d: &Identity) -> Error {
    Error::InvalidState(format!(
        "PM directory {} is not the PM directory of {} (it holds no FlatLSM identity; the \
         database was created with PM directory {}). Pass that directory (--pm-path); if its \
         contents are gone for good (e.g. emulated PM after a reboot), set allow_missing_pm \
         (--allow-missing-pm) to open the database without the writes that were only in PM",
        pm.display(),
        db.display(),
        d.pm_path
    ))
}

/// The identity (32 hex digits) in the IDENTITY file of `dir`; `None` when there is none. A
/// file that does not parse is [`Error::Corruption`]. For `inspect::check`.
pub(crate) fn read_identity_id(fs: &dyn FileSystem, dir: &Path) -> Result<Option<String>> {
    Ok(read_identity(fs, &dir.join(IDENTITY_FILE))?.map(|i| i.id))
}

/// Reads an IDENTITY file; `None` when it does not exist.
fn read_identity(fs: &dyn FileSystem, path: &Path) -> Result<Option<Identity>> {
    if !fs.exists(path) {
        return Ok(None);
    }
    let data = fs
        .read_all(path)
        .context(|| format!("reading {}", path.display()))?;
    parse_identity(&data).map(Some).ok_or_else(|| {
        let shown = String::from_utf8_lossy(&data[..data.len().min(80)]).into_owned();
        Error::corruption(
            PathBuf::from(path),
            0,
            format!("expected \"flatlsm-id <32 hex digits>\\npm-path <dir>\\n\", found {shown:?}"),
        )
    })
}

fn parse_identity(data: &[u8]) -> Option<Identity> {
    let text = std::str::from_utf8(data).ok()?;
    let mut lines = text.lines();
    let id = lines.next()?.strip_prefix("flatlsm-id ")?;
    let pm_path = lines.next()?.strip_prefix("pm-path ")?;
    let valid = id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit());
    valid.then(|| Identity {
        id: id.to_string(),
        pm_path: pm_path.to_string(),
    })
}

/// 128 random bits as 32 hex digits (std's randomly keyed hasher, mixed with time and pid).
fn new_id() -> String {
    let word = |salt: u64| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(salt);
        h.write_u32(std::process::id());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        h.write_u128(now);
        h.finish()
    };
    format!("{:016x}{:016x}", word(1), word(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_round_trips_and_rejects_garbage() {
        let id = new_id();
        let text = format!("flatlsm-id {id}\npm-path /x/pm\n");
        let parsed = parse_identity(text.as_bytes()).unwrap();
        assert_eq!(parsed.id, id);
        assert_eq!(parsed.pm_path, "/x/pm");
        assert!(parse_identity(b"flatlsm-id 12\npm-path /x\n").is_none());
        assert!(parse_identity(b"\xff\xfe").is_none());
        assert_ne!(new_id(), new_id());
    }
}
