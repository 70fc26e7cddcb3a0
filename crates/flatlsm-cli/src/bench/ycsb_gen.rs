//! YCSB's request generators: Zipfian (Gray's algorithm), scrambled Zipfian, 'latest', and the
//! FNV-1a 64 hash that names keys (`user` + fnvhash64(keynum)).
//!
//! Constants and formulas follow YCSB's `ZipfianGenerator`, `ScrambledZipfianGenerator` and
//! `SkewedLatestGenerator` so that request distributions match the reference implementation.

use rand::rngs::StdRng;
use rand::Rng;

/// YCSB's Zipfian constant.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;
/// Item space of the scrambled Zipfian generator (YCSB: 10^10).
const SCRAMBLED_ITEMS: u64 = 10_000_000_000;
/// zeta(10^10, 0.99), precomputed by YCSB.
const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

/// YCSB's `Utils.fnvhash64`: FNV-1a over the 8 little-endian bytes of `v`, then `abs`.
pub fn fnvhash64(mut v: u64) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for _ in 0..8 {
        h ^= v & 0xff;
        h = h.wrapping_mul(1_099_511_628_211);
        v >>= 8;
    }
    (h as i64).wrapping_abs() as u64
}

/// YCSB's key for record number `n`: `user` followed by the decimal FNV hash.
pub fn ycsb_key(n: u64) -> Vec<u8> {
    format!("user{}", fnvhash64(n)).into_bytes()
}

/// zeta(n, theta) = sum over i in 1..=n of 1 / i^theta, continued from `from` with value `start`.
fn zeta(from: u64, n: u64, theta: f64, start: f64) -> f64 {
    (from + 1..=n).fold(start, |acc, i| acc + 1.0 / (i as f64).powf(theta))
}

/// Zipfian over `[0, items)` with Gray's algorithm; rank 0 is the most popular item.
#[derive(Debug, Clone)]
pub struct Zipfian {
    items: u64,
    theta: f64,
    alpha: f64,
    zeta2: f64,
    zetan: f64,
    eta: f64,
}

impl Zipfian {
    /// Zipfian over `items` with YCSB's constant (computes zeta in O(items)).
    pub fn new(items: u64) -> Zipfian {
        let z = zeta(0, items, ZIPFIAN_CONSTANT, 0.0);
        Zipfian::with_zetan(items, z)
    }

    fn with_zetan(items: u64, zetan: f64) -> Zipfian {
        let theta = ZIPFIAN_CONSTANT;
        let zeta2 = zeta(0, 2, theta, 0.0);
        let mut z = Zipfian {
            items,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zeta2,
            zetan,
            eta: 0.0,
        };
        z.eta = z.compute_eta();
        z
    }

    fn compute_eta(&self) -> f64 {
        (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2 / self.zetan)
    }

    /// Grows the item count, extending zeta incrementally (YCSB does the same).
    pub fn grow_to(&mut self, items: u64) {
        if items > self.items {
            self.zetan = zeta(self.items, items, self.theta, self.zetan);
            self.items = items;
            self.eta = self.compute_eta();
        }
    }

    /// The next rank in `[0, items)`.
    pub fn next(&self, rng: &mut StdRng) -> u64 {
        let u: f64 = rng.gen();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1;
        }
        let r = self.items as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha);
        (r as u64).min(self.items - 1)
    }
}

/// YCSB's scrambled Zipfian: popular items are spread over the key space by hashing.
#[derive(Debug, Clone)]
pub struct ScrambledZipfian {
    inner: Zipfian,
}

impl Default for ScrambledZipfian {
    fn default() -> Self {
        ScrambledZipfian {
            inner: Zipfian::with_zetan(SCRAMBLED_ITEMS, SCRAMBLED_ZETAN),
        }
    }
}

impl ScrambledZipfian {
    /// An item in `[0, items)`: fnvhash64(zipf over 10^10) mod items.
    pub fn next(&self, rng: &mut StdRng, items: u64) -> u64 {
        fnvhash64(self.inner.next(rng)) % items.max(1)
    }
}

/// YCSB's 'latest': the most recently inserted records are the most popular.
#[derive(Debug, Clone)]
pub struct Latest {
    zipf: Zipfian,
}

impl Latest {
    /// 'latest' over `items` records.
    pub fn new(items: u64) -> Latest {
        Latest {
            zipf: Zipfian::new(items.max(1)),
        }
    }

    /// A record in `[0, items)`: items - 1 - zipf(items); grows with inserts.
    pub fn next(&mut self, rng: &mut StdRng, items: u64) -> u64 {
        let items = items.max(1);
        self.zipf.grow_to(items);
        let off = self.zipf.next(rng).min(items - 1);
        items - 1 - off
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn fnv_key_format_matches_ycsb() {
        // FNV-1a of eight zero bytes (hand-checked against YCSB's Utils.fnvhash64).
        let mut h: u64 = 0xCBF2_9CE4_8422_2325;
        for _ in 0..8 {
            h = h.wrapping_mul(1_099_511_628_211);
        }
        assert_eq!(fnvhash64(0), (h as i64).wrapping_abs() as u64);
        let k = String::from_utf8(ycsb_key(0)).unwrap();
        assert_eq!(k, format!("user{}", fnvhash64(0)));
        assert!(k[4..].bytes().all(|b| b.is_ascii_digit()));
        assert_ne!(ycsb_key(1), ycsb_key(2));
        assert_eq!(fnvhash64(1) >> 63, 0, "abs keeps the sign bit clear");
    }

    #[test]
    fn zipfian_frequencies_follow_the_formula() {
        let n = 1000u64;
        let z = Zipfian::new(n);
        let zetan = zeta(0, n, ZIPFIAN_CONSTANT, 0.0);
        let mut rng = StdRng::seed_from_u64(42);
        let draws = 400_000u64;
        let mut counts = vec![0u64; n as usize];
        for _ in 0..draws {
            counts[z.next(&mut rng) as usize] += 1;
        }
        let expected = |rank: u64| 1.0 / ((rank + 1) as f64).powf(ZIPFIAN_CONSTANT) / zetan;
        for rank in [0u64, 1] {
            let got = counts[rank as usize] as f64 / draws as f64;
            let want = expected(rank);
            assert!(
                (got - want).abs() / want < 0.03,
                "rank {rank}: {got} vs {want}"
            );
        }
        // Gray's algorithm approximates the tail; the top decile's mass must still match.
        let top: f64 = (0..100).map(expected).sum();
        let got_top = counts[..100].iter().sum::<u64>() as f64 / draws as f64;
        assert!(
            (got_top - top).abs() / top < 0.05,
            "top 100: {got_top} vs {top}"
        );
    }

    #[test]
    fn scrambled_zipfian_stays_in_range_and_is_skewed() {
        let s = ScrambledZipfian::default();
        let mut rng = StdRng::seed_from_u64(3);
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            counts[s.next(&mut rng, 1000) as usize] += 1;
        }
        let max = *counts.iter().max().unwrap();
        // Uniform would give ~100 per item; Zipfian 0.99 puts thousands on the hottest item.
        assert!(max > 1000, "max {max}");
    }

    #[test]
    fn latest_prefers_the_newest_records_and_follows_inserts() {
        let mut l = Latest::new(1000);
        let mut rng = StdRng::seed_from_u64(5);
        let newest = (0..10_000)
            .filter(|_| l.next(&mut rng, 1000) == 999)
            .count();
        assert!(newest > 1000, "newest drawn {newest} times");
        let v = l.next(&mut rng, 2000);
        assert!(v < 2000);
        let newest2 = (0..10_000)
            .filter(|_| l.next(&mut rng, 2000) == 1999)
            .count();
        assert!(newest2 > 1000);
    }
}
