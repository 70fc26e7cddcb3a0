//! The reading half of [`super::repair`]: what one SST, value log, redirect table or write
//! buffer present on disk can contribute to a rebuilt manifest. Reads only; every function
//! returns an error naming the file when the file cannot be used, and the caller moves that
//! file to `<db>/lost/` (never deletes it).
//!
//! Rules: an SST is usable when it opens (footer, index, filter) and every data block verifies
//! (`Table::verify`); its metadata is recomputed by iterating it. A value log is usable when its
//! header is valid; `total_bytes` is its size minus the header (the size consistency checks
//! expect). A redirect table is usable when it decodes (checksum, entry order).

use crate::designs::version_extension;
use crate::error::{Error, IoContext, Result};
use crate::fs::FileSystem;
use crate::iter::InternalIterator;
use crate::range_del::RangeTombstone;
use crate::sst::{SstDir, Table};
use crate::types::{parse_internal_key, ValueKind, ValuePointer};
use crate::version::{initial_state, parse_manifest_file_name, readable_manifest_prefix};
use crate::version::{FileMeta, VlogMeta};
use crate::vlog::{RedirectTable, VlogReader, VLOG_HEADER_LEN};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// An SST that verified: its recomputed metadata and its sequence range.
#[derive(Clone, Debug)]
pub(super) struct ScannedSst {
    pub meta: FileMeta,
    pub min_seq: u64,
    pub max_seq: u64,
}

/// Opens, verifies and iterates SST `number` in `dir` (whose path is `path`).
pub(super) fn scan_sst(
    fs: &dyn FileSystem,
    path: &Path,
    number: u64,
    dir: SstDir,
) -> Result<ScannedSst> {
    let file = fs
        .open(path)
        .context(|| format!("opening {}", path.display()))?;
    let size = file
        .size()
        .context(|| format!("reading the size of {}", path.display()))?;
    let table = Table::open(file, path.to_path_buf(), number, size, None)?;
    table.verify()?;
    let mut scan = Scan::default();
    let mut it = table.iter();
    it.seek_to_first();
    while it.valid() {
        scan.add(it.key(), it.value(), path)?;
        it.next();
    }
    it.status()?;
    scan.into_sst(number, size, dir, path)
}

/// What iterating an SST (or writing one) collected so far.
#[derive(Default)]
pub(super) struct Scan {
    smallest: Option<Vec<u8>>,
    largest: Vec<u8>,
    entries: u64,
    min_seq: Option<u64>,
    max_seq: u64,
    refs: BTreeMap<u64, u64>,
}

impl Scan {
    /// Accounts one entry (keys arrive in order, so the first is the smallest).
    pub fn add(&mut self, key: &[u8], value: &[u8], path: &Path) -> Result<()> {
        let parsed = parse_internal_key(key)
            .ok_or_else(|| Error::corruption(path, 0, "an entry has a malformed internal key"))?;
        if parsed.kind == ValueKind::ValuePointer {
            let ptr = ValuePointer::decode(value).ok_or_else(|| {
                Error::corruption(path, 0, "an entry's value pointer is not 24 bytes")
            })?;
            *self.refs.entry(ptr.file_number).or_default() += u64::from(ptr.record_len);
        }
        self.smallest.get_or_insert_with(|| key.to_vec());
        self.largest = key.to_vec();
        self.entries += 1;
        self.max_seq = self.max_seq.max(parsed.seq);
        self.min_seq = Some(self.min_seq.map_or(parsed.seq, |m| m.min(parsed.seq)));
        Ok(())
    }

    /// The file's metadata; an SST without entries cannot be part of a version.
    pub fn into_sst(self, number: u64, size: u64, dir: SstDir, path: &Path) -> Result<ScannedSst> {
        let Some(smallest) = self.smallest else {
            return Err(Error::corruption(path, 0, "the table holds no entries"));
        };
        let meta = FileMeta {
            number,
            file_size: size,
            num_entries: self.entries,
            smallest,
            largest: self.largest,
            vlog_refs: self.refs.into_iter().collect(),
            dir,
            range_dels_applied: 0,
        };
        Ok(ScannedSst {
            meta,
            min_seq: self.min_seq.unwrap_or(0),
            max_seq: self.max_seq,
        })
    }
}

/// Value log `number` in `dir`, if its header is valid.
pub(super) fn scan_vlog(fs: &dyn FileSystem, dir: &Path, number: u64) -> Result<VlogMeta> {
    let reader = VlogReader::open(fs, dir, number)?;
    Ok(VlogMeta {
        number,
        total_bytes: reader.size() - VLOG_HEADER_LEN,
    })
}

/// Redirect table `number` in `dir`, decoded and verified.
pub(super) fn scan_redirect(
    fs: &dyn FileSystem,
    dir: &Path,
    number: u64,
) -> Result<Arc<RedirectTable>> {
    RedirectTable::load(fs, dir, number)
}

/// What the newest manifest in `dir`, damaged, still tells of range tombstones: those of the
/// state its records build up to the first that does not check (or apply), with a note saying
/// where it stopped. `None` without a manifest file.
pub(super) fn salvage_range_dels(
    fs: &dyn FileSystem,
    dir: &Path,
    names: &[String],
) -> Option<(Vec<RangeTombstone>, String)> {
    let (number, name) = names
        .iter()
        .filter_map(|n| parse_manifest_file_name(n).map(|m| (m, n)))
        .max()?;
    let path = dir.join(name);
    let data = fs.read_all(&path).ok()?;
    let (records, bad) = readable_manifest_prefix(&data, &path);
    let mut state = initial_state(&records, &version_extension);
    let applied = records
        .iter()
        .take_while(|r| state.apply(&r.edit).is_ok())
        .count();
    let stop = bad.map_or(String::from("the end"), |at| format!("offset {at}"));
    let note = format!(
        "the old manifest {number} could not be loaded: range tombstones (delete_range) taken \
         from its {applied} readable records (up to {stop}); any recorded after are lost"
    );
    Some((state.version.range_dels.tombstones().to_vec(), note))
}
