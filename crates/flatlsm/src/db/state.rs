//! The shared state behind a [`crate::db::Db`] handle.
//!
//! Locking order (never take an earlier lock while holding a later one):
//! `write_lock` → `versions` → `sv_lock`; `bg_signal`, `compacting`, the flush queue's lock
//! (`flush_queue.rs`), the snapshot registry's mutex and the stall state (`stall.rs`) are leaf
//! locks; `bg_error` (taken under `bg_signal` by waiters testing `stop_waiting`, `waits.rs`)
//! and the info log's mutex (`info_log.rs`) lie below all of them (taken under any, they take
//! none). Every swap of the super version holds `sv_lock`; readers take no lock: they load the
//! current [`SuperVersion`], their sequence, and the super version again, retrying on a swap,
//! which pins the two as if under `sv_lock` (see `read.rs`).

use crate::buffer::BufferRef;
use crate::error::{Error, Result};
use crate::fs::FsRef;
use crate::observe::info_log::event;
use crate::observe::stats::Counters;
use crate::options::Options;
use crate::pm::PmDeviceRef;
use crate::pmtable::PmLogPool;
use crate::snapshot::SnapshotRegistry;
use crate::sst::{SstDir, TableCache};
use crate::version::{Manifest, PmLogMeta, Version, VersionEdit};
use crate::vlog::{RedirectSet, VlogSet};
use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex};
use std::collections::{BTreeSet, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// What a reader needs: the PMTables and the SSD version, swapped atomically together.
pub(crate) struct SuperVersion {
    /// The mutable write buffer (PMTable).
    pub mem: BufferRef,
    /// Immutable write buffers, newest first.
    pub imms: Vec<BufferRef>,
    /// The SSD levels and value logs.
    pub version: Arc<Version>,
    /// The design's own level-0 store as `version` sees it (MatrixKV's rows), searched after
    /// the write buffers.
    pub level0: Option<Arc<dyn crate::designs::Level0Store>>,
}

/// The manifest and the versions still in use.
pub(crate) struct VersionState {
    pub manifest: Manifest,
    pub current: Arc<Version>,
    /// Every installed version some reader may still hold (for safe file deletion).
    pub live: Vec<Weak<Version>>,
    /// Per level, where the next compaction out of it starts (round robin over the key
    /// space; see `compaction/policy/`).
    pub compact_pointers: Vec<Vec<u8>>,
}

/// The mutex background threads and stalled writers wait on with `bg_cv`; the conditions
/// themselves live in the super version and the counters.
#[derive(Default)]
pub(crate) struct BgSignal;

/// What the handle and the write path need of the background jobs (`crate::jobs`, a layer
/// above): set by recovery when it builds the state.
#[derive(Clone, Copy)]
pub(crate) struct JobHooks {
    /// Flushes the oldest immutable write buffers in this thread (a stalled writer, when no
    /// background thread runs); true if it flushed something.
    pub flush_one: fn(&DbInner) -> Result<bool>,
    /// Runs the flushes already due (close).
    pub finish_due_flushes: fn(&DbInner) -> Result<()>,
}

/// State shared by the handle and the background threads.
pub(crate) struct DbInner {
    /// The jobs the handle runs in its own threads (see [`JobHooks`]).
    pub jobs: JobHooks,
    pub opts: Options,
    /// Opened by `Db::open_read_only`: every write is refused, and the files and PM the
    /// engine sees are copy-on-write views (`recovery/open.rs`).
    pub read_only: bool,
    pub path: PathBuf,
    /// The `LOG` file: options at open, jobs, stalls, errors (`info_log.rs`).
    pub info_log: crate::observe::info_log::InfoLog,
    pub fs: FsRef,
    pub pm: PmDeviceRef,
    /// Retired PM Logs, recycled for new PMTables.
    pub pm_pool: PmLogPool,
    pub table_cache: Arc<TableCache>,
    pub vlogs: Arc<VlogSet>,
    /// Loaded redirect tables of value logs GC moved (`vlog::redirect`), by file number.
    pub vlog_redirects: Arc<RedirectSet>,
    pub sv: ArcSwap<SuperVersion>,
    pub sv_lock: Mutex<()>,
    pub write_lock: Mutex<()>,
    /// The design's compaction policy.
    pub policy: Box<dyn crate::compaction::policy::CompactionPolicy>,
    /// The design (write-buffer device, WAL or not, stall triggers).
    pub design: Box<dyn crate::designs::Design>,
    /// The write-ahead logs (designs with a DRAM write buffer; empty otherwise): the current
    /// one is appended to and rolled under `write_lock`.
    pub wals: super::wals::Wals,
    pub visible_seq: AtomicU64,
    pub next_file_number: AtomicU64,
    pub versions: Mutex<VersionState>,
    pub snapshots: Arc<SnapshotRegistry>,
    pub counters: Counters,
    /// Slowdown and stop of writers (see `stall.rs`).
    pub stall: super::stall::StallControl,
    pub bg_signal: Mutex<BgSignal>,
    /// Wakes background threads (new work) and waiting foreground threads (work done).
    pub bg_cv: Condvar,
    pub bg_error: Mutex<Option<Arc<Error>>>,
    /// SST files an ongoing flush or L1 → L2 compaction reads and will delete (value-log GC
    /// reserves nothing).
    pub compacting: Mutex<HashSet<u64>>,
    pub compacting_cv: Condvar,
    /// File numbers being written by running jobs (not yet in a version).
    pub pending_outputs: Mutex<HashSet<u64>>,
    pub shutting_down: AtomicBool,
    pub closed: AtomicBool,
    /// Flush jobs in flight (background threads and `Db::flush`): what each claimed, and
    /// their install order.
    pub flush_queue: super::flush_queue::FlushQueue,
    /// Serializes the run merge and L1 → L2 compactions.
    pub compaction_lock: Mutex<()>,
    /// Serializes value-log GC jobs (its own thread and `wait_for_background_work`); no flush,
    /// compaction or writer ever takes it.
    pub vlog_gc_lock: Mutex<()>,
    /// Test callbacks at named points of the engine (see `sync_point.rs`).
    #[cfg(test)]
    pub sync_points: super::sync_point::SyncPoints,
}

impl DbInner {
    /// A named point where a test may run code, e.g. pause this thread (`sync_point.rs`);
    /// nothing at all outside the crate's test builds.
    #[inline(always)]
    pub(crate) fn sync_point(&self, _point: &'static str) {
        #[cfg(test)]
        self.sync_points.hit(_point);
    }

    /// Allocates a file number (PM Logs, SSTs, value logs and manifests share one space).
    pub fn new_file_number(&self) -> u64 {
        self.next_file_number.fetch_add(1, Ordering::SeqCst)
    }

    /// Allocates a file number for a job output and records it as pending.
    pub fn new_output_number(&self) -> u64 {
        let n = self.new_file_number();
        self.pending_outputs.lock().insert(n);
        n
    }

    /// The outputs an installed edit names are no longer pending: the version owns them now.
    fn forget_pending(&self, edit: &VersionEdit) {
        let mut p = self.pending_outputs.lock();
        for (_, f) in &edit.new_files {
            p.remove(&f.number);
        }
        for v in &edit.new_vlogs {
            p.remove(&v.number);
        }
        for r in &edit.new_redirects {
            p.remove(&r.number);
        }
        for n in crate::designs::store_outputs(edit) {
            p.remove(&n);
        }
    }

    /// Forgets outputs of a job that will never be installed, so the obsolete-file purge
    /// deletes them.
    pub fn abandon_outputs(&self, numbers: &[u64]) {
        let mut p = self.pending_outputs.lock();
        for n in numbers {
            p.remove(n);
        }
    }

    /// The latest visible sequence number.
    pub fn visible(&self) -> u64 {
        self.visible_seq.load(Ordering::Acquire)
    }

    /// Fails if writes are not allowed (closed, or a background job failed).
    pub fn check_writable(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            return Err(Error::Closed);
        }
        if self.read_only {
            return Err(Error::ReadOnly(self.path.clone()));
        }
        if let Some(e) = self.bg_error.lock().as_ref() {
            return Err(Error::Background(e.clone()));
        }
        Ok(())
    }

    /// Reserves `numbers` for one job if none is reserved by another; all or nothing.
    pub fn try_reserve(&self, numbers: &[u64]) -> bool {
        let mut busy = self.compacting.lock();
        if numbers.iter().any(|n| busy.contains(n)) {
            return false;
        }
        busy.extend(numbers.iter().copied());
        true
    }

    /// Reserves `numbers` only if `version` is still the current version, so a job never
    /// reserves files another job has just replaced. Installs hold the same lock.
    pub fn try_reserve_in(&self, version: &Arc<Version>, numbers: &[u64]) -> bool {
        let vs = self.versions.lock();
        Arc::ptr_eq(&vs.current, version) && self.try_reserve(numbers)
    }

    /// Releases files reserved by [`DbInner::try_reserve`].
    pub fn release(&self, numbers: &[u64]) {
        let mut busy = self.compacting.lock();
        for n in numbers {
            busy.remove(n);
        }
        self.compacting_cv.notify_all();
    }

    /// True if another job reserved `number`.
    pub fn is_busy(&self, number: u64) -> bool {
        self.compacting.lock().contains(&number)
    }

    /// Records a background failure: writes fail from now on; reads keep working. The first
    /// failure is kept (an `Error::Background` reporting it again is not nested in it). Every
    /// waiter is woken: its wait ends on the error (`waits.rs`).
    pub fn set_bg_error(&self, e: &Error) {
        let message = format!("background work failed, database is read-only until reopened: {e}");
        event!(self.info_log, Error, message);
        let mut g = self.bg_error.lock();
        if g.is_none() {
            *g = Some(super::waits::cause_of(e));
        }
        drop(g);
        self.wake_all();
        let _c = self.compacting.lock();
        self.compacting_cv.notify_all();
    }

    /// Wakes every background thread and every waiting writer.
    pub fn wake_all(&self) {
        let _g = self.bg_signal.lock();
        self.bg_cv.notify_all();
    }

    /// Records `table`'s new PM Log in the manifest; call it before any user write goes into
    /// the log. Recovery then refuses when a log that may hold unflushed writes is missing,
    /// and when a log holding writes is not recorded (docs/manifest-format.md, tag 9). One
    /// record per PMTable switch or GC, never per write. A failure puts the database in the
    /// background-error state (the manifest refuses later appends anyway) and is returned as
    /// [`Error::Background`], as every write refused from then on is.
    pub fn record_pm_log(&self, table: &dyn crate::buffer::WriteBuffer) -> Result<()> {
        let edit = VersionEdit {
            next_file_number: Some(self.next_file_number.load(Ordering::SeqCst)),
            new_pm_logs: vec![PmLogMeta {
                number: table.number(),
                replaces: table.replaces(),
            }],
            ..VersionEdit::default()
        };
        if let Err(e) = self.versions.lock().manifest.append(&edit) {
            self.set_bg_error(&e);
            return Err(Error::Background(Arc::new(e)));
        }
        let bytes = edit.encode().len() as u64 + 8;
        Counters::add(&self.counters.manifest_bytes, bytes);
        Ok(())
    }

    /// Appends `edit` to the manifest and installs the resulting version; `change_sv` adjusts
    /// the PMTable part of the new super version (e.g. drops a flushed table).
    pub fn install(
        &self,
        edit: &mut VersionEdit,
        change_sv: impl FnOnce(&mut Vec<BufferRef>),
    ) -> Result<Arc<Version>> {
        self.sync_dir_for(edit)?;
        let mut vs = self.versions.lock();
        self.install_locked(&mut vs, edit, change_sv)
    }

    /// Like [`DbInner::install`], but only if `still_valid` holds for the current version
    /// (checked under the same lock as the install); `Ok(None)` if it does not. For jobs whose
    /// edit another job's commit may have made moot (value-log GC of a log dropped meanwhile).
    pub fn install_if(
        &self,
        edit: &mut VersionEdit,
        still_valid: impl FnOnce(&Version) -> bool,
    ) -> Result<Option<Arc<Version>>> {
        self.sync_dir_for(edit)?;
        let mut vs = self.versions.lock();
        if !still_valid(&vs.current) {
            return Ok(None);
        }
        self.install_locked(&mut vs, edit, |_| {}).map(Some)
    }

    /// The manifest may name a new SST only once its directory entry is durable: a synced
    /// file whose creation is lost at a crash is a missing file to recovery. (Value logs and
    /// redirect tables sync the directory when they are created.)
    /// Each directory holding a new file is synced (level 0 may be in the PM directory).
    fn sync_dir_for(&self, edit: &VersionEdit) -> Result<()> {
        let dirs: BTreeSet<SstDir> = edit.new_files.iter().map(|(_, f)| f.dir).collect();
        for dir in dirs {
            let path = self.table_cache.dirs().dir(dir);
            self.fs
                .sync_dir(path)
                .map_err(|e| Error::io(format!("syncing directory {}", path.display()), e))?;
        }
        Ok(())
    }

    /// Commits `edit`, then retires the range tombstones nothing is left under any more (in
    /// an edit of their own: a crash between the two leaves them in place, which is safe).
    fn install_locked(
        &self,
        vs: &mut VersionState,
        edit: &mut VersionEdit,
        change_sv: impl FnOnce(&mut Vec<BufferRef>),
    ) -> Result<Arc<Version>> {
        let installed = self.commit_locked(vs, edit, change_sv)?;
        let Some(mut retire) = self.retire_range_dels_edit(&self.sv.load()) else {
            return Ok(installed);
        };
        let seqs = format!("{:?}", retire.retired_range_dels);
        let retired = self.commit_locked(vs, &mut retire, |_| {})?;
        self.info_log.line(&format!(
            "range tombstones {seqs} retired: nothing left under them"
        ));
        Ok(retired)
    }

    /// Appends `edit` to the manifest and swaps in the version and super version it makes.
    fn commit_locked(
        &self,
        vs: &mut VersionState,
        edit: &mut VersionEdit,
        change_sv: impl FnOnce(&mut Vec<BufferRef>),
    ) -> Result<Arc<Version>> {
        edit.next_file_number = Some(self.next_file_number.load(Ordering::SeqCst));
        let new_version = Arc::new(vs.current.apply(edit)?);
        vs.manifest.append(edit)?;
        Counters::add(
            &self.counters.manifest_bytes,
            edit.encode().len() as u64 + 8,
        );
        vs.live.retain(|w| w.strong_count() > 0);
        vs.live.push(Arc::downgrade(&new_version));
        vs.current = new_version.clone();
        self.forget_pending(edit);
        let _g = self.sv_lock.lock();
        let old = self.sv.load_full();
        let mut imms = old.imms.clone();
        change_sv(&mut imms);
        self.sv.store(Arc::new(SuperVersion {
            mem: old.mem.clone(),
            imms,
            level0: self.design.store().level0_store(&new_version),
            version: new_version.clone(),
        }));
        Ok(new_version)
    }
}
