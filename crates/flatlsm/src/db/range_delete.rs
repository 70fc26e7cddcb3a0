//! `delete_range`: range tombstones, recorded with the tree, and their retirement.
//!
//! A range tombstone takes the next sequence number under `write_lock` and is committed as a
//! manifest edit (synced) before that sequence becomes visible; the new version carries it,
//! so reads, iterators and every merge see it from then on (docs/design-decisions.md, "Range
//! deletes live in the manifest").
//!
//! Persist order: the mutable write buffer (or its write-ahead log) is made durable, then the
//! manifest record (tombstone + `last_sequence`), then the visible sequence moves. Recovery: a recorded tombstone is in the recovered version, and the next sequence
//! is above it (`last_sequence`); one not recorded never happened (the call failed).
//!
//! Retirement rule: a tombstone leaves the tree, in an edit of its own right after a commit,
//! once nothing it covers can be left: no write buffer holds an entry older than it, the
//! design's own level 0 holds no rows, and every SST overlapping its range was written by a
//! merge that applied it (`FileMeta::range_dels_applied`).

use super::state::{DbInner, SuperVersion};
use super::Db;
use crate::error::{Error, Result};
use crate::options::WriteOptions;
use crate::range_del::RangeTombstone;
use crate::types::user_key_of;
use crate::version::{Version, VersionEdit};

impl Db {
    /// Deletes every key in `[start, end)` (RocksDB's `DeleteRange`). An empty range
    /// (`start == end`) does nothing; `start > end` is [`Error::InvalidArgument`]. The tombstone
    /// is durable when the call returns (it is written to the manifest, synced).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let opts = flatlsm::Options::default().profile(flatlsm::Profile::Leveled);
    /// let db = flatlsm::Db::open(dir.path(), opts)?;
    /// for k in ["a", "b", "c"] {
    ///     db.put(k, "v")?;
    /// }
    /// db.delete_range("a", "c")?;
    /// assert_eq!(db.get("b")?, None);
    /// assert_eq!(db.get("c")?.as_deref(), Some(&b"v"[..]));
    /// # Ok::<(), flatlsm::Error>(())
    /// ```
    pub fn delete_range(&self, start: impl AsRef<[u8]>, end: impl AsRef<[u8]>) -> Result<()> {
        self.delete_range_opt(start, end, &WriteOptions::default())
    }

    /// [`Db::delete_range`] with explicit options: a range delete is always synced, and it
    /// never waits for a write stall (it adds nothing to the write buffers).
    pub fn delete_range_opt(
        &self,
        start: impl AsRef<[u8]>,
        end: impl AsRef<[u8]>,
        _opts: &WriteOptions,
    ) -> Result<()> {
        self.check_open()?;
        let (start, end) = (start.as_ref(), end.as_ref());
        check_range(start, end)?;
        if start == end {
            return Ok(());
        }
        let _w = self.inner.writes.lock();
        self.inner.delete_range_locked(start, end)
    }
}

/// `start <= end`, and both within the key size limit.
fn check_range(start: &[u8], end: &[u8]) -> Result<()> {
    let max = crate::options::MAX_KEY_SIZE;
    if start.len() > max || end.len() > max {
        return Err(Error::InvalidArgument(format!(
            "delete_range bound of {} bytes exceeds the {max}-byte key limit",
            start.len().max(end.len())
        )));
    }
    if start > end {
        return Err(Error::InvalidArgument(
            "delete_range start is after its end".into(),
        ));
    }
    Ok(())
}

impl DbInner {
    /// Records the tombstone `[start, end)` at the next sequence; the caller holds
    /// `write_lock`. A failure may leave the record on disk, so it stops writes (as a failed
    /// write does) until a reopen decides.
    fn delete_range_locked(&self, start: &[u8], end: &[u8]) -> Result<()> {
        self.check_writable()?;
        // As a synced write: every earlier write is durable before it, so a crash never
        // keeps the tombstone and loses a write made before it.
        let stop = |e: &Error| self.set_bg_error(e);
        self.versions.sv().mem.commit().inspect_err(stop)?;
        self.writes.wals().sync().inspect_err(stop)?;
        let seq = self.visible() + 1;
        let mut edit = VersionEdit {
            last_sequence: Some(seq),
            new_range_dels: vec![RangeTombstone {
                start: start.to_vec(),
                end: end.to_vec(),
                seq,
            }],
            ..VersionEdit::default()
        };
        self.install(&mut edit, |_| {}).inspect_err(stop)?;
        self.writes.publish(seq);
        let (lo, hi) = (String::from_utf8_lossy(start), String::from_utf8_lossy(end));
        self.info_log.line(&format!(
            "range tombstone {seq}: delete_range [{lo:?}, {hi:?})"
        ));
        Ok(())
    }

    /// The edit retiring every tombstone of `sv` nothing can be left under (module rule);
    /// `None` if there is none.
    pub(super) fn retire_range_dels_edit(&self, sv: &SuperVersion) -> Option<VersionEdit> {
        let oldest_buffered = std::iter::once(&sv.mem)
            .chain(sv.imms.iter())
            .map(|b| b.min_sequence())
            .min()
            .unwrap_or(u64::MAX);
        let retired: Vec<u64> = sv
            .version
            .range_dels
            .tombstones()
            .iter()
            .filter(|t| t.seq <= oldest_buffered && nothing_left_under(&sv.version, t))
            .map(|t| t.seq)
            .collect();
        (!retired.is_empty()).then(|| VersionEdit {
            retired_range_dels: retired,
            ..VersionEdit::default()
        })
    }
}

/// True if no SST of `v` can hold a version `t` covers, and the design's own state (its
/// extension: MatrixKV's rows) holds nothing.
fn nothing_left_under(v: &Version, t: &RangeTombstone) -> bool {
    v.extension.state().is_empty()
        && v.levels.iter().flatten().all(|f| {
            f.range_dels_applied >= t.seq
                || !t.overlaps(user_key_of(&f.smallest), user_key_of(&f.largest))
        })
}
