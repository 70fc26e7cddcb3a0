//! [`JobContext`]: everything a flush, compaction or value-log GC job may use, and nothing
//! more. A job never sees the database: it gets the files (file system, directory, table
//! cache), its options, the oldest sequence a reader may still need, a locator for copied value
//! pointers, a narrow [`JobHost`] to number its outputs and to learn when to stop, and the
//! database's info log (`LOG`) for what it wants an operator to read. The
//! database builds one per job (`jobs/host.rs`) and commits what the job returns through the one
//! commit protocol (`jobs/background.rs`, `install`).
//!
//! So a job can be run, and tested, against any host: the designs share the jobs and differ in
//! what they pick ([`super::policy`]) and when they run them.

use crate::fs::FileSystem;
use crate::observe::info_log::InfoLog;
use crate::options::Compression;
use crate::range_del::RangeTombstones;
use crate::sst::{SstDir, TableCache};
use crate::types::SequenceNumber;
use crate::values::ValueLocator;
use crate::version::MAX_LEVELS;
use std::path::Path;
use std::sync::Arc;

/// The options a job reads (copied from the database's options when the context is built).
#[derive(Clone, Copy, Debug)]
pub(crate) struct JobOptions {
    /// An output SSTable is closed once it reaches this size (never between two versions of a
    /// user key).
    pub target_file_size: u64,
    /// SSTable data block size.
    pub block_size: usize,
    /// Bloom filter bits per key of output SSTables.
    pub bloom_bits_per_key: usize,
    /// Compression of output SSTables' data blocks, by the level they are written to
    /// (`Options::compression_for_level`).
    pub compression: [Compression; MAX_LEVELS],
    /// Values at least this long go to a value log at flush (`usize::MAX`: never).
    pub kv_separation_threshold: usize,
    /// Threads of a parallel flush.
    pub flush_threads: usize,
    /// Value logs written with O_DIRECT where the file system allows.
    pub vlog_direct_writes: bool,
    /// Written value-log ranges read back into the page cache in the background.
    pub vlog_cache_written: bool,
    /// Where output SSTables are kept (a flush's: the design's choice; a compaction's: the
    /// data directory).
    pub sst_dir: SstDir,
    /// Keep every tombstone: a flush behind an older one still in flight, whose output (not
    /// yet in the version) may hold an older version of any key.
    pub keep_tombstones: bool,
}

/// What a running job may ask of the database that runs it.
pub(crate) trait JobHost: Sync {
    /// A new file number for an output, recorded as pending so no purge deletes the file
    /// before the job's edit is installed or abandoned.
    fn new_output_number(&self) -> u64;
    /// Outputs that will never be installed: the purge may delete them.
    fn abandon_outputs(&self, numbers: &[u64]);
    /// True once the database is closing: a long job may give up (its outputs abandoned).
    fn closing(&self) -> bool;
    /// Blocks while writers are stopped (a GC yields the disk to the flush they wait for);
    /// while they are slowed, sleeps `busy` (the time the job's last stretch took, capped), so
    /// the job takes at most about half of a core from the flush they wait for. Returns early
    /// once the database is closing.
    fn yield_to_writers(&self, busy: std::time::Duration);
    /// A flush thread read `bytes` more of its write buffers (every `flush::REPORT_BYTES`): the
    /// slowdown's pace counts them as drained (`db/flush_progress.rs`).
    fn flush_read(&self, _bytes: u64) {}
    /// Counts a finished value log by how it was written (direct or buffered).
    fn count_vlog_file(&self, direct: bool);
    /// A named point where a test may pause the job; nothing outside test builds.
    fn sync_point(&self, _point: &'static str) {}
}

/// The context of one job.
pub(crate) struct JobContext<'a> {
    /// File system of the SSD files.
    pub fs: &'a dyn FileSystem,
    /// The database directory (outputs are created here).
    pub dir: &'a Path,
    /// Opened SSTables (inputs are read through it).
    pub table_cache: &'a Arc<TableCache>,
    /// The job's options.
    pub options: JobOptions,
    /// No reader needs a version older than the newest one at or below this sequence.
    pub oldest_snapshot: SequenceNumber,
    /// The tree's range tombstones when the job started: a version one of them at or below
    /// `oldest_snapshot` covers is dropped, and outputs are marked as having applied them.
    pub range_dels: Arc<RangeTombstones>,
    /// Translates copied pointers into redirected value logs, as the version current when
    /// the job started sees them.
    pub locator: ValueLocator,
    /// Numbers outputs, says when to stop.
    pub host: &'a dyn JobHost,
    /// The database's info log (a line never fails the job).
    pub info_log: &'a InfoLog,
}
