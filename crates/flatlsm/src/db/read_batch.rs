//! Reads of many keys at one moment (`Db::multi_get`, the server's pipelined GETs and
//! counters): the write buffers key by key as [`DbInner::get_pinned`] reads them, then every
//! key still unanswered through the SSTables together (`sst::batch_get`: the keys' lookups
//! interleaved, each step's cache misses in flight beside the other keys'), then the values:
//! every mapped record's first cache lines requested before the first is copied.
//!
//! A lone get spends most of its time waiting on memory once the tables outgrow the CPU
//! cache: about twenty dependent misses (filters, a data block's restart array and binary
//! search, the value's page). A batch overlaps them.
//!
//! Invariant: each answer is the one [`DbInner::get_pinned`] gives for its key with the same
//! pinned sources (the tests compare them); the read charges (`read_charges.rs`) are the same.
//! Whatever this path does not handle itself (a design's level-0 store, a table that cannot
//! be opened) it leaves to `get_pinned`, key by key.

use super::read::{deleted_below, in_buffers, ReadMany};
use super::state::{DbInner, SuperVersion};
use crate::designs::ReadAt;
use crate::error::Result;
use crate::pmtable::MemLookup;
use crate::sst::batch_get::{get_all, Found, Probe};
use crate::sst::Table;
use crate::types::{make_internal_key, parse_internal_key, ValueKind, ValuePointer};
use crate::types::{SequenceNumber, KIND_FOR_SEEK};
use crate::version::MAX_LEVELS;
use std::sync::Arc;

/// The tables a batch searches, and for each key the positions of its candidates in them.
struct Candidates {
    tables: Vec<Arc<Table>>,
    /// Per key (of those searched): its tables newest first, and how many of them are
    /// level-0 runs (the first ones).
    per_key: Vec<(Vec<usize>, usize)>,
}

impl DbInner {
    /// The newest values of `keys` visible to `read` in the pinned sources `sv`, in order.
    pub(super) fn get_many_pinned(
        &self,
        sv: &SuperVersion,
        read: ReadAt,
        keys: &[&[u8]],
    ) -> ReadMany {
        if sv.level0.is_some() {
            return keys.iter().map(|k| self.get_pinned(sv, read, k)).collect();
        }
        for key in keys {
            std::iter::once(&sv.mem)
                .chain(&sv.imms)
                .for_each(|t| t.hint(key));
        }
        let deleted: Vec<SequenceNumber> = keys
            .iter()
            .map(|k| deleted_below(sv, k, read.seq))
            .collect();
        let mut answers: Vec<Option<Result<Option<Vec<u8>>>>> = keys
            .iter()
            .zip(&deleted)
            .map(|(k, &below)| from_buffers(sv, k, read.seq, below))
            .collect();
        let rest: Vec<usize> = (0..keys.len()).filter(|&i| answers[i].is_none()).collect();
        let searched = self.search_tables(sv, read, keys, &rest, &deleted);
        for (i, answer) in rest.into_iter().zip(searched) {
            answers[i] = Some(answer);
        }
        answers.into_iter().map(|a| a.unwrap_or(Ok(None))).collect()
    }

    /// The answers for `keys[i]`, `i` in `rest`, from the SSTables of `sv` (and their values).
    fn search_tables(
        &self,
        sv: &SuperVersion,
        read: ReadAt,
        keys: &[&[u8]],
        rest: &[usize],
        deleted: &[SequenceNumber],
    ) -> ReadMany {
        let seq = read.seq;
        let Ok(candidates) = self.candidates(sv, rest.iter().map(|&i| keys[i])) else {
            // A table that cannot be opened: each key reports it where its own read meets it.
            return rest
                .iter()
                .map(|&i| self.get_pinned(sv, read, keys[i]))
                .collect();
        };
        let lookups: Vec<Vec<u8>> = rest
            .iter()
            .map(|&i| make_internal_key(keys[i], seq, KIND_FOR_SEEK))
            .collect();
        let probes: Vec<Probe> = lookups
            .iter()
            .zip(&candidates.per_key)
            .map(|(lookup, (tables, _))| Probe { lookup, tables })
            .collect();
        let found = get_all(&candidates.tables, &probes);
        self.charge_wasted_probes(&candidates, &found);
        let located = self.hint_values(sv, &found);
        let per_key = found.into_iter().zip(&candidates.per_key).zip(rest);
        let answer = |(((found, (tables, _)), &i), at): (FoundFor<'_>, Located)| {
            let f = found?;
            let table = f.as_ref().map(|f| &candidates.tables[tables[f.position]]);
            self.answer(sv, f.zip(table), at, deleted[i])
        };
        per_key.zip(located).map(answer).collect()
    }

    /// A key's answer from its entry as found in `table` (`None`: no table holds it): a value
    /// pointer already located is read, anything else decoded as `get_pinned` decodes it.
    fn answer(
        &self,
        sv: &SuperVersion,
        found: Option<(Found, &Arc<Table>)>,
        at: Located,
        deleted_below: SequenceNumber,
    ) -> Result<Option<Vec<u8>>> {
        match (found, at) {
            (None, _) => Ok(None),
            (Some(_), Some((seq, at))) if seq >= deleted_below => self.read_located(&at).map(Some),
            (Some((f, table)), _) => {
                let found = (f.ikey(), f.value().to_vec());
                self.decode_found(&sv.version, found, table.path(), deleted_below)
            }
        }
    }

    /// The value at `at`, a located value pointer (through the value cache when it is on).
    fn read_located(&self, at: &ValuePointer) -> Result<Vec<u8>> {
        let cache = self.files.table_cache().block_cache();
        let cache = cache.filter(|_| self.opts.value_cache);
        crate::values::read_value(self.files.vlogs(), cache.map(|c| &**c), at)
    }

    /// The tables each key may be in (its level-0 runs newest first, then one file per level),
    /// each table opened once for the batch.
    fn candidates<'k>(
        &self,
        sv: &SuperVersion,
        keys: impl Iterator<Item = &'k [u8]>,
    ) -> Result<Candidates> {
        let mut numbers: Vec<u64> = Vec::new();
        let mut tables: Vec<Arc<Table>> = Vec::new();
        let mut per_key = Vec::new();
        for key in keys {
            let runs = sv.version.level0_files_for_key(key);
            let levels = (1..MAX_LEVELS).filter_map(|l| sv.version.file_for_key(l, key));
            let files: Vec<_> = runs.collect();
            let run_count = files.len();
            let mut positions = Vec::with_capacity(run_count + 2);
            for file in files.into_iter().chain(levels) {
                let at = match numbers.iter().position(|&n| n == file.number) {
                    Some(at) => at,
                    None => {
                        let table =
                            self.files
                                .table_cache()
                                .get(file.number, file.file_size, file.dir)?;
                        numbers.push(file.number);
                        tables.push(table);
                        tables.len() - 1
                    }
                };
                positions.push(at);
            }
            per_key.push((positions, run_count));
        }
        Ok(Candidates { tables, per_key })
    }

    /// Charges each key's runs searched without finding it, as `get_pinned` does.
    fn charge_wasted_probes(&self, candidates: &Candidates, found: &[Result<Option<Found>>]) {
        for ((_, runs), found) in candidates.per_key.iter().zip(found) {
            let searched = match found {
                Ok(Some(f)) => f.position,
                Ok(None) => *runs,
                Err(_) => continue,
            };
            self.read_charges.charge(searched.min(*runs) as u64);
        }
    }

    /// Where each found value pointer's record is, with the entry's sequence (`None` for
    /// anything else, or a pointer that does not locate: `decode_found` reports it); each
    /// record's cache lines requested from a mapped value log before the first is copied.
    fn hint_values(&self, sv: &SuperVersion, found: &[Result<Option<Found>>]) -> Vec<Located> {
        let locate = |f: &Result<Option<Found>>| {
            let f = f.as_ref().ok()?.as_ref()?;
            let parsed = parse_internal_key(f.ikey())?;
            let is_pointer = parsed.kind == ValueKind::ValuePointer;
            let ptr = ValuePointer::decode(f.value()).filter(|_| is_pointer)?;
            let at = crate::values::locate(&sv.version, self.files.redirects(), &ptr).ok()?;
            self.files.vlogs().hint_mapped(&at);
            Some((parsed.seq, at))
        };
        found.iter().map(locate).collect()
    }
}

/// One key's walk through the tables as `search_tables` zips it: what it found, its candidate
/// tables, and its index among the keys.
type FoundFor<'a> = ((Result<Option<Found>>, &'a (Vec<usize>, usize)), &'a usize);

/// A found value pointer's entry sequence and where its record is now.
type Located = Option<(SequenceNumber, ValuePointer)>;

/// What the write buffers say of `key` at `seq` (`None`: ask the tables), as `get_pinned`
/// reads them.
fn from_buffers(
    sv: &SuperVersion,
    key: &[u8],
    seq: SequenceNumber,
    deleted_below: SequenceNumber,
) -> Option<Result<Option<Vec<u8>>>> {
    match in_buffers(sv, key, seq) {
        Err(e) => Some(Err(e)),
        Ok(Some(MemLookup::Value(v, s))) if s >= deleted_below => Some(Ok(Some(v))),
        Ok(Some(_)) => Some(Ok(None)),
        Ok(None) => None,
    }
}
