//! Options for opening a database and for individual reads and writes.
//!
//! Defaults follow the FlatLSM paper scaled to an embedded default (64 MiB PMTables instead of
//! 2 GiB); see docs/design-decisions.md for the reasoning behind each.

use crate::error::{Error, Result};
use crate::fs::FsRef;
use crate::pm::PmDeviceRef;
use crate::types::SequenceNumber;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// Largest accepted key, in bytes.
pub const MAX_KEY_SIZE: usize = 64 << 10;
/// Largest accepted value, in bytes (values must also fit in half a PMTable).
pub const MAX_VALUE_SIZE: usize = 256 << 20;

/// How the PM directory is made durable; see [`crate::pm::PmMode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PmModeOption {
    /// DAX when `MAP_SYNC` works, msync on an ordinary file system; refuses a DRAM-backed tmpfs.
    #[default]
    Auto,
    /// Always msync (ordinary file semantics), even on a DAX mount.
    Msync,
    /// PM emulated in DRAM (e.g. /dev/shm): flush + fence, optional latency. A reboot loses it.
    Emulated,
}

/// Options for [`crate::db::Db::open`].
#[derive(Clone)]
pub struct Options {
    /// Create the database if it does not exist (default true).
    pub create_if_missing: bool,
    /// Fail if the database already exists (default false).
    pub error_if_exists: bool,
    /// Directory for the PM Logs. Default: `<db>/pm` with msync persistence.
    pub pm_path: Option<PathBuf>,
    /// Open an existing database even though its PM directory lost its contents (e.g. emulated
    /// PM after a reboot), accepting the loss of writes that were only in PM (default false: such
    /// an open is refused, see `db/identity.rs`).
    pub allow_missing_pm: bool,
    /// How PM is made durable (default [`PmModeOption::Auto`]).
    pub pm_mode: PmModeOption,
    /// Injected latency per persisted cache line in emulated mode (the SLM-DB paper used 500 ns).
    pub pm_write_latency_ns: u64,
    /// Longest time a non-sync write may stay undurable (Buffer Log forced flush / msync group commit).
    pub pm_persist_interval_ms: u64,
    /// Capacity of one PMTable's PM Log in bytes.
    pub pmtable_size: usize,
    /// A flush starts when this many immutable PMTables exist.
    pub flush_immutable_num: usize,
    /// Writers block when this many PMTables (mutable + immutable) exist and the mutable is full.
    pub max_write_buffer_number: usize,
    /// Rewrite a PMTable's live entries when PM Log size / live size exceeds this (paper: 8).
    pub pmtable_gc_ratio: f64,
    /// Target size of the Ordered-L1 in bytes; above it, L1 files are compacted into L2.
    pub l1_capacity: u64,
    /// Target size of one SSTable file in bytes.
    pub target_file_size: u64,
    /// Threads of a parallel flush/compaction (default: the number of cores).
    pub flush_threads: usize,
    /// Values of at least this many bytes go to the value log; smaller ones stay inline.
    pub kv_separation_threshold: usize,
    /// SSTable data block size.
    pub block_size: usize,
    /// Bloom filter bits per key in SSTables.
    pub bloom_bits_per_key: usize,
    /// DRAM block cache capacity in bytes (0 disables it).
    pub block_cache_size: usize,
    /// Rewrite a value-log file's live values once this fraction of it is garbage.
    pub vlog_gc_garbage_ratio: f64,
    /// Run background work (flush, compaction, GC) automatically (default true).
    pub background_work: bool,
    /// File system for SSD files (default: the OS). Tests inject faults here.
    pub file_system: Option<FsRef>,
    /// PM device (default: derived from `pm_path` and `pm_mode`). Tests inject a simulated device.
    pub pm_device: Option<PmDeviceRef>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            create_if_missing: true,
            error_if_exists: false,
            pm_path: None,
            allow_missing_pm: false,
            pm_mode: PmModeOption::Auto,
            pm_write_latency_ns: 0,
            pm_persist_interval_ms: 1000,
            pmtable_size: 64 << 20,
            flush_immutable_num: 4,
            max_write_buffer_number: 6,
            pmtable_gc_ratio: 8.0,
            l1_capacity: 2 << 30,
            target_file_size: 64 << 20,
            flush_threads: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2),
            kv_separation_threshold: 512,
            block_size: 4096,
            bloom_bits_per_key: 10,
            block_cache_size: 64 << 20,
            vlog_gc_garbage_ratio: 0.5,
            background_work: true,
            file_system: None,
            pm_device: None,
        }
    }
}

impl Options {
    /// Checks that the options make sense together; the message names the offending option.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidArgument(m));
        if self.pmtable_size < 64 << 10 {
            return bad(format!(
                "pmtable_size {} is below 64 KiB",
                self.pmtable_size
            ));
        }
        if self.flush_immutable_num == 0 {
            return bad("flush_immutable_num must be at least 1".into());
        }
        if self.max_write_buffer_number < self.flush_immutable_num + 1 {
            return bad(format!(
                "max_write_buffer_number ({}) must exceed flush_immutable_num ({})",
                self.max_write_buffer_number, self.flush_immutable_num
            ));
        }
        if self.flush_threads == 0 || self.flush_threads > 256 {
            return bad(format!(
                "flush_threads {} is not in 1..=256",
                self.flush_threads
            ));
        }
        if self.pmtable_gc_ratio <= 1.0 {
            return bad("pmtable_gc_ratio must be greater than 1".into());
        }
        if !(0.0..=1.0).contains(&self.vlog_gc_garbage_ratio) {
            return bad("vlog_gc_garbage_ratio must be within 0..=1".into());
        }
        if self.block_size < 256 || self.target_file_size < self.block_size as u64 {
            return bad("block_size must be >= 256 and <= target_file_size".into());
        }
        if self.l1_capacity == 0 || self.pm_persist_interval_ms == 0 {
            return bad("l1_capacity and pm_persist_interval_ms must be positive".into());
        }
        Ok(())
    }

    /// The largest value accepted with these options.
    pub fn max_value_size(&self) -> usize {
        MAX_VALUE_SIZE.min(self.pmtable_size / 2)
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("pm_path", &self.pm_path)
            .field("allow_missing_pm", &self.allow_missing_pm)
            .field("pm_mode", &self.pm_mode)
            .field("pm_write_latency_ns", &self.pm_write_latency_ns)
            .field("pmtable_size", &self.pmtable_size)
            .field("flush_immutable_num", &self.flush_immutable_num)
            .field("max_write_buffer_number", &self.max_write_buffer_number)
            .field("l1_capacity", &self.l1_capacity)
            .field("flush_threads", &self.flush_threads)
            .field("kv_separation_threshold", &self.kv_separation_threshold)
            .field("custom_fs", &self.file_system.is_some())
            .field("custom_pm_device", &self.pm_device.is_some())
            .finish_non_exhaustive()
    }
}

/// Options for one write.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOptions {
    /// Durable on return on every backend (otherwise durable within `pm_persist_interval_ms`,
    /// or at once for large entries on cache-line PM modes).
    pub sync: bool,
}

/// A consistent point-in-time view, from [`crate::db::Db::snapshot`].
#[derive(Debug)]
pub struct Snapshot {
    pub(crate) seq: SequenceNumber,
    pub(crate) registry: Arc<crate::db::snapshots::SnapshotRegistry>,
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

/// Options for one read or iterator.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadOptions<'a> {
    /// Read as of this snapshot (default: the latest state).
    pub snapshot: Option<&'a Snapshot>,
    /// Verify checksums of everything read (always on for PM entries and value-log records).
    pub verify_checksums: bool,
}
