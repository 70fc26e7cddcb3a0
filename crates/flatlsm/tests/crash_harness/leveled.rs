//! The crash workloads of the `leveled` and `novelsm` profiles, shared by `pm_crash.rs` and
//! `fs_faults.rs`.

use super::{random_writes, rng, CrashModel, Op, PmKind, Scenario};
use flatlsm::Options;
use flatlsm_core::pm::simulated::CrashKind;

/// The `leveled` profile: DRAM memtables behind write-ahead logs, flushes into level 0,
/// leveled compactions and Titan-style value separation, crashed at every file-system call
/// (WAL appends included: each batch is one).
pub fn leveled_wal(seed: u64) -> Scenario {
    let mut r = rng(seed);
    let mut ops = Vec::new();
    for chunk in 0..8 {
        ops.extend(random_writes(&mut r, 40, 50, 15, 10));
        if chunk % 3 == 1 {
            ops.push(super::range_delete(chunk * 5, 12));
        }
        if chunk % 2 == 1 {
            ops.push(Op::Flush);
        }
        if chunk % 4 == 3 {
            ops.push(Op::Compact);
        }
        ops.push(Op::Settle);
    }
    Scenario {
        name: "leveled_wal_power_loss",
        ops,
        tweak: |o: &mut Options| {
            o.profile = flatlsm::Profile::Leveled;
            o.leveled.max_bytes_for_level_base = 16 << 10;
            o.leveled.max_bytes_for_level_multiplier = 2.0;
            o.leveled.level0_file_num_compaction_trigger = 2;
        },
        model: CrashModel {
            pm: PmKind::Wal,
            kind: CrashKind::PowerLoss,
        },
    }
}

/// The same workload on the `novelsm` profile: persistent PM skiplists as memtables (every
/// write durable when acknowledged), then leveled SSD levels; crashed at every PM persist and
/// file-system call.
pub fn novelsm_pm_skiplists(seed: u64) -> Scenario {
    let s = leveled_wal(seed);
    Scenario {
        name: "novelsm_power_loss",
        tweak: |o: &mut Options| {
            o.profile = flatlsm::Profile::NoveLsm;
            o.pmtable_size = 96 << 10;
            o.leveled.max_bytes_for_level_base = 16 << 10;
            o.leveled.max_bytes_for_level_multiplier = 2.0;
            o.leveled.level0_file_num_compaction_trigger = 2;
        },
        model: CrashModel {
            pm: PmKind::PerWrite,
            kind: CrashKind::PowerLoss,
        },
        ..s
    }
}

/// The same workload on the `matrixkv` profile: DRAM memtables behind write-ahead logs (in the
/// PM directory), flushed into RowTables of a small matrix container on the simulated PM device
/// and merged into L1 by column compactions; crashed at every PM persist (row pages, the
/// container header) and file-system call.
pub fn matrixkv_rows(seed: u64) -> Scenario {
    let s = leveled_wal(seed);
    Scenario {
        name: "matrixkv_power_loss",
        tweak: |o: &mut Options| {
            o.profile = flatlsm::Profile::MatrixKv;
            o.matrixkv.container_size = 256 << 10;
            o.matrixkv.page_size = 4 << 10;
            o.matrixkv.column_lower_bound = 8 << 10;
            o.matrixkv.column_upper_bound = 16 << 10;
            o.matrixkv.column_threads = 2;
            o.leveled.max_bytes_for_level_multiplier = 2.0;
        },
        ..s
    }
}

/// The `leveled` workload with `level0_in_pm` (RocksDB-L0-NVM): level-0 files in the PM
/// directory, compactions into the database directory; a new level-0 file must be durable in
/// its own directory before the manifest names it.
pub fn leveled_level0_in_pm(seed: u64) -> Scenario {
    let s = leveled_wal(seed);
    Scenario {
        name: "leveled_level0_in_pm_power_loss",
        tweak: |o: &mut Options| {
            o.profile = flatlsm::Profile::Leveled;
            o.leveled.level0_in_pm = true;
            o.leveled.max_bytes_for_level_base = 16 << 10;
            o.leveled.max_bytes_for_level_multiplier = 2.0;
            o.leveled.level0_file_num_compaction_trigger = 2;
        },
        ..s
    }
}

/// The same workload on the `slmdb` profile: persistent PM skiplists, flushes into single-level
/// SSTs whose keys go into the PM B+-tree, selective compactions (from two candidates on) whose
/// outputs the tree follows before the inputs go; crashed at every PM persist (skiplist
/// inserts, tree slots, bitmaps, splits) and file-system call.
pub fn slmdb_index(seed: u64) -> Scenario {
    let s = novelsm_pm_skiplists(seed);
    Scenario {
        name: "slmdb_power_loss",
        tweak: |o: &mut Options| {
            o.profile = flatlsm::Profile::SlmDb;
            o.pmtable_size = 96 << 10;
            o.kv_separation_threshold = usize::MAX;
            o.slmdb.btree_size = 256 << 10;
            o.slmdb.compaction_trigger = 1;
            o.slmdb.slowdown_candidates = 3;
            o.slmdb.stop_candidates = 6;
        },
        ..s
    }
}
