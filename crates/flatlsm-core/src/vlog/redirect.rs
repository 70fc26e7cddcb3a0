//! Value-log redirect tables: where value-log GC moved the live records of a log.
//!
//! GC of a sealed value log V copies the records SSTables still point at into a new log N (in
//! V's offset order) and writes a redirect table `{number:06}.vredir`: for each copied record,
//! its offset in V and where it now lives in N. SSTables are not rewritten; a pointer into V is
//! translated through the table when it is read, and rewritten to N when flush or compaction
//! copies it into a new SSTable (docs/design-decisions.md, "Value-log garbage collection").
//!
//! File (all integers little-endian; docs/vlog-format.md, "Redirect tables"):
//! `magic b"FLATREDR" | format version u32 = 1 | reserved u32 = 0 | victim u64 | target u64 |
//! count u64 | count × (old_offset u64 | new_offset u64 | record_len u32 | value_len u32) |
//! crc32c u32 over every byte before it`. Entries are sorted by `old_offset`, strictly ascending.
//!
//! Persist order: the file is written whole, synced, and its directory entry synced
//! ([`RedirectTable::write`]) before the manifest edit that names it; N is finished before that
//! too. Invariant: a table is immutable once written. Recovery rule: a table the manifest names
//! must exist with its recorded size and decode ([`decode`] checks magic, version, length,
//! checksum and entry order), else open refuses naming the file; a table the manifest does not
//! name is an orphan of an interrupted GC, removed at open.
//!
//! Thread-safety: [`RedirectTable`] is immutable (`Send + Sync`); [`RedirectSet`] is shared.

use super::record::{RECORD_HEADER_LEN, VLOG_HEADER_LEN};
use super::vlog_file_name;
use crate::error::{Error, IoContext, Result};
use crate::file_names::redirect_file_name;
use crate::fs::FileSystem;
use crate::types::{crc32c, ValuePointer};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Magic bytes at the start of every redirect table.
pub const REDIRECT_MAGIC: &[u8; 8] = b"FLATREDR";
/// Current format version.
pub const REDIRECT_FORMAT_VERSION: u32 = 1;
/// Bytes before the first entry: magic, version, reserved, victim, target, count.
pub const REDIRECT_HEADER_LEN: usize = 40;
/// Bytes of one entry.
pub const REDIRECT_ENTRY_LEN: usize = 24;
/// Bytes of the trailing crc32c.
const TRAILER_LEN: usize = 4;

/// One moved record: its offset in the victim and where it lives in the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RedirectEntry {
    /// Offset of the record in the redirected (victim) log.
    pub old_offset: u64,
    /// Offset of the copy in the target log.
    pub new_offset: u64,
    /// The record's length (the same in both logs).
    pub record_len: u32,
    /// The record's value length.
    pub value_len: u32,
}

/// A decoded redirect table.
#[derive(Debug)]
pub struct RedirectTable {
    path: PathBuf,
    number: u64,
    victim: u64,
    target: u64,
    file_size: u64,
    entries: Vec<RedirectEntry>,
}

/// The bytes of a redirect table of `victim` into `target` (entries sorted by old offset).
pub fn encode(victim: u64, target: u64, entries: &[RedirectEntry]) -> Vec<u8> {
    let mut b = Vec::with_capacity(REDIRECT_HEADER_LEN + entries.len() * REDIRECT_ENTRY_LEN + 4);
    b.extend_from_slice(REDIRECT_MAGIC);
    b.extend_from_slice(&REDIRECT_FORMAT_VERSION.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    for word in [victim, target, entries.len() as u64] {
        b.extend_from_slice(&word.to_le_bytes());
    }
    for e in entries {
        b.extend_from_slice(&e.old_offset.to_le_bytes());
        b.extend_from_slice(&e.new_offset.to_le_bytes());
        b.extend_from_slice(&e.record_len.to_le_bytes());
        b.extend_from_slice(&e.value_len.to_le_bytes());
    }
    let crc = crc32c(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Decodes the redirect table `number` from `bytes` (the whole file at `path`). Never panics:
/// damage is [`Error::Corruption`] at the offset of the bad field or entry.
pub fn decode(bytes: &[u8], path: &Path, number: u64) -> Result<RedirectTable> {
    let count = check_frame(bytes, path)?;
    let mut entries = Vec::with_capacity(count);
    for i in 0..count {
        let at = REDIRECT_HEADER_LEN + i * REDIRECT_ENTRY_LEN;
        let e = decode_entry(&bytes[at..at + REDIRECT_ENTRY_LEN]);
        check_entry(&e, entries.last(), path, at as u64)?;
        entries.push(e);
    }
    let (victim, target) = (u64_at(bytes, 16), u64_at(bytes, 24));
    if victim == target {
        let detail = format!("value log {victim} redirected into itself");
        return Err(Error::corruption(path, 24, detail));
    }
    Ok(RedirectTable {
        path: path.to_path_buf(),
        number,
        victim,
        target,
        file_size: bytes.len() as u64,
        entries,
    })
}

/// Checks magic, version, length and checksum; returns the entry count.
fn check_frame(bytes: &[u8], path: &Path) -> Result<usize> {
    let bad = |offset: usize, detail: String| Error::corruption(path, offset as u64, detail);
    if bytes.len() < REDIRECT_HEADER_LEN + TRAILER_LEN || &bytes[..8] != REDIRECT_MAGIC {
        return Err(bad(
            0,
            "not a redirect table (bad magic or too short)".into(),
        ));
    }
    let version = u32_at(bytes, 8);
    if version != REDIRECT_FORMAT_VERSION {
        return Err(bad(
            8,
            format!("unsupported redirect format version {version}"),
        ));
    }
    let count = u64_at(bytes, 32);
    let body = (bytes.len() - REDIRECT_HEADER_LEN - TRAILER_LEN) as u64;
    if count.checked_mul(REDIRECT_ENTRY_LEN as u64) != Some(body) {
        let detail = format!("{count} entries do not fill the {body} bytes between header and crc");
        return Err(bad(32, detail));
    }
    let end = bytes.len() - TRAILER_LEN;
    if crc32c(&bytes[..end]) != u32_at(bytes, end) {
        return Err(bad(end, "redirect table checksum mismatch".into()));
    }
    Ok(count as usize)
}

fn decode_entry(b: &[u8]) -> RedirectEntry {
    RedirectEntry {
        old_offset: u64_at(b, 0),
        new_offset: u64_at(b, 8),
        record_len: u32_at(b, 16),
        value_len: u32_at(b, 20),
    }
}

/// An entry must address records past the value-log header, hold its value, and follow the
/// previous entry.
fn check_entry(
    e: &RedirectEntry,
    prev: Option<&RedirectEntry>,
    path: &Path,
    at: u64,
) -> Result<()> {
    let detail = if e.old_offset < VLOG_HEADER_LEN || e.new_offset < VLOG_HEADER_LEN {
        "entry addresses a value-log header".to_string()
    } else if u64::from(e.record_len) < RECORD_HEADER_LEN as u64 + u64::from(e.value_len) {
        format!(
            "record_len {} cannot hold value_len {}",
            e.record_len, e.value_len
        )
    } else if prev.is_some_and(|p| p.old_offset >= e.old_offset) {
        format!(
            "old offset {} is not above the previous entry's",
            e.old_offset
        )
    } else {
        return Ok(());
    };
    Err(Error::corruption(path, at, detail))
}

/// Creates `path` with `bytes`, syncs it, then syncs its directory entry in `dir`.
fn write_synced(fs: &dyn FileSystem, dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = fs.create(path)?;
    f.append(bytes)?;
    f.sync()?;
    drop(f);
    fs.sync_dir(dir)
}

impl RedirectTable {
    /// Writes table `number` of `victim` into `target` in `dir`: the whole file, then a sync
    /// of the file and of the directory entry, so the manifest may name it afterwards.
    pub fn write(
        fs: &dyn FileSystem,
        dir: &Path,
        number: u64,
        (victim, target): (u64, u64),
        entries: Vec<RedirectEntry>,
    ) -> Result<Arc<RedirectTable>> {
        let path = dir.join(redirect_file_name(number));
        let bytes = encode(victim, target, &entries);
        write_synced(fs, dir, &path, &bytes)
            .context(|| format!("writing redirect table {}", path.display()))?;
        let file_size = bytes.len() as u64;
        let table = RedirectTable {
            path,
            number,
            victim,
            target,
            file_size,
            entries,
        };
        Ok(Arc::new(table))
    }

    /// Reads and decodes table `number` in `dir`.
    pub fn load(fs: &dyn FileSystem, dir: &Path, number: u64) -> Result<Arc<RedirectTable>> {
        let path = dir.join(redirect_file_name(number));
        let bytes = fs
            .read_all(&path)
            .context(|| format!("reading redirect table {}", path.display()))?;
        Ok(Arc::new(decode(&bytes, &path, number)?))
    }

    /// [`Error::Corruption`] unless the table redirects `victim` into `target` (what the
    /// manifest records for it).
    pub fn expect(&self, victim: u64, target: u64) -> Result<()> {
        if (self.victim, self.target) == (victim, target) {
            return Ok(());
        }
        let detail = format!(
            "redirects value log {} into {}, but the manifest records {victim} into {target}",
            self.victim, self.target
        );
        Err(Error::corruption(&self.path, 16, detail))
    }

    /// Where the record `ptr` (a pointer into the victim) lives now. A pointer without an
    /// entry, or one whose lengths differ from the entry's, is [`Error::Corruption`] naming the
    /// victim log and the pointer's offset.
    pub fn translate(&self, ptr: &ValuePointer) -> Result<ValuePointer> {
        if ptr.file_number != self.victim {
            return Err(Error::InvalidArgument(format!(
                "pointer into value log {} given to {}, the redirect table of {}",
                ptr.file_number,
                self.path.display(),
                self.victim
            )));
        }
        let e = self.entry(ptr.offset)?;
        if (e.record_len, e.value_len) != (ptr.record_len, ptr.value_len) {
            let what = format!(
                "with the pointer's lengths (record_len {}, value_len {})",
                ptr.record_len, ptr.value_len
            );
            return Err(self.missing(ptr.offset, &what));
        }
        Ok(ValuePointer {
            file_number: self.target,
            offset: e.new_offset,
            value_len: e.value_len,
            record_len: e.record_len,
        })
    }

    fn entry(&self, old_offset: u64) -> Result<&RedirectEntry> {
        let i = self.entries.partition_point(|e| e.old_offset < old_offset);
        match self.entries.get(i) {
            Some(e) if e.old_offset == old_offset => Ok(e),
            _ => Err(self.missing(old_offset, "for this record")),
        }
    }

    /// Corruption at `offset` of the victim: the table lacks the entry (`what` says which).
    fn missing(&self, offset: u64, what: &str) -> Error {
        let victim = self.path.with_file_name(vlog_file_name(self.victim));
        let detail = format!(
            "value log {} is redirected by {}, which has no entry {what}",
            self.victim,
            self.path.display()
        );
        Error::corruption(victim, offset, detail)
    }

    /// The table's file number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The redirected value log.
    pub fn victim(&self) -> u64 {
        self.victim
    }

    /// The value log the records were copied to.
    pub fn target(&self) -> u64 {
        self.target
    }

    /// The file's size in bytes.
    pub fn file_size(&self) -> u64 {
        self.file_size
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entries, sorted by old offset.
    pub fn entries(&self) -> &[RedirectEntry] {
        &self.entries
    }
}

/// Loaded redirect tables by file number, shared by readers and jobs: tables are inserted when
/// open loads them and when a GC writes one, loaded from the file on a miss, and evicted before
/// the file is deleted.
pub struct RedirectSet {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    tables: Mutex<HashMap<u64, Arc<RedirectTable>>>,
}

impl std::fmt::Debug for RedirectSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedirectSet")
            .field("dir", &self.dir)
            .field("loaded", &self.tables.lock().len())
            .finish()
    }
}

impl RedirectSet {
    /// An empty set over the tables in `dir`.
    pub fn new(fs: Arc<dyn FileSystem>, dir: PathBuf) -> Self {
        RedirectSet {
            fs,
            dir,
            tables: Mutex::new(HashMap::new()),
        }
    }

    /// Table `number`, loading it (outside the lock) if needed.
    pub fn get(&self, number: u64) -> Result<Arc<RedirectTable>> {
        if let Some(t) = self.tables.lock().get(&number) {
            return Ok(Arc::clone(t));
        }
        let loaded = RedirectTable::load(&*self.fs, &self.dir, number)?;
        Ok(Arc::clone(
            self.tables.lock().entry(number).or_insert(loaded),
        ))
    }

    /// Adds a table loaded or written by the caller.
    pub fn insert(&self, table: Arc<RedirectTable>) {
        self.tables.lock().insert(table.number(), table);
    }

    /// Forgets table `number` (holders of its `Arc` keep it).
    pub fn evict(&self, number: u64) {
        self.tables.lock().remove(&number);
    }
}
