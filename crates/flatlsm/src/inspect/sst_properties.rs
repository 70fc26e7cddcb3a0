//! The properties `dump --show-properties` prints for an SST before its records (RocksDB's
//! `sst_dump --show_properties`): file size, format version, entries, data blocks (count,
//! compression types, stored and raw bytes), index and filter blocks, smallest and largest key.
//! Everything comes from the footer, the in-memory index and filter, and the data blocks (each
//! read, checked and decompressed, as a plain dump of an SST does).

use super::dump::{block_totals, stored_blocks, DumpFormat};
use super::render::hex_bytes;
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::sst::Table;
use crate::types::parse_internal_key;
use std::sync::Arc;

/// The property lines of `table` (a file of `file_size` bytes), keys printed in `format`.
pub(super) fn property_lines(
    table: &Arc<Table>,
    file_size: u64,
    format: DumpFormat,
) -> Result<Vec<String>> {
    let f = table.footer();
    let (smallest, largest) = key_bounds(table, format)?;
    Ok(vec![
        "properties:".to_string(),
        format!("  file size: {file_size} bytes"),
        format!("  format version: {}", f.version),
        format!("  entries: {}", f.num_entries),
        format!("  {}", block_totals(&stored_blocks(table)?)),
        format!(
            "  index block: {} bytes, one entry per data block",
            f.index.size
        ),
        filter_line(table),
        format!("  smallest key: {smallest}"),
        format!("  largest key: {largest}"),
    ])
}

/// The filter block's size, probes and bits per entry (the configured bits per key when every
/// user key has a single entry: the filter holds one hash per distinct user key).
fn filter_line(table: &Table) -> String {
    let f = table.footer();
    let Some(probes) = table.filter_probes() else {
        return "  filter block: none".to_string();
    };
    let bits = f.filter.size.saturating_sub(1) * 8;
    let per_entry = bits as f64 / f.num_entries.max(1) as f64;
    format!(
        "  filter block: {} bytes, {probes} probes, {per_entry:.1} bits per entry",
        f.filter.size
    )
}

/// The first and last internal key, as `key @ seq` (`(none)` for a table without entries).
fn key_bounds(table: &Arc<Table>, format: DumpFormat) -> Result<(String, String)> {
    let mut it = table.iter();
    it.seek_to_first();
    let first = it.valid().then(|| describe_key(it.key(), format));
    it.seek_to_last();
    let last = it.valid().then(|| describe_key(it.key(), format));
    it.status()?;
    let none = || "(none)".to_string();
    Ok((first.unwrap_or_else(none), last.unwrap_or_else(none)))
}

fn describe_key(internal_key: &[u8], format: DumpFormat) -> String {
    match parse_internal_key(internal_key) {
        Some(k) => format!("{} @ {}", format.bytes(k.user_key), k.seq),
        None => format!("(bad internal key {})", hex_bytes(internal_key)),
    }
}
