//! The storage designs this engine builds, one room each, chosen by [`Options::profile`] when a
//! database is created and recorded in its manifest (tag 13): reopening under another profile
//! is refused, because each design lays out its files and PM structures its own way.
//!
//! docs/architecture.md describes the layers and, per design, the write and read paths.
//!
//! [`Options::profile`]: crate::Options::profile

pub(crate) mod flatlsm;
pub(crate) mod leveled;
pub(crate) mod matrixkv;
pub(crate) mod novelsm;
pub(crate) mod slmdb;

use crate::buffer::skiplist::SkiplistBuffer;
use crate::buffer::BufferRef;
use crate::compaction::policy::CompactionPolicy;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::options::Options;
use crate::options::Profile;
use crate::pm::PmDeviceRef;
use crate::pmskiplist::PmSkiplist;
use crate::pmtable::log::{encoded_entry_len, PM_LOG_HEADER_LEN};
use crate::pmtable::PmLogPool;
use crate::range_del::RangeTombstones;
use crate::rowtable::build::RowBound;
use crate::rowtable::search::Found;
use crate::sst::{SstDir, TableCache};
use crate::types::SequenceNumber;
use crate::version::{DesignRecord, Extension, FileMeta, Version, VersionEdit};
use std::path::Path;
use std::sync::Arc;

/// What distinguishes one design from another inside the shared engine: where its write
/// buffers live and how they are made durable, its compaction policy, and its stall triggers.
pub(crate) trait Design: Send + Sync {
    /// The device write buffers (PMTables, memtables) are created on.
    fn write_buffer_device(&self, path: &Path, opts: &Options) -> Result<PmDeviceRef>;
    /// What the design's write buffers are.
    fn buffer_kind(&self) -> BufferKind;
    /// True if write buffers need a write-ahead log (they live in DRAM).
    fn uses_wal(&self) -> bool {
        self.buffer_kind() == BufferKind::DramWithWal
    }
    /// The compaction policy, configured from `opts`.
    fn compaction_policy(&self, opts: &Options) -> Box<dyn CompactionPolicy>;
    /// Level-0 runs at which a flush waits for compaction.
    fn level0_stop_runs(&self, opts: &Options) -> usize;
    /// How many sorted runs level 0 of `v` holds, as this design counts them.
    fn level0_runs(&self, v: &Version) -> usize;
    /// Threads and output file size of a flush.
    fn flush_shape(&self, opts: &Options) -> FlushShape;
    /// Level-0 runs from which writes are delayed (besides the immutables' backlog).
    fn level0_slowdown_runs(&self, opts: &Options) -> Option<usize>;
    /// True if the design keeps data in the PM directory (so open checks that the directory
    /// belongs to this database): all but the designs whose write buffers live in DRAM, unless
    /// they keep a store there.
    fn uses_pm_dir(&self) -> bool {
        !self.uses_wal()
    }
    /// Background flush threads (SLM-DB: 2, one writing a flush's SST while the other indexes
    /// and installs the flush before it). A design with more than one flushes to SSTables
    /// (no store flush).
    fn flush_threads(&self) -> usize {
        1
    }
    /// The most immutable write buffers one flush job takes (the oldest first); `None`: every
    /// one no other job has claimed (RocksDB's flush picks every immutable memtable).
    fn flush_batch_limit(&self, _opts: &Options) -> Option<usize> {
        None
    }
    /// True if reads take level 0's files newest first and stop at the first version found,
    /// so their order matters (repair then rewrites files whose versions interleave). False
    /// for SLM-DB, whose index and searches compare sequence numbers.
    fn level0_read_in_order(&self) -> bool {
        true
    }
    /// The design's own store beside the SSD tree (MatrixKV's matrix container, SLM-DB's
    /// B+-tree): everything about it goes through [`DesignStore`]. Designs without one answer
    /// [`NoStore`], whose every method does nothing.
    fn store(&self) -> &dyn DesignStore {
        &NoStore
    }
}

/// A store a design keeps beside the SSD tree, in PM: MatrixKV's matrix container (its level 0)
/// and SLM-DB's B+-tree (an index over its one level). Only those designs implement it
/// ([`Design::store`]); each implements what its store does and leaves the rest to the
/// defaults, which do nothing.
pub(crate) trait DesignStore: Send + Sync {
    /// The PM regions holding the design's own store (beyond its write buffers), which a
    /// checkpoint copies.
    fn store_regions(&self) -> &'static [&'static str] {
        &[]
    }
    /// Opens the design's own level-0 store in PM (MatrixKV's container) with what `version`
    /// records; nothing for designs without one.
    fn open_store(&self, _path: &Path, _opts: &Options, _version: &Version) -> Result<()> {
        Ok(())
    }
    /// The store as `version` (just installed) sees it, searched after the write buffers and
    /// before level 1; `None` for designs without one.
    fn level0_store(&self, _version: &Version) -> Option<Arc<dyn Level0Store>> {
        None
    }
    /// Writes flushed write buffers (`parts`, oldest first, each already filtered) into the
    /// store, all or none; `NotMine` for designs that flush to SSTables.
    fn store_flush(&self, _version: &Version, _parts: Vec<StorePart<'_>>) -> Result<StoreFlush> {
        Ok(StoreFlush::NotMine)
    }
    /// Forgets what `store_flush` wrote as `numbers` when its edit was not installed.
    fn discard_store_flush(&self, _numbers: &[u64]) {}
    /// The edit that puts everything in the store up for compaction (`compact_range`), if
    /// something is not yet.
    fn drain_store_edit(&self, _version: &Version) -> Option<VersionEdit> {
        None
    }
    /// Records the SSTs a flush wrote (the level-0 files of `edit`) before the edit is
    /// installed: SLM-DB's index insertion. Nothing for other designs.
    fn index_flush(&self, _edit: &VersionEdit, _tables: &TableCache) -> Result<()> {
        Ok(())
    }
    /// A count of the design's index changes, read before a scan pins its sources: the
    /// store's iterators compare it with what they read (SLM-DB: the B+-tree's upserts and
    /// removes). 0 for designs without an index.
    fn scan_mark(&self) -> u64 {
        0
    }
    /// The next compaction out of the store, if one is due; its inputs are read through
    /// `tables`, and versions only an open snapshot can read are kept if `snapshots()` says
    /// one is open (asked when the design decides: a snapshot taken after the answer reads at
    /// a sequence no older than the one visible then).
    fn store_compaction(
        &self,
        _version: &Version,
        _tables: &Arc<TableCache>,
        _snapshots: &dyn Fn() -> bool,
    ) -> Result<Option<StoreCompaction>> {
        Ok(None)
    }
    /// After a store compaction's outputs are installed and before its `retire` files are
    /// deleted: the design's index follows the keys into the outputs (SLM-DB), and forgets
    /// keys whose every version the compaction dropped under one of `range_dels`.
    fn follow_compaction(
        &self,
        _retire: &[Arc<FileMeta>],
        _outputs: &[FileMeta],
        _tables: &TableCache,
        _range_dels: &RangeTombstones,
    ) -> Result<()> {
        Ok(())
    }
    /// Repair: the entries of the design's own store the repaired database must keep, as
    /// sorted runs repair writes into level-0 SSTs (MatrixKV's rows: those `recorded` — the
    /// old manifest's version — names, else every row found); the repaired manifest records
    /// nothing in the store. Nothing for designs without one.
    fn salvage_store(
        &self,
        _path: &Path,
        _opts: &Options,
        _recorded: Option<&Version>,
    ) -> Result<Salvage> {
        Ok(Salvage::default())
    }
    /// Repair, before its manifest commits: rebuilds the design's own index over `files` (the
    /// level-0 SSTs the repaired manifest records; SLM-DB's B+-tree). Nothing for other designs.
    fn rebuild_store(
        &self,
        _path: &Path,
        _opts: &Options,
        _files: &[FileMeta],
        _tables: &TableCache,
    ) -> Result<()> {
        Ok(())
    }
}

/// The store of a design without one: every [`DesignStore`] default.
pub(crate) struct NoStore;

impl DesignStore for NoStore {}

/// What repair reads out of a design's own store ([`Design::salvage_store`]).
#[derive(Default)]
pub(crate) struct Salvage {
    /// Sorted runs of entries the repaired database must keep (each unpositioned).
    pub runs: Vec<Box<dyn InternalIterator>>,
    /// The largest file number the runs came from.
    pub max_number: u64,
    /// What could not be read, and other things worth reporting.
    pub notes: Vec<String>,
    /// The store's region when something in it could not be read (repair copies it aside).
    pub copy: Option<Arc<dyn crate::pm::PmRegion>>,
}

/// The device holding a design's own store: `Options::pm_device`, else the PM directory.
pub(crate) fn store_device(path: &Path, opts: &Options) -> Result<PmDeviceRef> {
    match &opts.pm_device {
        Some(d) => Ok(d.clone()),
        None => crate::layout::open_pm_device(path, opts),
    }
}

/// The sequence a read sees, and whether it is an explicit snapshot's (newer writes may then
/// have replaced or removed what it reads).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadAt {
    pub seq: SequenceNumber,
    pub snapshot: bool,
}

/// What a level-0 store says of a key.
pub(crate) enum StoreLookup {
    /// Its newest version at or below the sequence.
    Found(Found),
    /// No SST holds the key: the search ends (SLM-DB's index).
    Absent,
    /// Not here: search the SSTs.
    SearchBelow,
}

/// A design's level 0 beyond its write buffers (MatrixKV's rows, SLM-DB's index).
pub(crate) trait Level0Store: Send + Sync {
    /// What the store says of `user_key` at `read.seq` (blocks read through `tables`).
    fn get(&self, user_key: &[u8], read: ReadAt, tables: &TableCache) -> Result<StoreLookup>;
    /// Whether `user_key` has a live value below the write buffers, if the store knows without
    /// reading its value (SLM-DB's index); `None` to read it.
    fn contains(&self, _user_key: &[u8], _read: ReadAt) -> Result<Option<bool>> {
        Ok(None)
    }
    /// Iterators over the store as a scan at `scan` sees it (sources of the database
    /// iterator; blocks read through `tables`).
    fn iterators(&self, scan: ScanAt, tables: &Arc<TableCache>) -> Vec<Box<dyn InternalIterator>>;
    /// Whether [`Level0Store::iterators`] cover the version's level-0 SSTs, which the database
    /// iterator then leaves out (SLM-DB's B+-tree iterator).
    fn covers_level0_files(&self) -> bool {
        false
    }
}

/// How a scan reads: its sequence, and the design's [`Design::scan_mark`] taken before the
/// scan pinned its sources.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScanAt {
    pub read: ReadAt,
    pub mark: u64,
}

/// One write buffer to flush into the store: its output number, an upper bound of its size,
/// and its entries (versions no reader can see already dropped).
pub(crate) struct StorePart<'a> {
    pub number: u64,
    pub bound: RowBound,
    pub source: Box<dyn InternalIterator + 'a>,
}

/// What a store flush did.
pub(crate) enum StoreFlush {
    /// The design flushes to SSTables.
    NotMine,
    /// The store is full: a store compaction must free room first; the edit, if any, must be
    /// installed to let one start (MatrixKV: the receiver turns into the compactor).
    NoRoom(Option<VersionEdit>),
    /// Written: the edit recording it, and the bytes written.
    Written(VersionEdit, u64),
}

/// A compaction out of the store: the L1 files it rewrites (a level-0 compaction without input
/// files), the store's parts merged with them, and the store's changes its edit must record.
pub(crate) struct StoreCompaction {
    pub compaction: crate::compaction::job::Compaction,
    pub sources: Vec<Box<dyn InternalIterator>>,
    /// Design records of the store's changes to add to the job's edit (MatrixKV: its rows'
    /// new first entries and deletions).
    pub records: Vec<DesignRecord>,
    /// Store bytes merged.
    pub bytes: u64,
    /// Keeps the store's view (and the pages it reads) alive while the job runs.
    pub pin: Arc<dyn Level0Store>,
    /// Level-0 files merged through `sources` and deleted by a second edit, once
    /// [`Design::follow_compaction`] has moved the index off them (SLM-DB's selective
    /// compaction; empty for designs whose inputs are the `compaction`'s).
    pub retire: Vec<Arc<FileMeta>>,
}

/// The kinds of write buffer the designs use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BufferKind {
    /// PMTables on PM: durable by their PM Log (FlatLSM).
    PmTable,
    /// PMTables on DRAM behind a write-ahead log (the RocksDB-style memtable).
    DramWithWal,
    /// Persistent skiplists in PM (NoveLSM, SLM-DB).
    PmSkiplist,
}

impl BufferKind {
    /// Bytes an entry takes in a buffer of this kind (entry header or skiplist node included).
    pub(crate) fn entry_bytes(self, key_len: usize, value_len: usize) -> u64 {
        match self {
            BufferKind::PmSkiplist => PmSkiplist::entry_bytes(key_len, value_len),
            _ => encoded_entry_len(key_len, value_len) as u64,
        }
    }

    /// Bytes an empty buffer of `size` bytes has for entries: a batch needing more never fits.
    pub(crate) fn room_when_empty(self, size: usize) -> u64 {
        match self {
            BufferKind::PmSkiplist => PmSkiplist::room_when_empty(size),
            _ => size.saturating_sub(PM_LOG_HEADER_LEN) as u64,
        }
    }

    /// True if retired buffers go back to a [`PmLogPool`] for reuse (PM Logs; skiplist
    /// regions are not pooled).
    pub(crate) fn pooled(self) -> bool {
        self != BufferKind::PmSkiplist
    }

    /// The buffer number a PM region named `name` holds, if it is a buffer of this kind (PM
    /// Logs and DRAM tables share the PM Log name).
    pub(crate) fn parse_region_name(self, name: &str) -> Option<u64> {
        match self {
            BufferKind::PmSkiplist => crate::file_names::parse_skiplist_region_name(name),
            _ => crate::file_names::parse_pm_log_file_name(name),
        }
    }

    /// A new, empty buffer of this kind numbered `number` on `pm`, created fresh (not from a
    /// pool).
    pub(crate) fn create(
        self,
        pm: &PmDeviceRef,
        number: u64,
        capacity: usize,
    ) -> Result<BufferRef> {
        Ok(match self {
            BufferKind::PmSkiplist => SkiplistBuffer::create(&**pm, number, capacity)?,
            _ => crate::pmtable::PmTable::create(&**pm, number, capacity, None)?,
        })
    }
}

/// A new, empty write buffer of `kind` numbered `number` on `pool`'s device (PMTables reuse
/// the pool's free logs).
pub(crate) fn new_buffer(
    kind: BufferKind,
    pool: &PmLogPool,
    number: u64,
    capacity: usize,
) -> Result<BufferRef> {
    if !kind.pooled() {
        return kind.create(pool.device(), number, capacity);
    }
    Ok(pool.create_table(number, capacity, None)?)
}

/// How a design's flush writes its outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FlushShape {
    /// Threads splitting the key space (FlatLSM's parallel flush; 1 = one sorted pass).
    pub threads: usize,
    /// Output SSTables are closed at this size.
    pub target_file_size: u64,
    /// Where the flush's SSTables are kept.
    pub sst_dir: SstDir,
}

impl FlushShape {
    /// One pass into one file in the data directory (RocksDB's and SLM-DB's flush).
    pub const ONE_FILE: FlushShape = FlushShape {
        threads: 1,
        target_file_size: u64::MAX,
        sst_dir: SstDir::Data,
    };
}

/// The design `opts.profile` names.
pub(crate) fn design_of(opts: &Options) -> Box<dyn Design> {
    match opts.profile {
        Profile::FlatLsm => Box::new(flatlsm::FlatLsmDesign),
        Profile::Leveled => Box::new(leveled::LeveledDesign {
            options: opts.leveled,
        }),
        Profile::NoveLsm => Box::new(novelsm::NoveLsmDesign {
            tree: leveled::LeveledDesign {
                options: opts.leveled,
            },
        }),
        Profile::MatrixKv => Box::new(matrixkv::MatrixKvDesign {
            leveled: opts.leveled,
            options: opts.matrixkv,
            container: std::sync::OnceLock::new(),
        }),
        Profile::SlmDb => Box::new(slmdb::SlmDbDesign::new(opts.slmdb)),
    }
}

/// What a design keeps durable outside the SSD tree and the value logs: what a tool judging a
/// database without opening it (`inspect`'s check) must look at, as the design's trait
/// methods describe it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DurableParts {
    /// Write-ahead logs in the WAL directory (write buffers in DRAM).
    pub wals: bool,
    /// A PM directory bound to the database by its identity file.
    pub pm_dir: bool,
    /// The write buffers themselves are durable in PM, as PM Logs or skiplist regions.
    pub pm_buffers: Option<BufferKind>,
    /// The PM regions of the design's own store (MatrixKV's container, SLM-DB's B+-tree).
    pub store_regions: &'static [&'static str],
}

/// The durable parts of a database created as `profile` (with default options: tools read
/// only what the manifest records).
pub(crate) fn durable_parts(profile: Profile) -> DurableParts {
    let design = design_of(&Options::default().profile(profile));
    let kind = design.buffer_kind();
    DurableParts {
        wals: design.uses_wal(),
        pm_dir: design.uses_pm_dir(),
        pm_buffers: (kind != BufferKind::DramWithWal).then_some(kind),
        store_regions: design.store().store_regions(),
    }
}

/// The version extension of the design a manifest records (`recorded`; none recorded is
/// `flatlsm`): the empty state a database's versions start from, which its edits' design
/// records change (core's `version::extension`). MatrixKV's rows; [`Extension::none`] for the
/// other designs and for a profile this build does not know (opening it is refused).
pub fn version_extension(recorded: Option<&str>) -> Extension {
    match recorded_profile(recorded).parse() {
        Ok(Profile::MatrixKv) => matrixkv::rows::extension(),
        _ => Extension::none(),
    }
}

/// File numbers of the design-store outputs `edit` adds (MatrixKV's new rows): the engine
/// keeps them pending until the edit is installed.
pub(crate) fn store_outputs(edit: &VersionEdit) -> Vec<u64> {
    matrixkv::rows::new_row_numbers(edit)
}

/// The profile the database at `path` was created with, read from its manifest (nothing is
/// written); `None` if `path` holds no database (no `CURRENT`). Tools use it to open a
/// database as what it is.
pub fn profile_of(path: &Path) -> Result<Option<Profile>> {
    if !path.join(crate::version::CURRENT_FILE_NAME).exists() {
        return Ok(None);
    }
    let fs = crate::fs::OsFileSystem;
    let manifest = crate::version::Manifest::load(&fs, path, &version_extension)?;
    let name = recorded_profile(manifest.state.profile.as_deref());
    name.parse().map(Some).map_err(|_| {
        Error::InvalidArgument(format!(
            "database {} was created with profile '{name}', which this build does not know",
            path.display()
        ))
    })
}

/// The profile a manifest records; `None` (written before designs were recorded) is `flatlsm`.
pub(crate) fn recorded_profile(recorded: Option<&str>) -> &str {
    recorded.unwrap_or(Profile::FlatLsm.name())
}

/// Refuses to open the database at `path`, created with the `recorded` profile, as `wanted`.
pub(crate) fn check_profile(path: &Path, recorded: Option<&str>, wanted: Profile) -> Result<()> {
    let recorded = recorded_profile(recorded);
    if recorded == wanted.name() {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "database {} was created with profile '{recorded}' and cannot be opened as '{wanted}' \
         (open it with Options::profile = {recorded})",
        path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for p in Profile::ALL {
            assert_eq!(p.name().parse::<Profile>().unwrap(), p);
        }
        let err = "rocksdb".parse::<Profile>().unwrap_err().to_string();
        assert!(
            err.contains("unknown profile 'rocksdb'") && err.contains("flatlsm"),
            "{err}"
        );
    }

    #[test]
    fn a_manifest_without_a_profile_is_flatlsm() {
        assert!(check_profile(Path::new("/db"), None, Profile::FlatLsm).is_ok());
        let err = check_profile(Path::new("/db"), Some("leveled"), Profile::FlatLsm).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("/db") && msg.contains("'leveled'"), "{msg}");
        assert!(check_profile(Path::new("/db"), None, Profile::Leveled).is_err());
    }
}
