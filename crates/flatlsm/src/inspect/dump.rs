//! `dump`: prints one database file record by record (an SST, a PM Log, a manifest, a value
//! log, a value-log redirect table, `CURRENT` or an OPTIONS file), as LevelDB's `leveldbutil
//! dump` does. The file kind comes from its name. An SST's entries follow a line per data block
//! saying how it is stored (compression type, stored and raw size) and the table's totals.
//!
//! [`DumpOptions`] selects records by user key (`[from, to)`) and caps their number, for the
//! files that hold keys (SSTs, PM Logs, value logs, write-ahead logs; an SST is entered at
//! `from` by its index, the logs are walked whole and filtered; the per-block lines of an SST
//! are left out then), and adds an SST's properties (RocksDB's `sst_dump --show_properties`).
//! Options a file kind cannot honour are refused before anything is printed.

use super::render::{escape_bytes, hex_bytes};
use super::FileKind;
use crate::error::{Error, IoContext, Result};
use crate::fs::{FileSystem, OsFileSystem};
use crate::iter::InternalIterator;
use crate::options::Profile;
use crate::pmtable::log::{decode_header, for_each_entry_in};
use crate::sst::{StoredBlock, Table};
use crate::types::{
    make_internal_key, parse_internal_key, ParsedInternalKey, ValueKind, ValuePointer,
};
use crate::types::{KIND_FOR_SEEK, MAX_SEQUENCE};
use crate::version::{read_manifest_records, VersionEdit};
use crate::vlog::{RedirectTable, VlogReader};
use flatlsm_core::compression::type_name;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// How keys and values are printed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DumpFormat {
    /// Printable ASCII as is, other bytes as `\xNN`.
    #[default]
    Text,
    /// Lowercase hexadecimal.
    Hex,
}

impl DumpFormat {
    pub(super) fn bytes(self, b: &[u8]) -> String {
        match self {
            DumpFormat::Text => format!("'{}'", escape_bytes(b)),
            DumpFormat::Hex => hex_bytes(b),
        }
    }
}

/// Which records [`dump_file_with`] prints, and how.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DumpOptions {
    /// How keys and values are printed.
    pub format: DumpFormat,
    /// Only records whose user key is at or after this one.
    pub from: Option<Vec<u8>>,
    /// Only records whose user key is before this one.
    pub to: Option<Vec<u8>>,
    /// At most this many records.
    pub limit: Option<u64>,
    /// Print an SST's properties (entries, block sizes, filter, smallest and largest key,
    /// file size) before its records.
    pub show_properties: bool,
}

impl DumpOptions {
    /// Every record, printed in `format`.
    pub fn new(format: DumpFormat) -> DumpOptions {
        DumpOptions {
            format,
            ..DumpOptions::default()
        }
    }

    /// True if records are selected by key or counted.
    fn selects(&self) -> bool {
        self.from.is_some() || self.to.is_some() || self.limit.is_some()
    }

    /// True if `user_key` is in `[from, to)`.
    fn in_range(&self, user_key: &[u8]) -> bool {
        let after_from = self.from.as_deref().is_none_or(|f| user_key >= f);
        after_from && !self.past_end(user_key)
    }

    /// True if `user_key` is at or after `to`.
    fn past_end(&self, user_key: &[u8]) -> bool {
        self.to.as_deref().is_some_and(|t| user_key >= t)
    }

    /// True once `printed` records reach the limit.
    fn full(&self, printed: u64) -> bool {
        self.limit.is_some_and(|l| printed >= l)
    }
}

/// Prints every record of the file at `path` to `out`; returns the number of records printed.
/// A damaged record stops the dump with [`Error::Corruption`] naming the file and offset (the
/// records before it are already printed).
pub fn dump_file(path: &Path, format: DumpFormat, out: &mut dyn Write) -> Result<u64> {
    dump_file_with(path, &DumpOptions::new(format), out)
}

/// [`dump_file`] with a key range, a record limit or an SST's properties. A range or limit on a
/// file without keys (manifest, redirect table, `CURRENT`, OPTIONS), or properties of a file that is not
/// an SST, is [`Error::InvalidArgument`] before anything is printed.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let mut opts = flatlsm::Options::default();
/// # opts.pm_path = Some(dir.path().join("pm"));
/// # let db = flatlsm::Db::open(dir.path().join("db"), opts)?;
/// for k in ["a", "b", "c", "d"] {
///     db.put(k, "v")?;
/// }
/// db.flush()?;
/// # db.close()?;
/// let mut options = flatlsm::inspect::DumpOptions::default();
/// options.from = Some(b"b".to_vec());
/// options.to = Some(b"d".to_vec());
/// options.show_properties = true;
/// let (mut printed, mut out) = (0, Vec::new());
/// for file in std::fs::read_dir(dir.path().join("db"))? {
///     let path = file?.path();
///     if path.extension().is_some_and(|e| e == "sst") {
///         printed += flatlsm::inspect::dump_file_with(&path, &options, &mut out)?;
///     }
/// }
/// assert_eq!(printed, 2, "b and c");
/// assert!(String::from_utf8_lossy(&out).contains("smallest key: "));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn dump_file_with(path: &Path, opts: &DumpOptions, out: &mut dyn Write) -> Result<u64> {
    let kind = FileKind::of(path).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "{}: not a FlatLSM file name (expected NNNNNN.sst, NNNNNN.vlog, NNNNNN.vredir, \
             NNNNNN.pmlog, NNNNNN.log, MANIFEST-NNNNNN, CURRENT or OPTIONS-NNNNNN)",
            path.display()
        ))
    })?;
    check_applicable(kind, opts, path)?;
    let format = opts.format;
    let mut d = Dumper {
        out,
        format,
        path,
        opts,
    };
    match kind {
        FileKind::Sst(n) => d.sst(n),
        FileKind::Vlog(n) => d.vlog(n),
        FileKind::Redirect(n) => d.redirect(n),
        FileKind::PmLog(_) => d.pm_log(),
        FileKind::Manifest(_) => d.manifest(),
        FileKind::Wal(n) => d.wal(n),
        FileKind::Current => d.current(),
        FileKind::Options(_) => d.options(),
    }
}

/// Refuses options `kind` cannot honour: a key range or limit on a file without keys, and
/// properties of anything but an SST.
fn check_applicable(kind: FileKind, opts: &DumpOptions, path: &Path) -> Result<()> {
    let keyed = matches!(
        kind,
        FileKind::Sst(_) | FileKind::PmLog(_) | FileKind::Vlog(_) | FileKind::Wal(_)
    );
    let refuse = |what: &str| {
        Err(Error::InvalidArgument(format!(
            "{}: {what} (this file is a {})",
            path.display(),
            kind_name(kind)
        )))
    };
    if opts.selects() && !keyed {
        return refuse("a key range or record limit applies only to SSTs, PM Logs, value logs and write-ahead logs");
    }
    if opts.show_properties && !matches!(kind, FileKind::Sst(_)) {
        return refuse("properties are shown only for SSTs");
    }
    Ok(())
}

/// What a file of `kind` is, for messages.
fn kind_name(kind: FileKind) -> &'static str {
    match kind {
        FileKind::Sst(_) => "SST",
        FileKind::Vlog(_) => "value log",
        FileKind::Redirect(_) => "value-log redirect table",
        FileKind::PmLog(_) => "PM Log",
        FileKind::Manifest(_) => "manifest",
        FileKind::Wal(_) => "write-ahead log",
        FileKind::Current => "CURRENT file",
        FileKind::Options(_) => "OPTIONS file",
    }
}

struct Dumper<'a> {
    out: &'a mut dyn Write,
    format: DumpFormat,
    path: &'a Path,
    opts: &'a DumpOptions,
}

impl Dumper<'_> {
    fn line(&mut self, text: &str) -> Result<()> {
        writeln!(self.out, "{text}").context(|| "writing the dump".to_string())
    }

    fn read_all(&self) -> Result<Vec<u8>> {
        OsFileSystem
            .read_all(self.path)
            .context(|| format!("reading {}", self.path.display()))
    }

    /// A value as stored: inline bytes, a value-log pointer, or nothing for a deletion.
    fn stored_value(&self, kind: ValueKind, value: &[u8]) -> String {
        match kind {
            ValueKind::Deletion => "(deleted)".to_string(),
            ValueKind::Value => self.format.bytes(value),
            ValueKind::ValuePointer => match ValuePointer::decode(value) {
                Some(p) => format!(
                    "-> vlog {} offset {} value_len {} record_len {}",
                    p.file_number, p.offset, p.value_len, p.record_len
                ),
                None => format!("(bad value pointer {})", hex_bytes(value)),
            },
        }
    }

    fn sst(&mut self, number: u64) -> Result<u64> {
        let (table, size) = super::open_sst(self.path, number)?;
        self.line(&format!(
            "SST {} ({size} bytes, {} entries)",
            self.path.display(),
            table.num_entries()
        ))?;
        if self.opts.show_properties {
            for l in super::sst_properties::property_lines(&table, size, self.format)? {
                self.line(&l)?;
            }
        }
        if !self.opts.selects() {
            self.sst_blocks(&table, !self.opts.show_properties)?;
        }
        self.sst_records(&table)
    }

    /// The table's records with user keys in `[from, to)`, up to the limit.
    fn sst_records(&mut self, table: &Arc<Table>) -> Result<u64> {
        let mut it = table.iter();
        match &self.opts.from {
            Some(from) => it.seek(&make_internal_key(from, MAX_SEQUENCE, KIND_FOR_SEEK)),
            None => it.seek_to_first(),
        }
        let mut n = 0;
        while it.valid() && !self.opts.full(n) {
            let key = parse_internal_key(it.key());
            if key.is_some_and(|k| self.opts.past_end(k.user_key)) {
                break;
            }
            self.line(&self.sst_record(key, it.key(), it.value()))?;
            n += 1;
            it.next();
        }
        it.status()?;
        Ok(n)
    }

    /// One SST entry: user key, sequence, kind and the value as stored (`key` parsed from
    /// `internal_key`, if it could be).
    fn sst_record(
        &self,
        key: Option<ParsedInternalKey<'_>>,
        internal_key: &[u8],
        value: &[u8],
    ) -> String {
        let Some(k) = key else {
            return format!("(bad internal key {})", hex_bytes(internal_key));
        };
        let stored = self.stored_value(k.kind, value);
        let user_key = self.format.bytes(k.user_key);
        format!("{user_key} @ {} : {:?} => {stored}", k.seq, k.kind)
    }

    /// The totals of the table's data blocks (unless `totals` is false: the properties hold
    /// them), then one line per block: offset, compression type, stored and raw bytes. Each
    /// block is read, its CRC checked and decompressed.
    fn sst_blocks(&mut self, table: &Table, totals: bool) -> Result<()> {
        let blocks = stored_blocks(table)?;
        if totals {
            self.line(&block_totals(&blocks))?;
        }
        for (i, b) in blocks.iter().enumerate() {
            self.line(&format!(
                "block {i} @{}: {}, {} bytes stored, {} raw",
                b.handle.offset,
                block_type_name(b.block_type),
                b.handle.size,
                b.raw_size
            ))?;
        }
        Ok(())
    }

    fn vlog(&mut self, number: u64) -> Result<u64> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let reader = VlogReader::open(&OsFileSystem, dir, number)?;
        self.line(&format!("value log {}", self.path.display()))?;
        let mut lines = Vec::new();
        let (format, opts) = (self.format, self.opts);
        let result = reader.for_each_record(|ptr, key, value| {
            if !opts.in_range(key) || opts.full(lines.len() as u64) {
                return Ok(());
            }
            lines.push(format!(
                "@{} {} => {} ({} bytes)",
                ptr.offset,
                format.bytes(key),
                format.bytes(value),
                value.len()
            ));
            Ok(())
        });
        for l in &lines {
            self.line(l)?;
        }
        result.map(|()| lines.len() as u64)
    }

    /// A redirect table is checksummed as a whole: it is verified before anything is printed.
    fn redirect(&mut self, number: u64) -> Result<u64> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let t = RedirectTable::load(&OsFileSystem, dir, number)?;
        self.line(&format!(
            "redirect table {}: value log {} -> value log {}, {} entries",
            self.path.display(),
            t.victim(),
            t.target(),
            t.entries().len()
        ))?;
        for e in t.entries() {
            self.line(&format!(
                "@{} -> @{} record_len {} value_len {}",
                e.old_offset, e.new_offset, e.record_len, e.value_len
            ))?;
        }
        Ok(t.entries().len() as u64)
    }

    fn wal(&mut self, number: u64) -> Result<u64> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        self.line(&format!("write-ahead log {}", self.path.display()))?;
        let mut lines = Vec::new();
        let (format, opts) = (self.format, self.opts);
        let r = crate::wal::replay(&OsFileSystem, dir, number, |seq, kind, k, v| {
            if !opts.in_range(k) || opts.full(lines.len() as u64) {
                return Ok(());
            }
            let value = match kind {
                ValueKind::Deletion => "(deleted)".to_string(),
                _ => format.bytes(v),
            };
            lines.push(format!("{} @ {seq} : {kind:?} => {value}", format.bytes(k)));
            Ok(())
        })?;
        if let Some(after) = r.after {
            self.line(&format!(
                "sequence marker: the older logs end at sequence {after}"
            ))?;
        }
        for l in &lines {
            self.line(l)?;
        }
        if let Some(note) = r.torn_tail {
            self.line(&format!("torn tail: {note} (dropped at next open)"))?;
        }
        Ok(lines.len() as u64)
    }

    fn pm_log(&mut self) -> Result<u64> {
        let data = self.read_all()?;
        let h = decode_header(&data, self.path)?;
        self.line(&format!(
            "PM log {} (number {}, file_size {}, used_size {}, written_size {}, replaces {}, \
             gc_complete {})",
            self.path.display(),
            h.number,
            h.file_size,
            h.used_size,
            h.written_size,
            h.replaces,
            h.gc_complete
        ))?;
        let mut n = 0;
        let extent = for_each_entry_in(&data, &h, self.path, |pos, e| {
            if !self.opts.in_range(e.key) || self.opts.full(n) {
                return Ok(());
            }
            let text = format!(
                "@{pos} {} @ {} : {:?} => {}",
                self.format.bytes(e.key),
                e.seq,
                e.kind,
                self.stored_value(e.kind, e.value)
            );
            n += 1;
            self.line(&text)
        })?;
        if extent.discarded > 0 {
            self.line(&format!(
                "torn tail: {} bytes after @{} (discarded at next open)",
                extent.discarded, extent.end
            ))?;
        }
        Ok(n)
    }

    fn manifest(&mut self) -> Result<u64> {
        let data = self.read_all()?;
        let (records, torn) = read_manifest_records(&data, self.path)?;
        self.line(&format!("manifest {}", self.path.display()))?;
        // Manifests written before designs were recorded: the profile they stand for.
        let mut profile = crate::designs::recorded_profile(None).parse().ok();
        for r in &records {
            self.line(&format!("@{}", r.offset))?;
            if let Some(name) = &r.edit.profile {
                profile = name.parse().ok();
            }
            for l in describe_edit(&r.edit, self.format, profile) {
                self.line(&format!("  {l}"))?;
            }
        }
        if let Some(note) = torn {
            self.line(&format!("({note})"))?;
        }
        Ok(records.len() as u64)
    }

    fn current(&mut self) -> Result<u64> {
        let data = self.read_all()?;
        self.line(&format!("CURRENT: {}", escape_bytes(&data)))?;
        Ok(1)
    }

    /// One line per stored option, after the checksum is verified.
    fn options(&mut self) -> Result<u64> {
        let opts = crate::options::read_options_file(&OsFileSystem, self.path)?;
        let values = crate::options::text::stored_values(&opts);
        for (section, name, value) in &values {
            let name = crate::options::text::qualified(section, name);
            self.line(&format!("{name} = {value}"))?;
        }
        Ok(values.len() as u64)
    }
}

/// The name of a block's trailer type (`none`, `lz4`, `zstd`; `type N` for another).
fn block_type_name(t: u8) -> String {
    type_name(t).map_or(format!("type {t}"), str::to_string)
}

/// How every data block of `table` is stored (each read, checked and decompressed).
pub(super) fn stored_blocks(table: &Table) -> Result<Vec<StoredBlock>> {
    (0..table.num_blocks())
        .map(|i| table.stored_block(i))
        .collect()
}

/// `data blocks: N (lz4 A, none B), S bytes stored, R raw`.
pub(super) fn block_totals(blocks: &[StoredBlock]) -> String {
    let mut by_type = BTreeMap::new();
    for b in blocks {
        *by_type.entry(block_type_name(b.block_type)).or_insert(0) += 1;
    }
    let counts: Vec<String> = by_type.iter().map(|(t, n)| format!("{t} {n}")).collect();
    let stored: u64 = blocks.iter().map(|b| b.handle.size).sum();
    let raw: u64 = blocks.iter().map(|b| b.raw_size).sum();
    format!(
        "data blocks: {} ({}), {stored} bytes stored, {raw} raw",
        blocks.len(),
        counts.join(", ")
    )
}

/// One line per field an edit sets; levels named as `profile` names them (`L<n>` for a profile
/// this build does not know).
fn describe_edit(e: &VersionEdit, format: DumpFormat, profile: Option<Profile>) -> Vec<String> {
    let level_name = |l: usize| profile.map_or(format!("L{l}"), |p| p.level_name(l));
    let mut lines = Vec::new();
    if let Some(n) = e.next_file_number {
        lines.push(format!("next_file_number {n}"));
    }
    if let Some(s) = e.last_sequence {
        lines.push(format!("last_sequence {s}"));
    }
    if let Some(p) = e.min_unflushed_pmlog {
        lines.push(format!("min_unflushed_pmlog {p}"));
    }
    for (level, number) in &e.deleted_files {
        let name = level_name(*level);
        lines.push(format!("delete {name} SST {number}"));
    }
    let key = |k: &[u8]| match parse_internal_key(k) {
        Some(p) => format!("{} @ {}", format.bytes(p.user_key), p.seq),
        None => hex_bytes(k),
    };
    for (level, f) in &e.new_files {
        lines.push(format!(
            "add {} SST {} ({} bytes, {} entries) [{} .. {}] vlog refs {:?}",
            level_name(*level),
            f.number,
            f.file_size,
            f.num_entries,
            key(&f.smallest),
            key(&f.largest),
            f.vlog_refs
        ));
    }
    for v in &e.new_vlogs {
        lines.push(format!(
            "add value log {} ({} bytes)",
            v.number, v.total_bytes
        ));
    }
    for v in &e.deleted_vlogs {
        lines.push(format!("delete value log {v}"));
    }
    if e.tracks_pm_logs {
        lines.push("tracks PM logs".to_string());
    }
    for l in &e.new_pm_logs {
        match l.replaces {
            0 => lines.push(format!("add PM log {}", l.number)),
            r => lines.push(format!("add PM log {} replacing {r}", l.number)),
        }
    }
    if let Some(id) = &e.identity {
        lines.push(format!("identity {id}"));
    }
    if let Some(p) = &e.profile {
        lines.push(format!("profile {p}"));
    }
    for r in &e.new_redirects {
        lines.push(format!(
            "redirect value log {} into {} by table {} ({} bytes)",
            r.victim, r.target, r.number, r.file_size
        ));
    }
    for v in &e.deleted_redirects {
        lines.push(format!("drop redirect of value log {v}"));
    }
    lines.extend(describe_range_dels(e, format));
    lines
}

/// The range-tombstone fields of `e`, and the files that applied tombstones.
fn describe_range_dels(e: &VersionEdit, format: DumpFormat) -> Vec<String> {
    let added = e.new_range_dels.iter().map(|t| {
        let (lo, hi) = (format.bytes(&t.start), format.bytes(&t.end));
        format!("add range tombstone {} [{lo} .. {hi})", t.seq)
    });
    let retired = e
        .retired_range_dels
        .iter()
        .map(|s| format!("retire range tombstone {s}"));
    let marks = e
        .new_files
        .iter()
        .filter(|(_, f)| f.range_dels_applied != 0);
    let marks = marks.map(|(_, f)| {
        format!(
            "SST {} applied range tombstones through {}",
            f.number, f.range_dels_applied
        )
    });
    added.chain(retired).chain(marks).collect()
}
