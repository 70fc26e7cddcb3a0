//! Database identity: ties a data directory to its PM directory, so that opening a database
//! with the wrong PM directory (another database's, or an empty one while this database's PM
//! Logs live elsewhere) is refused instead of silently dropping the writes held in PM.
//!
//! Files: `<db>/IDENTITY` and `<pm dir>/IDENTITY`, both
//! `flatlsm-id2 <32 hex digits>\npm-path <PM directory at creation>\ncrc32c <8 hex digits>\n`
//! (the crc32c covers the two lines before it), written with [`write_file_atomic`] (temp file,
//! sync, rename, directory sync). Files of the first format, `flatlsm-id <32 hex digits>\n
//! pm-path <dir>\n` without a checksum, are still read (and rewritten in the new format the
//! next time open writes identities). Anything else, a checksum mismatch included, is
//! [`Error::Corruption`] naming the file: a damaged identity is never taken for another
//! database's. The manifest snapshot records the identity too (`VersionEdit::identity`).
//!
//! Persist order at creation: the data directory's IDENTITY first, then the PM directory's, then
//! the first manifest (`CURRENT` is the commit point of creation). So the PM directory can only
//! hold our identity if the data directory already does, and a manifest records an identity only
//! once the data directory holds it.
//!
//! Rules at open (only for a PM directory on a file system; injected test devices skip them):
//! - The manifest records identity R: `<db>/IDENTITY` must exist and carry R (missing: it was
//!   deleted; different: it was replaced), else [`Error::Corruption`] naming it.
//! - New database (no `CURRENT`): the PM directory must hold no PM Logs and no identity other
//!   than the data directory's own (left by a crash during creation).
//! - Existing database: both identities must be present and equal. A PM directory without an
//!   identity means the PM Logs are elsewhere or were lost (emulated PM after a reboot): refused
//!   unless `Options::allow_missing_pm`, which accepts losing the writes that were only in PM.
//! - An existing database without an identity (made before identities existed) adopts a new
//!   one, unless its PM directory holds an identity (another database's, or the data
//!   directory's own IDENTITY was deleted; the manifest of such a database records none).
//!
//! All checks read only; [`IdentityPlan::apply`] writes, after the caller verified the rest of
//! the database. `inspect::check` applies the same rules through [`plan`].

use crate::error::{Error, IoContext, Result};
use crate::file_names::parse_pm_log_file_name;
use crate::fs::{write_file_atomic, FileSystem};
use crate::types::crc32c;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};

/// Name of the identity file in both directories.
pub(crate) const IDENTITY_FILE: &str = "IDENTITY";

/// First word of the current format (with a checksum line).
const MAGIC_V2: &str = "flatlsm-id2 ";
/// First word of the first format (no checksum), still read.
const MAGIC_V1: &str = "flatlsm-id ";

/// What open must write, decided before anything is modified.
#[derive(Debug)]
pub(crate) struct IdentityPlan {
    id: String,
    write_db: bool,
    write_pm: bool,
}

/// The parsed contents of an IDENTITY file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Identity {
    pub(crate) id: String,
    pub(crate) pm_path: String,
    /// Read from the first format (no checksum): open rewrites it in the current one.
    pub(crate) legacy: bool,
}

impl IdentityPlan {
    /// The identity the database has (or gets) once the plan is applied.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// True if applying the plan writes an identity file (a new or adopted identity, a PM
    /// directory accepted without its identity, or a file of the first format rewritten).
    pub(crate) fn writes(&self) -> bool {
        self.write_db || self.write_pm
    }

    /// A new identity for a new copy of a database (a checkpoint), written to both
    /// directories.
    pub(crate) fn fresh() -> IdentityPlan {
        IdentityPlan {
            id: new_id(),
            write_db: true,
            write_pm: true,
        }
    }

    /// Writes the identity files the plan calls for, data directory first.
    pub(crate) fn apply(&self, fs: &dyn FileSystem, db: &Path, pm: &Path) -> Result<()> {
        let contents = encode_identity(&self.id, &pm.display().to_string());
        for (write, dir) in [(self.write_db, db), (self.write_pm, pm)] {
            if write {
                // A design whose write buffers are in DRAM has not opened its PM directory yet.
                fs.create_dir_all(dir)
                    .context(|| format!("creating {}", dir.display()))?;
                let path = dir.join(IDENTITY_FILE);
                write_file_atomic(fs, &path, contents.as_bytes())
                    .context(|| format!("writing {}", path.display()))?;
            }
        }
        Ok(())
    }
}

/// Decides whether `pm` belongs to the database in `db` (see the module rules). `recorded` is
/// the identity the manifest records (`None` for a new database or an older manifest). Reads
/// only.
pub(crate) fn plan(
    fs: &dyn FileSystem,
    db: &Path,
    pm: &Path,
    db_exists: bool,
    allow_missing_pm: bool,
    recorded: Option<&str>,
) -> Result<IdentityPlan> {
    let db_id = read_identity(fs, &db.join(IDENTITY_FILE))?;
    let pm_id = read_identity(fs, &pm.join(IDENTITY_FILE))?;
    if let Some(r) = recorded {
        check_recorded(db, pm, r, db_id.as_ref(), pm_id.as_ref())?;
    }
    if let (Some(d), Some(p)) = (&db_id, &pm_id) {
        if d.id != p.id {
            return Err(foreign_pm(db, pm, Some(d), p));
        }
        return Ok(IdentityPlan {
            id: d.id.clone(),
            write_db: d.legacy,
            write_pm: p.legacy,
        });
    }
    if let Some(p) = &pm_id {
        // The PM directory has an identity, the data directory none: never ours (ours is
        // written to the data directory first), unless the data directory's was deleted.
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

/// The data directory's IDENTITY must carry the identity the manifest records: a missing one
/// was deleted, a different one replaced (the manifest records an identity only after the
/// data directory holds it).
fn check_recorded(
    db: &Path,
    pm: &Path,
    recorded: &str,
    db_id: Option<&Identity>,
    pm_id: Option<&Identity>,
) -> Result<()> {
    let file = db.join(IDENTITY_FILE);
    let restore = match pm_id {
        Some(p) if p.id == recorded => format!(
            "{} carries the same identity: copy it to {}",
            pm.join(IDENTITY_FILE).display(),
            file.display()
        ),
        _ => "restore it from a backup".to_string(),
    };
    let detail = match db_id {
        None => format!("missing, but the manifest records identity {recorded}; {restore}"),
        Some(d) if d.id != recorded => format!(
            "identity {} differs from {recorded}, which the manifest records: this IDENTITY \
             belongs to another database; {restore}",
            d.id
        ),
        Some(_) => return Ok(()),
    };
    Err(Error::corruption(file, 0, detail))
}

/// A new database must not take over a PM directory holding another database's PM Logs.
fn refuse_pm_logs_of_another_db(fs: &dyn FileSystem, db: &Path, pm: &Path) -> Result<()> {
    if !fs.exists(pm) {
        return Ok(());
    }
    let names = fs
        .list_dir(pm)
        .context(|| format!("listing PM directory {}", pm.display()))?;
    if let Some(log) = names.iter().find(|n| parse_pm_log_file_name(n).is_some()) {
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
        None => format!(
            "{} has no IDENTITY (if it was deleted, copy {} there)",
            db.display(),
            pm.join(IDENTITY_FILE).display()
        ),
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

/// The identity in `<db>/IDENTITY`, if that file exists and is readable (repair keeps it).
pub(crate) fn read_db_identity(fs: &dyn FileSystem, db: &Path) -> Option<String> {
    let identity = read_identity(fs, &db.join(IDENTITY_FILE)).ok()??;
    Some(identity.id)
}

/// Reads an IDENTITY file; `None` when it does not exist.
fn read_identity(fs: &dyn FileSystem, path: &Path) -> Result<Option<Identity>> {
    if !fs.exists(path) {
        return Ok(None);
    }
    let data = fs
        .read_all(path)
        .context(|| format!("reading {}", path.display()))?;
    parse_identity(&data)
        .map(Some)
        .map_err(|(offset, detail)| Error::corruption(PathBuf::from(path), offset, detail))
}

/// The current format: two lines and the crc32c of their bytes. The PM path is only shown in
/// messages, so a newline in it is escaped rather than breaking the line structure.
pub(crate) fn encode_identity(id: &str, pm_path: &str) -> String {
    let pm_path = pm_path.replace('\n', "\\n");
    let body = format!("{MAGIC_V2}{id}\npm-path {pm_path}\n");
    format!("{body}crc32c {:08x}\n", crc32c(body.as_bytes()))
}

/// Parses either format; on failure the offset of the bad line and what was expected.
pub(crate) fn parse_identity(data: &[u8]) -> std::result::Result<Identity, (u64, String)> {
    let expected = format!(
        "expected \"{MAGIC_V2}<32 hex digits>\\npm-path <dir>\\ncrc32c <8 hex digits>\\n\""
    );
    let shown = String::from_utf8_lossy(&data[..data.len().min(80)]).into_owned();
    let garbled = || (0, format!("{expected}, found {shown:?}"));
    let text = std::str::from_utf8(data).map_err(|_| garbled())?;
    let lines: Vec<&str> = text
        .strip_suffix('\n')
        .ok_or_else(garbled)?
        .split('\n')
        .collect();
    let (magic, crc_line) = match lines.len() {
        3 => (MAGIC_V2, Some(lines[2])),
        2 => (MAGIC_V1, None),
        _ => return Err(garbled()),
    };
    let id = lines[0].strip_prefix(magic).filter(|id| is_id(id));
    let pm_path = lines[1].strip_prefix("pm-path ");
    let (Some(id), Some(pm_path)) = (id, pm_path) else {
        return Err(garbled());
    };
    if let Some(line) = crc_line {
        verify_crc(text, line)?;
    }
    Ok(Identity {
        id: id.to_string(),
        pm_path: pm_path.to_string(),
        legacy: crc_line.is_none(),
    })
}

/// Checks the `crc32c` line, which starts right after the first two lines of `text`.
fn verify_crc(text: &str, line: &str) -> std::result::Result<(), (u64, String)> {
    let at = text.len() - line.len() - 1;
    let stored = line
        .strip_prefix("crc32c ")
        .filter(|h| h.len() == 8 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .and_then(|h| u32::from_str_radix(h, 16).ok());
    let computed = crc32c(&text.as_bytes()[..at]);
    match stored {
        Some(s) if s == computed => Ok(()),
        Some(s) => Err((
            at as u64,
            format!("checksum mismatch: the file says {s:08x}, its contents give {computed:08x}"),
        )),
        None => Err((
            at as u64,
            format!("expected \"crc32c <8 hex digits>\", found {line:?}"),
        )),
    }
}

fn is_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
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
        let parsed = parse_identity(encode_identity(&id, "/x/pm").as_bytes()).unwrap();
        assert_eq!(parsed.id, id);
        assert_eq!(parsed.pm_path, "/x/pm");
        assert!(!parsed.legacy);
        assert!(parse_identity(b"flatlsm-id2 12\npm-path /x\ncrc32c 00000000\n").is_err());
        assert!(parse_identity(b"\xff\xfe").is_err());
        assert_ne!(new_id(), new_id());
    }

    #[test]
    fn example_of_docs_identity_format_parses() {
        let text = "flatlsm-id2 5f0c2b7d9e31a4c68b10f2d3e4a5b6c7\npm-path /mnt/pmem0/mydb\n\
                    crc32c fc2f7cbb\n";
        assert_eq!(
            parse_identity(text.as_bytes()).unwrap().pm_path,
            "/mnt/pmem0/mydb"
        );
    }

    #[test]
    fn first_format_without_checksum_is_still_read() {
        let text = format!("flatlsm-id {}\npm-path /x/pm\n", "ab".repeat(16));
        let parsed = parse_identity(text.as_bytes()).unwrap();
        assert_eq!(parsed.id, "ab".repeat(16));
        assert_eq!(parsed.pm_path, "/x/pm");
        assert!(parsed.legacy);
    }

    /// Regression (issue 9): a flipped bit in an identity read as another database's identity.
    #[test]
    fn every_flipped_bit_or_cut_of_an_identity_file_is_detected() {
        let good = encode_identity(&new_id(), "/var/lib/db/pm").into_bytes();
        for i in 0..good.len() * 8 {
            let mut bad = good.clone();
            bad[i / 8] ^= 1 << (i % 8);
            assert!(
                parse_identity(&bad).is_err(),
                "bit {i} flipped went unnoticed"
            );
        }
        for len in 0..good.len() {
            assert!(parse_identity(&good[..len]).is_err(), "cut to {len} bytes");
        }
        let odd = encode_identity(&new_id(), "/pm\nwith newline");
        assert_eq!(
            parse_identity(odd.as_bytes()).unwrap().pm_path,
            "/pm\\nwith newline"
        );
    }
}
