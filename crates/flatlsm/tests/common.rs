//! Helpers shared by the integration tests.
#![allow(dead_code)]

use flatlsm::{Options, PmModeOption};
use flatlsm_core::pm::simulated::SimulatedPmDevice;
use std::path::Path;

/// Options with tiny PMTables and files so a few thousand writes exercise flush, L1 → L2
/// compaction and value-log GC.
pub fn tiny_options(flush_threads: usize) -> Options {
    let mut o = Options::default();
    o.pmtable_size = 64 << 10;
    o.flush_immutable_num = 2;
    o.max_write_buffer_number = 4;
    o.l1_capacity = 256 << 10;
    o.target_file_size = 32 << 10;
    o.block_size = 1024;
    o.flush_threads = flush_threads;
    o.kv_separation_threshold = 100;
    o.block_cache_size = 1 << 20;
    o.pm_persist_interval_ms = 20;
    o
}

/// Tiny options on a simulated PM device (kept across reopen by the shared `Arc`).
pub fn simulated(flush_threads: usize) -> Options {
    let mut o = tiny_options(flush_threads);
    o.pm_device = Some(SimulatedPmDevice::new());
    o
}

/// Tiny options with PM in a subdirectory of `dir`, persisted by msync.
pub fn msync(dir: &Path, flush_threads: usize) -> Options {
    let mut o = tiny_options(flush_threads);
    o.pm_path = Some(dir.join("pmdir"));
    o.pm_mode = PmModeOption::Msync;
    o
}

/// Tiny options of the `novelsm` profile (persistent PM skiplists as memtables, leveled SSD
/// levels as `leveled`) on a simulated PM device.
pub fn novelsm(separate: bool) -> Options {
    let mut o = leveled(1, separate);
    o.profile = flatlsm::Profile::NoveLsm;
    o.pmtable_size = 128 << 10;
    o.pm_device = Some(SimulatedPmDevice::new());
    o
}

/// Tiny options of the `leveled` profile (DRAM memtables + write-ahead logs): small level
/// targets and level-0 triggers so a few thousand writes reach several levels; `separate`
/// turns on Titan/BlobDB-style value separation at 100 bytes.
pub fn leveled(flush_threads: usize, separate: bool) -> Options {
    let mut o = tiny_options(flush_threads);
    o.profile = flatlsm::Profile::Leveled;
    o.kv_separation_threshold = if separate { 100 } else { usize::MAX };
    o.leveled.max_bytes_for_level_base = 64 << 10;
    o.leveled.max_bytes_for_level_multiplier = 4.0;
    o.leveled.level0_file_num_compaction_trigger = 2;
    o.leveled.level0_slowdown_writes_trigger = 6;
    o.leveled.level0_stop_writes_trigger = 10;
    o
}

/// Tiny options of the `matrixkv` profile (DRAM memtables + write-ahead logs, a 1 MiB matrix
/// container of 4 KiB pages, columns of 16–32 KiB) on a simulated PM device, so a few thousand
/// writes fill rows, promote receivers and run column compactions.
pub fn matrixkv() -> Options {
    let mut o = leveled(1, false);
    o.profile = flatlsm::Profile::MatrixKv;
    o.pm_device = Some(SimulatedPmDevice::new());
    o.matrixkv.container_size = 1 << 20;
    o.matrixkv.page_size = 4 << 10;
    o.matrixkv.column_lower_bound = 16 << 10;
    o.matrixkv.column_upper_bound = 32 << 10;
    o.matrixkv.column_threads = 2;
    o
}

/// Tiny options of the `slmdb` profile (persistent PM skiplists, one level of SSTs indexed by
/// a PM B+-tree of 4 MiB) on a simulated PM device.
pub fn slmdb() -> Options {
    let mut o = tiny_options(1);
    o.profile = flatlsm::Profile::SlmDb;
    o.kv_separation_threshold = usize::MAX;
    o.pmtable_size = 128 << 10;
    o.slmdb.btree_size = 4 << 20;
    o.pm_device = Some(SimulatedPmDevice::new());
    o
}

/// Tiny options of `profile`: `flatlsm` with PM in `<dir>/pmdir` (msync, real files), the others
/// as their functions above (value separation on where the design has it).
pub fn for_profile(dir: &Path, profile: flatlsm::Profile) -> Options {
    match profile {
        flatlsm::Profile::Leveled => leveled(1, true),
        flatlsm::Profile::NoveLsm => novelsm(true),
        flatlsm::Profile::SlmDb => slmdb(),
        flatlsm::Profile::MatrixKv => matrixkv(),
        _ => msync(dir, 1),
    }
}

/// Round `round`'s value of key number `i`: every third is 150 bytes (separated in the
/// profiles that separate), the rest 20.
pub fn round_value(i: u32, round: u32) -> Vec<u8> {
    let len = if i.is_multiple_of(3) { 150 } else { 20 }; // some values are separated
    let mut v = format!("value-{i}-{round}-").into_bytes();
    v.resize(len, b'x');
    v
}

/// Writes keys `prefix-0..n` (round `round`), deleting every seventh, into `db` and `model`.
pub fn write_rounds(
    db: &flatlsm::Db,
    model: &mut std::collections::BTreeMap<Vec<u8>, Vec<u8>>,
    prefix: &str,
    n: u32,
    round: u32,
) {
    for i in 0..n {
        let key = format!("{prefix}-{i:05}").into_bytes();
        if i % 7 == 6 && round > 0 {
            db.delete(&key).unwrap();
            model.remove(&key);
        } else {
            db.put(&key, round_value(i, round)).unwrap();
            model.insert(key, round_value(i, round));
        }
    }
}

/// Copies a database directory (recursively, without its LOCK file).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else if e.file_name() != "LOCK" {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}
