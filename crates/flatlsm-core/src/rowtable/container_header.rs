//! The header of a matrix container: page 0 says what the container is, so tools can read it
//! without the options that made it and an open with other options is refused clearly.
//!
//! Layout (little-endian, page 0, bytes 0..32): magic `FLSMMTX1`, container size (u64), page
//! size (u64), crc32c of bytes 0..24 (u32). Page 0 is never given to a row.
//!
//! Persist order: written and persisted when the container is created, before any manifest
//! names a row. Recovery rule: a container whose header does not check is `Corruption`.

use crate::error::{Error, Result};
use crate::pm::PmRegion;
use crate::types::crc32c;

/// First bytes of a matrix container.
pub const CONTAINER_MAGIC: &[u8; 8] = b"FLSMMTX1";
/// Bytes of the header.
pub const CONTAINER_HEADER_LEN: usize = 32;

/// Writes and persists the header of a fresh container of `page_size` pages.
pub fn write_container_header(region: &dyn PmRegion, page_size: usize) -> Result<()> {
    let mut h = Vec::with_capacity(CONTAINER_HEADER_LEN);
    h.extend_from_slice(CONTAINER_MAGIC);
    h.extend_from_slice(&(region.len() as u64).to_le_bytes());
    h.extend_from_slice(&(page_size as u64).to_le_bytes());
    h.extend_from_slice(&crc32c(&h[..24]).to_le_bytes());
    h.resize(CONTAINER_HEADER_LEN, 0);
    region.write(0, &h);
    region.persist(0, CONTAINER_HEADER_LEN).map_err(|e| {
        Error::io(
            format!("persisting the header of {}", region.path().display()),
            e,
        )
    })
}

/// The page size the container's header records, the header checked.
pub fn read_container_header(region: &dyn PmRegion) -> Result<usize> {
    let bad = |at: u64, what: &str| Error::corruption(region.path(), at, what.to_string());
    if region.len() < CONTAINER_HEADER_LEN {
        return Err(bad(0, "too short for a matrix container header"));
    }
    let h = region.read(0, CONTAINER_HEADER_LEN);
    let word = |at: usize| u64::from_le_bytes(h[at..at + 8].try_into().unwrap());
    if &h[..8] != CONTAINER_MAGIC {
        return Err(bad(0, "not a matrix container (bad magic)"));
    }
    if crc32c(&h[..24]) != u32::from_le_bytes(h[24..28].try_into().unwrap()) {
        return Err(bad(24, "matrix container header checksum mismatch"));
    }
    let (size, page) = (word(8), word(16));
    let sane = page.is_power_of_two() && page >= 4096 && size == region.len() as u64;
    match sane && size % page == 0 {
        true => Ok(page as usize),
        false => Err(bad(
            8,
            "matrix container header: size or page size inconsistent",
        )),
    }
}
