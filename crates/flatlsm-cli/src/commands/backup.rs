//! `checkpoint`, `backup` and `restore`: copies of a database made while it could keep
//! running (`Db::checkpoint`). A backup directory holds numbered backups `backup-NNNNNN`, each a
//! complete database whose files are copies (no hard links into the source); `restore` copies
//! one back as a new database.

use crate::db_args::DbArgs;
use flatlsm::CheckpointOptions;
use std::path::{Path, PathBuf};

/// Flags of `flatlsm checkpoint`.
#[derive(clap::Args, Debug)]
pub struct CheckpointArgs {
    #[command(flatten)]
    db: DbArgs,
    /// The new directory (must not exist); immutable files are hard-linked where possible.
    dir: PathBuf,
}

/// Flags of `flatlsm backup`.
#[derive(clap::Args, Debug)]
pub struct BackupArgs {
    #[command(flatten)]
    db: DbArgs,
    /// The backup directory (created if missing); the backup is its next `backup-NNNNNN`.
    #[arg(long = "backup-dir")]
    backup_dir: PathBuf,
}

/// Flags of `flatlsm restore`.
#[derive(clap::Args, Debug)]
pub struct RestoreArgs {
    /// The backup directory.
    #[arg(long = "backup-dir")]
    backup_dir: PathBuf,
    /// The backup number (default: the newest).
    #[arg(long)]
    backup: Option<u64>,
    /// The database to create (must not exist).
    #[arg(long)]
    db: PathBuf,
}

/// Makes an openable copy of the database in a new directory.
pub fn checkpoint(a: CheckpointArgs) -> Result<(), String> {
    let db = a.db.open()?;
    db.checkpoint(&a.dir).map_err(|e| e.to_string())?;
    crate::emit(&format!("checkpoint at {}", a.dir.display()));
    db.close().map_err(|e| e.to_string())
}

/// Copies the database into the next numbered backup.
pub fn backup(a: BackupArgs) -> Result<(), String> {
    std::fs::create_dir_all(&a.backup_dir)
        .map_err(|e| format!("creating {}: {e}", a.backup_dir.display()))?;
    let next = backups(&a.backup_dir)?.last().map_or(1, |n| n + 1);
    let dir = a.backup_dir.join(backup_name(next));
    let db = a.db.open()?;
    let copies = CheckpointOptions::default().hard_links(false);
    db.checkpoint_opt(&dir, &copies)
        .map_err(|e| e.to_string())?;
    crate::emit(&format!("backup {next} at {}", dir.display()));
    db.close().map_err(|e| e.to_string())
}

/// Copies a backup to a new database directory.
pub fn restore(a: RestoreArgs) -> Result<(), String> {
    let numbers = backups(&a.backup_dir)?;
    let n = match a.backup {
        Some(n) if numbers.contains(&n) => n,
        Some(n) => return Err(format!("backup {n} is not in {}", a.backup_dir.display())),
        None => *numbers
            .last()
            .ok_or_else(|| format!("{} holds no backup", a.backup_dir.display()))?,
    };
    if a.db.exists() {
        return Err(format!(
            "{} already exists: restore creates a new database",
            a.db.display()
        ));
    }
    copy_tree(&a.backup_dir.join(backup_name(n)), &a.db)?;
    crate::emit(&format!("restored backup {n} to {}", a.db.display()));
    Ok(())
}

fn backup_name(n: u64) -> String {
    format!("backup-{n:06}")
}

/// The backup numbers in `dir`, ascending.
fn backups(dir: &Path) -> Result<Vec<u64>, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("listing {}: {e}", dir.display()))?;
    let mut numbers: Vec<u64> = rd
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_prefix("backup-")?
                .parse()
                .ok()
        })
        .collect();
    numbers.sort_unstable();
    Ok(numbers)
}

/// Copies the directory `from` (files and subdirectories) to the new directory `to`, synced.
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    let err = |what: &str, p: &Path, e: std::io::Error| format!("{what} {}: {e}", p.display());
    std::fs::create_dir_all(to).map_err(|e| err("creating", to, e))?;
    for entry in std::fs::read_dir(from).map_err(|e| err("listing", from, e))? {
        let src = entry.map_err(|e| err("listing", from, e))?.path();
        let dst = to.join(src.file_name().unwrap_or_default());
        if src.is_dir() {
            copy_tree(&src, &dst)?;
            continue;
        }
        std::fs::copy(&src, &dst).map_err(|e| err("copying", &src, e))?;
        let synced = std::fs::File::open(&dst).and_then(|f| f.sync_all());
        synced.map_err(|e| err("syncing", &dst, e))?;
    }
    let synced = std::fs::File::open(to).and_then(|d| d.sync_all());
    synced.map_err(|e| err("syncing", to, e))
}
