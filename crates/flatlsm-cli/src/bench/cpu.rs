//! CPU time of this process and of its finished children, from getrusage(2), for the bench's
//! "CPU seconds per million operations" figure; and returning freed heap to the kernel between
//! engines ([`release_free_heap`]).
//!
//! `RUSAGE_SELF` counts every thread of this process (workers, the engine's background threads,
//! the progress monitor), so in-process engines are charged for their flushes and compactions.
//! `RUSAGE_CHILDREN` counts children that were waited for: its growth across one
//! `Command::output()` is that child's CPU (the bench runs one child at a time).

// The CLI's only unsafe calls: getrusage and mi_collect have no safe wrappers.
#![allow(unsafe_code)]

/// Returns the heap the allocator keeps after frees to the kernel (mimalloc's
/// `mi_collect(true)`; the whole process allocates through mimalloc, `main.rs`). The engines
/// of a comparison run one after the other in this process and its memory cgroup: without
/// this, heap an engine freed but the allocator kept would count as the next engine's memory
/// (its `RssAnon` and its cgroup charge, pushing its page cache out).
pub fn release_free_heap() {
    // SAFETY: mi_collect takes no pointers; it only hands the allocator's free pages back to
    // the kernel.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
}

/// User + system CPU seconds this process has used so far (all threads); `None` if the
/// kernel refused (it cannot for these arguments).
pub fn process_cpu_seconds() -> Option<f64> {
    rusage_seconds(libc::RUSAGE_SELF)
}

/// User + system CPU seconds of this process's terminated, waited-for children so far.
pub fn children_cpu_seconds() -> Option<f64> {
    rusage_seconds(libc::RUSAGE_CHILDREN)
}

fn rusage_seconds(who: libc::c_int) -> Option<f64> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is writable memory of exactly the `struct rusage` getrusage fills, and
    // all-zero bytes are a valid `rusage` (integers only), so it is initialized whether or not
    // the call writes it.
    let (rc, usage) = unsafe {
        let rc = libc::getrusage(who, usage.as_mut_ptr());
        (rc, usage.assume_init())
    };
    (rc == 0).then(|| seconds(&usage.ru_utime) + seconds(&usage.ru_stime))
}

fn seconds(t: &libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

/// CPU seconds per million operations (`None` without operations or a CPU figure).
pub fn per_million_ops(cpu_seconds: Option<f64>, ops: u64) -> Option<f64> {
    cpu_seconds
        .filter(|_| ops > 0)
        .map(|c| c / ops as f64 * 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_cpu_time_grows_with_work() {
        let before = process_cpu_seconds().unwrap();
        let mut x = 0u64;
        while process_cpu_seconds().unwrap() < before + 0.02 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        assert!(children_cpu_seconds().unwrap() >= 0.0);
    }

    /// Frees 200 MB of small blocks below a block still in use (so the allocator cannot
    /// shrink its heap by itself) and checks that the release leaves the resident set.
    #[cfg(target_os = "linux")]
    #[test]
    fn released_heap_leaves_the_resident_set() {
        let rss = || {
            let status = std::fs::read_to_string("/proc/self/status").unwrap();
            crate::bench::memory::rss_anon(&status).unwrap()
        };
        let blocks: Vec<Vec<u8>> = (0..200_000u32).map(|i| vec![i as u8; 1000]).collect();
        let in_use = vec![1u8; 1000];
        drop(blocks);
        let before = rss();
        release_free_heap();
        let after = rss();
        assert!(after + (100 << 20) < before, "RssAnon {before} -> {after}");
        std::hint::black_box(in_use);
    }

    #[test]
    fn per_million_ops_scales_and_needs_operations() {
        assert_eq!(per_million_ops(Some(2.0), 1_000_000), Some(2.0));
        assert_eq!(per_million_ops(Some(1.0), 500_000), Some(2.0));
        assert_eq!(per_million_ops(Some(1.0), 0), None);
        assert_eq!(per_million_ops(None, 10), None);
    }
}
