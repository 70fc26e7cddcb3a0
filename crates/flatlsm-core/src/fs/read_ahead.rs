//! [`ReadAhead`]: windows a reader keeps over the files it reads small records from, so a run
//! of records stored one after another costs one read, not one read each.
//!
//! A scan over separated values reads one value-log record per entry. A flush writes a
//! table's values in key order, so a scan's records mostly follow each other in a few logs;
//! reading each with its own `pread` pays a system call (and, out of memory, a device read)
//! per record. A record that does not follow the last one read from its file is read by the
//! caller exactly, as a point read (no window, no extra copy); once a few records of the
//! same file in a row each start where the last one ended (or a little after it), the read is
//! stretched to a window that doubles up to [`MAX_WINDOW`], as the kernel's readahead grows, and the
//! records after it are served from the window; a jump elsewhere starts over.
//!
//! Invariants: a window holds the bytes `[start, start + data.len())` of file `file` exactly
//! as read (the caller checks records in them as it checks any read); a window never reaches
//! past the file size the caller gives; at most [`WINDOWS`] windows are kept, the least
//! recently used replaced first. One owner (a cursor): no locking.

use super::RandomAccessFile;
use std::io;

/// Windows kept, one per file (a scan's records alternate between the logs of a few flushes).
pub const WINDOWS: usize = 4;
/// The largest window, in bytes.
pub const MAX_WINDOW: usize = 128 << 10;
/// The first stretched window, in bytes.
const FIRST_WINDOW: usize = 16 << 10;
/// Reads in a row that must follow each other before a read is stretched: a scan over keys
/// loaded in random order finds only a few records of each log in a row, and a window would
/// copy many records it never uses.
const RUN_TO_STRETCH: u32 = 3;
/// Bytes a read may start after the end of the last one and still follow it.
const MAX_GAP: u64 = 4 << 10;

/// The bytes of one file a reader read last, and where its next record would start.
#[derive(Default)]
struct Window {
    file: u64,
    start: u64,
    data: Vec<u8>,
    /// Where the last record asked for ended.
    next: u64,
    /// The size of the next stretched read.
    stretch: usize,
    /// Reads in a row that followed the one before them.
    run: u32,
    /// Use order: higher is more recent.
    used: u64,
}

impl Window {
    /// Makes this an empty window of file `id` (keeping the buffer's allocation).
    fn reset(&mut self, id: u64) {
        self.file = id;
        self.data.clear();
        self.next = u64::MAX;
        self.stretch = 0;
        self.run = 0;
    }

    /// True if a read of file `id` at `offset` starts at or shortly after where the last one
    /// ended (a scan skips the records of overwritten keys).
    fn follows(&self, id: u64, offset: u64) -> bool {
        self.file == id && offset >= self.next && offset - self.next <= MAX_GAP
    }

    fn holds(&self, file: u64, offset: u64, len: usize) -> bool {
        let end = self.start + self.data.len() as u64;
        self.file == file && offset >= self.start && offset + len as u64 <= end
    }

    fn slice(&self, offset: u64, len: usize) -> &[u8] {
        let at = (offset - self.start) as usize;
        &self.data[at..at + len]
    }
}

/// A reader's windows over the files it reads (see the module docs).
#[derive(Default)]
pub struct ReadAhead {
    windows: Vec<Window>,
    clock: u64,
}

impl ReadAhead {
    /// The `len` bytes at `offset` of `file` (numbered `id`, `size` bytes long) from a
    /// window: one that holds them, or one stretched from them when the read follows the last
    /// one of `id`. `None` when neither: the caller reads the bytes itself, as a point read
    /// does (a window would only add a copy). `offset + len` must not exceed `size`.
    pub fn read(
        &mut self,
        file: &dyn RandomAccessFile,
        id: u64,
        (offset, len): (u64, usize),
        size: u64,
    ) -> io::Result<Option<&[u8]>> {
        self.clock += 1;
        let i = self.window_for(id);
        let clock = self.clock;
        let w = &mut self.windows[i];
        w.used = clock;
        w.run = match w.follows(id, offset) {
            true => w.run.saturating_add(1),
            false => 0,
        };
        w.next = offset + len as u64;
        if !w.holds(id, offset, len) {
            if w.run < RUN_TO_STRETCH {
                w.stretch = 0;
                return Ok(None);
            }
            fill(w, file, id, (offset, len), size)?;
        }
        Ok(Some(w.slice(offset, len)))
    }

    /// The window of file `id`, else a new one or the least recently used one (its buffer
    /// kept for reuse).
    fn window_for(&mut self, id: u64) -> usize {
        if let Some(i) = self.windows.iter().position(|w| w.file == id) {
            return i;
        }
        if self.windows.len() < WINDOWS {
            self.windows.push(Window::default());
        } else {
            let lru = self.windows.iter().enumerate().min_by_key(|(_, w)| w.used);
            let i = lru.map_or(0, |(i, _)| i);
            self.windows.swap(i, WINDOWS - 1);
        }
        let w = self.windows.last_mut().expect("a window");
        w.reset(id);
        self.windows.len() - 1
    }
}

/// Reads a stretched window of `file` from `offset` into `w`: at least `len` bytes, growing
/// with each read that follows the last, never past `size`.
fn fill(
    w: &mut Window,
    file: &dyn RandomAccessFile,
    id: u64,
    (offset, len): (u64, usize),
    size: u64,
) -> io::Result<()> {
    w.stretch = (w.stretch * 2).clamp(FIRST_WINDOW, MAX_WINDOW);
    let room = size.saturating_sub(offset) as usize;
    let want = len.max(w.stretch.min(room));
    w.data.resize(want, 0);
    w.file = id;
    w.start = offset;
    let read = file.read_exact_at(offset, &mut w.data);
    if read.is_err() {
        w.data.clear();
    }
    read
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A file of `len` bytes where byte `i` is `i % 251`, counting its reads.
    struct Counted {
        len: u64,
        reads: AtomicUsize,
    }

    impl RandomAccessFile for Counted {
        fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
            if offset + buf.len() as u64 > self.len {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.reads.fetch_add(1, Ordering::Relaxed);
            for (i, b) in buf.iter_mut().enumerate() {
                *b = ((offset as usize + i) % 251) as u8;
            }
            Ok(())
        }
        fn size(&self) -> io::Result<u64> {
            Ok(self.len)
        }
    }

    fn file(len: u64) -> Counted {
        Counted {
            len,
            reads: AtomicUsize::new(0),
        }
    }

    /// Reads through `ra`, or directly where `ra` leaves the read to the caller.
    fn read(ra: &mut ReadAhead, f: &Counted, id: u64, (offset, len): (u64, usize)) -> Vec<u8> {
        if let Some(bytes) = ra.read(f, id, (offset, len), f.len).unwrap() {
            return bytes.to_vec();
        }
        let mut buf = vec![0; len];
        f.read_exact_at(offset, &mut buf).unwrap();
        buf
    }

    fn expected(offset: u64, len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| ((offset as usize + i) % 251) as u8)
            .collect()
    }

    #[test]
    fn records_read_one_after_another_share_stretched_reads() {
        let f = file(1 << 20);
        let mut ra = ReadAhead::default();
        for n in 0..200u64 {
            let got = read(&mut ra, &f, 7, (n * 1000, 1000));
            assert_eq!(got, expected(n * 1000, 1000));
        }
        assert!(f.reads.load(Ordering::Relaxed) < 20, "{:?}", f.reads);
    }

    #[test]
    fn records_far_apart_are_read_exactly_once_each() {
        let f = file(1 << 20);
        let mut ra = ReadAhead::default();
        for n in [9u64, 3, 700, 41, 500] {
            let got = read(&mut ra, &f, 7, (n * 1000, 100));
            assert_eq!(got, expected(n * 1000, 100));
        }
        assert_eq!(f.reads.load(Ordering::Relaxed), 5);
    }

    #[test]
    fn a_window_never_reads_past_the_end_of_the_file() {
        let f = file(10_000);
        let mut ra = ReadAhead::default();
        for n in 0..10u64 {
            let got = read(&mut ra, &f, 1, (n * 1000, 1000));
            assert_eq!(got, expected(n * 1000, 1000));
        }
    }

    #[test]
    fn interleaved_files_keep_a_window_each() {
        let (a, b) = (file(1 << 20), file(1 << 20));
        let mut ra = ReadAhead::default();
        for n in 0..100u64 {
            assert_eq!(read(&mut ra, &a, 1, (n * 500, 500)), expected(n * 500, 500));
            assert_eq!(read(&mut ra, &b, 2, (n * 500, 500)), expected(n * 500, 500));
        }
        let reads = a.reads.load(Ordering::Relaxed) + b.reads.load(Ordering::Relaxed);
        assert!(reads < 30, "{reads}");
    }

    #[test]
    fn a_failed_read_leaves_no_stale_window() {
        let f = file(1000);
        let mut ra = ReadAhead::default();
        for n in 0..3u64 {
            assert_eq!(read(&mut ra, &f, 1, (n * 100, 100)), expected(n * 100, 100));
        }
        assert!(
            ra.read(&f, 1, (300, 800), 1100).is_err(),
            "a stretched read past the end"
        );
        assert_eq!(read(&mut ra, &f, 1, (0, 100)), expected(0, 100));
    }
}
