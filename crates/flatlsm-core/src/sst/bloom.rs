//! Whole-table bloom filter over user keys, in one of two layouts.
//!
//! Encoding: `bits` bytes of bit array followed by one byte. The byte's high bit tells the
//! layout; its low seven bits hold the number of probes `k` (1..=30):
//! - high bit clear (classic, LevelDB's): a key sets/tests `k` bits `h, h+delta, ...` modulo
//!   the bit count, where `h` is LevelDB's 32-bit hash (seed 0xbc9f1d34) and
//!   `delta = h.rotate_right(17)`. The PMTables' in-memory filters and older SSTs use it.
//! - high bit set (blocked, `blocked_bloom.rs`): the array is whole 64-byte blocks and a key's
//!   `k` bits lie in one block, chosen by [`hash64`]: one cache miss per test. New SSTs use it.
//!
//! A decoded [`BloomFilter`] is immutable and thread-safe.
//!
//! [`FilterCounters`] count what the filters of a database's tables answered on point lookups
//! (striped counters, `counter.rs`: each exact once lookups stop, not a consistent cut).

use super::blocked_bloom::{self, hash64};
use crate::counter::StripedCounter;
use crate::error::{Error, Result};
use std::path::Path;

/// LevelDB's `Hash(data, n, 0xbc9f1d34)`, used for bloom probes.
pub fn bloom_hash(data: &[u8]) -> u32 {
    const M: u32 = 0xc6a4_a793;
    let mut h = 0xbc9f_1d34 ^ (data.len() as u32).wrapping_mul(M);
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        h = h.wrapping_add(w).wrapping_mul(M);
        h ^= h >> 16;
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        for (i, &b) in rest.iter().enumerate().rev() {
            h = h.wrapping_add(u32::from(b) << (8 * i));
        }
        h = h.wrapping_mul(M);
        h ^= h >> 24;
    }
    h
}

/// The filter-block contents of a blocked filter over keys given by their [`hash64`].
pub(crate) fn build_blocked_filter(hashes: &[u64], bits_per_key: usize) -> Vec<u8> {
    let k = blocked_bloom::probes_for(bits_per_key);
    let mut out = blocked_bloom::build(hashes, bits_per_key, k);
    out.push(BLOCKED | k as u8);
    out
}

/// Builds the filter bytes for the given key hashes at `bits_per_key`.
pub(crate) fn build_filter(hashes: &[u32], bits_per_key: usize) -> Vec<u8> {
    let k = ((bits_per_key as f64 * 0.69) as usize).clamp(1, 30);
    let bits = (hashes.len() * bits_per_key).max(64);
    let bytes = bits.div_ceil(8);
    let bits = bytes * 8;
    let mut out = vec![0u8; bytes + 1];
    for &h in hashes {
        for pos in probes(h, k, bits) {
            out[pos / 8] |= 1 << (pos % 8);
        }
    }
    out[bytes] = k as u8;
    out
}

fn probes(mut h: u32, k: usize, bits: usize) -> impl Iterator<Item = usize> {
    let delta = h.rotate_right(17);
    (0..k).map(move |_| {
        let pos = h as usize % bits;
        h = h.wrapping_add(delta);
        pos
    })
}

/// A decoded bloom filter.
#[derive(Debug, Clone)]
pub struct BloomFilter {
    bits: Vec<u8>,
    k: usize,
    blocked: bool,
}

/// The trailer bit that marks the blocked layout.
pub(crate) const BLOCKED: u8 = 0x80;

impl BloomFilter {
    /// Validates filter-block contents read from `offset` of `path`.
    pub fn decode(mut bytes: Vec<u8>, path: &Path, offset: u64) -> Result<BloomFilter> {
        let Some(&last) = bytes.last() else {
            return Err(Error::corruption(path, offset, "empty filter block"));
        };
        let at = offset + bytes.len() as u64 - 1;
        let (blocked, k) = (last & BLOCKED != 0, last & !BLOCKED);
        if bytes.len() < 2 || !(1..=30).contains(&k) {
            let detail = format!("bad bloom probe count {last}");
            return Err(Error::corruption(path, at, detail));
        }
        bytes.pop();
        if blocked && !bytes.len().is_multiple_of(blocked_bloom::BLOCK_BYTES) {
            let detail = format!(
                "blocked bloom filter of {} bytes: not whole 64-byte blocks",
                bytes.len()
            );
            return Err(Error::corruption(path, offset, detail));
        }
        Ok(BloomFilter {
            bits: bytes,
            k: k as usize,
            blocked,
        })
    }

    /// A filter over keys given by their [`bloom_hash`], built in memory (the PMTables' filters
    /// are never persisted).
    pub fn from_hashes(hashes: &[u32], bits_per_key: usize) -> BloomFilter {
        let mut bits = build_filter(hashes, bits_per_key.max(1));
        let k = bits.pop().map_or(1, usize::from);
        BloomFilter {
            bits,
            k,
            blocked: false,
        }
    }

    /// Starts loading the bits [`BloomFilter::may_contain`] tests for `user_key`: the one block
    /// of the blocked layout (the classic layout's bits are scattered and are not hinted).
    pub fn prefetch(&self, user_key: &[u8]) {
        let blocks = self.bits.len() / blocked_bloom::BLOCK_BYTES;
        if self.blocked && blocks > 0 {
            let (block, _) = blocked_bloom::locate(hash64(user_key), blocks, self.k as u32);
            crate::pm::prefetch_read(&self.bits, block * blocked_bloom::BLOCK_BYTES);
        }
    }

    /// False only if `user_key` was certainly not added.
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        if self.blocked {
            return blocked_bloom::may_contain(&self.bits, self.k as u32, hash64(user_key));
        }
        let bits = self.bits.len() * 8;
        probes(bloom_hash(user_key), self.k, bits).all(|p| self.bits[p / 8] & (1 << (p % 8)) != 0)
    }

    /// Bytes of memory held.
    pub fn size(&self) -> usize {
        self.bits.len()
    }

    /// Number of bit probes per key (1..=30).
    pub fn probes(&self) -> usize {
        self.k
    }
}

/// What table filters answered on point lookups ([`crate::sst::Table::get`] of a table with a
/// filter), shared by the tables of a database (RocksDB's `BLOOM_FILTER_USEFUL` and
/// `BLOOM_FILTER_FULL_POSITIVE` tickers).
#[derive(Debug, Default)]
pub struct FilterCounters {
    checked: StripedCounter,
    useful: StripedCounter,
    false_positives: StripedCounter,
}

impl FilterCounters {
    /// Lookups that asked a filter.
    pub fn checked(&self) -> u64 {
        self.checked.get()
    }

    /// Lookups the filter answered "absent", sparing a block read.
    pub fn useful(&self) -> u64 {
        self.useful.get()
    }

    /// Lookups the filter let through that then found no entry of the key (visible at the
    /// lookup's sequence) in the table.
    pub fn false_positives(&self) -> u64 {
        self.false_positives.get()
    }

    /// Counts one filter answer: `passed` is whether it said "maybe".
    pub(crate) fn count_check(&self, passed: bool) {
        self.checked.add(1);
        if !passed {
            self.useful.add(1);
        }
    }

    /// Counts a lookup the filter let through that found nothing.
    pub(crate) fn count_false_positive(&self) {
        self.false_positives.add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter_for(n: u32, bits_per_key: usize) -> BloomFilter {
        let hashes: Vec<u32> = (0..n)
            .map(|i| bloom_hash(format!("key{i}").as_bytes()))
            .collect();
        BloomFilter::decode(build_filter(&hashes, bits_per_key), Path::new("f"), 0).unwrap()
    }

    #[test]
    fn bloom_has_no_false_negatives() {
        let f = filter_for(5000, 10);
        assert!((0..5000).all(|i| f.may_contain(format!("key{i}").as_bytes())));
    }

    #[test]
    fn bloom_false_positive_rate_is_below_two_percent_at_ten_bits_per_key() {
        let f = filter_for(10_000, 10);
        let fp = (0..20_000)
            .filter(|i| f.may_contain(format!("absent{i}").as_bytes()))
            .count();
        let rate = fp as f64 / 20_000.0;
        assert!(rate < 0.02, "false positive rate {rate}");
    }

    #[test]
    fn bloom_hash_matches_leveldb_reference_values() {
        // Values from LevelDB's hash_test.cc (seed 0xbc9f1d34).
        assert_eq!(bloom_hash(&[]), 0xbc9f_1d34);
        assert_eq!(bloom_hash(&[0x62]), 0xef13_45c4);
        assert_eq!(bloom_hash(&[0xc3, 0x97]), 0x5b66_3814);
        assert_eq!(bloom_hash(&[0xe2, 0x99, 0xa5]), 0x323c_078f);
        assert_eq!(bloom_hash(&[0xe1, 0x80, 0xb9, 0x32]), 0xed21_633a);
    }

    #[test]
    fn bloom_decode_rejects_bad_probe_counts() {
        assert!(BloomFilter::decode(vec![], Path::new("f"), 0).is_err());
        assert!(BloomFilter::decode(vec![0xff, 0], Path::new("f"), 0).is_err());
        assert!(BloomFilter::decode(vec![0xff, 31], Path::new("f"), 0).is_err());
        assert!(BloomFilter::decode(vec![0xff, BLOCKED], Path::new("f"), 0).is_err());
        let not_whole_blocks = vec![0xff, BLOCKED | 6];
        assert!(BloomFilter::decode(not_whole_blocks, Path::new("f"), 0).is_err());
    }

    #[test]
    fn a_blocked_filter_block_decodes_and_answers_like_the_keys_it_was_built_from() {
        let keys: Vec<Vec<u8>> = (0..1000).map(|i| format!("key{i}").into_bytes()).collect();
        let hashes: Vec<u64> = keys.iter().map(|k| hash64(k)).collect();
        let f = BloomFilter::decode(build_blocked_filter(&hashes, 10), Path::new("f"), 0).unwrap();
        assert!(keys.iter().all(|k| f.may_contain(k)));
        assert_eq!(f.probes(), 6);
        let fp = (0..10_000)
            .filter(|i| f.may_contain(format!("absent{i}").as_bytes()))
            .count();
        assert!(fp < 300, "{fp} of 10000");
    }
}
