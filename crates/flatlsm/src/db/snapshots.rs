//! The set of open snapshots, so merges keep every version a snapshot can read.
//!
//! Thread-safety: a mutex-protected multiset; operations are O(log n).

use crate::types::SequenceNumber;
use parking_lot::Mutex;
use std::collections::BTreeMap;

/// Open snapshots by sequence number (with a count per sequence).
#[derive(Debug, Default)]
pub struct SnapshotRegistry {
    open: Mutex<BTreeMap<SequenceNumber, usize>>,
}

impl SnapshotRegistry {
    /// Registers a snapshot at `seq`.
    pub fn acquire(&self, seq: SequenceNumber) {
        *self.open.lock().entry(seq).or_insert(0) += 1;
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
