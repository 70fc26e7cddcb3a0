//! Dropping the OS page cache before read benchmarks (`--drop_caches`), as the FlatLSM
//! paper's evaluation does, so reads do not measure which engine wrote through the cache;
//! and `readrandom_cold`, which drops it whatever the flag says, so one run measures reads both
//! as a user sees them right after the writes and from the disk. The suite closes the database
//! around every drop (suite.rs, `cold_start`): the kernel keeps every page a process maps.

use std::process::Command;

/// `readrandom` on the database closed, the OS page cache dropped and the database opened
/// again (the data read from the disk, as the paper's 80 GB, which did not fit in memory, was;
/// the engine's own caches empty).
pub const COLD_READ_RANDOM: &str = "readrandom_cold";

/// The benchmarks that only read (where a warm page cache would decide the result).
const READ_BENCHMARKS: &[&str] = &[
    "readrandom",
    "readseq",
    "readreverse",
    "seekrandom",
    COLD_READ_RANDOM,
];

/// True for a benchmark `--drop_caches` applies to.
pub fn is_read_benchmark(name: &str) -> bool {
    READ_BENCHMARKS.contains(&name) || name == "ycsbc"
}

/// True if the page cache is dropped before benchmark `name` (`flag`: `--drop_caches`).
pub fn drops_before(flag: bool, name: &str) -> bool {
    name == COLD_READ_RANDOM || (flag && is_read_benchmark(name))
}

/// `sync`, then `echo 3 > /proc/sys/vm/drop_caches`; true if both worked. Without permission
/// it prints a note and the benchmark runs with the cache as it is.
pub fn drop_page_cache() -> bool {
    let synced = Command::new("sync").status().map(|s| s.success());
    let dropped = std::fs::write("/proc/sys/vm/drop_caches", b"3");
    match (synced, dropped) {
        (Ok(true), Ok(())) => {
            eprintln!("dropped the OS page cache");
            true
        }
        (synced, dropped) => {
            eprintln!(
                "note: could not drop the OS page cache (sync: {synced:?}, drop_caches: {dropped:?}); reads run with the cache as it is"
            );
            false
        }
    }
}

/// What an outcome's text says when its benchmark asked for a dropped cache and did not get
/// one (no permission), so no reader takes its reads for reads from the disk.
pub const NOT_DROPPED: &str = "(the page cache could not be dropped: reads ran with it as it was)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_read_benchmarks_drop_the_cache() {
        assert!(is_read_benchmark("readrandom") && is_read_benchmark("ycsbc"));
        assert!(!is_read_benchmark("fillrandom") && !is_read_benchmark("ycsba"));
    }

    #[test]
    fn a_cold_read_drops_the_cache_without_the_flag_and_others_only_with_it() {
        assert!(drops_before(false, COLD_READ_RANDOM) && drops_before(true, COLD_READ_RANDOM));
        assert!(!drops_before(false, "readrandom") && drops_before(true, "readrandom"));
        assert!(!drops_before(true, "fillseq"));
    }
}
