//! Dropping the OS page cache before read benchmarks (`--drop_caches`), as the FlatLSM
//! paper's evaluation does, so reads do not measure which engine wrote through the cache.

use std::process::Command;

/// The benchmarks that only read (where a warm page cache would decide the result).
const READ_BENCHMARKS: &[&str] = &["readrandom", "readseq", "readreverse", "seekrandom"];

/// True for a benchmark `--drop_caches` applies to.
pub fn is_read_benchmark(name: &str) -> bool {
    READ_BENCHMARKS.contains(&name) || name == "ycsbc"
}

/// `sync`, then `echo 3 > /proc/sys/vm/drop_caches`. Without permission it prints a note and
/// the benchmark runs with the cache as it is.
pub fn drop_page_cache() {
    let synced = Command::new("sync").status().map(|s| s.success());
    let dropped = std::fs::write("/proc/sys/vm/drop_caches", b"3");
    match (synced, dropped) {
        (Ok(true), Ok(())) => eprintln!("dropped the OS page cache"),
        (synced, dropped) => eprintln!(
            "note: could not drop the OS page cache (sync: {synced:?}, drop_caches: {dropped:?}); reads run with the cache as it is"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_read_benchmarks_drop_the_cache() {
        assert!(is_read_benchmark("readrandom") && is_read_benchmark("ycsbc"));
        assert!(!is_read_benchmark("fillrandom") && !is_read_benchmark("ycsba"));
    }
}
