//! Point lookups of a batch of keys, interleaved: each key walks its own tables newest first,
//! exactly as [`Table::get`] walks one (filter, index, data block, binary search), but one
//! step at a time in turn with the other keys, and each step first asks the CPU to load what
//! the key's *next* step will read ([`crate::pm::prefetch_read`]). A lone lookup waits out
//! every cache miss of its path one after another (its filter block, the data block's restart
//! array, each probe of the binary search); a batch has the misses of all its keys in flight
//! together. The server's pipelined GETs and `Db::multi_get` read this way.
//!
//! Invariant: every key's answer, and the filter counts, are those [`Table::get`] gives on
//! each of its tables in order, stopping at the first table holding a version of the key.
//! The hints change no result: they only load cache lines.

use super::{Block, Table};
use crate::error::Result;
use crate::types::{compare_internal_keys, user_key_of};
use std::cmp::Ordering;
use std::sync::Arc;

/// One key's lookup: the internal key to seek (user key, sequence, kind for seek) and the
/// tables to search, newest first, as indexes into the batch's table list.
#[derive(Debug)]
pub struct Probe<'a> {
    /// The internal key a lookup seeks.
    pub lookup: &'a [u8],
    /// The tables to search in order (indexes into the `tables` of [`get_all`]).
    pub tables: &'a [usize],
}

/// A key's entry as found: which of its probe's tables held it, and where in which block.
#[derive(Debug)]
pub struct Found {
    /// Position in the probe's `tables` (the tables before it did not hold the key).
    pub position: usize,
    block: Arc<Block>,
    entry: usize,
}

impl Found {
    /// The entry's internal key.
    pub fn ikey(&self) -> &[u8] {
        self.block.key(self.entry)
    }

    /// The entry's value (a value pointer when the entry says so).
    pub fn value(&self) -> &[u8] {
        self.block.value(self.entry)
    }
}

/// Where one key's walk stands.
enum Step {
    /// About to ask the filter of its table at this position (its block was hinted).
    Filter(usize),
    /// Searching the index block of the table at `position` for the data block to read.
    Index {
        position: usize,
        range: Bisect,
    },
    /// Searching a data block of the table at `position`.
    Search {
        position: usize,
        block: Arc<Block>,
        range: Bisect,
    },
    Done(Result<Option<Found>>),
}

/// A binary search for the first key >= the lookup ([`Block::seek`]'s), one probe a step: the
/// answer lies in `lo..=hi` (`hi` = the block's length if no key is). `primed` once the
/// first probe's key was hinted (a block's first step only hints: its restart array is on
/// its way, and reading a slot of it at once would wait for it).
#[derive(Clone, Copy)]
struct Bisect {
    lo: usize,
    hi: usize,
    primed: bool,
}

impl Bisect {
    fn over(block: &Block) -> Bisect {
        block.prefetch_restarts();
        Bisect {
            lo: 0,
            hi: block.len(),
            primed: false,
        }
    }

    /// A search of an index whose answer is known to lie in `range.start..=range.end`.
    fn within(range: std::ops::Range<usize>) -> Bisect {
        Bisect {
            lo: range.start,
            hi: range.end,
            primed: false,
        }
    }

    fn done(&self) -> bool {
        self.primed && self.lo >= self.hi
    }

    /// One probe of `block` for `target` (or the hint of the first), hinting the next probe.
    fn step(&mut self, block: &Block, target: &[u8]) {
        if self.primed && self.lo < self.hi {
            let mid = self.lo + (self.hi - self.lo) / 2;
            match compare_internal_keys(block.key(mid), target) {
                Ordering::Less => self.lo = mid + 1,
                _ => self.hi = mid,
            }
        }
        self.primed = true;
        if self.lo < self.hi {
            block.prefetch_key(self.lo + (self.hi - self.lo) / 2);
        }
    }
}

/// The first entry of each probe's key, in the first of its tables holding one (`None` if
/// none does), as [`Table::get`] on each table in order would give it.
///
/// ```
/// # use flatlsm_core::sst::batch_get::{get_all, Probe};
/// let probes: Vec<Probe> = Vec::new();
/// assert!(get_all(&[], &probes).is_empty());
/// ```
pub fn get_all(tables: &[Arc<Table>], probes: &[Probe<'_>]) -> Vec<Result<Option<Found>>> {
    let mut steps: Vec<Step> = probes.iter().map(|_| Step::Filter(0)).collect();
    for (probe, _) in probes.iter().zip(&steps) {
        hint_filter(tables, probe, 0);
    }
    while steps.iter().any(|s| !matches!(s, Step::Done(_))) {
        for (probe, step) in probes.iter().zip(steps.iter_mut()) {
            advance(tables, probe, step);
        }
    }
    let answer = |s| match s {
        Step::Done(r) => r,
        _ => unreachable!("every step is done"),
    };
    steps.into_iter().map(answer).collect()
}

/// Hints the filter block of the probe's table at `position`, if it has one.
fn hint_filter(tables: &[Arc<Table>], probe: &Probe<'_>, position: usize) {
    if let Some(&t) = probe.tables.get(position) {
        tables[t].prefetch_filter(user_key_of(probe.lookup));
    }
}

/// Takes one step of the probe's walk.
fn advance(tables: &[Arc<Table>], probe: &Probe<'_>, step: &mut Step) {
    let next = match std::mem::replace(step, Step::Done(Ok(None))) {
        Step::Filter(position) => ask_filter(tables, probe, position),
        Step::Index { position, range } => search_index(tables, probe, position, range),
        Step::Search {
            position,
            block,
            range,
        } => search_block(tables, probe, position, block, range),
        done => done,
    };
    *step = next;
}

/// The filter of the table at `position`: on to the next table if it rules the key out, else
/// into the table's index.
fn ask_filter(tables: &[Arc<Table>], probe: &Probe<'_>, position: usize) -> Step {
    let Some(&t) = probe.tables.get(position) else {
        return Step::Done(Ok(None));
    };
    let table = &tables[t];
    if !table.filter_passes(user_key_of(probe.lookup)) {
        return next_table(tables, probe, position);
    }
    let range = Bisect::within(table.block_candidates(probe.lookup));
    Step::Index { position, range }
}

/// One probe of the table's index; once it converged, into the data block it names (none:
/// on to the next table).
fn search_index(
    tables: &[Arc<Table>],
    probe: &Probe<'_>,
    position: usize,
    mut range: Bisect,
) -> Step {
    let table = &tables[probe.tables[position]];
    if !range.done() {
        range.step(table.index_block(), probe.lookup);
        return Step::Index { position, range };
    }
    if range.lo == table.num_blocks() {
        table.count_false_positive();
        return next_table(tables, probe, position);
    }
    match table.load_block(range.lo) {
        Err(e) => Step::Done(Err(e)),
        Ok(block) => {
            let range = Bisect::over(&block);
            Step::Search {
                position,
                block,
                range,
            }
        }
    }
}

/// On to the table after `position`, its filter block hinted.
fn next_table(tables: &[Arc<Table>], probe: &Probe<'_>, position: usize) -> Step {
    hint_filter(tables, probe, position + 1);
    Step::Filter(position + 1)
}

/// One probe of the data block; once it converged, the entry if it is the key's, else on to
/// the next table.
fn search_block(
    tables: &[Arc<Table>],
    probe: &Probe<'_>,
    position: usize,
    block: Arc<Block>,
    mut range: Bisect,
) -> Step {
    if !range.done() {
        range.step(&block, probe.lookup);
        return Step::Search {
            position,
            block,
            range,
        };
    }
    let (user_key, lo) = (user_key_of(probe.lookup), range.lo);
    if lo < block.len() && user_key_of(block.key(lo)) == user_key {
        return Step::Done(Ok(Some(Found {
            position,
            block,
            entry: lo,
        })));
    }
    tables[probe.tables[position]].count_false_positive();
    next_table(tables, probe, position)
}
