//! YCSB core workloads A–F on top of the generators in [`super::ycsb_gen`].
//!
//! Load phase: records 0..num are inserted (keys `user` + fnvhash64(n)), split across threads.
//! Run phase: each thread performs `reads` operations with the workload's mix; record choice is
//! scrambled Zipfian (0.99), or 'latest' for D; inserts take the next record number, shared by
//! all threads and all workloads of the run so D and E keep growing the same table. Updates are
//! plain puts, or (SLM-DB's evaluation) writes of existing keys only.

use super::engine::{Direction, Engine};
use super::runner::{run_workers, Measured, OpKind, Plan, ThreadCtx};
use super::ycsb_gen::{ycsb_key, Latest, ScrambledZipfian};
use rand::Rng;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// One YCSB core workload's operation mix (fractions of read, update, insert, scan, rmw).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mix {
    read: f64,
    update: f64,
    insert: f64,
    scan: f64,
    /// Reads follow 'latest' instead of scrambled Zipfian (workload D).
    latest: bool,
    /// Updates write only keys that exist (SLM-DB's "insert if exists").
    update_if_present: bool,
}

/// The mix of `ycsba`..`ycsbf`, or `None` for another name.
pub fn mix(name: &str) -> Option<Mix> {
    let m = |read, update, insert, scan, latest| Mix {
        read,
        update,
        insert,
        scan,
        latest,
        update_if_present: false,
    };
    Some(match name {
        "ycsba" => m(0.5, 0.5, 0.0, 0.0, false),
        "ycsbb" => m(0.95, 0.05, 0.0, 0.0, false),
        "ycsbc" => m(1.0, 0.0, 0.0, 0.0, false),
        "ycsbd" => m(0.95, 0.0, 0.05, 0.0, true),
        "ycsbe" => m(0.0, 0.0, 0.05, 0.95, false),
        // F: the remaining 50% are read-modify-writes.
        "ycsbf" => m(0.5, 0.0, 0.0, 0.0, false),
        _ => return None,
    })
}

/// Records in the table (grows with inserts).
///
/// Like YCSB's AcknowledgedCounterGenerator, reads only see acknowledged inserts: an insert
/// takes the next number from `next`, writes, then acknowledges in number order, so a reader
/// never picks a record whose write has not completed (it would count as "not found").
pub struct Table {
    next: AtomicU64,
    acknowledged: AtomicU64,
}

impl Table {
    /// A table that already holds `records` records.
    pub fn with_records(records: u64) -> Table {
        Table {
            next: AtomicU64::new(records),
            acknowledged: AtomicU64::new(records),
        }
    }

    /// Records readers may choose from (inserts acknowledged so far).
    pub fn records(&self) -> u64 {
        self.acknowledged.load(Ordering::Acquire)
    }

    /// Reserves the number of the next record to insert.
    fn reserve(&self) -> u64 {
        self.next.fetch_add(1, Ordering::AcqRel)
    }

    /// Acknowledges record `n` once every earlier reserved record is acknowledged. Called even
    /// when the write failed, so other inserters never wait forever.
    fn acknowledge(&self, n: u64) {
        while self
            .acknowledged
            .compare_exchange_weak(n, n + 1, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            std::thread::yield_now();
        }
    }
}

/// Load phase: inserts records 0..num; thread t takes every threads-th record.
pub fn load(engine: &dyn Engine, plan: Plan, num: u64, table: &Table) -> Result<Measured, String> {
    let per_thread = num.div_ceil(plan.threads as u64);
    let plan = Plan {
        ops_per_thread: per_thread,
        duration: None,
        rate_limit: None, // the load runs flat out; the rate applies to the workload
        ..plan
    };
    let m = run_workers("ycsb_load", plan, |ctx| loop {
        let n = ctx.ops * plan.threads as u64 + ctx.thread as u64;
        if n >= num || !ctx.keep_going() {
            return Ok(());
        }
        let key = ycsb_key(n);
        let start = Instant::now();
        engine.put(&key, ctx.values.next_value())?;
        ctx.record(OpKind::Write, start);
        ctx.bytes += (key.len() + plan.value_size) as u64;
    })?;
    table.next.fetch_max(num, Ordering::AcqRel);
    table.acknowledged.fetch_max(num, Ordering::AcqRel);
    Ok(m)
}

/// Counts of each operation, for the result line's message.
#[derive(Default)]
struct OpCounts {
    reads: AtomicU64,
    updates: AtomicU64,
    inserts: AtomicU64,
    scans: AtomicU64,
    rmws: AtomicU64,
}

/// Run phase of workload `name`; updates write only existing keys if `update_if_present`.
pub fn run(
    name: &str,
    engine: &dyn Engine,
    plan: Plan,
    table: &Table,
    update_if_present: bool,
) -> Result<(Measured, String), String> {
    let mix = mix(name).ok_or_else(|| format!("unknown YCSB workload {name:?}"))?;
    let mix = Mix {
        update_if_present,
        ..mix
    };
    let counts = OpCounts::default();
    let zipf = ScrambledZipfian::default();
    let m = run_workers(name, plan, |ctx| {
        let mut latest = mix.latest.then(|| Latest::new(table.records()));
        while ctx.keep_going() {
            one_op(engine, ctx, mix, &zipf, latest.as_mut(), table, &counts)?;
        }
        Ok(())
    })?;
    let c = |a: &AtomicU64| a.load(Ordering::Relaxed);
    let extra = format!(
        " ( reads:{} updates:{} inserts:{} scans:{} rmws:{} found:{})",
        c(&counts.reads),
        c(&counts.updates),
        c(&counts.inserts),
        c(&counts.scans),
        c(&counts.rmws),
        m.found
    );
    Ok((m, extra))
}

/// Chooses an existing record: 'latest' for D, scrambled Zipfian otherwise.
fn choose(
    ctx: &mut ThreadCtx<'_>,
    zipf: &ScrambledZipfian,
    latest: Option<&mut Latest>,
    table: &Table,
) -> u64 {
    let records = table.records().max(1);
    match latest {
        Some(l) => l.next(&mut ctx.rng, records),
        None => zipf.next(&mut ctx.rng, records),
    }
}

fn one_op(
    engine: &dyn Engine,
    ctx: &mut ThreadCtx<'_>,
    mix: Mix,
    zipf: &ScrambledZipfian,
    latest: Option<&mut Latest>,
    table: &Table,
    counts: &OpCounts,
) -> Result<(), String> {
    let p: f64 = ctx.rng.gen();
    if p < mix.insert {
        let n = table.reserve();
        let key = ycsb_key(n);
        let start = Instant::now();
        let written = engine.put(&key, ctx.values.next_value());
        table.acknowledge(n);
        written?;
        ctx.record(OpKind::Write, start);
        counts.inserts.fetch_add(1, Ordering::Relaxed);
        return Ok(());
    }
    let key = ycsb_key(choose(ctx, zipf, latest, table));
    let start = Instant::now();
    if p < mix.insert + mix.scan {
        let len = ctx.rng.gen_range(1..=100u64);
        engine.scan(Some(&key), Direction::Forward, len, &mut |_| true)?;
        ctx.record(OpKind::Seek, start);
        counts.scans.fetch_add(1, Ordering::Relaxed);
    } else if p < mix.insert + mix.scan + mix.read {
        let found = engine.get(&key)?.is_some();
        ctx.record(OpKind::Read, start);
        ctx.found += u64::from(found);
        counts.reads.fetch_add(1, Ordering::Relaxed);
    } else if p < mix.insert + mix.scan + mix.read + mix.update {
        update(engine, &key, ctx.values.next_value(), mix.update_if_present)?;
        ctx.record(OpKind::Write, start);
        counts.updates.fetch_add(1, Ordering::Relaxed);
    } else {
        let found = engine.get(&key)?.is_some();
        engine.put(&key, ctx.values.next_value())?;
        ctx.record(OpKind::ReadModifyWrite, start);
        ctx.found += u64::from(found);
        counts.rmws.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

/// A workload's update: a put, or a write of an existing key only.
fn update(engine: &dyn Engine, key: &[u8], value: &[u8], if_present: bool) -> Result<(), String> {
    match if_present {
        true => engine.update_if_present(key, value).map(|_| ()),
        false => engine.put(key, value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_match_ycsb_core_workloads() {
        let a = mix("ycsba").unwrap();
        assert_eq!((a.read, a.update), (0.5, 0.5));
        let d = mix("ycsbd").unwrap();
        assert!(d.latest && d.insert == 0.05 && d.read == 0.95);
        let e = mix("ycsbe").unwrap();
        assert_eq!((e.scan, e.insert), (0.95, 0.05));
        let f = mix("ycsbf").unwrap();
        assert_eq!(
            f.read + f.update + f.insert + f.scan,
            0.5,
            "the rest are read-modify-writes"
        );
        assert!(mix("ycsbg").is_none());
    }

    fn plan(threads: usize, ops: u64) -> Plan {
        Plan {
            ops_per_thread: ops,
            duration: None,
            threads,
            interval: std::time::Duration::from_secs(1),
            seed: 7,
            value_size: 16,
            rate_limit: None,
        }
    }

    #[test]
    fn ycsb_d_reads_only_acknowledged_inserts() {
        // Slow puts leave inserts in flight while the other threads read the latest records;
        // before acknowledgement order existed, those reads missed.
        let engine =
            crate::bench::engine::MemEngine::with_put_delay(std::time::Duration::from_micros(200));
        let table = Table::with_records(0);
        load(&engine, plan(2, 100), 200, &table).unwrap();
        let (m, extra) = run("ycsbd", &engine, plan(3, 400), &table, false).unwrap();
        let reads = m.hists.get(&OpKind::Read).map_or(0, |h| h.count());
        assert_eq!(m.found, reads, "{extra}");
        assert!(table.records() > 200, "inserts grew the table");
    }

    /// SLM-DB's workload A: an update of a key that does not exist writes nothing.
    #[test]
    fn conditional_updates_write_only_existing_keys() {
        let engine = crate::bench::engine::MemEngine::default();
        let table = Table::with_records(0);
        load(&engine, plan(1, 100), 100, &table).unwrap();
        // The table claims 200 records: half of the keys chosen were never loaded.
        let claimed = Table::with_records(200);
        run("ycsba", &engine, plan(1, 2000), &claimed, true).unwrap();
        let keys = engine.scan(None, Direction::Forward, u64::MAX, &mut |_| true);
        assert_eq!(keys.unwrap(), 100, "no update inserted a key");
        run("ycsba", &engine, plan(1, 2000), &claimed, false).unwrap();
        let keys = engine.scan(None, Direction::Forward, u64::MAX, &mut |_| true);
        assert!(keys.unwrap() > 100, "plain updates insert missing keys");
    }

    #[test]
    fn every_workload_runs_its_mix_on_a_loaded_table() {
        let engine = crate::bench::engine::MemEngine::default();
        let table = Table::with_records(0);
        load(&engine, plan(2, 500), 1000, &table).unwrap();
        for name in ["ycsba", "ycsbb", "ycsbc", "ycsbd", "ycsbe", "ycsbf"] {
            let (m, extra) = run(name, &engine, plan(2, 500), &table, false).unwrap();
            assert_eq!(m.ops, 1000, "{name}");
            // Every read and read-modify-write hits a loaded or acknowledged record.
            let reads_and_rmws = m.hists.get(&OpKind::Read).map_or(0, |h| h.count())
                + m.hists
                    .get(&OpKind::ReadModifyWrite)
                    .map_or(0, |h| h.count());
            assert_eq!(m.found, reads_and_rmws, "{name}: {extra}");
        }
    }
}
