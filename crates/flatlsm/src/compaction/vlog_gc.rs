//! Value-log garbage collection (WiscKey/Titan style, driven through the tree).
//!
//! Garbage accounting is exact and needs no extra state: each SSTable records how many bytes
//! it references in each value log (`FileMeta::vlog_refs`), so a log's live bytes are the sum
//! over the current version and its garbage is `total - live`.
//!
//! GC of a log whose garbage ratio exceeds `vlog_gc_garbage_ratio` rewrites the SSTables that
//! still point into it, copying those values to a new value log and re-pointing the keys. The
//! rewrite installs atomically in the manifest, so no write can race with it (Titan's write
//! callback is unnecessary). The old log leaves the version once nothing points into it, and
//! its file is deleted only when no live version (iterator, snapshot read) can reach it.

use super::output::{TableOutput, VlogOutput};
use crate::db::state::DbInner;
use crate::error::{Error, Result};
use crate::iter::{InternalIterator, LevelIterator};
use crate::types::{parse_internal_key, ValueKind, ValuePointer};
use crate::version::{FileMeta, Version, VersionEdit};
use std::sync::Arc;

/// A chosen GC: the log to empty and the files (with their level) that point into it.
pub(crate) struct VlogGc {
    pub vlog: u64,
    pub files: Vec<(usize, Arc<FileMeta>)>,
}

/// The log with the most garbage above the threshold whose referencing files are all free.
pub(crate) fn pick(version: &Version, ratio: f64, busy: impl Fn(u64) -> bool) -> Option<VlogGc> {
    let live = version.vlog_live_bytes();
    let mut best: Option<(f64, u64)> = None;
    for (number, meta) in &version.vlogs {
        let live_bytes = live.get(number).copied().unwrap_or(0);
        if live_bytes == 0 || meta.total_bytes == 0 {
            continue; // nothing to copy: it is simply dropped once unreferenced
        }
        let garbage = 1.0 - live_bytes as f64 / meta.total_bytes as f64;
        if garbage > ratio && best.is_none_or(|(g, _)| garbage > g) {
            best = Some((garbage, *number));
        }
    }
    let (_, vlog) = best?;
    let mut files = Vec::new();
    for (level, fs) in version.levels.iter().enumerate() {
        for f in fs {
            if f.vlog_refs.iter().any(|(n, _)| *n == vlog) {
                // A rewritten level-0 file would be added last, as if newer than the runs
                // added after it (level 0 is ordered by addition): wait for the run merge.
                if busy(f.number) || level == 0 {
                    return None;
                }
                files.push((level, f.clone()));
            }
        }
    }
    Some(VlogGc { vlog, files })
}

/// Rewrites the referencing files; returns the edit and the bytes written.
pub(crate) fn run(db: &DbInner, gc: &VlogGc) -> Result<(VersionEdit, u64)> {
    let mut edit = VersionEdit::default();
    let mut vlog = VlogOutput::new(db);
    let mut bytes = 0;
    for (level, file) in &gc.files {
        let mut out = TableOutput::new(db);
        let mut it = LevelIterator::new(vec![file.clone()], db.table_cache.clone());
        it.seek_to_first();
        while it.valid() {
            relocate(db, &mut out, &mut vlog, gc.vlog, it.key(), it.value())?;
            it.next();
        }
        it.status()?;
        edit.deleted_files.push((*level, file.number));
        for f in out.finish()? {
            bytes += f.file_size;
            edit.new_files.push((*level, f));
        }
    }
    if let Some(meta) = vlog.finish()? {
        bytes += meta.total_bytes;
        edit.new_vlogs.push(meta);
    }
    Ok((edit, bytes))
}

fn relocate(
    db: &DbInner,
    out: &mut TableOutput<'_>,
    vlog: &mut VlogOutput<'_>,
    victim: u64,
    ikey: &[u8],
    value: &[u8],
) -> Result<()> {
    let p = parse_internal_key(ikey)
        .ok_or_else(|| Error::InvalidState("unparsable key during value-log GC".into()))?;
    if p.kind != ValueKind::ValuePointer {
        return out.add(ikey, value);
    }
    let ptr = ValuePointer::decode(value)
        .ok_or_else(|| Error::InvalidState("malformed value pointer during GC".into()))?;
    if ptr.file_number != victim {
        return out.add(ikey, value);
    }
    let val = db.vlogs.read_value(&ptr)?;
    let moved = vlog.append(p.user_key, &val)?;
    out.add_pointer(p.user_key, p.seq, &moved)
}

/// Value logs with no live bytes in `version` (to drop from the manifest).
pub(crate) fn unreferenced(version: &Version) -> Vec<u64> {
    let live = version.vlog_live_bytes();
    version
        .vlogs
        .keys()
        .filter(|n| live.get(n).copied().unwrap_or(0) == 0)
        .copied()
        .collect()
}
