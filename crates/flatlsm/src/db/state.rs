//! The shared state behind a [`crate::db::Db`] handle.
//!
//! The state is grouped by what it serves, each group a type with private fields and its own
//! invariants: [`super::files::Files`] (directory, devices, caches), [`super::writes::Writes`]
//! (write lock, WALs, visible sequence), [`super::version_set::VersionSet`] (manifest,
//! versions, super version, file numbers, reservations), [`super::bg_state::BgState`]
//! (background error, shutdown, waits, job locks); stall control, the flush queue, snapshots
//! and counters are types of their own.
//!
//! Locking order (never take an earlier lock while holding a later one):
//! the write lock → the version state → `sv_lock`; the background signal, the reservations,
//! the flush queue's lock (`flush_queue.rs`), the snapshot registry's mutex and the stall
//! state (`stall.rs`) are leaf locks; the background error (taken under the signal by waiters
//! testing `stop_waiting`, `waits.rs`) and the info log's mutex (`info_log.rs`) lie below all
//! of them (taken under any, they take none). Every swap of the super version holds `sv_lock`; readers take no lock: they load the
//! current [`SuperVersion`], their sequence, and the super version again, retrying on a swap,
//! which pins the two as if under `sv_lock` (see `read.rs`).

pub(crate) use super::version_set::VersionState;
use crate::buffer::BufferRef;
use crate::error::{Error, Result};
use crate::observe::info_log::event;
use crate::observe::stats::Counters;
use crate::options::Options;
use crate::snapshot::SnapshotRegistry;
use crate::sst::SstDir;
use crate::version::{PmLogMeta, Version, VersionEdit};
use std::collections::BTreeSet;
use std::sync::Arc;

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
    /// The directory, file system, PM device and the caches over their files.
    pub files: super::files::Files,
    /// The `LOG` file: options at open, jobs, stalls, errors (`info_log.rs`).
    pub info_log: crate::observe::info_log::InfoLog,
    /// The design (write-buffer device, WAL or not, stall triggers).
    pub design: Box<dyn crate::designs::Design>,
    /// The design's compaction policy.
    pub policy: Box<dyn crate::compaction::policy::CompactionPolicy>,
    /// The manifest, versions, super version, file numbers and job reservations.
    pub versions: super::version_set::VersionSet,
    /// The write lock, write-ahead logs and visible sequence.
    pub writes: super::writes::Writes,
    /// Background errors, shutdown, the signal waiters wait on, the job locks.
    pub bg: super::bg_state::BgState,
    pub snapshots: Arc<SnapshotRegistry>,
    pub counters: Counters,
    /// Slowdown and stop of writers (see `stall.rs`).
    pub stall: super::stall::StallControl,
    /// Flush jobs in flight (background threads and `Db::flush`): what each claimed, and
    /// their install order.
    pub flush_queue: super::flush_queue::FlushQueue,
    /// Level-0 runs point reads searched in vain since level 0 was last merged.
    pub read_charges: super::read_charges::ReadCharges,
    /// When the mutable write buffer was last switched: are writes quiet (`quiet.rs`)?
    pub quiet: super::quiet::QuietWatch,
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
        self.versions.new_file_number()
    }

    /// Allocates a file number for a job output and records it as pending.
    pub fn new_output_number(&self) -> u64 {
        self.versions.new_output_number()
    }

    /// The latest visible sequence number.
    pub fn visible(&self) -> u64 {
        self.writes.visible()
    }

    /// Fails if writes are not allowed (closed, or a background job failed).
    pub fn check_writable(&self) -> Result<()> {
        if self.bg.closed() {
            return Err(Error::Closed);
        }
        if self.files.read_only() {
            return Err(Error::ReadOnly(self.files.path().to_path_buf()));
        }
        match self.bg.error() {
            Some(e) => Err(Error::Background(e)),
            None => Ok(()),
        }
    }

    /// Records a background failure: writes fail from now on; reads keep working. The first
    /// failure is kept (an `Error::Background` reporting it again is not nested in it). Every
    /// waiter is woken: its wait ends on the error (`waits.rs`).
    pub fn set_bg_error(&self, e: &Error) {
        let message = format!("background work failed, database is read-only until reopened: {e}");
        event!(self.info_log, Error, message);
        self.bg.record_error(|| super::waits::cause_of(e));
        self.bg.wake_all();
        self.versions.wake_reservation_waiters();
    }

    /// Hands out the number of a new write buffer, noted as being created until its record
    /// is queued ([`DbInner::record_buffer`]) or `abandon`ed (`buffer_records.rs`). It is also
    /// a pending output: no purge takes the buffer for an orphan before a super version holds it.
    pub fn new_buffer_number(&self) -> u64 {
        self.versions
            .records()
            .number(|| self.versions.new_output_number())
    }

    /// Queues the manifest record of `table`, a new write buffer numbered by
    /// [`DbInner::new_buffer_number`]; the switch then wakes the flush threads
    /// (`seal_mutable`), which write it when no flush is due. Writes may go into the buffer at
    /// once: the next manifest append writes the record first, and recovery keeps a buffer
    /// whose record was still in flight at a crash (`buffer_records.rs`). One record per
    /// write-buffer switch or PMTable GC, never per write.
    ///
    /// Written at once, before the first write, as before queuing existed: a PMTable-GC
    /// replacement's record (its source's log is recycled next; a second GC replacing it
    /// before the record is durable would leave the manifest naming a log whose replacement is
    /// gone too: found by `crash_during_pmtable_gc_keeps_acknowledged_writes`). PM skiplists
    /// (NoveLSM, SLM-DB) queue theirs like PM Logs: their header is persisted last, so
    /// recovery tells an interrupted creation (blank header) from damage
    /// (`recovery/skiplist_recovery.rs`).
    pub fn record_buffer(&self, table: &dyn crate::buffer::WriteBuffer) -> Result<()> {
        self.versions.records().queue(PmLogMeta {
            number: table.number(),
            replaces: table.replaces(),
        });
        match table.replaces() != 0 {
            true => self.write_buffer_records(),
            false => Ok(()),
        }
    }

    /// Writes the queued buffer records to the manifest (an idle flush thread, and close). A
    /// failure puts the database in the background-error state (the manifest refuses later
    /// appends anyway) and is returned as [`Error::Background`].
    pub fn write_buffer_records(&self) -> Result<()> {
        if !self.versions.records().any_queued() {
            return Ok(());
        }
        let mut vs = self.versions.lock();
        let mut edit = VersionEdit::default();
        if let Err(e) = self.append_locked(&mut vs, &mut edit) {
            self.set_bg_error(&e);
            return Err(Error::Background(Arc::new(e)));
        }
        Ok(())
    }

    /// Appends `edit` to the manifest, the queued buffer records before its own, with the
    /// next file number it may record (`buffer_records.rs`).
    fn append_locked(&self, vs: &mut VersionState, edit: &mut VersionEdit) -> Result<()> {
        let (records, next) = self
            .versions
            .records()
            .take(|| self.versions.next_file_number());
        edit.new_pm_logs.splice(0..0, records);
        edit.next_file_number = Some(next);
        vs.manifest.append(edit)?;
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
            let path = self.files.table_cache().dirs().dir(dir);
            self.files
                .fs()
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
        let Some(mut retire) = self.retire_range_dels_edit(&self.versions.sv()) else {
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
        let new_version = Arc::new(vs.current.apply(edit)?);
        self.append_locked(vs, edit)?;
        vs.live.retain(|w| w.strong_count() > 0);
        vs.live.push(Arc::downgrade(&new_version));
        vs.current = new_version.clone();
        self.stall.garbage.note_version(&new_version);
        self.versions.forget_pending(edit);
        self.versions.swap_sv(|old| {
            let mut imms = old.imms.clone();
            change_sv(&mut imms);
            SuperVersion {
                mem: old.mem.clone(),
                imms,
                level0: self.design.store().level0_store(&new_version),
                version: new_version.clone(),
            }
        });
        Ok(new_version)
    }
}
