//! What [`super::repair`] reports: the files it kept, rewrote and moved to `lost/`, the files
//! the old manifest records that are missing, and why it judged that manifest stale.

use super::LOST_DIR;
use std::fmt;
use std::path::PathBuf;

/// What [`repair`](super::repair()) kept and what it could not recover.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RepairReport {
    /// The SSTs recorded (level 0 first, in its order).
    pub files_kept: Vec<PathBuf>,
    /// SSTs whose entries were rewritten into new files (in `files_kept`), because their
    /// versions interleave with another file's; the next open removes them.
    pub files_rewritten: Vec<PathBuf>,
    /// Files moved to `<db>/lost/`, each with why it could not be used (its old path), and
    /// files copied there before repair changed or freed them (a PM Log cut to its valid
    /// prefix, a design's store).
    pub files_lost: Vec<(PathBuf, String)>,
    /// Files the old manifest records that are not present, each with what it recorded it as.
    /// Their data may be in newer files (which repair keeps) or gone: repair cannot tell.
    pub files_missing: Vec<(PathBuf, String)>,
    /// Why the old manifest is stale (it records files that are missing, or write buffers that
    /// hold writes exist that it does not record: it lost records), one line per sign; empty
    /// when it describes the files present, or there was none. A stale manifest's levels are
    /// not kept: every SST present goes to level 0, as without a manifest.
    pub stale_manifest: Vec<String>,
    /// The value logs recorded.
    pub vlogs_kept: Vec<u64>,
    /// The redirect tables recorded (by file number).
    pub redirects_kept: Vec<u64>,
    /// The write buffers recorded as unflushed (PM Logs, skiplists or write-ahead logs).
    pub buffers_kept: Vec<u64>,
    /// The last sequence the new manifest records (open raises it past the buffers').
    pub last_sequence: u64,
    /// The new manifest.
    pub manifest: PathBuf,
    /// Other things worth knowing (old manifests moved aside, state that could not be rebuilt).
    pub notes: Vec<String>,
}

impl RepairReport {
    /// True if every file was accounted for: nothing went to `lost/` and nothing the old
    /// manifest records is missing. (`flatlsm repair` exits 1 otherwise.)
    pub fn is_complete(&self) -> bool {
        self.files_lost.is_empty() && self.files_missing.is_empty()
    }
}

impl fmt::Display for RepairReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "new manifest: {}", self.manifest.display())?;
        for sign in &self.stale_manifest {
            writeln!(f, "old manifest stale: {sign}")?;
        }
        writeln!(f, "SSTs kept: {}", self.files_kept.len())?;
        writeln!(f, "SSTs rewritten: {}", self.files_rewritten.len())?;
        writeln!(f, "value logs kept: {:?}", self.vlogs_kept)?;
        writeln!(f, "redirect tables kept: {:?}", self.redirects_kept)?;
        writeln!(f, "write buffers kept: {:?}", self.buffers_kept)?;
        writeln!(f, "last sequence: {}", self.last_sequence)?;
        writeln!(f, "files moved to {LOST_DIR}/: {}", self.files_lost.len())?;
        for (path, why) in &self.files_lost {
            writeln!(f, "  lost {}: {why}", path.display())?;
        }
        let missing = self.files_missing.len();
        writeln!(
            f,
            "files the old manifest records that are missing: {missing}"
        )?;
        for (path, what) in &self.files_missing {
            writeln!(f, "  missing {}: {what}", path.display())?;
        }
        for note in &self.notes {
            writeln!(f, "note: {note}")?;
        }
        Ok(())
    }
}
