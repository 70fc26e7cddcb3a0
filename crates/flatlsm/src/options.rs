//! Options for opening a database and for individual reads and writes.
//!
//! Defaults follow the FlatLSM paper scaled to an embedded default (64 MiB PMTables instead of
//! 2 GiB); see docs/design-decisions.md for the reasoning behind each.

mod builder;
pub(crate) mod file;
pub(crate) mod text;

pub(crate) use file::write_options_file;
pub use file::{
    load_options, load_options_from, options_file_name, parse_options_file_name, read_options_file,
};
mod compression;
mod design_options;
mod profile;
mod validate;

pub use design_options::{LeveledOptions, MatrixKvOptions, SlmDbOptions};
pub use profile::Profile;

pub use compression::UNCOMPRESSED_LEVELS;

use crate::fs::FsRef;
use crate::pm::PmDeviceRef;
pub use crate::snapshot::Snapshot;
pub use flatlsm_core::compression::Compression;
use std::fmt;
use std::path::PathBuf;

/// Largest accepted key, in bytes.
pub const MAX_KEY_SIZE: usize = 64 << 10;
/// Largest accepted value, in bytes (values must also fit in half a PMTable).
pub const MAX_VALUE_SIZE: usize = 256 << 20;
/// Smallest accepted `pmtable_size`.
pub const MIN_PMTABLE_SIZE: usize = 64 << 10;
/// Largest accepted `pmtable_size` (one PM Log is mapped whole).
pub const MAX_PMTABLE_SIZE: usize = 1 << 40;
/// Largest accepted `max_write_buffer_number`: every point read may search each PMTable.
pub const MAX_WRITE_BUFFER_NUMBER: usize = 256;
/// Largest accepted `flush_threads`.
pub const MAX_FLUSH_THREADS: usize = 256;
/// Largest accepted `pm_write_latency_ns`: 100 µs per cache line, 200 times the latency the
/// SLM-DB paper emulated. Persisting a 64 MiB PMTable then already takes 100 s; the latency is
/// spun, so an unbounded value (`u64::MAX`) made open spin for centuries.
pub const MAX_PM_WRITE_LATENCY_NS: u64 = 100_000;
/// Largest accepted `pm_persist_interval_ms` (one hour): how long a non-sync write may stay
/// undurable.
pub const MAX_PM_PERSIST_INTERVAL_MS: u64 = 3_600_000;
/// Smallest accepted `block_size`.
pub const MIN_BLOCK_SIZE: usize = 256;
/// Largest accepted `block_size` (SSTable blocks are read whole).
pub use crate::sst::MAX_BLOCK_SIZE;
/// Largest accepted `bloom_bits_per_key` (filters are `keys * bits_per_key` bits).
pub const MAX_BLOOM_BITS_PER_KEY: usize = 100;
/// Smallest accepted `delayed_write_rate`, and the floor of the derived rate (RocksDB's
/// `kMinWriteRate`): slower pacing would stall writers as hard as a stop.
pub const MIN_DELAYED_WRITE_RATE: u64 = 16 << 10;
/// Largest accepted `l1_merge_trigger`.
pub const MAX_L1_MERGE_TRIGGER: usize = 64;
/// Largest accepted `delayed_write_rate` (1 TiB/s: no pacing in practice).
pub const MAX_DELAYED_WRITE_RATE: u64 = 1 << 40;
/// The slowdown pace before any flush was measured: RocksDB's default `delayed_write_rate`.
pub const DEFAULT_DELAYED_WRITE_RATE: u64 = 16 << 20;

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

/// Options for [`crate::db::Db::open`]. Build them from the defaults with the setters
/// (`options/builder.rs`), or set fields on a default value; new fields may be added
/// (`#[non_exhaustive]`).
///
/// ```
/// use flatlsm::{Options, Profile};
/// let opts = Options::default()
///     .profile(Profile::SlmDb)
///     .pm_path("/mnt/pmem/flatlsm")
///     .pmtable_size(64 << 20);
/// assert_eq!(opts.pmtable_size, 64 << 20);
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct Options {
    /// The design: chosen when the database is created and recorded in it; opening it under
    /// another profile is refused (default [`Profile::FlatLsm`]).
    pub profile: Profile,
    /// Designs with a write-ahead log (`leveled`): the directory of the logs (default: the
    /// database directory), RocksDB's `wal_dir`. On a DRAM-backed file system (tmpfs) a reboot
    /// loses the writes not yet flushed; open logs a warning saying so.
    pub wal_dir: Option<PathBuf>,
    /// Options of the leveled SSD tree of the `leveled`, `novelsm` and `matrixkv` profiles
    /// (ignored by `flatlsm`; `matrixkv` sets L1's size to its container's).
    pub leveled: LeveledOptions,
    /// Options of the `matrixkv` profile's matrix container and column compactions.
    pub matrixkv: MatrixKvOptions,
    /// Options of the `slmdb` profile's B+-tree.
    pub slmdb: SlmDbOptions,
    /// Create the database if it does not exist (default true).
    pub create_if_missing: bool,
    /// Fail if the database already exists (default false).
    pub error_if_exists: bool,
    /// Directory for the PM Logs. Default: `<db>/pm` with msync persistence.
    pub pm_path: Option<PathBuf>,
    /// Open an existing database even though its PM directory lost its contents (e.g. emulated
    /// PM after a reboot), accepting the loss of writes that were only in PM (default false: such
    /// an open is refused, see `layout/identity.rs`).
    pub allow_missing_pm: bool,
    /// Designs with write-ahead logs (`leveled`, `matrixkv`): recover to the last point before
    /// a hole in the logs — damage in a log other than the newest one's torn tail, a missing
    /// log, writes missing between two logs — dropping every write after it, with a warning
    /// (RocksDB's `kPointInTimeRecovery`). Default false: such an open is refused with the
    /// damaged file and offset (docs/wal-format.md). Not stored: each open decides.
    pub wal_point_in_time_recovery: bool,
    /// How PM is made durable (default [`PmModeOption::Auto`]).
    pub pm_mode: PmModeOption,
    /// Injected latency per persisted cache line in emulated mode (the SLM-DB paper used 500 ns).
    pub pm_write_latency_ns: u64,
    /// Emulated PM only: injected read latency per cache line a read from PM touches, in
    /// nanoseconds (0, default: DRAM speed). With it, the placement study's PM block cache and
    /// PM memtable show PM's slower reads. Accepted: `0..=100_000`.
    pub pm_read_latency_ns: u64,
    /// `leveled` only: where memtables live — DRAM (default) or PM, used volatile (regions in
    /// the PM directory, removed at open and close; the write-ahead log stays the durable copy),
    /// as the PM placement study's memtable-in-PM configuration.
    pub memtable_placement: Placement,
    /// `leveled` only: where the block cache's blocks live — DRAM (default) or PM, used volatile
    /// (a region in the PM directory, removed at open and close), as the placement study's
    /// block-cache-in-PM configuration.
    pub block_cache_placement: Placement,
    /// `flatlsm` profile: longest time a non-sync write may stay undurable (the periodic commit
    /// of the PM Log: Buffer Log flush / msync). PM skiplists persist every write at once; the
    /// write-ahead logs of `leveled` and `matrixkv` are not synced by it (docs/durability.md).
    pub pm_persist_interval_ms: u64,
    /// Capacity of one PMTable's PM Log in bytes.
    pub pmtable_size: usize,
    /// A flush starts when this many immutable PMTables exist (default 2). The `flatlsm`
    /// profile's flush takes the oldest this many; the other designs' flush merges every
    /// immutable buffer there is then (docs/design-decisions.md).
    pub flush_immutable_num: usize,
    /// Writers block when this many PMTables (mutable + immutable) exist and the mutable is full.
    pub max_write_buffer_number: usize,
    /// Writes are slowed down (paced at `delayed_write_rate`) while at least this many
    /// immutable PMTables exist, so the flush can catch up before every PMTable is in use and
    /// writers stop (RocksDB's slowdown before its stop). `None` (default):
    /// `flush_immutable_num + 1` (at most `max_write_buffer_number - 1`): as soon as more
    /// tables wait than one flush takes.
    /// Accepted: `flush_immutable_num..=max_write_buffer_number`; `max_write_buffer_number`
    /// turns the slowdown off (writers stop before that many immutables exist).
    pub slowdown_immutable_num: Option<usize>,
    /// Pace of writes in the slowdown phase, in PM Log bytes per second. `None` (default):
    /// derived from the PM Log bytes per second recent flushes drained, scaled down as the
    /// backlog nears the stop (1× where the slowdown starts, falling linearly towards 0 at the
    /// stop), so the backlog settles where writers go as fast as flushes really drain; at least
    /// [`MIN_DELAYED_WRITE_RATE`]. Until a flush was measured, the rate the writers filled the
    /// last PMTable stands in for the drain rate (at least [`DEFAULT_DELAYED_WRITE_RATE`]). A
    /// rate given here is used as is, at every backlog. Accepted:
    /// `MIN_DELAYED_WRITE_RATE..=MAX_DELAYED_WRITE_RATE`.
    pub delayed_write_rate: Option<u64>,
    /// How many flush runs L1 collects before they are merged into its ordered run (default 4).
    /// A flush writes its PMTables as a new sorted run without rewriting L1; a background merge
    /// folds the runs into the ordered run once this many exist, so each L1 entry is rewritten
    /// once per this many flushes instead of at every flush. 1 merges after every flush (the
    /// paper's flush into the Ordered-L1, done in the background). A flush waits while twice
    /// this many runs exist. Accepted: `1..=64`.
    pub l1_merge_trigger: usize,
    /// Rewrite a PMTable's live entries when PM Log size / live size exceeds this (paper: 8).
    pub pmtable_gc_ratio: f64,
    /// Most data bytes the Ordered-L1 holds (its SSTs plus the value-log bytes they
    /// reference); L1's target is `l1_data_ratio` of all the data, capped by this. Above the
    /// target, L1 files are compacted into L2. Accepted: at least 1.
    pub l1_capacity: u64,
    /// The Ordered-L1's target as a share of all the data (L1 runs, L1 and L2; SSTs plus the
    /// value bytes they reference), the paper's "Ordered-L1 / sum of data" (Fig. 13), with a
    /// floor of four `target_file_size` files and a cap of `l1_capacity`. L2 keeps older
    /// versions of the keys updated since they reached L2 until a compaction meets them, and
    /// their values stay in the value logs until then (invisible to the value-log GC): a small
    /// share bounds that garbage (docs/design-decisions.md, "The Ordered-L1 as a share of the
    /// data"). Default 1/8. Accepted: `(0, 1]`.
    pub l1_data_ratio: f64,
    /// Target size of one SSTable file in bytes.
    pub target_file_size: u64,
    /// Threads of a parallel flush/compaction (default: the number of cores).
    pub flush_threads: usize,
    /// Values of at least this many bytes go to the value log; smaller ones stay inline.
    pub kv_separation_threshold: usize,
    /// Write value logs with direct I/O (O_DIRECT), falling back to buffered writes where the
    /// file system refuses it (default false). Off, value logs are written through the page
    /// cache with write-behind (each 2 MiB buffer's write-back started at once, the one before
    /// waited for), so fresh values are read from memory, as RocksDB reads its fresh blocks,
    /// and the page cache (bounded and reclaimed by the kernel) is the value cache. On, the
    /// page-cache copy is saved but every first read of a fresh value goes to the device
    /// (docs/design-decisions.md, "Fresh values in the page cache").
    pub vlog_direct_writes: bool,
    /// With `vlog_direct_writes`, ask the kernel to read each written value-log buffer back
    /// into the page cache in the background (`posix_fadvise(WILLNEED)`; default false):
    /// fresh values are then read from memory, as after RocksDB's buffered writes, but the
    /// flush pays a device read of everything it writes (on the paper-scaled 4 KB fill the
    /// flush drained 703 MB/s with it, 1,221 MB/s without; docs/design-decisions.md). Turn it
    /// on for read-soon-after-write workloads that fit in memory.
    pub vlog_cache_written: bool,
    /// Point reads copy a value that lies within one page from a read-only mapping of its
    /// value log (`mmap`) instead of reading it with `pread` (default true): no system call
    /// when the page is cached (RocksDB's `allow_mmap_reads`, off there by default; Lucene's
    /// `MMapDirectory`, on). A value across pages, and scans, still use `pread`. The trade-off
    /// of every mapped read: another process truncating a live value log, or a device error
    /// under the mapping, stops the process with `SIGBUS` instead of returning an error;
    /// damaged bytes are still refused by the record checksum (docs/design-decisions.md,
    /// "Values read through a mapping"). Only value logs are mapped; SSTs are read as before.
    pub vlog_mmap_reads: bool,
    /// Values a get reads from a value log are kept in the block cache (default false), whose
    /// capacity (`block_cache_size`) then bounds blocks and values together, as RocksDB's blob
    /// cache can share its block cache: a value read again (a hot key) is served from memory,
    /// without a read of its log. Scans do not fill it. `Stats::block_cache` counts value hits,
    /// misses and inserts apart from the blocks'. Off by default: with the default 64 MiB
    /// cache, YCSB in memory ran 8–10% slower with it (values pushed out index and data
    /// blocks, and each miss paid a copy; docs/design-decisions.md, "A value cache in the
    /// block cache"); turn it on with a block cache sized for hot values when the page cache
    /// cannot hold the value logs.
    pub value_cache: bool,
    /// SSTable data block size.
    pub block_size: usize,
    /// Bloom filter bits per key in SSTables.
    pub bloom_bits_per_key: usize,
    /// How the data blocks of SSTs written to the levels from [`UNCOMPRESSED_LEVELS`] on (L2
    /// and below) are compressed (default [`Compression::Lz4`]); the levels above are written
    /// uncompressed. [`Options::compression_per_level`], when set, decides instead. A block is
    /// stored raw unless compressing saves 1/8 of it (docs/design-decisions.md).
    pub compression: Compression,
    /// The compression of each level of the version, RocksDB's `compression_per_level`: entry
    /// `i` for level `i`, the last entry for every deeper level (so `vec![c]` is `c`
    /// everywhere). Empty (default): [`Options::compression`]'s rule. Level 0 holds what
    /// flushes write (`flatlsm`'s L1 runs; `slmdb`'s only level); see
    /// [`Options::compression_for_level`]. At most one entry per level (7).
    pub compression_per_level: Vec<Compression>,
    /// DRAM block cache capacity in bytes (0 disables it).
    pub block_cache_size: usize,
    /// Most SSTs kept open (RocksDB's `max_open_files`); beyond it a table not used recently
    /// is closed and reopened when next read. `None` (default): no bound, as RocksDB's
    /// -1. Accepted: at least 1.
    pub max_open_files: Option<usize>,
    /// Rewrite a value-log file's live values once this fraction of it is garbage.
    pub vlog_gc_garbage_ratio: f64,
    /// While more than this fraction of all value-log bytes is garbage, the log with the most
    /// garbage is rewritten even below `vlog_gc_garbage_ratio` (if its own share exceeds this
    /// one): it bounds the space, and the page cache, that garbage takes when updates spread
    /// over many logs and no single log reaches `vlog_gc_garbage_ratio`
    /// (docs/design-decisions.md, "Value-log garbage bounded as a whole"). Default 0.25;
    /// 1 turns it off. Accepted: `0.0..=1.0`.
    pub vlog_gc_total_garbage_ratio: f64,
    /// Once writes are quiet (no write buffer switched for 2 s, none waiting for its flush,
    /// and the foreground below 2,000 operations per second as long) and in
    /// `Db::wait_for_background_work` (with `quiet_cleanup`), `vlog_gc_total_garbage_ratio`
    /// drops to this:
    /// the garbage a write burst left is collected while the device has time for it, so it
    /// stops taking page cache from the values reads need (docs/design-decisions.md, "Garbage
    /// collected once writes are quiet"). Default 0.05; 1 turns it off. Accepted: `0.0..=1.0`.
    pub vlog_gc_quiet_garbage_ratio: f64,
    /// While value-log garbage exceeds this share of all value-log bytes, writes are paced
    /// (RocksDB's pending-compaction-bytes slowdown, for the value logs): at the rate the GC
    /// frees garbage at this share, slower as garbage grows, down to 5% of it halfway to 1.
    /// So overwrites of large values faster than one GC job frees them no longer grow the
    /// logs until the disk is full (docs/design-decisions.md, "Writes paced by value-log
    /// garbage"). Default 0.5; 1 turns it off. Accepted: `0.0..=1.0`.
    pub vlog_gc_slowdown_garbage_ratio: f64,
    /// Clean up after write bursts once all is quiet (no write buffer switched for 2 s, none
    /// waiting for its flush, and the foreground, reads included, below 2,000 operations per
    /// second as long; a lone immutable buffer is then flushed) and in
    /// `Db::wait_for_background_work` (default true):
    /// merge FlatLSM's level-0 runs into L1, collect value logs down to
    /// `vlog_gc_quiet_garbage_ratio`, and rewrite the files that still name collected logs,
    /// so reads find the tree as compact as the writes allowed (docs/design-decisions.md,
    /// "Garbage collected once writes are quiet"). False: background work keeps the targets
    /// of busy writers at all times.
    pub quiet_cleanup: bool,
    /// Run background work (flush, compaction, GC) automatically (default true).
    pub background_work: bool,
    /// Nice value added to the background threads (flush, L1 merge and compaction, value-log
    /// GC), as RocksDB's `LowerThreadPoolCPUPriority` does: when writers and background jobs
    /// compete for cores, writers keep running at an even pace and the slowdown phase, not the
    /// scheduler, decides how fast they go (docs/design-decisions.md). Compactions and GC run
    /// 3 levels nicer still, so a flush the writers wait for goes first. 0 leaves every thread
    /// at the process's priority. Accepted: `0..=19`; default 5. Linux only (ignored elsewhere).
    pub background_nice: i32,
    /// Time each part of a foreground write — the write-ahead log append, the write buffer's
    /// data append, its index insert — into `Stats::write_{wal,mem_data,mem_index}_nanos`
    /// (the paper's latency breakdowns, Figs. 16, 19, 22). Off by default: each part costs a
    /// clock read per write, which the default write path does not pay. The stall part
    /// (`Stats::write_stall_nanos`) is always counted: its waits read the clock anyway.
    pub write_breakdown: bool,
    /// The info log (`LOG` in the database directory: options at open, flushes, compactions,
    /// GCs, stalls, background errors) is rotated to `LOG.old.<micros>` once it exceeds this
    /// many bytes (RocksDB's `max_log_file_size`); 0 never rotates it by size (it is still
    /// rotated at each open). Default 16 MiB.
    pub max_log_file_size: u64,
    /// Most rotated info logs (`LOG.old.*`) kept; older ones are deleted (RocksDB's
    /// `keep_log_file_num`). 0 keeps none. Default 10.
    pub keep_log_file_num: usize,
    /// File system for SSD files (default: the OS). Tests inject faults here.
    pub file_system: Option<FsRef>,
    /// PM device (default: derived from `pm_path` and `pm_mode`). Tests inject a simulated device.
    pub pm_device: Option<PmDeviceRef>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            profile: Profile::FlatLsm,
            leveled: LeveledOptions::default(),
            matrixkv: MatrixKvOptions::default(),
            slmdb: SlmDbOptions::default(),
            wal_dir: None,
            create_if_missing: true,
            error_if_exists: false,
            pm_path: None,
            allow_missing_pm: false,
            wal_point_in_time_recovery: false,
            pm_mode: PmModeOption::Auto,
            pm_write_latency_ns: 0,
            pm_read_latency_ns: 0,
            memtable_placement: Placement::Dram,
            block_cache_placement: Placement::Dram,
            pm_persist_interval_ms: 1000,
            pmtable_size: 64 << 20,
            flush_immutable_num: 2,
            max_write_buffer_number: 6,
            slowdown_immutable_num: None,
            delayed_write_rate: None,
            pmtable_gc_ratio: 8.0,
            l1_merge_trigger: 4,
            l1_capacity: 2 << 30,
            l1_data_ratio: 0.125,
            target_file_size: 64 << 20,
            flush_threads: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2),
            kv_separation_threshold: 512,
            vlog_direct_writes: false,
            vlog_cache_written: false,
            vlog_mmap_reads: true,
            value_cache: false,
            block_size: 4096,
            bloom_bits_per_key: 10,
            compression: Compression::Lz4,
            compression_per_level: Vec::new(),
            block_cache_size: 64 << 20,
            max_open_files: None,
            vlog_gc_garbage_ratio: 0.5,
            vlog_gc_total_garbage_ratio: 0.25,
            vlog_gc_quiet_garbage_ratio: 0.05,
            vlog_gc_slowdown_garbage_ratio: 0.5,
            quiet_cleanup: true,
            background_work: true,
            background_nice: 5,
            write_breakdown: false,
            max_log_file_size: 16 << 20,
            keep_log_file_num: 10,
            file_system: None,
            pm_device: None,
        }
    }
}

impl Options {
    /// The defaults of `profile`: [`Options::default`] with the profile set and, for
    /// [`Profile::Leveled`], no value separation (set `kv_separation_threshold` for the
    /// Titan/BlobDB variant).
    ///
    /// ```
    /// let opts = flatlsm::Options::for_profile(flatlsm::Profile::Leveled);
    /// assert_eq!(opts.kv_separation_threshold, usize::MAX);
    /// ```
    pub fn for_profile(profile: Profile) -> Options {
        let d = Options::default();
        match profile {
            Profile::FlatLsm => d,
            Profile::Leveled | Profile::NoveLsm | Profile::MatrixKv | Profile::SlmDb => Options {
                profile,
                kv_separation_threshold: usize::MAX,
                ..d
            },
        }
    }

    /// The directory of the write-ahead logs of the database at `db`.
    /// By default the database directory; for `matrixkv` the `wal` directory inside the PM
    /// directory (MatrixKV keeps its write-ahead log in NVM).
    pub fn wal_dir_for(&self, db: &std::path::Path) -> PathBuf {
        if let Some(dir) = &self.wal_dir {
            return dir.clone();
        }
        match self.profile {
            Profile::MatrixKv => self
                .pm_path
                .clone()
                .unwrap_or_else(|| db.join("pm"))
                .join("wal"),
            _ => db.to_path_buf(),
        }
    }

    /// How many immutable PMTables start the slowdown phase (see `slowdown_immutable_num`).
    pub fn slowdown_trigger(&self) -> usize {
        let derived =
            (self.flush_immutable_num + 1).min(self.max_write_buffer_number.saturating_sub(1));
        self.slowdown_immutable_num.unwrap_or(derived)
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
            .field(
                "wal_point_in_time_recovery",
                &self.wal_point_in_time_recovery,
            )
            .field("pm_mode", &self.pm_mode)
            .field("pm_write_latency_ns", &self.pm_write_latency_ns)
            .field("pm_read_latency_ns", &self.pm_read_latency_ns)
            .field("memtable_placement", &self.memtable_placement)
            .field("block_cache_placement", &self.block_cache_placement)
            .field("pmtable_size", &self.pmtable_size)
            .field("flush_immutable_num", &self.flush_immutable_num)
            .field("max_write_buffer_number", &self.max_write_buffer_number)
            .field("slowdown_immutable_num", &self.slowdown_immutable_num)
            .field("delayed_write_rate", &self.delayed_write_rate)
            .field("profile", &self.profile)
            .field("leveled", &self.leveled)
            .field("slmdb", &self.slmdb)
            .field("wal_dir", &self.wal_dir)
            .field("l1_capacity", &self.l1_capacity)
            .field("l1_data_ratio", &self.l1_data_ratio)
            .field("flush_threads", &self.flush_threads)
            .field("kv_separation_threshold", &self.kv_separation_threshold)
            .field("vlog_direct_writes", &self.vlog_direct_writes)
            .field("vlog_cache_written", &self.vlog_cache_written)
            .field("vlog_mmap_reads", &self.vlog_mmap_reads)
            .field("value_cache", &self.value_cache)
            .field("compression", &self.compression)
            .field("compression_per_level", &self.compression_per_level)
            .field("background_nice", &self.background_nice)
            .field("write_breakdown", &self.write_breakdown)
            .field("max_log_file_size", &self.max_log_file_size)
            .field("keep_log_file_num", &self.keep_log_file_num)
            .field("custom_fs", &self.file_system.is_some())
            .field("custom_pm_device", &self.pm_device.is_some())
            .finish_non_exhaustive()
    }
}

/// Where a volatile structure (memtable, block cache) lives: DRAM, or PM used as memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Placement {
    /// Ordinary memory.
    #[default]
    Dram,
    /// A region in the PM directory, used volatile (removed at open and close).
    Pm,
}

/// Options for one write.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOptions {
    /// Durable against power failure on return, in every profile (emulated PM aside). Without
    /// it: `flatlsm` within `pm_persist_interval_ms` (at once for large batches on cache-line PM
    /// modes), `novelsm`/`slmdb` on return anyway, `leveled`/`matrixkv` only once something
    /// syncs the write-ahead log. A process crash loses no acknowledged write either way
    /// (docs/durability.md).
    pub sync: bool,
    /// Fail with [`crate::Error::WriteStall`] at once, writing nothing, instead of being
    /// delayed (slowdown phase) or waiting for a free PMTable (stop), as RocksDB's
    /// `no_slowdown` returns `Status::Incomplete`. The caller may retry later.
    pub no_slowdown: bool,
}

/// Options for one read or iterator.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadOptions<'a> {
    /// Read as of this snapshot (default: the latest state).
    pub snapshot: Option<&'a Snapshot>,
    /// Verify checksums of everything read (always on for PM entries and value-log records).
    pub verify_checksums: bool,
}
