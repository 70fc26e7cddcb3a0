//! Opening a database: lock, manifest recovery, identity, the write buffers by kind, and
//! clean-up of whatever an interrupted flush, compaction or GC left behind.
//!
//! Open runs in two phases. The first only reads (apart from taking the lock and creating the
//! PM directory's device): it replays the manifest, decides about identities
//! (`layout/identity.rs`), judges the write buffers of the design's kind against the manifest
//! and the files present and has those it keeps rebuilt (`pm_log_recovery.rs`,
//! `wal_recovery.rs`, `skiplist_recovery.rs`; the rule books in `consistency.rs` and
//! `wal_rules.rs`; the replay itself in `buffer/recover/`). Any refusal happens there, so a
//! refused open deletes and rewrites nothing. The second phase writes, in this order: the info
//! log (`LOG`, rotated; diagnostics only, `info_log.rs`), identity files, the new mutable
//! buffer (and its write-ahead log, for designs with one, once the recovered logs are sealed),
//! a new manifest whose snapshot records it (the commit point of open), then the removals, then
//! the OPTIONS file (`options/file.rs`).
//!
//! Recovery rules (the persist orders they rely on are stated where each structure is written):
//! - Manifest: replayed from CURRENT (see `version::manifest`). It is the commit point of every
//!   flush/compaction/GC. Every SST, value log and redirect table it names must exist with its
//!   recorded size, else `Corruption` naming the file: the manifest lost a record that had taken
//!   effect. Every redirect table must also decode (checksum, entry order) and redirect the logs
//!   the manifest records; it is loaded into memory then, for reads to translate through.
//! - Write buffers, by kind: PM Logs `recovery/pm_log_recovery.rs`; write-ahead logs (designs
//!   with DRAM buffers) and MatrixKV's container `recovery/wal_rules.rs`,
//!   `recovery/wal_recovery.rs` (a hole in the logs, an unnamed log with writes: `Corruption`);
//!   PM skiplists `recovery/skiplist_recovery.rs`.
//! - SSTs, value logs and redirect tables the version does not name are orphans of interrupted
//!   jobs (or a GC's victim whose deletion a crash interrupted): deleted, but only after the
//!   checks passed and the new manifest is durable (see `purge_orphans`).
//! - PM regions of write buffers are deleted only after the new manifest no longer records
//!   them, so a crash during open never leaves a manifest naming a deleted log.

use super::dirs::purge_orphans;
use super::open_stores::block_cache;
use super::pm_log_recovery::recover_pm_logs;
use super::skiplist_recovery::recover_skiplists;
use super::wal_recovery::{recover_from_wal, start_wals, RecoveredWals};
use crate::buffer::BufferRef;
use crate::db::bg_state::BgState;
use crate::db::files::Files;
use crate::db::state::{DbInner, SuperVersion};
use crate::db::version_set::VersionSet;
use crate::db::wals::Wals;
use crate::db::writes::Writes;
use crate::designs::{check_profile, version_extension};
use crate::designs::{BufferKind, Design};
use crate::error::{Error, IoContext, Result};
use crate::file_names::{is_info_log_file_name, parse_numbered_file, NumberedFile};
use crate::file_names::{parse_pm_log_file_name, parse_skiplist_region_name};
use crate::fs::{FileSystem, FsRef, OsFileSystem};
use crate::layout::identity;
use crate::layout::lock::{DirLock, LOCK_FILE};
use crate::layout::wal_files::remove_unnamed_wals;
use crate::layout::{pm_dir_of, sst_dirs};
use crate::observe::info_log::event;
use crate::observe::info_log::InfoLog;
use crate::observe::stats::Counters;
use crate::options::{parse_options_file_name, write_options_file, Options, Profile};
use crate::pm::PmDeviceRef;
use crate::pmtable::pool::is_pool_file_name;
use crate::pmtable::PmTable;
use crate::snapshot::SnapshotRegistry;
use crate::sst::{BlockCache, SstDir, TableCache};
use crate::version::{Manifest, ManifestState, RecoveredManifest, Version};
use crate::vlog::RedirectTable;
use std::path::Path;
use std::sync::Arc;

/// Files a FlatLSM directory may hold besides its numbered files, info logs and OPTIONS files.
const KNOWN_NAMES: &[&str] = &[LOCK_FILE, "CURRENT", "pm", identity::IDENTITY_FILE];

/// True for every name FlatLSM itself writes in a database directory (for tools that clear or
/// inspect one): numbered files, the fixed names, the info logs (`LOG`, `LOG.old.<micros>`),
/// OPTIONS files and temporary files of atomic writes.
pub fn is_database_file_name(name: &str) -> bool {
    KNOWN_NAMES.contains(&name)
        || is_info_log_file_name(name)
        || parse_options_file_name(name).is_some()
        || name.ends_with(".tmp")
        || parse_numbered_file(name).is_some()
}

/// True for every name FlatLSM itself writes in a PM directory: PM Logs, the identity file,
/// temporary files of atomic writes, and the device's work files.
pub fn is_pm_dir_file_name(name: &str) -> bool {
    parse_pm_log_file_name(name).is_some()
        || parse_skiplist_region_name(name).is_some()
        || name == crate::file_names::BLOCK_CACHE_REGION
        || name == crate::file_names::CONTAINER_REGION
        || name == crate::file_names::BTREE_REGION
        || name == "wal"
        || crate::sst::parse_sst_file_name(name).is_some() // level 0 of `level0_in_pm`
        || is_pool_file_name(name)
        || name == identity::IDENTITY_FILE
        || name.ends_with(".tmp")
        || crate::pm::mmap::is_device_work_file(name)
}

/// How a database is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// The one writer: an exclusive lock.
    ReadWrite,
    /// A reader: a shared lock, and the whole open run against copy-on-write views of the
    /// directory and the PM directory, so nothing on disk or in PM changes.
    ReadOnly,
}

pub(crate) fn open(path: &Path, opts: Options, access: Access) -> Result<(Arc<DbInner>, DirLock)> {
    opts.validate()?;
    let fs: FsRef = opts
        .file_system
        .clone()
        .unwrap_or_else(|| Arc::new(OsFileSystem));
    let db_exists = prepare_dir(&*fs, path, &opts)?;
    let design = crate::designs::design_of(&opts);
    let has_pm_dir = opts.pm_device.is_none() && design.uses_pm_dir();
    let pm_dir = has_pm_dir.then(|| pm_dir_of(path, &opts));
    if access == Access::ReadOnly && !db_exists {
        return Err(Error::InvalidArgument(format!(
            "database {} does not exist (a read-only open creates nothing)",
            path.display()
        )));
    }
    // Reads only (for an existing database): the identity is judged on the real directories.
    let locked = lock_and_load(&*fs, path, pm_dir.as_deref(), &opts, (db_exists, access))?;
    let (opts, fs) = match access {
        Access::ReadWrite => (opts, fs),
        Access::ReadOnly => super::open_stores::read_only_views(path, opts, fs)?,
    };
    let pm = match &opts.pm_device {
        Some(d) => d.clone(),
        None => design.write_buffer_device(path, &opts)?,
    };
    let input = KindInput {
        fs: &*fs,
        path,
        pm: &pm,
        manifest: locked.manifest,
        opts: &opts,
    };
    let recovered = match design.buffer_kind() {
        BufferKind::DramWithWal => recover_from_wal(input)?,
        BufferKind::PmSkiplist => recover_skiplists(input)?,
        BufferKind::PmTable => recover_pm_logs(input)?,
    };
    if let (Some(plan), Some(dir)) = (&locked.identity, &pm_dir) {
        plan.apply(&*fs, path, dir)?;
    }
    if design.flush_shape(&opts).sst_dir == SstDir::Pm {
        let dir = pm_dir_of(path, &opts);
        fs.create_dir_all(&dir)
            .context(|| format!("creating PM directory {}", dir.display()))?;
    }
    let id = locked.identity.map(|p| p.id().to_string());
    let mut inner = commit_open(opts, design, path, fs, pm, recovered, id)?;
    inner.files.set_read_only(access == Access::ReadOnly);
    Ok((Arc::new(inner), locked.lock))
}

/// The lock, the recovered manifest (`None` for a new database) and the identity plan.
struct Locked {
    lock: DirLock,
    manifest: Option<RecoveredManifest>,
    identity: Option<identity::IdentityPlan>,
}

/// Takes the lock and replays the manifest, deciding identities: for a new database before its
/// directory is created (a foreign PM directory then creates nothing), for an existing one after
/// the lock is taken (the manifest records the identity and must not change while it is read).
fn lock_and_load(
    fs: &dyn FileSystem,
    path: &Path,
    pm_dir: Option<&Path>,
    opts: &Options,
    (db_exists, access): (bool, Access),
) -> Result<Locked> {
    let acquire = || match access {
        Access::ReadWrite => {
            DirLock::acquire(path, true).map(|l| l.expect("LOCK is created when missing"))
        }
        Access::ReadOnly => DirLock::acquire_shared(path),
    };
    if !db_exists {
        let identity = plan_identity(fs, path, pm_dir, opts, false, None)?;
        fs.create_dir_all(path)
            .context(|| format!("creating {}", path.display()))?;
        let lock = acquire()?;
        let manifest = None;
        return Ok(Locked {
            lock,
            manifest,
            identity,
        });
    }
    let lock = acquire()?;
    let manifest = Manifest::load(fs, path, &version_extension)?;
    check_profile(path, manifest.state.profile.as_deref(), opts.profile)?;
    let recorded = manifest.state.identity.as_deref();
    let identity = plan_identity(fs, path, pm_dir, opts, true, recorded)?;
    let manifest = Some(manifest);
    Ok(Locked {
        lock,
        manifest,
        identity,
    })
}

/// What each buffer kind's recovery decides from: the files, the PM device, the manifest read
/// at open (`None` for a new database) and the options.
pub(super) struct KindInput<'a> {
    pub fs: &'a dyn FileSystem,
    pub path: &'a Path,
    pub pm: &'a PmDeviceRef,
    pub manifest: Option<RecoveredManifest>,
    pub opts: &'a Options,
}

/// [`KindInput`]'s fields, in one line at the top of each kind's recovery.
type KindParts<'a> = (
    &'a dyn FileSystem,
    &'a Path,
    &'a PmDeviceRef,
    Option<RecoveredManifest>,
    &'a Options,
);

impl<'a> KindInput<'a> {
    /// The fields, moved out.
    pub fn parts(self) -> KindParts<'a> {
        (self.fs, self.path, self.pm, self.manifest, self.opts)
    }
}

/// What the read-only phase of open decided.
pub(super) struct Recovered {
    pub state: ManifestState,
    /// Surviving write buffers (PMTables, replayed memtables), newest first.
    pub tables: Vec<BufferRef>,
    /// PM regions to remove once the new manifest no longer records them: (name, why).
    pub remove: Vec<(String, String)>,
    /// Recovered tables whose whole tail was torn (also in `remove`).
    pub emptied: Vec<Arc<PmTable>>,
    /// The redirect tables the version names, loaded and verified.
    pub redirects: Vec<Arc<RedirectTable>>,
    /// The write-ahead logs of `tables` (designs with them), sealed before the new manifest.
    pub wals: RecoveredWals,
}

/// The writing phase of open: a new mutable PMTable, a new manifest whose snapshot records it
/// and every surviving PM Log (the commit point), then the removals the plan called for.
fn commit_open(
    opts: Options,
    design: Box<dyn Design>,
    path: &Path,
    fs: FsRef,
    pm: PmDeviceRef,
    recovered: Recovered,
    identity: Option<String>,
) -> Result<DbInner> {
    let Recovered {
        mut state,
        tables,
        remove,
        emptied,
        redirects,
        wals,
    } = recovered;
    let info_log = InfoLog::open(fs.clone(), path, &opts);
    design.store().open_store(path, &opts, &state.version)?;
    let next = next_file_number(&*fs, path, &pm, &state)?;
    let tables_seq = tables.iter().map(|t| t.max_sequence()).max();
    // The new log's number; where the recovered logs end (maybe below last_sequence).
    let wal_start = (next + 1, tables_seq.unwrap_or(state.last_sequence));
    state.last_sequence = state.last_sequence.max(tables_seq.unwrap_or(0));
    // Created before the snapshot, so the snapshot records it before any write goes into it
    // (its write-ahead log too, for designs with one, once the logs recovered are sealed).
    let mem = design
        .buffer_kind()
        .create(&pm, next + 1, opts.pmtable_size)?;
    let wal_dir = opts.wal_dir_for(path);
    let wal = match design.uses_wal() {
        true => Some(start_wals(&*fs, &wal_dir, wals, wal_start, &info_log)?),
        false => None,
    };
    state.next_file_number = next + 2;
    state.pm_logs = Some(tables.iter().chain([&mem]).map(|t| t.number()).collect());
    state.identity = identity.or(state.identity);
    state.profile = Some(opts.profile.name().to_string());
    let recovered = tables.iter().filter_map(|t| t.clone().as_pmtable());
    for t in recovered.chain(emptied) {
        t.persist_recovered_tail()?;
    }
    let manifest = Manifest::create(fs.clone(), path, next, &state)?;
    remove_pm_logs(&pm, &remove, &info_log)?;
    let buffers: Vec<u64> = state.pm_logs.iter().flatten().copied().collect();
    let dirs = sst_dirs(path, &opts);
    purge_orphans(&*fs, &dirs, &state.version, &buffers, &info_log)?;
    if design.uses_wal() && wal_dir != path {
        remove_unnamed_wals(&*fs, &wal_dir, &buffers)?;
    }
    write_options_file(&*fs, path, &opts)?;
    let opened = format!(
        "opened {} with PM at {} in mode {}; recovered {} PMTables, last sequence {}",
        path.display(),
        pm.dir().display(),
        pm.mode(),
        tables.len(),
        state.last_sequence
    );
    event!(info_log, Info, opened);
    let (last_seq, version) = (state.last_sequence, Arc::new(state.version));
    let parts = (
        manifest,
        version,
        mem,
        tables,
        block_cache(path, &opts)?,
        design,
        info_log,
    );
    let wals = Wals::new(wal_dir, wal);
    let inner = build_inner(opts, (path, fs, pm), parts, (last_seq, next + 2), wals);
    for t in redirects {
        inner.files.redirects().insert(t);
    }
    Ok(inner)
}

/// The manifest number of the new manifest: above every number the manifest recorded and every
/// file present (the mutable PMTable takes the next one).
fn next_file_number(
    fs: &dyn FileSystem,
    path: &Path,
    pm: &PmDeviceRef,
    state: &ManifestState,
) -> Result<u64> {
    let max_pm_number = pm_numbers(pm)?.into_iter().max().unwrap_or(0);
    let max_file = max_file_number(fs, path)?.max(max_pm_number);
    Ok(state.next_file_number.max(max_file + 1))
}

/// The manifest, version, mutable and immutable write buffers, block cache, design and info
/// log a database starts with.
type Parts = (
    Manifest,
    Arc<Version>,
    BufferRef,
    Vec<BufferRef>,
    Option<Arc<BlockCache>>,
    Box<dyn Design>,
    InfoLog,
);

fn build_inner(
    opts: Options,
    (path, fs, pm): (&Path, FsRef, PmDeviceRef),
    (manifest, version, mem, imms, block_cache, design, info_log): Parts,
    (last_seq, next_file): (u64, u64),
    wals: Wals,
) -> DbInner {
    let tables = TableCache::new(fs.clone(), sst_dirs(path, &opts), block_cache);
    let tables = match opts.max_open_files {
        Some(n) => tables.with_capacity(n),
        None => tables,
    };
    let sv = SuperVersion {
        mem,
        imms,
        level0: design.store().level0_store(&version),
        version,
    };
    DbInner {
        jobs: crate::jobs::HOOKS,
        files: Files::new(path, fs, pm, tables, &opts),
        info_log,
        versions: VersionSet::new(manifest, sv, next_file),
        writes: Writes::new(wals, last_seq),
        bg: BgState::default(),
        policy: design.compaction_policy(&opts),
        design,
        snapshots: Arc::new(SnapshotRegistry::default()),
        counters: Counters::default(),
        stall: Default::default(),
        flush_queue: Default::default(),
        read_charges: Default::default(),
        quiet: Default::default(),
        #[cfg(test)]
        sync_points: Default::default(),
        opts,
    }
}

/// Decides whether the database exists, refusing directories that are not FlatLSM's and
/// the cases `create_if_missing`/`error_if_exists` forbid. Reads only: the caller creates the
/// directory when this returns `Ok(false)`.
fn prepare_dir(fs: &dyn FileSystem, path: &Path, opts: &Options) -> Result<bool> {
    let exists = Manifest::exists(fs, path);
    if exists && opts.error_if_exists {
        return Err(Error::InvalidArgument(format!(
            "database {} already exists (error_if_exists is set)",
            path.display()
        )));
    }
    if exists {
        return Ok(true);
    }
    if fs.exists(path) {
        let names = fs
            .list_dir(path)
            .context(|| format!("listing {}", path.display()))?;
        let stray = names
            .iter()
            .find(|n| !KNOWN_NAMES.contains(&n.as_str()) && !is_creation_leftover(n));
        if let Some(stray) = stray {
            return Err(Error::InvalidArgument(format!(
                "{} is not a FlatLSM database (it holds {stray:?} but no CURRENT file); \
                 choose an empty or new directory",
                path.display()
            )));
        }
    }
    if !opts.create_if_missing {
        return Err(Error::InvalidArgument(format!(
            "database {} does not exist (create_if_missing is off)",
            path.display()
        )));
    }
    Ok(false)
}

/// Files a crash during the database's creation may leave before CURRENT first exists: the
/// info logs, the first manifest, the first write-ahead log (designs with one) and temporary
/// files (CURRENT is written last, so the creation starts over).
fn is_creation_leftover(name: &str) -> bool {
    is_info_log_file_name(name)
        || crate::version::parse_manifest_file_name(name).is_some()
        || crate::file_names::parse_wal_file_name(name).is_some()
        || name.ends_with(".tmp")
}

/// The identity plan (`layout/identity.rs`); `None` for an injected PM device (no directory).
fn plan_identity(
    fs: &dyn FileSystem,
    path: &Path,
    pm_dir: Option<&Path>,
    opts: &Options,
    db_exists: bool,
    recorded: Option<&str>,
) -> Result<Option<identity::IdentityPlan>> {
    let Some(dir) = pm_dir else {
        return Ok(None);
    };
    let plan = identity::plan(fs, path, dir, db_exists, opts.allow_missing_pm, recorded)?;
    Ok(Some(plan))
}

/// The state of a database of `profile` that has no manifest yet: its versions hold the
/// design's version extension, empty.
pub(crate) fn new_state(profile: Profile) -> ManifestState {
    ManifestState {
        version: Version::with_extension(version_extension(Some(profile.name()))),
        next_file_number: 1,
        ..ManifestState::default()
    }
}

/// The numbers of the write-buffer regions on `pm` (PM Logs and PM skiplists).
pub(super) fn pm_numbers(pm: &PmDeviceRef) -> Result<Vec<u64>> {
    Ok(pm
        .list_regions()?
        .iter()
        .filter_map(|n| parse_pm_log_file_name(n).or_else(|| parse_skiplist_region_name(n)))
        .collect())
}

/// Removes the PM Logs recovery decided to drop, and the free logs a previous run's pool kept
/// (their contents are garbage: see `pmtable::pool`).
fn remove_pm_logs(pm: &PmDeviceRef, remove: &[(String, String)], info_log: &InfoLog) -> Result<()> {
    for (name, why) in remove {
        event!(info_log, Info, format!("removing PM region {name}: {why}"));
        pm.remove_region(name)?;
    }
    for name in pm.list_regions()?.iter().filter(|n| is_pool_file_name(n)) {
        pm.remove_region(name)?;
    }
    pm.sync_dir()
}

fn max_file_number(fs: &dyn FileSystem, path: &Path) -> Result<u64> {
    let names = fs
        .list_dir(path)
        .context(|| format!("listing {}", path.display()))?;
    Ok(names
        .iter()
        .filter_map(|n| parse_numbered_file(n).map(NumberedFile::number))
        .max()
        .unwrap_or(0))
}
