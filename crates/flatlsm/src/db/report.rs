//! The user-facing report of a database ([`crate::Stats`]): counters, sizes per level and
//! value log, the stall state, cache and filter counters and latencies, read from the shared
//! state without stopping anything.

use super::state::DbInner;
use crate::observe::{BlockCacheStats, BloomStats, LevelStats, Stats, VlogStats};
use std::sync::atomic::Ordering;

/// Builds the user-facing report.
pub(crate) fn stats(db: &DbInner) -> Stats {
    let c = &db.counters;
    let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let sv = db.versions.sv_full();
    let live = sv.version.vlog_live_bytes();
    let tables = std::iter::once(&sv.mem).chain(sv.imms.iter());
    Stats {
        pm_mode: Some(db.files.pm().mode()),
        user_bytes: get(&c.user_bytes),
        user_writes: get(&c.user_writes),
        pm_bytes_written: get(&c.pm_bytes_written),
        flush_pm_bytes: get(&c.flush_pm_bytes),
        pm_gc_bytes: get(&c.pm_gc_bytes),
        flush_sst_bytes: get(&c.flush_sst_bytes),
        flush_vlog_bytes: get(&c.flush_vlog_bytes),
        compaction_bytes: get(&c.compaction_bytes),
        vlog_gc_bytes: get(&c.vlog_gc_bytes),
        manifest_bytes: get(&c.manifest_bytes),
        stall_micros: get(&c.stall_micros),
        stall_count: get(&c.stall_count),
        delayed_writes: get(&c.delayed_writes),
        delayed_write_micros: get(&c.delayed_write_micros),
        slowdown_count: get(&c.slowdown_count),
        write_stall_nanos: get(&c.write_stall_nanos),
        write_wal_nanos: get(&c.write_wal_nanos),
        write_mem_data_nanos: get(&c.write_mem_data_nanos),
        write_mem_index_nanos: get(&c.write_mem_index_nanos),
        writes_slowed: db.writes_slowed(),
        writes_stopped: db.writes_stopped(),
        delayed_write_rate: db.delayed_write_rate(),
        flush_micros: get(&c.flush_micros),
        flushes: get(&c.flushes),
        compactions: get(&c.compactions),
        vlog_gcs: get(&c.vlog_gcs),
        pmtable_gcs: get(&c.pmtable_gcs),
        vlog_direct_files: get(&c.vlog_direct_files),
        vlog_buffered_files: get(&c.vlog_buffered_files),
        store_compactions: c.store_compactions.lock().clone(),
        pmtables: 1 + sv.imms.len(),
        pmtable_bytes: tables.clone().map(|t| t.log_bytes()).sum(),
        pmtable_index_bytes: tables.clone().map(|t| t.index_dram_bytes()).sum(),
        estimated_keys: tables.map(|t| t.contents().0).sum::<u64>()
            + sv.version
                .levels
                .iter()
                .flatten()
                .map(|f| f.num_entries)
                .sum::<u64>(),
        l1_runs: db.design.level0_runs(&sv.version),
        profile: db.opts.profile,
        levels: (0..db.opts.profile.num_levels())
            .map(|l| LevelStats {
                name: db.opts.profile.level_name(l),
                files: sv.version.num_files(l),
                bytes: sv.version.level_bytes(l),
                data_bytes: sv.version.level_data_bytes(l),
            })
            .collect(),
        vlogs: sv
            .version
            .vlogs
            .values()
            .map(|v| VlogStats {
                number: v.number,
                total_bytes: v.total_bytes,
                live_bytes: live.get(&v.number).copied().unwrap_or(0),
            })
            .collect(),
        vlog_redirects: sv.version.redirects.len(),
        range_tombstones: sv.version.range_dels.tombstones().len(),
        snapshots: db.snapshots.count(),
        last_sequence: db.visible(),
        background_error: db.bg.error().map(|e| e.to_string()),
        latency: c.latency.stats(),
        block_cache: BlockCacheStats::of(db.files.table_cache()),
        bloom: BloomStats::of(db.files.table_cache()),
    }
}
