//! Offline inspection of a database's files, for the `flatlsm check` and `flatlsm dump`
//! commands (the roles of LevelDB's `leveldbutil` and RocksDB's `sst_dump`/`ldb`).
//!
//! Everything here only reads: no file is created, changed or removed. Callers that inspect a
//! live database should hold its `LOCK` (the CLI does) so files do not change underneath.

mod check;
mod check_buffers;
mod dump;
pub(crate) mod render;
mod sst_properties;

pub use crate::db::DirLock;
pub use check::{check_database, check_database_with_wal, CheckReport, Problem};
pub use dump::{dump_file, dump_file_with, DumpFormat, DumpOptions};

use crate::error::{IoContext, Result};
use crate::file_names::parse_pm_log_file_name;
use crate::file_names::{parse_numbered_file, NumberedFile};
use crate::fs::{FileSystem, OsFileSystem};
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
        if let Some(n) = parse_pm_log_file_name(name) {
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
