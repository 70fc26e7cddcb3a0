//! Named configurations (`--preset`).
//!
//! `paper-scaled`: the FlatLSM paper's micro-benchmark (16 B keys, 4 KB values, random writes,
//! PMTables 256 MiB, Ordered-L1 8 GiB) scaled to a 2-core, 24 GiB machine: 16 GiB of writes,
//! 6 PMTables with a flush at 4 immutables, PM in a tmpfs directory given by `--pm_path`.
//!
//! `l1-ratio`: the paper-scaled fill once per Ordered-L1 / data ratio (1/8, 1/4, 1/2, 1), as
//! the paper's Fig. 13.
//!
//! `placement`: the PM placement study's nine workloads (`placement.rs`).
//!
//! `pm-memtables` (Fig. 18) and `designs-4k` (Figs. 20–21): `--compare profiles` workloads.
//!
//! `matrixkv-writes` (MatrixKV Figs. 10a, 12–14), `matrixkv-tail` (its Table 2) and
//! `matrixkv-reads` (its cross-row hint experiment): `--compare profiles` with RocksDB's
//! memtables and a matrix container, `leveled-L0-PM` (RocksDB-L0-NVM) among the designs.
//!
//! `slmdb-writes` (SLM-DB Fig. 4) and `slmdb-pm-latency` (its Fig. 5): random writes at 500 ns
//! per PM line written, and SLM-DB alone at 0/300/500/900 ns. `slmdb-ops` (its Fig. 6 and
//! Table 2: random writes, random reads, range queries of a seek and 100 nexts, a sequential
//! read of the whole database) and `slmdb-ycsb` (its Fig. 7: YCSB A, B, C, F, D, then E on a
//! reloaded database), `leveled` against `slmdb`, 0.2 reads per write of the fill.
//!
//! `ycsb` (issue 26): YCSB A–F (E with a tenth of the operations) against RocksDB and
//! RocksDB+BlobDB at 1 KB and 4 KB values, with data half and 1.5 times the memory, the whole run
//! in a 4 GiB memory cgroup (`ycsb_grid.rs`, `cgroup.rs`).
//!
//! `flatlsm-paper` (issue 28): the FlatLSM paper's figures, every design at one budget, with a
//! report (`paper/`).
//!
//! `no-pm-disk`: the same workload for machines without PM: the PM Logs are ordinary files under
//! `<db>/pm` persisted with msync, on the disk of the data, and RocksDB (in process and
//! db_bench) keeps its WAL in its database directory on that disk, without sync.

use flatlsm::PmModeOption;
use std::path::Path;

/// Values a preset sets; `None` leaves the db_bench or engine default.
#[derive(Debug, Default, Clone)]
pub struct Preset {
    /// Benchmarks to run.
    pub benchmarks: Option<&'static str>,
    /// Number of keys.
    pub num: Option<u64>,
    /// Key size.
    pub key_size: Option<usize>,
    /// Value size.
    pub value_size: Option<usize>,
    /// PMTable size.
    pub pmtable_size: Option<usize>,
    /// Flush trigger.
    pub flush_immutable_num: Option<usize>,
    /// PMTable budget.
    pub max_write_buffer_number: Option<usize>,
    /// Ordered-L1 capacity.
    pub l1_capacity: Option<u64>,
    /// `matrixkv` options (flags win field by field).
    pub matrixkv: Option<flatlsm::MatrixKvOptions>,
    /// PM mode (a `--pm_mode` flag wins).
    pub pm_mode: Option<PmModeOption>,
    /// The preset is meaningless without a PM directory.
    pub needs_pm_path: bool,
    /// Ordered-L1 / data ratios to sweep (`--l1_ratios`).
    pub l1_ratios: Option<&'static str>,
    /// The design (a `--profile` flag wins).
    pub profile: Option<flatlsm::Profile>,
    /// Block cache bytes.
    pub cache_size: Option<usize>,
    /// Emulated PM latencies per cache line.
    pub pm_read_latency_ns: Option<u64>,
    /// Emulated PM latencies per cache line.
    pub pm_write_latency_ns: Option<u64>,
    /// Run the placement study's nine workloads (`placement.rs`).
    pub placement_study: bool,
    /// `--compare` unless the flag is given.
    pub compare: Option<&'static str>,
    /// Value sizes to sweep with `--compare profiles`, the same bytes written at each.
    pub value_sizes: Option<&'static [usize]>,
    /// Bytes written at each value size of the sweep (default [`PM_MEMTABLES_BYTES`]).
    pub sweep_bytes: Option<u64>,
    /// Operations of the read and YCSB benchmarks.
    pub reads: Option<u64>,
    /// Fixed request rate (ops/s) unless `--rate_limit_ops` is given.
    pub rate_limit_ops: Option<f64>,
    /// `--compare profiles` configures the peers as the MatrixKV paper does: adds
    /// `leveled-L0-PM` (RocksDB-L0-NVM) and gives `novelsm` two memtables of half the
    /// container each (the paper's 2 × 4 GB in 8 GB of NVM).
    pub matrixkv_peers: bool,
    /// `--compare profiles` configures the peers as the SLM-DB paper does: `leveled` and
    /// `novelsm` (LevelDB and LevelDB+PM) with LevelDB 1.20's defaults.
    pub leveldb_peers: bool,
    /// The designs `--compare profiles` runs, by label (default: its default set).
    pub variants: Option<&'static [&'static str]>,
    /// Emulated PM write latencies to sweep (ns per line), each with every value size.
    pub pm_write_latencies: Option<&'static [u64]>,
    /// Entries seekrandom reads after each seek (a `--seek_nexts` flag wins).
    pub seek_nexts: Option<usize>,
    /// Operations of the read and YCSB benchmarks per write of the fill (`num`, or each sweep
    /// point's), unless `reads` or `--reads` gives a count.
    pub read_fraction: Option<f64>,
    /// readseq and readreverse walk the whole database (up to `num` entries) instead of
    /// `reads` entries.
    pub scan_whole_db: bool,
    /// YCSB updates write only keys that exist (SLM-DB's "insert if exists", its section 6.4),
    /// instead of YCSB's plain puts.
    pub ycsb_update_if_present: bool,
    /// Memory cgroup limit in bytes for the whole run (a `--memory_limit` flag wins).
    pub memory_limit: Option<u64>,
    /// Data sizes as multiples of the memory (the limit, else the free memory), each run at
    /// every value size against RocksDB (the `ycsb` preset's grid, `ycsb_grid.rs`).
    pub memory_data_ratios: Option<&'static [f64]>,
    /// YCSB-E operations per operation of the other workloads (its scans cost tens of reads).
    pub scan_fraction: Option<f64>,
    /// One DRAM and PM budget every design of `--compare profiles` gets (`--dram_budget` and
    /// `--pm_budget` win).
    pub budget: Option<super::budget::Budget>,
}

/// Bytes of user data the paper-scaled preset writes.
pub const PAPER_SCALED_BYTES: u64 = 16 << 30;

/// The preset called `name`.
pub fn lookup(name: &str) -> Result<Preset, String> {
    match name {
        "paper-scaled" => Ok(paper_scaled()),
        "no-pm-disk" => Ok(no_pm_disk()),
        "l1-ratio" => Ok(l1_ratio()),
        "placement" => Ok(placement()),
        "pm-memtables" => Ok(pm_memtables()),
        "designs-4k" => Ok(designs_4k()),
        "matrixkv-writes" => Ok(matrixkv_writes()),
        "matrixkv-tail" => Ok(matrixkv_tail()),
        "matrixkv-reads" => Ok(matrixkv_reads()),
        "slmdb-writes" => Ok(slmdb_writes()),
        "slmdb-pm-latency" => Ok(slmdb_pm_latency()),
        "slmdb-ops" => Ok(slmdb_ops()),
        "slmdb-ycsb" => Ok(slmdb_ycsb()),
        "ycsb" => Ok(ycsb()),
        "flatlsm-paper" => Ok(flatlsm_paper()),
        _ => Err(format!(
            "unknown --preset {name:?}: expected paper-scaled, no-pm-disk, l1-ratio, placement, \
             pm-memtables, designs-4k, matrixkv-writes, matrixkv-tail, matrixkv-reads, \
             slmdb-writes, slmdb-pm-latency, slmdb-ops, slmdb-ycsb, ycsb or flatlsm-paper"
        )),
    }
}

/// The paper's micro-benchmark, scaled; where PM lives is the caller's part.
fn paper_workload() -> Preset {
    let (key, value) = (16usize, 4096usize);
    Preset {
        benchmarks: Some("fillrandom"),
        num: Some(PAPER_SCALED_BYTES / (key + value) as u64),
        key_size: Some(key),
        value_size: Some(value),
        pmtable_size: Some(256 << 20),
        // The paper flushes one of 4 immutable tables at a time; a FlatLSM flush merges every
        // immutable table at once, so it starts at 2, keeping 3 tables of room to write into
        // while it runs (docs/design-decisions.md). Same PM budget: 6 tables.
        flush_immutable_num: Some(2),
        max_write_buffer_number: Some(6),
        l1_capacity: Some(8 << 30),
        ..Preset::default()
    }
}

fn paper_scaled() -> Preset {
    Preset {
        needs_pm_path: true,
        ..paper_workload()
    }
}

/// No `pm_path`: the engine's default `<db>/pm`, so the PM Logs share the data's disk.
fn no_pm_disk() -> Preset {
    Preset {
        pm_mode: Some(PmModeOption::Msync),
        ..paper_workload()
    }
}

/// The paper's Fig. 13: the paper-scaled fill with the Ordered-L1 at 1/8 to 1× of the data.
fn l1_ratio() -> Preset {
    Preset {
        l1_ratios: Some("0.125,0.25,0.5,1"),
        ..paper_scaled()
    }
}

/// The PM placement study (RocksDB's block cache and memtable in PM), scaled: `leveled`,
/// 300 k keys of 1 KB filled first (so reads find their keys, as the study's 86 % cache hit
/// rate implies), then readrandomwriterandom for 60 s per run, a 256 MiB block cache (most of
/// the data, as the study's 512 MB was of its hot set), 10 MiB memtables, PM emulated with
/// Optane-like latencies (220 ns more per line read than DRAM, 100 ns per line written); the
/// nine runs are 1/50/90 % reads × {both in DRAM, cache in PM, cache and memtable in PM}.
fn placement() -> Preset {
    Preset {
        benchmarks: Some("fillrandom,readrandomwriterandom"),
        num: Some(300_000),
        key_size: Some(16),
        value_size: Some(1024),
        pmtable_size: Some(10 << 20),
        flush_immutable_num: Some(1),
        max_write_buffer_number: Some(2),
        profile: Some(flatlsm::Profile::Leveled),
        cache_size: Some(256 << 20),
        pm_read_latency_ns: Some(220),
        pm_write_latency_ns: Some(100),
        pm_mode: Some(PmModeOption::Emulated),
        needs_pm_path: true,
        placement_study: true,
        ..Preset::default()
    }
}

/// Bytes each value size of `pm-memtables` writes.
pub const PM_MEMTABLES_BYTES: u64 = 1 << 30;

/// The FlatLSM paper's Fig. 18, scaled: random writes into the three memtable kinds (PMTables,
/// NoveLSM's PM skiplist, a DRAM memtable with a WAL) at 256 B, 1 KB and 4 KB values, 1 GiB
/// each, with write buffers of 2 GiB so nothing flushes: the memtables alone are compared.
fn pm_memtables() -> Preset {
    Preset {
        benchmarks: Some("fillrandom"),
        key_size: Some(16),
        pmtable_size: Some(2 << 30),
        flush_immutable_num: Some(1),
        max_write_buffer_number: Some(2),
        needs_pm_path: true,
        compare: Some("profiles"),
        value_sizes: Some(&[256, 1024, 4096]),
        ..Preset::default()
    }
}

/// The FlatLSM paper's Figs. 20–21, scaled: instant throughput of FlatLSM, NoveLSM and the
/// leveled baseline (and RocksDB when built in) under 8 GiB of 4 KB random writes.
fn designs_4k() -> Preset {
    let (key, value) = (16usize, 4096usize);
    Preset {
        benchmarks: Some("fillrandom"),
        num: Some((8u64 << 30) / (key + value) as u64),
        key_size: Some(key),
        value_size: Some(value),
        pmtable_size: Some(256 << 20),
        flush_immutable_num: Some(2),
        max_write_buffer_number: Some(6),
        needs_pm_path: true,
        compare: Some("profiles"),
        matrixkv: Some(designs_container()),
        ..Preset::default()
    }
}

/// MatrixKV's evaluation setup, scaled: RocksDB's two 64 MiB memtables, 16 B keys, and a 1 GiB
/// matrix container (the paper: 8 GB), compared on every design.
fn matrixkv_setup() -> Preset {
    let mut container = flatlsm::MatrixKvOptions::default();
    container.container_size = 1 << 30;
    Preset {
        key_size: Some(16),
        pmtable_size: Some(64 << 20),
        flush_immutable_num: Some(1),
        max_write_buffer_number: Some(2),
        needs_pm_path: true,
        compare: Some("profiles"),
        matrixkv: Some(container),
        matrixkv_peers: true,
        variants: Some(&[
            "FlatLSM",
            "leveled",
            "leveled+vsep",
            "leveled-L0-PM",
            "novelsm",
            "matrixkv",
        ]),
        ..Preset::default()
    }
}

/// MatrixKV's Figs. 10a, 12, 13 and 14, scaled: random writes of 4 GiB at each value size
/// (the paper: 80 GB), columns of 40–80 MiB; the timeline, write amplification and
/// column-compaction figures come with `--plot`.
fn matrixkv_writes() -> Preset {
    Preset {
        benchmarks: Some("fillrandom"),
        value_sizes: Some(&[256, 1024, 4096, 16384]),
        sweep_bytes: Some(4 << 30),
        ..matrixkv_setup()
    }
}

/// MatrixKV's Table 2, scaled: load 1M records of 4 KB (the paper: 80 GB), then YCSB-A
/// (50 % reads, 50 % updates) at a fixed 20,000 requests per second, as SILK's method; the
/// latency table gives average, P90, P99 and P99.9 per design.
fn matrixkv_tail() -> Preset {
    Preset {
        benchmarks: Some("ycsba"),
        num: Some(1_000_000),
        reads: Some(1_000_000),
        value_size: Some(4096),
        rate_limit_ops: Some(20_000.0),
        ..matrixkv_setup()
    }
}

/// MatrixKV's cross-row hint experiment (section 5.3), scaled: 1 GiB of 4 KB random writes
/// fill level 0 in PM — a 2 GiB container, so the receiver (60 %) never turns into the
/// compactor and no column runs; `leveled-L0-PM`'s level 0 then holds up to 32 memtables, so it
/// never compacts either — then as many random reads, served from PM (the paper: 8 GB, then 1M
/// reads; RocksDB-L0-NVM 9 MB/s, MatrixKV 157.9 MB/s).
fn matrixkv_reads() -> Preset {
    let num = (1u64 << 30) / (16 + 4096);
    Preset {
        benchmarks: Some("fillrandom,readrandom"),
        num: Some(num),
        reads: Some(num),
        value_size: Some(4096),
        matrixkv: Some(designs_container()),
        ..matrixkv_setup()
    }
}

/// SLM-DB's Fig. 4, scaled: random writes of 20-byte keys and 1, 4, 16 and 64 KB values, 2 GiB
/// at each (the paper: 8 GB), 64 MiB memtables, PM emulated with 500 ns per written line, for
/// `leveled` (LevelDB's role, write-ahead log not synced), `novelsm` (LevelDB+PM: a persistent
/// PM memtable, no log) and `slmdb`; the table gives throughput, mean latency and bytes
/// written to SSD.
fn slmdb_writes() -> Preset {
    Preset {
        benchmarks: Some("fillrandom"),
        key_size: Some(20),
        value_sizes: Some(&[1024, 4096, 16384, 65536]),
        sweep_bytes: Some(2 << 30),
        pmtable_size: Some(64 << 20),
        flush_immutable_num: Some(1),
        max_write_buffer_number: Some(2),
        pm_write_latency_ns: Some(500),
        pm_mode: Some(PmModeOption::Emulated),
        needs_pm_path: true,
        compare: Some("profiles"),
        variants: Some(&["leveled", "novelsm", "slmdb"]),
        leveldb_peers: true,
        ..Preset::default()
    }
}

/// SLM-DB's Fig. 5, scaled: `slmdb` alone with PM write latencies of 0 (DRAM), 300, 500 and
/// 900 ns per line, the writes of [`slmdb_writes`] at each value size.
fn slmdb_pm_latency() -> Preset {
    Preset {
        variants: Some(&["slmdb"]),
        pm_write_latencies: Some(&[0, 300, 500, 900]),
        ..slmdb_writes()
    }
}

/// The SLM-DB paper's reads per write: each workload after the fill runs 0.2 × N operations.
pub const SLMDB_READ_FRACTION: f64 = 0.2;

/// SLM-DB's Fig. 6 and Table 2 (section 6.3), scaled: at each value size the fill of
/// [`slmdb_writes`] (2 GiB of random writes, the paper: 8 GB) creates the database and waits
/// for compaction to finish (a fill settles before the next benchmark), then random reads,
/// range queries (db_bench's seekrandom: a seek and 100 nexts) and one sequential read of the
/// whole database, for `leveled` (LevelDB) and `slmdb`. The reads are the paper's 0.2 × N, N
/// the fill's writes — of the scaled fill, so 411k at 1 KB and 6.6k at 64 KB, about a minute
/// of range queries per design at 1 KB. They run one after another on one database (the paper
/// does not say it recreates it), so each one's SSD bytes since the database was created
/// include the compactions the earlier ones caused; the table gives ops/s, mean µs per
/// operation (Table 2) and those bytes.
fn slmdb_ops() -> Preset {
    Preset {
        benchmarks: Some("fillrandom,readrandom,seekrandom,readseq"),
        seek_nexts: Some(100),
        read_fraction: Some(SLMDB_READ_FRACTION),
        scan_whole_db: true,
        variants: Some(&["leveled", "slmdb"]),
        ..slmdb_writes()
    }
}

/// SLM-DB's Fig. 7 (section 6.4), scaled: at each value size of [`slmdb_writes`], YCSB loads
/// N records (the same 2 GiB; YCSB's own `user…` keys of about 23 bytes, not 20) and waits for
/// compaction, then runs A, B, C, F and D in that order, 0.2 × N operations each; then, as the
/// paper, a new database is loaded again for E. Updates are SLM-DB's "insert if exists" on
/// both designs (`leveled` checks existence with a lookup, `slmdb` in its B+-tree); the table
/// gives throughput, mean latency and SSD bytes since each database was created per workload.
fn slmdb_ycsb() -> Preset {
    Preset {
        benchmarks: Some("ycsba,ycsbb,ycsbc,ycsbf,ycsbd,freshdb,ycsbe"),
        read_fraction: Some(SLMDB_READ_FRACTION),
        ycsb_update_if_present: true,
        variants: Some(&["leveled", "slmdb"]),
        ..slmdb_writes()
    }
}

/// The budget every design of `flatlsm-paper` gets at `--scale 1`: DRAM 512 MiB, PM 1 GiB
/// (the paper: PMTables 6 × 2 GB, NoveLSM 12 GB and MatrixKV 8 GB of PM, RocksDB 256 MB
/// memtables; here about a tenth of its PM, as the data is a twentieth).
pub const PAPER_BUDGET: super::budget::Budget = super::budget::Budget {
    dram: 512 << 20,
    pm: 1 << 30,
};

/// The FlatLSM paper's evaluation (`paper/`): every design at [`PAPER_BUDGET`], 16 B keys,
/// the figures' workloads scaled by `--scale`.
fn flatlsm_paper() -> Preset {
    Preset {
        key_size: Some(16),
        needs_pm_path: true,
        compare: Some("profiles"),
        budget: Some(PAPER_BUDGET),
        ..Preset::default()
    }
}

/// Memory cgroup of the `ycsb` preset: data of half of it fits, 1.5 times it does not.
pub const YCSB_MEMORY_LIMIT: u64 = 4 << 30;

/// YCSB A–F against RocksDB with and without BlobDB, data in memory and not (see the module
/// docs).
fn ycsb() -> Preset {
    Preset {
        benchmarks: Some("ycsba,ycsbb,ycsbc,ycsbd,ycsbf,ycsbe"),
        compare: Some("rocksdb"),
        needs_pm_path: true,
        value_sizes: Some(&[1024, 4096]),
        memory_limit: Some(YCSB_MEMORY_LIMIT),
        memory_data_ratios: Some(&[0.5, 1.5]),
        reads: Some(200_000),
        scan_fraction: Some(0.1),
        ..Preset::default()
    }
}

/// matrixkv's container for the 8 GiB runs: 2 GiB (eight 256 MiB write buffers; the paper's
/// 8 GB held 128 of its 64 MB ones), L1 as large, columns of 40–80 MiB (½·AF·S_sst..AF·S_sst
/// with 8 MiB units).
fn designs_container() -> flatlsm::MatrixKvOptions {
    let mut m = flatlsm::MatrixKvOptions::default();
    m.container_size = 2 << 30;
    m
}

/// True if `path` (or its nearest existing ancestor) lies on a tmpfs mount, per /proc/mounts.
pub fn is_tmpfs(path: &Path) -> bool {
    let mut probe = path.to_path_buf();
    while !probe.exists() {
        if !probe.pop() {
            return false;
        }
    }
    let Ok(real) = probe.canonicalize() else {
        return false;
    };
    let Ok(mounts) = std::fs::read_to_string("/proc/mounts") else {
        return false;
    };
    // The longest mount point that is a prefix of the path decides.
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, mnt, fstype) = (f.next()?, f.next()?, f.next()?);
            real.starts_with(mnt)
                .then(|| (mnt.len(), fstype == "tmpfs"))
        })
        .max_by_key(|(len, _)| *len)
        .is_some_and(|(_, tmpfs)| tmpfs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_scaled_writes_16_gib_of_4k_values() {
        let p = lookup("paper-scaled").unwrap();
        let per_entry = (p.key_size.unwrap() + p.value_size.unwrap()) as u64;
        assert_eq!(p.num.unwrap(), PAPER_SCALED_BYTES / per_entry);
        assert_eq!(p.pmtable_size, Some(256 << 20));
        assert_eq!(
            (p.max_write_buffer_number, p.flush_immutable_num),
            (Some(6), Some(2))
        );
        assert!(p.needs_pm_path);
        assert!(lookup("paper").is_err());
        let disk = lookup("no-pm-disk").unwrap();
        assert!(!disk.needs_pm_path && disk.pm_mode.is_some());
        assert_eq!(disk.num, p.num);
    }

    /// MatrixKV's setup scaled: RocksDB's two 64 MiB memtables, a 1 GiB container, 4 GiB
    /// written per value size; the tail-latency run fixes YCSB-A at 20,000 requests/s.
    #[test]
    fn matrixkv_presets_scale_the_papers_setup() {
        let w = lookup("matrixkv-writes").unwrap();
        assert_eq!(
            (w.pmtable_size, w.max_write_buffer_number),
            (Some(64 << 20), Some(2))
        );
        assert_eq!(w.matrixkv.unwrap().container_size, 1 << 30);
        assert_eq!(
            (w.sweep_bytes, w.value_sizes.unwrap().len()),
            (Some(4 << 30), 4)
        );
        let r = lookup("matrixkv-reads").unwrap();
        let container = r.matrixkv.unwrap().container_size;
        let data = r.num.unwrap() * 4112;
        assert!(data as f64 <= 0.6 * container as f64, "a column would run");
        assert!(r.matrixkv_peers);
        let s = lookup("slmdb-pm-latency").unwrap();
        assert_eq!(s.variants, Some(&["slmdb"][..]));
        assert_eq!(s.pm_write_latencies.unwrap().len(), 4);
        assert_eq!(
            lookup("slmdb-writes").unwrap().pm_write_latency_ns,
            Some(500)
        );
        let t = lookup("matrixkv-tail").unwrap();
        assert_eq!(
            (t.benchmarks, t.rate_limit_ops),
            (Some("ycsba"), Some(20_000.0))
        );
    }

    /// SLM-DB's Fig. 6: LevelDB's and SLM-DB's designs, the fill then the three reads at every
    /// value size of Fig. 4's writes, 0.2 reads per write, range queries of a seek and 100 nexts.
    #[test]
    fn slmdb_ops_reads_the_database_of_the_write_preset() {
        let (p, w) = (
            lookup("slmdb-ops").unwrap(),
            lookup("slmdb-writes").unwrap(),
        );
        assert_eq!(p.variants, Some(&["leveled", "slmdb"][..]));
        assert_eq!(
            p.benchmarks,
            Some("fillrandom,readrandom,seekrandom,readseq")
        );
        assert_eq!(p.value_sizes, Some(&[1024, 4096, 16384, 65536][..]));
        assert_eq!(
            (p.value_sizes, p.sweep_bytes),
            (w.value_sizes, Some(2 << 30))
        );
        assert_eq!((p.key_size, p.pmtable_size), (Some(20), Some(64 << 20)));
        assert_eq!(
            (p.pm_write_latency_ns, p.seek_nexts),
            (Some(500), Some(100))
        );
        assert_eq!(p.read_fraction, Some(0.2));
        assert!(p.scan_whole_db && p.needs_pm_path && !p.ycsb_update_if_present);
        assert_eq!(p.compare, Some("profiles"));
    }

    #[test]
    fn the_ycsb_preset_runs_a_to_f_at_two_sizes_in_and_beyond_memory() {
        let p = lookup("ycsb").unwrap();
        assert_eq!(p.benchmarks, Some("ycsba,ycsbb,ycsbc,ycsbd,ycsbf,ycsbe"));
        assert_eq!(p.value_sizes, Some(&[1024, 4096][..]));
        assert_eq!(p.memory_data_ratios, Some(&[0.5, 1.5][..]));
        assert_eq!(
            (p.memory_limit, p.compare),
            (Some(4 << 30), Some("rocksdb"))
        );
        assert!(p.needs_pm_path);
    }

    /// SLM-DB's Fig. 7: A, B, C, F, D on one loaded database, E on a reloaded one, updates
    /// only of existing keys, 0.2 operations per loaded record.
    #[test]
    fn slmdb_ycsb_runs_the_papers_workload_order() {
        let p = lookup("slmdb-ycsb").unwrap();
        assert_eq!(p.variants, Some(&["leveled", "slmdb"][..]));
        assert_eq!(
            p.benchmarks,
            Some("ycsba,ycsbb,ycsbc,ycsbf,ycsbd,freshdb,ycsbe")
        );
        assert_eq!(p.value_sizes, Some(&[1024, 4096, 16384, 65536][..]));
        assert_eq!((p.sweep_bytes, p.key_size), (Some(2 << 30), Some(20)));
        assert_eq!(p.pm_write_latency_ns, Some(500));
        assert_eq!(p.read_fraction, Some(0.2));
        assert!(p.ycsb_update_if_present && !p.scan_whole_db);
        assert_eq!((p.compare, p.seek_nexts), (Some("profiles"), None));
    }

    #[test]
    fn tmpfs_detection_follows_proc_mounts_for_missing_subdirectories() {
        let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
        let shm_is_tmpfs = mounts.lines().any(|l| l.contains(" /dev/shm tmpfs "));
        if shm_is_tmpfs {
            assert!(is_tmpfs(Path::new("/dev/shm/not-yet-created/sub")));
        }
    }
}
