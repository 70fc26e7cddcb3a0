//! [`reseal`]: an input with every checksum its decoder verifies recomputed over its bytes, so
//! that mutated bytes reach the checks behind the checksums. It follows each format's own
//! structure as far as the bytes allow (the layouts are in the format docs and the modules
//! named below) and stops where it cannot go on; it never decides what the decoder accepts.
//! The size a PM region's header records is set to the input's length.

use super::text::{reseal_identity, reseal_options};
use super::ROW_PAGE_SIZE;
use crate::pmbtree::{NODE_SIZE, SLOTS, SLOT_SIZE};
use crate::pmskiplist::{MAX_HEIGHT, PSL_HEADER_LEN};
use crate::rowtable::{ENTRY_HEADER_LEN, META_LEN, ROW_HEADER_LEN, ROW_MAGIC};
use crate::types::{crc32c, crc32c_extend};
use crate::wal::{WAL_HEADER_LEN, WAL_RECORD_HEADER_LEN};

/// `data` resealed for decoder `target`; `None` for a target without checksums to reseal (the
/// first nine, `export_format`) or an input too short to hold its first checksum.
pub fn reseal(target: &str, data: &[u8]) -> Option<Vec<u8>> {
    let mut b = data.to_vec();
    match target {
        "wal" => wal(&mut b),
        "pm_skiplist" => skiplist(&mut b),
        "pm_btree" => btree(&mut b),
        "rowtable" => row(&mut b, ROW_PAGE_SIZE, 0),
        "matrix_container" => container(&mut b),
        "options_file" => return Some(reseal_options(data)),
        "identity" => return reseal_identity(data),
        _ => return None,
    }
    Some(b)
}

fn get32(b: &[u8], at: usize) -> Option<u32> {
    let bytes = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

fn get64(b: &[u8], at: usize) -> Option<u64> {
    let bytes = b.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(bytes.try_into().ok()?))
}

/// Stores `bytes` at `at` if they fit (a checksum's place outside the input stays absent).
fn put(b: &mut [u8], at: usize, bytes: &[u8]) {
    let end = at.saturating_add(bytes.len());
    if let Some(place) = b.get_mut(at..end) {
        place.copy_from_slice(bytes);
    }
}

/// A u64 as usize, or `usize::MAX` (out of every input's range).
fn index(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// Write-ahead log (`wal/mod.rs`): each record's length and payload checksums, until the file
/// ends inside a record or only zero bytes follow (a torn tail stays one).
fn wal(b: &mut [u8]) {
    let mut pos = WAL_HEADER_LEN;
    while pos + WAL_RECORD_HEADER_LEN <= b.len() && b[pos..].iter().any(|&x| x != 0) {
        let len_crc = crc32c(&b[pos..pos + 4]);
        put(b, pos + 4, &len_crc.to_le_bytes());
        let len = get32(b, pos).unwrap_or(u32::MAX) as usize;
        let Some(end) = (pos + WAL_RECORD_HEADER_LEN).checked_add(len) else {
            return;
        };
        let Some(payload) = b.get(pos + WAL_RECORD_HEADER_LEN..end) else {
            return;
        };
        let crc = crc32c(payload);
        put(b, pos + 8, &crc.to_le_bytes());
        pos = end;
    }
}

/// Persistent skiplist (`pmskiplist/mod.rs`): the header (its capacity the input's length),
/// then every node of the bottom list, as far as the links stay inside the input.
fn skiplist(b: &mut [u8]) {
    if b.len() < PSL_HEADER_LEN {
        return;
    }
    put(b, 16, &(b.len() as u64).to_le_bytes());
    let crc = crc32c(&b[..24]);
    put(b, 32, &crc.to_le_bytes());
    let mut at = get64(b, PSL_HEADER_LEN).map_or(0, index);
    for _ in 0..b.len() / 32 {
        if at == 0 || !at.is_multiple_of(8) || !reseal_node(b, at) {
            return;
        }
        at = get64(b, at).map_or(0, index);
    }
}

/// The checksum of the skiplist node at `at` (height, lengths, key, value); false if the node
/// does not lie inside the input.
fn reseal_node(b: &mut [u8], at: usize) -> bool {
    let field = |i: usize| get32(b, at.saturating_add(i)).map(|v| v as usize);
    let (Some(height), Some(key_len), Some(value_len)) = (field(8), field(16), field(20)) else {
        return false;
    };
    if !(1..=MAX_HEIGHT).contains(&height) {
        return false;
    }
    let key_at = at + 24 + 8 * (height - 1);
    let end = key_at.saturating_add(key_len).saturating_add(value_len);
    if end > b.len() {
        return false;
    }
    let fixed = [&b[at + 8..at + 12], &b[at + 16..at + 24]].concat();
    let crc = crc32c_extend(crc32c_extend(0, &fixed), &b[key_at..end]);
    put(b, at + 12, &crc.to_le_bytes());
    true
}

/// Persistent B+-tree (`pmbtree/mod.rs`, `leaf.rs`, `keys.rs`): the header (its region size
/// the input's length), then every valid slot of every leaf on the list from the head, and the
/// key record a long key's slot points at.
fn btree(b: &mut [u8]) {
    if b.len() < 28 {
        return;
    }
    put(b, 8, &(b.len() as u64).to_le_bytes());
    put(b, 16, &(NODE_SIZE as u64).to_le_bytes());
    let crc = crc32c(&b[..24]);
    put(b, 24, &crc.to_le_bytes());
    let nodes = b.len() / NODE_SIZE;
    let mut node = 1;
    for _ in 0..nodes {
        if node == 0 || node >= nodes {
            return;
        }
        let base = node * NODE_SIZE;
        let bitmap = get64(b, base + 16).unwrap_or(0);
        for slot in (0..SLOTS).filter(|s| bitmap & (1 << s) != 0) {
            reseal_slot(b, base + 64 + slot * SLOT_SIZE);
        }
        node = get64(b, base + 8).map_or(0, |n| n as u32 as usize);
    }
}

/// A slot's checksum, after its key record's (a slot of a long key: flag 1).
fn reseal_slot(b: &mut [u8], at: usize) {
    let (len, flags) = (get32(b, at + 4), get32(b, at + 28));
    if let (Some(len), Some(1), Some(record)) = (len, flags, get64(b, at + 56)) {
        reseal_record(b, index(record), len);
    }
    if let Some(slot) = b.get(at + 4..at + SLOT_SIZE) {
        let crc = crc32c(slot);
        put(b, at, &crc.to_le_bytes());
    }
}

/// A key record (`keys.rs`): its length `len` and the checksum of the key after it.
fn reseal_record(b: &mut [u8], at: usize, len: u32) {
    let end = at.saturating_add(8).saturating_add(len as usize);
    if at < NODE_SIZE || end > b.len() {
        return;
    }
    let crc = crc32c(&b[at + 8..end]);
    put(b, at, &len.to_le_bytes());
    put(b, at + 4, &crc.to_le_bytes());
}

/// Matrix container (`rowtable/container_header.rs`): the header (its size the input's
/// length), then the row of every page that starts with a row header.
fn container(b: &mut [u8]) {
    if b.len() < 32 {
        return;
    }
    put(b, 8, &(b.len() as u64).to_le_bytes());
    let crc = crc32c(&b[..24]);
    put(b, 24, &crc.to_le_bytes());
    let page = get64(b, 16).map_or(0, index);
    if !page.is_power_of_two() || page < ROW_PAGE_SIZE {
        return;
    }
    for first in 1..b.len() / page {
        if b[first * page..].starts_with(ROW_MAGIC) {
            row(b, page, first);
        }
    }
}

/// A RowTable's logical byte stream over its pages (`rowtable/pages.rs`), inside the input.
struct Stream {
    page: usize,
    pages: Vec<usize>,
}

impl Stream {
    /// The input offset of logical byte `at` and the bytes left in its page.
    fn locate(&self, at: usize, len: usize) -> Option<(usize, usize)> {
        let page = *self.pages.get(at / self.page)?;
        let within = at % self.page;
        let start = page.checked_mul(self.page)?.checked_add(within)?;
        (start.checked_add(self.page - within)? <= len).then_some((start, self.page - within))
    }

    /// `len` logical bytes from `at`, if they all lie inside the input.
    fn read(&self, b: &[u8], at: usize, len: usize) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(len.min(b.len()));
        while out.len() < len {
            let (start, room) = self.locate(at.checked_add(out.len())?, b.len())?;
            let n = room.min(len - out.len());
            out.extend_from_slice(&b[start..start + n]);
        }
        Some(out)
    }

    /// Writes `bytes` at logical byte `at`, as far as the pages lie inside the input.
    fn write(&self, b: &mut [u8], at: usize, bytes: &[u8]) {
        let mut done = 0;
        while done < bytes.len() {
            let Some((start, room)) = self.locate(at.saturating_add(done), b.len()) else {
                return;
            };
            let n = room.min(bytes.len() - done);
            b[start..start + n].copy_from_slice(&bytes[done..done + n]);
            done += n;
        }
    }
}

/// The RowTable whose header starts page `first` (`rowtable/mod.rs`): each entry's key and
/// value checksums, the metadata array's checksum, then the header's (which covers it).
fn row(b: &mut [u8], page: usize, first: usize) {
    let base = first * page;
    let Some((stream, list_end)) = row_stream(b, page, base) else {
        return;
    };
    reseal_row_data(b, &stream, base);
    let crc = crc32c_extend(
        crc32c(&b[base..base + 80]),
        &b[base + ROW_HEADER_LEN..list_end],
    );
    put(b, base + 80, &crc.to_le_bytes());
}

/// The stream of the row whose header is at `base` (its page list as far as the header page
/// holds one) and the end of its page list.
fn row_stream(b: &[u8], page: usize, base: usize) -> Option<(Stream, usize)> {
    let count = (get32(b, base + 48)? as usize).min((page - ROW_HEADER_LEN) / 4);
    let list_end = base + ROW_HEADER_LEN + 4 * count;
    let list = b.get(base + ROW_HEADER_LEN..list_end)?;
    let pages = list
        .chunks_exact(4)
        .map(|p| get32(p, 0).unwrap_or(0) as usize);
    let stream = Stream {
        page,
        pages: pages.collect(),
    };
    Some((stream, list_end))
}

/// The entries the metadata array points at, then the array's checksum in the header at
/// `base`.
fn reseal_row_data(b: &mut [u8], stream: &Stream, base: usize) {
    let entries = get64(b, base + 16).map_or(0, index).min(b.len() / META_LEN);
    let meta = get64(b, base + 32).map_or(usize::MAX, index);
    for i in 0..entries {
        let Some(m) = stream.read(b, meta.saturating_add(i * META_LEN), 8) else {
            break;
        };
        let offset = u64::from_le_bytes(m.try_into().unwrap_or_default());
        reseal_entry(b, stream, index(offset));
    }
    if let Some(array) = stream.read(b, meta, entries * META_LEN) {
        put(b, base + 56, &crc32c(&array).to_le_bytes());
    }
}

/// The key checksum (lengths and internal key) and value checksum of the entry at logical
/// byte `at`.
fn reseal_entry(b: &mut [u8], stream: &Stream, at: usize) {
    let Some(header) = stream.read(b, at, ENTRY_HEADER_LEN) else {
        return;
    };
    let key_len = get32(&header, 8).unwrap_or(0) as usize;
    let value_len = get32(&header, 12).unwrap_or(0) as usize;
    let key_at = at.saturating_add(ENTRY_HEADER_LEN);
    let (Some(key), Some(value)) = (
        stream.read(b, key_at, key_len.min(b.len() + 1)),
        stream.read(
            b,
            key_at.saturating_add(key_len),
            value_len.min(b.len() + 1),
        ),
    ) else {
        return;
    };
    let key_crc = crc32c_extend(crc32c(&header[8..16]), &key);
    stream.write(b, at, &key_crc.to_le_bytes());
    stream.write(b, at.saturating_add(4), &crc32c(&value).to_le_bytes());
}
