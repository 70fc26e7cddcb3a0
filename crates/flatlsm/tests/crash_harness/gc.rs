//! Scenarios of value-log GC by redirect tables, shared by `pm_crash.rs` and `fs_faults.rs`.

use super::{CrashModel, Op, Scenario};
use flatlsm::Options;

/// Puts of `round`'s value (separated: 200 bytes) to keys `keys`, four per batch, every third
/// batch synced.
pub fn round_of_puts(round: u8, keys: std::ops::Range<u32>) -> Vec<Op> {
    let keys: Vec<u32> = keys.collect();
    keys.chunks(4)
        .enumerate()
        .map(|(i, chunk)| Op::Write {
            batch: chunk
                .iter()
                .map(|k| {
                    let mut v = format!("{}{k}", round as char).into_bytes();
                    v.resize(200, round);
                    (format!("key{k:04}").into_bytes(), Some(v))
                })
                .collect(),
            sync: i % 3 == 0,
        })
        .collect()
}

/// A value-log GC and everything that follows it, small enough to crash at every point: a
/// log made 75% garbage, the GC (new log, redirect table, manifest edit, deletion of the
/// victim), a flush and a compaction that rewrite the pointers into the victim, and the
/// settle that drops the redirect and deletes its table, then collects the first GC's target
/// (a third of it overwritten by then): only possible once the first redirect is gone.
pub fn vlog_gc_redirect() -> Scenario {
    let mut ops = round_of_puts(b'a', 0..48);
    ops.push(Op::Flush);
    ops.extend(round_of_puts(b'b', 0..36));
    ops.push(Op::Flush);
    ops.push(Op::Settle);
    ops.extend(round_of_puts(b'c', 40..44));
    ops.extend([Op::Flush, Op::Compact, Op::Settle]);
    Scenario {
        name: "vlog_gc_redirect",
        ops,
        tweak: |o: &mut Options| {
            o.flush_threads = 1;
            o.l1_capacity = 1 << 40;
            o.l1_merge_trigger = 1;
        },
        model: CrashModel::POWER_LOSS,
    }
}
