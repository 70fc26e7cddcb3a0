//! Snapshots: the handle a reader holds ([`Snapshot`]) and the set of open ones
//! ([`SnapshotRegistry`]) that merges consult, so they keep every version a snapshot can read.
//! Both sit below `options` (a [`crate::ReadOptions`] names a snapshot) and `db` (which hands
//! them out), so neither imports the other.
//!
//! Thread-safety: a mutex-protected multiset; operations are O(log n). The mutex is a leaf
//! lock. As in LevelDB, a snapshot's sequence is read and registered under it, and a job's
//! oldest readable sequence is computed under it: so a snapshot is either seen by the job or
//! reads at a sequence no older than the one the job keeps versions for.

use crate::types::SequenceNumber;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Open snapshots by sequence number (with a count per sequence).
#[derive(Debug, Default)]
pub struct SnapshotRegistry {
    open: Mutex<BTreeMap<SequenceNumber, usize>>,
}

impl SnapshotRegistry {
    /// Registers a snapshot at the sequence `visible` returns, read under the registry's lock,
    /// and returns that sequence. (Reading it before the lock let a job compute `oldest` in
    /// between, drop a version the snapshot reads, and only then see the snapshot.)
    pub fn acquire(&self, visible: impl FnOnce() -> SequenceNumber) -> SequenceNumber {
        let mut open = self.open.lock();
        let seq = visible();
        *open.entry(seq).or_insert(0) += 1;
        seq
    }

    /// Releases one snapshot at `seq`.
    pub fn release(&self, seq: SequenceNumber) {
        let mut open = self.open.lock();
        if let Some(n) = open.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                open.remove(&seq);
            }
        }
    }

    /// The oldest sequence any reader may read at: the oldest snapshot, else `latest`.
    /// `latest` may be read before the call: the visible sequence never decreases, so a
    /// snapshot registered after it was read still reads at a sequence >= `latest`.
    pub fn oldest(&self, latest: SequenceNumber) -> SequenceNumber {
        self.open
            .lock()
            .keys()
            .next()
            .copied()
            .unwrap_or(latest)
            .min(latest)
    }

    /// Number of open snapshots.
    pub fn count(&self) -> usize {
        self.open.lock().values().sum()
    }
}

/// A consistent point-in-time view, from [`crate::db::Db::snapshot`].
#[derive(Debug)]
pub struct Snapshot {
    pub(crate) seq: SequenceNumber,
    pub(crate) registry: Arc<SnapshotRegistry>,
}

impl Snapshot {
    /// The sequence number the snapshot reads at.
    pub fn sequence(&self) -> SequenceNumber {
        self.seq
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.registry.release(self.seq);
    }
}
