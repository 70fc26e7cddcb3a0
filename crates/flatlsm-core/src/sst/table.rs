//! An open, read-only SSTable: footer, index and bloom filter are validated at open and kept in
//! memory; data blocks are read on demand (through the optional shared [`BlockCache`], which
//! holds them decoded: decompressed once per load, never per lookup).
//!
//! Invariants established by [`Table::open`]: the file has the size the caller expects, the
//! footer is valid, the index block is sorted and its handles describe data blocks laid out back
//! to back from offset 0 up to the filter (or index) block. Every data block is checked when it
//! is loaded: CRC, decompression (type known, exact recorded size), entry encoding, non-empty, last key equal to its index key, first key after
//! the previous index key. Thread-safety: `Table` is immutable and `Send + Sync`.

use super::block::Block;
use super::bloom::{BloomFilter, FilterCounters};
use super::cache::BlockCache;
use super::format::{
    decode_footer, decompress_block, read_block, read_exact, read_stored_block, BlockHandle,
    Footer, StoredBlock, FOOTER_LEN,
};
use super::index_words::IndexWords;
use super::iterator::TableIterator;
use crate::error::{Error, IoContext, Result};
use crate::fs::RandomAccessFile;
use crate::types::{compare_internal_keys, user_key_of};
use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A read-only table file.
pub struct Table {
    file: Arc<dyn RandomAccessFile>,
    path: PathBuf,
    file_number: u64,
    footer: Footer,
    index: Block,
    /// The index's entries as words, searched before the index itself.
    index_words: IndexWords,
    handles: Vec<BlockHandle>,
    filter: Option<BloomFilter>,
    cache: Option<Arc<BlockCache>>,
    /// Where [`Table::get`] counts its filter's answers (if anywhere).
    filter_counters: Option<Arc<FilterCounters>>,
}

impl Table {
    /// Opens table `file_number` of `file_size` bytes, verifying footer, index and filter.
    pub fn open(
        file: Arc<dyn RandomAccessFile>,
        path: PathBuf,
        file_number: u64,
        file_size: u64,
        cache: Option<Arc<BlockCache>>,
    ) -> Result<Arc<Table>> {
        Self::open_counted(file, path, file_number, file_size, cache, None)
    }

    /// [`Table::open`], counting the filter's answers to [`Table::get`] in `filter_counters`.
    pub fn open_counted(
        file: Arc<dyn RandomAccessFile>,
        path: PathBuf,
        file_number: u64,
        file_size: u64,
        cache: Option<Arc<BlockCache>>,
        filter_counters: Option<Arc<FilterCounters>>,
    ) -> Result<Arc<Table>> {
        let footer = read_footer(file.as_ref(), &path, file_size)?;
        let index_bytes = read_block(file.as_ref(), &path, footer.index)?;
        let index = Block::decode(index_bytes, &path, footer.index.offset)?;
        let handles = index_handles(&index, &footer, &path)?;
        let filter = if footer.has_filter() {
            let bytes = read_block(file.as_ref(), &path, footer.filter)?;
            Some(BloomFilter::decode(bytes, &path, footer.filter.offset)?)
        } else {
            None
        };
        Ok(Arc::new(Table {
            file,
            path,
            file_number,
            footer,
            index_words: IndexWords::new(&index),
            index,
            handles,
            filter,
            cache,
            filter_counters,
        }))
    }

    /// False only if no key of this table has user key `user_key` (bloom filter check).
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        self.filter.as_ref().is_none_or(|f| f.may_contain(user_key))
    }

    /// The first entry whose internal key is >= `lookup`, if its user key equals lookup's.
    pub fn get(&self, lookup: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let user_key = user_key_of(lookup);
        if !self.filter_passes(user_key) {
            return Ok(None);
        }
        let found = self.find(lookup, user_key)?;
        if found.is_none() {
            self.count_false_positive();
        }
        Ok(found)
    }

    /// Starts loading what the filter tests for `user_key` (nothing without a filter).
    pub fn prefetch_filter(&self, user_key: &[u8]) {
        if let Some(f) = &self.filter {
            f.prefetch(user_key);
        }
    }

    /// Counts a lookup the filter let through that found nothing.
    pub(crate) fn count_false_positive(&self) {
        if let Some(c) = self.counters() {
            c.count_false_positive();
        }
    }

    /// The filter's answer for `user_key` (true without a filter), counted.
    pub(crate) fn filter_passes(&self, user_key: &[u8]) -> bool {
        let passes = self.may_contain(user_key);
        if let Some(c) = self.counters() {
            c.count_check(passes);
        }
        passes
    }

    /// Where to count filter answers: nowhere if the table has no filter.
    fn counters(&self) -> Option<&FilterCounters> {
        self.filter.as_ref()?;
        self.filter_counters.as_deref()
    }

    /// [`Table::get`] past the filter.
    fn find(&self, lookup: &[u8], user_key: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let i = self.find_block(lookup);
        if i == self.index.len() {
            return Ok(None);
        }
        let block = self.load_block(i)?;
        let pos = block.seek(lookup);
        if pos < block.len() && user_key_of(block.key(pos)) == user_key {
            return Ok(Some((block.key(pos).to_vec(), block.value(pos).to_vec())));
        }
        Ok(None)
    }

    /// A two-level iterator over all entries (initially not positioned).
    pub fn iter(self: &Arc<Self>) -> TableIterator {
        TableIterator::new(Arc::clone(self))
    }

    /// Number of entries recorded in the footer.
    pub fn num_entries(&self) -> u64 {
        self.footer.num_entries
    }

    /// The table's file path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The table's file number.
    pub fn file_number(&self) -> u64 {
        self.file_number
    }

    /// Reads every data block from the file (bypassing the cache), verifies every checksum and
    /// invariant, and returns the number of entries (which must match the footer).
    pub fn verify(&self) -> Result<u64> {
        let mut count = 0u64;
        for i in 0..self.handles.len() {
            count += self.read_checked_block(i)?.len() as u64;
        }
        if count != self.footer.num_entries {
            return Err(Error::corruption(
                &self.path,
                self.footer.index.end_with_trailer().unwrap_or_default(),
                format!(
                    "footer says {} entries, blocks hold {count}",
                    self.footer.num_entries
                ),
            ));
        }
        Ok(count)
    }

    /// The footer: where the filter and index blocks lie, the entry count, the format version.
    pub fn footer(&self) -> Footer {
        self.footer
    }

    /// The bloom filter's probe count, `None` for a table without a filter.
    pub fn filter_probes(&self) -> Option<usize> {
        self.filter.as_ref().map(BloomFilter::probes)
    }

    /// Approximately where the entries at or after internal key `key` start (RocksDB's
    /// `ApproximateOffsetOf`): the offset of the data block holding the first such entry, or
    /// the end of the data blocks ([`Footer::data_end`]) if every entry is before `key`. Block
    /// granularity; reads nothing (the index is in memory).
    pub fn approximate_offset_of(&self, key: &[u8]) -> u64 {
        match self.handles.get(self.find_block(key)) {
            Some(h) => h.offset,
            None => self.footer.data_end(),
        }
    }

    /// Number of data blocks.
    pub fn num_blocks(&self) -> usize {
        self.handles.len()
    }

    /// Where data block `i` (< [`Table::num_blocks`]) lies in the file.
    pub fn block_handle(&self, i: usize) -> BlockHandle {
        self.handles[i]
    }

    /// How data block `i` (< [`Table::num_blocks`]) is stored: read from the file (not the
    /// cache), its CRC checked and its contents decompressed to learn their size.
    pub fn stored_block(&self, i: usize) -> Result<StoredBlock> {
        let handle = self.handles[i];
        let (block_type, stored) = read_stored_block(self.file.as_ref(), &self.path, handle)?;
        let raw = decompress_block(block_type, stored, &self.path, handle)?;
        Ok(StoredBlock {
            handle,
            block_type,
            raw_size: raw.len() as u64,
        })
    }

    /// The data block at `handle` (as [`Table::block_handle`] gave it), checked like any data
    /// block; `Corruption` if no data block lies there.
    pub fn block_at(&self, handle: BlockHandle) -> Result<Arc<Block>> {
        match self
            .handles
            .binary_search_by_key(&handle.offset, |h| h.offset)
        {
            Ok(i) if self.handles[i] == handle => self.load_block(i),
            _ => Err(Error::corruption(
                &self.path,
                handle.offset,
                format!("no data block of {} bytes starts here", handle.size),
            )),
        }
    }

    /// The index block: one entry per data block, keyed by the block's last key.
    pub(crate) fn index_block(&self) -> &Block {
        &self.index
    }

    /// Index of the first data block whose last key is >= `target`.
    pub(crate) fn find_block(&self, target: &[u8]) -> usize {
        self.index
            .seek_within(target, self.block_candidates(target))
    }

    /// The data blocks among which [`Table::find_block`]'s answer for `target` lies (the
    /// answer is in `start..=end`), found from the index's words alone.
    pub(crate) fn block_candidates(&self, target: &[u8]) -> std::ops::Range<usize> {
        self.index_words.candidates(target)
    }

    /// Data block `i`, from the cache or the file.
    pub fn load_block(&self, i: usize) -> Result<Arc<Block>> {
        let offset = self.handles[i].offset;
        if let Some(cache) = &self.cache {
            if let Some(b) = cache.get(self.file_number, offset) {
                return Ok(b);
            }
        }
        let block = Arc::new(self.read_checked_block(i)?);
        if let Some(cache) = &self.cache {
            cache.insert(self.file_number, offset, Arc::clone(&block));
        }
        Ok(block)
    }

    /// Reads and decodes data block `i` and checks it against the index.
    fn read_checked_block(&self, i: usize) -> Result<Block> {
        let h = self.handles[i];
        let block = Block::decode(
            read_block(self.file.as_ref(), &self.path, h)?,
            &self.path,
            h.offset,
        )?;
        let bad = |d: &str| Error::corruption(&self.path, h.offset, d);
        if block.is_empty() || block.key(block.len() - 1) != self.index.key(i) {
            return Err(bad("data block's last key differs from its index key"));
        }
        if i > 0 && compare_internal_keys(self.index.key(i - 1), block.key(0)) != Ordering::Less {
            return Err(bad(
                "data block's first key is not after the previous block",
            ));
        }
        Ok(block)
    }
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("path", &self.path)
            .field("file_number", &self.file_number)
            .field("footer", &self.footer)
            .field("data_blocks", &self.handles.len())
            .finish()
    }
}

/// Checks the file size and reads the footer.
fn read_footer(file: &dyn RandomAccessFile, path: &Path, file_size: u64) -> Result<Footer> {
    let actual = file
        .size()
        .context(|| format!("getting the size of {}", path.display()))?;
    if actual != file_size {
        return Err(Error::corruption(
            path,
            actual.min(file_size),
            format!("file is {actual} bytes, expected {file_size}"),
        ));
    }
    let Some(offset) = file_size.checked_sub(FOOTER_LEN as u64) else {
        return Err(Error::corruption(
            path,
            0,
            format!("file of {file_size} bytes has no footer"),
        ));
    };
    let bytes = read_exact(file, path, offset, FOOTER_LEN)?;
    decode_footer(&bytes, path, offset)
}

/// Decodes the index values and checks that data blocks are contiguous from offset 0.
fn index_handles(index: &Block, footer: &Footer, path: &Path) -> Result<Vec<BlockHandle>> {
    let at = footer.index.offset;
    let mut expected = 0u64;
    let mut handles = Vec::with_capacity(index.len());
    for i in 0..index.len() {
        let h = BlockHandle::decode_varint(index.value(i)).ok_or_else(|| {
            Error::corruption(path, at, format!("bad block handle in index entry {i}"))
        })?;
        if h.offset != expected {
            return Err(Error::corruption(
                path,
                at,
                format!("index entry {i} points to {h:?}, expected offset {expected}"),
            ));
        }
        expected = h.end_with_trailer().unwrap_or(u64::MAX);
        handles.push(h);
    }
    if expected != footer.data_end() {
        return Err(Error::corruption(
            path,
            at,
            format!(
                "data blocks end at {expected}, expected {}",
                footer.data_end()
            ),
        ));
    }
    let n = footer.num_entries;
    if (n == 0) != handles.is_empty() || n < handles.len() as u64 {
        return Err(Error::corruption(
            path,
            at,
            format!("{n} entries in {} blocks", handles.len()),
        ));
    }
    Ok(handles)
}
