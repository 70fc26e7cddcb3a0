//! [`VersionSet`]: the manifest and the versions of an open database, the super version
//! readers load, the file-number space, the outputs jobs are writing and the inputs they
//! reserved.
//!
//! Locking: `state` → `sv_lock` (never the reverse); `state` → `records` → `pending` (a buffer's
//! number is handed out under `records`, `buffer_records.rs`); `pending` and `reserved` are
//! leaf locks.
//! Invariants: every swap of the super version holds `sv_lock`, so two swaps never lose one
//! another's change; a file number is handed out once (`next_file_number` only grows); a
//! pending output is not deleted by the obsolete-file purge until an installed edit names it
//! or its job abandons it; a reserved file belongs to exactly one running job.

use super::buffer_records::BufferRecords;
use super::state::SuperVersion;
use crate::version::{Manifest, Version, VersionEdit};
use arc_swap::{ArcSwap, Guard};
use parking_lot::{Condvar, Mutex, MutexGuard};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

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

/// The versions, super version, file numbers and job reservations of one database.
pub(crate) struct VersionSet {
    state: Mutex<VersionState>,
    sv: ArcSwap<SuperVersion>,
    sv_lock: Mutex<()>,
    next_file_number: AtomicU64,
    /// File numbers being written by running jobs (not yet in a version).
    pending: Mutex<HashSet<u64>>,
    /// SST files an ongoing flush or L1 → L2 compaction reads and will delete (value-log GC
    /// reserves nothing).
    reserved: Mutex<HashSet<u64>>,
    released: Condvar,
    /// Records of new write buffers waiting for the manifest (`buffer_records.rs`).
    records: BufferRecords,
}

impl VersionSet {
    /// The set of a database opened with `manifest` at `sv`'s version, numbering new files
    /// from `next_file_number`.
    pub fn new(manifest: Manifest, sv: SuperVersion, next_file_number: u64) -> VersionSet {
        let version = sv.version.clone();
        let state = VersionState {
            manifest,
            live: vec![Arc::downgrade(&version)],
            current: version,
            compact_pointers: vec![Vec::new(); crate::version::MAX_LEVELS],
        };
        VersionSet {
            state: Mutex::new(state),
            sv: ArcSwap::from_pointee(sv),
            sv_lock: Mutex::new(()),
            next_file_number: AtomicU64::new(next_file_number),
            pending: Mutex::default(),
            reserved: Mutex::default(),
            released: Condvar::new(),
            records: BufferRecords::default(),
        }
    }

    /// The records of new write buffers waiting for the manifest.
    pub fn records(&self) -> &BufferRecords {
        &self.records
    }

    /// Locks the manifest and version state (installs hold it).
    pub fn lock(&self) -> MutexGuard<'_, VersionState> {
        self.state.lock()
    }

    /// The current version.
    pub fn current(&self) -> Arc<Version> {
        self.state.lock().current.clone()
    }

    /// The current super version, without taking a lock (cheap; do not hold it long).
    pub fn sv(&self) -> Guard<Arc<SuperVersion>> {
        self.sv.load()
    }

    /// The current super version, as an owned reference.
    pub fn sv_full(&self) -> Arc<SuperVersion> {
        self.sv.load_full()
    }

    /// Replaces the super version by `change` of the current one, under `sv_lock`.
    pub fn swap_sv(&self, change: impl FnOnce(&SuperVersion) -> SuperVersion) {
        let _g = self.sv_lock.lock();
        let next = change(&self.sv.load());
        self.sv.store(Arc::new(next));
    }

    /// Allocates a file number (PM Logs, SSTs, value logs and manifests share one space).
    pub fn new_file_number(&self) -> u64 {
        self.next_file_number.fetch_add(1, Ordering::SeqCst)
    }

    /// The next file number [`VersionSet::new_file_number`] hands out.
    pub fn next_file_number(&self) -> u64 {
        self.next_file_number.load(Ordering::SeqCst)
    }

    /// Allocates a file number for a job output and records it as pending.
    pub fn new_output_number(&self) -> u64 {
        let n = self.new_file_number();
        self.pending.lock().insert(n);
        n
    }

    /// The outputs running jobs are writing.
    pub fn pending_outputs(&self) -> HashSet<u64> {
        self.pending.lock().clone()
    }

    /// The outputs an installed edit names are no longer pending: the version owns them now.
    pub fn forget_pending(&self, edit: &VersionEdit) {
        let mut p = self.pending.lock();
        let files = edit.new_files.iter().map(|(_, f)| f.number);
        let vlogs = edit.new_vlogs.iter().map(|v| v.number);
        let redirects = edit.new_redirects.iter().map(|r| r.number);
        let store = crate::designs::store_outputs(edit);
        for n in files.chain(vlogs).chain(redirects).chain(store) {
            p.remove(&n);
        }
    }

    /// Forgets outputs of a job that will never be installed, so the obsolete-file purge
    /// deletes them.
    pub fn abandon_outputs(&self, numbers: &[u64]) {
        let mut p = self.pending.lock();
        for n in numbers {
            p.remove(n);
        }
    }

    /// Reserves `numbers` for one job if none is reserved by another; all or nothing.
    pub fn try_reserve(&self, numbers: &[u64]) -> bool {
        let mut busy = self.reserved.lock();
        if numbers.iter().any(|n| busy.contains(n)) {
            return false;
        }
        busy.extend(numbers.iter().copied());
        true
    }

    /// Reserves `numbers` only if `version` is still the current version, so a job never
    /// reserves files another job has just replaced. Installs hold the same lock.
    pub fn try_reserve_in(&self, version: &Arc<Version>, numbers: &[u64]) -> bool {
        let vs = self.state.lock();
        Arc::ptr_eq(&vs.current, version) && self.try_reserve(numbers)
    }

    /// Releases files reserved by [`VersionSet::try_reserve`].
    pub fn release(&self, numbers: &[u64]) {
        let mut busy = self.reserved.lock();
        for n in numbers {
            busy.remove(n);
        }
        self.released.notify_all();
    }

    /// True if a job reserved `number`.
    pub fn is_busy(&self, number: u64) -> bool {
        self.reserved.lock().contains(&number)
    }

    /// Waits up to `timeout` for a job to release its reservations (or a wake-up).
    pub fn wait_for_release(&self, timeout: Duration) {
        let mut g = self.reserved.lock();
        self.released.wait_for(&mut g, timeout);
    }

    /// Wakes every thread in [`VersionSet::wait_for_release`].
    pub fn wake_reservation_waiters(&self) {
        let _g = self.reserved.lock();
        self.released.notify_all();
    }
}
