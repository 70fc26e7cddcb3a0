//! Compressed data blocks: round trips per codec with raw and compressed blocks in one table,
//! the block cache (DRAM and PM) holding decompressed blocks, damaged and unknown-type blocks
//! refused with file and offset, and tables written before compression still read.

use super::corruption::check_damaged;
use super::*;
use crate::compression::{Compression, TYPE_NONE};
use crate::sst::{Block, StoredBlock};
use crate::types::{crc32c, crc32c_extend};

/// A table written by the builder before compression existed (every trailer type 0), with
/// [`fixture_entries`] at block size 256 and 10 bloom bits per key.
const PRE_COMPRESSION_TABLE: &[u8] = include_bytes!("data/pre_compression_v1.sst");

/// The entries of [`PRE_COMPRESSION_TABLE`].
fn fixture_entries() -> Entries {
    (0..60u32)
        .map(|i| {
            let key = format!("key/{:04}", i * 2);
            let value = format!("value-{i}-{}", "x".repeat(i as usize % 13)).into_bytes();
            (ik(key.as_bytes(), u64::from(i) + 1), value)
        })
        .collect()
}

/// Runs of 40 entries alternate between repetitive values (their blocks compress) and noise
/// (their blocks do not), so one table holds both trailer types.
fn mixed_entries(n: u32) -> Entries {
    (0..n)
        .map(|i| {
            let value = match (i / 40) % 2 {
                0 => format!("value {:06} ", i % 7).repeat(20).into_bytes(),
                _ => crate::testing::noise(u64::from(i), 200),
            };
            (ik(format!("key{i:06}").as_bytes(), 1), value)
        })
        .collect()
}

fn opts(compression: Compression) -> TableBuildOptions {
    TableBuildOptions {
        block_size: 1024,
        compression,
        ..TableBuildOptions::default()
    }
}

fn stored_blocks(table: &Table) -> Vec<StoredBlock> {
    (0..table.num_blocks())
        .map(|i| table.stored_block(i).unwrap())
        .collect()
}

/// Every entry reads back through verify, a scan and point gets.
fn assert_reads_back(table: &Arc<Table>, entries: &Entries) {
    assert_eq!(table.verify().unwrap(), entries.len() as u64);
    let (got, status) = scan(table);
    status.unwrap();
    assert!(got == *entries, "scan differs");
    for (k, v) in entries.iter().step_by(13) {
        assert_eq!(table.get(k).unwrap(), Some((k.clone(), v.clone())));
    }
}

#[test]
fn tables_with_compressed_and_raw_blocks_round_trip_with_each_codec() {
    let entries = mixed_entries(800);
    let (raw_bytes, _) = build(&entries, opts(Compression::None));
    for c in [
        Compression::Lz4,
        Compression::ZSTD,
        Compression::Zstd { level: 19 },
    ] {
        let (bytes, summary) = build(&entries, opts(c));
        assert!(
            bytes.len() < raw_bytes.len() * 3 / 4,
            "{c}: {}",
            bytes.len()
        );
        let table = open(bytes, None).unwrap();
        let blocks = stored_blocks(&table);
        let types: Vec<u8> = blocks.iter().map(|b| b.block_type).collect();
        assert!(types.contains(&c.type_byte()), "{c}: {types:?}");
        assert!(types.contains(&TYPE_NONE), "{c}: {types:?}");
        for b in blocks.iter().filter(|b| b.block_type != TYPE_NONE) {
            assert!(b.handle.size <= b.raw_size - b.raw_size / 8, "{c}: {b:?}");
        }
        assert_eq!(summary.num_entries, 800);
        assert_reads_back(&table, &entries);
    }
}

#[test]
fn without_compression_every_block_is_raw_and_stored_at_its_raw_size() {
    let (bytes, _) = build(&mixed_entries(400), opts(Compression::None));
    let table = open(bytes, None).unwrap();
    for b in stored_blocks(&table) {
        assert_eq!((b.block_type, b.handle.size), (TYPE_NONE, b.raw_size));
    }
}

/// The block cache holds decoded (decompressed) blocks, in DRAM and in PM: a second scan is
/// served from the cache with the same data.
#[test]
fn the_block_cache_serves_decompressed_blocks_in_dram_and_in_pm() {
    use crate::pm::{DramPmDevice, PmArena, PmDevice};
    let entries = mixed_entries(800);
    let dev = DramPmDevice::new("/pm");
    let arena = PmArena::new(dev.create_region("blockcache", 1 << 20).unwrap());
    for cache in [BlockCache::new(1 << 20), BlockCache::in_pm(arena)] {
        let bytes = build(&entries, opts(Compression::Lz4)).0;
        let table = open(bytes, Some(cache.clone())).unwrap();
        assert_reads_back(&table, &entries);
        let misses = cache.misses();
        let (again, status) = scan(&table);
        status.unwrap();
        assert!(again == entries);
        assert_eq!(cache.misses(), misses, "second scan is served by the cache");
        let raw: u64 = stored_blocks(&table).iter().map(|b| b.raw_size).sum();
        assert!(
            cache.usage() as u64 >= raw,
            "cached blocks are decompressed"
        );
    }
}

/// The first data block of `bytes` with a compressed trailer (the table must have one).
fn first_compressed(bytes: &[u8]) -> StoredBlock {
    let table = open(bytes.to_vec(), None).unwrap();
    let found = stored_blocks(&table)
        .into_iter()
        .find(|b| b.block_type != TYPE_NONE);
    found.expect("a compressed block")
}

/// Replaces the stored bytes and type of block `b` in `bytes` (same length) and recomputes its
/// CRC, so only the decompression can tell.
fn rewrite_block(bytes: &mut [u8], b: &StoredBlock, stored: &[u8], block_type: u8) {
    let start = b.handle.offset as usize;
    let end = start + b.handle.size as usize;
    bytes[start..end].copy_from_slice(stored);
    bytes[end] = block_type;
    let crc = crc32c_extend(crc32c(stored), &[block_type]);
    bytes[end + 1..end + 5].copy_from_slice(&crc.to_le_bytes());
}

/// The corruption every reader path reports for `bytes`: offset and detail.
fn refused(bytes: Vec<u8>) -> (u64, String) {
    let table = open(bytes, None).unwrap();
    let e = table.verify().unwrap_err();
    assert_corruption_at(&e, &test_path());
    assert!(scan(&table).1.is_err(), "scan must fail too");
    match e {
        Error::Corruption { offset, detail, .. } => (offset, detail),
        other => panic!("{other}"),
    }
}

#[test]
fn a_damaged_compressed_block_is_refused() {
    for c in [Compression::Lz4, Compression::ZSTD] {
        let (bytes, _) = build(&mixed_entries(400), opts(c));
        let b = first_compressed(&bytes);
        let end = b.handle.offset + b.handle.size;
        let mut flipped = bytes.clone();
        flipped[b.handle.offset as usize + 3] ^= 0x10;
        assert_eq!(
            refused(flipped).0,
            end + 1,
            "{c}: the CRC names the trailer"
        );
        let mut garbage = bytes.clone();
        let payload = vec![0xff; b.handle.size as usize];
        rewrite_block(&mut garbage, &b, &payload, c.type_byte());
        let (offset, detail) = refused(garbage);
        assert_eq!(offset, b.handle.offset, "{c}: {detail}");
        assert!(detail.contains(&c.to_string()), "{c}: {detail}");
    }
}

#[test]
fn a_compressed_block_of_another_size_than_recorded_is_refused() {
    for c in [Compression::Lz4, Compression::ZSTD] {
        let (mut bytes, _) = build(&mixed_entries(400), opts(c));
        let b = first_compressed(&bytes);
        let start = b.handle.offset as usize;
        let mut stored = bytes[start..start + b.handle.size as usize].to_vec();
        stored[0] ^= 0x01; // the raw-size varint's low bit (raw sizes here are > 127)
        rewrite_block(&mut bytes, &b, &stored, c.type_byte());
        let (offset, detail) = refused(bytes);
        assert_eq!(offset, b.handle.offset, "{c}: {detail}");
    }
}

#[test]
fn an_unknown_trailer_type_is_refused() {
    let (mut bytes, _) = build(&mixed_entries(400), opts(Compression::Lz4));
    let b = first_compressed(&bytes);
    let start = b.handle.offset as usize;
    let stored = bytes[start..start + b.handle.size as usize].to_vec();
    rewrite_block(&mut bytes, &b, &stored, 9);
    let (offset, detail) = refused(bytes);
    assert_eq!(offset, b.handle.offset + b.handle.size, "{detail}");
    assert!(detail.contains("unknown compression type 9"), "{detail}");
}

#[test]
fn every_single_byte_flip_of_a_compressed_table_is_detected() {
    let entries = mixed_entries(200);
    let (bytes, _) = build(&entries, opts(Compression::Lz4));
    for i in (0..bytes.len()).step_by(3) {
        let mut b = bytes.clone();
        b[i] ^= 0x04;
        let size = b.len() as u64;
        assert!(check_damaged(b, size, &entries), "flip at {i} not detected");
    }
}

#[test]
fn a_table_written_before_compression_still_reads() {
    let entries = fixture_entries();
    let table = open(PRE_COMPRESSION_TABLE.to_vec(), None).unwrap();
    assert!(table.num_blocks() > 3);
    assert!(stored_blocks(&table).iter().all(|b| b.block_type == 0));
    assert_reads_back(&table, &entries);
}

/// Without compression the data blocks are stored raw (type 0) and, since the direct layout
/// (issue 26), with one restart point per entry: larger on disk than the first format's
/// prefix-compressed blocks, which still read (`a_table_written_before_compression_still_reads`).
#[test]
fn a_table_built_without_compression_stores_raw_direct_data_blocks() {
    let opts = TableBuildOptions {
        block_size: 256,
        bloom_bits_per_key: 10,
        compression: Compression::None,
    };
    let (bytes, _) = build(&fixture_entries(), opts);
    let new = open(bytes.clone(), None).unwrap();
    let blocks = stored_blocks(&new);
    assert!(blocks.iter().all(|b| b.block_type == 0));
    for b in &blocks {
        let at = b.handle.offset as usize;
        let raw = &bytes[at..at + b.handle.size as usize];
        let restarts = u32::from_le_bytes(raw[raw.len() - 4..].try_into().unwrap());
        let block = Block::decode(raw.to_vec(), std::path::Path::new("t"), 0).unwrap();
        assert_eq!(restarts as usize, block.len(), "one restart per entry");
    }
    assert!(bytes.len() > PRE_COMPRESSION_TABLE.len());
    assert_reads_back(&new, &fixture_entries());
}
