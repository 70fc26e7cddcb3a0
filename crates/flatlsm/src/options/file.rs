//! The OPTIONS file: the options a database was last opened with, stored in its directory as
//! `OPTIONS-NNNNNN` (RocksDB's convention), so tools open it with its own options instead of
//! defaults ([`load_options`]). Format: docs/options-file.md — TOML-like `name = value` lines
//! (values as `options/text.rs` encodes them) under `[version]`, `[options]`, `[leveled]`,
//! `[matrixkv]` and `[slmdb]`, then a `[checksum]` section whose `crc32c` covers every byte
//! before it.
//!
//! Numbering: a counter of its own, one above the highest OPTIONS number present (1 for the
//! first), not the manifest's file numbers: the file is not part of the version, and taking a
//! file number would shift every SST and log number open allocates.
//!
//! Persist order: written at open after the new manifest (the database then exists): temporary
//! file, fsync, rename, directory fsync (`fs::write_file_atomic`); then every OPTIONS file but
//! the two newest is deleted. An open whose options encode exactly as the newest file writes
//! nothing. Recovery rule: the newest file is the one read; a crash leaves either the previous
//! newest or the new one whole, and an interrupted write only a `.tmp` file (an orphan open
//! removes). A newest file whose checksum fails is refused as corruption, never skipped for an
//! older one. Unknown sections and names (a newer FlatLSM) are ignored with a warning.

use super::text::{qualified, set_stored, stored_values};
use super::Options;
use crate::error::{Error, IoContext, Result};
use crate::fs::{write_file_atomic, FileSystem, OsFileSystem};
use crate::types::crc32c;
use std::path::Path;

/// Prefix of an OPTIONS file name.
const PREFIX: &str = "OPTIONS-";
/// How many OPTIONS files open keeps (the new one and the one before it).
const KEEP: usize = 2;
/// The format version this build writes and reads.
const FORMAT: u64 = 1;
/// The line that starts the checksum section (the last one of the file).
const CHECKSUM_SECTION: &str = "[checksum]\n";

/// The file name of OPTIONS file `number`: `OPTIONS-{number:06}`.
pub fn options_file_name(number: u64) -> String {
    format!("{PREFIX}{number:06}")
}

/// The number of an OPTIONS file's name; `None` if `name` is not one.
pub fn parse_options_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix(PREFIX)?;
    if digits.len() < 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    (options_file_name(n) == name).then_some(n)
}

/// The options stored with the database at `db` (its newest OPTIONS file), `None` if it has
/// none (a database written before OPTIONS files existed, or no database at all). Fields the
/// file does not hold keep their defaults: the per-open choices (`create_if_missing`,
/// `error_if_exists`, `allow_missing_pm`, `wal_point_in_time_recovery`), `file_system` and
/// `pm_device`.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let db_path = dir.path().join("db");
/// let opts = flatlsm::Options::default()
///     .pm_path(dir.path().join("pm"))
///     .pmtable_size(1 << 20);
/// flatlsm::Db::open(&db_path, opts)?.close()?;
/// let stored = flatlsm::load_options(&db_path)?.expect("written at open");
/// assert_eq!(stored.pmtable_size, 1 << 20);
/// assert_eq!(stored.pm_path, Some(dir.path().join("pm")));
/// # Ok::<(), flatlsm::Error>(())
/// ```
pub fn load_options(db: impl AsRef<Path>) -> Result<Option<Options>> {
    load_options_from(&OsFileSystem, db.as_ref())
}

/// [`load_options`] through the file system `fs`.
pub fn load_options_from(fs: &dyn FileSystem, db: &Path) -> Result<Option<Options>> {
    if !fs.exists(db) {
        return Ok(None);
    }
    let Some(&newest) = options_file_numbers(fs, db)?.last() else {
        return Ok(None);
    };
    read_options_file(fs, &db.join(options_file_name(newest))).map(Some)
}

/// Reads and verifies the OPTIONS file at `path` (`flatlsm check` verifies each one present).
pub fn read_options_file(fs: &dyn FileSystem, path: &Path) -> Result<Options> {
    let bytes = fs
        .read_all(path)
        .context(|| format!("reading {}", path.display()))?;
    decode(&bytes, path)
}

/// Writes `opts` as the database's newest OPTIONS file unless the newest already says the
/// same, then deletes all but the two newest (module docs: persist order).
pub(crate) fn write_options_file(fs: &dyn FileSystem, db: &Path, opts: &Options) -> Result<()> {
    let text = encode(opts);
    let numbers = options_file_numbers(fs, db)?;
    let newest = numbers.last().copied();
    let same = |n: u64| {
        fs.read_all(&db.join(options_file_name(n))).ok() == Some(text.clone().into_bytes())
    };
    if newest.is_some_and(same) {
        return Ok(());
    }
    let path = db.join(options_file_name(newest.map_or(1, |n| n + 1)));
    write_file_atomic(fs, &path, text.as_bytes())
        .context(|| format!("writing {}", path.display()))?;
    let excess = (numbers.len() + 1).saturating_sub(KEEP);
    remove_old(fs, db, &numbers[..excess]);
    Ok(())
}

/// Deletes the OPTIONS files `numbers`; a failure is only logged (a stale OPTIONS file is never
/// read while a newer one exists).
fn remove_old(fs: &dyn FileSystem, db: &Path, numbers: &[u64]) {
    for n in numbers {
        let path = db.join(options_file_name(*n));
        if let Err(e) = fs.remove_file(&path) {
            log::warn!("removing old options file {}: {e}", path.display());
        }
    }
}

/// The numbers of the OPTIONS files in `db`, ascending.
fn options_file_numbers(fs: &dyn FileSystem, db: &Path) -> Result<Vec<u64>> {
    let names = fs
        .list_dir(db)
        .context(|| format!("listing {}", db.display()))?;
    let mut numbers: Vec<u64> = names
        .iter()
        .filter_map(|n| parse_options_file_name(n))
        .collect();
    numbers.sort_unstable();
    Ok(numbers)
}

/// The whole file for `opts` (docs/options-file.md).
pub(crate) fn encode(opts: &Options) -> String {
    let mut body = String::from("# FlatLSM options of this database, written at open.\n");
    body += "# Format: docs/options-file.md. Edits must update the checksum.\n";
    body += &format!(
        "[version]\nformat = {FORMAT}\nflatlsm = \"{}\"\n",
        env!("CARGO_PKG_VERSION")
    );
    let mut section = "";
    for (s, name, value) in stored_values(opts) {
        if s != section {
            body += &format!("\n[{s}]\n");
            section = s;
        }
        body += &format!("{name} = {value}\n");
    }
    body.push('\n');
    let crc = crc32c(body.as_bytes());
    format!("{body}{CHECKSUM_SECTION}crc32c = \"{crc:08x}\"\n")
}

/// The options `bytes` (the file at `path`) encode, after their checksum is verified.
pub(crate) fn decode(bytes: &[u8], path: &Path) -> Result<Options> {
    let body = verified_body(bytes, path)?;
    let text = std::str::from_utf8(body).map_err(|e| {
        let at = e.valid_up_to();
        damaged(path, body, at, "the text is not UTF-8".into())
    })?;
    parse_body(text, path)
}

/// The bytes the checksum covers, once it matches.
fn verified_body<'a>(bytes: &'a [u8], path: &Path) -> Result<&'a [u8]> {
    let start = find_checksum_section(bytes).ok_or_else(|| {
        let why = "no [checksum] section at the end: the file is truncated or not an OPTIONS file";
        damaged(path, bytes, bytes.len(), why.into())
    })?;
    let (body, trailer) = bytes.split_at(start);
    let recorded = parse_checksum(&trailer[CHECKSUM_SECTION.len()..]).ok_or_else(|| {
        let why = "expected `crc32c = \"<8 hex digits>\"` as the file's last line";
        damaged(path, bytes, start + CHECKSUM_SECTION.len(), why.into())
    })?;
    let actual = crc32c(body);
    if recorded != actual {
        let why = format!(
            "checksum mismatch: the file records crc32c {recorded:08x}, its contents have \
             {actual:08x} (the file is damaged)"
        );
        return Err(damaged(path, bytes, start, why));
    }
    Ok(body)
}

/// Offset of the last line that reads `[checksum]`.
fn find_checksum_section(bytes: &[u8]) -> Option<usize> {
    let marker = CHECKSUM_SECTION.as_bytes();
    (0..bytes.len())
        .rev()
        .find(|&i| bytes[i..].starts_with(marker) && (i == 0 || bytes[i - 1] == b'\n'))
}

/// The crc a checksum section's one line records.
fn parse_checksum(line: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(line).ok()?;
    let hex = text
        .strip_prefix("crc32c = \"")?
        .strip_suffix("\"\n")
        .filter(|h| h.len() == 8)?;
    u32::from_str_radix(hex, 16).ok()
}

/// The options a verified body sets, on top of the defaults.
fn parse_body(text: &str, path: &Path) -> Result<Options> {
    let mut opts = Options::default();
    let (mut section, mut format_seen, mut offset) = ("", false, 0);
    for raw in text.split_inclusive('\n') {
        let at = |why: String| damaged(path, text.as_bytes(), offset, why);
        format_seen |= parse_line(&mut opts, &mut section, raw.trim(), path).map_err(at)?;
        offset += raw.len();
    }
    match format_seen {
        true => Ok(opts),
        false => Err(damaged(
            path,
            text.as_bytes(),
            0,
            "no [version] format line".into(),
        )),
    }
}

/// Applies one line (a comment, a blank line, `[section]` or `name = value` of `section`);
/// true for the format line.
fn parse_line<'a>(
    opts: &mut Options,
    section: &mut &'a str,
    line: &'a str,
    path: &Path,
) -> std::result::Result<bool, String> {
    if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
        *section = name;
        return Ok(false);
    }
    if line.is_empty() || line.starts_with('#') {
        return Ok(false);
    }
    let expected = "expected `name = value`, `[section]` or a # comment";
    let (name, value) = line.split_once('=').ok_or(expected)?;
    apply(opts, section, name.trim(), value.trim(), path)
}

/// Applies one `name = value` of `section`; true for the format line. Unknown names are
/// logged and skipped.
fn apply(
    opts: &mut Options,
    section: &str,
    name: &str,
    value: &str,
    path: &Path,
) -> std::result::Result<bool, String> {
    match (section, name) {
        ("version", "format") => check_format(value).map(|()| true),
        ("version", _) => Ok(false),
        _ => match set_stored(opts, section, name, value) {
            Ok(true) => Ok(false),
            Ok(false) => {
                let file = path.display();
                log::warn!("{file}: unknown option {section}.{name} ignored (a newer FlatLSM?)");
                Ok(false)
            }
            Err(expected) => Err(format!("{}: expected {expected}", qualified(section, name))),
        },
    }
}

fn check_format(value: &str) -> std::result::Result<(), String> {
    match value.parse::<u64>() {
        Ok(FORMAT) => Ok(()),
        _ => Err(format!(
            "format {value} is not the format {FORMAT} this FlatLSM reads"
        )),
    }
}

/// A corruption error at byte `offset` of `path`, naming its line.
fn damaged(path: &Path, bytes: &[u8], offset: usize, why: String) -> Error {
    let line = 1 + bytes[..offset.min(bytes.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    Error::corruption(path, offset as u64, format!("line {line}: {why}"))
}

#[cfg(test)]
#[path = "file_tests.rs"]
mod tests;
