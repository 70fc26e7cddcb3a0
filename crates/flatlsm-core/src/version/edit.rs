//! [`VersionEdit`]: one change to the SSD tree, and its persistent encoding.
//!
//! Encoding (the payload of one manifest record): a sequence of fields, each a tag varint followed
//! by the field's payload. All integers are unsigned LEB128 varints; byte strings are a varint
//! length followed by the bytes.
//!
//! | tag | field                 | payload                                                        |
//! |-----|-----------------------|----------------------------------------------------------------|
//! | 1   | `next_file_number`    | u64                                                            |
//! | 2   | `last_sequence`       | u64                                                            |
//! | 3   | `min_unflushed_pmlog` | u64                                                            |
//! | 4   | one deleted file      | level, file number                                             |
//! | 5   | one new file          | level, number, file_size, num_entries, smallest, largest, n, n × (vlog number, bytes) |
//! | 6   | one new value log     | number, total_bytes                                            |
//! | 7   | one deleted value log | number                                                         |
//! | 8   | `tracks_pm_logs`      | u64, always 1: this manifest records every PM Log that may hold unflushed data |
//! | 9   | one new PM Log        | number, replaces (the log a PMTable GC replaces; 0 = none)     |
//! | 10  | `identity`            | byte string: the database identity (32 hex digits, `layout/identity.rs`) |
//! | 11  | one new redirect      | victim vlog, redirect file number, file_size, target vlog      |
//! | 12  | one deleted redirect  | victim vlog                                                    |
//! | 13  | `profile`             | byte string: the design the database was created with (`flatlsm`, `leveled`, ...) |
//! | 14–17 | one design record   | its tag's varint fields (`extension.rs`, `DESIGN_RECORD_SHAPES`): 4, 2, 1 and 1 (once) |
//! | 18  | one new file in PM    | as tag 5: a file kept in the PM directory (`SstDir::Pm`)       |
//! | 19  | one new range tombstone | seq, start key, end key (`delete_range`, `range_del.rs`)     |
//! | 20  | one retired range tombstone | seq                                                      |
//! | 21  | a new file's applied range deletions | file number, sequence: the file holds no version a tombstone at or below it covers; follows the file's tag 5 or 18 in the same edit |
//!
//! Repeated list fields appear once per element, in list order. An unknown tag, a truncated
//! field or a scalar tag that appears twice is [`crate::Error::Corruption`]; decoding never panics.
//! Tags 8–10 were added after the first release: manifests written before lack them (see
//! docs/manifest-format.md for how recovery treats such a manifest). Tags 11–12 record value-log
//! GC by redirect tables (docs/vlog-format.md, "Redirect tables"). Tag 18 came with level 0 in PM
//! (the `leveled` profile's `level0_in_pm`); a file recorded by tag 5 is in the database
//! directory. Tag 13 came with the designs
//! (docs/architecture.md): a manifest without it belongs to a `flatlsm` database.
//!
//! Tags 14–17 are design records: core decodes them by their shape and leaves their meaning to
//! the design that writes them (its version extension; docs/manifest-format.md says which).
//! They are written grouped by tag, ascending, after tags 11–12 and before tags 19–20.
//!
//! Tags 19–21 came with `delete_range`: a manifest without them has no range tombstone and
//! its files applied none (sequence 0).
//!
//! Thread-safety: plain data (`Send + Sync`).

use super::extension::{decode_design_record, encode_design_records, record_shape, DesignRecord};
use crate::coding::{put_bytes, put_varint64, Decoder};
use crate::error::Result;
use crate::range_del::RangeTombstone;
use crate::sst::SstDir;
use std::path::Path;

const TAG_NEXT_FILE_NUMBER: u64 = 1;
const TAG_LAST_SEQUENCE: u64 = 2;
const TAG_MIN_UNFLUSHED_PMLOG: u64 = 3;
const TAG_DELETED_FILE: u64 = 4;
const TAG_NEW_FILE: u64 = 5;
const TAG_NEW_VLOG: u64 = 6;
const TAG_DELETED_VLOG: u64 = 7;
const TAG_TRACKS_PM_LOGS: u64 = 8;
const TAG_NEW_PM_LOG: u64 = 9;
const TAG_IDENTITY: u64 = 10;
const TAG_NEW_REDIRECT: u64 = 11;
const TAG_DELETED_REDIRECT: u64 = 12;
const TAG_PROFILE: u64 = 13;
const TAG_NEW_FILE_IN_PM: u64 = 18;
const TAG_NEW_RANGE_DEL: u64 = 19;
const TAG_RETIRED_RANGE_DEL: u64 = 20;
const TAG_FILE_RANGE_DELS_APPLIED: u64 = 21;

/// The only payload of tag 8: the PM Log recording rule of docs/manifest-format.md.
const PM_LOG_TRACKING_VERSION: u64 = 1;

/// Metadata of one SSTable in the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileMeta {
    /// File number (the SST's file name is derived from it).
    pub number: u64,
    /// Size of the file in bytes.
    pub file_size: u64,
    /// Number of entries in the file.
    pub num_entries: u64,
    /// Smallest internal key in the file.
    pub smallest: Vec<u8>,
    /// Largest internal key in the file.
    pub largest: Vec<u8>,
    /// Value-log files this SST points into, with the bytes (sum of record_len) it references in each.
    pub vlog_refs: Vec<(u64, u64)>,
    /// The directory the file is kept in.
    pub dir: SstDir,
    /// Every range tombstone at or below this sequence was applied when the file was written:
    /// it holds no version such a tombstone covers (0: none known applied).
    pub range_dels_applied: u64,
}

/// Metadata of one value-log file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VlogMeta {
    /// File number of the value log.
    pub number: u64,
    /// Total bytes of records written to the file (excluding the file header).
    pub total_bytes: u64,
}

/// A value log redirected by value-log GC: its live records were copied to `target`, and
/// redirect table `number` maps each one's old offset to its new pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RedirectMeta {
    /// The redirected value log (no longer in the version's value logs; its data file is
    /// deleted once no live version reaches it).
    pub victim: u64,
    /// File number of the redirect table (`file_names::redirect_file_name`).
    pub number: u64,
    /// Size of the redirect table in bytes.
    pub file_size: u64,
    /// The value log holding the copies.
    pub target: u64,
}

/// A PM Log recorded in the manifest before any user write goes into it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PmLogMeta {
    /// The log's number (its file is `log_file_name(number)`).
    pub number: u64,
    /// The log a PMTable GC replaced with this one (it leaves the recorded set); 0 = none.
    pub replaces: u64,
}

/// One atomic change to the tree, as recorded in the manifest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VersionEdit {
    /// The next file number to allocate, if changed.
    pub next_file_number: Option<u64>,
    /// The largest sequence number persisted in SSTables or PM, if changed.
    pub last_sequence: Option<u64>,
    /// PM logs with a number below this have been flushed to SSTables and may be deleted.
    pub min_unflushed_pmlog: Option<u64>,
    /// Files removed from the tree: (level, file number).
    pub deleted_files: Vec<(usize, u64)>,
    /// Files added to the tree: (level, metadata).
    pub new_files: Vec<(usize, FileMeta)>,
    /// Value logs added.
    pub new_vlogs: Vec<VlogMeta>,
    /// Value logs removed (by number).
    pub deleted_vlogs: Vec<u64>,
    /// Set in every snapshot written since PM Logs are recorded: from this record on, every PM
    /// Log that may hold unflushed data is named by a `new_pm_logs` entry.
    pub tracks_pm_logs: bool,
    /// PM Logs created (and, for a PMTable GC, the log each replaces).
    pub new_pm_logs: Vec<PmLogMeta>,
    /// The database identity (the id of `<db>/IDENTITY`), in snapshots.
    pub identity: Option<String>,
    /// Value logs redirected by value-log GC.
    pub new_redirects: Vec<RedirectMeta>,
    /// Redirects dropped (by victim) once no SST names the victim.
    pub deleted_redirects: Vec<u64>,
    /// The design (profile) the database was created with, in snapshots.
    pub profile: Option<String>,
    /// Records of the design's own state (tags 14–17), applied to the version's extension.
    pub design_records: Vec<DesignRecord>,
    /// Range tombstones added (`delete_range`).
    pub new_range_dels: Vec<RangeTombstone>,
    /// Range tombstones retired (by sequence): no live data is older than them in their range.
    pub retired_range_dels: Vec<u64>,
}

impl VersionEdit {
    /// True if the edit changes nothing.
    pub fn is_empty(&self) -> bool {
        *self == VersionEdit::default()
    }

    /// Encodes the edit as tagged fields (see the module documentation).
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        let scalars = [
            (TAG_NEXT_FILE_NUMBER, self.next_file_number),
            (TAG_LAST_SEQUENCE, self.last_sequence),
            (TAG_MIN_UNFLUSHED_PMLOG, self.min_unflushed_pmlog),
        ];
        for (tag, v) in scalars {
            if let Some(v) = v {
                put_varint64(&mut b, tag);
                put_varint64(&mut b, v);
            }
        }
        for &(level, number) in &self.deleted_files {
            put_varint64(&mut b, TAG_DELETED_FILE);
            put_varint64(&mut b, level as u64);
            put_varint64(&mut b, number);
        }
        for (level, f) in &self.new_files {
            let tag = match f.dir {
                SstDir::Data => TAG_NEW_FILE,
                SstDir::Pm => TAG_NEW_FILE_IN_PM,
            };
            put_varint64(&mut b, tag);
            put_varint64(&mut b, *level as u64);
            encode_file(&mut b, f);
            if f.range_dels_applied != 0 {
                put_varint64(&mut b, TAG_FILE_RANGE_DELS_APPLIED);
                put_varint64(&mut b, f.number);
                put_varint64(&mut b, f.range_dels_applied);
            }
        }
        for v in &self.new_vlogs {
            put_varint64(&mut b, TAG_NEW_VLOG);
            put_varint64(&mut b, v.number);
            put_varint64(&mut b, v.total_bytes);
        }
        for &n in &self.deleted_vlogs {
            put_varint64(&mut b, TAG_DELETED_VLOG);
            put_varint64(&mut b, n);
        }
        self.encode_pm_fields(&mut b);
        self.encode_redirect_fields(&mut b);
        encode_design_records(&self.design_records, &mut b);
        self.encode_range_del_fields(&mut b);
        b
    }

    /// Encodes the fields of tags 19–20 (tag 21 follows each file it marks).
    fn encode_range_del_fields(&self, b: &mut Vec<u8>) {
        for t in &self.new_range_dels {
            put_varint64(b, TAG_NEW_RANGE_DEL);
            put_varint64(b, t.seq);
            put_bytes(b, &t.start);
            put_bytes(b, &t.end);
        }
        for &seq in &self.retired_range_dels {
            put_varint64(b, TAG_RETIRED_RANGE_DEL);
            put_varint64(b, seq);
        }
    }

    /// Encodes the fields of tags 11–12.
    fn encode_redirect_fields(&self, b: &mut Vec<u8>) {
        for r in &self.new_redirects {
            put_varint64(b, TAG_NEW_REDIRECT);
            for v in [r.victim, r.number, r.file_size, r.target] {
                put_varint64(b, v);
            }
        }
        for &victim in &self.deleted_redirects {
            put_varint64(b, TAG_DELETED_REDIRECT);
            put_varint64(b, victim);
        }
    }

    /// Encodes the fields of tags 8–10 (absent when unset, so older edits encode as before).
    /// Tags 11–12 follow (`encode_redirect_fields`).
    fn encode_pm_fields(&self, b: &mut Vec<u8>) {
        if self.tracks_pm_logs {
            put_varint64(b, TAG_TRACKS_PM_LOGS);
            put_varint64(b, PM_LOG_TRACKING_VERSION);
        }
        for log in &self.new_pm_logs {
            put_varint64(b, TAG_NEW_PM_LOG);
            put_varint64(b, log.number);
            put_varint64(b, log.replaces);
        }
        if let Some(id) = &self.identity {
            put_varint64(b, TAG_IDENTITY);
            put_bytes(b, id.as_bytes());
        }
        if let Some(profile) = &self.profile {
            put_varint64(b, TAG_PROFILE);
            put_bytes(b, profile.as_bytes());
        }
    }

    /// Decodes an edit from `bytes`, which start at byte `offset` of `path` (for error messages).
    ///
    /// Never panics; malformed input is [`crate::Error::Corruption`] at the offset of the bad field.
    pub fn decode(bytes: &[u8], path: &Path, offset: u64) -> Result<Self> {
        let mut d = Decoder::new(bytes, path, offset);
        let mut e = VersionEdit::default();
        while !d.is_empty() {
            let tag = d.varint("tag")?;
            decode_field(&mut d, &mut e, tag)?;
        }
        Ok(e)
    }
}

fn decode_field(d: &mut Decoder<'_>, e: &mut VersionEdit, tag: u64) -> Result<()> {
    match tag {
        TAG_NEXT_FILE_NUMBER => set_once(d, &mut e.next_file_number, "next_file_number"),
        TAG_LAST_SEQUENCE => set_once(d, &mut e.last_sequence, "last_sequence"),
        TAG_MIN_UNFLUSHED_PMLOG => set_once(d, &mut e.min_unflushed_pmlog, "min_unflushed_pmlog"),
        TAG_DELETED_FILE => {
            let level = d.varint_usize("deleted file level")?;
            let number = d.varint("deleted file number")?;
            e.deleted_files.push((level, number));
            Ok(())
        }
        TAG_NEW_FILE | TAG_NEW_FILE_IN_PM => {
            let level = d.varint_usize("new file level")?;
            let mut f = decode_file(d)?;
            if tag == TAG_NEW_FILE_IN_PM {
                f.dir = SstDir::Pm;
            }
            e.new_files.push((level, f));
            Ok(())
        }
        TAG_NEW_VLOG => {
            let number = d.varint("vlog number")?;
            let total_bytes = d.varint("vlog total_bytes")?;
            e.new_vlogs.push(VlogMeta {
                number,
                total_bytes,
            });
            Ok(())
        }
        TAG_DELETED_VLOG => {
            e.deleted_vlogs.push(d.varint("deleted vlog number")?);
            Ok(())
        }
        TAG_TRACKS_PM_LOGS | TAG_NEW_PM_LOG | TAG_IDENTITY => decode_pm_field(d, e, tag),
        TAG_PROFILE => {
            let profile = d.utf8("profile")?.to_string();
            if e.profile.replace(profile).is_some() {
                return Err(d.error("profile appears twice"));
            }
            Ok(())
        }
        TAG_NEW_REDIRECT => {
            let r = decode_redirect(d)?;
            e.new_redirects.push(r);
            Ok(())
        }
        TAG_DELETED_REDIRECT => {
            e.deleted_redirects
                .push(d.varint("deleted redirect victim")?);
            Ok(())
        }
        TAG_NEW_RANGE_DEL..=TAG_FILE_RANGE_DELS_APPLIED => decode_range_del_field(d, e, tag),
        _ => match record_shape(tag) {
            Some(shape) => decode_design_record(d, e, shape),
            None => Err(d.error(format!("unknown version edit tag {tag}"))),
        },
    }
}

fn decode_pm_field(d: &mut Decoder<'_>, e: &mut VersionEdit, tag: u64) -> Result<()> {
    match tag {
        TAG_TRACKS_PM_LOGS => {
            let version = d.varint("tracks_pm_logs")?;
            if e.tracks_pm_logs {
                return Err(d.error("tracks_pm_logs appears twice"));
            }
            if version != PM_LOG_TRACKING_VERSION {
                return Err(d.error(format!(
                    "tracks_pm_logs {version}, expected {PM_LOG_TRACKING_VERSION}"
                )));
            }
            e.tracks_pm_logs = true;
        }
        TAG_NEW_PM_LOG => {
            let number = d.varint("PM log number")?;
            let replaces = d.varint("PM log replaces")?;
            e.new_pm_logs.push(PmLogMeta { number, replaces });
        }
        _ => {
            let id = d.utf8("identity")?.to_string();
            if e.identity.replace(id).is_some() {
                return Err(d.error("identity appears twice"));
            }
        }
    }
    Ok(())
}

fn decode_range_del_field(d: &mut Decoder<'_>, e: &mut VersionEdit, tag: u64) -> Result<()> {
    match tag {
        TAG_NEW_RANGE_DEL => {
            let seq = d.varint("range tombstone sequence")?;
            let start = d.bytes("range tombstone start")?.to_vec();
            let end = d.bytes("range tombstone end")?.to_vec();
            e.new_range_dels.push(RangeTombstone { start, end, seq });
        }
        TAG_RETIRED_RANGE_DEL => {
            let seq = d.varint("retired range tombstone sequence")?;
            e.retired_range_dels.push(seq);
        }
        _ => {
            let number = d.varint("marked file number")?;
            let applied = d.varint("file's applied range deletions")?;
            let Some((_, f)) = e.new_files.iter_mut().find(|(_, f)| f.number == number) else {
                return Err(d.error(format!(
                    "applied range deletions for file {number}, which the edit does not add"
                )));
            };
            f.range_dels_applied = applied;
        }
    }
    Ok(())
}

fn decode_redirect(d: &mut Decoder<'_>) -> Result<RedirectMeta> {
    Ok(RedirectMeta {
        victim: d.varint("redirect victim")?,
        number: d.varint("redirect file number")?,
        file_size: d.varint("redirect file size")?,
        target: d.varint("redirect target")?,
    })
}

fn set_once(d: &mut Decoder<'_>, slot: &mut Option<u64>, what: &str) -> Result<()> {
    if slot.is_some() {
        return Err(d.error(format!("{what} appears twice")));
    }
    *slot = Some(d.varint(what)?);
    Ok(())
}

fn encode_file(b: &mut Vec<u8>, f: &FileMeta) {
    put_varint64(b, f.number);
    put_varint64(b, f.file_size);
    put_varint64(b, f.num_entries);
    put_bytes(b, &f.smallest);
    put_bytes(b, &f.largest);
    put_varint64(b, f.vlog_refs.len() as u64);
    for &(vlog, bytes) in &f.vlog_refs {
        put_varint64(b, vlog);
        put_varint64(b, bytes);
    }
}

fn decode_file(d: &mut Decoder<'_>) -> Result<FileMeta> {
    let number = d.varint("file number")?;
    let file_size = d.varint("file size")?;
    let num_entries = d.varint("entry count")?;
    let smallest = d.bytes("smallest key")?.to_vec();
    let largest = d.bytes("largest key")?.to_vec();
    let count = d.varint_usize("vlog ref count")?;
    // Each ref takes at least two bytes: bound the count before allocating.
    if count > d.remaining() / 2 {
        return Err(d.error(format!(
            "vlog ref count {count} exceeds the remaining bytes"
        )));
    }
    let mut vlog_refs = Vec::with_capacity(count);
    for _ in 0..count {
        let vlog = d.varint("vlog ref number")?;
        let bytes = d.varint("vlog ref bytes")?;
        vlog_refs.push((vlog, bytes));
    }
    Ok(FileMeta {
        number,
        file_size,
        num_entries,
        smallest,
        largest,
        vlog_refs,
        dir: SstDir::Data,
        range_dels_applied: 0,
    })
}
