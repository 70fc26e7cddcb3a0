//! The crate's only `unsafe` code: a bounds-checked byte view over a memory mapping (or a heap
//! buffer), cache-line flush instructions, and the few libc calls the PM layer needs.
//!
//! # Aliasing contract
//!
//! [`RawMapping`] hands out shared `&[u8]` views of its memory while the same memory may be
//! written through [`RawMapping::write`] (which copies through a raw pointer and never creates a
//! `&mut`). This is sound only if no byte is read and written at the same time. The PM Log
//! guarantees it by being append-only: readers read only below the published tail (an atomic
//! released by the single writer after its copies), and the single writer writes only above it.
//! Header words that change after publication (`used_size`, `flags`) are accessed only through
//! the atomic [`RawMapping::store_u64`]/[`RawMapping::load_u64`].
//!
//! Every method checks its range against the mapping and panics when it is out of bounds: an
//! out-of-range offset is a caller bug, never a consequence of bad bytes on disk (decoders
//! validate lengths before they ask for a range).

#![allow(unsafe_code)]

use std::alloc::{self, Layout};
use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use super::CACHE_LINE;

/// `statfs` magic of tmpfs (DRAM-backed).
pub(crate) const TMPFS_MAGIC: i64 = 0x0102_1994;
/// `statfs` magic of ramfs (DRAM-backed).
pub(crate) const RAMFS_MAGIC: i64 = 0x8584_58f6;

/// Linux `MAP_SHARED_VALIDATE`: like `MAP_SHARED` but unknown flags fail instead of being ignored.
#[cfg(target_os = "linux")]
const MAP_SHARED_VALIDATE: libc::c_int = 0x03;
/// Linux `MAP_SYNC` (same value on every architecture that supports it): only a DAX file system
/// accepts it, so a successful map proves cache-line flushes reach persistence.
#[cfg(target_os = "linux")]
const MAP_SYNC: libc::c_int = 0x08_0000;

/// Where the memory of a [`RawMapping`] comes from (decides how it is released).
/// Buffers at least this large are anonymous mappings rather than heap allocations.
const ANONYMOUS_MMAP_MIN: usize = 1 << 20;

enum Backing {
    /// `mmap` of a file; released with `munmap`.
    Mmap,
    /// Private anonymous `mmap` (zero pages, faulted in on first touch); released with
    /// `munmap`. Nothing to msync.
    Anonymous,
    /// Zeroed heap allocation with this layout; released with `dealloc`.
    Heap(Layout),
}

/// A fixed-size byte range in memory (file mapping or heap buffer) with a safe, bounds-checked
/// API. See the module documentation for the aliasing contract.
pub(crate) struct RawMapping {
    ptr: NonNull<u8>,
    len: usize,
    backing: Backing,
}

// SAFETY: the mapping is plain memory owned by this value; all mutation goes through raw-pointer
// copies or atomics, and the aliasing contract (module doc) keeps concurrent readers and the writer
// on disjoint bytes.
unsafe impl Send for RawMapping {}
// SAFETY: as above; `&RawMapping` exposes no interior state other than the mapped bytes.
unsafe impl Sync for RawMapping {}

impl RawMapping {
    /// Maps the first `len` bytes of `file` read-write and shared. With `sync`, asks for
    /// `MAP_SHARED_VALIDATE | MAP_SYNC`, which only DAX file systems accept.
    pub(crate) fn map_file(file: &File, len: usize, sync: bool) -> io::Result<Self> {
        Self::map_file_with(file, len, map_flags(sync)?)
    }

    /// Maps the first `len` bytes of `file` privately (copy on write): reads see the file,
    /// writes stay in this process and never reach it. For opening a database read-only.
    pub(crate) fn map_file_private(file: &File, len: usize) -> io::Result<Self> {
        Self::map_file_with(file, len, libc::MAP_PRIVATE)
    }

    /// Maps the first `len` bytes of `file` read-only and shared, for reads by copy
    /// (`fs::FileMap`), and advises random access (`MADV_RANDOM`): a page-cache miss then
    /// reads the missing page, not the device's readahead window around it. Writing through
    /// this mapping is a caller bug that faults ([`RawMapping::write`] must not be used).
    pub(crate) fn map_file_for_reads(file: &File, len: usize) -> io::Result<Self> {
        let m = Self::map_file_prot(file, len, libc::MAP_SHARED, libc::PROT_READ)?;
        // SAFETY: `ptr..ptr+len` is exactly the live mapping just made; the advice changes
        // only how the kernel reads pages in, and a refusal is reported by its result.
        let _ = unsafe { libc::madvise(m.ptr.as_ptr().cast(), m.len, libc::MADV_RANDOM) };
        Ok(m)
    }

    /// The first `len` bytes of `file` mapped readable and writable with `flags`.
    fn map_file_with(file: &File, len: usize, flags: libc::c_int) -> io::Result<Self> {
        Self::map_file_prot(file, len, flags, libc::PROT_READ | libc::PROT_WRITE)
    }

    /// The first `len` bytes of `file` mapped with `flags` and protection `prot`.
    fn map_file_prot(
        file: &File,
        len: usize,
        flags: libc::c_int,
        prot: libc::c_int,
    ) -> io::Result<Self> {
        if len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot map an empty file",
            ));
        }
        // SAFETY: a null hint lets the kernel choose the address; `file` is an open descriptor
        // for the duration of the call; the result is checked for MAP_FAILED before use. A
        // private mapping of a read-only descriptor may be written: the pages written are
        // copies.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, file.as_raw_fd(), 0) };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(p.cast::<u8>()).ok_or_else(|| io::Error::other("mmap gave null"))?;
        Ok(RawMapping {
            ptr,
            len,
            backing: Backing::Mmap,
        })
    }

    /// Pre-faults every page of a file mapping writable (`MADV_POPULATE_WRITE`), so the first
    /// stores into a fresh region take no page faults: whoever creates the region pays for its
    /// page tables in one call. Best effort: kernels before 5.14 refuse the advice, and the
    /// pages then fault on first touch as usual.
    pub(crate) fn populate(&self) {
        #[cfg(target_os = "linux")]
        if matches!(self.backing, Backing::Mmap) {
            // SAFETY: `ptr..ptr+len` is exactly this object's live mapping; the advice only
            // faults in pages (contents unchanged) and reports failure through its result.
            let _ = unsafe {
                libc::madvise(
                    self.ptr.as_ptr().cast(),
                    self.len,
                    libc::MADV_POPULATE_WRITE,
                )
            };
        }
    }

    /// A zero-filled buffer of `len` bytes, aligned to a cache line (so 8-aligned offsets are
    /// 8-aligned addresses, as in a page-aligned mapping). Large buffers are private anonymous
    /// mappings, so their pages are zeroed by the kernel on first touch instead of all at once
    /// here (a 2 GiB DRAM write buffer used to cost seconds of memset at creation); small ones
    /// come from the heap.
    pub(crate) fn anonymous(len: usize) -> Self {
        if len >= ANONYMOUS_MMAP_MIN {
            if let Some(m) = Self::map_anonymous(len) {
                return m;
            }
        }
        Self::heap_zeroed(len)
    }

    /// A private anonymous mapping of `len` bytes, or `None` if the kernel refuses one.
    fn map_anonymous(len: usize) -> Option<Self> {
        // SAFETY: a null hint lets the kernel choose the (page-aligned) address; no file is
        // involved; the result is checked for MAP_FAILED before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        let ptr = NonNull::new(p.cast::<u8>())?;
        Some(RawMapping {
            ptr,
            len,
            backing: Backing::Anonymous,
        })
    }

    /// A zero-filled heap buffer of `len` bytes aligned to a cache line.
    fn heap_zeroed(len: usize) -> Self {
        let layout = Layout::from_size_align(len.max(1), CACHE_LINE).expect("valid layout");
        // SAFETY: the layout has non-zero size.
        let p = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(p).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        RawMapping {
            ptr,
            len,
            backing: Backing::Heap(layout),
        }
    }

    /// Length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn check(&self, offset: usize, len: usize) {
        let end = offset.checked_add(len);
        assert!(
            end.is_some_and(|e| e <= self.len),
            "PM range [{offset}, +{len}) outside a region of {} bytes",
            self.len
        );
    }

    /// The bytes `[offset, offset + len)`. Caller contract: nobody writes them meanwhile.
    pub(crate) fn read(&self, offset: usize, len: usize) -> &[u8] {
        self.check(offset, len);
        // SAFETY: the range is inside the allocation (checked above); the memory lives as long as
        // `self`; by the aliasing contract no write to these bytes happens while the slice lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(offset), len) }
    }

    /// Copies `data` to `offset`. Caller contract: nobody reads or writes that range meanwhile.
    pub(crate) fn write(&self, offset: usize, data: &[u8]) {
        self.check(offset, data.len());
        // SAFETY: the destination range is inside the allocation (checked above); `data` is a
        // separate borrow, so source and destination cannot overlap unless the caller passed a
        // slice of this mapping, which the aliasing contract forbids for the written range.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.as_ptr().add(offset), data.len())
        }
    }

    /// Copies `data` to `offset` with non-temporal stores for the 16-byte-aligned middle (plain
    /// stores for the unaligned head and tail). The streamed bytes are ordered before later
    /// stores only after [`fence`]. Same caller contract as [`RawMapping::write`].
    pub(crate) fn write_streaming(&self, offset: usize, data: &[u8]) {
        self.check(offset, data.len());
        #[cfg(target_arch = "x86_64")]
        {
            let dst = self.ptr.as_ptr() as usize + offset;
            let head = ((16 - dst % 16) % 16).min(data.len());
            let body = (data.len() - head) / 16 * 16;
            let (first, rest) = data.split_at(head);
            let (middle, tail) = rest.split_at(body);
            self.write(offset, first);
            stream_16(dst + head, middle);
            self.write(offset + head + body, tail);
        }
        #[cfg(not(target_arch = "x86_64"))]
        self.write(offset, data);
    }

    fn atomic_at(&self, offset: usize) -> &AtomicU64 {
        self.check(offset, 8);
        assert!(
            offset.is_multiple_of(8),
            "atomic PM access at unaligned offset {offset}"
        );
        // SAFETY: in bounds (checked); the base is at least 64-aligned (page or Layout alignment)
        // and the offset is 8-aligned, so the address is aligned for AtomicU64; the memory lives as
        // long as `self`.
        unsafe { &*(self.ptr.as_ptr().add(offset) as *const AtomicU64) }
    }

    /// Atomic little-endian 8-byte store at an 8-aligned offset.
    pub(crate) fn store_u64(&self, offset: usize, value: u64) {
        self.atomic_at(offset)
            .store(value.to_le(), Ordering::Release);
    }

    /// Atomic little-endian 8-byte load at an 8-aligned offset.
    pub(crate) fn load_u64(&self, offset: usize) -> u64 {
        u64::from_le(self.atomic_at(offset).load(Ordering::Acquire))
    }

    /// `msync(MS_SYNC)` of the pages covering `[offset, offset + len)`; a no-op for heap memory.
    pub(crate) fn msync(&self, offset: usize, len: usize) -> io::Result<()> {
        self.check(offset, len);
        if !matches!(self.backing, Backing::Mmap) || len == 0 {
            return Ok(());
        }
        let page = page_size();
        let start = offset / page * page;
        let end = offset + len;
        // SAFETY: [start, end) lies inside the mapping (start rounds down within it, end is
        // checked); the address is page-aligned because the mapping base is.
        let rc = unsafe {
            libc::msync(
                self.ptr.as_ptr().add(start).cast(),
                end - start,
                libc::MS_SYNC,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Writes back every cache line covering `[offset, offset + len)` (no fence; call [`fence`]).
    /// Returns the number of lines flushed.
    pub(crate) fn flush(&self, offset: usize, len: usize) -> usize {
        self.check(offset, len);
        if len == 0 {
            return 0;
        }
        let first = offset / CACHE_LINE;
        let last = (offset + len - 1) / CACHE_LINE;
        for line in first..=last {
            // The line may start before `offset` but never before the mapping (line ≥ 0) and
            // never at or past its end (it covers a checked byte).
            // SAFETY: the address is inside the mapping (see above).
            let addr = unsafe { self.ptr.as_ptr().add(line * CACHE_LINE) };
            flush_line(addr);
        }
        last - first + 1
    }
}

impl Drop for RawMapping {
    fn drop(&mut self) {
        match self.backing {
            Backing::Mmap | Backing::Anonymous => {
                // SAFETY: ptr/len are exactly what mmap returned; nothing borrows `self` anymore.
                // A failure cannot be reported from drop and leaves only address space behind.
                unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
            }
            Backing::Heap(layout) => {
                // SAFETY: allocated in `anonymous` with this very layout.
                unsafe { alloc::dealloc(self.ptr.as_ptr(), layout) };
            }
        }
    }
}

#[cfg(target_os = "linux")]
fn map_flags(sync: bool) -> io::Result<libc::c_int> {
    Ok(if sync {
        MAP_SHARED_VALIDATE | MAP_SYNC
    } else {
        libc::MAP_SHARED
    })
}

#[cfg(not(target_os = "linux"))]
fn map_flags(sync: bool) -> io::Result<libc::c_int> {
    if sync {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "MAP_SYNC exists only on Linux",
        ));
    }
    Ok(libc::MAP_SHARED)
}

fn page_size() -> usize {
    static PAGE: OnceLock<usize> = OnceLock::new();
    *PAGE.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if p > 0 {
            p as usize
        } else {
            4096
        }
    })
}

/// The cache-line write-back instruction this CPU offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FlushInstr {
    /// `clwb`: writes back without evicting.
    #[cfg(target_arch = "x86_64")]
    Clwb,
    /// `clflushopt`: writes back and evicts, weakly ordered.
    #[cfg(target_arch = "x86_64")]
    ClflushOpt,
    /// `clflush`: writes back and evicts, strongly ordered.
    #[cfg(target_arch = "x86_64")]
    Clflush,
    /// arm64 `dc cvap` (ARMv8.2 DCPoP): cleans the line to the point of persistence.
    #[cfg(target_arch = "aarch64")]
    DcCvap,
    /// arm64 `dc cvac`: cleans to the point of coherency, which is the point of persistence
    /// on CPUs without DCPoP (what Linux's `arch_wb_cache_pmem` falls back to as well).
    #[cfg(target_arch = "aarch64")]
    DcCvac,
    /// Any other architecture: no user-level write-back is known, so DAX cannot be made
    /// durable here and [`has_cache_line_writeback`] is false.
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    None,
}

/// Whether this architecture can write a cache line back to PM from user space. Without it a
/// `MAP_SYNC` mapping gives no durability, and the PM device refuses DAX (msync remains).
pub(crate) fn has_cache_line_writeback() -> bool {
    cfg!(any(target_arch = "x86_64", target_arch = "aarch64"))
}

/// Detects (once) the best flush instruction.
pub(crate) fn flush_instr() -> FlushInstr {
    static INSTR: OnceLock<FlushInstr> = OnceLock::new();
    *INSTR.get_or_init(detect_flush_instr)
}

#[cfg(target_arch = "x86_64")]
fn detect_flush_instr() -> FlushInstr {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    // SAFETY: cpuid is available on every x86_64 CPU; leaf 0 reports the highest leaf.
    #[allow(unused_unsafe)]
    let max_leaf = unsafe { __cpuid(0) }.eax;
    if max_leaf < 7 {
        return FlushInstr::Clflush;
    }
    // SAFETY: leaf 7 exists (checked above).
    #[allow(unused_unsafe)]
    let ebx = unsafe { __cpuid_count(7, 0) }.ebx;
    if ebx & (1 << 24) != 0 {
        FlushInstr::Clwb
    } else if ebx & (1 << 23) != 0 {
        FlushInstr::ClflushOpt
    } else {
        FlushInstr::Clflush
    }
}

#[cfg(target_arch = "aarch64")]
fn detect_flush_instr() -> FlushInstr {
    if std::arch::is_aarch64_feature_detected!("dpb") {
        FlushInstr::DcCvap
    } else {
        FlushInstr::DcCvac
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn detect_flush_instr() -> FlushInstr {
    FlushInstr::None
}

#[cfg(target_arch = "x86_64")]
fn flush_line(addr: *mut u8) {
    match flush_instr() {
        // SAFETY: `addr` points into a live mapping (caller checked); clwb only writes back the
        // line and is supported (CPUID leaf 7 EBX bit 24).
        FlushInstr::Clwb => unsafe {
            std::arch::asm!("clwb [{0}]", in(reg) addr, options(nostack, preserves_flags))
        },
        // SAFETY: as above; clflushopt is supported (CPUID leaf 7 EBX bit 23).
        FlushInstr::ClflushOpt => unsafe {
            std::arch::asm!("clflushopt [{0}]", in(reg) addr, options(nostack, preserves_flags))
        },
        // SAFETY: `addr` points into a live mapping; clflush exists on every x86_64 CPU.
        FlushInstr::Clflush => unsafe { std::arch::x86_64::_mm_clflush(addr) },
    }
}

#[cfg(target_arch = "aarch64")]
fn flush_line(addr: *mut u8) {
    match flush_instr() {
        // SAFETY: `addr` points into a live mapping (caller checked); `dc cvap` (encoded as its
        // `sys` form, so no assembler feature flag is needed) only cleans the line, and DCPoP
        // was detected.
        FlushInstr::DcCvap => unsafe {
            std::arch::asm!("sys #3, c7, c12, #1, {0}", in(reg) addr, options(nostack, preserves_flags))
        },
        // SAFETY: as above; `dc cvac` (`sys #3, c7, c10, #1`) exists on every arm64 CPU and is
        // permitted at EL0 under Linux (SCTLR_EL1.UCI).
        FlushInstr::DcCvac => unsafe {
            std::arch::asm!("sys #3, c7, c10, #1, {0}", in(reg) addr, options(nostack, preserves_flags))
        },
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn flush_line(_addr: *mut u8) {}

/// Non-temporal copy of `src` (a multiple of 16 bytes) to the 16-byte-aligned address `dst`.
#[cfg(target_arch = "x86_64")]
fn stream_16(dst: usize, src: &[u8]) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
    debug_assert!(src.len().is_multiple_of(16) && (src.is_empty() || dst.is_multiple_of(16)));
    for (i, chunk) in src.chunks_exact(16).enumerate() {
        // SAFETY: the caller (`write_streaming`) checked that `[dst, dst + src.len())` lies in
        // the mapping and owns it exclusively; `dst + 16 i` is 16-aligned as `_mm_stream_si128`
        // requires; the load is unaligned-safe and reads 16 bytes inside `chunk`; SSE2 is part
        // of the x86_64 baseline.
        unsafe {
            let v = _mm_loadu_si128(chunk.as_ptr() as *const __m128i);
            _mm_stream_si128((dst + 16 * i) as *mut __m128i, v);
        }
    }
}

/// Orders earlier flushes and stores before later stores (`sfence`; arm64 `dsb sy`; a SeqCst
/// fence elsewhere).
pub(crate) fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: sfence exists on every x86_64 CPU and has no memory-safety preconditions.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: `dsb sy` waits for every earlier cache maintenance and store to complete; it has
    // no memory-safety preconditions.
    unsafe {
        std::arch::asm!("dsb sy", options(nostack, preserves_flags))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    std::sync::atomic::fence(Ordering::SeqCst);
}

/// Asks the CPU to start loading the cache line holding `item`: a hint that lets a batch of
/// lookups overlap their cache misses. It never faults, changes no memory, and costs nothing
/// on architectures without the instruction.
pub fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` is SSE (present on every x86_64 CPU), only hints the cache and
    // never faults; the address is that of a live reference besides.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(item as *const T as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

/// [`prefetch`] of `bytes[at]` (nothing if `at` is out of bounds).
pub fn prefetch_read(bytes: &[u8], at: usize) {
    if let Some(byte) = bytes.get(at) {
        prefetch(byte);
    }
}

/// The `statfs` file-system magic of `path`.
pub(crate) fn fs_magic(path: &Path) -> io::Result<i64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))?;
    let mut st = std::mem::MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: `c` is a valid NUL-terminated string and `st` points to writable statfs storage.
    let rc = unsafe { libc::statfs(c.as_ptr(), st.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: statfs succeeded, so it filled the struct (and it was zeroed before).
    let st = unsafe { st.assume_init() };
    #[allow(clippy::unnecessary_cast)]
    Ok(st.f_type as i64)
}

/// Reserves `len` bytes of disk for `file` so a full disk fails here, not with SIGBUS on a later
/// store into the mapping. Returns `Ok(false)` when the file system cannot preallocate (the
/// caller then just sets the length).
pub(crate) fn preallocate(file: &File, len: u64) -> io::Result<bool> {
    let len = libc::off_t::try_from(len)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "region too large"))?;
    #[cfg(target_os = "linux")]
    {
        // SAFETY: the descriptor is open for writing for the duration of the call.
        let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len) };
        match rc {
            0 => Ok(true),
            libc::EOPNOTSUPP | libc::EINVAL => Ok(false),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, len);
        Ok(false)
    }
}

/// Write-behind for a file written through the page cache (`sync_file_range`): starts the
/// write-back of `[offset, offset + len)` without waiting, then waits for the write-back already
/// under way below `offset - lag` (only pages tagged as under write-back are visited, so the
/// wait does not walk the whole file): up to `lag` bytes below `offset` may still be under
/// write-back, which keeps the device busy while the next range is copied. Durability still
/// needs `fdatasync`: this neither flushes metadata nor the device cache. Elsewhere than Linux
/// it does nothing.
pub(crate) fn write_behind(file: &File, offset: u64, len: u64, lag: u64) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let off = |v: u64| {
            libc::off64_t::try_from(v)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "range too large"))
        };
        let (start, count, below) = (off(offset)?, off(len)?, off(offset.saturating_sub(lag))?);
        let fd = file.as_raw_fd();
        // SAFETY: plain syscalls on a descriptor open for writing for the duration of the call;
        // no memory is passed.
        let rc = unsafe { libc::sync_file_range(fd, start, count, libc::SYNC_FILE_RANGE_WRITE) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        let wait = libc::SYNC_FILE_RANGE_WAIT_BEFORE;
        // SAFETY: as above.
        if below > 0 && unsafe { libc::sync_file_range(fd, 0, below, wait) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, offset, len, lag);
        Ok(())
    }
}

/// Takes a POSIX advisory lock on the whole file without waiting (`fcntl(F_SETLK)`): a write
/// lock if `exclusive`, else a read lock (shared with other readers); `Ok(false)` when another
/// process holds a conflicting one. Unlike `flock`, such a lock belongs to the process
/// and is not inherited by children, so a fork in another thread cannot keep it alive after its
/// owner closed the file. It is released when the process closes any descriptor of the file,
/// which the caller (`db::lock`) must account for.
pub fn try_lock_posix(file: &File, exclusive: bool) -> io::Result<bool> {
    // SAFETY: `flock` is a plain C struct for which all-zero bytes are a valid value.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = match exclusive {
        true => libc::F_WRLCK as libc::c_short,
        false => libc::F_RDLCK as libc::c_short,
    };
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    // l_start = 0, l_len = 0: the whole file.
    // SAFETY: the descriptor is open for writing (a write lock) or reading (a read lock), and
    // `fl` outlives the call.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &fl as *const libc::flock) };
    if rc == 0 {
        return Ok(true);
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EACCES) => Ok(false),
        _ => Err(err),
    }
}

#[cfg(test)]
#[path = "raw_tests.rs"]
mod tests;
