//! The write-buffer half of [`super::repair`]: which PM Logs, PM skiplists or write-ahead logs
//! present the repaired manifest records as unflushed, each checked as open will check it.
//!
//! Rules:
//! - a buffer numbered below the old manifest's `min_unflushed_pmlog` was flushed: not recorded;
//! - write-ahead logs are judged together by open's rules (`wals.rs`: at the first hole
//!   in the write order the writes before it are kept and every later one goes to lost/);
//! - a PM skiplist must recover; else it moves to lost/;
//! - a PM Log must have a valid header (else it moves to lost/), and is not recorded when blank
//!   (creation interrupted) or an unfinished PMTable-GC replacement (its source holds the data;
//!   open removes it). Its durable part must pass open's recovery scan (`PmLog::durable_damage`,
//!   the checks of `PmTable::recover`). A log damaged there is copied whole to lost/, then cut
//!   after the last whole batch before the damage (`PmLog::cut`) and recorded: its valid prefix
//!   stays in place under its own number, so the order of the buffers (a higher number holds
//!   newer writes) is unchanged. The writes after the damage are lost (reported; a key written
//!   there reads its previous version);
//! - a PM region moves to lost/ as a copy of its bytes, then is removed through its device
//!   (which need not be a directory of files).
//!
//! Persist order of a salvage: the copy in lost/ is durable (`lost.rs`) before the cut;
//! a crash in between leaves the damaged log, which the next repair copies again (under a new
//! name: nothing in lost/ is replaced) and cuts.

use super::lost::copy_region_to_lost;
use super::Repair;
use crate::buffer::skiplist::SkiplistBuffer;
use crate::designs::{design_of, BufferKind};
use crate::error::Result;
use crate::pm::PmDeviceRef;
use crate::pmtable::log::{DurableDamage, PmLog};
use crate::range_del::RangeTombstone;
use std::collections::BTreeSet;

impl Repair<'_> {
    /// The write buffers to record as unflushed: write-ahead logs, or (with `pm`, the buffer
    /// device) PM Logs or skiplists, by the design's buffer kind.
    /// `tombstones`: the range tombstones the repaired manifest records (sequences between two
    /// logs that are not missing writes).
    pub(super) fn buffers(
        &mut self,
        pm: Option<&PmDeviceRef>,
        tombstones: &[RangeTombstone],
    ) -> Result<BTreeSet<u64>> {
        let min = self.min_unflushed();
        let found = match pm {
            None => self.wal_buffers(tombstones)?,
            Some(pm) => self.pm_buffers(pm, min)?,
        };
        let kept: BTreeSet<u64> = found.into_iter().filter(|&n| n >= min).collect();
        self.report.buffers_kept = kept.iter().copied().collect();
        Ok(kept)
    }

    /// Buffers below this were flushed (the old manifest says so); 0 without one.
    pub(super) fn min_unflushed(&self) -> u64 {
        self.old.as_ref().map_or(0, |m| m.state.min_unflushed_pmlog)
    }

    /// The PM Logs or skiplists present that recovery can read (those at or above `min`
    /// checked fully); an unreadable one is lost.
    fn pm_buffers(&mut self, pm: &PmDeviceRef, min: u64) -> Result<Vec<u64>> {
        let kind = design_of(self.opts).buffer_kind();
        let mut kept = Vec::new();
        for name in pm.list_regions()? {
            let Some(n) = kind.parse_region_name(&name) else {
                continue;
            };
            self.see(n);
            let usable = match kind {
                BufferKind::PmSkiplist => self.skiplist(pm, &name, n)?,
                _ => self.pm_log(pm, &name, n >= min)?,
            };
            if usable {
                kept.push(n);
            }
        }
        Ok(kept)
    }

    /// True if skiplist `name` (number `n`) recovers; else it is lost.
    fn skiplist(&mut self, pm: &PmDeviceRef, name: &str, n: u64) -> Result<bool> {
        match SkiplistBuffer::recover(&**pm, n) {
            Ok(_) => Ok(true),
            Err(e) => self.lose_region(pm, name, e.to_string()).map(|()| false),
        }
    }

    /// True if PM Log `name` is to be recorded (module rules); `check`: its durable part is
    /// scanned, and salvaged if damaged.
    fn pm_log(&mut self, pm: &PmDeviceRef, name: &str, check: bool) -> Result<bool> {
        let log = match PmLog::open_if_initialized(&**pm, name) {
            Ok(Some(log)) => log,
            Ok(None) => return Ok(false),
            Err(e) => return self.lose_region(pm, name, e.to_string()).map(|()| false),
        };
        let h = log.header();
        if h.replaces != 0 && !h.gc_complete {
            return Ok(false);
        }
        if let Some(damage) = log.durable_damage().filter(|_| check) {
            self.salvage_pm_log(&log, damage)?;
        }
        Ok(true)
    }

    /// Copies `log` whole to lost/, then cuts it to its valid prefix (module rules).
    fn salvage_pm_log(&mut self, log: &PmLog, damage: DurableDamage) -> Result<()> {
        let copy = copy_region_to_lost(&*self.fs, &self.lost_dir(), log.region())?;
        log.cut(damage.keep)?;
        let why = format!(
            "{}; the entries before offset {} are kept (the log now ends there), those after are \
             lost; the whole log was copied to {}",
            damage.why,
            damage.keep,
            copy.display()
        );
        self.report.files_lost.push((log.path().to_path_buf(), why));
        Ok(())
    }

    /// Moves PM region `name` to lost/ (a copy, then removed from its device) and reports it.
    fn lose_region(&mut self, pm: &PmDeviceRef, name: &str, why: String) -> Result<()> {
        let region = pm.open_region(name)?;
        let copy = copy_region_to_lost(&*self.fs, &self.lost_dir(), &*region)?;
        drop(region);
        pm.remove_region(name)?;
        let why = format!("{why} (moved to {})", copy.display());
        self.report.files_lost.push((pm.dir().join(name), why));
        Ok(())
    }
}
