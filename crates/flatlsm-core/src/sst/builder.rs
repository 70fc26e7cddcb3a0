//! Writes an SSTable: data blocks, then the bloom filter block, the index block and the footer.
//!
//! Invariants: keys arrive in strictly increasing [`compare_internal_keys`] order (otherwise
//! `Error::InvalidArgument`); blocks are written back to back starting at offset 0, so the file
//! is exactly `data blocks ++ filter ++ index ++ footer` with no gaps. A data block is stored
//! compressed (the options' [`Compression`]) when that saves at least 1/8 of its bytes, else
//! raw; filter and index blocks are always raw. After any I/O error the
//! builder is poisoned and refuses further calls. A builder has a single owner (`Send`, not shared).

use super::block_builder::BlockBuilder;
use super::blocked_bloom::hash64;
use super::bloom::build_blocked_filter;
use super::format::{
    block_trailer, BlockHandle, Footer, BLOCK_TYPE_RAW, FOOTER_LEN, FORMAT_VERSION,
};
use super::MAX_BLOCK_SIZE;
use super::{TableBuildOptions, TableSummary};
use crate::compression::{Compression, Compressor};
use crate::error::{Error, IoContext, Result};
use crate::fs::WritableFile;
use crate::types::{compare_internal_keys, user_key_of, TRAILER_LEN};
use std::cmp::Ordering;
use std::path::PathBuf;

/// Largest accepted key + value length of one entry.
const MAX_ENTRY_LEN: usize = 1 << 31;

/// Streams sorted entries into a new table file.
pub struct TableBuilder {
    file: Box<dyn WritableFile>,
    path: PathBuf,
    block_size: usize,
    bloom_bits_per_key: usize,
    compression: Compression,
    compressor: Compressor,
    data: BlockBuilder,
    index: BlockBuilder,
    offset: u64,
    num_entries: u64,
    smallest: Vec<u8>,
    last_key: Vec<u8>,
    key_hashes: Vec<u64>,
    poisoned: bool,
}

impl TableBuilder {
    /// Starts a table that will be written to `file` (whose name is `path`, for errors).
    pub fn new(file: Box<dyn WritableFile>, path: PathBuf, opts: TableBuildOptions) -> Self {
        TableBuilder {
            file,
            path,
            block_size: opts.block_size.clamp(1, MAX_BLOCK_SIZE),
            bloom_bits_per_key: opts.bloom_bits_per_key,
            compression: opts.compression,
            compressor: Compressor::new(opts.compression),
            data: BlockBuilder::direct(),
            index: BlockBuilder::new(),
            offset: 0,
            num_entries: 0,
            smallest: Vec::new(),
            last_key: Vec::new(),
            key_hashes: Vec::new(),
            poisoned: false,
        }
    }

    /// Appends an entry; `internal_key` must sort strictly after the previous one.
    pub fn add(&mut self, internal_key: &[u8], value: &[u8]) -> Result<()> {
        self.check_usable()?;
        self.check_entry(internal_key, value)?;
        let uk = user_key_of(internal_key);
        if self.num_entries == 0 || uk != user_key_of(&self.last_key) {
            self.key_hashes.push(hash64(uk));
        }
        if self.num_entries == 0 {
            self.smallest = internal_key.to_vec();
        }
        self.data.add(internal_key, value);
        self.last_key.clear();
        self.last_key.extend_from_slice(internal_key);
        self.num_entries += 1;
        if self.data.estimated_size() >= self.block_size {
            self.guard(Self::flush_data_block)?;
        }
        Ok(())
    }

    /// Bytes the file would have if finished now (approximate for filter and index).
    pub fn estimated_size(&self) -> u64 {
        let filter = self.key_hashes.len() * self.bloom_bits_per_key / 8;
        let pending = self.data.estimated_size() + self.index.estimated_size() + filter;
        self.offset + pending as u64 + FOOTER_LEN as u64
    }

    /// Entries added so far.
    pub fn num_entries(&self) -> u64 {
        self.num_entries
    }

    /// Writes the last data block, the filter, the index and the footer, then syncs the file.
    pub fn finish(mut self) -> Result<TableSummary> {
        self.check_usable()?;
        if !self.data.is_empty() {
            self.guard(Self::flush_data_block)?;
        }
        let filter = if self.bloom_bits_per_key > 0 {
            let contents = build_blocked_filter(&self.key_hashes, self.bloom_bits_per_key);
            self.guard(|b| b.write_block(&contents))?
        } else {
            BlockHandle::default()
        };
        let contents = self.index.finish();
        let index = self.guard(|b| b.write_block(&contents))?;
        let footer = Footer {
            filter,
            index,
            num_entries: self.num_entries,
            version: FORMAT_VERSION,
        };
        self.guard(|b| b.append(&footer.encode()))?;
        let path = self.path.clone();
        self.file
            .sync()
            .context(|| format!("syncing {}", path.display()))?;
        Ok(TableSummary {
            file_size: self.offset,
            num_entries: self.num_entries,
            smallest: self.smallest,
            largest: self.last_key,
        })
    }

    fn check_usable(&self) -> Result<()> {
        if self.poisoned {
            return Err(Error::InvalidState(format!(
                "table builder for {} failed earlier",
                self.path.display()
            )));
        }
        Ok(())
    }

    fn check_entry(&self, key: &[u8], value: &[u8]) -> Result<()> {
        if key.len() < TRAILER_LEN {
            return Err(Error::InvalidArgument(format!(
                "internal key of {} bytes is shorter than its trailer",
                key.len()
            )));
        }
        if key.len().saturating_add(value.len()) > MAX_ENTRY_LEN {
            return Err(Error::InvalidArgument("entry is larger than 2 GiB".into()));
        }
        if self.num_entries > 0 && compare_internal_keys(&self.last_key, key) != Ordering::Less {
            return Err(Error::InvalidArgument(format!(
                "keys added to {} out of order",
                self.path.display()
            )));
        }
        Ok(())
    }

    /// Runs a writing step; poisons the builder if it fails.
    fn guard<T>(&mut self, step: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        let r = step(self);
        self.poisoned |= r.is_err();
        r
    }

    /// Writes the pending data block and records its index entry (key = its last key).
    fn flush_data_block(&mut self) -> Result<()> {
        let last = self.data.last_key().to_vec();
        let contents = self.data.finish();
        let handle = match self.compressor.compress(&contents) {
            Some(stored) => self.write_typed_block(&stored, self.compression.type_byte())?,
            None => self.write_block(&contents)?,
        };
        let mut value = Vec::new();
        handle.encode_varint(&mut value);
        self.index.add(&last, &value);
        Ok(())
    }

    /// Appends raw block contents and trailer; returns the block's handle.
    fn write_block(&mut self, contents: &[u8]) -> Result<BlockHandle> {
        self.write_typed_block(contents, BLOCK_TYPE_RAW)
    }

    /// Appends a block's stored bytes and a trailer of `block_type`; returns its handle.
    fn write_typed_block(&mut self, stored: &[u8], block_type: u8) -> Result<BlockHandle> {
        let handle = BlockHandle {
            offset: self.offset,
            size: stored.len() as u64,
        };
        self.append(stored)?;
        self.append(&block_trailer(stored, block_type))?;
        Ok(handle)
    }

    fn append(&mut self, bytes: &[u8]) -> Result<()> {
        let path = &self.path;
        self.file
            .append(bytes)
            .context(|| format!("writing {}", path.display()))?;
        self.offset += bytes.len() as u64;
        Ok(())
    }
}
