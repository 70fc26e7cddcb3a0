//! [`LiveFilter`]: a bloom filter a mutable PMTable fills as it indexes entries, so a point
//! read skips the skiplist search of a table that does not hold the key (RocksDB's memtable
//! bloom). Without it every get searched the mutable table's skiplist: a fifth of a YCSB-C
//! read's time, in cache misses on nodes.
//!
//! Blocked: a key sets and tests [`PROBES`] bits inside one 64-byte block, so a test costs one
//! cache miss. Sized from the log's capacity: one bit per [`LOG_BYTES_PER_BIT`] log bytes
//! (1 MiB of DRAM for a 64 MiB log): over 100 bits per key for 1 KB values, about 6 for the
//! smallest entries.
//!
//! Invariants: bits are only set (`fetch_or`), never cleared. A key is added before its index
//! node is linked, and the node before the write's sequence becomes visible (a `Release`
//! store), so a reader that pinned a sequence sees the bits of every entry at or below it.
//! All of it is safe Rust: every word is an atomic.

use crate::sst::blocked_bloom::{hash64, locate};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Bits a key sets in its block.
const PROBES: u32 = 6;
/// Log bytes per filter bit.
const LOG_BYTES_PER_BIT: usize = 8;
/// Words per block (one 64-byte cache line).
const BLOCK_WORDS: usize = 8;

/// A blocked bloom filter over user keys, filled concurrently with reads (module docs).
pub struct LiveFilter {
    words: Box<[AtomicU64]>,
    blocks: usize,
}

impl LiveFilter {
    /// A filter for a log of `log_capacity` bytes.
    pub fn for_log(log_capacity: usize) -> LiveFilter {
        let bits = (log_capacity / LOG_BYTES_PER_BIT).max(512);
        let blocks = bits.div_ceil(64 * BLOCK_WORDS);
        LiveFilter {
            words: (0..blocks * BLOCK_WORDS)
                .map(|_| AtomicU64::new(0))
                .collect(),
            blocks,
        }
    }

    /// Records `user_key`.
    pub fn add(&self, user_key: &[u8]) {
        let (block, probes) = self.locate(user_key);
        for bit in probes {
            self.words[block + bit / 64].fetch_or(1 << (bit % 64), Relaxed);
        }
    }

    /// False only if `user_key` was never added.
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        let (block, mut probes) = self.locate(user_key);
        probes.all(|bit| self.words[block + bit / 64].load(Relaxed) & (1 << (bit % 64)) != 0)
    }

    /// Bytes of DRAM the filter takes.
    #[cfg(test)]
    pub fn size(&self) -> usize {
        self.words.len() * 8
    }

    /// The first word of the key's block and its bit positions within the block (the SST
    /// filters' blocked layout, `sst::blocked_bloom`).
    fn locate(&self, user_key: &[u8]) -> (usize, impl Iterator<Item = usize>) {
        let (block, probes) = locate(hash64(user_key), self.blocks, PROBES);
        (block * BLOCK_WORDS, probes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_added_key_may_be_contained_and_most_others_are_refused() {
        let f = LiveFilter::for_log(64 << 20);
        let key = |i: u32| format!("user{i:012}").into_bytes();
        (0..60_000).for_each(|i| f.add(&key(i)));
        assert!((0..60_000).all(|i| f.may_contain(&key(i))));
        let false_positives = (60_000..160_000)
            .filter(|&i| f.may_contain(&key(i)))
            .count();
        assert!(false_positives < 100, "{false_positives} of 100000");
        assert_eq!(f.size(), 1 << 20);
    }

    #[test]
    fn a_tiny_log_still_gets_one_whole_block() {
        let f = LiveFilter::for_log(0);
        f.add(b"k");
        assert!(f.may_contain(b"k") && f.size() == 64);
    }
}
