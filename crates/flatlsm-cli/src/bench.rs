//! A db_bench-style benchmark (a first subset; the full tool is tracked separately).
//!
//! Result lines use db_bench's format:
//! `fillrandom   :       3.123 micros/op 320234 ops/sec 12.497 seconds 4000000 operations;  1250.3 MB/s`

use crate::parse_pm_mode;
use flatlsm::{Db, Options, ReadOptions, WriteOptions};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::PathBuf;
use std::time::Instant;

/// Flags, named as db_bench names them.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// Comma-separated list: fillseq, fillrandom, overwrite, readrandom, readseq.
    #[arg(long, default_value = "fillrandom,readrandom")]
    benchmarks: String,
    /// Number of key-value pairs.
    #[arg(long, default_value_t = 100_000)]
    num: u64,
    /// Number of reads (default: num).
    #[arg(long)]
    reads: Option<u64>,
    /// Value size in bytes.
    #[arg(long = "value_size", default_value_t = 4096)]
    value_size: usize,
    /// Key size in bytes.
    #[arg(long = "key_size", default_value_t = 16)]
    key_size: usize,
    /// Database directory (default: a fresh temporary directory).
    #[arg(long)]
    db: Option<PathBuf>,
    /// PM directory.
    #[arg(long = "pm_path")]
    pm_path: Option<PathBuf>,
    /// PM mode: auto, msync or emulated.
    #[arg(long = "pm_mode", default_value = "auto")]
    pm_mode: String,
    /// Injected PM write latency per cache line (emulated mode).
    #[arg(long = "pm_write_latency_ns", default_value_t = 0)]
    pm_write_latency_ns: u64,
    /// PMTable size in bytes.
    #[arg(long = "pmtable_size")]
    pmtable_size: Option<usize>,
    /// Immutable PMTables that trigger a flush.
    #[arg(long = "flush_immutable_num")]
    flush_immutable_num: Option<usize>,
    /// Maximum number of PMTables.
    #[arg(long = "max_write_buffer_number")]
    max_write_buffer_number: Option<usize>,
    /// Ordered-L1 capacity in bytes.
    #[arg(long = "l1_capacity")]
    l1_capacity: Option<u64>,
    /// Threads of a parallel flush.
    #[arg(long = "flush_threads")]
    flush_threads: Option<usize>,
    /// Values at least this large go to the value log.
    #[arg(long = "kv_separation_threshold")]
    kv_separation_threshold: Option<usize>,
    /// Sync every write.
    #[arg(long, default_value_t = false)]
    sync: bool,
    /// Random seed.
    #[arg(long, default_value_t = 301)]
    seed: u64,
}

impl BenchArgs {
    fn options(&self) -> Result<Options, String> {
        let mut o = Options {
            pm_path: self.pm_path.clone(),
            pm_mode: parse_pm_mode(&self.pm_mode)?,
            pm_write_latency_ns: self.pm_write_latency_ns,
            ..Options::default()
        };
        if let Some(v) = self.pmtable_size {
            o.pmtable_size = v;
        }
        if let Some(v) = self.flush_immutable_num {
            o.flush_immutable_num = v;
        }
        if let Some(v) = self.max_write_buffer_number {
            o.max_write_buffer_number = v;
        }
        if let Some(v) = self.l1_capacity {
            o.l1_capacity = v;
        }
        if let Some(v) = self.flush_threads {
            o.flush_threads = v;
        }
        if let Some(v) = self.kv_separation_threshold {
            o.kv_separation_threshold = v;
        }
        Ok(o)
    }
}

fn make_key(n: u64, size: usize) -> Vec<u8> {
    let s = format!("{n:0>width$}", width = size.max(1));
    s.into_bytes()
}

fn report(name: &str, ops: u64, secs: f64, bytes: u64, extra: &str) {
    let micros = secs * 1e6 / ops.max(1) as f64;
    let rate = ops as f64 / secs.max(1e-9);
    let mb = if bytes > 0 {
        format!(" {:6.1} MB/s", bytes as f64 / 1048576.0 / secs.max(1e-9))
    } else {
        String::new()
    };
    println!("{name:<12} : {micros:11.3} micros/op {rate:.0} ops/sec {secs:.3} seconds {ops} operations;{mb}{extra}");
}

/// Runs the requested benchmarks in order on one database.
pub fn run(args: BenchArgs) -> Result<(), String> {
    let tmp;
    let dir = match &args.db {
        Some(d) => d.clone(),
        None => {
            tmp = std::env::temp_dir().join(format!("flatlsm-bench-{}", std::process::id()));
            tmp
        }
    };
    let opts = args.options()?;
    let db = Db::open(&dir, opts).map_err(|e| e.to_string())?;
    println!(
        "FlatLSM bench: db {} | keys {} B values {} B | num {}",
        dir.display(),
        args.key_size,
        args.value_size,
        args.num
    );
    println!(
        "PM mode: {}",
        db.stats()
            .pm_mode
            .map(|m| m.to_string())
            .unwrap_or_default()
    );
    let mut rng = StdRng::seed_from_u64(args.seed);
    let value: Vec<u8> = (0..args.value_size).map(|_| rng.gen()).collect();
    let wopts = WriteOptions { sync: args.sync };
    for name in args
        .benchmarks
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let start = Instant::now();
        match name {
            "fillseq" | "fillrandom" | "overwrite" => {
                for i in 0..args.num {
                    let k = if name == "fillseq" {
                        i
                    } else {
                        rng.gen_range(0..args.num)
                    };
                    db.put(&wopts, &make_key(k, args.key_size), &value)
                        .map_err(|e| e.to_string())?;
                }
                let secs = start.elapsed().as_secs_f64();
                report(
                    name,
                    args.num,
                    secs,
                    args.num * (args.key_size + args.value_size) as u64,
                    "",
                );
                let st = db.stats();
                println!(
                    "  stall micros {} | write amplification {:.3} (before settling)",
                    st.stall_micros,
                    st.write_amplification()
                );
                let settle = Instant::now();
                db.wait_for_background_work().map_err(|e| e.to_string())?;
                let st = db.stats();
                println!(
                    "  settled in {:.3} s | write amplification {:.3} | PM bytes {} | SSD bytes {}",
                    settle.elapsed().as_secs_f64(),
                    st.write_amplification(),
                    st.pm_bytes_written,
                    st.ssd_bytes_written()
                );
            }
            "readrandom" => {
                let reads = args.reads.unwrap_or(args.num);
                let mut found = 0;
                for _ in 0..reads {
                    let k = make_key(rng.gen_range(0..args.num), args.key_size);
                    if db
                        .get(&ReadOptions::default(), &k)
                        .map_err(|e| e.to_string())?
                        .is_some()
                    {
                        found += 1;
                    }
                }
                report(
                    name,
                    reads,
                    start.elapsed().as_secs_f64(),
                    0,
                    &format!(" ({found} of {reads} found)"),
                );
            }
            "readseq" => {
                let mut n = 0u64;
                let mut bytes = 0u64;
                for r in db
                    .iter(&ReadOptions::default())
                    .map_err(|e| e.to_string())?
                {
                    let (k, v) = r.map_err(|e| e.to_string())?;
                    bytes += (k.len() + v.len()) as u64;
                    n += 1;
                }
                report(name, n, start.elapsed().as_secs_f64(), bytes, "");
            }
            other => return Err(format!("unknown benchmark {other:?}")),
        }
    }
    println!("{}", db.stats());
    db.close().map_err(|e| e.to_string())?;
    if args.db.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}
