//! Which write-ahead logs recovery replays, and how far. One place decides, for `Db::open`
//! (`recovery/wal_recovery.rs`, which refuses, or recovers to a point in time), `inspect::check`
//! (which reports every problem) and repair (`repair/wals.rs`, which keeps what recovery to
//! a point in time keeps); docs/wal-format.md ("Recovery rule") states the same rules.
//!
//! The persist order they rely on (`wal/mod.rs`): a log is named by the manifest by the first
//! edit that records a `next_file_number` above its number (`db/buffer_records.rs`), and synced
//! whole before a newer log is created, whose sequence marker records
//! the last sequence the older logs, range tombstones and the tree hold. Hence, for the logs
//! the manifest names at or above `min_unflushed_pmlog` (oldest first):
//! - each must be present and replay without damage; only the newest may end in a torn tail
//!   (its unsynced last write); a torn tail in an older log is damage (unless the log predates
//!   sequence markers: opens before them did not seal the logs they recovered);
//! - the newest older log with writes must end at the sequence the next log's marker records,
//!   unless the sequences between are range tombstones (committed to the manifest, not a log);
//!   otherwise writes at its end are missing (a log cut at a record boundary);
//! - a violation is a *hole* in the write order: `Corruption` naming the file and offset, never
//!   skipped; under `wal_point_in_time_recovery` recovery stops at the first hole (the writes
//!   before it are kept, the damaged log is cut there) and every newer log is dropped.
//!
//! Logs the manifest does not name but whose record was in flight at a crash (numbered at or
//! above its `next_file_number`, `db/buffer_records.rs`) count as named, after the named ones.
//! Other logs the manifest does not name: below `min_unflushed_pmlog` they were flushed (removed);
//! below the manifest's own number they were dropped by the open that wrote its first record
//! (recovery to a point in time; a crash kept them from being deleted), removed. Any other one
//! was created after that open: one that holds writes means the manifest lost the record
//! naming it (cut short, or an older copy), refused in either mode (deleting it as an orphan
//! would lose its writes); one without writes is a creation a crash interrupted before its
//! record (removed).

use crate::error::{Error, Result};
use crate::file_names::wal_file_name;
use crate::version::{ManifestState, RecoveredManifest};
use crate::wal::{WalReplay, WAL_HEADER_LEN, WAL_MARKER_LEN};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What one read of a log found: the replay of its whole records, and the damage that ended
/// it early, if any.
pub(crate) type WalScan = (WalReplay, Option<Error>);

/// A log recovery replays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeptWal {
    pub number: u64,
    /// Where its replay stops: the end of its whole records before any torn tail or hole.
    pub end: u64,
    /// Its length: beyond `end`, the log is cut back to `end` before a newer log is named.
    pub len: u64,
}

/// The verdict on the logs of a WAL directory.
#[derive(Debug, Default)]
pub(crate) struct WalPlan {
    /// Logs to replay, oldest first.
    pub keep: Vec<KeptWal>,
    /// Logs present that are not replayed (removed once the new manifest no longer names
    /// them), with the reason.
    pub drop: Vec<(u64, String)>,
    /// What refuses the open (holes, unless recovering to a point in time; unnamed logs with
    /// writes).
    pub problems: Vec<Error>,
    /// What recovery drops and says so: a torn tail of the newest log; the hole recovery to a
    /// point in time stopped at.
    pub notes: Vec<String>,
    /// The hole recovery to a point in time stopped at (`None` by default: holes are problems).
    pub stop: Option<Stop>,
}

/// The first hole, where recovery to a point in time stopped.
#[derive(Debug)]
pub(crate) struct Stop {
    /// What the hole is (what open refuses without point in time).
    pub why: String,
    /// The log the hole is in (kept, to be cut back to its `end`), if it is in one rather than
    /// between two logs.
    pub damaged: Option<KeptWal>,
}

/// The inputs of the rules.
pub(crate) struct WalDir<'a> {
    pub dir: &'a Path,
    pub manifest: &'a RecoveredManifest,
    /// The logs present in `dir`.
    pub present: &'a [u64],
    pub point_in_time: bool,
}

/// Applies the module's rules; `scan(n)` reads log `n` (its errors are returned).
pub(crate) fn plan_wals(
    w: &WalDir<'_>,
    mut scan: impl FnMut(u64) -> Result<WalScan>,
) -> Result<WalPlan> {
    let state = &w.manifest.state;
    let (named, mut scanned) = with_in_flight(named_logs(state), w, &mut scan)?;
    let mut scan = |n: u64| match scanned.remove(&n) {
        Some(s) => Ok(s),
        None => scan(n),
    };
    let mut judge = Judge {
        w,
        plan: WalPlan::default(),
        prev: None,
        stopped: None,
        tombstones: tombstone_sequences(state),
    };
    for (i, &n) in named.iter().enumerate() {
        let newest = i + 1 == named.len();
        judge.named_log(n, newest, &mut scan)?;
    }
    for &n in w.present.iter().filter(|n| !named.contains(n)) {
        judge.unnamed_log(n, &named, &mut scan)?;
    }
    Ok(judge.plan)
}

/// The logs the manifest names as holding unflushed writes, oldest first (none for a manifest
/// that predates their recording).
pub(crate) fn named_logs(state: &ManifestState) -> Vec<u64> {
    let logs = state.pm_logs.iter().flatten().copied();
    logs.filter(|&n| n >= state.min_unflushed_pmlog).collect()
}

/// `named` and, in number order, the logs present whose record was in flight at a crash
/// (numbered at or above the manifest's `next_file_number`, `consistency::in_flight`) and that
/// hold writes; one without writes stays unnamed (a creation the crash interrupted). Also the
/// scans made to tell, for the judge to reuse.
fn with_in_flight(
    named: Vec<u64>,
    w: &WalDir<'_>,
    scan: &mut impl FnMut(u64) -> Result<WalScan>,
) -> Result<(Vec<u64>, BTreeMap<u64, WalScan>)> {
    let state = &w.manifest.state;
    let mut all: BTreeSet<u64> = named.iter().copied().collect();
    let mut scanned = BTreeMap::new();
    let unnamed = |n: &u64| !named.contains(n) && super::consistency::in_flight(state, *n);
    for n in w.present.iter().copied().filter(unnamed) {
        let s = scan(n)?;
        if !unwritten(&s.0, s.1.is_some()) {
            all.insert(n);
        }
        scanned.insert(n, s);
    }
    Ok((all.into_iter().collect(), scanned))
}

/// The sequences of the range tombstones the manifest records.
fn tombstone_sequences(state: &ManifestState) -> BTreeSet<u64> {
    let tombstones = state.version.range_dels.tombstones().iter();
    tombstones.map(|t| t.seq).collect()
}

/// The newest log with writes judged so far.
#[derive(Clone, Copy)]
struct Seen {
    number: u64,
    max_sequence: u64,
    end: u64,
}

/// The state of one pass over the logs.
struct Judge<'a> {
    w: &'a WalDir<'a>,
    plan: WalPlan,
    /// The newest older log with writes and no hole (the continuity check's reference).
    prev: Option<Seen>,
    /// Where recovery to a point in time stopped (logs from then on are dropped).
    stopped: Option<String>,
    /// Sequences of the recorded range tombstones.
    tombstones: BTreeSet<u64>,
}

impl Judge<'_> {
    fn path(&self, n: u64) -> PathBuf {
        self.w.dir.join(wal_file_name(n))
    }

    /// Judges named log `n`.
    fn named_log(
        &mut self,
        n: u64,
        newest: bool,
        scan: &mut impl FnMut(u64) -> Result<WalScan>,
    ) -> Result<()> {
        if self.dropped_after_stop(n) {
            return Ok(());
        }
        if !self.w.present.contains(&n) {
            let detail = "the manifest names this write-ahead log but it is missing: its \
                          writes are lost";
            self.hole(Error::corruption(self.path(n), 0, detail), None);
            return Ok(());
        }
        let (r, damage) = scan(n)?;
        // By default a log after a hole is still judged (check lists every problem).
        if self.continues(n, &r) || !self.dropped_after_stop(n) {
            self.judge_log(n, newest, r, damage);
        }
        Ok(())
    }

    /// True (and log `n` dropped) if recovery to a point in time stopped before it.
    fn dropped_after_stop(&mut self, n: u64) -> bool {
        let Some(why) = &self.stopped else {
            return false;
        };
        self.plan.drop.push((n, why.clone()));
        true
    }

    /// Judges the records of log `n` (already checked against the older logs).
    fn judge_log(&mut self, n: u64, newest: bool, r: WalReplay, damage: Option<Error>) {
        let kept = KeptWal {
            number: n,
            end: r.end,
            len: r.len,
        };
        if let Some(e) = damage.or_else(|| self.torn_before_newest(n, newest, &r)) {
            return self.hole(e, Some(kept));
        }
        if let Some(note) = &r.torn_tail {
            let note = format!("write-ahead log torn tail dropped: {note}");
            self.plan.notes.push(note);
        }
        if r.entries > 0 {
            let (max_sequence, end) = (r.max_sequence, r.end);
            self.prev = Some(Seen {
                number: n,
                max_sequence,
                end,
            });
        }
        self.plan.keep.push(kept);
    }

    /// The damage a torn tail is in log `n` when it is not the newest (it was synced whole
    /// before the next log started, so no crash can have torn it). Except in a log without a
    /// sequence marker: opens before markers existed recovered a torn newest log without
    /// cutting it back, so there the tail is dropped as before (the first open since seals it).
    fn torn_before_newest(&self, n: u64, newest: bool, r: &WalReplay) -> Option<Error> {
        r.torn_tail
            .as_ref()
            .filter(|_| !newest && r.after.is_some())?;
        let detail = "the log ends in a torn record here, but it was synced whole when a newer \
                      log started: damage, not a crash";
        Some(Error::corruption(self.path(n), r.end, detail))
    }

    /// True if log `n`, whose replay is `r`, starts where the newest older log with writes
    /// ends (its sequence marker); else records the hole (in the older log) and returns false.
    /// A log without a marker (written before markers existed) is not checked.
    fn continues(&mut self, n: u64, r: &WalReplay) -> bool {
        let (Some(after), Some(p)) = (r.after, self.prev) else {
            return true;
        };
        let missing = (p.max_sequence + 1..=after).find(|s| !self.tombstones.contains(s));
        let Some(first_missing) = missing else {
            return true;
        };
        let detail = format!(
            "write-ahead log ends at sequence {}, but log {n} (started after this one was synced \
             whole) records that the older logs end at sequence {after}: the writes from \
             sequence {first_missing} on are missing (the log was cut short)",
            p.max_sequence
        );
        let e = Error::corruption(self.path(p.number), p.end, detail);
        self.hole(e, None);
        false
    }

    /// A hole at `e`. By default a problem (the next log is not checked against this one);
    /// recovering to a point in time, the log is kept up to the hole (if it is in one) and
    /// recovery stops.
    fn hole(&mut self, e: Error, damaged: Option<KeptWal>) {
        self.prev = None;
        if !self.w.point_in_time {
            return self.plan.problems.push(e);
        }
        self.plan.notes.push(format!(
            "recovery to a point in time stopped at a hole in the write-ahead logs; every \
             later write is dropped: {e}"
        ));
        self.plan.keep.extend(damaged);
        self.stopped = Some(format!(
            "after the hole at which recovery to a point in time stopped: {e}"
        ));
        self.plan.stop = Some(Stop {
            why: e.to_string(),
            damaged,
        });
    }

    /// Judges log `n`, present but not named by the manifest.
    fn unnamed_log(
        &mut self,
        n: u64,
        named: &[u64],
        scan: &mut impl FnMut(u64) -> Result<WalScan>,
    ) -> Result<()> {
        let state = &self.w.manifest.state;
        let why = match state.pm_logs {
            None => Some("the manifest predates recorded logs"),
            Some(_) if n < state.min_unflushed_pmlog => Some("already flushed"),
            Some(_) if n < manifest_number(self.w.manifest) => Some(
                "older than the manifest, whose first record (written by the open that created \
                 it) leaves it out: dropped by that open",
            ),
            Some(_) => None,
        };
        if let Some(why) = why {
            self.plan.drop.push((n, why.into()));
            return Ok(());
        }
        let (r, damage) = scan(n)?;
        if unwritten(&r, damage.is_some()) {
            let why = "holds no writes: its creation was interrupted before the manifest named it";
            self.plan.drop.push((n, why.into()));
            return Ok(());
        }
        let e = match damage {
            Some(e) if r.entries == 0 => e,
            _ => self.unnamed_with_writes(n, &r, named),
        };
        self.plan.problems.push(e);
        Ok(())
    }

    /// The refusal of an unnamed log `n` that holds writes (or is damaged past its header).
    fn unnamed_with_writes(&self, n: u64, r: &WalReplay, named: &[u64]) -> Error {
        let m = self.w.manifest;
        let newest = named.last().map_or("none".to_string(), |l| l.to_string());
        let lost = match &m.torn_tail {
            Some(note) => format!("; {note}: that record most likely named this log"),
            None => String::new(),
        };
        let detail = format!(
            "holds {} writes (up to sequence {}), but {} does not name it (the newest log it \
             names: {newest}) though it is below the next file number the manifest records; such \
             a log's record comes first, so the manifest lost \
             records (cut short, or an older copy){lost}; restore the manifest rather than \
             lose these writes",
            r.entries,
            r.max_sequence,
            m.path.display()
        );
        Error::corruption(self.path(n), WAL_HEADER_LEN as u64, detail)
    }
}

/// The number of the manifest file `m` was read from (0 if its name is not a manifest's).
fn manifest_number(m: &RecoveredManifest) -> u64 {
    let name = m.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    crate::version::parse_manifest_file_name(name).unwrap_or(0)
}

/// True for a log that never held a write: none replayed, and no damage beyond what a crash
/// during its creation leaves (the header and marker, 40 bytes, are written and synced at
/// once: at most 40 bytes of them, or zeros).
fn unwritten(r: &WalReplay, damaged: bool) -> bool {
    let created_only = r.len <= (WAL_HEADER_LEN + WAL_MARKER_LEN) as u64;
    r.entries == 0 && (!damaged || created_only)
}
