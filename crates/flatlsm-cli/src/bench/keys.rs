//! Keys and values as db_bench generates them.
//!
//! A key is the 64-bit key number in big-endian order followed by '0' padding up to
//! `key_size` (db_bench's `GenerateKeyFromInt`), so numeric order equals byte order.
//! Values are slices of a fixed pseudo-random buffer (db_bench's `RandomGenerator`), cheap to
//! produce and the same for every engine in a comparison.

use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};

/// Writes db_bench's key for `n` into `out` (cleared first).
pub fn db_bench_key(n: u64, key_size: usize, out: &mut Vec<u8>) {
    out.clear();
    let be = n.to_be_bytes();
    let take = key_size.min(8);
    out.extend_from_slice(&be[8 - take..]);
    out.resize(key_size, b'0');
}

/// Produces values of one size from a 1 MiB random buffer.
pub struct ValueSource {
    data: Vec<u8>,
    pos: usize,
    size: usize,
}

/// Size of the buffer values are cut from.
const VALUE_BUFFER: usize = 1 << 20;

impl ValueSource {
    /// Values of `size` bytes; `seed` makes the contents reproducible.
    pub fn new(size: usize, seed: u64) -> ValueSource {
        let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed_f00d);
        let mut data = vec![0u8; VALUE_BUFFER.max(size * 2)];
        rng.fill_bytes(&mut data);
        ValueSource { data, pos: 0, size }
    }

    /// The next value (a different slice each call).
    pub fn next_value(&mut self) -> &[u8] {
        if self.pos + self.size > self.data.len() {
            self.pos = 0;
        }
        let start = self.pos;
        self.pos += self.size.max(1) * 7 / 3 + 1;
        &self.data[start..start + self.size]
    }
}

/// Uniform key numbers in `[0, num)`, drawn with replacement (db_bench's fillrandom/readrandom).
pub fn uniform_key(rng: &mut StdRng, num: u64) -> u64 {
    rng.gen_range(0..num.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_big_endian_number_then_zero_padding() {
        let mut k = Vec::new();
        db_bench_key(0x0102, 16, &mut k);
        assert_eq!(&k[..8], &[0, 0, 0, 0, 0, 0, 1, 2]);
        assert_eq!(&k[8..], b"00000000");
        let mut a = Vec::new();
        db_bench_key(255, 16, &mut a);
        assert!(a < k, "numeric order must equal byte order");
    }

    #[test]
    fn uniform_keys_cover_the_range_and_stay_inside_it() {
        let mut rng = StdRng::seed_from_u64(1);
        let num = 50u64;
        let mut seen = vec![0u32; num as usize];
        for _ in 0..20_000 {
            let k = uniform_key(&mut rng, num);
            assert!(k < num);
            seen[k as usize] += 1;
        }
        // Expected 400 each; a uniform draw keeps every bucket well within 300..500.
        assert!(seen.iter().all(|&c| (300..500).contains(&c)), "{seen:?}");
    }

    #[test]
    fn values_have_the_requested_size_and_vary() {
        let mut v = ValueSource::new(100, 7);
        let a = v.next_value().to_vec();
        let b = v.next_value().to_vec();
        assert_eq!((a.len(), b.len()), (100, 100));
        assert_ne!(a, b);
    }
}
