//! `--compare rocksdb`: the same workload on RocksDB, through
//! - the `rocksdb` crate in process (feature `rocksdb`; a release build of RocksDB 11.8), and
//! - Debian's db_bench (`--db_bench`, default /usr/bin/db_bench) when it is installed,
//!
//! then one table per benchmark with both engines and the ratios. The plots (see
//! [`super::plot`]) hold every engine's timeline and CDF in one figure.

mod db_bench;
mod parse;
mod table;

use super::config::BenchConfig;
use super::outcome::Outcome;
use super::workdir::WorkDir;
use serde_json::{json, Value};
use std::path::PathBuf;

/// Sibling directories (of the database directory) other engines use.
pub const SIBLINGS: &[&str] = &["rocksdb", "db_bench", "db_bench-scratch"];

/// `<pm_path>-<suffix>`: WAL directories next to the PM directory (same file system).
fn pm_sibling(cfg: &BenchConfig, suffix: &str) -> Option<PathBuf> {
    cfg.pm_path.as_ref().map(|p| {
        let mut name = p.file_name().unwrap_or_default().to_os_string();
        name.push(format!("-{suffix}"));
        p.with_file_name(name)
    })
}

/// Runs the other engine(s) and prints the comparison; returns their outcomes and a JSON summary.
pub fn run(
    cfg: &BenchConfig,
    work: &WorkDir,
    other: &str,
    flatlsm: &[Outcome],
) -> Result<(Vec<Outcome>, Value), String> {
    if other != "rocksdb" {
        return Err(format!(
            "--compare {other:?}: only \"rocksdb\" is supported"
        ));
    }
    let mut others = Vec::new();
    let mut notes = Vec::new();
    match run_in_process(cfg, work)? {
        Ok(v) => others.extend(v),
        Err(note) => notes.push(note),
    }
    if cfg.args.db_bench.exists() {
        let dirs = db_bench::DbBenchDirs {
            db: work.sibling("db_bench"),
            wal: pm_sibling(cfg, "db_bench-wal"),
            scratch: work.sibling("db_bench-scratch"),
        };
        clear(&dirs.db, dirs.wal.as_ref())?;
        let (v, note) = db_bench::run(cfg, &dirs)?;
        if !cfg.args.keep_db {
            clear(&dirs.db, dirs.wal.as_ref())?;
        }
        others.extend(v);
        notes.push(note);
    } else {
        notes.push(format!(
            "db_bench: {} not found; skipped (Debian: apt-get install rocksdb-tools)",
            cfg.args.db_bench.display()
        ));
    }
    println!("\n=== Comparison (FlatLSM vs RocksDB) ===");
    for n in &notes {
        println!("note: {n}");
    }
    let mut tables = Vec::new();
    for f in flatlsm {
        let mut runs = vec![f];
        runs.extend(others.iter().filter(|o| o.name == f.name));
        if runs.len() > 1 {
            let t = table::table(&f.name, &runs);
            println!("{t}");
            let mut j = table::table_json(&f.name, &runs);
            j["table"] = json!(t);
            tables.push(j);
        }
    }
    Ok((others, json!({ "notes": notes, "tables": tables })))
}

/// Removes a previous comparison database (and its WAL directory).
fn clear(db: &std::path::Path, wal: Option<&PathBuf>) -> Result<(), String> {
    for d in std::iter::once(db.to_path_buf()).chain(wal.cloned()) {
        if d.exists() {
            std::fs::remove_dir_all(&d).map_err(|e| format!("clearing {}: {e}", d.display()))?;
        }
    }
    Ok(())
}

/// In-process RocksDB; `Ok(Err(note))` when this build has no RocksDB.
#[cfg(feature = "rocksdb")]
fn run_in_process(
    cfg: &BenchConfig,
    work: &WorkDir,
) -> Result<Result<Vec<Outcome>, String>, String> {
    use super::engine::{Engine, RocksDbEngine, RocksDbSetup};
    let db = work.sibling("rocksdb");
    let wal = pm_sibling(cfg, "rocksdb-wal");
    if !cfg.args.use_existing_db {
        clear(&db, wal.as_ref())?;
    }
    let o = &cfg.options;
    let setup = RocksDbSetup {
        write_buffer_size: o.pmtable_size,
        max_write_buffer_number: o.max_write_buffer_number,
        block_cache_size: o.block_cache_size,
        background_jobs: o.flush_threads,
    };
    let mut engine = RocksDbEngine::open(&db, wal.as_deref(), &setup, cfg.args.sync)?;
    let result = super::suite::run_suite(cfg, &mut engine);
    engine.close()?;
    let outcomes = result?;
    if !cfg.args.keep_db {
        clear(&db, wal.as_ref())?;
    }
    Ok(Ok(outcomes))
}

/// In-process RocksDB; `Ok(Err(note))` when this build has no RocksDB.
#[cfg(not(feature = "rocksdb"))]
fn run_in_process(
    _cfg: &BenchConfig,
    _work: &WorkDir,
) -> Result<Result<Vec<Outcome>, String>, String> {
    Ok(Err(
        "in-process RocksDB: not in this build (rebuild with \
            `cargo build --release -p flatlsm-cli --features rocksdb`; needs libclang-dev)"
            .into(),
    ))
}
