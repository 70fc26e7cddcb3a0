//! Verification after a kill: the recovered state of each thread's keys must be the state after
//! some prefix of that thread's operations, no shorter than its durable prefix.
//!
//! Threads own disjoint keys and issue operations one at a time, so the writes of one thread
//! are totally ordered. Lost writes are a suffix of the write order and a batch is never split
//! (docs/durability.md), so the recovered keys of a thread equal the baseline (the state verified
//! after the previous kill) with exactly the first P operations applied, where
//! `durable <= P <= begun`. `durable` counts every operation up to the last acknowledged one: a
//! process crash loses no acknowledged write, synced or not, in any PM mode (docs/durability.md).

use super::journal::JournalOp;
use super::workload::{Update, Version};

/// What a key holds: the version and length of its value, or `None` when absent.
pub type KeyState = Option<(Version, usize)>;

/// Outcome of verifying one thread.
#[derive(Debug, Default)]
pub struct ThreadOutcome {
    /// Operations the recovered state contains (the longest matching prefix).
    pub prefix: usize,
    /// Acknowledged non-sync operations within `prefix` (the ones a process crash used to
    /// lose in msync mode).
    pub acked_non_sync: usize,
}

/// Number of operations that must survive the kill: up to the last acknowledged one.
pub fn durable_prefix(ops: &[JournalOp]) -> usize {
    ops.iter().rposition(|o| o.acked).map_or(0, |i| i + 1)
}

/// Finds the longest prefix `P` in `durable..=ops.len()` such that baseline + ops[..P] equals
/// `recovered`. `run` is the child run the ops belong to. On failure, describes the closest
/// prefix's differences.
pub fn match_prefix(
    baseline: &[KeyState],
    recovered: &[KeyState],
    ops: &[JournalOp],
    run: u32,
    durable: usize,
) -> Result<ThreadOutcome, String> {
    let mut state = baseline.to_vec();
    for (i, op) in ops[..durable].iter().enumerate() {
        apply(&mut state, op, run, i);
    }
    let mut mismatches = state.iter().zip(recovered).filter(|(a, b)| a != b).count();
    let mut best = (mismatches, durable, state.clone());
    let mut found = (mismatches == 0).then_some(durable);
    for (i, op) in ops.iter().enumerate().skip(durable) {
        for u in &op.updates {
            let k = u.key() as usize;
            let before = state[k] != recovered[k];
            state[k] = new_state(u, run, i);
            let after = state[k] != recovered[k];
            mismatches = mismatches + usize::from(after) - usize::from(before);
        }
        if mismatches == 0 {
            found = Some(i + 1);
        } else if mismatches < best.0 {
            best = (mismatches, i + 1, state.clone());
        }
    }
    match found {
        Some(prefix) => Ok(ThreadOutcome {
            prefix,
            acked_non_sync: ops[..prefix].iter().filter(|o| o.acked && !o.sync).count(),
        }),
        None => Err(describe_mismatch(
            &best.2,
            recovered,
            best.1,
            durable,
            ops.len(),
        )),
    }
}

fn apply(state: &mut [KeyState], op: &JournalOp, run: u32, index: usize) {
    for u in &op.updates {
        state[u.key() as usize] = new_state(u, run, index);
    }
}

fn new_state(u: &Update, run: u32, index: usize) -> KeyState {
    match u {
        Update::Put { len, .. } => Some((
            Version {
                run,
                op: index as u64,
            },
            *len,
        )),
        Update::Delete { .. } => None,
    }
}

fn describe_mismatch(
    expected: &[KeyState],
    recovered: &[KeyState],
    prefix: usize,
    durable: usize,
    begun: usize,
) -> String {
    let diffs: Vec<String> = expected
        .iter()
        .zip(recovered)
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .take(5)
        .map(|(k, (a, b))| format!("key {k}: expected {a:?}, recovered {b:?}"))
        .collect();
    format!(
        "no prefix of the {begun} begun operations (durable {durable}) matches the recovered \
         state; closest is prefix {prefix}: {}",
        diffs.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(updates: Vec<Update>, sync: bool, acked: bool) -> JournalOp {
        JournalOp {
            updates,
            sync,
            acked,
        }
    }

    #[test]
    fn accepts_an_unacknowledged_suffix_and_rejects_a_lost_acknowledged_non_sync_write() {
        let ops = vec![
            op(vec![Update::Put { key: 0, len: 30 }], true, true),
            op(vec![Update::Put { key: 1, len: 30 }], false, true),
            op(vec![Update::Delete { key: 0 }], false, false),
        ];
        let base = vec![None, None];
        let d = durable_prefix(&ops);
        assert_eq!(d, 2, "the acknowledged non-sync put must survive");
        let v0 = Some((Version { run: 0, op: 0 }, 30));
        let v1 = Some((Version { run: 0, op: 1 }, 30));
        let got = match_prefix(&base, &[v0, v1], &ops, 0, d).unwrap();
        assert_eq!((got.prefix, got.acked_non_sync), (2, 1));
        assert_eq!(
            match_prefix(&base, &[None, v1], &ops, 0, d).unwrap().prefix,
            3,
            "the unacknowledged delete may have happened"
        );
        assert!(match_prefix(&base, &[v0, None], &ops, 0, d).is_err());
        assert!(match_prefix(&base, &[None, None], &ops, 0, d).is_err());
        let truncated = Some((Version { run: 0, op: 0 }, 29));
        assert!(match_prefix(&base, &[truncated, None], &ops, 0, d).is_err());
    }

    #[test]
    fn rejects_a_split_batch() {
        let batch = vec![
            Update::Put { key: 0, len: 30 },
            Update::Put { key: 1, len: 30 },
        ];
        let ops = vec![op(batch, false, true)];
        let half = [Some((Version { run: 0, op: 0 }, 30)), None];
        assert!(match_prefix(&[None, None], &half, &ops, 0, 0).is_err());
    }
}
