//! `repair`: rebuilds a database's manifest from the SSTs, value logs and write buffers
//! present (`flatlsm::repair`, RocksDB's `ldb repair`), printing what it kept, what it moved
//! to `<db>/lost/` and what a stale old manifest records that is missing. The database must
//! not be open elsewhere (repair takes its lock).

use crate::db_args::DbArgs;

/// Flags of `flatlsm repair`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Every SST that verifies is kept: at its level when the old manifest is \
readable and current, else at level 0. A manifest is stale when files it records are missing or \
write buffers hold writes it does not record (CURRENT names an older copy): then every SST goes \
to level 0 and the missing files are listed. Files that cannot be used are moved to <db>/lost/ \
(never deleted, never overwriting an earlier copy there) and listed; a PM Log damaged inside keeps \
its valid prefix, the whole log copied to lost/. Exit code 0 when every file was accounted for; 1 \
when any file was moved to lost/ or a file the old manifest records is missing (the database is \
repaired and opens, but that data may be missing), or when repair failed. The profile is the \
stored OPTIONS file's, or --profile. SLM-DB's B+-tree is rebuilt; MatrixKV's rows are written as \
level-0 SSTs.\n\nExample: flatlsm repair --db /tmp/mydb"
)]
pub struct RepairArgs {
    #[command(flatten)]
    db: DbArgs,
}

/// Runs the repair and prints its report; `Err` (exit code 1) unless every file was accounted
/// for.
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
    Err(format!("repaired, but {}", unaccounted(&report, &a.db.db)))
}

/// What the report could not account for, in one line.
fn unaccounted(report: &flatlsm::RepairReport, db: &std::path::Path) -> String {
    let mut parts = Vec::new();
    if !report.files_lost.is_empty() {
        parts.push(format!(
            "{} file(s) could not be recovered (moved to {}/)",
            report.files_lost.len(),
            db.join(flatlsm::LOST_DIR).display()
        ));
    }
    if !report.files_missing.is_empty() {
        parts.push(format!(
            "{} file(s) the old manifest records are missing (the manifest was stale; their \
             data may be in the files kept, or lost)",
            report.files_missing.len()
        ));
    }
    parts.join("; ")
}
