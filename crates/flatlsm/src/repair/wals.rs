//! The write-ahead logs of [`super::repair`] (`leveled`, `matrixkv`): which logs the repaired
//! manifest records, judged by open's rules (`recovery/wal_rules.rs`, docs/wal-format.md "Recovery
//! rule") as recovery to a point in time judges them, so that the repaired database opens
//! with the default options and holds exactly the writes before the first hole.
//!
//! Rules:
//! - a log numbered below the old manifest's `min_unflushed_pmlog` was flushed: not recorded
//!   (open removes it);
//! - every other log present is judged as if the manifest named it (the repaired one will),
//!   oldest first, the range tombstones repair carries over filling sequence gaps between logs:
//!   each must replay without damage, only the newest may end in a torn tail (kept: open drops
//!   it), and each must start where the older ones end (its sequence marker);
//! - at the first violation, a *hole* in the write order, the writes before it are kept and
//!   every later one is dropped (`wal_point_in_time_recovery`'s rule): a log damaged inside is
//!   copied whole to lost/ and cut back to its whole records before the damage, kept under its
//!   own number (moved to lost/ whole if none of them holds a write); every newer log moves to
//!   lost/. The report names the hole, the last sequence kept and the range dropped, and is
//!   incomplete (`flatlsm repair` exits 1).
//!
//! Persist order of a cut: the copy in lost/ is durable (`lost.rs`) before the log is
//! rewritten with its prefix (temporary file, sync, rename, directory sync: atomic); the newer
//! logs move after it, all before the new manifest commits. A crash in between leaves the old
//! manifest (which names logs now in lost/: open refuses) or the damaged log; repair runs
//! again, copying it again under a new name (nothing in lost/ is replaced).

use super::lost::copy_to_lost;
use super::Repair;
use crate::error::{IoContext, Result};
use crate::file_names::{parse_wal_file_name, wal_file_name};
use crate::fs::FileSystem;
use crate::range_del::{RangeTombstone, RangeTombstones};
use crate::recovery::wal_recovery::cut_back;
use crate::recovery::wal_rules::{plan_wals, KeptWal, Stop, WalDir, WalPlan, WalScan};
use crate::version::{ManifestState, RecoveredManifest};
use crate::wal::WalReplay;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// What each judged log holds before any damage: (entries, largest sequence).
type Held = BTreeMap<u64, (u64, u64)>;

impl Repair<'_> {
    /// The write-ahead logs to record, oldest first (module rules); `tombstones`: the range
    /// tombstones the repaired manifest records.
    pub(super) fn wal_buffers(&mut self, tombstones: &[RangeTombstone]) -> Result<Vec<u64>> {
        let dir = self.opts.wal_dir_for(self.path);
        let names = self.list(&dir)?;
        let min = self.min_unflushed();
        let logs = names.iter().filter_map(|n| parse_wal_file_name(n));
        let present: Vec<u64> = logs.filter(|&n| n >= min).collect();
        let (plan, held) = self.judge_wals(&dir, &present, tombstones)?;
        let mut kept: Vec<u64> = plan.keep.iter().map(|k| k.number).collect();
        if let Some(stop) = &plan.stop {
            self.repair_hole(&dir, stop, &plan, &held, &mut kept)?;
        }
        let problems = plan
            .problems
            .iter()
            .map(|e| format!("write-ahead logs: {e}"));
        self.report.notes.extend(problems);
        Ok(kept)
    }

    /// Applies open's rules, recovering to a point in time, to the logs `present` in `dir`.
    fn judge_wals(
        &self,
        dir: &Path,
        present: &[u64],
        tombstones: &[RangeTombstone],
    ) -> Result<(WalPlan, Held)> {
        let named = naming(self.min_unflushed(), present, tombstones);
        let w = WalDir {
            dir,
            manifest: &named,
            present,
            point_in_time: true,
        };
        let mut held = Held::new();
        let plan = plan_wals(&w, |n| {
            let scan = read_wal(&*self.fs, dir, n);
            held.insert(n, (scan.0.entries, scan.0.max_sequence));
            Ok(scan)
        })?;
        Ok((plan, held))
    }

    /// Keeps the writes before the hole `stop` and moves every later one to lost/, reporting
    /// the range dropped; `kept` loses a damaged log that keeps no write.
    fn repair_hole(
        &mut self,
        dir: &Path,
        stop: &Stop,
        plan: &WalPlan,
        held: &Held,
        kept: &mut Vec<u64>,
    ) -> Result<()> {
        if let Some(k) = stop.damaged {
            if !self.cut_wal(dir, k, stop, held)? {
                kept.retain(|&n| n != k.number);
            }
        }
        let last = kept.iter().filter_map(|n| held.get(n)).map(|h| h.1).max();
        let last = last.unwrap_or(0);
        let mut newest = last;
        for (n, _) in &plan.drop {
            let (r, _) = read_wal(&*self.fs, dir, *n);
            newest = newest.max(r.max_sequence);
            self.lose(&dir.join(wal_file_name(*n)), dropped_log(last, &r))?;
        }
        self.report.notes.push(hole_note(stop, last, newest));
        Ok(())
    }

    /// Copies damaged log `k` whole to lost/, then cuts it back to its whole records before the
    /// damage; false (and the log moved to lost/ whole) if those hold no write.
    fn cut_wal(&mut self, dir: &Path, k: KeptWal, stop: &Stop, held: &Held) -> Result<bool> {
        let path = dir.join(wal_file_name(k.number));
        let (entries, last) = held.get(&k.number).copied().unwrap_or_default();
        if entries == 0 {
            let why = format!("{}; no write precedes the damage", stop.why);
            return self.lose(&path, why).map(|()| false);
        }
        let copy = copy_to_lost(&*self.fs, &self.lost_dir(), &path)?;
        cut_back(&*self.fs, &path, k.end)
            .context(|| format!("cutting {} back to offset {}", path.display(), k.end))?;
        let why = format!(
            "{}; the writes before offset {} (up to sequence {last}) are kept (the log now ends \
             there), those after are lost; the whole log was copied to {}",
            stop.why,
            k.end,
            copy.display()
        );
        self.report.files_lost.push((path, why));
        Ok(true)
    }
}

/// Why a log newer than the hole (whose whole records before any damage replay as `r`) is
/// lost.
fn dropped_log(last: u64, r: &WalReplay) -> String {
    let writes = match r.entries {
        0 => "it holds no write".to_string(),
        n => format!(
            "its {n} writes, up to sequence {}, are lost",
            r.max_sequence
        ),
    };
    format!(
        "newer than the hole in the write-ahead logs that repair stopped at (the writes up to \
         sequence {last} are kept): {writes}"
    )
}

/// The report's line on the hole: what it is, the last sequence kept and the newest dropped.
fn hole_note(stop: &Stop, last: u64, newest: u64) -> String {
    let upto = match newest > last {
        true => format!(" to {newest}"),
        false => String::new(),
    };
    format!(
        "a hole in the write-ahead logs: the writes up to sequence {last} are kept, those from \
         sequence {}{upto} are dropped, as recovery to a point in time drops them: {}",
        last + 1,
        stop.why
    )
}

/// Log `n` of `dir` read as open reads it; a log that cannot be read is damaged at its start.
fn read_wal(fs: &dyn FileSystem, dir: &Path, n: u64) -> WalScan {
    let scan = crate::wal::replay_prefix(fs, dir, n, |_, _, _, _| Ok(()));
    scan.unwrap_or_else(|e| (WalReplay::default(), Some(e)))
}

/// A manifest naming `logs` (at or above `min`) and recording `tombstones`: what the repaired
/// manifest will record, for the rules to judge the logs against.
fn naming(min: u64, logs: &[u64], tombstones: &[RangeTombstone]) -> RecoveredManifest {
    let mut state = ManifestState {
        min_unflushed_pmlog: min,
        pm_logs: Some(logs.iter().copied().collect()),
        ..ManifestState::default()
    };
    state.version.range_dels = Arc::new(RangeTombstones::new(tombstones.to_vec()));
    RecoveredManifest {
        path: "the repaired manifest".into(),
        state,
        records: 0,
        torn_tail: None,
    }
}
