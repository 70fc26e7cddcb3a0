//! RowTables: a flushed memtable serialized in key order into pages of a PM matrix container
//! (MatrixKV, Fig. 7a), with a sorted metadata array whose forward pointers index the row
//! before it, for cross-row hint search (`search.rs`). It knows nothing of the designs.
//!
//! Layout of one RowTable: a logical byte stream laid over its pages in [`PageList`] order
//! (little-endian; docs/rowtable-format.md):
//! - header, logical bytes 0..88: magic `FLSMROW2`, row number (u64), entries (u64), data end
//!   (u64), metadata offset (u64), previous row (u64: the row the forward pointers index, 0 =
//!   none), page count (u32), page size (u32), crc32c of the metadata array (u32), the length
//!   of the shared key prefix (u32, at most 16), the shared prefix (16 bytes, zero-padded),
//!   crc32c of bytes 0..80 and the page list (u32), zero (u32); then the page list (u32 per
//!   page). The header and page list must fit in the first page.
//! - entries from the 8-aligned end of the page list, in internal-key order: key crc (u32,
//!   over the two lengths and the internal key), value crc (u32), internal key length (u32),
//!   value length (u32), internal key, value. An entry may span pages.
//! - the metadata array at the 8-aligned data end: per entry its logical offset (u64), its
//!   forward pointer (u32: the index of the first entry of the previous row whose user key is
//!   at least this entry's) and the 4 bytes of its user key after the shared prefix,
//!   big-endian, zero-padded (u32: when two differ they order the keys without touching the
//!   data; skipping the bytes every key of the row shares keeps them telling apart keys like
//!   `user000123` or big-endian numbers).
//!
//! Persist order ([`build::build_row`]): every byte is written, then every page the row uses is
//! persisted; only then may the manifest record the row (the engine's commit protocol). A row is
//! laid out for an upper bound of its size: its page list may run past the page holding its last
//! metadata byte, and those pages are freed at once and are not the row's. Recovery rule
//! ([`RowTable::open`]): a row exists iff the manifest records it; its header must check (magic,
//! crc, number, page size, page list equal to the recorded first page) and its metadata array its
//! crc, its offsets ascending inside the data, else `Corruption` naming the container and offset.
//! Entries are checked when read: keys by every search, values by every read. Pages no recorded row
//! uses are free ([`pages`]): a row a crash interrupted before its manifest record is garbage.
//!
//! Thread-safety: a `RowTable` is immutable once built; readers share it freely. Pages before
//! a row's first live entry may be reused once no reader holds that row (the engine's job).

pub mod build;
pub mod container_header;
pub mod pages;
pub mod search;
#[cfg(test)]
mod tests;

pub use pages::{PageAllocator, PageList};

use crate::error::{Error, Result};
use crate::pm::PmRegion;
use crate::types::{crc32c, user_key_of};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::Arc;

/// First bytes of a RowTable.
pub const ROW_MAGIC: &[u8; 8] = b"FLSMROW2";
/// The magic of the first row format (a 4-byte key prefix from the key's start), not read.
const ROW_MAGIC_V1: &[u8; 8] = b"FLSMROW1";
/// Fixed part of the header (the page list follows).
pub const ROW_HEADER_LEN: usize = 88;
/// The longest shared key prefix a row records.
pub const MAX_SHARED_PREFIX: usize = 16;
/// Offset of the header crc.
const HEADER_CRC_AT: usize = 80;
/// Bytes of an entry's header.
pub const ENTRY_HEADER_LEN: usize = 16;
/// Bytes of one metadata element.
pub const META_LEN: usize = 16;

/// One metadata element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// Logical offset of the entry.
    pub offset: u64,
    /// First entry of the previous row whose user key is >= this entry's.
    pub forward: u32,
    /// The 4 user-key bytes after the row's shared prefix, big-endian, zero-padded.
    pub prefix: u32,
}

/// Where a user key falls against a row's shared prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// Before every key of the row.
    Below,
    /// After every key of the row.
    Above,
    /// It shares the prefix; these are its next 4 bytes (as [`key_prefix`] makes them).
    At(u32),
}

/// The first 4 bytes of `user_key`, big-endian, zero-padded: differing prefixes order keys.
pub fn key_prefix(user_key: &[u8]) -> u32 {
    let mut b = [0u8; 4];
    let n = user_key.len().min(4);
    b[..n].copy_from_slice(&user_key[..n]);
    u32::from_be_bytes(b)
}

/// An entry read from a row (borrowed when it lies in one page).
#[derive(Debug)]
pub struct RowEntry<'a> {
    /// The internal key.
    pub ikey: Cow<'a, [u8]>,
    /// The value.
    pub value: Cow<'a, [u8]>,
}

/// An open RowTable.
pub struct RowTable {
    region: Arc<dyn PmRegion>,
    pages: PageList,
    number: u64,
    entries: u64,
    data_start: u64,
    data_end: u64,
    meta_offset: u64,
    prev_row: u64,
    /// The bytes every user key of the row starts with (at most [`MAX_SHARED_PREFIX`]).
    shared: Vec<u8>,
}

/// Start of the entries: the 8-aligned end of the header and page list.
pub fn data_start(page_count: usize) -> u64 {
    ((ROW_HEADER_LEN + 4 * page_count) as u64).next_multiple_of(8)
}

impl RowTable {
    /// Opens the row numbered `number` whose header lies at the start of page `first_page` of
    /// `region` (pages of `page_size` bytes), checking the header and the metadata array.
    pub fn open(
        region: Arc<dyn PmRegion>,
        page_size: usize,
        first_page: u32,
        number: u64,
    ) -> Result<RowTable> {
        let base = first_page as usize * page_size;
        let bad = |at: usize, what: String| Error::corruption(region.path(), at as u64, what);
        if base + page_size > region.len() {
            return Err(bad(
                base,
                format!("row {number}: page {first_page} lies beyond the container"),
            ));
        }
        let h = region.read(base, ROW_HEADER_LEN).to_vec();
        let word = |at: usize| u64::from_le_bytes(h[at..at + 8].try_into().unwrap());
        let half = |at: usize| u32::from_le_bytes(h[at..at + 4].try_into().unwrap());
        if &h[..8] == ROW_MAGIC_V1 {
            return Err(bad(
                base,
                format!("row {number}: written in row format 1, which this version does not read (its key prefixes); rebuild the database"),
            ));
        }
        if &h[..8] != ROW_MAGIC || word(8) != number || half(52) as usize != page_size {
            return Err(bad(
                base,
                format!("row {number}: bad magic, number or page size"),
            ));
        }
        let page_count = half(48) as usize;
        if ROW_HEADER_LEN + 4 * page_count > page_size {
            return Err(bad(
                base + 48,
                format!("row {number}: {page_count} pages overflow the header page"),
            ));
        }
        let list = region.read(base + ROW_HEADER_LEN, 4 * page_count);
        let crc = crate::types::crc32c_extend(crc32c(&h[..HEADER_CRC_AT]), list);
        if crc != half(HEADER_CRC_AT) {
            return Err(bad(
                base + HEADER_CRC_AT,
                format!("row {number}: header checksum mismatch"),
            ));
        }
        let pages: Vec<u32> = list
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let shared_len = (half(60) as usize).min(MAX_SHARED_PREFIX);
        let row = RowTable {
            pages: PageList { page_size, pages },
            number,
            entries: word(16),
            data_start: data_start(page_count),
            data_end: word(24),
            meta_offset: word(32),
            prev_row: word(40),
            shared: h[64..64 + shared_len].to_vec(),
            region,
        };
        row.check_geometry(base, first_page)?;
        row.check_meta_crc(half(56))?;
        Ok(row)
    }

    /// The header's sizes must describe a stream inside the pages, starting at `first_page`.
    fn check_geometry(&self, base: usize, first_page: u32) -> Result<()> {
        let meta_end = self
            .entries
            .checked_mul(META_LEN as u64)
            .and_then(|m| m.checked_add(self.meta_offset));
        let fits = meta_end.is_some_and(|e| e <= self.pages.capacity())
            && self.data_start <= self.data_end
            && self.data_end <= self.meta_offset
            && self.pages.pages.first() == Some(&first_page)
            && self
                .pages
                .pages
                .iter()
                .all(|&p| (p as usize + 1) * self.pages.page_size <= self.region.len());
        match fits {
            true => Ok(()),
            false => Err(Error::corruption(
                self.region.path(),
                base as u64 + 16,
                format!(
                    "row {}: sizes or page list outside the container",
                    self.number
                ),
            )),
        }
    }

    /// The metadata array must match its checksum, and its offsets must ascend inside the data
    /// (what every reader relies on: `entry_lengths` reads an entry's header at its offset,
    /// `bytes_from` subtracts offsets). A writer bug or a crafted file could match the
    /// checksum and still break them.
    fn check_meta_crc(&self, expected: u32) -> Result<()> {
        let bytes = self.read(self.meta_offset, self.entries as usize * META_LEN);
        if crc32c(&bytes) != expected {
            return Err(self.corrupt(self.meta_offset, "metadata array checksum mismatch"));
        }
        let mut low = self.data_start;
        for (i, m) in bytes.chunks_exact(META_LEN).enumerate() {
            let offset = u64::from_le_bytes(m[..8].try_into().unwrap());
            if offset < low || offset >= self.data_end {
                let at = self.meta_offset + (i * META_LEN) as u64;
                return Err(self.corrupt(at, "metadata offset out of order or outside the data"));
            }
            low = offset + 1;
        }
        Ok(())
    }

    /// Assembles an open row from what its builder wrote (nothing to check); `words` are the
    /// header's number, entries, data end, metadata offset and previous row.
    pub(crate) fn from_parts(
        region: Arc<dyn PmRegion>,
        pages: PageList,
        words: [u64; 5],
        shared: Vec<u8>,
    ) -> RowTable {
        let [number, entries, data_end, meta_offset, prev_row] = words;
        let data_start = data_start(pages.pages.len());
        RowTable {
            region,
            pages,
            number,
            entries,
            data_start,
            data_end,
            meta_offset,
            prev_row,
            shared,
        }
    }

    /// `Corruption` at logical offset `logical` of this row.
    fn corrupt(&self, logical: u64, what: &str) -> Error {
        let at = self.pages.locate(logical).map_or(0, |(o, _)| o as u64);
        Error::corruption(
            self.region.path(),
            at,
            format!("row {}: {what}", self.number),
        )
    }

    /// The row's number (its place in arrival order).
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The row the forward pointers index (0: none).
    pub fn prev_row(&self) -> u64 {
        self.prev_row
    }

    /// Entries in the row (all versions).
    pub fn len(&self) -> u64 {
        self.entries
    }

    /// True if the row holds no entry.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The pages, in stream order.
    pub fn pages(&self) -> &PageList {
        &self.pages
    }

    /// `len` logical bytes from `logical`, borrowed when they lie in one page.
    fn read(&self, logical: u64, len: usize) -> Cow<'_, [u8]> {
        let Some((at, room)) = self.pages.locate(logical) else {
            return Cow::Owned(Vec::new());
        };
        if len <= room {
            return Cow::Borrowed(self.region.read(at, len));
        }
        let mut out = Vec::with_capacity(len);
        let mut pos = logical;
        while out.len() < len {
            let Some((at, room)) = self.pages.locate(pos) else {
                break;
            };
            let n = room.min(len - out.len());
            out.extend_from_slice(self.region.read(at, n));
            pos += n as u64;
        }
        Cow::Owned(out)
    }

    /// Metadata element `i` (< `len()`).
    pub fn meta(&self, i: u64) -> Meta {
        let b = self.read(self.meta_offset + i * META_LEN as u64, META_LEN);
        Meta {
            offset: u64::from_le_bytes(b[..8].try_into().unwrap()),
            forward: u32::from_le_bytes(b[8..12].try_into().unwrap()),
            prefix: u32::from_le_bytes(b[12..16].try_into().unwrap()),
        }
    }

    /// The internal key of entry `i`, its key crc checked.
    pub fn ikey(&self, i: u64) -> Result<Cow<'_, [u8]>> {
        let at = self.meta(i).offset;
        let (key_len, _) = self.entry_lengths(at)?;
        let header = self.read(at, ENTRY_HEADER_LEN);
        let key = self.read(at + ENTRY_HEADER_LEN as u64, key_len);
        let crc = crate::types::crc32c_extend(crc32c(&header[8..16]), &key);
        if crc != u32::from_le_bytes(header[..4].try_into().unwrap()) {
            return Err(self.corrupt(at, "entry key checksum mismatch"));
        }
        Ok(key)
    }

    /// Entry `i`, both checksums checked.
    pub fn entry(&self, i: u64) -> Result<RowEntry<'_>> {
        let ikey = self.ikey(i)?;
        let at = self.meta(i).offset;
        let (key_len, value_len) = self.entry_lengths(at)?;
        let value = self.read(at + (ENTRY_HEADER_LEN + key_len) as u64, value_len);
        let header = self.read(at, ENTRY_HEADER_LEN);
        if crc32c(&value) != u32::from_le_bytes(header[4..8].try_into().unwrap()) {
            return Err(self.corrupt(at, "entry value checksum mismatch"));
        }
        Ok(RowEntry { ikey, value })
    }

    /// The key and value lengths of the entry at `at`, which must lie inside the data.
    fn entry_lengths(&self, at: u64) -> Result<(usize, usize)> {
        let h = self.read(at, ENTRY_HEADER_LEN);
        let key = u32::from_le_bytes(h[8..12].try_into().unwrap()) as u64;
        let value = u32::from_le_bytes(h[12..16].try_into().unwrap()) as u64;
        let end = at + ENTRY_HEADER_LEN as u64 + key + value;
        if at < self.data_start || end > self.data_end || key < crate::types::TRAILER_LEN as u64 {
            return Err(self.corrupt(at, "entry lies outside the data or has no trailer"));
        }
        Ok((key as usize, value as usize))
    }

    /// Where `user_key` falls against the row's shared prefix.
    pub fn probe(&self, user_key: &[u8]) -> Probe {
        let n = self.shared.len();
        let head = &user_key[..n.min(user_key.len())];
        match head.cmp(&self.shared[..head.len()]) {
            Ordering::Less => Probe::Below,
            Ordering::Greater => Probe::Above,
            // A proper prefix of the shared bytes is shorter than every key of the row.
            Ordering::Equal if user_key.len() < n => Probe::Below,
            Ordering::Equal => Probe::At(key_prefix(&user_key[n..])),
        }
    }

    /// Orders entry `i`'s user key against `user_key` (`probe` = `self.probe(user_key)`).
    pub fn compare_user_key(&self, i: u64, user_key: &[u8], probe: Probe) -> Result<Ordering> {
        let prefix = match probe {
            Probe::Below => return Ok(Ordering::Greater),
            Probe::Above => return Ok(Ordering::Less),
            Probe::At(prefix) => prefix,
        };
        let p = self.meta(i).prefix;
        if p != prefix {
            return Ok(p.cmp(&prefix));
        }
        Ok(user_key_of(&self.ikey(i)?).cmp(user_key))
    }

    /// False if entry `i`'s user key is certainly not `user_key` (by the row's shared prefix
    /// and the entry's metadata prefix, without reading the data).
    pub fn may_hold(&self, i: u64, user_key: &[u8]) -> bool {
        match self.probe(user_key) {
            Probe::At(prefix) => self.meta(i).prefix == prefix,
            Probe::Below | Probe::Above => false,
        }
    }

    /// The first index in `lo..hi` whose user key is >= `user_key` (`hi` if none).
    pub fn lower_bound(&self, user_key: &[u8], mut lo: u64, mut hi: u64) -> Result<u64> {
        let prefix = match self.probe(user_key) {
            Probe::Below => return Ok(lo),
            Probe::Above => return Ok(hi.max(lo)),
            at => at,
        };
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.compare_user_key(mid, user_key, prefix)? {
                Ordering::Less => lo = mid + 1,
                _ => hi = mid,
            }
        }
        Ok(lo)
    }

    /// Bytes of the entries from index `first` on (what a row still holds after truncation).
    pub fn bytes_from(&self, first: u64) -> u64 {
        match first < self.entries {
            true => self.data_end - self.meta(first).offset,
            false => 0,
        }
    }

    /// How many pages of the list the row uses: up to the one holding its last metadata byte.
    /// A row is laid out for an upper bound of its size; the pages past that were freed when it
    /// was written and belong to it no more.
    pub fn used_pages(&self) -> usize {
        let end = self.meta_offset + self.entries * META_LEN as u64;
        let last = self.pages.page_index(end.max(1) - 1);
        (last + 1).min(self.pages.pages.len())
    }

    /// The pages a row truncated at `first` still needs: the header page, and every page from
    /// the one holding entry `first` to the last it uses (the metadata array included).
    pub fn live_pages(&self, first: u64) -> Vec<u32> {
        let from = match first < self.entries {
            true => self.pages.page_index(self.meta(first).offset),
            false => self.pages.page_index(self.meta_offset),
        };
        let used = &self.pages.pages[..self.used_pages()];
        let rest = used.get(from.max(1)..).unwrap_or(&[]);
        used[..1].iter().chain(rest).copied().collect()
    }
}
