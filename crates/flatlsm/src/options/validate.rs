//! The check of [`Options`]: every numeric option's range and how options relate.
//!
//! Invariant: no check computes anything that can overflow, so a validation never panics;
//! every error names the option, its value and the accepted range (and why, where the range
//! depends on another option).

use super::{
    Options, Profile, MAX_BLOOM_BITS_PER_KEY, MAX_DELAYED_WRITE_RATE, MAX_FLUSH_THREADS,
    MAX_L1_MERGE_TRIGGER, MAX_PMTABLE_SIZE, MAX_PM_PERSIST_INTERVAL_MS, MAX_PM_WRITE_LATENCY_NS,
    MAX_WRITE_BUFFER_NUMBER, MIN_BLOCK_SIZE, MIN_DELAYED_WRITE_RATE, MIN_PMTABLE_SIZE,
};
use crate::error::{Error, Result};
use crate::sst::MAX_BLOCK_SIZE;
use std::fmt;
use std::ops::RangeInclusive;

impl Options {
    /// Checks every numeric option's range and how options relate; the error names the
    /// offending option, its value and the accepted range. Never panics: no check computes
    /// anything that can overflow.
    pub fn validate(&self) -> Result<()> {
        self.validate_pm()?;
        if matches!(
            self.profile,
            Profile::Leveled | Profile::NoveLsm | Profile::MatrixKv
        ) {
            self.leveled.validate()?;
        }
        if self.profile == Profile::MatrixKv {
            self.matrixkv.validate_for(self.pmtable_size)?;
        }
        if self.profile == Profile::SlmDb {
            self.slmdb.validate()?;
        }
        self.validate_pmtable_counts()?;
        self.validate_ssd()
    }

    fn validate_pm(&self) -> Result<()> {
        let latency = self.pm_write_latency_ns;
        in_range("pm_write_latency_ns", latency, 0..=MAX_PM_WRITE_LATENCY_NS)?;
        let read = self.pm_read_latency_ns;
        in_range("pm_read_latency_ns", read, 0..=MAX_PM_WRITE_LATENCY_NS)?;
        let interval = self.pm_persist_interval_ms;
        in_range(
            "pm_persist_interval_ms",
            interval,
            1..=MAX_PM_PERSIST_INTERVAL_MS,
        )?;
        let size = self.pmtable_size;
        in_range("pmtable_size", size, MIN_PMTABLE_SIZE..=MAX_PMTABLE_SIZE)?;
        // Open below, so not an `in_range`. Infinity is accepted: it never collects.
        let ratio = self.pmtable_gc_ratio;
        if ratio.is_nan() || ratio <= 1.0 {
            return Err(Error::InvalidArgument(format!(
                "pmtable_gc_ratio = {ratio} is outside the accepted range (1, inf]"
            )));
        }
        Ok(())
    }

    fn validate_pmtable_counts(&self) -> Result<()> {
        let max = MAX_WRITE_BUFFER_NUMBER;
        in_range("flush_immutable_num", self.flush_immutable_num, 1..=max - 1)?;
        // `flush_immutable_num` < `max` now, so adding 1 cannot overflow.
        let least = self.flush_immutable_num + 1;
        let buffers = self.max_write_buffer_number;
        in_range("max_write_buffer_number", buffers, least..=max)
            .map_err(|e| explain(e, "it must exceed flush_immutable_num"))?;
        self.validate_slowdown()?;
        in_range(
            "l1_merge_trigger",
            self.l1_merge_trigger,
            1..=MAX_L1_MERGE_TRIGGER,
        )?;
        in_range("flush_threads", self.flush_threads, 1..=MAX_FLUSH_THREADS)?;
        in_range("background_nice", self.background_nice, 0..=19)
    }

    /// Call after the PMTable counts are checked (`flush_immutable_num` <
    /// `max_write_buffer_number`, so the range is not empty).
    fn validate_slowdown(&self) -> Result<()> {
        if let Some(n) = self.slowdown_immutable_num {
            let range = self.flush_immutable_num..=self.max_write_buffer_number;
            in_range("slowdown_immutable_num", n, range).map_err(|e| {
                explain(
                    e,
                    "from flush_immutable_num; max_write_buffer_number turns the slowdown off",
                )
            })?;
        }
        if let Some(rate) = self.delayed_write_rate {
            let range = MIN_DELAYED_WRITE_RATE..=MAX_DELAYED_WRITE_RATE;
            in_range("delayed_write_rate", rate, range)?;
        }
        Ok(())
    }

    /// `kv_separation_threshold` and `block_cache_size` accept every value: 0 separates every
    /// value / disables the cache, and values past any size simply never separate / never evict.
    fn validate_ssd(&self) -> Result<()> {
        in_range("l1_capacity", self.l1_capacity, 1..=u64::MAX)?;
        let share = self.l1_data_ratio;
        if share.is_nan() || share <= 0.0 || share > 1.0 {
            return Err(Error::InvalidArgument(format!(
                "l1_data_ratio = {share} is outside the accepted range (0, 1]"
            )));
        }
        if let Some(n) = self.max_open_files {
            in_range("max_open_files", n, 1..=usize::MAX)?;
        }
        let block = self.block_size;
        in_range("block_size", block, MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE)?;
        in_range(
            "target_file_size",
            self.target_file_size,
            block as u64..=u64::MAX,
        )
        .map_err(|e| explain(e, "it must be at least block_size"))?;
        let bits = self.bloom_bits_per_key;
        in_range("bloom_bits_per_key", bits, 0..=MAX_BLOOM_BITS_PER_KEY)?;
        self.validate_compression()?;
        in_range(
            "vlog_gc_garbage_ratio",
            self.vlog_gc_garbage_ratio,
            0.0..=1.0,
        )?;
        in_range(
            "vlog_gc_total_garbage_ratio",
            self.vlog_gc_total_garbage_ratio,
            0.0..=1.0,
        )?;
        in_range(
            "vlog_gc_quiet_garbage_ratio",
            self.vlog_gc_quiet_garbage_ratio,
            0.0..=1.0,
        )?;
        in_range(
            "vlog_gc_slowdown_garbage_ratio",
            self.vlog_gc_slowdown_garbage_ratio,
            0.0..=1.0,
        )
    }
}

/// `Err` naming option `name`, its value and the accepted `range` unless `value` lies in it
/// (NaN lies in no range).
fn in_range<T: PartialOrd + fmt::Display>(
    name: &str,
    value: T,
    range: RangeInclusive<T>,
) -> Result<()> {
    if range.contains(&value) {
        return Ok(());
    }
    let (min, max) = range.into_inner();
    Err(Error::InvalidArgument(format!(
        "{name} = {value} is outside the accepted range {min}..={max}"
    )))
}

/// Adds why the range is what it is to an [`in_range`] error.
fn explain(e: Error, why: &str) -> Error {
    match e {
        Error::InvalidArgument(m) => Error::InvalidArgument(format!("{m} ({why})")),
        other => other,
    }
}
