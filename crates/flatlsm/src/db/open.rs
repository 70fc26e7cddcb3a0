//! Opening a database: lock, PM device, manifest recovery, copy-free PMTable recovery, and
//! clean-up of whatever an interrupted flush, compaction or GC left behind.
//!
//! Recovery rules (the persist orders they rely on are stated where each structure is written):
//! - Manifest: replayed from CURRENT (see `version::manifest`). It is the commit point of every
//!   flush/compaction/GC: an SST or value log not named by the recovered version is an orphan
//!   of an interrupted job and is deleted.
//! - PM Logs numbered below `min_unflushed_pmlog` were flushed before the crash: deleted.
//! - A PMTable-GC replacement log without GC_COMPLETE is deleted (its source is intact); with
//!   GC_COMPLETE, its source is deleted.
//! - Every other PM Log is mapped and indexed in place (copy-free) as an immutable PMTable.

use super::identity;
use super::lock::{DirLock, LOCK_FILE};
use super::snapshots::SnapshotRegistry;
use super::state::{BgSignal, DbInner, SuperVersion, VersionState};
use super::stats::Counters;
use crate::error::{Error, IoContext, Result};
use crate::fs::{FsRef, OsFileSystem};
use crate::options::{Options, PmModeOption};
use crate::pm::mmap::{MmapPmDevice, PmModeRequest};
use crate::pm::PmDeviceRef;
use crate::pmtable::log::{log_file_name, parse_log_file_name, PmLog};
use crate::pmtable::PmTable;
use crate::sst::{parse_sst_file_name, BlockCache, TableCache};
use crate::version::{Manifest, ManifestState, Version};
use crate::vlog::{parse_vlog_file_name, VlogSet};
use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

/// Files a FlatLSM directory may hold besides its numbered files.
const KNOWN_NAMES: &[&str] = &[LOCK_FILE, "CURRENT", "pm", "LOG", identity::IDENTITY_FILE];

/// True for every name FlatLSM itself writes in a database directory (for tools that clear or
/// inspect one): numbered files, the fixed names, and temporary files of atomic writes.
pub fn is_database_file_name(name: &str) -> bool {
    KNOWN_NAMES.contains(&name)
        || name.ends_with(".tmp")
        || parse_sst_file_name(name).is_some()
        || parse_vlog_file_name(name).is_some()
        || crate::version::parse_manifest_file_name(name).is_some()
}

/// True for every name FlatLSM itself writes in a PM directory: PM Logs, the identity file,
/// temporary files of atomic writes, and the device's work files.
pub fn is_pm_dir_file_name(name: &str) -> bool {
    parse_log_file_name(name).is_some()
        || name == identity::IDENTITY_FILE
        || name.ends_with(".tmp")
        || crate::pm::mmap::is_device_work_file(name)
}

pub(crate) fn open(path: &Path, opts: Options) -> Result<(Arc<DbInner>, DirLock)> {
    opts.validate()?;
    let fs: FsRef = opts
        .file_system
        .clone()
        .unwrap_or_else(|| Arc::new(OsFileSystem));
    let db_exists = prepare_dir(&*fs, path, &opts)?;
    // Decided before anything is written, so a mismatched PM directory modifies nothing.
    let pm_dir = opts.pm_device.is_none().then(|| pm_dir_of(path, &opts));
    let identity = match &pm_dir {
        Some(dir) => Some(identity::plan(
            &*fs,
            path,
            dir,
            db_exists,
            opts.allow_missing_pm,
        )?),
        None => None,
    };
    if !db_exists {
        fs.create_dir_all(path)
            .context(|| format!("creating {}", path.display()))?;
    }
    let lock = DirLock::acquire(path, true)?.expect("LOCK is created when missing");
    let pm = open_pm(path, &opts)?;
    if let (Some(plan), Some(dir)) = (&identity, &pm_dir) {
        plan.apply(&*fs, path, dir)?;
    }
    let state = load_manifest(&fs, path)?;
    let tables = recover_pmtables(&pm, &state)?;
    for t in &tables {
        t.build_filter(opts.bloom_bits_per_key);
    }
    let max_pm_number = pm_numbers(&pm)?.into_iter().max().unwrap_or(0);
    let max_file = max_file_number(&*fs, path)?.max(max_pm_number);
    let next = state.next_file_number.max(max_file + 1);
    let last_seq = tables
        .iter()
        .map(|t| t.max_sequence())
        .max()
        .unwrap_or(0)
        .max(state.last_sequence);
    let manifest_state = ManifestState {
        version: state.version.clone(),
        next_file_number: next + 2,
        last_sequence: last_seq,
        min_unflushed_pmlog: state.min_unflushed_pmlog,
    };
    let manifest = Manifest::create(fs.clone(), path, next, &manifest_state)?;
    purge_orphans(&*fs, path, &state.version)?;
    let mem = PmTable::create(&*pm, next + 1, opts.pmtable_size, None)?;
    log::info!(
        "opened {} with PM at {} in mode {}; recovered {} PMTables, last sequence {last_seq}",
        path.display(),
        pm.dir().display(),
        pm.mode(),
        tables.len()
    );
    let version = Arc::new(state.version);
    let inner = build_inner(
        opts,
        path,
        fs,
        pm,
        manifest,
        version,
        mem,
        tables,
        last_seq,
        next + 2,
    );
    Ok((Arc::new(inner), lock))
}

#[allow(clippy::too_many_arguments)]
fn build_inner(
    opts: Options,
    path: &Path,
    fs: FsRef,
    pm: PmDeviceRef,
    manifest: Manifest,
    version: Arc<Version>,
    mem: Arc<PmTable>,
    imms: Vec<Arc<PmTable>>,
    last_seq: u64,
    next_file: u64,
) -> DbInner {
    let block_cache = (opts.block_cache_size > 0).then(|| BlockCache::new(opts.block_cache_size));
    let table_cache = Arc::new(TableCache::new(fs.clone(), path.to_path_buf(), block_cache));
    let vlogs = Arc::new(VlogSet::new(fs.clone(), path.to_path_buf()));
    DbInner {
        path: path.to_path_buf(),
        fs,
        pm,
        table_cache,
        vlogs,
        sv: ArcSwap::from_pointee(SuperVersion {
            mem,
            imms,
            version: version.clone(),
        }),
        sv_lock: Mutex::new(()),
        write_lock: Mutex::new(()),
        visible_seq: AtomicU64::new(last_seq),
        next_file_number: AtomicU64::new(next_file),
        versions: Mutex::new(VersionState {
            manifest,
            live: vec![Arc::downgrade(&version)],
            current: version,
            l1_compact_pointer: Vec::new(),
        }),
        snapshots: Arc::new(SnapshotRegistry::default()),
        counters: Counters::default(),
        bg_signal: Mutex::new(BgSignal),
        bg_cv: Condvar::new(),
        bg_error: Mutex::new(None),
        compacting: Mutex::new(HashSet::new()),
        compacting_cv: Condvar::new(),
        pending_outputs: Mutex::new(HashSet::new()),
        shutting_down: AtomicBool::new(false),
        closed: AtomicBool::new(false),
        flush_lock: Mutex::new(()),
        compaction_lock: Mutex::new(()),
        #[cfg(test)]
        sync_points: Default::default(),
        opts,
    }
}

/// Decides whether the database exists, refusing directories that are not FlatLSM's and
/// the cases `create_if_missing`/`error_if_exists` forbid. Reads only: the caller creates the
/// directory when this returns `Ok(false)`.
fn prepare_dir(fs: &dyn crate::fs::FileSystem, path: &Path, opts: &Options) -> Result<bool> {
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
/// first manifest and temporary files (CURRENT is written last, so the creation starts over).
fn is_creation_leftover(name: &str) -> bool {
    crate::version::parse_manifest_file_name(name).is_some() || name.ends_with(".tmp")
}

/// The PM directory: `pm_path`, or `<db>/pm`.
fn pm_dir_of(path: &Path, opts: &Options) -> PathBuf {
    opts.pm_path.clone().unwrap_or_else(|| path.join("pm"))
}

fn open_pm(path: &Path, opts: &Options) -> Result<PmDeviceRef> {
    if let Some(d) = &opts.pm_device {
        return Ok(d.clone());
    }
    let dir = pm_dir_of(path, opts);
    std::fs::create_dir_all(&dir).context(|| format!("creating PM directory {}", dir.display()))?;
    let request = match opts.pm_mode {
        PmModeOption::Auto => PmModeRequest::Auto,
        PmModeOption::Msync => PmModeRequest::Msync,
        PmModeOption::Emulated => PmModeRequest::Emulated {
            write_latency_ns: opts.pm_write_latency_ns,
        },
    };
    let device: PmDeviceRef = MmapPmDevice::open(&dir, request)?;
    Ok(device)
}

fn load_manifest(fs: &FsRef, path: &Path) -> Result<ManifestState> {
    if Manifest::exists(&**fs, path) {
        return Manifest::recover(&**fs, path);
    }
    Ok(ManifestState {
        version: Version::default(),
        next_file_number: 1,
        last_sequence: 0,
        min_unflushed_pmlog: 0,
    })
}

fn pm_numbers(pm: &PmDeviceRef) -> Result<Vec<u64>> {
    Ok(pm
        .list_regions()?
        .iter()
        .filter_map(|n| parse_log_file_name(n))
        .collect())
}

/// Applies the PM recovery rules and returns the surviving tables, newest first.
fn recover_pmtables(pm: &PmDeviceRef, state: &ManifestState) -> Result<Vec<Arc<PmTable>>> {
    let mut logs: BTreeMap<u64, Arc<PmLog>> = BTreeMap::new();
    for n in pm_numbers(pm)? {
        if n < state.min_unflushed_pmlog {
            pm.remove_region(&log_file_name(n))?;
            continue;
        }
        match PmLog::open_if_initialized(&**pm, &log_file_name(n))? {
            Some(log) => {
                logs.insert(n, log);
            }
            // A crash interrupted the log's creation: it never held data.
            None => pm.remove_region(&log_file_name(n))?,
        }
    }
    let numbers: Vec<u64> = logs.keys().copied().collect();
    for n in numbers {
        let Some(h) = logs.get(&n).map(|l| l.header()) else {
            continue;
        };
        if h.replaces == 0 {
            continue;
        }
        let victim = if h.gc_complete { h.replaces } else { n };
        if logs.remove(&victim).is_some() {
            pm.remove_region(&log_file_name(victim))?;
        }
    }
    let mut tables = Vec::new();
    for (n, log) in logs.into_iter().rev() {
        let table = PmTable::recover(log)?;
        if table.is_empty() {
            pm.remove_region(&log_file_name(n))?;
        } else {
            tables.push(table);
        }
    }
    pm.sync_dir()?;
    Ok(tables)
}

fn max_file_number(fs: &dyn crate::fs::FileSystem, path: &Path) -> Result<u64> {
    let names = fs
        .list_dir(path)
        .context(|| format!("listing {}", path.display()))?;
    Ok(names
        .iter()
        .filter_map(|n| {
            parse_sst_file_name(n)
                .or_else(|| parse_vlog_file_name(n))
                .or_else(|| n.strip_prefix("MANIFEST-").and_then(|s| s.parse().ok()))
        })
        .max()
        .unwrap_or(0))
}

/// Deletes SSTs and value logs the recovered version does not name (outputs of a job that
/// did not reach the manifest), and leftover temporary files.
fn purge_orphans(fs: &dyn crate::fs::FileSystem, path: &Path, version: &Version) -> Result<()> {
    let live: HashSet<u64> = version.file_numbers().into_iter().collect();
    for name in fs
        .list_dir(path)
        .context(|| format!("listing {}", path.display()))?
    {
        let orphan = match (parse_sst_file_name(&name), parse_vlog_file_name(&name)) {
            (Some(n), _) => !live.contains(&n),
            (_, Some(n)) => !version.vlogs.contains_key(&n),
            _ => name.ends_with(".tmp"),
        };
        if orphan {
            log::info!("removing orphan file {name} left by an interrupted job");
            fs.remove_file(&path.join(&name))
                .context(|| format!("removing orphan {name}"))?;
        }
    }
    Ok(())
}
