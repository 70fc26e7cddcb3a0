//! `--compare profiles`: the benchmarks once per design (`flatlsm`, `leveled`, `novelsm`), each
//! from a fresh database with its profile's defaults and the flags given, then RocksDB when this
//! build has it in process; one table per benchmark with every engine and the ratios of FlatLSM
//! to each, and one timeline figure.

use super::compare;
use super::config::BenchConfig;
use super::outcome::Outcome;
use super::workdir::WorkDir;
use flatlsm::Profile;
use serde_json::{json, Value};

/// Runs every profile (FlatLSM's first, the reference of the ratios); returns the outcomes,
/// engines labelled by profile, and the comparison summary.
pub fn run(cfg: &BenchConfig, work: &WorkDir) -> Result<(Vec<Outcome>, Value), String> {
    let mut all = Vec::new();
    for profile in Profile::ALL {
        let one = cfg.with_profile(profile)?;
        println!("== profile {profile}");
        let mut outcomes = super::run_flatlsm(&one, work)?;
        super::remove_flatlsm_files(&one, work)?;
        for o in &mut outcomes {
            o.engine = engine_name(profile);
        }
        all.extend(outcomes);
    }
    let (rocksdb, note) = compare::in_process_rocksdb(cfg, work)?;
    all.extend(rocksdb);
    let summary = print_tables(cfg, &all, note);
    Ok((all, summary))
}

/// The engine label of a profile's runs.
fn engine_name(profile: Profile) -> String {
    match profile {
        Profile::FlatLsm => "FlatLSM".to_string(),
        p => p.name().to_string(),
    }
}

/// One table per benchmark (every engine that ran it, FlatLSM first).
fn print_tables(cfg: &BenchConfig, all: &[Outcome], note: Option<String>) -> Value {
    println!("\n=== Comparison of designs ===");
    if let Some(n) = &note {
        println!("note: {n}");
    }
    let mut tables = Vec::new();
    for bench in &cfg.benchmarks {
        let runs: Vec<&Outcome> = all.iter().filter(|o| &o.name == bench).collect();
        if runs.len() > 1 {
            let t = compare::table::table(bench, &runs);
            println!("{t}");
            let mut j = compare::table::table_json(bench, &runs);
            j["table"] = json!(t);
            tables.push(j);
        }
    }
    json!({ "notes": note.into_iter().collect::<Vec<_>>(), "tables": tables })
}
