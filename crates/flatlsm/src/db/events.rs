//! The info-log lines of finished jobs (`info_log.rs`): what a flush, compaction or PMTable GC
//! read and wrote, in bytes and file numbers, and how long it took. Pure formatting: the callers write
//! the line after the job's edit is installed, so a line means a committed job.

use crate::buffer::{BufferRef, WriteBuffer};
use crate::compaction::job::Compaction;
use crate::options::Profile;
use crate::version::VersionEdit;
use std::time::Duration;

/// Bytes a flush wrote, by device.
pub(crate) struct FlushBytes {
    pub sst: u64,
    pub vlog: u64,
    pub pm: u64,
}

/// `[profile] flush: N write buffers [numbers] (bytes) -> outputs (bytes by kind) in T us`.
pub(crate) fn flush_line(
    profile: Profile,
    tables: &[BufferRef],
    edit: &VersionEdit,
    bytes: &FlushBytes,
    took: Duration,
) -> String {
    let numbers: Vec<u64> = tables.iter().map(|t| t.number()).collect();
    let pm_log_bytes: u64 = tables.iter().map(|t| t.log_bytes()).sum();
    format!(
        "[{profile}] flush: {} write buffers {numbers:?} ({pm_log_bytes} bytes) -> {}: \
         {} SST bytes, {} value-log bytes, {} PM bytes written in {} us",
        tables.len(),
        output_files(edit),
        bytes.sst,
        bytes.vlog,
        bytes.pm,
        took.as_micros()
    )
}

/// `[profile] compaction: level inputs + overlapping (bytes in) -> outputs (bytes out) in T us`.
pub(crate) fn compaction_line(
    profile: Profile,
    c: &Compaction,
    edit: &VersionEdit,
    written: u64,
    took: Duration,
) -> String {
    let numbers = |files: &[std::sync::Arc<crate::version::FileMeta>]| -> Vec<u64> {
        files.iter().map(|f| f.number).collect()
    };
    let read = c.input_bytes();
    format!(
        "[{profile}] compaction: {} {:?} + {} {:?} ({read} bytes) -> {} ({written} bytes) \
         in {} us",
        profile.level_name(c.level),
        numbers(&c.inputs),
        profile.level_name(c.output_level),
        numbers(&c.overlapping),
        output_files(edit),
        took.as_micros()
    )
}

/// `PMTable GC: log N (bytes) -> log M (bytes) in T us`: the mutable PMTable's live entries
/// rewritten into a fresh log.
pub(crate) fn pmtable_gc_line(
    old: &dyn WriteBuffer,
    fresh: &dyn WriteBuffer,
    took: Duration,
) -> String {
    format!(
        "PMTable GC: log {} ({} bytes) -> log {} ({} bytes of live entries) in {} us",
        old.number(),
        old.log_bytes(),
        fresh.number(),
        fresh.log_bytes(),
        took.as_micros()
    )
}

/// The files an edit adds, by kind: `SSTs [12, 13], value logs [14]`; `no files` if none.
fn output_files(edit: &VersionEdit) -> String {
    let ssts: Vec<u64> = edit.new_files.iter().map(|(_, f)| f.number).collect();
    let vlogs: Vec<u64> = edit.new_vlogs.iter().map(|v| v.number).collect();
    let rows = crate::designs::store_outputs(edit);
    let kinds = [("SSTs", ssts), ("value logs", vlogs), ("rows", rows)];
    let parts: Vec<String> = kinds
        .iter()
        .filter(|(_, n)| !n.is_empty())
        .map(|(kind, n)| format!("{kind} {n:?}"))
        .collect();
    match parts.is_empty() {
        true => "no files".to_string(),
        false => parts.join(", "),
    }
}
