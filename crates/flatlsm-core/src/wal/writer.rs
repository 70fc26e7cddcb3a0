//! [`WalWriter`]: appends one record per write batch (format and persist order in `mod.rs`).

use super::{record_crc, Format, WAL_HEADER_LEN, WAL_MAGIC, WAL_MARKER_LEN, WAL_RECORD_HEADER_LEN};
use crate::coding::put_varint64;
use crate::error::{Error, IoContext, Result};
use crate::file_names::wal_file_name;
use crate::fs::{FileSystem, WritableFile};
use crate::types::{crc32c, ValueKind};
use std::path::{Path, PathBuf};

/// The open write-ahead log of the mutable write buffer.
pub struct WalWriter {
    pub(super) number: u64,
    pub(super) path: PathBuf,
    pub(super) file: Box<dyn WritableFile>,
    /// Reused record buffer.
    pub(super) buf: Vec<u8>,
    /// Set by a failed append or sync: the file's end is unknown, so nothing more is written.
    pub(super) failed: bool,
    /// Bytes known durable: the length at the last successful sync (recorded in each record).
    pub(super) synced: u64,
}

impl WalWriter {
    /// Creates log `number` in `dir`: header and sequence marker (every older log, range
    /// tombstone and the tree end at sequence `after`) written and synced, directory synced, so
    /// the manifest may name it once this returns.
    pub fn create(fs: &dyn FileSystem, dir: &Path, number: u64, after: u64) -> Result<WalWriter> {
        let path = dir.join(wal_file_name(number));
        let file = fs
            .create(&path)
            .context(|| format!("creating {}", path.display()))?;
        let mut w = WalWriter {
            number,
            path,
            file,
            buf: Vec::new(),
            failed: false,
            synced: 0,
        };
        w.write_start(after)?;
        fs.sync_dir(dir)
            .context(|| format!("syncing {}", dir.display()))?;
        Ok(w)
    }

    /// Writes and syncs the header and the sequence marker (an empty batch numbered from
    /// `after + 1`).
    fn write_start(&mut self, after: u64) -> Result<()> {
        let mut start = Vec::with_capacity(WAL_HEADER_LEN + WAL_MARKER_LEN);
        start.extend_from_slice(WAL_MAGIC);
        start.extend_from_slice(&self.number.to_le_bytes());
        self.encode(after.saturating_add(1), WAL_HEADER_LEN, std::iter::empty());
        start.extend_from_slice(&self.buf);
        let file = &mut self.file;
        file.append(&start)
            .and_then(|()| file.sync())
            .context(|| format!("writing the header of {}", self.path.display()))?;
        self.synced = self.file.len();
        Ok(())
    }

    /// The log's number (that of its write buffer).
    pub fn number(&self) -> u64 {
        self.number
    }

    /// Bytes written so far, header included.
    pub fn len(&self) -> u64 {
        self.file.len()
    }

    /// True if no batch was appended (only the header and the sequence marker).
    pub fn is_empty(&self) -> bool {
        self.len() <= (WAL_HEADER_LEN + WAL_MARKER_LEN) as u64
    }

    /// Appends one batch (entries numbered from `first_seq`) and hands it to the OS; with
    /// `sync`, makes it durable before returning.
    pub fn add_batch<'a>(
        &mut self,
        first_seq: u64,
        entries: impl ExactSizeIterator<Item = (ValueKind, &'a [u8], &'a [u8])>,
        sync: bool,
    ) -> Result<()> {
        if self.failed {
            return Err(self.poisoned());
        }
        self.encode(first_seq, self.file.len() as usize, entries);
        let written = self.file.append(&self.buf);
        self.failed = written.is_err();
        written.context(|| format!("appending to {}", self.path.display()))?;
        match sync {
            true => self.sync(),
            false => self.handed_over(),
        }
    }

    /// Hands the appended bytes to the OS (a process crash then loses nothing).
    fn handed_over(&mut self) -> Result<()> {
        let flushed = self.file.flush();
        self.failed = flushed.is_err();
        flushed.context(|| format!("appending to {}", self.path.display()))
    }

    /// Makes every record appended so far durable.
    pub fn sync(&mut self) -> Result<()> {
        if self.failed {
            return Err(self.poisoned());
        }
        let synced = self.file.sync();
        self.failed = synced.is_err();
        synced.context(|| format!("syncing {}", self.path.display()))?;
        self.synced = self.file.len();
        Ok(())
    }

    /// Syncs the log, then appends the seal — an empty batch whose `synced` covers every byte
    /// before it — and syncs that too (close): damage anywhere before the seal is then told
    /// from a torn tail at the next recovery (module rule).
    pub fn seal(&mut self) -> Result<()> {
        self.sync()?;
        self.add_batch(0, std::iter::empty(), true)
    }

    /// Encodes the record to be written at offset `pos` into `buf` (format 2: its crc binds it
    /// to this log and offset, and it records the synced length).
    fn encode<'a>(
        &mut self,
        first_seq: u64,
        pos: usize,
        entries: impl ExactSizeIterator<Item = (ValueKind, &'a [u8], &'a [u8])>,
    ) {
        let b = &mut self.buf;
        b.clear();
        b.extend_from_slice(&[0; WAL_RECORD_HEADER_LEN]);
        b.extend_from_slice(&first_seq.to_le_bytes());
        b.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        b.extend_from_slice(&self.synced.to_le_bytes());
        for (kind, key, value) in entries {
            b.push(kind as u8);
            put_varint64(b, key.len() as u64);
            b.extend_from_slice(key);
            put_varint64(b, value.len() as u64);
            b.extend_from_slice(value);
        }
        let len = ((b.len() - WAL_RECORD_HEADER_LEN) as u32).to_le_bytes();
        b[..4].copy_from_slice(&len);
        b[4..8].copy_from_slice(&crc32c(&len).to_le_bytes());
        let crc = record_crc(Format::V2, self.number, pos, &b[WAL_RECORD_HEADER_LEN..]);
        b[8..12].copy_from_slice(&crc.to_le_bytes());
    }

    fn poisoned(&self) -> Error {
        Error::InvalidState(format!(
            "{} failed an earlier write; no more records are appended",
            self.path.display()
        ))
    }
}
