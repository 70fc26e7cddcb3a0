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
//! Once the table is sealed, [`LiveFilter::folded`] makes a copy sized to the keys it got
//! (halving the block count while it stays above the target: `locate` picks a block by
//! multiply-shift, so block `j` of half as many is exactly blocks `2j` and `2j + 1` OR-ed),
//! small enough to stay in the CPU cache: a get tests every immutable table's filter, and six
//! 1 MiB filters were six cache misses per get.
//!
//! Invariants: bits are only set (`fetch_or`), never cleared. A key is added before its index
//! node is linked, and the node before the write's sequence becomes visible (a `Release`
//! store), so a reader that pinned a sequence sees the bits of every entry at or below it.
//! All of it is safe Rust: every word is an atomic.

use crate::sst::blocked_bloom::{hash64, locate};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

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
    /// Keys added (each version of a key counts).
    added: AtomicUsize,
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
            added: AtomicUsize::new(0),
        }
    }

    /// A copy with about `bits_per_key` bits per added key, for a table that takes no more
    /// keys (module docs). No smaller than one block; as large as this one if the block count
    /// cannot be halved.
    pub fn folded(&self, bits_per_key: usize) -> LiveFilter {
        let added = self.added.load(Relaxed);
        let wanted = (added * bits_per_key).div_ceil(64 * BLOCK_WORDS).max(1);
        let mut words: Vec<u64> = self.words.iter().map(|w| w.load(Relaxed)).collect();
        let mut blocks = self.blocks;
        while blocks.is_multiple_of(2) && blocks / 2 >= wanted {
            blocks /= 2;
            for j in 0..blocks * BLOCK_WORDS {
                let (block, word) = (j / BLOCK_WORDS, j % BLOCK_WORDS);
                let low = 2 * block * BLOCK_WORDS + word;
                words[j] = words[low] | words[low + BLOCK_WORDS];
            }
            words.truncate(blocks * BLOCK_WORDS);
        }
        LiveFilter {
            words: words.into_iter().map(AtomicU64::new).collect(),
            blocks,
            added: AtomicUsize::new(added),
        }
    }

    /// Records `user_key`.
    pub fn add(&self, user_key: &[u8]) {
        self.added.fetch_add(1, Relaxed);
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

    /// Starts loading the block [`LiveFilter::may_contain`] tests for `user_key`.
    pub fn hint(&self, user_key: &[u8]) {
        let (block, _) = self.locate(user_key);
        crate::pm::prefetch(&self.words[block]);
    }

    /// Bytes of DRAM the filter takes.
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
    fn a_folded_filter_keeps_every_key_at_the_size_of_its_keys() {
        let f = LiveFilter::for_log(64 << 20);
        let key = |i: u32| format!("user{i:012}").into_bytes();
        (0..60_000).for_each(|i| f.add(&key(i)));
        let small = f.folded(16);
        // 60,000 keys × 16 bits need 1,875 blocks: 16,384 halve to 2,048.
        assert_eq!(small.size(), 2048 * 64);
        assert!((0..60_000).all(|i| small.may_contain(&key(i))));
        let false_positives = (60_000..160_000)
            .filter(|&i| small.may_contain(&key(i)))
            .count();
        assert!(false_positives < 1_500, "{false_positives} of 100000");
        let odd = LiveFilter::for_log(3 * 512 * 8);
        odd.add(b"k");
        assert_eq!(
            odd.folded(10).size(),
            odd.size(),
            "3 blocks cannot be halved"
        );
    }

    #[test]
    fn a_tiny_log_still_gets_one_whole_block() {
        let f = LiveFilter::for_log(0);
        f.add(b"k");
        assert!(f.may_contain(b"k") && f.size() == 64);
    }
}
