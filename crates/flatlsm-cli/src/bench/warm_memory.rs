//! `--warm_memory`: before each engine's run, fill free memory with clean page-cache pages of a
//! sparse file, so the pages every engine's files then take come from reclaiming pages the
//! machine has touched before, not from free memory.
//!
//! Why: on a virtual machine whose balloon reports free pages to the host (Firecracker, QEMU
//! with `free-page-reporting`), memory freed for about two seconds goes back to the host, and
//! the guest's next touch of such a page costs about 9 µs per 4 KiB page
//! (docs/results/2026-11-28/session9.md): a buffered write into free memory runs at 0.4–0.8
//! GB/s instead of 4–12. Which engine runs into that, and for how long, then depends on how much
//! memory was free when it started and on which engine ran before it (its deleted files free
//! their pages). Warming gives every engine the state of a machine in use: memory full of clean
//! page cache that reclaim hands over. The sparse file costs no disk space; reading its holes
//! makes the kernel zero-fill, and so touch, each page.
//!
//! Invariant: the file is a sibling of the database directory (`<db>-warm`), never inside a
//! database; it is removed when the benchmark ends ([`remove`]).

use super::memory::meminfo_bytes;
use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Bytes read per call while warming.
const CHUNK: usize = 8 << 20;

/// What one warming did.
struct Warmed {
    read: u64,
    took: Duration,
    free_after: u64,
}

/// Warms memory through `file` (created sparse on first use), reading at most `limit` bytes
/// (a memory cgroup's size) or until free memory is down to a reserve; prints what it did, or
/// a note if it could not (the run then goes on as it is).
pub fn warm(file: &Path, limit: Option<u64>) {
    match warm_through(file, limit) {
        Ok(w) => eprintln!(
            "warmed memory: read {} MiB of {} in {:.1} s; {} MiB free",
            w.read >> 20,
            file.display(),
            w.took.as_secs_f64(),
            w.free_after >> 20
        ),
        Err(e) => eprintln!(
            "note: could not warm memory through {}: {e}",
            file.display()
        ),
    }
}

fn warm_through(file: &Path, limit: Option<u64>) -> io::Result<Warmed> {
    let started = Instant::now();
    let total = meminfo_bytes("MemTotal")?;
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(file)?;
    if f.metadata()?.len() < total {
        f.set_len(total)?;
    }
    let reserve = reserve(total);
    let most = limit.unwrap_or(total).min(total);
    let mut buf = vec![0u8; CHUNK];
    let mut read = 0u64;
    while read < most && meminfo_bytes("MemFree")? > reserve {
        match f.read_at(&mut buf, read)? {
            0 => break,
            n => read += n as u64,
        }
    }
    Ok(Warmed {
        read,
        took: started.elapsed(),
        free_after: meminfo_bytes("MemFree")?,
    })
}

/// Free memory left unwarmed: 1/64 of the machine, at least 256 MiB (the kernel's watermarks
/// and the engine's first allocations come from it).
fn reserve(total: u64) -> u64 {
    (total / 64).max(256 << 20)
}

/// Removes the warming file (its pages go with it).
pub fn remove(file: &Path) {
    let _ = std::fs::remove_file(file);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warming_stops_at_its_limit_and_leaves_a_sparse_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("db-warm");
        let w = warm_through(&file, Some(16 << 20)).unwrap();
        assert!(w.read <= 16 << 20, "read {} bytes past the limit", w.read);
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(&file).unwrap();
        assert!(meta.len() >= 16 << 20);
        assert_eq!(meta.blocks(), 0, "the warming file took disk blocks");
        remove(&file);
        assert!(!file.exists());
    }
}
