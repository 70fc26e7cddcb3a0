//! Entry points for the cargo-fuzz targets in `fuzz/` and the stable decoder tests: each feeds
//! untrusted bytes to one decoder of bytes on PM or SSD (or of a file the tools read) and walks
//! whatever it accepts. None may panic, hang or allocate without bound; every rejection must be
//! [`Error::Corruption`] (or, for the targets in [`ARGUMENT_ERRORS`],
//! [`Error::InvalidArgument`]). Not a stable API.
//!
//! Checksums: most formats guard their structure with crc32c, so mutated bytes rarely get past
//! the first check. [`check`] therefore decodes each input twice: as given, and *resealed*
//! (`reseal`: every checksum the decoder verifies recomputed over the mutated bytes), so a
//! fuzzer also reaches the structural checks behind the checksums — what a writer bug or a
//! crafted file would feed the decoder. Targets and layouts: docs/fuzzing.md.

mod files;
mod pm;
mod reseal;
mod rows;
mod text;
mod wal;

use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use std::path::Path;

pub use reseal::reseal;
pub use rows::ROW_PAGE_SIZE;

/// Decoders a fuzz target can exercise (one per target in `fuzz/fuzz_targets`).
pub const TARGETS: [&str; 17] = [
    "pm_log",
    "sst_footer",
    "sst_block",
    "sst_bloom",
    "sst_table",
    "manifest",
    "version_edit",
    "vlog",
    "vlog_redirect",
    "wal",
    "pm_skiplist",
    "pm_btree",
    "rowtable",
    "matrix_container",
    "options_file",
    "identity",
    "export_format",
];

/// Targets that may also reject bytes with [`Error::InvalidArgument`]: the B+-tree refuses a
/// region of fewer than two nodes as a wrong size before reading it (`PmBtree::recover`).
pub const ARGUMENT_ERRORS: [&str; 1] = ["pm_btree"];

/// Runs decoder `target` (one of [`TARGETS`]) over `data` as given (no `reseal`). `Ok` if the
/// bytes were accepted (and walked), otherwise the decoder's error.
pub fn decode(target: &str, data: &[u8]) -> Result<()> {
    match target {
        "wal" => wal::wal(data),
        "pm_skiplist" => pm::pm_skiplist(data),
        "pm_btree" => pm::pm_btree(data),
        "rowtable" => rows::rowtable(data),
        "matrix_container" => rows::matrix_container(data),
        "options_file" => text::options_file(data),
        "identity" => text::identity(data),
        "export_format" => text::export_format(data),
        _ => files::decode(target, data),
    }
}

/// What a fuzz target asserts: [`decode`] of `data`, and of `data` resealed when that differs,
/// each accepts or rejects cleanly; panics otherwise (a non-corruption error included).
pub fn check(target: &str, data: &[u8]) {
    expect_clean(target, decode(target, data));
    if let Some(sealed) = reseal(target, data).filter(|s| s != data) {
        expect_clean(target, decode(target, &sealed));
    }
}

fn expect_clean(target: &str, result: Result<()>) {
    if let Err(e) = result {
        let argument = matches!(e, Error::InvalidArgument(_)) && ARGUMENT_ERRORS.contains(&target);
        assert!(
            e.is_corruption() || argument,
            "{target}: not a clean rejection: {e}"
        );
    }
}

fn path(name: &str) -> &Path {
    Path::new(name)
}

/// The little-endian u64 at `data[at..at + 8]`, 0 where the bytes end first (a number taken
/// from the input's own header, so that the decoder's check of it passes).
fn u64_at(data: &[u8], at: usize) -> u64 {
    data.get(at..at + 8)
        .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
}

/// The error of a walk that found the accepted structure inconsistent (a decoder bug: it
/// should have been refused): not a clean rejection, so [`check`] panics on it.
fn inconsistent(target: &str, what: String) -> Error {
    Error::InvalidState(format!("{target}: accepted, but {what}"))
}

/// A file held in memory.
struct MemFile(Vec<u8>);

impl RandomAccessFile for MemFile {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let eof = || std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
        let start = usize::try_from(offset).map_err(|_| eof())?;
        let end = start.checked_add(buf.len()).ok_or_else(eof)?;
        buf.copy_from_slice(self.0.get(start..end).ok_or_else(eof)?);
        Ok(())
    }

    fn size(&self) -> std::io::Result<u64> {
        Ok(self.0.len() as u64)
    }
}
