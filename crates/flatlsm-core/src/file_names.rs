//! The numbered files of a database directory, classified by name in one place.
//!
//! SSTables (`NNNNNN.sst`), value logs (`NNNNNN.vlog`), value-log redirect tables
//! (`NNNNNN.vredir`, written by value-log GC), write-ahead logs (`NNNNNN.log`) and manifests
//! (`MANIFEST-NNNNNN`) share one number
//! space (`next_file_number`). Every place that decides what a directory entry is (open's orphan
//! removal and its next file number, the obsolete-file purge, `check`, `dump`, tools that clear a
//! directory) asks [`parse_numbered_file`], so a new file type is added here once, and every
//! name is formatted here too ([`sst_file_name`], [`vlog_file_name`], [`redirect_file_name`],
//! [`manifest_file_name`], [`wal_file_name`]): the modules that write the files re-export them.
//!
//! The PM directory's regions are named here too: PM Logs (`NNNNNN.pmlog`, numbered from the
//! same space), persistent skiplists (`NNNNNN.pmskl`), and the fixed names of MatrixKV's
//! container, SLM-DB's B+-tree and a block cache placed in PM.
//!
//! The info log (`LOG`, rotated to `LOG.old.<micros>`) is not numbered: diagnostics only, no
//! part of the durable state; [`is_info_log_file_name`] names it for the tools and for the
//! fault-injecting file system, which leaves it alone (docs/design-decisions.md).
//!
//! Nothing here touches a file: pure functions over names, never panicking on any input.

/// Prefix of a manifest.
const MANIFEST_PREFIX: &str = "MANIFEST-";
/// Suffix of a value log.
const VLOG_SUFFIX: &str = ".vlog";
/// Suffix of a value-log redirect table.
const REDIRECT_SUFFIX: &str = ".vredir";
/// Suffix of a write-ahead log.
const WAL_SUFFIX: &str = ".log";

/// A numbered file of the database directory, by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NumberedFile {
    /// An SSTable.
    Sst(u64),
    /// A value log.
    Vlog(u64),
    /// A value-log redirect table (docs/vlog-format.md, "Redirect tables").
    Redirect(u64),
    /// A manifest.
    Manifest(u64),
    /// A write-ahead log (designs whose write buffer is in DRAM; `wal`).
    Wal(u64),
}

impl NumberedFile {
    /// The file's number.
    pub fn number(self) -> u64 {
        match self {
            NumberedFile::Sst(n)
            | NumberedFile::Vlog(n)
            | NumberedFile::Redirect(n)
            | NumberedFile::Manifest(n)
            | NumberedFile::Wal(n) => n,
        }
    }
}

/// What `name` is, or `None` for a name that is not a numbered database file.
pub fn parse_numbered_file(name: &str) -> Option<NumberedFile> {
    parse_sst_file_name(name)
        .map(NumberedFile::Sst)
        .or_else(|| parse_vlog_file_name(name).map(NumberedFile::Vlog))
        .or_else(|| parse_redirect_file_name(name).map(NumberedFile::Redirect))
        .or_else(|| parse_manifest_file_name(name).map(NumberedFile::Manifest))
        .or_else(|| parse_wal_file_name(name).map(NumberedFile::Wal))
}

/// The number `digits` spells: at least `min_len` ASCII digits and nothing else (no sign).
fn number(digits: &str, min_len: usize) -> Option<u64> {
    let all_digits = digits.bytes().all(|b| b.is_ascii_digit());
    (digits.len() >= min_len.max(1) && all_digits).then(|| digits.parse().ok())?
}

/// The file name of table `number`: six or more digits and `.sst`, e.g. `000042.sst`.
pub fn sst_file_name(number: u64) -> String {
    format!("{number:06}.sst")
}

/// The table number encoded in a file name produced by [`sst_file_name`], if it is one.
pub fn parse_sst_file_name(name: &str) -> Option<u64> {
    number(name.strip_suffix(".sst")?, 6).filter(|&n| sst_file_name(n) == name)
}

/// The manifest file name for `number`: `MANIFEST-{number:06}`.
pub fn manifest_file_name(number: u64) -> String {
    format!("{MANIFEST_PREFIX}{number:06}")
}

/// Parses a manifest file name; `None` if `name` is not one.
pub fn parse_manifest_file_name(name: &str) -> Option<u64> {
    number(name.strip_prefix(MANIFEST_PREFIX)?, 1)
}

/// The file name of value log `number`: `{number:06}.vlog`.
pub fn vlog_file_name(number: u64) -> String {
    format!("{number:06}{VLOG_SUFFIX}")
}

/// Parses a value-log file name; `None` if `name` is not one.
pub fn parse_vlog_file_name(name: &str) -> Option<u64> {
    number(name.strip_suffix(VLOG_SUFFIX)?, 1)
}

/// The file name of write-ahead log `number`: `{number:06}.log` (RocksDB's name).
pub fn wal_file_name(number: u64) -> String {
    format!("{number:06}{WAL_SUFFIX}")
}

/// Parses a write-ahead log's file name; `None` if `name` is not one.
pub fn parse_wal_file_name(name: &str) -> Option<u64> {
    number(name.strip_suffix(WAL_SUFFIX)?, 6).filter(|&n| wal_file_name(n) == name)
}

/// The file name of redirect table `number`: `{number:06}.vredir`.
pub fn redirect_file_name(number: u64) -> String {
    format!("{number:06}{REDIRECT_SUFFIX}")
}

/// Parses a redirect-table file name; `None` if `name` is not one.
pub fn parse_redirect_file_name(name: &str) -> Option<u64> {
    number(name.strip_suffix(REDIRECT_SUFFIX)?, 1)
}

/// Suffix of a PM Log (a PMTable's log in the PM directory).
const PM_LOG_SUFFIX: &str = ".pmlog";
/// Suffix of a persistent skiplist region (NoveLSM's and SLM-DB's write buffers).
const SKIPLIST_SUFFIX: &str = ".pmskl";
/// The PM region of MatrixKV's matrix container.
pub const CONTAINER_REGION: &str = "matrix.pmc";
/// The PM region of SLM-DB's B+-tree.
pub const BTREE_REGION: &str = "index.pmbt";
/// The PM region of a block cache placed in PM (`block_cache_placement = Pm`).
pub const BLOCK_CACHE_REGION: &str = "blockcache.pmvol";

/// The file name of PM Log `number`: `{number:06}.pmlog`.
pub fn pm_log_file_name(number: u64) -> String {
    format!("{number:06}{PM_LOG_SUFFIX}")
}

/// The number of a name produced by [`pm_log_file_name`]; `None` for any other name.
pub fn parse_pm_log_file_name(name: &str) -> Option<u64> {
    number(name.strip_suffix(PM_LOG_SUFFIX)?, 1).filter(|&n| pm_log_file_name(n) == name)
}

/// The region name of persistent skiplist `number`: `{number:06}.pmskl`.
pub fn skiplist_region_name(number: u64) -> String {
    format!("{number:06}{SKIPLIST_SUFFIX}")
}

/// The number of a name produced by [`skiplist_region_name`], if it is one.
pub fn parse_skiplist_region_name(name: &str) -> Option<u64> {
    number(name.strip_suffix(SKIPLIST_SUFFIX)?, 1).filter(|&n| skiplist_region_name(n) == name)
}

/// The info log of a database directory (RocksDB's name).
pub const INFO_LOG_FILE: &str = "LOG";
/// Prefix of a rotated info log: `LOG.old.<micros>`, the microseconds since the Unix epoch at
/// which it was rotated.
const OLD_INFO_LOG_PREFIX: &str = "LOG.old.";

/// The file name of the info log rotated at `micros` (microseconds since the Unix epoch).
pub fn old_info_log_file_name(micros: u64) -> String {
    format!("{OLD_INFO_LOG_PREFIX}{micros}")
}

/// The rotation time of a rotated info log's name; `None` if `name` is not one.
pub fn parse_old_info_log_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix(OLD_INFO_LOG_PREFIX)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// True for the info log and its rotated predecessors (`LOG`, `LOG.old.<micros>`).
pub fn is_info_log_file_name(name: &str) -> bool {
    name == INFO_LOG_FILE || parse_old_info_log_file_name(name).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_numbered_kind_round_trips_and_other_names_are_none() {
        let cases = [
            ("000042.sst", NumberedFile::Sst(42)),
            ("000042.vlog", NumberedFile::Vlog(42)),
            ("000042.vredir", NumberedFile::Redirect(42)),
            ("MANIFEST-000042", NumberedFile::Manifest(42)),
            ("000042.log", NumberedFile::Wal(42)),
        ];
        for (name, kind) in cases {
            assert_eq!(parse_numbered_file(name), Some(kind), "{name}");
            assert_eq!(kind.number(), 42);
        }
        assert_eq!(redirect_file_name(7), "000007.vredir");
        for bad in [
            ".vredir",
            "x1.vredir",
            "000001.vredir.tmp",
            "CURRENT",
            "LOCK",
            "1.pmlog",
            "1.log",
            "LOG",
        ] {
            assert_eq!(parse_numbered_file(bad), None, "{bad}");
        }
        let huge = "99999999999999999999999.vredir";
        assert_eq!(parse_redirect_file_name(huge), None);
    }

    #[test]
    fn info_log_names_are_recognised_and_nothing_else() {
        assert_eq!(old_info_log_file_name(17), "LOG.old.17");
        assert_eq!(parse_old_info_log_file_name("LOG.old.17"), Some(17));
        for good in ["LOG", "LOG.old.1", "LOG.old.1764139801123456"] {
            assert!(is_info_log_file_name(good), "{good}");
        }
        for bad in [
            "LOG.old.",
            "LOG.old.x",
            "LOG.old.1.tmp",
            "LOG2",
            "OPTIONS-000001",
        ] {
            assert!(!is_info_log_file_name(bad), "{bad}");
        }
        assert_eq!(
            parse_old_info_log_file_name("LOG.old.99999999999999999999999"),
            None
        );
    }
}
