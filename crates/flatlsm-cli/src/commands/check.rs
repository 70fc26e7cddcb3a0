//! `check`: verifies every checksum of a database's files without opening it for writing;
//! prints each problem with its file and offset and exits non-zero if there is any.

use crate::db_args::{require_database, DbArgs};
use flatlsm::inspect::check_database_with_wal;

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
    // Files must not change underneath: a reader's lock (beside other readers, never beside a
    // writer); a database never opened has no LOCK and needs none.
    let _lock = match a.db.db.join("LOCK").exists() {
        true => {
            Some(flatlsm::inspect::DirLock::acquire_shared(&a.db.db).map_err(|e| e.to_string())?)
        }
        false => None,
    };
    let report = check_database_with_wal(&a.db.db, &a.db.pm_dir(), &a.db.wal_dir())
        .map_err(|e| e.to_string())?;
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
