//! SSTables of the Ordered-L1 and L2 levels on SSD: LevelDB-style block-based tables.
//!
//! A table file is `data blocks ++ filter block ++ index block ++ footer`, written once by a
//! [`TableBuilder`] and then read-only ([`Table`]). Data and index blocks hold internal keys
//! ([`crate::types`]) in strictly increasing [`crate::types::compare_internal_keys`] order with
//! prefix compression; data blocks may be compressed (LZ4, zstd: [`crate::compression`], the type
//! in each block's trailer); the filter is a bloom filter over user keys; every block carries a
//! CRC32C over its stored bytes.
//! The byte layout is documented in `docs/sst-format.md`.
//!
//! Safety contract of the readers: every byte read from disk is validated (footer magic/CRC,
//! handles inside the file, block CRCs, varints in bounds, key order). A failure is
//! `Error::Corruption` naming the file and the offset; readers never panic and never return
//! data that differs from what was written.
//!
//! Thread-safety: [`Table`], [`BlockCache`] and [`TableCache`] are `Send + Sync`;
//! [`TableBuilder`] and [`TableIterator`] have a single owner.

pub mod batch_get;
mod block;
mod block_builder;
mod block_direct;
pub mod blocked_bloom;
pub mod bloom;
mod builder;
mod cache;
mod format;
mod index_words;
mod iterator;
mod table;
mod table_cache;
#[cfg(test)]
mod tests;

pub use crate::coding::MAX_BLOCK_SIZE;

pub use block::Block;
pub use bloom::{BloomFilter, FilterCounters};
pub use builder::TableBuilder;
pub use cache::BlockCache;
pub use format::{
    decode_footer, BlockHandle, Footer, StoredBlock, BLOCK_TRAILER_LEN, BLOCK_TYPE_RAW, FOOTER_LEN,
    FORMAT_VERSION, TABLE_MAGIC,
};
pub use iterator::TableIterator;
pub use table::Table;
pub use table_cache::TableCache;

use crate::compression::Compression;
pub use crate::file_names::{parse_sst_file_name, sst_file_name};
use std::path::{Path, PathBuf};

/// Where a table file lives: RocksDB's `db_paths` path id, with two tiers. Recorded per file in
/// the manifest (tag 18 for [`SstDir::Pm`], `version/edit.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SstDir {
    /// The database directory (SSD).
    #[default]
    Data,
    /// The PM directory (a DAX or tmpfs mount): the `leveled` profile's level 0 with
    /// `level0_in_pm` (the MatrixKV paper's RocksDB-L0-NVM).
    Pm,
}

/// The directories tables live in, one per [`SstDir`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SstDirs {
    /// [`SstDir::Data`]: the database directory.
    pub data: PathBuf,
    /// [`SstDir::Pm`]: the PM directory.
    pub pm: PathBuf,
}

impl SstDirs {
    /// Tables only in `data` (for tools and tests that have no PM directory, `pm` = `data`).
    pub fn data_only(data: PathBuf) -> SstDirs {
        SstDirs {
            pm: data.clone(),
            data,
        }
    }

    /// The directory `dir` names.
    pub fn dir(&self, dir: SstDir) -> &Path {
        match dir {
            SstDir::Data => &self.data,
            SstDir::Pm => &self.pm,
        }
    }

    /// The path of table `number` kept in `dir`.
    pub fn path(&self, number: u64, dir: SstDir) -> PathBuf {
        self.dir(dir).join(sst_file_name(number))
    }
}

/// How a [`TableBuilder`] lays out a table.
#[derive(Clone, Debug)]
pub struct TableBuildOptions {
    /// Target size of a data block's contents in bytes (a block is cut once it reaches this).
    pub block_size: usize,
    /// Bloom filter bits per distinct user key; 0 writes no filter.
    pub bloom_bits_per_key: usize,
    /// How data blocks are compressed (default none). A block that would not shrink by at
    /// least 1/8 is stored raw.
    pub compression: Compression,
}

impl Default for TableBuildOptions {
    fn default() -> Self {
        TableBuildOptions {
            block_size: 4096,
            bloom_bits_per_key: 10,
            compression: Compression::None,
        }
    }
}

/// What a finished table contains, for the manifest.
#[derive(Clone, Debug)]
pub struct TableSummary {
    /// Size of the file in bytes.
    pub file_size: u64,
    /// Number of entries.
    pub num_entries: u64,
    /// Smallest internal key (empty for an empty table).
    pub smallest: Vec<u8>,
    /// Largest internal key (empty for an empty table).
    pub largest: Vec<u8>,
}
