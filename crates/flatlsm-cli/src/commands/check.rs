//! `check`: verifies every checksum of a database's files without opening it for writing;
//! prints each problem with its file and offset and exits non-zero if there is any.

use crate::db_args::{require_database, DbArgs};
use flatlsm::inspect::check_database;
use std::path::Path;

/// Flags of `flatlsm check`.
#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    db: DbArgs,
    /// Also print notes (leftovers the next open removes).
    #[arg(long)]
    verbose: bool,
}

/// Runs the check; `Err` (exit code 1) when any problem is found.
pub fn check(a: CheckArgs) -> Result<(), String> {
    require_database(&a.db.db)?;
    let _lock = lock_existing(&a.db.db)?;
    let report = check_database(&a.db.db, &a.db.pm_dir()).map_err(|e| e.to_string())?;
    for p in &report.problems {
        crate::emit(&format!("problem: {p}"));
    }
    if a.verbose {
        for n in &report.notes {
            crate::emit(&format!("note: {n}"));
        }
    }
    let summary = format!(
        "checked {} files, {} records",
        report.files_checked, report.records_checked
    );
    if report.is_ok() {
        crate::emit(&format!("{summary}: OK"));
        Ok(())
    } else {
        Err(format!(
            "{summary}: {} problem(s) found",
            report.problems.len()
        ))
    }
}

/// Holds the database's lock while checking (files must not change underneath), without
/// creating anything: a database never opened has no `LOCK` and needs none.
fn lock_existing(db: &Path) -> Result<Option<std::fs::File>, String> {
    let path = db.join("LOCK");
    let file = match std::fs::OpenOptions::new().write(true).open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("opening {}: {e}", path.display())),
    };
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Err(format!(
            "database {} is locked by another process (close it first)",
            db.display()
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(format!("locking {}: {e}", path.display())),
    }
}
