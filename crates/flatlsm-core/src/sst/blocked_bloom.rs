//! Blocked (cache-line) bloom filters: every key sets and tests its probes inside one 64-byte
//! block, so a test costs one cache miss where the classic filter's `k` probes over the whole
//! array cost up to `k` (issue 26: a third of an SST filter test's time was those misses).
//!
//! Used for the filter blocks of new SSTables (encoding in `bloom.rs`: the probe-count byte
//! has its high bit set) and, over atomics, for the mutable PMTable's filter
//! (`flatlsm::pmtable::live_filter`). Keys are hashed with [`hash64`]; the high 32 bits of the
//! hash pick the block, the low 32 bits give the probes by double hashing inside the block.

/// Bytes per block (one cache line).
pub const BLOCK_BYTES: usize = 64;
/// Bits per block.
const BLOCK_BITS: u32 = (BLOCK_BYTES * 8) as u32;

/// A 64-bit hash of `key`: eight bytes at a time, each word multiplied in, then splitmix64's
/// finalizer. (LevelDB's 32-bit hash collides too often on keys that differ in a few digits
/// to pick a block and the probes from it.)
pub fn hash64(key: &[u8]) -> u64 {
    let mut h = 0x9e37_79b9_7f4a_7c15 ^ key.len() as u64;
    let mut words = key.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
        h = (h ^ w).wrapping_mul(0xff51_afd7_ed55_8ccd).rotate_left(31);
    }
    let mut last = [0u8; 8];
    last[..words.remainder().len()].copy_from_slice(words.remainder());
    mix(h ^ u64::from_le_bytes(last))
}

/// splitmix64's finalizer.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The block (of `blocks`, at least one) of the key hashed to `h`, and its `k` bit positions
/// within the block.
pub fn locate(h: u64, blocks: usize, k: u32) -> (usize, impl Iterator<Item = usize>) {
    let block = (((h >> 32) * blocks as u64) >> 32) as usize;
    let lo = h as u32;
    let delta = lo.rotate_right(17) | 1;
    let probes =
        (0..k).map(move |i| (lo.wrapping_add(i.wrapping_mul(delta)) % BLOCK_BITS) as usize);
    (block, probes)
}

/// Probes per key for `bits_per_key` (as the classic filter: about ln 2 times the bits).
pub fn probes_for(bits_per_key: usize) -> u32 {
    ((bits_per_key as f64 * 0.69) as u32).clamp(1, 30)
}

/// The bit array of a filter over the keys hashed to `hashes` at `bits_per_key` (whole blocks,
/// at least one), with `k` probes per key.
pub fn build(hashes: &[u64], bits_per_key: usize, k: u32) -> Vec<u8> {
    let blocks = (hashes.len() * bits_per_key)
        .div_ceil(BLOCK_BYTES * 8)
        .max(1);
    let mut bits = vec![0u8; blocks * BLOCK_BYTES];
    for &h in hashes {
        let (block, probes) = locate(h, blocks, k);
        for p in probes {
            bits[block * BLOCK_BYTES + p / 8] |= 1 << (p % 8);
        }
    }
    bits
}

/// False only if no key hashed to `h` was added to `bits` (whole blocks, from [`build`]).
pub fn may_contain(bits: &[u8], k: u32, h: u64) -> bool {
    let blocks = bits.len() / BLOCK_BYTES;
    if blocks == 0 {
        return true;
    }
    let (block, mut probes) = locate(h, blocks, k);
    let block = &bits[block * BLOCK_BYTES..(block + 1) * BLOCK_BYTES];
    probes.all(|p| block[p / 8] & (1 << (p % 8)) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u32) -> Vec<u8> {
        format!("user{i:012}").into_bytes()
    }

    #[test]
    fn a_blocked_filter_has_no_false_negatives_and_few_positives_at_ten_bits_per_key() {
        let hashes: Vec<u64> = (0..50_000).map(|i| hash64(&key(i))).collect();
        let k = probes_for(10);
        let bits = build(&hashes, 10, k);
        assert!(hashes.iter().all(|&h| may_contain(&bits, k, h)));
        let fp = (50_000..150_000)
            .filter(|&i| may_contain(&bits, k, hash64(&key(i))))
            .count();
        assert!(fp < 2_000, "{fp} of 100000");
    }

    #[test]
    fn an_empty_filter_is_one_block_that_refuses_everything() {
        let bits = build(&[], 10, 6);
        assert_eq!(bits.len(), BLOCK_BYTES);
        assert!(!may_contain(&bits, 6, hash64(b"k")));
    }
}
