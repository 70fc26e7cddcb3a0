//! Cutting files to the part their decoders read, so seeds stay small: a write-ahead log to its
//! last record, a PM skiplist to its last node, a matrix container to the last page a row
//! lists, and each row of a container into a container of its own pages (its header at page
//! 0). A cut region is resealed (`fuzz_api::reseal`: its header records the new size).

use super::Res;
use flatlsm::fuzz_api::{reseal, ROW_PAGE_SIZE};
use flatlsm_core::pm::{DramPmDevice, PmDevice, PmRegion};
use flatlsm_core::pmskiplist::PmSkiplist;
use flatlsm_core::rowtable::container_header::read_container_header;
use flatlsm_core::rowtable::{RowTable, ROW_HEADER_LEN, ROW_MAGIC};
use std::sync::Arc;

/// `bytes` as a PM region in DRAM.
fn region(bytes: &[u8]) -> Res<Arc<dyn PmRegion>> {
    let region = DramPmDevice::new("seed").create_region("seed", bytes.len())?;
    region.write(0, bytes);
    Ok(region)
}

fn u64_at(bytes: &[u8], at: usize) -> Res<u64> {
    Ok(u64::from_le_bytes(bytes[at..at + 8].try_into()?))
}

/// A log without the zero bytes after its last record (space a file system may preallocate).
pub fn wal(bytes: &[u8]) -> Vec<u8> {
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    bytes[..end.max(16).min(bytes.len())].to_vec()
}

/// A skiplist region cut after its last node.
pub fn skiplist(bytes: &[u8]) -> Res<Vec<u8>> {
    let list = PmSkiplist::recover(region(bytes)?, u64_at(bytes, 8)?)?;
    let cut = &bytes[..list.used_bytes() as usize];
    Ok(reseal("pm_skiplist", cut).ok_or("a skiplist without its header")?)
}

/// Rows cut out of a container, each with its number.
type Rows = Vec<(u64, Vec<u8>)>;

/// A container cut after the last page a row lists, and each row (with its number) as a
/// container of 4 KiB pages of its own.
pub fn container(bytes: &[u8]) -> Res<(Vec<u8>, Rows)> {
    let region = region(bytes)?;
    let page = read_container_header(&*region)?;
    let (mut end, mut rows) = (1, Vec::new());
    for first in 1..bytes.len() / page {
        if !bytes[first * page..].starts_with(ROW_MAGIC) {
            continue;
        }
        let number = u64_at(bytes, first * page + 8)?;
        let row = RowTable::open(region.clone(), page, first as u32, number)?;
        let pages: Vec<usize> = row.pages().pages.iter().map(|&p| p as usize).collect();
        end = pages.iter().fold(end, |e, &p| e.max(p + 1));
        if page == ROW_PAGE_SIZE {
            rows.push((number, own_pages(bytes, &pages)?));
        }
    }
    let cut = reseal("matrix_container", &bytes[..end * page]);
    Ok((cut.ok_or("a container without its header")?, rows))
}

/// The row listing `pages` (4 KiB each), its pages copied in list order and the list
/// renumbered 0, 1, ...
fn own_pages(bytes: &[u8], pages: &[usize]) -> Res<Vec<u8>> {
    let mut out = Vec::with_capacity(pages.len() * ROW_PAGE_SIZE);
    for &p in pages {
        out.extend_from_slice(&bytes[p * ROW_PAGE_SIZE..(p + 1) * ROW_PAGE_SIZE]);
    }
    for i in 0..pages.len() {
        let at = ROW_HEADER_LEN + 4 * i;
        out[at..at + 4].copy_from_slice(&(i as u32).to_le_bytes());
    }
    Ok(reseal("rowtable", &out).ok_or("a row without its header")?)
}
