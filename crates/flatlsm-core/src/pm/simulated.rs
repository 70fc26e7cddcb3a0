//! [`SimulatedPmDevice`]: an in-memory PM device that can "pull the plug".
//!
//! Each region keeps a *volatile* image (what loads see: CPU caches + PM) and a *durable* image
//! (what has reached the persistence domain). `write`/`store_u64` change the volatile image and
//! mark the touched cache lines dirty; `persist` copies the covering lines volatile → durable,
//! whole lines at a time, as a cache-line write-back does.
//!
//! A power loss keeps the durable image plus any subset of the dirty lines (the CPU may have
//! evicted them on its own), and within such a line any subset of its aligned 8-byte words
//! (8-byte stores are atomic; wider copies may tear). [`SimulatedPmDevice::crash`] builds a new
//! device from such an image, chosen by a seeded PRNG so failures are reproducible;
//! [`SimulatedPmDevice::freeze_after_persists`] captures the image at an exact persist point.
//!
//! A process crash keeps every store, persisted or not: [`SimulatedPmDevice::crash_process`] and
//! [`CrashKind::ProcessCrash`] recordings build such images.
//!
//! By default regions report [`PmMode::Simulated`] (a cache-line mode); a device made with
//! [`SimulatedPmDevice::with_group_commit`] reports [`PmMode::Msync`], so writers persist only at
//! commits, as on an ordinary file, while persistence is still simulated line by line.
//!
//! Non-temporal stores ([`PmRegion::write_streaming`]) are modelled as unordered: until the
//! next [`PmRegion::drain_streaming`] of the region a `persist` does not make them durable (their
//! lines stay dirty, so a crash keeps any subset of their words). A writer that persists
//! streamed bytes without draining them first thus loses them in crash tests, as it could on
//! hardware whose fence is what empties the write-combining buffers.
//!
//! Region creation, renaming and removal are durable immediately (zero-filled at creation).
//!
//! Lock order: the device's `inner` mutex, then a region's `lines` mutex.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::raw::RawMapping;
use super::{PmDevice, PmMode, PmRegion, CACHE_LINE};
use crate::error::{Error, Result};
use capture::{capture, capture_all, capture_of};

/// A crash image: the bytes every region would hold after the power loss.
type Image = BTreeMap<String, Vec<u8>>;

/// In-memory PM device for crash tests.
pub struct SimulatedPmDevice {
    dir: PathBuf,
    shared: Arc<Shared>,
}

struct Shared {
    inner: Mutex<Inner>,
    /// The mode regions report.
    mode: PmMode,
}

/// What kind of crash a recorded image stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashKind {
    /// Power loss: durable lines plus a random subset of dirty lines and words.
    PowerLoss,
    /// Process crash: every store survives (the mapping outlives the process).
    ProcessCrash,
}

struct Inner {
    regions: BTreeMap<String, Arc<RegionData>>,
    persists: u64,
    /// When to capture the crash image.
    freeze_at: Option<Freeze>,
    frozen: Option<Image>,
    /// Many crash points recorded in one run (see [`SimulatedPmDevice::record_crash_points`]).
    recorder: Option<Recorder>,
    /// Persists fail with EIO once this many have completed (fault injection).
    fail_after: Option<u64>,
}

/// Crash images recorded at many persist points of one run.
struct Recorder {
    /// Persist numbers `n` at which to capture an image when persist `n + 1` starts.
    points: BTreeSet<u64>,
    seed: u64,
    kind: CrashKind,
    /// Called with `n` right after each capture, with the device lock held: it must not call
    /// back into the device (it may capture other state, e.g. a file-system image).
    on_capture: Option<CaptureHook>,
    images: Vec<PmCrashImage>,
}

/// Callback of [`SimulatedPmDevice::record_crash_points`].
pub type CaptureHook = Box<dyn FnMut(u64) + Send>;

/// What a power loss at one point of a run could have left on the device.
#[derive(Clone)]
pub struct PmCrashImage {
    /// Persists completed when the image was taken.
    pub persists: u64,
    image: Image,
}

impl PmCrashImage {
    /// Total bytes held (for memory budgeting by tests).
    pub fn bytes(&self) -> usize {
        self.image.values().map(Vec::len).sum()
    }
}

/// A planned freeze: after persist `n` completes, or (`before`) when persist `n + 1` starts, so
/// that stores issued between the two persists are in the image too.
#[derive(Clone, Copy)]
struct Freeze {
    n: u64,
    seed: u64,
    before: bool,
}

struct RegionData {
    path: PathBuf,
    volatile: RawMapping,
    lines: Mutex<Lines>,
}

/// Durability state of a region. Invariant: a line not in `dirty` is equal in both images.
struct Lines {
    durable: Vec<u8>,
    dirty: BTreeSet<usize>,
    /// Lines holding non-temporal stores not yet ordered by a `drain_streaming` (a subset of
    /// `dirty`): a `persist` leaves them dirty, so a crash may still lose them.
    unfenced: BTreeSet<usize>,
}

impl SimulatedPmDevice {
    /// An empty device in a cache-line mode.
    pub fn new() -> Arc<Self> {
        Self::from_image(Image::new(), PmMode::Simulated)
    }

    /// An empty device whose regions report [`PmMode::Msync`]: writers persist only at commits.
    pub fn with_group_commit() -> Arc<Self> {
        Self::from_image(Image::new(), PmMode::Msync)
    }

    fn from_image(image: Image, mode: PmMode) -> Arc<Self> {
        let dir = PathBuf::from("simulated-pm");
        let regions = image
            .into_iter()
            .map(|(name, bytes)| {
                let data = RegionData::new(dir.join(&name), bytes);
                (name, Arc::new(data))
            })
            .collect();
        Arc::new(SimulatedPmDevice {
            dir,
            shared: Arc::new(Shared {
                inner: Mutex::new(Inner {
                    regions,
                    persists: 0,
                    freeze_at: None,
                    frozen: None,
                    recorder: None,
                    fail_after: None,
                }),
                mode,
            }),
        })
    }

    /// Number of `persist` calls so far, over all regions.
    pub fn persist_count(&self) -> u64 {
        self.shared.inner.lock().persists
    }

    /// Captures the crash image when the persist counter reaches `n` (right away if it already
    /// has): the durable images plus a `seed`-chosen subset of dirty lines and words. Later
    /// writes, persists, creations and removals leave that image alone. A new call replaces an
    /// earlier freeze.
    pub fn freeze_after_persists(&self, n: u64, seed: u64) {
        self.plan_freeze(Freeze {
            n,
            seed,
            before: false,
        });
    }

    /// Like [`Self::freeze_after_persists`], but the image is captured when persist number
    /// `n + 1` *starts* (or at [`Self::crash`] if it never does), so it also holds the writes and
    /// stores issued after persist `n` — e.g. a commit record stored too early. Captured at once
    /// if more than `n` persists already happened.
    pub fn freeze_before_persist(&self, n: u64, seed: u64) {
        self.plan_freeze(Freeze {
            n,
            seed,
            before: true,
        });
    }

    fn plan_freeze(&self, plan: Freeze) {
        let mut inner = self.shared.inner.lock();
        inner.frozen = None;
        inner.freeze_at = Some(plan);
        let passed = if plan.before {
            inner.persists > plan.n
        } else {
            inner.persists >= plan.n
        };
        if passed {
            inner.frozen = Some(capture(&inner.regions, plan.seed));
        }
    }

    /// A new device holding what a power loss now (or at the frozen point) could leave: the
    /// frozen image if [`Self::freeze_after_persists`] fired, else the durable images plus a
    /// `seed`-chosen subset of the dirty lines and words.
    pub fn crash(&self, seed: u64) -> Arc<SimulatedPmDevice> {
        let inner = self.shared.inner.lock();
        let image = match (&inner.frozen, inner.freeze_at) {
            (Some(image), _) => image.clone(),
            (None, Some(plan)) if plan.before && inner.persists == plan.n => {
                capture(&inner.regions, plan.seed)
            }
            (None, _) => capture(&inner.regions, seed),
        };
        Self::from_image(image, self.shared.mode)
    }

    /// A new device holding what a process crash now leaves: every store, persisted or not.
    pub fn crash_process(&self) -> Arc<SimulatedPmDevice> {
        let inner = self.shared.inner.lock();
        Self::from_image(capture_all(&inner.regions), self.shared.mode)
    }

    /// Records a crash image each time persist `n + 1` starts for `n` in `points` (so the image
    /// also holds the stores issued since persist `n`), each with its own seed derived from
    /// `seed` and `n`. `on_capture(n)` runs right after each capture (see [`CaptureHook`]).
    /// Replaces an earlier recording; [`Self::take_crash_images`] collects the images.
    pub fn record_crash_points(
        &self,
        points: BTreeSet<u64>,
        seed: u64,
        on_capture: Option<CaptureHook>,
    ) {
        self.record_crash_points_of(CrashKind::PowerLoss, points, seed, on_capture);
    }

    /// [`Self::record_crash_points`] for crashes of `kind`.
    pub fn record_crash_points_of(
        &self,
        kind: CrashKind,
        points: BTreeSet<u64>,
        seed: u64,
        on_capture: Option<CaptureHook>,
    ) {
        self.shared.inner.lock().recorder = Some(Recorder {
            points,
            seed,
            kind,
            on_capture,
            images: Vec::new(),
        });
    }

    /// The images recorded so far (oldest first); recording continues.
    pub fn take_crash_images(&self) -> Vec<PmCrashImage> {
        let mut inner = self.shared.inner.lock();
        inner
            .recorder
            .as_mut()
            .map(|r| std::mem::take(&mut r.images))
            .unwrap_or_default()
    }

    /// Makes every persist fail with EIO (changing nothing durable) once `n` persists have
    /// completed; `None` heals the device.
    pub fn fail_persists_after(&self, n: Option<u64>) {
        self.shared.inner.lock().fail_after = n;
    }

    /// Stops recording crash points (dropping the hook).
    pub fn stop_recording(&self) {
        self.shared.inner.lock().recorder = None;
    }

    /// What a power loss right now could leave: durable images plus a `seed`-chosen subset of
    /// the dirty lines and words.
    pub fn capture_now(&self, seed: u64) -> PmCrashImage {
        self.capture_now_of(CrashKind::PowerLoss, seed)
    }

    /// What a crash of `kind` right now could leave (`seed` chooses for a power loss).
    pub fn capture_now_of(&self, kind: CrashKind, seed: u64) -> PmCrashImage {
        let inner = self.shared.inner.lock();
        PmCrashImage {
            persists: inner.persists,
            image: capture_of(kind, &inner.regions, seed),
        }
    }

    /// A new device holding `image` (as after the crash it describes), in this device's mode.
    pub fn reopen_crash_image(&self, image: &PmCrashImage) -> Arc<SimulatedPmDevice> {
        Self::from_image(image.image.clone(), self.shared.mode)
    }

    /// A new cache-line-mode device holding `image` (as after the crash it describes).
    pub fn from_crash_image(image: &PmCrashImage) -> Arc<SimulatedPmDevice> {
        Self::from_image(image.image.clone(), PmMode::Simulated)
    }

    /// Names of the regions present, sorted.
    pub fn region_names(&self) -> Vec<String> {
        self.shared.inner.lock().regions.keys().cloned().collect()
    }

    /// A copy of the durable image of region `name`, if it exists.
    pub fn durable_image(&self, name: &str) -> Option<Vec<u8>> {
        let inner = self.shared.inner.lock();
        let data = inner.regions.get(name)?;
        let image = data.lines.lock().durable.clone();
        Some(image)
    }

    /// Overwrites bytes of region `name` in both images (as if the media changed them), for
    /// corruption tests.
    pub fn corrupt(&self, name: &str, offset: usize, bytes: &[u8]) -> Result<()> {
        let inner = self.shared.inner.lock();
        let data = inner
            .regions
            .get(name)
            .ok_or_else(|| not_found(&self.dir, name))?;
        let in_range = offset
            .checked_add(bytes.len())
            .is_some_and(|end| end <= data.volatile.len());
        if !in_range {
            return Err(Error::InvalidArgument(format!(
                "corrupt [{offset}, +{}) is outside {}",
                bytes.len(),
                data.path.display()
            )));
        }
        let mut lines = data.lines.lock();
        data.volatile.write(offset, bytes);
        lines.durable[offset..offset + bytes.len()].copy_from_slice(bytes);
        Ok(())
    }

    fn region(&self, data: Arc<RegionData>) -> Arc<dyn PmRegion> {
        Arc::new(SimulatedPmRegion {
            data,
            shared: Arc::clone(&self.shared),
        })
    }
}

impl Inner {
    /// Captures the image if the planned point is reached; `starting` tells whether a persist is
    /// about to start (true) or has just completed (false).
    fn maybe_freeze(&mut self, starting: bool) {
        if starting {
            self.maybe_record();
        }
        if let (None, Some(plan)) = (&self.frozen, self.freeze_at) {
            let due = if plan.before {
                starting && self.persists == plan.n
            } else {
                !starting && self.persists >= plan.n
            };
            if due {
                self.frozen = Some(capture(&self.regions, plan.seed));
            }
        }
    }
}

impl Inner {
    /// Records an image if persist `persists + 1` is starting at a planned point.
    fn maybe_record(&mut self) {
        let n = self.persists;
        let Some(rec) = self.recorder.as_mut() else {
            return;
        };
        if !rec.points.contains(&n) {
            return;
        }
        let seed = rec.seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let image = capture_of(rec.kind, &self.regions, seed);
        rec.images.push(PmCrashImage { persists: n, image });
        if let Some(hook) = rec.on_capture.as_mut() {
            hook(n);
        }
    }
}

impl RegionData {
    fn new(path: PathBuf, bytes: Vec<u8>) -> Self {
        let volatile = RawMapping::anonymous(bytes.len());
        volatile.write(0, &bytes);
        RegionData {
            path,
            volatile,
            lines: Mutex::new(Lines {
                durable: bytes,
                dirty: BTreeSet::new(),
                unfenced: BTreeSet::new(),
            }),
        }
    }

    /// Cache-line indices covering `[offset, offset + len)` (empty for `len == 0`).
    fn line_range(offset: usize, len: usize) -> std::ops::Range<usize> {
        if len == 0 {
            return 0..0;
        }
        offset / CACHE_LINE..(offset + len - 1) / CACHE_LINE + 1
    }
}

fn not_found(dir: &Path, name: &str) -> Error {
    Error::io(
        format!("opening PM region {}", dir.join(name).display()),
        io::Error::from(io::ErrorKind::NotFound),
    )
}

fn validate_name(name: &str) -> Result<()> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
        return Err(Error::InvalidArgument(format!(
            "invalid PM region name {name:?}: must be a plain file name"
        )));
    }
    Ok(())
}

impl PmDevice for SimulatedPmDevice {
    fn mode(&self) -> PmMode {
        self.shared.mode
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn create_region(&self, name: &str, size: usize) -> Result<Arc<dyn PmRegion>> {
        validate_name(name)?;
        let path = self.dir.join(name);
        if size == 0 {
            return Err(Error::InvalidArgument(format!(
                "PM region {} must not be empty",
                path.display()
            )));
        }
        let mut inner = self.shared.inner.lock();
        if inner.regions.contains_key(name) {
            return Err(Error::io(
                format!("creating PM region {}", path.display()),
                io::Error::from(io::ErrorKind::AlreadyExists),
            ));
        }
        let data = Arc::new(RegionData::new(path, vec![0; size]));
        inner.regions.insert(name.to_string(), Arc::clone(&data));
        drop(inner);
        Ok(self.region(data))
    }

    fn open_region(&self, name: &str) -> Result<Arc<dyn PmRegion>> {
        validate_name(name)?;
        let data = self.shared.inner.lock().regions.get(name).cloned();
        let data = data.ok_or_else(|| not_found(&self.dir, name))?;
        Ok(self.region(data))
    }

    fn remove_region(&self, name: &str) -> Result<()> {
        validate_name(name)?;
        let removed = self.shared.inner.lock().regions.remove(name);
        removed.map(drop).ok_or_else(|| not_found(&self.dir, name))
    }

    fn rename_region(&self, from: &str, to: &str) -> Result<()> {
        validate_name(from)?;
        validate_name(to)?;
        let mut inner = self.shared.inner.lock();
        if inner.regions.contains_key(to) {
            let path = self.dir.join(to);
            return Err(Error::InvalidState(format!(
                "PM region {} already exists",
                path.display()
            )));
        }
        let data = inner
            .regions
            .remove(from)
            .ok_or_else(|| not_found(&self.dir, from))?;
        inner.regions.insert(to.to_string(), data);
        Ok(())
    }

    fn list_regions(&self) -> Result<Vec<String>> {
        Ok(self.region_names())
    }

    fn sync_dir(&self) -> Result<()> {
        Ok(())
    }
}

/// A region of a [`SimulatedPmDevice`].
pub struct SimulatedPmRegion {
    data: Arc<RegionData>,
    shared: Arc<Shared>,
}

impl PmRegion for SimulatedPmRegion {
    fn path(&self) -> &Path {
        &self.data.path
    }

    fn len(&self) -> usize {
        self.data.volatile.len()
    }

    fn mode(&self) -> PmMode {
        self.shared.mode
    }

    fn read(&self, offset: usize, len: usize) -> &[u8] {
        self.data.volatile.read(offset, len)
    }

    fn write(&self, offset: usize, data: &[u8]) {
        let mut lines = self.data.lines.lock();
        self.data.volatile.write(offset, data);
        lines
            .dirty
            .extend(RegionData::line_range(offset, data.len()));
    }

    /// Non-temporal stores: dirty like `write`, and unfenced until `drain_streaming`. The
    /// model is the strictest of the modes' rules: DAX needs the fence (a flush does not reach
    /// bytes still in write-combining buffers on every CPU), msync needs the persist, so only
    /// drained *and* persisted streamed bytes are durable.
    fn write_streaming(&self, offset: usize, data: &[u8]) {
        self.write(offset, data);
        let mut lines = self.data.lines.lock();
        lines
            .unfenced
            .extend(RegionData::line_range(offset, data.len()));
    }

    fn drain_streaming(&self) {
        self.data.lines.lock().unfenced.clear();
    }

    fn store_u64(&self, offset: usize, value: u64) {
        let mut lines = self.data.lines.lock();
        self.data.volatile.store_u64(offset, value);
        lines.dirty.insert(offset / CACHE_LINE);
    }

    fn load_u64(&self, offset: usize) -> u64 {
        self.data.volatile.load_u64(offset)
    }

    fn persist(&self, offset: usize, len: usize) -> io::Result<()> {
        let _ = self.data.volatile.read(offset, len); // bounds check: panics on a caller bug
        let mut inner = self.shared.inner.lock();
        if inner.fail_after.is_some_and(|n| inner.persists >= n) {
            return Err(io::Error::other("injected persist failure"));
        }
        inner.maybe_freeze(true);
        {
            let mut lines = self.data.lines.lock();
            let size = self.len();
            for line in RegionData::line_range(offset, len) {
                if !lines.unfenced.contains(&line) && lines.dirty.remove(&line) {
                    let start = line * CACHE_LINE;
                    let end = (start + CACHE_LINE).min(size);
                    let src = self.data.volatile.read(start, end - start);
                    lines.durable[start..end].copy_from_slice(src);
                }
            }
        }
        inner.persists += 1;
        inner.maybe_freeze(false);
        Ok(())
    }
}

#[path = "simulated_capture.rs"]
mod capture;

#[cfg(test)]
#[path = "simulated_tests.rs"]
mod tests;
