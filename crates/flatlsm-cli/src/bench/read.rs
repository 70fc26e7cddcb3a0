//! Read benchmarks as db_bench defines them: readrandom (uniform keys, "(F of N found)"),
//! multireadrandom (the same, `--batch_size` keys per `multi_get`),
//! readseq / readreverse (one ordered pass of up to `reads` entries per thread, repeated only
//! under `--duration`; one operation per entry), seekrandom (seek to a uniform key, then `seek_nexts` nexts; one operation per seek).

use super::engine::{Direction, Engine};
use super::keys::{db_bench_key, uniform_key};
use super::runner::{run_workers, Measured, OpKind, Plan, ThreadCtx};
use std::time::Instant;

/// readrandom: point reads of uniform keys. Returns the measurements and the found message.
pub fn read_random(
    engine: &dyn Engine,
    plan: Plan,
    num: u64,
    key_size: usize,
) -> Result<(Measured, String), String> {
    let m = run_workers("readrandom", plan, |ctx| {
        while ctx.keep_going() {
            db_bench_key(uniform_key(&mut ctx.rng, num), key_size, &mut ctx.key);
            let start = Instant::now();
            let v = engine.get(&ctx.key)?;
            ctx.record(OpKind::Read, start);
            count_found(ctx, key_size, v);
        }
        Ok(())
    })?;
    Ok(with_found(m))
}

/// Counts a point read's answer: found, and its key and value bytes.
fn count_found(ctx: &mut ThreadCtx<'_>, key_size: usize, value: Option<Vec<u8>>) {
    if let Some(v) = value {
        ctx.found += 1;
        ctx.bytes += (key_size + v.len()) as u64;
    }
}

/// The measurements and db_bench's "(F of N found)".
fn with_found(m: Measured) -> (Measured, String) {
    let extra = format!(" ({} of {} found)", m.found, m.ops);
    (m, extra)
}

/// multireadrandom: point reads of uniform keys, `batch` keys per `multi_get` call (one
/// operation per key, each its batch's time over `batch`).
pub fn multi_read_random(
    engine: &dyn Engine,
    plan: Plan,
    num: u64,
    key_size: usize,
    batch: usize,
) -> Result<(Measured, String), String> {
    let m = run_workers("multireadrandom", plan, |ctx| {
        let mut keys = vec![Vec::new(); batch];
        while ctx.keep_going() {
            for key in keys.iter_mut() {
                db_bench_key(uniform_key(&mut ctx.rng, num), key_size, key);
            }
            let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
            let start = Instant::now();
            let values = engine.multi_get(&refs)?;
            ctx.record_batch(OpKind::Read, start, batch as u64);
            values
                .into_iter()
                .for_each(|v| count_found(ctx, key_size, v));
        }
        Ok(())
    })?;
    Ok(with_found(m))
}

/// readseq / readreverse: ordered passes over the database.
pub fn read_ordered(
    name: &str,
    engine: &dyn Engine,
    plan: Plan,
    dir: Direction,
) -> Result<Measured, String> {
    run_workers(name, plan, |ctx| {
        while ctx.keep_going() {
            let mut last = Instant::now();
            let limit = plan.ops_per_thread.saturating_sub(ctx.ops).max(1);
            let limit = if plan.duration.is_some() {
                u64::MAX
            } else {
                limit
            };
            let visited = engine.scan(None, dir, limit, &mut |bytes| {
                ctx.record(OpKind::Read, last);
                ctx.bytes += bytes as u64;
                last = Instant::now();
                // Under --duration a pass stops at the deadline (checked every 1024 entries).
                ctx.ops % 1024 != 0 || ctx.keep_going()
            })?;
            // db_bench reads one pass (up to `reads` entries); only --duration repeats passes.
            if visited == 0 || plan.duration.is_none() {
                break;
            }
        }
        Ok(())
    })
}

/// seekrandom: seeks to uniform keys and reads `seek_nexts` entries after each.
pub fn seek_random(
    engine: &dyn Engine,
    plan: Plan,
    num: u64,
    key_size: usize,
    seek_nexts: usize,
) -> Result<(Measured, String), String> {
    let m = run_workers("seekrandom", plan, |ctx| {
        while ctx.keep_going() {
            db_bench_key(uniform_key(&mut ctx.rng, num), key_size, &mut ctx.key);
            let start = Instant::now();
            let mut bytes = 0u64;
            let n = engine.scan(
                Some(&ctx.key),
                Direction::Forward,
                1 + seek_nexts as u64,
                &mut |b| {
                    bytes += b as u64;
                    true
                },
            )?;
            ctx.record(OpKind::Seek, start);
            ctx.bytes += bytes;
            ctx.found += u64::from(n > 0);
        }
        Ok(())
    })?;
    let extra = format!(" ({} of {} found)", m.found, m.ops);
    Ok((m, extra))
}
