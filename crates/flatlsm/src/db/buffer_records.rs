//! [`BufferRecords`]: the manifest records naming new write buffers (PM Logs, PM skiplists,
//! write-ahead logs: tag 9), written off the write path.
//!
//! Why: a switch of the mutable write buffer used to append and sync its record before the
//! first write went into the new buffer. On a disk busy with a flush's writes that sync waits
//! behind them (ext4's journal commit writes the other files' new data first): 55–350 ms per
//! switch measured on a 335 MB/s disk, while the writer waited with it (docs/design-decisions.md,
//! "Buffer records off the write path"). Now the switch queues the record and goes on; the
//! next manifest append writes the queued records first, in the same synced append: a flush's
//! install, close, or a flush thread the switch wakes, once no flush is due (`flush_loop`), so
//! a flush never waits for an extra sync. Without background threads they wait for the next
//! install or close.
//!
//! Persist order: a buffer's number is handed out under this lock ([`BufferRecords::number`]),
//! before the buffer is created; its record is queued once it exists. Every edit takes the
//! queued records and the next file number it may record ([`BufferRecords::take`]), both under
//! this lock: the number is capped at the lowest buffer still being created. Hence an edit that
//! records a `next_file_number` above a buffer's number also holds (or follows) that buffer's
//! record.
//!
//! Recovery rule: a buffer the manifest does not name, numbered at or above the manifest's
//! `next_file_number`, was created after the manifest's last durable record: its record was in
//! flight, and recovery keeps it as if named (`recovery/consistency.rs`, `in_flight`). One
//! below that number that holds writes still means the manifest lost records.
//!
//! Locking: appends take it under the version state; [`BufferRecords::number`] takes the
//! version set's `pending` lock under it (through `allocate`). Nothing else is taken under it.

use crate::version::PmLogMeta;
use parking_lot::Mutex;
use std::collections::BTreeSet;

/// Records queued for the manifest and buffers being created.
#[derive(Default)]
pub(crate) struct BufferRecords {
    inner: Mutex<Records>,
}

#[derive(Default)]
struct Records {
    /// Records of created buffers, in the order they were queued (number order).
    queued: Vec<PmLogMeta>,
    /// Numbers handed out to buffers not created yet.
    creating: BTreeSet<u64>,
}

impl BufferRecords {
    /// Hands out a new buffer's number (`allocate` draws it from the file-number space) and
    /// notes the buffer as being created until [`BufferRecords::queue`] or
    /// [`BufferRecords::abandon`].
    pub fn number(&self, allocate: impl FnOnce() -> u64) -> u64 {
        let mut r = self.inner.lock();
        let n = allocate();
        r.creating.insert(n);
        n
    }

    /// Queues the record of a created buffer.
    pub fn queue(&self, record: PmLogMeta) {
        let mut r = self.inner.lock();
        r.creating.remove(&record.number);
        r.queued.push(record);
    }

    /// Forgets buffer `number`, whose creation failed.
    pub fn abandon(&self, number: u64) {
        self.inner.lock().creating.remove(&number);
    }

    /// True if records wait for the manifest.
    pub fn any_queued(&self) -> bool {
        !self.inner.lock().queued.is_empty()
    }

    /// The queued records for the next manifest edit, and the next file number that edit may
    /// record: `next_file_number()`, capped at the lowest buffer still being created.
    pub fn take(&self, next_file_number: impl FnOnce() -> u64) -> (Vec<PmLogMeta>, u64) {
        let mut r = self.inner.lock();
        let cap = r.creating.first().copied().unwrap_or(u64::MAX);
        (std::mem::take(&mut r.queued), next_file_number().min(cap))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(number: u64) -> PmLogMeta {
        PmLogMeta {
            number,
            replaces: 0,
        }
    }

    #[test]
    fn an_edit_records_no_next_file_number_above_a_buffer_still_being_created() {
        let records = BufferRecords::default();
        let n = records.number(|| 7);
        assert_eq!(records.take(|| 9), (vec![], 7));
        records.queue(meta(n));
        assert_eq!(records.take(|| 9), (vec![meta(7)], 9));
        assert_eq!(records.take(|| 9), (vec![], 9), "taken once");
    }

    #[test]
    fn an_abandoned_buffer_caps_nothing_and_is_never_recorded() {
        let records = BufferRecords::default();
        let n = records.number(|| 4);
        records.abandon(n);
        assert!(!records.any_queued());
        assert_eq!(records.take(|| 5), (vec![], 5));
    }
}
