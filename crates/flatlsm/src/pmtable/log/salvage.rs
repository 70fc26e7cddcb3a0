//! Repair's salvage of a PM Log damaged in its durable part (docs/pm-log-format.md, "Cut by
//! repair"): the recovery scan's check of `[64, used_size)` finds the first entry that fails,
//! and the log can be cut after the last whole batch before it, so that recovery accepts that
//! prefix and nothing else.
//!
//! Persist order of a cut (the caller copies the whole log aside first): store `written_size`
//! = end, then `used_size` = end (8-byte atomic stores), then persist the header line. A crash
//! before the persist leaves either the old header (the same damage is found again) or
//! `used_size` = end with the old `written_size`, whose tail walk from end stops at the same
//! damaged entry before any batch after end completes: either way recovery accepts at most the
//! prefix, and a second cut finishes the job.

use super::format::{decode_entry, ends_batch, OFF_USED_SIZE, OFF_WRITTEN_SIZE};
use super::{PmLog, PM_LOG_HEADER_LEN};
use crate::error::{Error, Result};
use crate::pm::PmRegion;
use std::sync::atomic::Ordering;

/// Where the durable part of a PM Log stops verifying.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DurableDamage {
    /// Offset of the first entry that fails the recovery scan's checks.
    pub at: u64,
    /// End of the last whole batch before it (64: none); the valid prefix is `[64, keep)`.
    pub keep: u64,
    /// What is wrong with the entry at `at` (the scan's error).
    pub why: String,
}

impl PmLog {
    /// The first entry of the durable part `[64, used_size)` that fails the checks open's
    /// recovery scan makes (decodes, known kind, fits, crc), and the end of the last whole
    /// batch before it; `None` if the durable part verifies. Reads only.
    pub fn durable_damage(&self) -> Option<DurableDamage> {
        let used = (self.header().used_size as usize).min(self.region.len());
        let log = self.region.read(0, used);
        let (mut pos, mut keep) = (PM_LOG_HEADER_LEN, PM_LOG_HEADER_LEN);
        while pos < used {
            match decode_entry(&log[pos..], pos as u64, self.crc_seed, &self.path) {
                // Version 1 has no batch flags: every entry is taken as a batch of its own.
                Ok((_, len)) => {
                    if self.version < 2 || ends_batch(&log[pos..]) {
                        keep = pos + len;
                    }
                    pos += len;
                }
                Err(e) => return Some(damage(pos, keep, e)),
            }
        }
        None
    }

    /// Cuts the log after its first `keep` bytes (a batch boundary inside the durable part):
    /// they become all it holds, durable, with no tail (module documentation for the order).
    pub fn cut(&self, keep: u64) -> Result<()> {
        self.region.store_u64(OFF_WRITTEN_SIZE, keep);
        self.region.store_u64(OFF_USED_SIZE, keep);
        self.readable.store(keep, Ordering::Release);
        let len = PM_LOG_HEADER_LEN - OFF_USED_SIZE;
        self.region.persist(OFF_USED_SIZE, len).map_err(|e| {
            let what = format!(
                "persisting the cut header of PM log {}",
                self.path.display()
            );
            Error::io(what, e)
        })
    }

    /// The log's region (for copying it aside before a cut).
    pub fn region(&self) -> &dyn PmRegion {
        &*self.region
    }
}

fn damage(at: usize, keep: usize, e: Error) -> DurableDamage {
    DurableDamage {
        at: at as u64,
        keep: keep as u64,
        why: e.to_string(),
    }
}
