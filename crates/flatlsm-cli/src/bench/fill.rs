//! Write benchmarks as db_bench defines them: fillseq (keys 0..num in order), fillrandom and
//! overwrite (keys drawn uniformly with replacement from [0, num)).

use super::engine::Engine;
use super::keys::{db_bench_key, uniform_key};
use super::runner::{run_workers, Measured, OpKind, Plan};
use std::time::Instant;

/// Order in which a fill benchmark writes keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyOrder {
    /// 0, 1, 2, ... (per thread, as db_bench does).
    Sequential,
    /// Uniform with replacement.
    Random,
}

/// Runs a fill benchmark: each thread writes `plan.ops_per_thread` keys.
pub fn fill(
    name: &str,
    engine: &dyn Engine,
    plan: Plan,
    order: KeyOrder,
    num: u64,
    key_size: usize,
) -> Result<Measured, String> {
    let entry_bytes = (key_size + plan.value_size) as u64;
    run_workers(name, plan, |ctx| {
        while ctx.keep_going() {
            let n = match order {
                KeyOrder::Sequential => ctx.ops,
                KeyOrder::Random => uniform_key(&mut ctx.rng, num),
            };
            db_bench_key(n, key_size, &mut ctx.key);
            let start = Instant::now();
            engine.put(&ctx.key, ctx.values.next_value())?;
            ctx.record(OpKind::Write, start);
            ctx.bytes += entry_bytes;
        }
        Ok(())
    })
}
