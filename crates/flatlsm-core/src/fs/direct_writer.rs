//! [`DirectWriter`]: a sequential [`WritableFile`] over a [`DirectFile`], for large outputs
//! (value logs) written without the page-cache copy and with I/O overlapping the producer.
//!
//! - Appended bytes are copied into an aligned buffer of [`BUFFER_SIZE`] bytes. A full buffer
//!   goes to an I/O thread (spawned on the first full buffer, so small files never start one),
//!   which writes it while the owner fills the next; at most [`MAX_IN_FLIGHT`] buffers wait or
//!   are being written, then `append` blocks (back pressure). Buffers are recycled.
//! - `flush`/`sync` wait for the I/O thread, write the partial last block padded with zeros,
//!   then set the file length to the bytes appended (cutting the padding); `sync` then makes it
//!   durable. The partial block stays buffered and is written again, whole, with the bytes
//!   that follow it. So after `flush` the file holds exactly the bytes appended.
//! - With `cache_written`, the I/O thread asks the platform to read each written buffer back
//!   into the page cache in the background ([`DirectFile::cache_written`]), so fresh data is
//!   read from memory, as after a buffered write, without a CPU copy on the write path.
//! - Through the page cache (direct I/O off or refused), the I/O thread starts each written
//!   buffer's write-back at once and waits for the one before ([`DirectFile::write_behind`]):
//!   the device works while the owner fills buffers, as with direct I/O, dirty pages stay
//!   bounded, the final `sync` is short, and the data stays in the page cache for readers.
//! - Buffers are aligned without `unsafe`: a `Vec` one block larger than needed, used from its
//!   first aligned byte (a `Vec`'s heap block does not move when the `Vec` is moved).
//!
//! Invariant: `buf` holds the file's bytes `[buf_start, len)`, `buf_start` is a multiple of
//! [`DIRECT_ALIGN`], and every byte below `buf_start` was handed to the I/O thread.
//!
//! A crash before `flush` returns may leave the file shorter than `len`, with its last block
//! torn, or (between the padded write and the length change) zero padding up to a block
//! boundary; callers treat such a file as unfinished (docs/vlog-format.md).
//!
//! After an I/O error the writer is failed: every later call returns an error, since the file's
//! tail is unknown. Thread-safety: `Send`, one owner; the I/O thread only writes blocks.

use super::{DirectFile, WritableFile, DIRECT_ALIGN};
use std::io;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Bytes per buffer (and per write the I/O thread issues): large enough that a write's fixed
/// cost is small next to its transfer time.
pub const BUFFER_SIZE: usize = 2 << 20;
/// Full buffers that may wait for or be under I/O while the owner fills another.
pub const MAX_IN_FLIGHT: usize = 2;

/// A zero-initialised buffer of [`BUFFER_SIZE`] bytes at an address aligned to [`DIRECT_ALIGN`].
struct AlignedBuf {
    storage: Vec<u8>,
    start: usize,
}

impl AlignedBuf {
    fn new() -> Self {
        let storage = vec![0u8; BUFFER_SIZE + DIRECT_ALIGN];
        let addr = storage.as_ptr().addr();
        let start = addr.next_multiple_of(DIRECT_ALIGN) - addr;
        AlignedBuf { storage, start }
    }

    fn bytes(&self) -> &[u8] {
        &self.storage[self.start..self.start + BUFFER_SIZE]
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + BUFFER_SIZE]
    }
}

/// A buffer to write: `len` bytes of `buf` at file offset `offset`.
struct Job {
    buf: AlignedBuf,
    offset: u64,
    len: usize,
}

/// A written buffer coming back for reuse, with the write's result.
struct Done {
    buf: AlignedBuf,
    result: io::Result<()>,
}

/// The I/O thread and its two queues.
struct IoThread {
    jobs: Option<SyncSender<Job>>,
    done: Receiver<Done>,
    handle: Option<JoinHandle<()>>,
}

impl IoThread {
    fn spawn(file: Arc<dyn DirectFile>, cache_written: bool) -> io::Result<IoThread> {
        let (jobs, job_rx) = sync_channel::<Job>(MAX_IN_FLIGHT);
        let (done_tx, done) = sync_channel::<Done>(MAX_IN_FLIGHT + 1);
        let handle = std::thread::Builder::new()
            .name("flatlsm-direct-io".into())
            .spawn(move || {
                for job in job_rx {
                    let result = file.write_at(job.offset, &job.buf.bytes()[..job.len]);
                    if cache_written && result.is_ok() {
                        // Only a hint: a refusal leaves the data on the device, still readable.
                        let _ = file.cache_written(job.offset, job.len as u64);
                    }
                    if result.is_ok() {
                        // Only a hint too: the final sync writes whatever this did not.
                        let _ = file.write_behind(job.offset, job.len as u64);
                    }
                    let back = Done {
                        buf: job.buf,
                        result,
                    };
                    if done_tx.send(back).is_err() {
                        break;
                    }
                }
            })?;
        Ok(IoThread {
            jobs: Some(jobs),
            done,
            handle: Some(handle),
        })
    }
}

impl Drop for IoThread {
    /// Lets the thread finish the queued writes and waits for it, so no write reaches the file
    /// after its writer is gone.
    fn drop(&mut self) {
        self.jobs = None;
        while self.done.recv().is_ok() {}
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Sequential writer over a [`DirectFile`] (module documentation).
pub struct DirectWriter {
    file: Arc<dyn DirectFile>,
    buf: AlignedBuf,
    buf_start: u64,
    len: u64,
    spare: Vec<AlignedBuf>,
    io: Option<IoThread>,
    in_flight: usize,
    failed: bool,
    cache_written: bool,
}

impl DirectWriter {
    /// A writer appending to `file` from offset 0 (a fresh, empty file).
    pub fn new(file: Arc<dyn DirectFile>) -> Self {
        DirectWriter {
            file,
            buf: AlignedBuf::new(),
            buf_start: 0,
            len: 0,
            spare: Vec::new(),
            io: None,
            in_flight: 0,
            failed: false,
            cache_written: false,
        }
    }

    /// Also reads what is written back into the page cache (module documentation).
    pub fn caching_written(mut self, cache_written: bool) -> Self {
        self.cache_written = cache_written;
        self
    }

    /// True if the file bypasses the page cache (see [`DirectFile::is_direct`]).
    pub fn is_direct(&self) -> bool {
        self.file.is_direct()
    }

    /// Runs a step; a failure fails the writer for good.
    fn guard(&mut self, step: impl FnOnce(&mut Self) -> io::Result<()>) -> io::Result<()> {
        if self.failed {
            return Err(io::Error::other("an earlier write to this file failed"));
        }
        let r = step(self);
        self.failed |= r.is_err();
        r
    }

    /// Copies `data` into buffers, handing each full one to the I/O thread.
    fn fill(&mut self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            let filled = (self.len - self.buf_start) as usize;
            let n = data.len().min(BUFFER_SIZE - filled);
            self.buf.bytes_mut()[filled..filled + n].copy_from_slice(&data[..n]);
            self.len += n as u64;
            data = &data[n..];
            if filled + n == BUFFER_SIZE {
                self.submit_full()?;
            }
        }
        Ok(())
    }

    /// Hands the full buffer to the I/O thread and continues in a recycled (or new) one.
    fn submit_full(&mut self) -> io::Result<()> {
        if self.in_flight == MAX_IN_FLIGHT {
            self.reap_one()?;
        }
        let next = self.spare.pop().unwrap_or_else(AlignedBuf::new);
        let job = Job {
            buf: std::mem::replace(&mut self.buf, next),
            offset: self.buf_start,
            len: BUFFER_SIZE,
        };
        self.buf_start += BUFFER_SIZE as u64;
        if self.io.is_none() {
            self.io = Some(IoThread::spawn(self.file.clone(), self.cache_written)?);
        }
        let jobs = self.io.as_ref().and_then(|io| io.jobs.as_ref());
        jobs.ok_or_else(io_thread_gone)?
            .send(job)
            .map_err(|_| io_thread_gone())?;
        self.in_flight += 1;
        Ok(())
    }

    /// Waits for one write of the I/O thread; keeps its buffer for reuse.
    fn reap_one(&mut self) -> io::Result<()> {
        let io = self.io.as_ref().ok_or_else(io_thread_gone)?;
        let done = io.done.recv().map_err(|_| io_thread_gone())?;
        self.in_flight -= 1;
        self.spare.push(done.buf);
        done.result
    }

    /// Waits until every handed-over buffer is written.
    fn drain(&mut self) -> io::Result<()> {
        while self.in_flight > 0 {
            self.reap_one()?;
        }
        Ok(())
    }

    /// Writes the buffered bytes (the last block padded with zeros) and cuts the file to `len`.
    /// Keeps the partial last block at the front of the buffer, to be rewritten whole later.
    fn write_tail(&mut self) -> io::Result<()> {
        self.drain()?;
        let filled = (self.len - self.buf_start) as usize;
        if filled == 0 {
            return Ok(());
        }
        let padded = filled.next_multiple_of(DIRECT_ALIGN);
        self.buf.bytes_mut()[filled..padded].fill(0);
        self.file
            .write_at(self.buf_start, &self.buf.bytes()[..padded])?;
        if self.cache_written {
            let _ = self.file.cache_written(self.buf_start, padded as u64);
        }
        if padded != filled {
            self.file.set_len(self.len)?;
        }
        let whole = filled - filled % DIRECT_ALIGN;
        self.buf.bytes_mut().copy_within(whole..filled, 0);
        self.buf_start += whole as u64;
        Ok(())
    }
}

fn io_thread_gone() -> io::Error {
    io::Error::other("the direct-write I/O thread stopped")
}

impl WritableFile for DirectWriter {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        self.guard(|w| w.fill(data))
    }
    fn flush(&mut self) -> io::Result<()> {
        self.guard(Self::write_tail)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.guard(|w| {
            w.write_tail()?;
            w.file.sync()
        })
    }
    fn len(&self) -> u64 {
        self.len
    }
}

#[cfg(test)]
#[path = "direct_writer_tests.rs"]
mod tests;
