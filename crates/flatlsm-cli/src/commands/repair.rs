//! `repair`: rebuilds a database's manifest from the SSTs, value logs and write buffers
//! present (`flatlsm::repair`, RocksDB's `ldb repair`), printing what it kept and what it moved
//! to `<db>/lost/`. The database must not be open elsewhere (repair takes its lock).

use crate::db_args::DbArgs;

/// Flags of `flatlsm repair`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Every SST that verifies becomes a file of level 0; files that cannot \
be used are moved to <db>/lost/ (never deleted) and listed. Exit code 0 when everything was \
kept; 1 when any file was moved to lost/ (the database is repaired and opens, but those files' \
data is missing) or when repair failed. The profile is the stored OPTIONS file's, or --profile. \
SLM-DB's B+-tree is rebuilt; MatrixKV's rows are written as level-0 SSTs.\n\nExample: flatlsm repair --db /tmp/mydb"
)]
pub struct RepairArgs {
    #[command(flatten)]
    db: DbArgs,
}

/// Runs the repair and prints its report; `Err` (exit code 1) if anything was lost.
pub fn repair(a: RepairArgs) -> Result<(), String> {
    if !a.db.db.is_dir() {
        return Err(format!("database {} does not exist", a.db.db.display()));
    }
    let opts = a.db.options()?;
    let report = flatlsm::repair(&a.db.db, opts).map_err(|e| e.to_string())?;
    for line in report.to_string().lines() {
        crate::emit(line);
    }
    if report.is_complete() {
        return Ok(());
    }
    Err(format!(
        "repaired, but {} file(s) could not be recovered (moved to {}/)",
        report.files_lost.len(),
        a.db.db.join(flatlsm::LOST_DIR).display()
    ))
}
