//! `--compare rocksdb`: the same workload on RocksDB, through
//! - the `rocksdb` crate in process (feature `rocksdb`; a release build of RocksDB 11.8), plain
//!   and with integrated BlobDB (`--rocksdb_blob`, default on), and
//! - Debian's db_bench (`--db_bench`, default /usr/bin/db_bench) when it is installed,
//!
//! then one table per benchmark with both engines and the ratios. The plots (see
//! [`super::plot`]) hold every engine's timeline and CDF in one figure.

mod db_bench;
mod parse;
pub(super) mod table;

use super::config::BenchConfig;
use super::outcome::Outcome;
use super::workdir::WorkDir;
use serde_json::{json, Value};
use std::path::PathBuf;

/// Sibling directories (of the database directory) other engines use.
pub const SIBLINGS: &[&str] = &["rocksdb", "rocksdb-blob", "db_bench", "db_bench-scratch"];

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
    match in_process(cfg, work)? {
        Ok(v) => others.extend(v),
        Err(note) => notes.push(note),
    }
    if cfg.args.db_bench.exists() {
        let dirs = db_bench_dirs(cfg, work);
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

/// The in-process RocksDB engines' outcomes, or a note saying why there are none.
pub fn in_process_rocksdb(
    cfg: &BenchConfig,
    work: &WorkDir,
) -> Result<(Vec<Outcome>, Option<String>), String> {
    Ok(match in_process(cfg, work)? {
        Ok(v) => (v, None),
        Err(note) => (Vec::new(), Some(note)),
    })
}

/// db_bench's directories: `<db>-db_bench`, its WAL next to the PM directory (in its database
/// directory without `--pm_path`), and a scratch directory for its reports.
fn db_bench_dirs(cfg: &BenchConfig, work: &WorkDir) -> db_bench::DbBenchDirs {
    db_bench::DbBenchDirs {
        db: work.sibling("db_bench"),
        wal: pm_sibling(cfg, "db_bench-wal"),
        scratch: work.sibling("db_bench-scratch"),
    }
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

/// The in-process RocksDB engines, unless the run compresses: RocksDB is linked without LZ4
/// and zstd here (`Ok(Err(note))`; db_bench compresses as asked).
fn in_process(cfg: &BenchConfig, work: &WorkDir) -> Result<Result<Vec<Outcome>, String>, String> {
    let c = cfg.compression();
    if c != flatlsm::Compression::None {
        return Ok(Err(format!(
            "in-process RocksDB: linked without compression; skipped with --compression_type {c}"
        )));
    }
    run_in_process(cfg, work)
}

/// The in-process RocksDB engines: plain, then with integrated BlobDB (unless
/// `--rocksdb_blob=0`); `Ok(Err(note))` when this build has no RocksDB.
#[cfg(feature = "rocksdb")]
fn run_in_process(
    cfg: &BenchConfig,
    work: &WorkDir,
) -> Result<Result<Vec<Outcome>, String>, String> {
    let mut outcomes = Vec::new();
    for (name, min_blob_size) in rocksdb_variants(cfg) {
        outcomes.extend(run_rocksdb(cfg, work, name, min_blob_size)?);
    }
    Ok(Ok(outcomes))
}

/// (directory name, `min_blob_size`) of each in-process RocksDB engine. The blob threshold is
/// FlatLSM's `kv_separation_threshold`, so both engines separate the same values.
#[cfg(feature = "rocksdb")]
fn rocksdb_variants(cfg: &BenchConfig) -> Vec<(&'static str, Option<u64>)> {
    let mut v = vec![("rocksdb", None)];
    if cfg.args.rocksdb_blob {
        let threshold = cfg.options.kv_separation_threshold as u64;
        v.push(("rocksdb-blob", Some(threshold)));
    }
    v
}

/// One in-process RocksDB engine in `<db>-<name>` with its WAL in `<pm_path>-<name>-wal`
/// (in its database directory without `--pm_path`).
#[cfg(feature = "rocksdb")]
fn run_rocksdb(
    cfg: &BenchConfig,
    work: &WorkDir,
    name: &str,
    min_blob_size: Option<u64>,
) -> Result<Vec<Outcome>, String> {
    use super::engine::{Engine, RocksDbEngine, RocksDbSetup};
    let db = work.sibling(name);
    let wal = pm_sibling(cfg, &format!("{name}-wal"));
    let o = &cfg.options;
    let setup = RocksDbSetup {
        write_buffer_size: o.pmtable_size,
        max_write_buffer_number: o.max_write_buffer_number,
        block_cache_size: o.block_cache_size,
        block_size: o.block_size,
        background_jobs: o.flush_threads,
        min_blob_size,
    };
    // Each part of the benchmark list (split at `freshdb`) on its own database.
    let mut open = |part: &BenchConfig| -> Result<Box<dyn Engine>, String> {
        if !part.args.use_existing_db {
            clear(&db, wal.as_ref())?;
        }
        let engine = RocksDbEngine::open(&db, wal.as_deref(), &setup, part.args.sync)?;
        Ok(Box::new(engine))
    };
    let outcomes = super::suite::run_parts(cfg, &mut open)?;
    if !cfg.args.keep_db {
        clear(&db, wal.as_ref())?;
    }
    Ok(outcomes)
}

/// The in-process RocksDB engines; `Ok(Err(note))` when this build has no RocksDB.
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

#[cfg(test)]
mod tests {
    use super::*;
    use flatlsm::PmModeOption;

    fn resolve(args: &[&str]) -> BenchConfig {
        BenchConfig::resolve(crate::bench::flags::parse_for_test(args).unwrap()).unwrap()
    }

    #[test]
    fn no_pm_disk_keeps_pm_logs_and_every_wal_on_the_database_disk() {
        let cfg = resolve(&["--preset", "no-pm-disk", "--db", "/data/b/db"]);
        let o = &cfg.options;
        // PM Logs in <db>/pm (the engine's default), persisted with msync.
        assert_eq!(
            (o.pm_mode, &o.pm_path, &cfg.pm_path),
            (PmModeOption::Msync, &None, &None)
        );
        assert_eq!(
            (
                o.pmtable_size,
                o.max_write_buffer_number,
                o.flush_immutable_num
            ),
            (256 << 20, 6, 2)
        );
        assert_eq!(
            (o.l1_capacity, cfg.key_size, cfg.value_size),
            (8 << 30, 16, 4096)
        );
        assert_eq!(cfg.num, super::super::preset::PAPER_SCALED_BYTES / 4112);
        assert_eq!(cfg.benchmarks, ["fillrandom"]);
        assert!(!cfg.args.sync, "RocksDB's WAL is not synced either");
        // RocksDB's and db_bench's WALs stay in their database directories.
        let work = WorkDir::new(cfg.args.db.as_deref());
        assert_eq!(pm_sibling(&cfg, "rocksdb-wal"), None);
        let dirs = db_bench_dirs(&cfg, &work);
        assert_eq!((dirs.db, dirs.wal), ("/data/b/db-db_bench".into(), None));
    }

    #[test]
    fn flags_override_the_no_pm_disk_preset() {
        let cfg = resolve(&["--preset", "no-pm-disk", "--pm_mode", "auto", "--num", "10"]);
        assert_eq!((cfg.options.pm_mode, cfg.num), (PmModeOption::Auto, 10));
        let cfg = resolve(&["--preset=no-pm-disk", "--pm_path", "/data/pm"]);
        assert_eq!(cfg.options.pm_mode, PmModeOption::Msync);
        assert_eq!(
            pm_sibling(&cfg, "rocksdb-wal"),
            Some("/data/pm-rocksdb-wal".into())
        );
    }
}
