//! Writing a RowTable in one pass: pages are taken for an upper bound of its size (from the
//! write buffers it comes from), entries and metadata (with forward pointers into the previous
//! row) and the header are written, every page the row uses is persisted, and the pages past
//! its last metadata byte go back to the free list. Format and persist order in `mod.rs`.

use super::pages::{PageAllocator, PageList};
use super::{
    data_start, key_prefix, RowTable, ENTRY_HEADER_LEN, MAX_SHARED_PREFIX, META_LEN,
    ROW_HEADER_LEN, ROW_MAGIC,
};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::pm::PmRegion;
use crate::types::{crc32c, crc32c_extend, user_key_of, TRAILER_LEN};
use std::sync::Arc;

/// Where a row goes: the container region, its page size and free pages.
pub struct RowTarget<'a> {
    /// The container.
    pub region: &'a Arc<dyn PmRegion>,
    /// Its pages.
    pub allocator: &'a PageAllocator,
    /// Bytes per page.
    pub page_size: usize,
}

/// An upper bound of a row's size: its entries and their key + value bytes (user keys, as
/// write buffers count them). Versions the flush drops only make the row smaller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowBound {
    /// Entries.
    pub entries: u64,
    /// Key and value bytes of those entries.
    pub key_value_bytes: u64,
    /// How many leading bytes every user key shares (0 if unknown; the common prefix of the
    /// smallest and largest key is exact). The row records at most [`MAX_SHARED_PREFIX`] and
    /// its key prefixes start after them; a key that does not share them is an error.
    pub shared_prefix: usize,
}

/// How many leading bytes `a` and `b` share.
pub fn shared_prefix_len(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl RowBound {
    /// Pages needed for the header, page list, entries and metadata.
    fn pages(&self, page_size: usize) -> usize {
        let per_entry = (ENTRY_HEADER_LEN + TRAILER_LEN) as u64;
        let data = self.key_value_bytes + self.entries * per_entry;
        let mut pages = 1;
        loop {
            let meta = (data_start(pages) + data).next_multiple_of(8);
            let total = meta + self.entries * META_LEN as u64;
            let needed = total.div_ceil(page_size as u64) as usize;
            if needed <= pages {
                return pages;
            }
            pages = needed;
        }
    }
}

/// Writes the entries of `source` (internal-key order, within `bound`) as row `number`, with
/// forward pointers into `prev` (the newest row before it, if any, and its first live entry:
/// entries before it may already be gone, so pointers below it are raised to it, which a search
/// clamps to anyway), and persists it. `Ok(None)` (nothing allocated) if the container lacks
/// free pages for the bound: the caller waits for a compaction.
pub fn build_row(
    target: &RowTarget<'_>,
    number: u64,
    prev: Option<(&RowTable, u64)>,
    bound: RowBound,
    source: &mut dyn InternalIterator,
) -> Result<Option<RowTable>> {
    let page_count = bound.pages(target.page_size);
    if ROW_HEADER_LEN + 4 * page_count > target.page_size {
        return Err(Error::InvalidArgument(format!(
            "a row of up to {} bytes needs {page_count} pages of {} bytes: more than one page can list (use larger pages or smaller write buffers)",
            bound.key_value_bytes, target.page_size
        )));
    }
    let Some(pages) = target.allocator.allocate(page_count) else {
        return Ok(None);
    };
    let list = PageList {
        page_size: target.page_size,
        pages,
    };
    let shared = bound.shared_prefix.min(MAX_SHARED_PREFIX);
    match write_row(target, &list, (number, shared), prev, source) {
        Ok(row) => {
            target
                .allocator
                .release(list.pages[row.used_pages()..].iter().copied());
            Ok(Some(row))
        }
        Err(e) => {
            target.allocator.release(list.pages);
            Err(e)
        }
    }
}

/// Writes every byte of row `number` (its keys sharing `shared` leading bytes) in one pass over
/// `source` and persists the pages it uses.
fn write_row(
    target: &RowTarget<'_>,
    list: &PageList,
    (number, shared): (u64, usize),
    prev: Option<(&RowTable, u64)>,
    source: &mut dyn InternalIterator,
) -> Result<RowTable> {
    let mut w = StreamWriter::new(&**target.region, list, data_start(list.pages.len()));
    let mut meta = Vec::new();
    let mut hints = ForwardHints::new(prev);
    source.seek_to_first();
    let mut common: Option<Vec<u8>> = None;
    while source.valid() {
        let (key, value) = (source.key(), source.value());
        let uk = user_key_of(key);
        let common = common.get_or_insert_with(|| uk[..shared.min(uk.len())].to_vec());
        if !uk.starts_with(common) {
            return Err(Error::InvalidArgument(format!(
                "row {number}: a key does not share the {shared} leading bytes the bound declares"
            )));
        }
        push_meta(&mut meta, w.pos, hints.forward(uk)?, &uk[common.len()..]);
        w.put_entry(key, value)?;
        source.next();
    }
    let common = common.unwrap_or_default();
    source.status()?;
    let entries = (meta.len() / META_LEN) as u64;
    let data_end = w.pos;
    let meta_offset = data_end.next_multiple_of(8);
    w.pos = meta_offset;
    w.put(&meta)?;
    let prev_row = prev.map_or(0, |(row, _)| row.number());
    let words = [number, entries, data_end, meta_offset, prev_row];
    let header = encode_header(list, words, crc32c(&meta), &common);
    w.pos = 0;
    w.put(&header)?;
    let row = RowTable::from_parts(target.region.clone(), list.clone(), words, common);
    persist_pages(
        &**target.region,
        &list.pages[..row.used_pages()],
        list.page_size,
    )?;
    Ok(row)
}

/// One metadata element; `rest` is the user key past the row's shared prefix.
fn push_meta(meta: &mut Vec<u8>, offset: u64, forward: u32, rest: &[u8]) {
    meta.extend_from_slice(&offset.to_le_bytes());
    meta.extend_from_slice(&forward.to_le_bytes());
    meta.extend_from_slice(&key_prefix(rest).to_le_bytes());
}

/// The header and page list, their crc included; `words` are the number, entries, data end,
/// metadata offset and previous row.
fn encode_header(list: &PageList, words: [u64; 5], meta_crc: u32, shared: &[u8]) -> Vec<u8> {
    let mut h = Vec::with_capacity(ROW_HEADER_LEN + 4 * list.pages.len());
    h.extend_from_slice(ROW_MAGIC);
    for word in words {
        h.extend_from_slice(&word.to_le_bytes());
    }
    for half in [list.pages.len(), list.page_size, 0, shared.len()] {
        h.extend_from_slice(&(half as u32).to_le_bytes());
    }
    h[56..60].copy_from_slice(&meta_crc.to_le_bytes());
    let mut prefix = [0u8; MAX_SHARED_PREFIX];
    prefix[..shared.len()].copy_from_slice(shared);
    h.extend_from_slice(&prefix);
    let pages: Vec<u8> = list.pages.iter().flat_map(|p| p.to_le_bytes()).collect();
    let crc = crc32c_extend(crc32c(&h[..80]), &pages);
    h.extend_from_slice(&crc.to_le_bytes());
    h.extend_from_slice(&0u32.to_le_bytes());
    h.extend_from_slice(&pages);
    h
}

/// Persists the pages the row uses (the caller records the row in the manifest afterwards).
fn persist_pages(region: &dyn PmRegion, pages: &[u32], page_size: usize) -> Result<()> {
    for &p in pages {
        let at = p as usize * page_size;
        region.persist(at, page_size).map_err(|e| {
            let what = format!("persisting row page {p} of {}", region.path().display());
            Error::io(what, e)
        })?;
    }
    Ok(())
}

/// Forward pointers: for each key of the new row (ascending), the first index of the previous
/// row whose user key is >= it, found by one walk of the previous row.
struct ForwardHints<'a> {
    prev: Option<&'a RowTable>,
    at: u64,
}

impl<'a> ForwardHints<'a> {
    fn new(prev: Option<(&'a RowTable, u64)>) -> Self {
        ForwardHints {
            prev: prev.map(|p| p.0),
            at: prev.map_or(0, |p| p.1),
        }
    }

    fn forward(&mut self, user_key: &[u8]) -> Result<u32> {
        let Some(prev) = self.prev else { return Ok(0) };
        let probe = prev.probe(user_key);
        while self.at < prev.len() && prev.compare_user_key(self.at, user_key, probe)?.is_lt() {
            self.at += 1;
        }
        Ok(self.at as u32)
    }
}

/// Writes a logical stream into the pages of a list.
struct StreamWriter<'a> {
    region: &'a dyn PmRegion,
    list: &'a PageList,
    pos: u64,
}

impl<'a> StreamWriter<'a> {
    fn new(region: &'a dyn PmRegion, list: &'a PageList, pos: u64) -> Self {
        StreamWriter { region, list, pos }
    }

    /// Writes `bytes` at the current position, across pages as needed.
    fn put(&mut self, mut bytes: &[u8]) -> Result<()> {
        while !bytes.is_empty() {
            let (at, room) = self.list.locate(self.pos).ok_or_else(|| {
                Error::InvalidState(format!(
                    "row stream overflows its {} pages",
                    self.list.pages.len()
                ))
            })?;
            let n = room.min(bytes.len());
            self.region.write(at, &bytes[..n]);
            bytes = &bytes[n..];
            self.pos += n as u64;
        }
        Ok(())
    }

    /// Writes one entry: crcs, lengths, internal key, value.
    fn put_entry(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        let mut lens = [0u8; 8];
        lens[..4].copy_from_slice(&(ikey.len() as u32).to_le_bytes());
        lens[4..].copy_from_slice(&(value.len() as u32).to_le_bytes());
        let key_crc = crc32c_extend(crc32c(&lens), ikey);
        let mut header = [0u8; ENTRY_HEADER_LEN];
        header[..4].copy_from_slice(&key_crc.to_le_bytes());
        header[4..8].copy_from_slice(&crc32c(value).to_le_bytes());
        header[8..].copy_from_slice(&lens);
        self.put(&header)?;
        self.put(ikey)?;
        self.put(value)
    }
}
