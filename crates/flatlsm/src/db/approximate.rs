//! [`Db::approximate_size`]: about how many bytes of storage a key range takes (RocksDB's
//! `GetApproximateSizes`), from the current version's file metadata and the SST indexes,
//! without reading any data block.
//!
//! Per SST file of every level: a file wholly inside the range counts its file size plus the
//! value-log bytes it references (`FileMeta::vlog_refs`); a file straddling a bound counts that
//! sum prorated by the share of its data blocks between the bounds' offsets
//! (`Table::approximate_offset_of`, block granularity); a file outside counts nothing. The write
//! buffers (PMTables, memtables) and a design's level-0 store in PM (MatrixKV's rows) are not
//! counted: the figure is what the range occupies in table files and value logs. Value-log
//! garbage is not known per key range, so a value log's dead bytes are never counted.

use super::{bounds, state::DbInner, Db};
use crate::error::Result;
use crate::types::{make_internal_key, user_key_of, KIND_FOR_SEEK, MAX_SEQUENCE};
use crate::version::FileMeta;
use std::ops::RangeBounds;

/// A half-open user-key range `[lower, upper)`; `None` is unbounded.
struct KeyRange {
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
}

impl KeyRange {
    /// True if no key can be in the range.
    fn is_empty(&self) -> bool {
        matches!((&self.lower, &self.upper), (Some(l), Some(u)) if l >= u)
    }

    /// True if every key of `f` is in the range.
    fn covers(&self, f: &FileMeta) -> bool {
        let above_lower = self.lower.as_deref().is_none_or(|l| l <= smallest(f));
        above_lower && self.upper.as_deref().is_none_or(|u| largest(f) < u)
    }

    /// True if no key of `f` is in the range.
    fn misses(&self, f: &FileMeta) -> bool {
        let below = self.lower.as_deref().is_some_and(|l| largest(f) < l);
        below || self.upper.as_deref().is_some_and(|u| smallest(f) >= u)
    }
}

fn smallest(f: &FileMeta) -> &[u8] {
    user_key_of(&f.smallest)
}

fn largest(f: &FileMeta) -> &[u8] {
    user_key_of(&f.largest)
}

/// The internal key sorting before every entry of `user_key`.
fn seek_key(user_key: &[u8]) -> Vec<u8> {
    make_internal_key(user_key, MAX_SEQUENCE, KIND_FOR_SEEK)
}

/// `bytes * part / whole`, rounded down (0 if `whole` is: no data blocks, no keys).
fn prorate(bytes: u64, part: u64, whole: u64) -> u64 {
    if whole == 0 {
        return 0;
    }
    let share = u128::from(bytes) * u128::from(part.min(whole)) / u128::from(whole);
    u64::try_from(share).unwrap_or(bytes)
}

/// The file's size plus the value-log bytes its entries reference.
fn file_bytes(f: &FileMeta) -> u64 {
    let vlog: u64 = f.vlog_refs.iter().map(|&(_, bytes)| bytes).sum();
    f.file_size.saturating_add(vlog)
}

impl DbInner {
    /// The bytes of file `f` (and of what it references in value logs) within `range`.
    fn file_share(&self, f: &FileMeta, range: &KeyRange) -> Result<u64> {
        if range.misses(f) {
            return Ok(0);
        }
        if range.covers(f) {
            return Ok(file_bytes(f));
        }
        let table = self.files.table_cache().get(f.number, f.file_size, f.dir)?;
        let end = table.footer().data_end();
        let offset = |k: &Option<Vec<u8>>, none| {
            k.as_deref()
                .map_or(none, |k| table.approximate_offset_of(&seek_key(k)))
        };
        let (from, to) = (offset(&range.lower, 0), offset(&range.upper, end));
        Ok(prorate(file_bytes(f), to.saturating_sub(from), end))
    }
}

impl Db {
    /// About how many bytes the keys in `range` take in table files and value logs (RocksDB's
    /// `GetApproximateSizes`): whole SST files inside the range, the share between the bounds
    /// of files straddling one (by their index, at data-block granularity), and the value-log
    /// bytes those files reference, prorated alike. Nothing is read but SST indexes, which the
    /// table cache keeps. Writes still in the write buffers (PMTables) are not counted, nor
    /// value-log garbage; an empty range is 0.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mut opts = flatlsm::Options::default();
    /// # opts.pm_path = Some(dir.path().join("pm"));
    /// let db = flatlsm::Db::open(dir.path().join("db"), opts)?;
    /// for i in 0..1000 {
    ///     db.put(format!("key{i:04}"), [b'v'; 100])?;
    /// }
    /// db.flush()?;
    /// let all = db.approximate_size::<&str>(..)?;
    /// assert!(all >= 100_000, "{all}");
    /// assert!(db.approximate_size("key0000".."key0500")? < all);
    /// assert_eq!(db.approximate_size("x".."y")?, 0);
    /// # Ok::<(), flatlsm::Error>(())
    /// ```
    pub fn approximate_size<K: AsRef<[u8]>>(&self, range: impl RangeBounds<K>) -> Result<u64> {
        self.check_open()?;
        let (lower, upper) = bounds::half_open(&range);
        let range = KeyRange { lower, upper };
        if range.is_empty() {
            return Ok(0);
        }
        let (_, sv) = self.inner.pin(None);
        let mut files = sv.version.levels.iter().flatten();
        files.try_fold(0u64, |total, f| {
            Ok(total.saturating_add(self.inner.file_share(f, &range)?))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(smallest: &str, largest: &str) -> FileMeta {
        FileMeta {
            number: 7,
            file_size: 1000,
            num_entries: 10,
            smallest: make_internal_key(smallest.as_bytes(), 5, crate::types::ValueKind::Value),
            largest: make_internal_key(largest.as_bytes(), 5, crate::types::ValueKind::Value),
            vlog_refs: vec![(3, 400), (4, 100)],
            dir: Default::default(),
            range_dels_applied: 0,
        }
    }

    fn range(lower: Option<&str>, upper: Option<&str>) -> KeyRange {
        let owned = |k: Option<&str>| k.map(|k| k.as_bytes().to_vec());
        KeyRange {
            lower: owned(lower),
            upper: owned(upper),
        }
    }

    #[test]
    fn a_file_is_covered_missed_or_straddling_by_its_user_keys() {
        let f = file("c", "f");
        assert!(range(None, None).covers(&f));
        assert!(range(Some("c"), Some("f\0")).covers(&f));
        assert!(
            !range(Some("c"), Some("f")).covers(&f),
            "upper is exclusive"
        );
        assert!(range(Some("f\0"), None).misses(&f));
        assert!(range(None, Some("c")).misses(&f));
        let straddling = range(Some("d"), Some("e"));
        assert!(!straddling.covers(&f) && !straddling.misses(&f));
        assert!(range(Some("b"), Some("b")).is_empty() && range(Some("b"), Some("a")).is_empty());
    }

    #[test]
    fn a_file_counts_its_size_and_value_log_references_prorated() {
        assert_eq!(file_bytes(&file("a", "b")), 1500);
        assert_eq!(prorate(1500, 50, 100), 750);
        assert_eq!(prorate(1500, 200, 100), 1500, "never more than the file");
        assert_eq!(prorate(1500, 0, 0), 0, "a file without data blocks");
        assert_eq!(prorate(u64::MAX, 1, 2), u64::MAX / 2);
    }
}
