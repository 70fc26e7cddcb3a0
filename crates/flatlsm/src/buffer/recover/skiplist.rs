//! NoveLSM's and SLM-DB's PM skiplists after a restart: each region recovery kept is recovered
//! in place (core's `pmskiplist`: headers and nodes verified, an interrupted batch unlinked,
//! upper levels rebuilt from the persisted bottom list) and sealed.
//!
//! Invariant: every number given is a region recovery found named and present
//! (`recovery/skiplist_recovery.rs`); a damaged one fails here as `Corruption` naming the region
//! and offset. Recovery rule: the only write is the interrupted batch's unlinks (idempotent; the
//! batch was never acknowledged).

use crate::buffer::skiplist::SkiplistBuffer;
use crate::buffer::{BufferRef, WriteBuffer};
use crate::error::Result;
use crate::pm::PmDevice;

/// The skiplists `numbers` (oldest first) on `device` that hold entries, newest first; an empty
/// one is left out (its region is not an unflushed buffer).
pub(super) fn recover(device: &dyn PmDevice, numbers: &[u64]) -> Result<Vec<BufferRef>> {
    let mut tables = Vec::new();
    for &n in numbers {
        let buffer = SkiplistBuffer::recover(device, n)?;
        if !buffer.is_empty() {
            tables.push(buffer as BufferRef);
        }
    }
    tables.reverse();
    Ok(tables)
}
