//! The purge of obsolete files: value logs and redirects no SST references leave the version
//! in one edit, then every SST, value-log and redirect-table file (and stale write-ahead log)
//! that no live version and no running job can reach is deleted.
//!
//! Invariant: a file is deleted only after the edit that dropped it is committed and no live
//! version holds it; cached readers and blocks of a file are evicted before it is removed.

use crate::compaction::vlog_gc;
use crate::db::state::DbInner;
use crate::error::{Error, Result};
use crate::file_names::{parse_numbered_file, NumberedFile};
use crate::version::{Version, VersionEdit};

/// Drops value logs no SST references (a redirected log's references count for its target)
/// and redirects whose victim no SST names, in one edit. The edit applies only if the current
/// version still has exactly these to drop (a GC may have committed since they were computed).
pub(crate) fn drop_unreferenced_vlogs(db: &DbInner) -> Result<()> {
    let dead = |v: &Version| (vlog_gc::unreferenced(v), v.unreferenced_redirects());
    let (vlogs, redirects) = dead(&db.versions.lock().current);
    if vlogs.is_empty() && redirects.is_empty() {
        return Ok(());
    }
    let mut edit = VersionEdit {
        deleted_vlogs: vlogs.clone(),
        deleted_redirects: redirects.clone(),
        ..VersionEdit::default()
    };
    db.install_if(&mut edit, |v| dead(v) == (vlogs, redirects))?;
    purge_obsolete_files(db)
}

/// Deletes SST, value-log and redirect-table files that no live version and no running job
/// can reach. Order matters: list the directory, then read pending outputs, then live
/// versions, so a file being created or installed concurrently is always found in one of them.
pub(crate) fn purge_obsolete_files(db: &DbInner) -> Result<()> {
    let names = db
        .files
        .fs()
        .list_dir(db.files.path())
        .map_err(|e| Error::io(format!("listing {}", db.files.path().display()), e))?;
    let pm_ssts = crate::layout::pm_sst_names(db.files.dyn_fs(), db.files.table_cache().dirs())?;
    let wal_names = db
        .writes
        .wals()
        .list_separate(db.files.dyn_fs(), db.files.path())?;
    let mut keep = db.versions.pending_outputs();
    {
        let mut vs = db.versions.lock();
        vs.live.retain(|w| w.strong_count() > 0);
        let live = vs.live.iter().filter_map(|w| w.upgrade());
        // The write-ahead logs of unflushed write buffers (designs with a DRAM buffer).
        let sv = db.versions.sv();
        keep.extend(sv.imms.iter().chain([&sv.mem]).map(|t| t.number()));
        for v in live.chain(std::iter::once(vs.current.clone())) {
            keep.extend(v.file_numbers());
            keep.extend(v.vlogs.keys().copied());
            keep.extend(v.redirect_file_numbers());
        }
    }
    let pm_dir = db.files.table_cache().dirs().pm.as_path();
    let named = names.iter().map(|n| (db.files.path(), n));
    for (dir, name) in named.chain(pm_ssts.iter().map(|n| (pm_dir, n))) {
        let Some(file) = parse_numbered_file(name) else {
            continue;
        };
        if matches!(file, NumberedFile::Manifest(_)) || keep.contains(&file.number()) {
            continue;
        }
        evict(db, file);
        match db.files.fs().remove_file(&dir.join(name)) {
            // Another thread's purge got there first.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            other => other.map_err(|e| Error::io(format!("removing obsolete {name}"), e))?,
        }
    }
    let keep: Vec<u64> = keep.into_iter().collect();
    // Here, not in a reader that drops a deleted file's last handle (the invariant of
    // `VlogSet` and `TableCache`).
    db.files.vlogs().close_retired();
    db.files.table_cache().close_retired();
    db.writes
        .wals()
        .remove_stale(db.files.dyn_fs(), &wal_names, &keep)
}

/// Forgets the cached reader (and cached blocks or values) of a file about to be deleted.
fn evict(db: &DbInner, file: NumberedFile) {
    match file {
        NumberedFile::Sst(n) => db.files.table_cache().evict(n),
        NumberedFile::Vlog(n) => {
            db.files.vlogs().evict(n);
            if let Some(cache) = db.files.table_cache().block_cache() {
                cache.erase_file(n);
            }
        }
        NumberedFile::Redirect(n) => db.files.redirects().evict(n),
        NumberedFile::Manifest(_) | NumberedFile::Wal(_) => {}
    }
}
