//! [`CrashFs`]: an in-memory file system for crash and fault tests.
//!
//! It keeps two views, as LevelDB's `fault_injection_test` does:
//! - the *live* view (what the running process sees): every created, renamed and removed name,
//!   every appended byte;
//! - the *durable* view: a file's bytes up to its last `sync`, and a directory's entries as of
//!   its last `sync_dir`. A create, rename or remove is not durable until the directory is synced.
//!
//! [`CrashFs::capture`] returns what a power loss now could leave: the durable directory entries,
//! each file holding its synced bytes plus, chosen by a seed: nothing more (half the files), a
//! prefix of its unsynced tail (as file systems that write data in order may keep), or a run of
//! zeros (the size grew but the data never reached the disk). [`CrashFs::capture_pages`] models
//! a kernel writing dirty pages back in any order: each 4 KiB page of an unsynced tail is kept
//! or lost (zeros) independently, so a lost page may come before a kept one. [`CrashFs::capture_process`]
//! returns what a process crash leaves: the live view whole (the page cache survives).
//! [`CrashFs::from_image`] starts a new file system from such an image.
//!
//! Direct files ([`FileSystem::create_direct`]) are ordinary files here: a `write_at` counts as
//! an append (a short write keeps the first half of the block run), `set_len` changes the live
//! length (what is synced shrinks with it), and they report the mode asked for.
//!
//! Faults: a [`FaultPlan`] makes chosen calls fail (ENOSPC, EIO, short writes);
//! [`CrashFs::injected_faults`] counts them. A hook can observe every counted call (e.g. to
//! capture crash images at chosen calls).
//!
//! The info log (`LOG`, `LOG.old.*`: [`crate::file_names::is_info_log_file_name`]) is stored
//! like any file but its calls are neither counted nor failed: it is diagnostics outside the
//! durability protocol the fault tests walk call by call, and a LOG line written or not must
//! not shift the numbers of the calls that matter (docs/design-decisions.md, "The info log").
//!
//! Directories are durable as soon as they are created. Files live in a map keyed by path; a
//! file that is removed or replaced stays readable through handles opened before.
//!
//! Lock order: `state`, then a file's mutex. The call hook runs with no lock held.

use super::fault_plan::{mix, FaultKind, FaultPlan};
use super::{DirectFile, FileSystem, RandomAccessFile, WritableFile};
use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The kinds of calls a [`CrashFs`] counts (and may fail).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsCall {
    /// `create` or `open_append`.
    Open,
    /// `append`.
    Append,
    /// `sync` of a file.
    Sync,
    /// `set_len` of a direct file (cutting the padding of its last block).
    SetLen,
    /// `rename`.
    Rename,
    /// `remove_file`.
    Remove,
    /// `sync_dir`.
    SyncDir,
}

/// Callback run before each counted call with its number and kind (no lock held).
pub type CallHook = Box<dyn FnMut(u64, FsCall) + Send>;

/// One file's bytes and how many of them are durable.
#[derive(Default)]
struct FileData {
    data: Vec<u8>,
    synced: usize,
}

type FileRef = Arc<Mutex<FileData>>;

#[derive(Default)]
struct State {
    dirs: BTreeSet<PathBuf>,
    live: BTreeMap<PathBuf, FileRef>,
    durable: BTreeMap<PathBuf, FileRef>,
    calls: u64,
    plan: FaultPlan,
    injected: u64,
}

/// What a crash left: directories and file contents.
#[derive(Clone, Debug, Default)]
pub struct FsImage {
    dirs: BTreeSet<PathBuf>,
    files: BTreeMap<PathBuf, Vec<u8>>,
}

impl FsImage {
    /// Total bytes held (for memory budgeting by tests).
    pub fn bytes(&self) -> usize {
        self.files.values().map(Vec::len).sum()
    }

    /// The names of the files the image holds, sorted.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.files.keys().cloned().collect()
    }

    /// The bytes of file `path` in the image, to damage them (tests of damage after a crash).
    pub fn file_mut(&mut self, path: &Path) -> Option<&mut Vec<u8>> {
        self.files.get_mut(path)
    }
}

struct Shared {
    state: Mutex<State>,
    hook: Mutex<Option<CallHook>>,
}

/// In-memory file system that forgets unsynced data and directory entries at a simulated crash.
pub struct CrashFs {
    shared: Arc<Shared>,
}

impl CrashFs {
    /// An empty file system.
    pub fn new() -> Arc<Self> {
        Self::from_image(&FsImage::default())
    }

    /// A file system holding `image`, everything in it durable.
    pub fn from_image(image: &FsImage) -> Arc<Self> {
        let mut state = State {
            dirs: image.dirs.clone(),
            ..State::default()
        };
        for (path, bytes) in &image.files {
            let f = Arc::new(Mutex::new(FileData {
                data: bytes.clone(),
                synced: bytes.len(),
            }));
            state.live.insert(path.clone(), Arc::clone(&f));
            state.durable.insert(path.clone(), f);
        }
        Arc::new(CrashFs {
            shared: Arc::new(Shared {
                state: Mutex::new(state),
                hook: Mutex::new(None),
            }),
        })
    }

    /// What a power loss now could leave (see the module documentation); `seed` chooses what
    /// becomes of each unsynced tail.
    pub fn capture(&self, seed: u64) -> FsImage {
        let st = self.shared.state.lock();
        let mut files = BTreeMap::new();
        for (i, (path, f)) in st.durable.iter().enumerate() {
            let f = f.lock();
            let unsynced = f.data.len() - f.synced;
            let r = mix(seed ^ (i as u64).wrapping_mul(0xA24B_AED4_963E_E407));
            let len = (r >> 2) as usize % (unsynced + 1);
            let mut bytes = f.data[..f.synced].to_vec();
            match r & 3 {
                // The file system wrote part of the tail, in order.
                2 => bytes.extend_from_slice(&f.data[f.synced..f.synced + len]),
                // The size grew but the data blocks were never written: zeros.
                3 => bytes.resize(f.synced + len, 0),
                _ => {}
            }
            files.insert(path.clone(), bytes);
        }
        FsImage {
            dirs: st.dirs.clone(),
            files,
        }
    }

    /// What a power loss now could leave if the kernel wrote the dirty pages of unsynced tails
    /// back in any order: the durable directory entries, each file holding its synced bytes
    /// and, of its unsynced tail, each [`PAGE_SIZE`] page (by file offset) kept or lost
    /// independently, as `seed` chooses. A lost page reads as zeros; the file ends after its
    /// last kept page, or at its whole length when the size reached the disk (seed again).
    pub fn capture_pages(&self, seed: u64) -> FsImage {
        let st = self.shared.state.lock();
        let files = st.durable.iter().enumerate().map(|(i, (path, f))| {
            let r = mix(seed ^ (i as u64).wrapping_mul(0xA24B_AED4_963E_E407));
            (path.clone(), pages_written_back(&f.lock(), r))
        });
        FsImage {
            dirs: st.dirs.clone(),
            files: files.collect(),
        }
    }

    /// What a process crash now leaves: every live name with every byte written, synced or not.
    pub fn capture_process(&self) -> FsImage {
        let st = self.shared.state.lock();
        let files = st
            .live
            .iter()
            .map(|(path, f)| (path.clone(), f.lock().data.clone()))
            .collect();
        FsImage {
            dirs: st.dirs.clone(),
            files,
        }
    }

    /// Sets which calls fail from now on (replacing the previous plan).
    pub fn set_fault_plan(&self, plan: FaultPlan) {
        self.shared.state.lock().plan = plan;
    }

    /// Number of faults injected so far.
    pub fn injected_faults(&self) -> u64 {
        self.shared.state.lock().injected
    }

    /// Number of counted calls so far (the number the next call will get).
    pub fn call_count(&self) -> u64 {
        self.shared.state.lock().calls
    }

    /// Installs (or with `None` removes) the hook run before each counted call.
    pub fn set_call_hook(&self, hook: Option<CallHook>) {
        *self.shared.hook.lock() = hook;
    }

    /// The live bytes of `path` (for tests that inspect what was written).
    pub fn live_contents(&self, path: &Path) -> Option<Vec<u8>> {
        let st = self.shared.state.lock();
        st.live.get(path).map(|f| f.lock().data.clone())
    }
}

impl Shared {
    /// Numbers a call, runs the hook, and returns the fault planned for it (counted).
    fn begin(&self, call: FsCall) -> Option<FaultKind> {
        let number = {
            let mut st = self.state.lock();
            st.calls += 1;
            st.calls - 1
        };
        if let Some(hook) = self.hook.lock().as_mut() {
            hook(number, call);
        }
        let mut st = self.state.lock();
        let fault = st.plan.fault_for(number);
        if fault.is_some() {
            st.injected += 1;
        }
        fault
    }

    fn check(&self, call: FsCall) -> io::Result<()> {
        match self.begin(call) {
            Some(kind) => Err(kind.error()),
            None => Ok(()),
        }
    }
}

/// The unit [`CrashFs::capture_pages`] keeps or loses: a page of the page cache.
pub const PAGE_SIZE: usize = 4096;

/// `f` after a power loss during which the kernel wrote some pages of its unsynced tail back
/// (chosen by `r`), in no particular order.
fn pages_written_back(f: &FileData, r: u64) -> Vec<u8> {
    let mut bytes = f.data.clone();
    let mut end = f.synced;
    for page in f.synced / PAGE_SIZE..f.data.len().div_ceil(PAGE_SIZE) {
        let start = (page * PAGE_SIZE).max(f.synced);
        let stop = ((page + 1) * PAGE_SIZE).min(f.data.len());
        match mix(r.wrapping_add(page as u64)) & 1 {
            0 => bytes[start..stop].fill(0),
            _ => end = stop,
        }
    }
    if r & 1 == 0 {
        bytes.truncate(end); // the size on disk is the end of the last page written back
    }
    bytes
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{} does not exist", path.display()),
    )
}

/// True for files whose calls are neither counted nor failed (the info log).
fn uncounted(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(crate::file_names::is_info_log_file_name)
}

/// A file open for appending.
struct CrashWritable {
    file: FileRef,
    shared: Arc<Shared>,
    /// False for the info log (see [`uncounted`]).
    counted: bool,
}

impl CrashWritable {
    /// The fault planned for this file's next call (none for an uncounted file).
    fn begin(&self, call: FsCall) -> Option<FaultKind> {
        self.counted.then(|| self.shared.begin(call)).flatten()
    }
}

impl WritableFile for CrashWritable {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        match self.begin(FsCall::Append) {
            None => {
                self.file.lock().data.extend_from_slice(data);
                Ok(())
            }
            Some(FaultKind::ShortWrite) => {
                self.file
                    .lock()
                    .data
                    .extend_from_slice(&data[..data.len() / 2]);
                Err(FaultKind::ShortWrite.error())
            }
            Some(kind) => Err(kind.error()),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        if let Some(kind) = self.begin(FsCall::Sync) {
            return Err(kind.error());
        }
        let mut f = self.file.lock();
        f.synced = f.data.len();
        Ok(())
    }
    fn len(&self) -> u64 {
        self.file.lock().data.len() as u64
    }
}

/// A file written in blocks through [`FileSystem::create_direct`].
struct CrashDirect {
    file: FileRef,
    shared: Arc<Shared>,
    direct: bool,
}

/// Writes `data` at `offset` of `f`, zero-filling any gap and extending the file.
fn write_into(f: &mut FileData, offset: u64, data: &[u8]) -> io::Result<()> {
    let start = usize::try_from(offset).map_err(|_| io::Error::other("offset too large"))?;
    let end = start + data.len();
    if f.data.len() < end {
        f.data.resize(end, 0);
    }
    f.data[start..end].copy_from_slice(data);
    Ok(())
}

impl DirectFile for CrashDirect {
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        match self.shared.begin(FsCall::Append) {
            None => write_into(&mut self.file.lock(), offset, data),
            Some(FaultKind::ShortWrite) => {
                write_into(&mut self.file.lock(), offset, &data[..data.len() / 2])?;
                Err(FaultKind::ShortWrite.error())
            }
            Some(kind) => Err(kind.error()),
        }
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.shared.check(FsCall::SetLen)?;
        let len = usize::try_from(len).map_err(|_| io::Error::other("length too large"))?;
        let mut f = self.file.lock();
        f.data.resize(len, 0);
        f.synced = f.synced.min(len);
        Ok(())
    }
    fn sync(&self) -> io::Result<()> {
        self.shared.check(FsCall::Sync)?;
        let mut f = self.file.lock();
        f.synced = f.data.len();
        Ok(())
    }
    fn is_direct(&self) -> bool {
        self.direct
    }
}

/// A file open for reading (sees appends made after it was opened).
struct CrashReadable {
    file: FileRef,
}

impl RandomAccessFile for CrashReadable {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let f = self.file.lock();
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        match start.checked_add(buf.len()) {
            Some(end) if end <= f.data.len() => {
                buf.copy_from_slice(&f.data[start..end]);
                Ok(())
            }
            _ => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "read of {} bytes at offset {offset} past the end",
                    buf.len()
                ),
            )),
        }
    }
    fn size(&self) -> io::Result<u64> {
        Ok(self.file.lock().data.len() as u64)
    }
}

impl CrashFs {
    fn writable(&self, file: FileRef, path: &Path) -> Box<dyn WritableFile> {
        Box::new(CrashWritable {
            file,
            shared: Arc::clone(&self.shared),
            counted: !uncounted(path),
        })
    }

    /// Numbers call `call` on `path` (unless uncounted) and fails it if the plan says so.
    fn check_call(&self, call: FsCall, path: &Path) -> io::Result<()> {
        match uncounted(path) {
            true => Ok(()),
            false => self.shared.check(call),
        }
    }

    /// Creates (or truncates) the live file `path` (a counted `Open`).
    fn new_file(&self, path: &Path) -> io::Result<FileRef> {
        self.check_call(FsCall::Open, path)?;
        let mut st = self.shared.state.lock();
        Self::check_parent(&st, path)?;
        let file = FileRef::default();
        st.live.insert(path.to_path_buf(), Arc::clone(&file));
        Ok(file)
    }

    fn check_parent(st: &State, path: &Path) -> io::Result<()> {
        match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() && !st.dirs.contains(dir) => {
                Err(not_found(dir))
            }
            _ => Ok(()),
        }
    }
}

impl FileSystem for CrashFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        let mut st = self.shared.state.lock();
        for dir in path.ancestors() {
            if !dir.as_os_str().is_empty() {
                st.dirs.insert(dir.to_path_buf());
            }
        }
        Ok(())
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        Ok(self.writable(self.new_file(path)?, path))
    }
    fn create_direct(&self, path: &Path, direct: bool) -> io::Result<Arc<dyn DirectFile>> {
        Ok(Arc::new(CrashDirect {
            file: self.new_file(path)?,
            shared: Arc::clone(&self.shared),
            direct,
        }))
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.check_call(FsCall::Open, path)?;
        let st = self.shared.state.lock();
        let file = st.live.get(path).cloned().ok_or_else(|| not_found(path))?;
        Ok(self.writable(file, path))
    }
    fn open(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        let st = self.shared.state.lock();
        let file = st.live.get(path).cloned().ok_or_else(|| not_found(path))?;
        Ok(Arc::new(CrashReadable { file }))
    }
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        let st = self.shared.state.lock();
        let file = st.live.get(path).ok_or_else(|| not_found(path))?;
        let data = file.lock().data.clone();
        Ok(data)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.check_call(FsCall::Rename, to)?;
        let mut st = self.shared.state.lock();
        Self::check_parent(&st, to)?;
        let file = st.live.remove(from).ok_or_else(|| not_found(from))?;
        st.live.insert(to.to_path_buf(), file);
        Ok(())
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.check_call(FsCall::Remove, path)?;
        let mut st = self.shared.state.lock();
        st.live
            .remove(path)
            .map(drop)
            .ok_or_else(|| not_found(path))
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let st = self.shared.state.lock();
        if !st.dirs.contains(path) {
            return Err(not_found(path));
        }
        let files = st.live.keys().filter(|p| p.parent() == Some(path));
        let dirs = st.dirs.iter().filter(|p| p.parent() == Some(path));
        let mut names: Vec<String> = files
            .chain(dirs)
            .filter_map(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        names.sort();
        Ok(names)
    }
    fn exists(&self, path: &Path) -> bool {
        let st = self.shared.state.lock();
        st.live.contains_key(path) || st.dirs.contains(path)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.shared.check(FsCall::SyncDir)?;
        let mut st = self.shared.state.lock();
        if !st.dirs.contains(path) {
            return Err(not_found(path));
        }
        st.durable.retain(|p, _| p.parent() != Some(path));
        let entries: Vec<(PathBuf, FileRef)> = st
            .live
            .iter()
            .filter(|(p, _)| p.parent() == Some(path))
            .map(|(p, f)| (p.clone(), Arc::clone(f)))
            .collect();
        st.durable.extend(entries);
        Ok(())
    }
}

#[cfg(test)]
#[path = "crash_fs_tests.rs"]
mod tests;
