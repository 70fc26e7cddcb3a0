//! The manifest: the durable log of [`VersionEdit`]s from which the tree is recovered.
//!
//! Files (in the database directory):
//! - `MANIFEST-{number:06}`: a sequence of records, each
//!   `crc32c u32 LE (over len + payload) | len u32 LE | payload` where the payload is an encoded
//!   [`VersionEdit`]. The first record of every manifest is a snapshot of the whole state.
//! - `CURRENT`: the name of the live manifest followed by `\n`.
//!
//! Persist order: a record is acknowledged only after the manifest file is synced; `CURRENT` is
//! replaced only by [`write_file_atomic`] (temp file, sync, rename, directory sync), and only
//! after the new manifest holding its snapshot is synced. Older manifests are removed afterwards.
//! A PM Log is recorded (tag 9) before its first user write (`DbInner::record_pm_log`, and the
//! snapshot open writes names the mutable PMTable it created).
//!
//! Recovery rule: records are replayed in order; the fields in each edit overwrite
//! (`next_file_number`, `last_sequence`, `min_unflushed_pmlog`, identity) or apply (files, value
//! logs, the set of PM Logs that may hold unflushed data) to the state built so far (see
//! [`ManifestState`]). The versions start from the extension the caller's [`ChooseExtension`]
//! picks for the profile the first record (a snapshot) names, or for none if it names none:
//! the design's own state, to which the edits' design records apply (`extension.rs`). A final record that is truncated (or whose last sectors are zero) and is
//! followed by nothing else is a torn write from a crash during append (never acknowledged): it is
//! ignored with a `log::warn`; so is an all-zero tail (a crash that extended the file but lost the
//! data, which cannot hold a record since no valid record starts with eight zero bytes). A complete
//! final record that fails its crc is damage, not a torn write (see `is_torn_tail`). Because a damaged length field cannot be trusted, "followed by nothing
//! else" is checked by searching the bytes after the bad record's start for any valid record; if
//! one is found (or the search exceeds its budget) the bad record is not a torn tail. A bad
//! record followed by more bytes, a record whose edit does not decode or apply, a manifest with
//! no valid record, a missing or garbled `CURRENT`, or a `CURRENT` naming a missing file is
//! [`crate::Error::Corruption`] naming the file and offset.
//!
//! A torn tail cannot be told from a manifest cut at the same place; a cut that lost a record
//! which had taken effect shows as files the recovered state names but that are gone, which
//! open checks before it writes (`recovery/consistency.rs`; [`Manifest::load`] reports the torn tail
//! for its messages).
//!
//! After recovery the engine must start a new manifest with [`Manifest::create`] rather than
//! append to the recovered one (a torn tail would otherwise be followed by new records).
//!
//! Thread-safety: [`Manifest`] is `Send` and has one owner (the thread that installs versions).

use super::edit::VersionEdit;
use super::extension::Extension;
use super::manifest_state::ManifestState;
use super::version::Version;
use crate::error::{Error, IoContext, Result};
pub use crate::file_names::{manifest_file_name, parse_manifest_file_name};
use crate::fs::{write_file_atomic, FileSystem, WritableFile};
use crate::types::crc32c;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Name of the file that names the live manifest.
pub const CURRENT_FILE_NAME: &str = "CURRENT";

/// Chooses the extension a database's versions start from (its design's, empty) given the
/// profile its manifest records (`None`: none recorded). The engine supplies one that knows
/// its designs; [`no_extension`] serves databases whose designs keep none.
pub type ChooseExtension<'a> = dyn Fn(Option<&str>) -> Extension + 'a;

/// The [`ChooseExtension`] of databases whose designs keep no extension: always
/// [`Extension::none`], which refuses design records.
pub fn no_extension(_profile: Option<&str>) -> Extension {
    Extension::none()
}

/// Size of a record header: crc u32 + len u32.
const RECORD_HEADER_LEN: usize = 8;

/// Most payload bytes checksummed while deciding whether a bad final record is a torn write.
const TORN_SEARCH_BUDGET: usize = 64 << 20;

/// The open manifest writer.
pub struct Manifest {
    file: Box<dyn WritableFile>,
    path: PathBuf,
    number: u64,
    failed: bool,
}

impl std::fmt::Debug for Manifest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manifest")
            .field("path", &self.path)
            .field("size", &self.file.len())
            .field("failed", &self.failed)
            .finish()
    }
}

/// Frames a payload as a manifest record.
fn frame(payload: &[u8], path: &Path) -> Result<Vec<u8>> {
    let len = u32::try_from(payload.len()).map_err(|_| {
        Error::InvalidArgument(format!(
            "manifest record of {} bytes for {} exceeds 4 GiB",
            payload.len(),
            path.display()
        ))
    })?;
    let mut rec = Vec::with_capacity(RECORD_HEADER_LEN + payload.len());
    rec.extend_from_slice(&[0; 4]);
    rec.extend_from_slice(&len.to_le_bytes());
    rec.extend_from_slice(payload);
    let crc = crc32c(&rec[4..]);
    rec[..4].copy_from_slice(&crc.to_le_bytes());
    Ok(rec)
}

impl Manifest {
    /// True if `dir` holds a `CURRENT` file.
    pub fn exists(fs: &dyn FileSystem, dir: &Path) -> bool {
        fs.exists(&dir.join(CURRENT_FILE_NAME))
    }

    /// Writes a new manifest `MANIFEST-{manifest_number:06}` holding one snapshot record of
    /// `state`, syncs it, then atomically points `CURRENT` at it and removes every other
    /// `MANIFEST-*` file. Fails with [`Error::InvalidArgument`] if `CURRENT` already names
    /// `manifest_number` (that would overwrite the live manifest).
    pub fn create(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        manifest_number: u64,
        state: &ManifestState,
    ) -> Result<Manifest> {
        let name = manifest_file_name(manifest_number);
        if read_current(&*fs, dir).ok() == Some(manifest_number) {
            return Err(Error::InvalidArgument(format!(
                "{name} is the live manifest and cannot be recreated"
            )));
        }
        let path = dir.join(&name);
        let mut file = fs
            .create(&path)
            .context(|| format!("creating {}", path.display()))?;
        let rec = frame(&state.snapshot_edit().encode(), &path)?;
        file.append(&rec)
            .and_then(|()| file.sync())
            .context(|| format!("writing snapshot to {}", path.display()))?;
        let current = dir.join(CURRENT_FILE_NAME);
        write_file_atomic(&*fs, &current, format!("{name}\n").as_bytes())
            .context(|| format!("pointing {} at {name}", current.display()))?;
        remove_other_manifests(&*fs, dir, manifest_number);
        Ok(Manifest {
            file,
            path,
            number: manifest_number,
            failed: false,
        })
    }

    /// Appends one edit record and syncs it: the edit is durable on return. After a failed
    /// append the manifest refuses further appends ([`Error::InvalidState`]); the engine must
    /// recover and create a new manifest.
    pub fn append(&mut self, edit: &VersionEdit) -> Result<()> {
        if self.failed {
            return Err(Error::InvalidState(format!(
                "manifest {} failed earlier; reopen the database",
                self.path.display()
            )));
        }
        let rec = frame(&edit.encode(), &self.path)?;
        let res = self.file.append(&rec).and_then(|()| self.file.sync());
        if res.is_err() {
            self.failed = true;
        }
        res.context(|| format!("appending to {}", self.path.display()))
    }

    /// Bytes written to the manifest file so far.
    pub fn file_size(&self) -> u64 {
        self.file.len()
    }

    /// The manifest's file number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// Reads `CURRENT` and replays the manifest it names (see the module documentation), the
    /// versions starting from the extension `choose` picks; a torn final record is logged and
    /// ignored.
    pub fn recover(
        fs: &dyn FileSystem,
        dir: &Path,
        choose: &ChooseExtension<'_>,
    ) -> Result<ManifestState> {
        let recovered = Self::load(fs, dir, choose)?;
        if let Some(note) = &recovered.torn_tail {
            log::warn!("{note}");
        }
        Ok(recovered.state)
    }

    /// Like [`Manifest::recover`], but also says which manifest was replayed, how many records
    /// it held and whether a torn final record was ignored (for open's consistency check and
    /// for `inspect::check`; neither logs).
    pub fn load(
        fs: &dyn FileSystem,
        dir: &Path,
        choose: &ChooseExtension<'_>,
    ) -> Result<RecoveredManifest> {
        let number = read_current(fs, dir)?;
        let path = dir.join(manifest_file_name(number));
        let data = match fs.read_all(&path) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // The bad bytes are CURRENT's (or the manifest was deleted): name CURRENT.
                return Err(Error::corruption(
                    dir.join(CURRENT_FILE_NAME),
                    0,
                    format!("CURRENT names {}, which is missing", path.display()),
                ));
            }
            Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
        };
        replay_detailed(&data, &path, choose)
    }
}

/// What [`Manifest::load`] recovered.
#[derive(Clone, Debug)]
pub struct RecoveredManifest {
    /// The manifest file replayed.
    pub path: PathBuf,
    /// The state its records build.
    pub state: ManifestState,
    /// Number of complete records replayed.
    pub records: usize,
    /// Description of a torn final record that was ignored, if any. A state recovered without
    /// its final record is the state *before* that record; the consistency check of open says
    /// so when files are then missing (the record may have been complete once and cut).
    pub torn_tail: Option<String>,
}

/// The path of the manifest `CURRENT` names ([`Error::Corruption`] if `CURRENT` is missing or
/// garbled).
pub fn current_manifest_path(fs: &dyn FileSystem, dir: &Path) -> Result<PathBuf> {
    Ok(dir.join(manifest_file_name(read_current(fs, dir)?)))
}

/// Reads and parses `CURRENT`; the manifest number it names.
fn read_current(fs: &dyn FileSystem, dir: &Path) -> Result<u64> {
    let path = dir.join(CURRENT_FILE_NAME);
    let data = match fs.read_all(&path) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::corruption(&path, 0, "CURRENT is missing"))
        }
        Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
    };
    std::str::from_utf8(&data)
        .ok()
        .and_then(|s| s.strip_suffix('\n'))
        .and_then(parse_manifest_file_name)
        .ok_or_else(|| {
            let shown = String::from_utf8_lossy(&data[..data.len().min(64)]).into_owned();
            Error::corruption(
                &path,
                0,
                format!("CURRENT does not name a manifest: {shown:?}"),
            )
        })
}

fn remove_other_manifests(fs: &dyn FileSystem, dir: &Path, keep: u64) {
    let names = match fs.list_dir(dir) {
        Ok(n) => n,
        Err(e) => {
            log::warn!("listing {} to remove old manifests: {e}", dir.display());
            return;
        }
    };
    for name in names {
        if parse_manifest_file_name(&name).is_some_and(|n| n != keep) {
            let p = dir.join(&name);
            if let Err(e) = fs.remove_file(&p) {
                log::warn!("removing old manifest {}: {e}", p.display());
            }
        }
    }
}

/// Why the bytes at an offset are not a valid record.
struct BadRecord {
    detail: String,
    /// The record's claimed end, when its length field fits in the file.
    claimed_end: Option<usize>,
}

/// Validates the record framed at `pos`; its payload and end offset.
fn frame_at(data: &[u8], pos: usize) -> std::result::Result<(&[u8], usize), BadRecord> {
    let rest = &data[pos..];
    if rest.len() < RECORD_HEADER_LEN {
        return Err(BadRecord {
            detail: format!("truncated record header ({} bytes)", rest.len()),
            claimed_end: None,
        });
    }
    let stored = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
    let len = u32::from_le_bytes([rest[4], rest[5], rest[6], rest[7]]) as usize;
    if len > rest.len() - RECORD_HEADER_LEN {
        return Err(BadRecord {
            detail: format!("record length {len} extends past the end of the file"),
            claimed_end: None,
        });
    }
    let end = pos + RECORD_HEADER_LEN + len;
    if crc32c(&data[pos + 4..end]) != stored {
        return Err(BadRecord {
            detail: "record checksum mismatch".to_string(),
            claimed_end: Some(end),
        });
    }
    Ok((&data[pos + RECORD_HEADER_LEN..end], end))
}

/// True if the bad record at `pos` is a torn final write from a crash during an append (which was
/// never acknowledged, so nothing acted on it), rather than damage to a committed record:
/// - every byte from `pos` on is zero (the file was extended but its data was lost); or
/// - the record claims to end exactly at the end of the file and one of its sectors is all zero
///   (never written); or
/// - it claims to extend past the end of the file, its length field is not merely damaged (the
///   crc does not verify with the length the file implies), and no valid, decodable record
///   starts anywhere after `pos`.
///
/// A complete final record that fails its crc otherwise is damage: the engine may already have
/// deleted files because of it, so ignoring it would silently lose data.
fn is_torn_tail(data: &[u8], pos: usize, bad: &BadRecord, path: &Path) -> bool {
    if data[pos..].iter().all(|&b| b == 0) {
        return true;
    }
    match bad.claimed_end {
        Some(end) if end < data.len() => return false,
        Some(_) => return has_unwritten_sectors(data, pos),
        None => {}
    }
    if data.len() - pos < RECORD_HEADER_LEN {
        return true;
    }
    if complete_with_damaged_length(data, pos) {
        return false;
    }
    let mut budget = TORN_SEARCH_BUDGET;
    for q in pos + 1..data.len().saturating_sub(RECORD_HEADER_LEN - 1) {
        let len = u32::from_le_bytes([data[q + 4], data[q + 5], data[q + 6], data[q + 7]]) as usize;
        if len > data.len() - q - RECORD_HEADER_LEN {
            continue;
        }
        if len + 4 > budget {
            return false;
        }
        budget -= len + 4;
        if let Ok((payload, _)) = frame_at(data, q) {
            if VersionEdit::decode(payload, path, q as u64).is_ok() {
                return false;
            }
        }
    }
    true
}

/// Sector size below which a write is assumed atomic (a torn write loses whole sectors).
const SECTOR: usize = 512;

/// True if some sector of the record at `pos` (from a sector boundary after `pos`; the last one
/// may be partial) is all zero: a sector the crash kept from reaching the disk. Page write-back
/// order is not guaranteed, so the unwritten sector need not be the last.
fn has_unwritten_sectors(data: &[u8], pos: usize) -> bool {
    let first_boundary = (pos / SECTOR + 1) * SECTOR;
    (first_boundary..data.len()).step_by(SECTOR).any(|q| {
        data[q..(q + SECTOR).min(data.len())]
            .iter()
            .all(|&b| b == 0)
    })
}

/// True if the record at `pos` verifies when its length field is replaced by the length the
/// file implies (the rest of the file): a complete record whose length field was damaged.
fn complete_with_damaged_length(data: &[u8], pos: usize) -> bool {
    let implied = data.len() - pos - RECORD_HEADER_LEN;
    let Ok(implied) = u32::try_from(implied) else {
        return false;
    };
    let stored = u32::from_le_bytes([data[pos], data[pos + 1], data[pos + 2], data[pos + 3]]);
    let crc = crate::types::crc32c_extend(
        crc32c(&implied.to_le_bytes()),
        &data[pos + RECORD_HEADER_LEN..],
    );
    crc == stored
}

/// One decoded record of a manifest file (for recovery and for inspection tools).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestRecord {
    /// Offset of the record's header in the file.
    pub offset: u64,
    /// The decoded edit.
    pub edit: VersionEdit,
}

/// Decodes every record of a manifest's bytes in order, applying the torn-tail rule of the
/// module documentation: returns the records and, when a torn final record was ignored, a
/// description of it. A bad record that is not a torn tail, or an edit that does not decode,
/// is [`Error::Corruption`] naming `path` and the offset.
pub fn read_manifest_records(
    data: &[u8],
    path: &Path,
) -> Result<(Vec<ManifestRecord>, Option<String>)> {
    let mut records = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let (payload, end) = match frame_at(data, pos) {
            Ok(r) => r,
            Err(bad) if is_torn_tail(data, pos, &bad, path) => {
                let note = format!(
                    "torn final record at offset {pos} of {} ({}, {} bytes) ignored",
                    path.display(),
                    bad.detail,
                    data.len() - pos
                );
                return Ok((records, Some(note)));
            }
            Err(bad) => return Err(Error::corruption(path, pos as u64, bad.detail)),
        };
        let edit = VersionEdit::decode(payload, path, (pos + RECORD_HEADER_LEN) as u64)?;
        records.push(ManifestRecord {
            offset: pos as u64,
            edit,
        });
        pos = end;
    }
    Ok((records, None))
}

/// The records of a manifest's bytes up to the first one that does not check or decode, and
/// that one's offset (`None` if every record checks). For repair, which salvages what only a
/// damaged manifest knows; opening uses [`read_manifest_records`] and refuses the damage.
pub fn readable_manifest_prefix(data: &[u8], path: &Path) -> (Vec<ManifestRecord>, Option<u64>) {
    let mut records = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let Ok((payload, end)) = frame_at(data, pos) else {
            return (records, Some(pos as u64));
        };
        let at = (pos + RECORD_HEADER_LEN) as u64;
        let Ok(edit) = VersionEdit::decode(payload, path, at) else {
            return (records, Some(pos as u64));
        };
        records.push(ManifestRecord {
            offset: pos as u64,
            edit,
        });
        pos = end;
    }
    (records, None)
}

/// Replays every record of a manifest's bytes (public for the fuzz targets; not a stable API).
#[doc(hidden)]
pub fn replay(data: &[u8], path: &Path, choose: &ChooseExtension<'_>) -> Result<ManifestState> {
    replay_detailed(data, path, choose).map(|r| r.state)
}

/// Replays a manifest's bytes: the torn-tail rule, then at least one complete record (else
/// [`Error::Corruption`] at offset 0), then every edit applied in order.
fn replay_detailed(
    data: &[u8],
    path: &Path,
    choose: &ChooseExtension<'_>,
) -> Result<RecoveredManifest> {
    let (records, torn_tail) = read_manifest_records(data, path)?;
    if records.is_empty() {
        let why = torn_tail.as_deref().unwrap_or("the file is empty");
        return Err(Error::corruption(
            path,
            0,
            format!("manifest holds no complete record ({why})"),
        ));
    }
    Ok(RecoveredManifest {
        path: path.to_path_buf(),
        state: apply_manifest_records(&records, path, choose)?,
        records: records.len(),
        torn_tail,
    })
}

/// The state replaying `records` starts from: empty, its version holding the extension
/// `choose` picks for the profile the first record names.
pub fn initial_state(records: &[ManifestRecord], choose: &ChooseExtension<'_>) -> ManifestState {
    let profile = records.first().and_then(|r| r.edit.profile.as_deref());
    ManifestState {
        version: Version::with_extension(choose(profile)),
        ..ManifestState::default()
    }
}

/// The state the records build, in order, from [`initial_state`]; an edit that cannot be
/// applied is [`Error::Corruption`] naming `path` and the record's offset.
pub fn apply_manifest_records(
    records: &[ManifestRecord],
    path: &Path,
    choose: &ChooseExtension<'_>,
) -> Result<ManifestState> {
    let mut state = initial_state(records, choose);
    for r in records {
        state.apply(&r.edit).map_err(|e| {
            Error::corruption(path, r.offset, format!("edit cannot be applied: {e}"))
        })?;
    }
    Ok(state)
}
