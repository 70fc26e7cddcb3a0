//! SLM-DB's range query (section 4): a cursor walking the B+-tree's leaves in key order, each
//! key read from the one block the tree names, merged by the database iterator with the write
//! buffers' cursors. It replaces the merge of every level-0 SST, whose key ranges all overlap.
//!
//! Invariant: the cursor yields, for each key the tree holds, the key's newest version at or
//! below the scan's sequence — exactly what the level-0 merge would let the database iterator
//! keep — as long as every leaf page it reads carries the tree's change count from before the
//! scan pinned its sources ([`crate::designs::Design::scan_mark`]). Why that suffices: the tree
//! then holds what flushes of the pinned write buffers and older ones put there; a key such a
//! flush removed or moved to a file the pinned version lacks is shadowed by the pinned buffer
//! holding the newer entry (a removal's tombstone hides the key, a moved key is searched in the
//! version's files). A newer flush changes the count: the cursor then turns into the merge of
//! the version's level-0 files from where it stands, for the rest of the scan (until a seek
//! finds the count unchanged). Explicit snapshots and backward steps use the merge too.
//!
//! SLM-DB's third candidate source rides along: the keys the tree yields are cut into
//! sub-ranges of `subrange_keys`, and when the scan ends the files behind its most scattered
//! sub-range become compaction candidates if there are more than `threshold` of them.

use super::index::SlmIndex;
use crate::designs::{ScanAt, StoreLookup};
use crate::error::{Error, Result};
use crate::iter::{copy_error, InternalIterator, MergingIterator};
use crate::pmbtree::Location;
use crate::sst::TableCache;
use crate::types::{make_internal_key, parse_internal_key, user_key_of, KIND_FOR_SEEK};
use crate::types::{SequenceNumber, MAX_SEQUENCE};
use crate::version::LevelIterator;
use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;

/// Files range queries found scattered, until a compaction pick takes them (DRAM only: lost
/// ones are found again by later scans, as the paper notes).
#[derive(Debug, Default)]
pub(super) struct Scattered {
    /// Keys per sub-range (SLM-DB: 30).
    pub subrange_keys: usize,
    /// More files than this behind one sub-range flags them (SLM-DB: 8).
    pub threshold: usize,
    files: Mutex<BTreeSet<u64>>,
}

impl Scattered {
    pub fn new(subrange_keys: usize, threshold: usize) -> Self {
        let files = Mutex::default();
        Scattered {
            subrange_keys: subrange_keys.max(1),
            threshold,
            files,
        }
    }

    /// The files flagged since the last call.
    pub fn take(&self) -> BTreeSet<u64> {
        std::mem::take(&mut self.files.lock())
    }
}

/// The files behind one scan's sub-ranges.
#[derive(Default)]
struct Sequentiality {
    window: BTreeSet<u64>,
    keys: usize,
    worst: BTreeSet<u64>,
}

impl Sequentiality {
    fn note(&mut self, file: u64, subrange_keys: usize) {
        self.window.insert(file);
        self.keys += 1;
        if self.keys == subrange_keys {
            self.close_window();
        }
    }

    fn close_window(&mut self) {
        if self.window.len() > self.worst.len() {
            self.worst = std::mem::take(&mut self.window);
        }
        self.window.clear();
        self.keys = 0;
    }
}

/// Where the cursor stands.
enum Mode {
    /// In the tree: a leaf page's entries, the next to read, the next page's fence and the
    /// entry the cursor is on.
    Tree {
        entries: Vec<(Vec<u8>, Location)>,
        pos: usize,
        next: Option<Vec<u8>>,
        current: Option<(Vec<u8>, Vec<u8>)>,
    },
    /// Merging the version's level-0 files.
    Merged(Box<MergingIterator<'static>>),
}

impl Mode {
    /// In the tree, on nothing (invalid).
    fn unpositioned() -> Mode {
        Mode::Tree {
            entries: Vec::new(),
            pos: 0,
            next: None,
            current: None,
        }
    }
}

/// The B+-tree cursor (see the module documentation).
pub(super) struct TreeScan {
    index: SlmIndex,
    tables: Arc<TableCache>,
    seq: SequenceNumber,
    /// The tree's change count a page must carry for the tree to be read.
    mark: u64,
    /// An explicit snapshot's scan: the tree (newest versions) is never read.
    snapshot: bool,
    mode: Mode,
    error: Option<Error>,
    sequentiality: Sequentiality,
}

impl TreeScan {
    /// An unpositioned cursor (it reads nothing, and builds no merge, until positioned).
    pub fn new(index: SlmIndex, scan: ScanAt, tables: Arc<TableCache>) -> Self {
        TreeScan {
            index,
            tables,
            seq: scan.read.seq,
            mark: scan.mark,
            snapshot: scan.read.snapshot,
            mode: Mode::unpositioned(),
            error: None,
            sequentiality: Sequentiality::default(),
        }
    }

    /// Whether the tree may be read: not a snapshot's scan, and unchanged since the mark.
    fn tree_usable(&self) -> bool {
        !self.snapshot && self.index.tree().changes() == self.mark
    }

    /// Starts reading the tree at the page holding keys from `from`: a new range query (the
    /// one before it, if any, is done).
    fn start_tree(&mut self, from: Bound<&[u8]>) {
        self.finish_range_query();
        self.error = None;
        self.mode = Mode::unpositioned();
        self.load_page(from);
    }

    /// Reads the page of keys from `from` and settles on its first readable entry (or a later
    /// page's); a page showing a change turns the cursor into the merge, positioned at the
    /// first entry with a key at or after `from`.
    fn load_page(&mut self, from: Bound<&[u8]>) {
        let page = match self.index.tree().entries_after(from) {
            Ok(page) => page,
            Err(e) => return self.fail(e),
        };
        if page.changes != self.mark {
            return self.merge_from(from);
        }
        self.mode = Mode::Tree {
            entries: page.entries,
            pos: 0,
            next: page.next,
            current: None,
        };
        self.settle();
    }

    /// The fence of the page after the current one once the current one is used up; `None`
    /// while it has entries left or at the end of the tree.
    fn page_done(&mut self) -> Option<Option<Vec<u8>>> {
        match &mut self.mode {
            Mode::Tree {
                entries, pos, next, ..
            } if *pos >= entries.len() => Some(next.take()),
            _ => None,
        }
    }

    /// Turns into the merge at the first entry whose user key is in `from..`.
    fn merge_from(&mut self, from: Bound<&[u8]>) {
        let mut merged = merge(&self.index, &self.tables);
        match from {
            Bound::Unbounded => merged.seek_to_first(),
            Bound::Included(k) => merged.seek(&make_internal_key(k, MAX_SEQUENCE, KIND_FOR_SEEK)),
            Bound::Excluded(k) => {
                merged.seek(&make_internal_key(k, MAX_SEQUENCE, KIND_FOR_SEEK));
                while merged.valid() && user_key_of(merged.key()) == k {
                    merged.next();
                }
            }
        }
        self.mode = Mode::Merged(Box::new(merged));
    }

    /// Moves to the first entry from the page position on that reads as a version at or below
    /// the scan's sequence, loading later pages as needed.
    fn settle(&mut self) {
        loop {
            match self.page_done() {
                Some(Some(fence)) => return self.load_page(Bound::Included(&fence)),
                Some(None) => return, // the end of the tree: the cursor is invalid
                None => {}
            }
            let Mode::Tree { entries, pos, .. } = &self.mode else {
                return;
            };
            let (key, loc) = entries[*pos].clone();
            match self.read(&key, loc) {
                Ok(Some(entry)) => return self.set_current(entry, loc.file),
                Ok(None) => self.advance_pos(),
                Err(e) => return self.fail(e),
            }
        }
    }

    /// The entry `key` reads as at the scan's sequence, from the block the tree names.
    fn read(&self, key: &[u8], loc: Location) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let found = self.index.read_location(key, loc, self.seq, &self.tables)?;
        Ok(match found {
            StoreLookup::Found(f) => Some((f.ikey, f.value)),
            StoreLookup::Absent | StoreLookup::SearchBelow => None,
        })
    }

    fn set_current(&mut self, entry: (Vec<u8>, Vec<u8>), file: u64) {
        let keys = self.index.scattered().subrange_keys;
        self.sequentiality.note(file, keys);
        if let Mode::Tree { current, .. } = &mut self.mode {
            *current = Some(entry);
        }
    }

    fn advance_pos(&mut self) {
        if let Mode::Tree { pos, current, .. } = &mut self.mode {
            *pos += 1;
            *current = None;
        }
    }

    fn fail(&mut self, e: Error) {
        self.error = Some(e);
        self.mode = Mode::unpositioned();
    }

    /// The merge, positioned at the tree cursor's entry (if it is on one).
    fn merged_here(&mut self) -> &mut MergingIterator<'static> {
        if let Mode::Tree { current, .. } = &self.mode {
            let at = current.as_ref().map(|(k, _)| k.clone());
            let mut merged = merge(&self.index, &self.tables);
            if let Some(at) = at {
                merged.seek(&at);
            }
            self.mode = Mode::Merged(Box::new(merged));
        }
        match &mut self.mode {
            Mode::Merged(m) => m,
            Mode::Tree { .. } => unreachable!("just replaced by the merge"),
        }
    }

    /// A new, unpositioned merge (errors of the tree cursor forgotten).
    fn fresh_merge(&mut self) -> &mut MergingIterator<'static> {
        self.error = None;
        self.mode = Mode::Merged(Box::new(merge(&self.index, &self.tables)));
        self.merged_here()
    }

    fn current(&self) -> Option<&(Vec<u8>, Vec<u8>)> {
        match &self.mode {
            Mode::Tree { current, .. } => current.as_ref(),
            Mode::Merged(_) => None,
        }
    }
}

/// The merge of the level-0 files of `index`'s version.
fn merge(index: &SlmIndex, tables: &Arc<TableCache>) -> MergingIterator<'static> {
    let children = index.files().iter().map(|f| {
        let it = LevelIterator::new(vec![f.clone()], tables.clone());
        Box::new(it) as Box<dyn InternalIterator>
    });
    MergingIterator::new(children.collect())
}

impl InternalIterator for TreeScan {
    fn valid(&self) -> bool {
        match &self.mode {
            Mode::Tree { current, .. } => current.is_some() && self.error.is_none(),
            Mode::Merged(m) => m.valid(),
        }
    }

    fn seek_to_first(&mut self) {
        match self.tree_usable() {
            true => self.start_tree(Bound::Unbounded),
            false => self.merge_from(Bound::Unbounded),
        }
    }

    /// A target at or above the scan's sequence reads the tree (the database iterator seeks
    /// with the highest sequence); a lower one asks for older versions: the merge.
    fn seek(&mut self, target: &[u8]) {
        let seq = parse_internal_key(target).map_or(0, |p| p.seq);
        let uk = user_key_of(target);
        if !self.tree_usable() || seq < self.seq {
            return self.fresh_merge().seek(target);
        }
        self.start_tree(Bound::Included(uk));
    }

    fn next(&mut self) {
        match &mut self.mode {
            Mode::Tree { .. } => {
                self.advance_pos();
                self.settle();
            }
            Mode::Merged(m) => m.next(),
        }
    }

    fn seek_to_last(&mut self) {
        self.fresh_merge().seek_to_last();
    }

    fn prev(&mut self) {
        self.merged_here().prev();
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.fresh_merge().seek_for_prev(target);
    }

    fn key(&self) -> &[u8] {
        match &self.mode {
            Mode::Tree { .. } => &self.current().expect("valid").0,
            Mode::Merged(m) => m.key(),
        }
    }

    fn value(&self) -> &[u8] {
        match &self.mode {
            Mode::Tree { .. } => &self.current().expect("valid").1,
            Mode::Merged(m) => m.value(),
        }
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(copy_error(e));
        }
        match &self.mode {
            Mode::Tree { .. } => Ok(()),
            Mode::Merged(m) => m.status(),
        }
    }
}

impl TreeScan {
    /// A range query is done (a new seek, or the cursor dropped): its most scattered
    /// sub-range flags its files (SLM-DB's sequentiality degree), and the count starts again.
    fn finish_range_query(&mut self) {
        let mut s = std::mem::take(&mut self.sequentiality);
        s.close_window();
        let scattered = self.index.scattered();
        if s.worst.len() > scattered.threshold {
            scattered.files.lock().extend(s.worst);
        }
    }
}

impl Drop for TreeScan {
    fn drop(&mut self) {
        self.finish_range_query();
    }
}
