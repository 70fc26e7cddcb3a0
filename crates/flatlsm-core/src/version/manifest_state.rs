//! [`ManifestState`]: what the manifest records, built by replaying its edits in order.
//!
//! Besides the tree ([`Version`]) and three counters, the state holds the set of PM Logs that
//! may hold unflushed data (`pm_logs`) and the database identity. Rules of the PM Log set
//! (docs/manifest-format.md):
//! - a snapshot with `tracks_pm_logs` starts the set (manifests written before PM Logs were
//!   recorded have no such snapshot: `pm_logs` stays `None` and recovery skips the PM checks);
//! - a `new_pm_logs` entry adds its log and removes the log it `replaces` (PMTable GC);
//! - `min_unflushed_pmlog` removes every log below it (those are flushed).
//!
//! Invariant: every log in `pm_logs` is `>= min_unflushed_pmlog`.
//!
//! Thread-safety: plain data.

use super::edit::{PmLogMeta, VersionEdit};
use super::version::Version;
use crate::error::{Error, Result};
use std::collections::BTreeSet;

/// Everything the manifest knows after recovery.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ManifestState {
    /// The recovered tree.
    pub version: Version,
    /// The next file number to allocate.
    pub next_file_number: u64,
    /// The largest sequence number recorded.
    pub last_sequence: u64,
    /// PM logs below this number have been flushed and may be deleted.
    pub min_unflushed_pmlog: u64,
    /// PM Logs that may hold unflushed data; `None` when the manifest predates their recording.
    pub pm_logs: Option<BTreeSet<u64>>,
    /// The database identity recorded by the last snapshot, if any.
    pub identity: Option<String>,
    /// The design the database was created with; `None` in manifests written before designs
    /// were recorded (those are `flatlsm` databases).
    pub profile: Option<String>,
}

impl ManifestState {
    /// Applies one edit: overwrites the scalar fields it sets and applies the rest to the version
    /// and the PM Log set. On error the state is unchanged.
    pub fn apply(&mut self, edit: &VersionEdit) -> Result<()> {
        let pm_logs = self.pm_logs_after(edit)?;
        self.version = self.version.apply(edit)?;
        self.pm_logs = pm_logs;
        if let Some(n) = edit.next_file_number {
            self.next_file_number = n;
        }
        if let Some(s) = edit.last_sequence {
            self.last_sequence = s;
        }
        if let Some(p) = edit.min_unflushed_pmlog {
            self.min_unflushed_pmlog = p;
        }
        if let Some(id) = &edit.identity {
            self.identity = Some(id.clone());
        }
        if let Some(profile) = &edit.profile {
            self.profile = Some(profile.clone());
        }
        Ok(())
    }

    /// The PM Log set after `edit` (see the module rules).
    fn pm_logs_after(&self, edit: &VersionEdit) -> Result<Option<BTreeSet<u64>>> {
        let mut logs = self.pm_logs.clone();
        if edit.tracks_pm_logs && logs.is_none() {
            logs = Some(BTreeSet::new());
        }
        if let Some(first) = edit.new_pm_logs.first() {
            let Some(set) = logs.as_mut() else {
                return Err(Error::InvalidState(format!(
                    "PM log {} is recorded before the manifest tracks PM logs",
                    first.number
                )));
            };
            for log in &edit.new_pm_logs {
                if log.replaces != 0 {
                    set.remove(&log.replaces);
                }
                set.insert(log.number);
            }
        }
        let min = edit.min_unflushed_pmlog.unwrap_or(self.min_unflushed_pmlog);
        if let Some(set) = logs.as_mut() {
            set.retain(|&n| n >= min);
        }
        Ok(logs)
    }

    /// An edit that recreates this state from nothing, scalar fields, PM Log set and identity
    /// included.
    pub fn snapshot_edit(&self) -> VersionEdit {
        let pm_logs = self.pm_logs.iter().flatten();
        VersionEdit {
            next_file_number: Some(self.next_file_number),
            last_sequence: Some(self.last_sequence),
            min_unflushed_pmlog: Some(self.min_unflushed_pmlog),
            tracks_pm_logs: self.pm_logs.is_some(),
            new_pm_logs: pm_logs
                .map(|&number| PmLogMeta {
                    number,
                    replaces: 0,
                })
                .collect(),
            identity: self.identity.clone(),
            profile: self.profile.clone(),
            ..self.version.snapshot_edit()
        }
    }
}
