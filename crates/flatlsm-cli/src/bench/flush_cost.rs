//! `flush`: times `Db::flush` of everything the PMTables hold now, and the CPU the whole process
//! spent on it. Run it after a fill that fits the PMTables (no background flush ran), e.g.
//! `--benchmarks fillrandom,flush --num 60000 --value_size 4096 --pmtable_size 268435456`.
//!
//! A rough micro-benchmark of the flush path (PMTable iteration, value-log and SST writes): the
//! CPU figure is the process's user + system time ([`cpu::process_cpu_seconds`]: every thread,
//! finished ones included), so it also counts what `Db::flush` does besides the merge (sealing
//! the mutable PMTable, retiring the flushed one).

use super::cpu;
use super::engine::Engine;
use super::histogram::Latencies;
use super::runner::{Measured, OpKind};
use std::time::Instant;

/// Flushes the PMTables once; the result line's extra text reports MB flushed, MB/s and CPU/MB.
pub fn flush_cost(engine: &dyn Engine) -> Result<(Measured, String), String> {
    let cpu_before = process_cpu_seconds()?;
    let start = Instant::now();
    let bytes = engine.flush_pmtables()?;
    let wall = start.elapsed();
    let cpu = process_cpu_seconds()? - cpu_before;
    let mut hist = Latencies::default();
    hist.record_ns(wall.as_nanos() as u64);
    let measured = Measured {
        ops: 1,
        bytes,
        wall_seconds: wall.as_secs_f64(),
        thread_seconds: wall.as_secs_f64(),
        hists: [(OpKind::Write, hist)].into_iter().collect(),
        cpu_seconds: Some(cpu),
        ..Measured::default()
    };
    Ok((measured, describe(bytes, wall.as_secs_f64(), cpu)))
}

fn describe(bytes: u64, wall: f64, cpu: f64) -> String {
    let mb = bytes as f64 / 1e6;
    format!(
        " ({mb:.1} MB of PMTables in {wall:.3} s: {:.1} MB/s; process CPU {cpu:.2} s = {:.2} ms per MB)",
        mb / wall.max(1e-9),
        cpu * 1e3 / mb.max(1e-9)
    )
}

/// User + system CPU seconds of this process so far (all threads, exited ones included).
fn process_cpu_seconds() -> Result<f64, String> {
    cpu::process_cpu_seconds().ok_or_else(|| "getrusage failed".to_string())
}
