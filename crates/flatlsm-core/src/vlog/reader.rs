//! [`VlogReader`]: random reads of value-log records by [`ValuePointer`], and full scans.
//!
//! A point read is a copy from the log's mapping (a sealed log opened with
//! [`VlogReader::open_mapped`]; see [`PAGE`] for which records) or one `read_exact_at` of
//! `record_len` bytes at the pointer's offset; either way the record's
//! lengths must match the pointer and its crc must verify, otherwise the read is
//! [`Error::Corruption`] naming the file and the record offset. A pointer whose record would end
//! past the end of the file is rejected before any buffer is allocated.
//!
//! A scan's read ([`VlogReader::read_value_ahead`]) is a copy from the mapping too while the log
//! is found in memory (the last timed read was quick, `found_in_memory`), else a read through
//! the scan's read-ahead windows or one `read_exact_at`; checked the same way.
//!
//! Thread-safety: `Send + Sync`; reads take `&self` and may run concurrently.

use super::record::{check_header, decode_record, RECORD_HEADER_LEN, VLOG_HEADER_LEN};
use super::vlog_file_name;
use crate::error::{Error, IoContext, Result};
use crate::fs::{FileMap, FileSystem, RandomAccessFile, ReadAhead};
use crate::types::ValuePointer;
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes read at a time by [`VlogReader::for_each_record`].
const SCAN_CHUNK: u64 = 256 << 10;

/// Bytes of a page: a record within one page is read through the mapping, where a page-cache
/// miss costs one device read as `pread` does. A record across two pages is read through the
/// mapping too while the log's pages are found in memory (`VlogReader::found_in_memory`), and with
/// one `pread` otherwise: through the mapping a miss on each page would be a device read of its
/// own, one after the other. A record over more pages is always one `pread`.
const PAGE: u64 = 4096;

/// One mapped read in this many (per thread) is timed, to tell whether the log is in memory.
const TIMED_EVERY: u32 = 16;

/// The longest `pread` of a record that is timed: a longer copy from memory could take as
/// long as [`DEVICE_READ`].
const TIMED_LEN: u64 = 4 * PAGE;

/// A mapped read that took this long or longer waited for the device: a page of the log was
/// not in memory. (A copy with its checksum takes about a microsecond, mapping a page that is
/// in the page cache a few; a device read tens at least.)
const DEVICE_READ: Duration = Duration::from_micros(30);

/// Reads one value-log file.
pub struct VlogReader {
    file: Arc<dyn RandomAccessFile>,
    path: PathBuf,
    number: u64,
    /// File size as last observed (refreshed when a pointer reaches past it).
    size: AtomicU64,
    /// The file mapped for point reads ([`VlogReader::open_mapped`]), if it is.
    map: Option<FileMap>,
    /// True while the last timed read found its page in memory: records across a page
    /// boundary are then read through the mapping (see [`PAGE`]), a scan's records too, and a
    /// prefetch hint is a cache-line hint, not a system call.
    found_in_memory: AtomicBool,
}

impl std::fmt::Debug for VlogReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VlogReader")
            .field("path", &self.path)
            .finish()
    }
}

/// Most cache lines of a record [`VlogReader::hint_mapped`] asks for (a whole page): the copy
/// and the checksum read the whole record.
pub const HINT_LINES: usize = 64;

impl VlogReader {
    /// Opens `dir/{number:06}.vlog` and validates its header.
    pub fn open(fs: &dyn FileSystem, dir: &Path, number: u64) -> Result<Self> {
        let path = dir.join(vlog_file_name(number));
        let file = fs
            .open(&path)
            .context(|| format!("opening {}", path.display()))?;
        let size = file
            .size()
            .context(|| format!("reading the size of {}", path.display()))?;
        let reader = VlogReader {
            file,
            path,
            number,
            size: AtomicU64::new(size),
            map: None,
            found_in_memory: AtomicBool::new(true),
        };
        let header = reader.read_at(0, VLOG_HEADER_LEN)?;
        check_header(&header, &reader.path)?;
        Ok(reader)
    }

    /// Opens the log as [`VlogReader::open`] does, and maps it for point reads where the file
    /// system maps files (`RandomAccessFile::map`): a value within one page is then copied
    /// from the page cache without a system call. Only for sealed logs (never written again);
    /// a refused mapping is logged and the reader reads with `pread`.
    pub fn open_mapped(fs: &dyn FileSystem, dir: &Path, number: u64) -> Result<Self> {
        let mut reader = Self::open(fs, dir, number)?;
        match reader.file.map() {
            Ok(map) => reader.map = map,
            Err(e) => log::debug!("mapping {}: {e}", reader.path.display()),
        }
        Ok(reader)
    }

    /// True if point reads go through a mapping of the file.
    pub fn is_mapped(&self) -> bool {
        self.map.is_some()
    }

    /// The file's size in bytes, as this reader last saw it (header included).
    pub fn size(&self) -> u64 {
        self.size.load(Ordering::Relaxed)
    }

    /// Turns readahead off for this reader's file (see `RandomAccessFile::advise_random`). A
    /// refusal only costs speed, so it is logged, not returned.
    pub fn advise_random(&self) {
        if let Err(e) = self.file.advise_random() {
            log::debug!("fadvise(RANDOM) on {}: {e}", self.path.display());
        }
    }

    /// Hints that the record `ptr` addresses will be read soon: true when the hint went to
    /// the device (`RandomAccessFile::will_need`), false when the log was found in memory
    /// (then at most its first cache lines are hinted, as [`VlogReader::hint_mapped`] does: a
    /// system call per value cost a scan from memory 15 % of its time) or the pointer is
    /// outside the log. A bad pointer or a refused hint only costs speed: the read that
    /// follows checks and reports it.
    pub fn prefetch(&self, ptr: &ValuePointer) -> bool {
        let Ok(record_len) = self.check_pointer(ptr) else {
            return false;
        };
        if self.found_in_memory.load(Ordering::Relaxed) {
            self.hint_lines(ptr.offset, record_len);
            return false;
        }
        if let Err(e) = self.file.will_need(ptr.offset, record_len) {
            log::debug!("fadvise(WILLNEED) on {}: {e}", self.path.display());
        }
        true
    }

    /// The file number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the value of the record `ptr` addresses (one read of `record_len` bytes, or a
    /// copy from the mapping for a record within one page).
    pub fn read_value(&self, ptr: &ValuePointer) -> Result<Vec<u8>> {
        let record_len = self.check_pointer(ptr)?;
        if let Some(bytes) = self.mapped_record(ptr.offset, record_len) {
            return self.copy_mapped(bytes, ptr);
        }
        self.read_value_at(ptr, record_len)
    }

    /// The value of the record `ptr` addresses, checked and copied from its mapped `bytes`;
    /// one such read in [`TIMED_EVERY`] per thread is timed ([`VlogReader::note_timed_read`]).
    fn copy_mapped(&self, bytes: &[u8], ptr: &ValuePointer) -> Result<Vec<u8>> {
        if !timed_turn() {
            return Ok(self.check_record(bytes, ptr)?.1.to_vec());
        }
        let start = Instant::now();
        let value = self.check_record(bytes, ptr)?.1.to_vec();
        self.note_timed_read(start.elapsed());
        Ok(value)
    }

    /// Records how long a timed read took: the log is found in memory (records across pages
    /// are read through the mapping again) once one was quick, not (`pread`) once one waited
    /// for the device.
    pub(crate) fn note_timed_read(&self, took: Duration) {
        self.found_in_memory
            .store(took < DEVICE_READ, Ordering::Relaxed);
    }

    /// True while records across a page boundary are read through the mapping.
    #[cfg(test)]
    pub(crate) fn reads_across_pages_mapped(&self) -> bool {
        self.map.is_some() && self.found_in_memory.load(Ordering::Relaxed)
    }

    /// Starts loading the first `HINT_LINES` cache lines of the record `ptr` addresses if
    /// [`VlogReader::read_value`] will copy it from the mapping (no system call, no error: the
    /// read reports a bad pointer).
    pub fn hint_mapped(&self, ptr: &ValuePointer) {
        if let Ok(len) = self.check_pointer(ptr) {
            self.hint_lines(ptr.offset, len);
        }
    }

    /// Starts loading the first `HINT_LINES` cache lines of the `len`-byte record at `offset`
    /// if it will be copied from the mapping.
    fn hint_lines(&self, offset: u64, len: u64) {
        if let Some(bytes) = self.mapped_record(offset, len) {
            let lines = (0..bytes.len()).step_by(crate::pm::CACHE_LINE);
            lines
                .take(HINT_LINES)
                .for_each(|at| crate::pm::prefetch_read(bytes, at));
        }
    }

    /// The mapped bytes of a record of `len` bytes at `offset`, if the file is mapped that far
    /// and the record lies within one page, or across two while the log is found in memory
    /// ([`PAGE`]).
    fn mapped_record(&self, offset: u64, len: u64) -> Option<&[u8]> {
        let last = offset.checked_add(len)?.checked_sub(1)?;
        let mapped = match last / PAGE - offset / PAGE {
            0 => true,
            1 => self.found_in_memory.load(Ordering::Relaxed),
            _ => false,
        };
        if !mapped {
            return None;
        }
        self.map.as_ref()?.get(offset, len as usize)
    }

    /// The value of the record `ptr` addresses (`record_len` bytes, pointer already checked),
    /// read and verified on its own: the record's buffer with its header and key cut off.
    fn read_value_at(&self, ptr: &ValuePointer, record_len: u64) -> Result<Vec<u8>> {
        let (mut buf, key_len) = self.read_record_at(ptr, record_len)?;
        buf.drain(..RECORD_HEADER_LEN + key_len);
        Ok(buf)
    }

    /// [`VlogReader::read_value_at`], one read in [`TIMED_EVERY`] per thread of at most
    /// [`TIMED_LEN`] bytes timed as mapped reads are: a scan that reads with `pread` learns
    /// when the log is in memory.
    fn read_value_timed(&self, ptr: &ValuePointer, record_len: u64) -> Result<Vec<u8>> {
        if record_len > TIMED_LEN || !timed_turn() {
            return self.read_value_at(ptr, record_len);
        }
        let start = Instant::now();
        let value = self.read_value_at(ptr, record_len)?;
        self.note_timed_read(start.elapsed());
        Ok(value)
    }

    /// The mapped bytes of a record ([`VlogReader::mapped_record`]) while the log is found in
    /// memory.
    fn in_memory_record(&self, offset: u64, len: u64) -> Option<&[u8]> {
        match self.found_in_memory.load(Ordering::Relaxed) {
            true => self.mapped_record(offset, len),
            false => None,
        }
    }

    /// Reads the `(key, value)` of the record `ptr` addresses.
    pub fn read_record(&self, ptr: &ValuePointer) -> Result<(Vec<u8>, Vec<u8>)> {
        let (mut buf, key_len) = self.read_checked(ptr)?;
        let value = buf.split_off(RECORD_HEADER_LEN + key_len);
        buf.drain(..RECORD_HEADER_LEN);
        Ok((buf, value))
    }

    /// Reads the value of the record `ptr` addresses through `ahead`'s windows: a scan's
    /// records that follow each other in the log cost one read per window, not one each
    /// ([`ReadAhead`]). While the log is found in memory, a record the mapping serves is
    /// copied from it instead, without a system call (a scan of 1 KB values from memory spent
    /// 37 % of its time in `pread`). Checked as [`VlogReader::read_value`] checks.
    pub fn read_value_ahead(&self, ptr: &ValuePointer, ahead: &mut ReadAhead) -> Result<Vec<u8>> {
        let record_len = self.check_pointer(ptr)?;
        if let Some(bytes) = self.in_memory_record(ptr.offset, record_len) {
            return self.copy_mapped(bytes, ptr);
        }
        let size = self.size.load(Ordering::Relaxed);
        let span = (ptr.offset, record_len as usize);
        let windowed = ahead
            .read(&*self.file, self.number, span, size)
            .map_err(|e| self.read_error(ptr.offset, record_len, e))?;
        let Some(bytes) = windowed else {
            return self.read_value_timed(ptr, record_len);
        };
        let (_, value) = self.check_record(bytes, ptr)?;
        Ok(value.to_vec())
    }

    /// Reads and verifies the whole record; returns its bytes and key length.
    fn read_checked(&self, ptr: &ValuePointer) -> Result<(Vec<u8>, usize)> {
        let record_len = self.check_pointer(ptr)?;
        self.read_record_at(ptr, record_len)
    }

    /// Reads and verifies the `record_len` bytes of the record `ptr` addresses (pointer
    /// already checked); returns its bytes and key length.
    fn read_record_at(&self, ptr: &ValuePointer, record_len: u64) -> Result<(Vec<u8>, usize)> {
        let buf = self.read_at(ptr.offset, record_len)?;
        let key_len = self.check_record(&buf, ptr)?.0.len();
        Ok((buf, key_len))
    }

    /// The record length `ptr` names, once the pointer is known to address a record inside
    /// this log.
    fn check_pointer(&self, ptr: &ValuePointer) -> Result<u64> {
        if ptr.file_number != self.number {
            return Err(Error::InvalidArgument(format!(
                "pointer into value log {} given to the reader of {}",
                ptr.file_number,
                self.path.display()
            )));
        }
        let bad = |detail: String| Error::corruption(&self.path, ptr.offset, detail);
        if ptr.offset < VLOG_HEADER_LEN {
            return Err(bad("value pointer addresses the file header".to_string()));
        }
        let record_len = u64::from(ptr.record_len);
        if record_len < RECORD_HEADER_LEN as u64 + u64::from(ptr.value_len) {
            return Err(bad(format!(
                "value pointer record_len {} cannot hold value_len {}",
                ptr.record_len, ptr.value_len
            )));
        }
        self.check_within_file(ptr.offset, record_len)?;
        Ok(record_len)
    }

    /// Decodes (and verifies) the record `ptr` addresses from its bytes `buf`: its key and
    /// value, which must have the lengths the pointer gives.
    fn check_record<'a>(&self, buf: &'a [u8], ptr: &ValuePointer) -> Result<(&'a [u8], &'a [u8])> {
        let (key, value, n) = decode_record(buf, &self.path, ptr.offset)?;
        if n as u64 != u64::from(ptr.record_len) || value.len() != ptr.value_len as usize {
            return Err(Error::corruption(
                &self.path,
                ptr.offset,
                format!(
                    "record (length {n}, value {}) does not match the pointer (length {}, value {})",
                    value.len(),
                    ptr.record_len,
                    ptr.value_len
                ),
            ));
        }
        Ok((key, value))
    }

    /// Corruption unless `[offset, offset + len)` lies within the file.
    fn check_within_file(&self, offset: u64, len: u64) -> Result<()> {
        let end = offset.saturating_add(len);
        if end <= self.size.load(Ordering::Relaxed) {
            return Ok(());
        }
        let size = self.current_size()?;
        if end <= size {
            return Ok(());
        }
        Err(Error::corruption(
            &self.path,
            offset,
            format!("record of {len} bytes extends past the end of the file ({size} bytes)"),
        ))
    }

    fn current_size(&self) -> Result<u64> {
        let size = self
            .file
            .size()
            .context(|| format!("reading the size of {}", self.path.display()))?;
        self.size.store(size, Ordering::Relaxed);
        Ok(size)
    }

    /// Reads exactly `len` bytes at `offset`; running past the end is corruption.
    fn read_at(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; len as usize];
        match self.file.read_exact_at(offset, &mut buf) {
            Ok(()) => Ok(buf),
            Err(e) => Err(self.read_error(offset, len, e)),
        }
    }

    /// The error of a failed read of `len` bytes at `offset`: running past the end is
    /// corruption.
    fn read_error(&self, offset: u64, len: u64, e: std::io::Error) -> Error {
        match e.kind() {
            std::io::ErrorKind::UnexpectedEof => Error::corruption(
                &self.path,
                offset,
                format!("{len} bytes expected but the file ends first"),
            ),
            _ => Error::io(format!("reading {}", self.path.display()), e),
        }
    }

    /// Calls `f(pointer, key, value)` for every record in file order. A damaged or truncated
    /// record stops the scan with [`Error::Corruption`] at its offset; an error from `f` stops
    /// the scan and is returned.
    pub fn for_each_record(
        &self,
        mut f: impl FnMut(ValuePointer, &[u8], &[u8]) -> Result<()>,
    ) -> Result<()> {
        let size = self.current_size()?;
        let mut pos = VLOG_HEADER_LEN;
        let mut window: Vec<u8> = Vec::new();
        let mut window_start = pos;
        while pos < size {
            let avail = &window[(pos - window_start) as usize..];
            let need = needed_len(avail);
            if (avail.len() as u64) < need {
                self.check_within_file(pos, need)?;
                window = self.read_at(pos, need.max(SCAN_CHUNK).min(size - pos))?;
                window_start = pos;
                continue;
            }
            let (key, value, n) = decode_record(avail, &self.path, pos)?;
            let ptr = ValuePointer {
                file_number: self.number,
                offset: pos,
                value_len: value.len() as u32,
                record_len: u32::try_from(n)
                    .map_err(|_| Error::corruption(&self.path, pos, "record longer than 4 GiB"))?,
            };
            f(ptr, key, value)?;
            pos += n as u64;
        }
        Ok(())
    }
}

/// Bytes needed to decode the record at the start of `avail`: its header, then the whole record.
fn needed_len(avail: &[u8]) -> u64 {
    if avail.len() < RECORD_HEADER_LEN {
        return RECORD_HEADER_LEN as u64;
    }
    let word = |i: usize| {
        u64::from(u32::from_le_bytes([
            avail[i],
            avail[i + 1],
            avail[i + 2],
            avail[i + 3],
        ]))
    };
    RECORD_HEADER_LEN as u64 + word(4) + word(8)
}

/// True on this thread's first mapped read of every [`TIMED_EVERY`].
fn timed_turn() -> bool {
    thread_local! {
        static TURN: Cell<u32> = const { Cell::new(0) };
    }
    TURN.with(|turn| {
        let n = turn.get();
        turn.set(n.wrapping_add(1));
        n % TIMED_EVERY == 0
    })
}
