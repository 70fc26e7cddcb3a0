//! A lock-free latency histogram: log-linear buckets of relaxed atomics (HdrHistogram's layout
//! with 3 significant bits), cheap enough to record every foreground operation.
//!
//! Buckets: values 0..8 have a bucket each; above, every power of two `[2^e, 2^(e+1))` is cut
//! into 8 equal buckets, so a bucket's width is at most 1/8 of its lower bound and a reported
//! percentile is at most 12.5% above the value it stands for. 496 buckets cover all of `u64`
//! (about 4 KiB per stripe).
//!
//! Recording is three relaxed atomic updates (bucket, sum, max) and takes no lock. They go to
//! one of [`STRIPES`] copies of the counters, picked per thread, so threads recording at once
//! rarely write the same cache line (a get on 16 threads otherwise bounced the `sum` and `max`
//! words between cores on every call); a snapshot adds the stripes up. Invariant:
//! every recorded value is counted in exactly the bucket [`bucket_of`] names; a
//! [`Histogram::snapshot`] taken while others record is not a consistent cut (its count, sum
//! and max may each include a value the others do not yet), but every figure is exact once
//! recording stops. Nothing here is persistent.

use crate::counter::{stripe_index, STRIPES};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Bits of a value below its leading one that select its bucket within a power of two.
const SUB_BITS: u32 = 3;
/// Buckets per power of two.
const SUB: usize = 1 << SUB_BITS;
/// Number of buckets.
pub const BUCKETS: usize = (64 - SUB_BITS as usize + 1) * SUB;

/// The bucket holding `value`.
pub fn bucket_of(value: u64) -> usize {
    if value < SUB as u64 {
        return value as usize;
    }
    let e = 63 - value.leading_zeros();
    let sub = (value >> (e - SUB_BITS)) as usize & (SUB - 1);
    (e - SUB_BITS + 1) as usize * SUB + sub
}

/// The smallest and largest value of bucket `i` (< [`BUCKETS`]).
pub fn bucket_bounds(i: usize) -> (u64, u64) {
    if i < SUB {
        return (i as u64, i as u64);
    }
    let shift = (i / SUB - 1) as u32;
    let low = ((SUB + i % SUB) as u64) << shift;
    (low, low + ((1u64 << shift) - 1))
}

/// One copy of the counters, on cache lines of its own.
#[derive(Debug)]
#[repr(align(128))]
struct Stripe {
    buckets: Box<[AtomicU64]>,
    sum: AtomicU64,
    max: AtomicU64,
}

impl Default for Stripe {
    fn default() -> Self {
        Stripe {
            buckets: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            sum: AtomicU64::new(0),
            max: AtomicU64::new(0),
        }
    }
}

/// A concurrent histogram of `u64` values (latencies in nanoseconds, by convention).
#[derive(Debug)]
pub struct Histogram {
    stripes: Box<[Stripe]>,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            stripes: (0..STRIPES).map(|_| Stripe::default()).collect(),
        }
    }
}

impl Histogram {
    /// Records one value.
    pub fn record(&self, value: u64) {
        let stripe = &self.stripes[stripe_index()];
        stripe.buckets[bucket_of(value)].fetch_add(1, Ordering::Relaxed);
        stripe.sum.fetch_add(value, Ordering::Relaxed);
        stripe.max.fetch_max(value, Ordering::Relaxed);
    }

    /// Records the nanoseconds since `start`.
    pub fn record_since(&self, start: Instant) {
        let nanos = start.elapsed().as_nanos();
        self.record(u64::try_from(nanos).unwrap_or(u64::MAX));
    }

    /// Runs `op` and records how long it took, in nanoseconds.
    ///
    /// ```
    /// use flatlsm_core::histogram::Histogram;
    /// let h = Histogram::default();
    /// let sum = h.time(|| (1..=10).sum::<u32>());
    /// assert_eq!((sum, h.snapshot().count()), (55, 1));
    /// ```
    pub fn time<T>(&self, op: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = op();
        self.record_since(start);
        out
    }

    /// A copy of the counts as they are now.
    pub fn snapshot(&self) -> HistogramSnapshot {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let mut snap = HistogramSnapshot {
            buckets: vec![0; BUCKETS],
            sum: 0,
            max: 0,
        };
        for stripe in self.stripes.iter() {
            for (total, b) in snap.buckets.iter_mut().zip(stripe.buckets.iter()) {
                *total += load(b);
            }
            snap.sum = snap.sum.wrapping_add(load(&stripe.sum));
            snap.max = snap.max.max(load(&stripe.max));
        }
        snap
    }
}

/// The counts of a [`Histogram`] at one moment, and the figures computed from them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HistogramSnapshot {
    buckets: Vec<u64>,
    sum: u64,
    max: u64,
}

impl HistogramSnapshot {
    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// Sum of the values recorded (wrapping past `u64::MAX`).
    pub fn sum(&self) -> u64 {
        self.sum
    }

    /// Largest value recorded (0 if none).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Mean of the values recorded (0 if none).
    pub fn mean(&self) -> f64 {
        match self.count() {
            0 => 0.0,
            n => self.sum as f64 / n as f64,
        }
    }

    /// The value below or at which a fraction `q` (0..=1) of the values lie: the largest
    /// value of the bucket holding the value of that rank, but never above [`Self::max`];
    /// 0 if nothing was recorded.
    pub fn percentile(&self, q: f64) -> u64 {
        let count = self.count();
        let rank = ((q.clamp(0.0, 1.0) * count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return bucket_bounds(i).1.min(self.max);
            }
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_every_value_without_gaps_or_overlap() {
        let mut next = 0u64;
        for i in 0..BUCKETS {
            let (low, high) = bucket_bounds(i);
            assert_eq!(low, next, "bucket {i} starts where {} ended", i.max(1) - 1);
            assert!(high >= low);
            assert_eq!((bucket_of(low), bucket_of(high)), (i, i));
            next = high.wrapping_add(1);
        }
        assert_eq!(next, 0, "the last bucket ends at u64::MAX");
    }

    #[test]
    fn a_bucket_is_at_most_an_eighth_of_its_lower_bound_wide() {
        for i in SUB..BUCKETS {
            let (low, high) = bucket_bounds(i);
            assert!(high - low < low / 8 + 1, "bucket {i}: {low}..={high}");
        }
        assert_eq!(bucket_bounds(bucket_of(1000)), (960, 1023));
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn percentiles_of_a_uniform_run_are_within_a_bucket_of_exact() {
        let h = Histogram::default();
        for v in 1..=10_000u64 {
            h.record(v);
        }
        let s = h.snapshot();
        assert_eq!((s.count(), s.max(), s.sum()), (10_000, 10_000, 50_005_000));
        assert_eq!(s.mean(), 5000.5);
        for (q, exact) in [(0.5, 5000u64), (0.99, 9900), (0.999, 9990), (1.0, 10_000)] {
            let got = s.percentile(q);
            assert!(got >= exact && got <= exact + exact / 8, "p{q}: {got}");
        }
        assert_eq!(s.percentile(1.0), 10_000, "the top percentile is the max");
    }

    #[test]
    fn small_values_are_exact_and_an_empty_histogram_reports_zeros() {
        let h = Histogram::default();
        assert_eq!(h.snapshot().percentile(0.5), 0);
        assert_eq!(h.snapshot().mean(), 0.0);
        for v in [3, 3, 3, 7] {
            h.record(v);
        }
        let s = h.snapshot();
        assert_eq!(
            (s.percentile(0.5), s.percentile(0.75), s.percentile(0.76)),
            (3, 3, 7)
        );
    }

    #[test]
    fn records_from_many_threads_are_all_counted() {
        let h = std::sync::Arc::new(Histogram::default());
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let h = h.clone();
                std::thread::spawn(move || (0..1000).for_each(|v| h.record(v * t)))
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let s = h.snapshot();
        assert_eq!((s.count(), s.max()), (4000, 999 * 3));
    }
}
