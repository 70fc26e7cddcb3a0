//! Mixed read/write benchmarks as db_bench defines them: readrandomwriterandom (each operation
//! is a read with probability readwritepercent %, else a write) and updaterandom (read a
//! uniform key, then write it).

use super::engine::Engine;
use super::keys::{db_bench_key, uniform_key};
use super::runner::{run_workers, Measured, OpKind, Plan};
use rand::Rng;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// readrandomwriterandom; the message reports reads, writes and found keys like db_bench.
pub fn read_random_write_random(
    engine: &dyn Engine,
    plan: Plan,
    num: u64,
    key_size: usize,
    read_percent: u32,
) -> Result<(Measured, String), String> {
    let writes = AtomicU64::new(0);
    let m = run_workers("readrandomwriterandom", plan, |ctx| {
        while ctx.keep_going() {
            db_bench_key(uniform_key(&mut ctx.rng, num), key_size, &mut ctx.key);
            let start = Instant::now();
            if ctx.rng.gen_range(0..100) < read_percent {
                let found = engine.get(&ctx.key)?.is_some();
                ctx.record(OpKind::Read, start);
                ctx.found += u64::from(found);
            } else {
                engine.put(&ctx.key, ctx.values.next_value())?;
                ctx.record(OpKind::Write, start);
                ctx.bytes += (key_size + plan.value_size) as u64;
                writes.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(())
    })?;
    let w = writes.load(Ordering::Relaxed);
    let extra = format!(
        " ( reads:{} writes:{} total:{} found:{})",
        m.ops - w,
        w,
        m.ops,
        m.found
    );
    Ok((m, extra))
}

/// updaterandom: read-modify-write of uniform keys.
pub fn update_random(
    engine: &dyn Engine,
    plan: Plan,
    num: u64,
    key_size: usize,
) -> Result<(Measured, String), String> {
    let m = run_workers("updaterandom", plan, |ctx| {
        while ctx.keep_going() {
            db_bench_key(uniform_key(&mut ctx.rng, num), key_size, &mut ctx.key);
            let start = Instant::now();
            let found = engine.get(&ctx.key)?.is_some();
            engine.put(&ctx.key, ctx.values.next_value())?;
            ctx.record(OpKind::ReadModifyWrite, start);
            ctx.found += u64::from(found);
            ctx.bytes += (key_size + plan.value_size) as u64;
        }
        Ok(())
    })?;
    let extra = format!(" ( updates:{} found:{})", m.ops, m.found);
    Ok((m, extra))
}
