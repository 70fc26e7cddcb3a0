//! Offline inspection of a database's files, for the `flatlsm check` and `flatlsm dump`
//! commands (the roles of LevelDB's `leveldbutil` and RocksDB's `sst_dump`/`ldb`).
//!
//! Everything here only reads: no file is created, changed or removed. Callers that inspect a
//! live database should hold its `LOCK` (the CLI does) so files do not change underneath.

mod check;
mod check_buffers;
mod dump;
mod sst_properties;

pub use crate::db::{is_database_file_name, is_pm_dir_file_name, DirLock};
/// PM Log layout facts, for tools that size PM Logs or plan writes against their persist points
/// (docs/pm-log-format.md): the encoded length of an entry, the largest entry that goes through
/// the DRAM Buffer Log, and how many buffered bytes trigger a Buffer Log write-back.
pub use crate::pmtable::log::{encoded_entry_len, BUFFER_FLUSH_BYTES, SMALL_ENTRY_LIMIT};
pub use check::{check_database, check_database_with_wal, CheckReport, Problem};
pub use dump::{dump_file, dump_file_with, DumpFormat, DumpOptions};

use crate::error::{IoContext, Result};
use crate::file_names::{parse_numbered_file, NumberedFile};
use crate::fs::{FileSystem, OsFileSystem};
use crate::pmtable::log::parse_log_file_name;
use crate::sst::Table;
use crate::version::CURRENT_FILE_NAME;
use std::path::Path;
use std::sync::Arc;

/// What a database file is, judged by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// An SSTable (`NNNNNN.sst`).
    Sst(u64),
    /// A value log (`NNNNNN.vlog`).
    Vlog(u64),
    /// A value-log redirect table (`NNNNNN.vredir`).
    Redirect(u64),
    /// A PM Log (`NNNNNN.pmlog`).
    PmLog(u64),
    /// A manifest (`MANIFEST-NNNNNN`).
    Manifest(u64),
    /// A write-ahead log (`NNNNNN.log`, designs with a DRAM write buffer).
    Wal(u64),
    /// The `CURRENT` file.
    Current,
    /// An OPTIONS file (`OPTIONS-NNNNNN`, docs/options-file.md).
    Options(u64),
}

impl FileKind {
    /// The kind of the file at `path`, or `None` for a name FlatLSM does not write.
    pub fn of(path: &Path) -> Option<FileKind> {
        let name = path.file_name()?.to_str()?;
        if name == CURRENT_FILE_NAME {
            return Some(FileKind::Current);
        }
        if let Some(n) = crate::options::parse_options_file_name(name) {
            return Some(FileKind::Options(n));
        }
        if let Some(n) = parse_log_file_name(name) {
            return Some(FileKind::PmLog(n));
        }
        Some(match parse_numbered_file(name)? {
            NumberedFile::Sst(n) => FileKind::Sst(n),
            NumberedFile::Vlog(n) => FileKind::Vlog(n),
            NumberedFile::Redirect(n) => FileKind::Redirect(n),
            NumberedFile::Manifest(n) => FileKind::Manifest(n),
            NumberedFile::Wal(n) => FileKind::Wal(n),
        })
    }
}

/// Opens the SST at `path` (table `number`) for reading without a cache; also returns its size.
fn open_sst(path: &Path, number: u64) -> Result<(Arc<Table>, u64)> {
    let file = OsFileSystem
        .open(path)
        .context(|| format!("opening {}", path.display()))?;
    let size = file
        .size()
        .context(|| format!("reading the size of {}", path.display()))?;
    Ok((
        Table::open(file, path.to_path_buf(), number, size, None)?,
        size,
    ))
}

/// Renders bytes for people: printable ASCII as is, everything else as `\xNN`.
pub fn escape_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_graphic() || b == b' ' {
            if b == b'\\' {
                out.push('\\');
            }
            out.push(b as char);
        } else {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// Renders bytes as lowercase hexadecimal.
pub fn hex_bytes(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
