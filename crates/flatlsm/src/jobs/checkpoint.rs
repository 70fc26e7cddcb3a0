//! `Db::checkpoint`: an openable copy of the database in a new directory, made while it keeps
//! running (RocksDB's `Checkpoint::CreateCheckpoint`), and the basis of `flatlsm backup`.
//!
//! Procedure: flush every write buffer (so every write acknowledged before the call is in an
//! SST, or in the design's PM store), then stop what changes the tree or a PM store:
//! `write_lock` first, which stops seals; then the flush queue is held (no new flush is
//! claimed, even of a buffer sealed just before) and the flushes in flight end; then the
//! compaction and value-log GC locks. (The other order deadlocked: a writer holding
//! `write_lock` waited for a flush, which waited for a MatrixKV column compaction, which waited
//! for the compaction lock the checkpoint held.) With the tree frozen, into `<dir>.checkpoint-tmp`: every
//! SST, value log and redirect table of the current version (hard links where allowed, copies
//! otherwise), the design's PM store regions (MatrixKV's container, SLM-DB's B+-tree) copied
//! byte for byte into `<tmp>/pm`, a fresh identity in both directories, a manifest whose
//! snapshot is the current version with no write buffer to recover, an OPTIONS file whose
//! PM and WAL directories are the copy's defaults, and an empty `LOCK`. Then the directories are synced and the
//! temporary directory is renamed to `dir` (the commit point: a crash before leaves only the
//! temporary directory, which a retry removes).
//!
//! Invariant: the copy shares no writable file with the source: hard-linked files are never
//! modified after they are written (SSTs, value logs and redirect tables are immutable), and
//! every mutable file (manifest, PM regions, identities, OPTIONS) is new.

use super::background::flush_all;
use super::Db;
use crate::db::state::DbInner;
use crate::error::{Error, IoContext, Result};
use crate::file_names::redirect_file_name;
use crate::layout::identity::IdentityPlan;
use crate::sst::{sst_file_name, SstDir};
use crate::version::{Manifest, ManifestState, Version};
use crate::vlog::vlog_file_name;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// How a checkpoint is made.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct CheckpointOptions {
    /// Hard-link immutable files where the file system allows (same device); copy otherwise.
    /// `false` copies everything (a backup that must not share the source's disk blocks).
    pub hard_links: bool,
}

impl Default for CheckpointOptions {
    fn default() -> Self {
        CheckpointOptions { hard_links: true }
    }
}

impl CheckpointOptions {
    /// Sets [`CheckpointOptions::hard_links`].
    pub fn hard_links(mut self, on: bool) -> Self {
        self.hard_links = on;
        self
    }
}

/// Bytes copied per read when a file or a PM region is copied.
const COPY_CHUNK: usize = 4 << 20;

impl Db {
    /// Makes an openable copy of the database in `dir` (which must not exist) while it keeps
    /// running: every write acknowledged before the call is in the copy. Immutable files are
    /// hard-linked where possible; open the copy with `pm_path` unset (its PM directory is
    /// `<dir>/pm`).
    ///
    /// ```
    /// # let tmp = tempfile::tempdir().unwrap();
    /// # let opts = flatlsm::Options::default().pm_path(tmp.path().join("pm"));
    /// let db = flatlsm::Db::open(tmp.path().join("db"), opts)?;
    /// db.put("k", "v")?;
    /// db.checkpoint(tmp.path().join("copy"))?;
    /// let copy = flatlsm::Db::open(tmp.path().join("copy"), flatlsm::Options::default())?;
    /// assert_eq!(copy.get("k")?.as_deref(), Some(&b"v"[..]));
    /// # Ok::<(), flatlsm::Error>(())
    /// ```
    pub fn checkpoint(&self, dir: impl AsRef<Path>) -> Result<()> {
        self.checkpoint_opt(dir, &CheckpointOptions::default())
    }

    /// [`Db::checkpoint`] with explicit options (copies instead of hard links).
    pub fn checkpoint_opt(&self, dir: impl AsRef<Path>, opts: &CheckpointOptions) -> Result<()> {
        self.check_open()?;
        self.inner.checkpoint(dir.as_ref(), opts.hard_links)
    }
}

impl DbInner {
    fn checkpoint(&self, dir: &Path, links: bool) -> Result<()> {
        self.check_writable()?;
        self.check_checkpoint_target(dir)?;
        flush_all(self)?;
        self.sync_point("checkpoint:flushed");
        let tmp = tmp_dir(dir);
        let made = self.frozen(|| self.write_copy(&tmp, links));
        self.bg.wake_all(); // flush threads that found the queue held
        if let Err(e) = made {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
        std::fs::rename(&tmp, dir)
            .context(|| format!("renaming {} to {}", tmp.display(), dir.display()))?;
        let parent = dir.parent().unwrap_or(Path::new("."));
        self.files
            .fs()
            .sync_dir(parent)
            .context(|| format!("syncing {}", parent.display()))
    }

    /// Runs `f` with the tree and the design's PM store frozen. Writers first: a writer holding
    /// `write_lock` may wait for a flush, and a MatrixKV flush for a column compaction
    /// (`compaction_lock`) to free container room. With writers stopped, no buffer is sealed;
    /// the flush queue is held (no new claim: a buffer sealed before `write_lock` was taken
    /// stays in its PM Log, and the copy does not need it) and the flushes in flight finish
    /// (their compactions can still run); then the background jobs are stopped in their turn.
    fn frozen<T>(&self, f: impl FnOnce() -> T) -> T {
        let _writes = self.writes.lock();
        let _flushes = self.flush_queue.hold();
        let _compaction = self.bg.compaction_lock();
        let _gc = self.bg.vlog_gc_lock();
        self.sync_point("checkpoint:frozen");
        f()
    }

    /// `dir` must be new, and the design's PM state must be copyable (a PM directory).
    fn check_checkpoint_target(&self, dir: &Path) -> Result<()> {
        if dir.exists() {
            return Err(Error::InvalidArgument(format!(
                "checkpoint directory {} already exists",
                dir.display()
            )));
        }
        if self.opts.pm_device.is_some() && !self.design.store().store_regions().is_empty() {
            return Err(Error::InvalidArgument(
                "a checkpoint copies the design's PM store from a PM directory; this database \
                 runs on an injected PM device"
                    .into(),
            ));
        }
        let _ = std::fs::remove_dir_all(tmp_dir(dir)); // an interrupted earlier attempt
        Ok(())
    }

    /// Everything of the copy, in `tmp`; the caller holds the locks that freeze the tree.
    fn write_copy(&self, tmp: &Path, links: bool) -> Result<()> {
        let pm_tmp = tmp.join("pm");
        for d in [tmp, &pm_tmp] {
            std::fs::create_dir_all(d).context(|| format!("creating {}", d.display()))?;
        }
        let version = self.versions.current();
        for (src, dst) in self.immutable_files(&version, tmp) {
            self.link_or_copy(&src, &dst, links)?;
        }
        for name in self.design.store().store_regions() {
            self.copy_region(name, &pm_tmp.join(name))?;
        }
        let identity = self.design.uses_pm_dir().then(IdentityPlan::fresh);
        if let Some(plan) = &identity {
            plan.apply(self.files.dyn_fs(), tmp, &pm_tmp)?;
        }
        self.write_manifest(tmp, &version, identity.map(|p| p.id().to_string()))?;
        let mut opts = self.opts.clone();
        (opts.pm_path, opts.wal_dir, opts.file_system) = (None, None, None);
        crate::options::write_options_file(self.files.dyn_fs(), tmp, &opts)?;
        // Every database directory has one (a reader's lock needs the file to exist).
        let lock = tmp.join(crate::layout::lock::LOCK_FILE);
        self.files
            .fs()
            .create(&lock)
            .and_then(|mut f| f.sync())
            .context(|| format!("creating {}", lock.display()))?;
        for d in [&pm_tmp, tmp] {
            self.files
                .fs()
                .sync_dir(d)
                .context(|| format!("syncing {}", d.display()))?;
        }
        Ok(())
    }

    /// (source, destination) of every SST, value log and redirect table of `version`.
    fn immutable_files(&self, version: &Version, tmp: &Path) -> Vec<(PathBuf, PathBuf)> {
        let dirs = self.files.table_cache().dirs();
        let ssts = version.levels.iter().flatten().map(|f| {
            let name = sst_file_name(f.number);
            let to = match f.dir {
                SstDir::Data => tmp.join(&name),
                SstDir::Pm => tmp.join("pm").join(&name),
            };
            (dirs.dir(f.dir).join(&name), to)
        });
        let vlogs = version.vlogs.keys().map(|&n| vlog_file_name(n));
        let redirects = version
            .redirects
            .values()
            .map(|r| redirect_file_name(r.number));
        let others = vlogs
            .chain(redirects)
            .map(|name| (self.files.path().join(&name), tmp.join(name)));
        ssts.chain(others).collect()
    }

    /// A hard link of `src` at `dst` if asked and possible (the OS file system, same device),
    /// else a synced copy through the database's file system.
    fn link_or_copy(&self, src: &Path, dst: &Path, links: bool) -> Result<()> {
        if links && self.opts.file_system.is_none() && std::fs::hard_link(src, dst).is_ok() {
            return Ok(());
        }
        let from = self
            .files
            .fs()
            .open(src)
            .context(|| format!("opening {}", src.display()))?;
        let len = from
            .size()
            .context(|| format!("stat of {}", src.display()))?;
        let mut to = self
            .files
            .fs()
            .create(dst)
            .context(|| format!("creating {}", dst.display()))?;
        let mut buf = vec![0u8; COPY_CHUNK];
        let mut at = 0u64;
        while at < len {
            let n = (len - at).min(COPY_CHUNK as u64) as usize;
            from.read_exact_at(at, &mut buf[..n])
                .context(|| format!("reading {} at {at}", src.display()))?;
            to.append(&buf[..n])
                .context(|| format!("writing {}", dst.display()))?;
            at += n as u64;
        }
        to.sync().context(|| format!("syncing {}", dst.display()))
    }

    /// PM region `name` of the database's PM directory copied to the file `dst`. Read as a
    /// file: the region's mappings are shared, so the page cache (or DAX media) holds every
    /// store made to it, and no job changes it while the caller holds the locks.
    fn copy_region(&self, name: &str, dst: &Path) -> Result<()> {
        let src = crate::layout::pm_dir_of(self.files.path(), &self.opts).join(name);
        std::fs::copy(&src, dst)
            .context(|| format!("copying PM region {} to {}", src.display(), dst.display()))?;
        std::fs::File::open(dst)
            .and_then(|f| f.sync_all())
            .context(|| format!("syncing {}", dst.display()))
    }

    /// The copy's manifest: the current version, no write buffer to recover.
    fn write_manifest(
        &self,
        tmp: &Path,
        version: &Version,
        identity: Option<String>,
    ) -> Result<()> {
        let number = self.new_file_number();
        let state = ManifestState {
            version: version.clone(),
            next_file_number: number + 1,
            last_sequence: self.writes.visible(),
            min_unflushed_pmlog: number + 1,
            pm_logs: Some(BTreeSet::new()),
            identity,
            profile: Some(self.opts.profile.name().to_string()),
        };
        Manifest::create(self.files.fs().clone(), tmp, number, &state).map(drop)
    }
}

/// Where a checkpoint into `dir` is built before the rename that commits it.
fn tmp_dir(dir: &Path) -> PathBuf {
    let mut s = dir.as_os_str().to_owned();
    s.push(".checkpoint-tmp");
    PathBuf::from(s)
}
