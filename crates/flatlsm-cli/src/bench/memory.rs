//! The memory an engine occupied when a benchmark ended, so a comparison can state that every
//! engine reached its figures with the memory it was given (issue 26's fairness rule: FlatLSM
//! must not win by using more memory than RocksDB used in the same run).
//!
//! - **block cache**: the engine's own figure (bytes charged to its block cache);
//! - **page cache**: the pages of the engine's files on the data disk that the OS page cache
//!   holds (`fincore` over every file under its database directory): memory the engine did not
//!   allocate but reads from, which a freshly written RocksDB table or a buffered value log
//!   leaves behind;
//! - **PM (tmpfs)**: the pages of its PM directory (emulated PM: FlatLSM's PM Logs; RocksDB's
//!   WAL directory sits there too), DRAM on this machine but PM in the design;
//! - **RssAnon**: the process's anonymous memory (heap: memtable and PMTable indexes, caches).
//!   The engines of one run share the process one after the other, so a later engine's figure
//!   can include memory an earlier one freed but the allocator kept: an upper bound.
//!
//! A figure is `None` where it could not be taken (no `fincore`, no `/proc`).

use super::engine::Engine;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Bytes of memory one engine occupied (see the module docs for each figure).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MemoryUse {
    /// Bytes in the engine's block cache.
    pub block_cache: Option<u64>,
    /// Page-cache bytes of the engine's files on the data disk.
    pub page_cache: Option<u64>,
    /// Resident bytes of its PM directories (tmpfs).
    pub pm_resident: Option<u64>,
    /// The process's anonymous resident bytes.
    pub rss_anon: Option<u64>,
}

/// What `engine` occupies now.
pub fn measure(engine: &dyn Engine) -> MemoryUse {
    let (data, pm) = engine.directories();
    MemoryUse {
        block_cache: engine.block_cache_bytes(),
        page_cache: resident_bytes(&data),
        pm_resident: resident_bytes(&pm),
        rss_anon: std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| rss_anon(&s)),
    }
}

/// Resident bytes of every file under `dirs` (`None` if `fincore` could not be run).
fn resident_bytes(dirs: &[PathBuf]) -> Option<u64> {
    let mut files = Vec::new();
    for d in dirs {
        files_under(d, &mut files);
    }
    let mut total = 0;
    // Bounded batches keep the command line short; a file deleted meanwhile just counts 0.
    for chunk in files.chunks(512) {
        let out = Command::new("fincore")
            .args(["--bytes", "--noheadings", "--raw", "--output", "RES"])
            .args(chunk)
            .output()
            .ok()?;
        total += sum_lines(&String::from_utf8_lossy(&out.stdout));
    }
    Some(total)
}

/// Regular files under `dir`, recursively (missing directories add nothing).
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        match e.file_type() {
            Ok(t) if t.is_dir() => files_under(&e.path(), out),
            Ok(t) if t.is_file() => out.push(e.path()),
            _ => {}
        }
    }
}

/// The sum of the numbers in `fincore`'s output, one per line.
fn sum_lines(text: &str) -> u64 {
    text.lines()
        .filter_map(|l| l.trim().parse::<u64>().ok())
        .sum()
}

/// `RssAnon` of a `/proc/<pid>/status` text, in bytes.
pub(crate) fn rss_anon(status: &str) -> Option<u64> {
    kb_field(status, "RssAnon")
}

/// MiB with one decimal, or `-` for a figure not taken.
pub fn mib(bytes: Option<u64>) -> String {
    in_mib(bytes).map_or("-".into(), |m| format!("{m:.1}"))
}

/// Bytes in MiB, if taken.
pub fn in_mib(bytes: Option<u64>) -> Option<f64> {
    bytes.map(|b| b as f64 / 1_048_576.0)
}

/// A `/proc/meminfo` field in bytes (`MemTotal`, `MemFree`, `MemAvailable`, ...).
pub fn meminfo_bytes(field: &str) -> std::io::Result<u64> {
    let text = std::fs::read_to_string("/proc/meminfo")?;
    kb_field(&text, field).ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("/proc/meminfo has no {field} line in kB"),
        )
    })
}

/// `field`'s value in bytes from `/proc/meminfo` or `/proc/<pid>/status` text
/// (`Name:   123 kB`).
fn kb_field(text: &str, field: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.split(':').next() == Some(field))?;
    let mut words = line.split(':').nth(1)?.split_whitespace();
    let kb: u64 = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then_some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_fields_are_read_in_bytes_and_other_lines_are_refused() {
        let text =
            "MemTotal:       24683520 kB\nMemFree:          123 kB\nHugePages_Total:       0\n";
        assert_eq!(kb_field(text, "MemTotal"), Some(24_683_520 * 1024));
        assert_eq!(kb_field(text, "MemFree"), Some(123 * 1024));
        assert_eq!(kb_field(text, "HugePages_Total"), None, "no unit");
        assert_eq!(kb_field(text, "Mem"), None, "a prefix is not a field");
    }

    #[test]
    fn rss_anon_is_read_in_bytes_from_the_status_text() {
        let status = "Name:\tx\nVmRSS:\t  900 kB\nRssAnon:\t  512 kB\nRssFile:\t 8 kB\n";
        assert_eq!(rss_anon(status), Some(512 * 1024));
        assert_eq!(rss_anon("Name:\tx\n"), None);
    }

    #[test]
    fn a_file_read_through_the_page_cache_counts_as_resident() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/a"), vec![7u8; 64 << 10]).unwrap();
        let _ = std::fs::read(dir.path().join("sub/a")).unwrap();
        let Some(bytes) = resident_bytes(&[dir.path().to_path_buf()]) else {
            return; // no fincore on this machine: the figure is reported as "-"
        };
        assert!(bytes >= 64 << 10, "{bytes}");
        assert_eq!(resident_bytes(&[dir.path().join("missing")]), Some(0));
        assert_eq!(sum_lines("4096\n\n8192\n"), 12288);
    }
}
