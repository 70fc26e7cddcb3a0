//! Repair's rebuild of SLM-DB's B+-tree from the SSTs a repaired manifest records: each user
//! key's newest version over every file — a value points the tree at the block holding it, a
//! tombstone leaves the key out (what a flush's `insert_file` and the compactions' follow-ups
//! would have left). A k-way merge of one cursor per file (user key ascending, sequence
//! descending, so the first entry of a user key is its newest): memory is one block per file.
//!
//! Persist order: the tree is built under [`REBUILT_REGION`] and persisted whole once built
//! (not node by node: see [`BuildRegion`]), then the old tree is removed and
//! the new one renamed into place — all before repair commits its manifest. A crash before
//! the rename leaves the old tree (or none: open refuses a database whose manifest names SSTs
//! without a tree, and repair runs again); a leftover [`REBUILT_REGION`] is removed by the next
//! rebuild. The old tree holds only locations (the SSTs hold the data), so removing it loses
//! nothing.

use crate::error::{Error, Result};
use crate::file_names::BTREE_REGION;
use crate::pm::{PmDevice, PmMode, PmRegion};
use crate::pmbtree::{Location, PmBtree};
use crate::sst::{Block, Table, TableCache};
use crate::types::{compare_internal_keys, parse_internal_key, user_key_of, ValueKind};
use crate::version::FileMeta;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// Where a tree is built before it replaces the database's.
pub(crate) const REBUILT_REGION: &str = "index.pmbt.rebuild";

/// Builds a tree indexing `files` and puts it in place of the old one, whose size it keeps
/// (`size` without one).
pub(super) fn rebuild_btree(
    device: &dyn PmDevice,
    size: usize,
    files: &[FileMeta],
    tables: &TableCache,
) -> Result<()> {
    remove_if_present(device, REBUILT_REGION)?;
    let size = match device.has_region(BTREE_REGION)? {
        true => device.open_region(BTREE_REGION)?.len(),
        false => size,
    };
    let region = device.create_region(REBUILT_REGION, size)?;
    let tree = PmBtree::create(Arc::new(BuildRegion(region.clone())))?;
    let mut heap = BinaryHeap::new();
    for f in files {
        let table = tables.get(f.number, f.file_size, f.dir)?;
        if let Some(c) = Cursor::start(table, f.number)? {
            heap.push(c);
        }
    }
    index_newest(&tree, &mut heap)?;
    drop(tree);
    region
        .persist(0, region.len())
        .map_err(|e| Error::io(format!("persisting {}", region.path().display()), e))?;
    remove_if_present(device, BTREE_REGION)?;
    device.rename_region(REBUILT_REGION, BTREE_REGION)
}

fn remove_if_present(device: &dyn PmDevice, name: &str) -> Result<()> {
    match device.has_region(name)? {
        true => device.remove_region(name),
        false => Ok(()),
    }
}

/// Pops entries in internal-key order; the first of each user key is indexed if a value.
fn index_newest(tree: &PmBtree, heap: &mut BinaryHeap<Cursor>) -> Result<()> {
    let mut last: Option<Vec<u8>> = None;
    while let Some(mut c) = heap.pop() {
        let uk = user_key_of(c.key());
        if last.as_deref() != Some(uk) {
            if parse_internal_key(c.key()).map(|p| p.kind) != Some(ValueKind::Deletion) {
                tree.upsert(uk, c.location())?;
            }
            last = Some(uk.to_vec());
        }
        if c.advance()? {
            heap.push(c);
        }
    }
    Ok(())
}

/// The region a tree is built in: its writes are persisted once, when the build is done. A
/// crash before leaves a region the next rebuild removes, so persisting each node as the tree
/// writes it (on a file in msync mode, an `msync` per key) would buy nothing.
struct BuildRegion(Arc<dyn PmRegion>);

impl PmRegion for BuildRegion {
    fn path(&self) -> &Path {
        self.0.path()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn mode(&self) -> PmMode {
        self.0.mode()
    }
    fn read(&self, offset: usize, len: usize) -> &[u8] {
        self.0.read(offset, len)
    }
    fn write(&self, offset: usize, data: &[u8]) {
        self.0.write(offset, data)
    }
    fn write_streaming(&self, offset: usize, data: &[u8]) {
        self.0.write_streaming(offset, data)
    }
    fn drain_streaming(&self) {
        self.0.drain_streaming()
    }
    fn store_u64(&self, offset: usize, value: u64) {
        self.0.store_u64(offset, value)
    }
    fn load_u64(&self, offset: usize) -> u64 {
        self.0.load_u64(offset)
    }
    /// Deferred to the end of the build.
    fn persist(&self, _offset: usize, _len: usize) -> io::Result<()> {
        Ok(())
    }
}

/// One file's entries in order, with the block each is in.
struct Cursor {
    table: Arc<Table>,
    number: u64,
    block_index: usize,
    block: Arc<Block>,
    entry: usize,
}

impl Cursor {
    /// A cursor at the file's first entry; `None` for a file without one.
    fn start(table: Arc<Table>, number: u64) -> Result<Option<Cursor>> {
        if table.num_blocks() == 0 {
            return Ok(None);
        }
        let block = table.load_block(0)?;
        let mut c = Cursor {
            table,
            number,
            block_index: 0,
            block,
            entry: 0,
        };
        Ok(c.settle()?.then_some(c))
    }

    fn key(&self) -> &[u8] {
        self.block.key(self.entry)
    }

    fn location(&self) -> Location {
        let handle = self.table.block_handle(self.block_index);
        Location {
            file: self.number,
            offset: handle.offset,
            size: handle.size as u32,
        }
    }

    /// Moves to the next entry; false at the end of the file.
    fn advance(&mut self) -> Result<bool> {
        self.entry += 1;
        self.settle()
    }

    /// Skips past exhausted (or empty) blocks; false at the end of the file.
    fn settle(&mut self) -> Result<bool> {
        while self.entry >= self.block.len() {
            self.block_index += 1;
            if self.block_index >= self.table.num_blocks() {
                return Ok(false);
            }
            self.block = self.table.load_block(self.block_index)?;
            self.entry = 0;
        }
        Ok(true)
    }
}

/// The heap pops the smallest internal key first (ties: the lower file number).
impl Ord for Cursor {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_internal_keys(other.key(), self.key()).then(other.number.cmp(&self.number))
    }
}

impl PartialOrd for Cursor {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Cursor {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Cursor {}
