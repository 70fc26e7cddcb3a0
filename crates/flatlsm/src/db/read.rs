//! The read path: mutable PMTable → immutable PMTables (newest first) → L1's unmerged runs
//! (level 0, newest file first) → Ordered-L1 → L2 → value log. Readers pin a [`SuperVersion`]
//! and its sequence (without a lock: `DbInner::pin`) and read from it without locks. Value
//! pointers are resolved as the pinned version sees them (`values.rs`): through a redirect table
//! when value-log GC moved their log, so a read or iterator of an older version still reads the
//! old log, which that version keeps alive.

use super::state::{DbInner, SuperVersion};
use crate::designs::{ReadAt, ScanAt, StoreLookup};
use crate::error::{Error, Result};
use crate::iter::{DbIterator, InternalIterator, MergingIterator, ValueResolver, SLOW_VALUE_READ};
use crate::pmtable::MemLookup;
use crate::sst::TableCache;
use crate::types::{make_internal_key, parse_internal_key, SequenceNumber, ValueKind};
use crate::types::{ValuePointer, KIND_FOR_SEEK};
use crate::version::LevelIterator;
use crate::version::{Version, MAX_LEVELS};
use arc_swap::Guard;
use std::sync::Arc;

/// The answers of a read of many keys, in the keys' order: each the key's value, `None`, or
/// the error reading it.
pub(crate) type ReadMany = Vec<Result<Option<Vec<u8>>>>;

impl DbInner {
    /// Pins what a read at `seq` needs: every entry with a sequence <= `seq` is reachable from
    /// the pinned super version, and no job has dropped a version a read at `seq` sees.
    ///
    /// Without a lock (a read takes none): it loads the super version, then the visible
    /// sequence, then the super version again, and retries if a swap came between. The pair is
    /// then what both were at the moment the sequence was read, as if read under `sv_lock`,
    /// the lock every swap holds. A GC or flush computes its oldest readable sequence before it
    /// swaps, and the visible sequence never decreases, so a super version written by such a
    /// job always comes with a sequence >= the oldest the job kept versions for. (Loaded the
    /// other way round, a job could run between the two loads, and a read at `seq` found an
    /// older value.) A snapshot's sequence is protected by its registration instead
    /// (`snapshots.rs`), so any current super version serves it.
    ///
    /// The guard it returns costs no shared reference count (`arc_swap`'s per-thread slots):
    /// hold it for one read; [`Guard::into_inner`] gives an `Arc` for longer.
    pub(crate) fn pin(
        &self,
        snapshot_seq: Option<SequenceNumber>,
    ) -> (SequenceNumber, Guard<Arc<SuperVersion>>) {
        let pinned = loop {
            let sv = self.versions.sv();
            let seq = snapshot_seq.unwrap_or_else(|| self.visible());
            if snapshot_seq.is_some() || Arc::ptr_eq(&sv, &self.versions.sv()) {
                break (seq, sv);
            }
        };
        self.sync_point("read:seq_chosen");
        self.quiet.note_op();
        pinned
    }

    /// Whether `key` has a live value now: the write buffers, then the design's store if it
    /// knows without reading the value, else a full read.
    pub(crate) fn exists_now(&self, key: &[u8]) -> Result<bool> {
        let (seq, sv) = self.pin(None);
        let deleted_below = deleted_below(&sv, key, seq);
        match in_buffers(&sv, key, seq)? {
            Some(MemLookup::Value(_, s)) => return Ok(s >= deleted_below),
            Some(MemLookup::Deleted) => return Ok(false),
            None => {}
        }
        let read = ReadAt {
            seq,
            snapshot: false,
        };
        // The store knows keys, not their sequences: under a range tombstone, read.
        let known = match &sv.level0 {
            Some(store) if deleted_below == 0 => store.contains(key, read)?,
            _ => None,
        };
        match known {
            Some(known) => Ok(known),
            None => Ok(self.get_at(key, None)?.is_some()),
        }
    }

    /// Newest value of `key` visible at `seq`.
    pub(crate) fn get_at(
        &self,
        key: &[u8],
        snapshot_seq: Option<SequenceNumber>,
    ) -> Result<Option<Vec<u8>>> {
        let (seq, sv) = self.pin(snapshot_seq);
        let read = ReadAt {
            seq,
            snapshot: snapshot_seq.is_some(),
        };
        self.get_pinned(&sv, read, key)
    }

    /// The values of `keys` as of one moment: at the snapshot's sequence, else at the latest
    /// one with every source pinned once. A design index that changed meanwhile (SLM-DB's
    /// tree follows newer flushes) makes it read again at a registered snapshot.
    pub(crate) fn multi_get_at(
        &self,
        keys: &[&[u8]],
        snapshot_seq: Option<SequenceNumber>,
    ) -> ReadMany {
        let mark = self.design.store().scan_mark();
        let (seq, sv) = self.pin(snapshot_seq);
        let read = ReadAt {
            seq,
            snapshot: snapshot_seq.is_some(),
        };
        let got = self.get_many_pinned(&sv, read, keys);
        if read.snapshot || self.design.store().scan_mark() == mark {
            return got;
        }
        let at = self.snapshots.acquire(|| self.visible());
        let again = self.multi_get_at(keys, Some(at));
        self.snapshots.release(at);
        again
    }

    /// Newest value of `key` visible to `read` in the pinned sources `sv`.
    pub(super) fn get_pinned(
        &self,
        sv: &SuperVersion,
        read: ReadAt,
        key: &[u8],
    ) -> Result<Option<Vec<u8>>> {
        let seq = read.seq;
        let deleted_below = deleted_below(sv, key, seq);
        match in_buffers(sv, key, seq)? {
            Some(MemLookup::Value(v, s)) if s >= deleted_below => return Ok(Some(v)),
            Some(_) => return Ok(None),
            None => {}
        }
        let in_store = match &sv.level0 {
            Some(store) => store.get(key, read, self.files.table_cache())?,
            None => StoreLookup::SearchBelow,
        };
        match in_store {
            StoreLookup::Found(f) => {
                let source = std::path::Path::new("the design's level-0 store");
                let found = (&f.ikey[..], f.value);
                return self.decode_found(&sv.version, found, source, deleted_below);
            }
            StoreLookup::Absent => return Ok(None),
            StoreLookup::SearchBelow => {}
        }
        let lookup = make_internal_key(key, seq, KIND_FOR_SEEK);
        let runs = sv.version.level0_files_for_key(key).map(|f| (true, f));
        let levels = (1..MAX_LEVELS).filter_map(|l| sv.version.file_for_key(l, key));
        let tables = self.files.table_cache();
        // Runs searched without finding the key: what a merge of level 0 would have saved.
        let mut wasted = 0;
        for (is_run, file) in runs.chain(levels.map(|f| (false, f))) {
            // `Some(answer)` once a table holds a version of the key.
            let answer = tables.with(file.number, file.file_size, file.dir, |table| {
                let Some((ikey, value)) = table.get(&lookup)? else {
                    return Ok(None);
                };
                let found = (&ikey[..], value);
                self.decode_found(&sv.version, found, table.path(), deleted_below)
                    .map(Some)
            })?;
            if let Some(value) = answer {
                self.read_charges.charge(wasted);
                return Ok(value);
            }
            wasted += u64::from(is_run);
        }
        self.read_charges.charge(wasted);
        Ok(None)
    }

    /// The value of an entry found in an SST of `version` (a pointer resolved as `version`
    /// sees it: through a redirect table if its value log was moved by GC); `None` for a
    /// tombstone or a version older than `deleted_below` (a range tombstone's).
    pub(super) fn decode_found(
        &self,
        version: &Version,
        (ikey, value): (&[u8], Vec<u8>),
        path: &std::path::Path,
        deleted_below: SequenceNumber,
    ) -> Result<Option<Vec<u8>>> {
        let p = parse_internal_key(ikey)
            .ok_or_else(|| Error::corruption(path, 0, "unparsable internal key in table"))?;
        if p.seq < deleted_below {
            return Ok(None);
        }
        match p.kind {
            ValueKind::Deletion => Ok(None),
            ValueKind::Value => Ok(Some(value)),
            ValueKind::ValuePointer => {
                let ptr = ValuePointer::decode(&value)
                    .ok_or_else(|| Error::corruption(path, 0, "value pointer of wrong length"))?;
                let at = crate::values::locate(version, self.files.redirects(), &ptr)?;
                let cache = self
                    .files
                    .table_cache()
                    .block_cache()
                    .filter(|_| self.opts.value_cache);
                Ok(Some(crate::values::read_value(
                    self.files.vlogs(),
                    cache.map(|c| &**c),
                    &at,
                )?))
            }
        }
    }

    /// The user iterator, unpositioned.
    pub(crate) fn db_iter(
        &self,
        snapshot_seq: Option<SequenceNumber>,
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
    ) -> DbIterator {
        // Read before the pin: an index change after it may be one the pinned sources lack.
        let mark = self.design.store().scan_mark();
        let (seq, sv) = self.pin(snapshot_seq);
        let sv = Guard::into_inner(sv);
        let read = ReadAt {
            seq,
            snapshot: snapshot_seq.is_some(),
        };
        let scan = ScanAt { read, mark };
        let resolver: Arc<dyn ValueResolver> = Arc::new(self.locator(sv.version.clone()));
        let tables = self.files.table_cache().clone();
        // Two cursors over the same pinned sources: the front one, and the one `next_back`
        // walks, made on its first use.
        let cursor = move |pin: Arc<SuperVersion>, lower, upper| {
            let inner = Box::new(internal_iter(&pin, scan, &tables));
            let range_dels = pin.version.range_dels.clone();
            DbIterator::new(
                inner,
                resolver.clone(),
                seq,
                lower,
                upper,
                vec![Box::new(pin)],
            )
            .with_range_dels(range_dels)
        };
        let front = cursor(sv.clone(), lower.clone(), upper.clone());
        // A third, made once a forward scan's values come from the device: it hints the
        // values ahead of the front cursor (`iter::scout`).
        let (scout, scout_pin) = (cursor.clone(), sv.clone());
        let (scout_lower, scout_upper) = (lower.clone(), upper.clone());
        let scout = move || scout(scout_pin, scout_lower, scout_upper);
        front
            .with_back_fn(move || cursor(sv, lower, upper))
            .with_scout_fn(scout, SLOW_VALUE_READ)
    }
}

/// The sequence of the newest range tombstone of `sv` over `key` a reader at `seq` sees (its
/// versions below it are deleted); 0 if none.
pub(super) fn deleted_below(sv: &SuperVersion, key: &[u8], seq: SequenceNumber) -> SequenceNumber {
    sv.version.range_dels.covering_seq(key, seq).unwrap_or(0)
}

/// What the write buffers of `sv` (the mutable one, then the immutables, newest first) say of
/// `key` at `seq`.
pub(super) fn in_buffers(
    sv: &SuperVersion,
    key: &[u8],
    seq: SequenceNumber,
) -> Result<Option<MemLookup>> {
    for table in std::iter::once(&sv.mem).chain(sv.imms.iter()) {
        if let Some(found) = table.get(key, seq)? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// A merged cursor over every source of `sv` as a scan at `scan` sees them, newest first
/// (blocks read through `tables`).
fn internal_iter(
    sv: &SuperVersion,
    scan: ScanAt,
    tables: &Arc<TableCache>,
) -> MergingIterator<'static> {
    let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
    children.push(sv.mem.clone().iter());
    for t in &sv.imms {
        children.push(t.clone().iter());
    }
    if let Some(store) = &sv.level0 {
        children.extend(store.iterators(scan, tables));
    }
    let level0_covered = sv.level0.as_ref().is_some_and(|s| s.covers_level0_files());
    for f in sv.version.levels[0].iter().filter(|_| !level0_covered) {
        let file = vec![f.clone()];
        children.push(Box::new(LevelIterator::new(file, tables.clone())));
    }
    for level in 1..MAX_LEVELS {
        let files = sv.version.levels[level].clone();
        if !files.is_empty() {
            children.push(Box::new(LevelIterator::new(files, tables.clone())));
        }
    }
    MergingIterator::new(children)
}
