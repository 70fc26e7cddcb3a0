//! Read charges: how many level-0 runs point reads searched in vain since level 0 was last
//! merged, the read side of LevelDB's seek compaction for the flattened tree.
//!
//! Every run a get searches without finding its key (a filter's "no", a false positive, or a
//! key that lies deeper) is a probe a merge of the runs into the Ordered-L1 would have saved.
//! The policy (`compaction/policy/flat.rs`) merges the runs early, below `l1_merge_trigger`,
//! once these charges outweigh the merge's rewrite: the reads already paid for it.
//!
//! Invariants: the count only grows between resets; a reset follows the install of a
//! compaction out of level 0 (charges made meanwhile are dropped, which only delays the next
//! early merge). Nothing global is touched on most reads: a read charges the shared counter
//! with probability 1/[`SAMPLE_ONE_IN`], scaled up by as much, so two reader threads do not
//! bounce one cache line on every get.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// One read in this many charges the shared counter (for that many reads).
pub(crate) const SAMPLE_ONE_IN: u64 = 16;

/// Wasted level-0 probes since level 0 was last merged (estimated by sampling).
#[derive(Debug, Default)]
pub(crate) struct ReadCharges {
    wasted: AtomicU64,
}

impl ReadCharges {
    /// Records that a read searched `wasted` runs in vain.
    pub fn charge(&self, wasted: u64) {
        if wasted > 0 && sampled() {
            self.wasted
                .fetch_add(wasted * SAMPLE_ONE_IN, Ordering::Relaxed);
        }
    }

    /// Wasted probes charged since the last reset.
    pub fn total(&self) -> u64 {
        self.wasted.load(Ordering::Relaxed)
    }

    /// Starts over: level 0 was just merged.
    pub fn reset(&self) {
        self.wasted.store(0, Ordering::Relaxed);
    }
}

/// True for about one call in [`SAMPLE_ONE_IN`] on this thread (xorshift32 per thread).
pub(crate) fn sampled() -> bool {
    thread_local! {
        static STATE: Cell<u32> = const { Cell::new(0x9e37_79b9) };
    }
    STATE.with(|s| {
        let mut x = s.get();
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        s.set(x);
        u64::from(x).is_multiple_of(SAMPLE_ONE_IN)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampled_charges_add_up_to_about_what_was_charged() {
        let c = ReadCharges::default();
        (0..160_000).for_each(|_| c.charge(3));
        let total = c.total() as f64;
        assert!((total / 480_000.0 - 1.0).abs() < 0.05, "charged {total}");
        c.charge(0);
        c.reset();
        assert_eq!(c.total(), 0);
    }
}
