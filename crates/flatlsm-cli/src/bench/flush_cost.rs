//! `flush`: times `Db::flush` of everything the PMTables hold now, and the CPU the whole process
//! spent on it. Run it after a fill that fits the PMTables (no background flush ran), e.g.
//! `--benchmarks fillrandom,flush --num 60000 --value_size 4096 --pmtable_size 268435456`.
//!
//! A rough micro-benchmark of the flush path (PMTable iteration, value-log and SST writes): the
//! CPU figure is the process's user + system time from `/proc/self/stat` (10 ms ticks, every
//! thread, finished ones included), so it is only meaningful on flushes of tens of MB or more.

use super::engine::Engine;
use super::histogram::Latencies;
use super::runner::{Measured, OpKind};
use std::time::Instant;

/// Linux's fixed `USER_HZ`: the unit of the CPU times in `/proc/self/stat`.
const TICKS_PER_SECOND: f64 = 100.0;

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
    let stat = std::fs::read_to_string("/proc/self/stat")
        .map_err(|e| format!("reading /proc/self/stat: {e}"))?;
    parse_cpu_ticks(&stat)
        .map(|t| t as f64 / TICKS_PER_SECOND)
        .ok_or_else(|| "unexpected /proc/self/stat format".to_string())
}

/// utime + stime (fields 14 and 15) of a `/proc/<pid>/stat` line. The command name (field 2)
/// is in parentheses and may hold spaces, so fields are counted after its closing parenthesis.
fn parse_cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_ticks_are_fields_14_and_15_even_with_spaces_in_the_name() {
        let line = "42 (a b) R 1 2 3 4 5 6 7 8 9 10 250 30 0 0 20 0 1 0";
        assert_eq!(parse_cpu_ticks(line), Some(280));
        assert_eq!(parse_cpu_ticks("garbage"), None);
        assert!(process_cpu_seconds().unwrap() >= 0.0);
    }
}
