//! Where a benchmark's databases live, and the "fresh database" rule: unless
//! `--use_existing_db`, a run starts from an empty database, as db_bench's does. Only
//! directories that hold nothing but a previous database are cleared; anything else is refused.

use std::path::{Path, PathBuf};

/// The database directory of a run.
pub struct WorkDir {
    /// FlatLSM's database directory.
    pub db: PathBuf,
    /// True when the directory is ours to delete afterwards.
    pub temporary: bool,
}

impl WorkDir {
    /// Chooses the directory (`--db` or a fresh temporary one).
    pub fn new(db: Option<&Path>) -> WorkDir {
        match db {
            Some(d) => WorkDir {
                db: d.to_path_buf(),
                temporary: false,
            },
            None => WorkDir {
                db: std::env::temp_dir().join(format!("flatlsm-bench-{}", std::process::id())),
                temporary: true,
            },
        }
    }

    /// A sibling directory for another engine's database (`<db>-<suffix>`).
    pub fn sibling(&self, suffix: &str) -> PathBuf {
        let mut name = self.db.file_name().unwrap_or_default().to_os_string();
        name.push(format!("-{suffix}"));
        self.db.with_file_name(name)
    }

    /// Removes the temporary directory and its siblings.
    pub fn cleanup(&self, siblings: &[&str]) {
        if self.temporary {
            let _ = std::fs::remove_dir_all(&self.db);
            for s in siblings {
                let _ = std::fs::remove_dir_all(self.sibling(s));
            }
        }
    }
}

/// Empties `dir` for a fresh run. `is_db_file` says which names a database may contain;
/// a directory holding anything else is refused so a typo cannot delete user data.
pub fn clear_for_fresh_run(dir: &Path, is_db_file: &dyn Fn(&str) -> bool) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(()); // does not exist yet
    };
    let mut names = Vec::new();
    for e in entries {
        let e = e.map_err(|e| format!("listing {}: {e}", dir.display()))?;
        names.push(e.file_name().to_string_lossy().to_string());
    }
    if let Some(foreign) = names.iter().find(|n| !is_db_file(n)) {
        return Err(format!(
            "{} holds {foreign:?}, which is not a database file; refusing to clear it for a fresh run \
             (choose an empty directory, or pass --use_existing_db=1)",
            dir.display()
        ));
    }
    std::fs::remove_dir_all(dir).map_err(|e| format!("clearing {}: {e}", dir.display()))
}

/// Names a database directory of either engine may hold: FlatLSM's (the engine's own list)
/// and RocksDB's (`*.log` WAL, `LOG`, `MANIFEST-*`, `*.sst`, `*.dbtmp`) for `--compare`.
pub fn is_flatlsm_file(name: &str) -> bool {
    let ext = name.rsplit('.').next().unwrap_or("");
    flatlsm::tool_support::is_database_file_name(name)
        || name.starts_with("MANIFEST")
        || matches!(ext, "sst" | "log" | "dbtmp" | "pmlog")
}

/// Names in a PM directory (the engine's own list).
pub fn is_pm_file(name: &str) -> bool {
    flatlsm::tool_support::is_pm_dir_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_run_refuses_directories_with_foreign_files() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("db");
        std::fs::create_dir(&db).unwrap();
        std::fs::write(db.join("CURRENT"), "x").unwrap();
        std::fs::write(db.join("000001.sst"), "x").unwrap();
        std::fs::write(db.join("IDENTITY"), "x").unwrap();
        clear_for_fresh_run(&db, &is_flatlsm_file).unwrap();
        assert!(!db.exists());
        std::fs::create_dir(&db).unwrap();
        std::fs::write(db.join("thesis.tex"), "x").unwrap();
        let e = clear_for_fresh_run(&db, &is_flatlsm_file).unwrap_err();
        assert!(e.contains("thesis.tex"), "{e}");
        assert!(db.join("thesis.tex").exists());
    }

    /// Regression: the bench kept its own copy of the PM directory's file names and refused
    /// to clear a PM directory holding the DAX probe file of an open that a kill interrupted.
    #[test]
    fn fresh_run_clears_a_pm_dir_with_leftovers_of_an_interrupted_open() {
        let d = tempfile::tempdir().unwrap();
        let pm = d.path().join("pm");
        std::fs::create_dir(&pm).unwrap();
        for name in [
            "000004.pmlog",
            ".creating-000006.pmlog",
            "IDENTITY",
            "IDENTITY.tmp",
        ] {
            std::fs::write(pm.join(name), "x").unwrap();
        }
        clear_for_fresh_run(&pm, &is_pm_file).unwrap();
        assert!(!pm.exists());
    }
}
