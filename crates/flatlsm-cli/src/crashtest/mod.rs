//! `flatlsm crashtest`: RocksDB's black-box crash test for FlatLSM.
//!
//! The parent repeatedly starts a child (this binary with the hidden `--child` flag) that writes
//! puts, deletes and batches from several threads while journaling each operation before and
//! after it is issued ([`journal`]); the parent SIGKILLs it at a random moment, reopens the
//! database, checks every key with `get` and a full scan against the journals ([`verify`]), closes
//! it and starts the next child on the same database. See docs/crashtest.md.

mod child;
mod journal;
mod parent;
mod verify;
mod workload;

use crate::parse_pm_mode;
use flatlsm::{Options, PmModeOption, Profile};
use std::path::PathBuf;
use workload::{WorkloadShape, TAG_LEN};

/// Flags of `flatlsm crashtest`.
#[derive(clap::Args, Clone, Debug)]
pub struct CrashtestArgs {
    /// Database directory (must not exist yet, unless --child).
    #[arg(long)]
    db: PathBuf,
    /// PM directory (default: pm inside the --db directory).
    #[arg(long = "pm-path")]
    pm_path: Option<PathBuf>,
    /// PM mode: auto, msync or emulated.
    #[arg(long = "pm-mode", default_value = "auto")]
    pm_mode: String,
    /// Design under test: flatlsm (default), leveled, novelsm, matrixkv or slmdb.
    #[arg(long, default_value = "flatlsm")]
    profile: String,
    /// leveled/novelsm: keep level-0 files in the PM directory (RocksDB-L0-NVM).
    #[arg(long = "level0-in-pm")]
    level0_in_pm: bool,
    /// Stop after this many kills (default 20 unless --duration is given).
    #[arg(long)]
    kills: Option<u32>,
    /// Stop once this many seconds have passed (after the current kill and verification).
    #[arg(long)]
    duration: Option<u64>,
    /// Writer threads in the child; each owns a disjoint key range.
    #[arg(long, default_value_t = 4)]
    threads: u32,
    /// Keys per writer thread.
    #[arg(long = "keys-per-thread", default_value_t = 1000)]
    keys_per_thread: u32,
    /// Value sizes as MIN..MAX bytes (MIN >= 24; values >= 512 B go to value logs at flush).
    #[arg(long = "value-size", default_value = "24..1200")]
    value_size: String,
    /// Percentage of operations written with sync: true.
    #[arg(long = "sync-percent", default_value_t = 10)]
    sync_percent: u32,
    /// PMTable size in bytes (small so flushes and compactions happen).
    #[arg(long = "pmtable-size", default_value_t = 256 << 10)]
    pmtable_size: usize,
    /// Longest time the child writes before it is killed, in milliseconds.
    #[arg(long = "max-run-ms", default_value_t = 400)]
    max_run_ms: u64,
    /// Random seed (default: from the clock; printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Where the journals live (default: the --db path with .crashtest appended).
    #[arg(long = "state-dir")]
    state_dir: Option<PathBuf>,
    /// Internal: run as the child for this run number.
    #[arg(long, hide = true)]
    child: Option<u32>,
}

/// Settings shared by parent and child.
#[derive(Clone, Debug)]
pub(crate) struct Config {
    db: PathBuf,
    pm_path: Option<PathBuf>,
    pm_mode: PmModeOption,
    profile: Profile,
    level0_in_pm: bool,
    threads: u32,
    keys_per_thread: u32,
    min_value: usize,
    max_value: usize,
    sync_percent: u32,
    pmtable_size: usize,
    seed: u64,
    state_dir: PathBuf,
}

impl Config {
    fn from_args(a: &CrashtestArgs) -> Result<Config, String> {
        let (min_value, max_value) = parse_range(&a.value_size)?;
        if a.threads == 0 || a.keys_per_thread == 0 || a.threads > 999 {
            return Err("--threads must be in 1..=999 and --keys-per-thread positive".into());
        }
        if a.sync_percent > 100 {
            return Err("--sync-percent must be at most 100".into());
        }
        let seed = a.seed.unwrap_or_else(|| {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
            now.map_or(1, |d| d.as_nanos() as u64)
        });
        let state_dir = a.state_dir.clone().unwrap_or_else(|| {
            let mut s = a.db.clone().into_os_string();
            s.push(".crashtest");
            PathBuf::from(s)
        });
        Ok(Config {
            db: a.db.clone(),
            pm_path: a.pm_path.clone(),
            pm_mode: parse_pm_mode(&a.pm_mode)?,
            profile: a
                .profile
                .parse()
                .map_err(|e: flatlsm::Error| e.to_string())?,
            level0_in_pm: a.level0_in_pm,
            threads: a.threads,
            keys_per_thread: a.keys_per_thread,
            min_value,
            max_value,
            sync_percent: a.sync_percent,
            pmtable_size: a.pmtable_size,
            seed,
            state_dir,
        })
    }

    /// Options with small PMTables, L1 and files so flushes, L1->L2 compactions and value-log
    /// GC all happen within a short run (leveled: small level targets and triggers, values from
    /// 512 B separated as Titan does, so every job kind runs too; matrixkv: a container of 32
    /// write buffers, columns of half to one write buffer).
    fn options(&self) -> Result<Options, String> {
        let mut leveled = flatlsm::LeveledOptions::default();
        leveled.max_bytes_for_level_base = 4 * self.pmtable_size as u64;
        leveled.max_bytes_for_level_multiplier = 4.0;
        leveled.level0_file_num_compaction_trigger = 2;
        leveled.level0_in_pm = self.level0_in_pm;
        let mut matrixkv = flatlsm::MatrixKvOptions::default();
        matrixkv.container_size = (32 * self.pmtable_size as u64).next_power_of_two();
        matrixkv.page_size = 4 << 10;
        matrixkv.column_lower_bound = (self.pmtable_size as u64 / 2).max(4096);
        matrixkv.column_upper_bound = (self.pmtable_size as u64).max(8192);
        let mut slmdb = flatlsm::SlmDbOptions::default();
        slmdb.btree_size = 64 << 20;
        let o = {
            let mut o = Options::default();
            o.profile = self.profile;
            o.leveled = leveled;
            o.matrixkv = matrixkv;
            o.slmdb = slmdb;
            o.pm_path = self.pm_path.clone();
            o.pm_mode = self.pm_mode;
            o.pm_persist_interval_ms = 200;
            o.pmtable_size = self.pmtable_size;
            o.flush_immutable_num = 2;
            o.max_write_buffer_number = 4;
            o.l1_capacity = 4 * self.pmtable_size as u64;
            o.target_file_size = (self.pmtable_size as u64 / 2).max(4096);
            o.flush_threads = 2;
            o.block_cache_size = 1 << 20;
            o.vlog_gc_garbage_ratio = 0.3;
            o
        };
        o.validate().map_err(|e| e.to_string())?;
        Ok(o)
    }

    fn shape(&self) -> WorkloadShape {
        WorkloadShape {
            keys_per_thread: self.keys_per_thread,
            min_value: self.min_value,
            max_value: self.max_value,
            sync_percent: self.sync_percent,
        }
    }
}

fn parse_range(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--value-size {s:?}: expected MIN..MAX with {TAG_LEN} <= MIN <= MAX");
    let (a, b) = s.split_once("..").ok_or_else(bad)?;
    let (a, b): (usize, usize) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    if a < TAG_LEN || a > b {
        return Err(bad());
    }
    Ok((a, b))
}

/// Runs the crash test (or, with `--child`, one child).
pub fn run(args: CrashtestArgs) -> Result<(), String> {
    let cfg = Config::from_args(&args)?;
    match args.child {
        Some(run) => child::run_child(&cfg, run),
        None => parent::run_parent(&cfg, &args),
    }
}
