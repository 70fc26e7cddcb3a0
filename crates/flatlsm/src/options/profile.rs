//! [`Profile`]: which design a database is, chosen when it is created and recorded in its
//! manifest. A name and a few facts per design; the designs themselves live in `designs/`.

use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// A design (the FlatLSM paper's system or one it is compared with).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Profile {
    /// FlatLSM: PMTables (DRAM index over a PM Log, no WAL) as L0, L1 runs merged into an
    /// Ordered-L1, L2 on SSD, key-value separation at flush.
    #[default]
    FlatLsm,
    /// NoveLSM's persistent memtable (the FlatLSM paper's "PM Memtable", Figs. 18–19):
    /// persistent skiplists in PM, no WAL, then level 0 and leveled SSD levels as in `Leveled`
    /// (`designs/leveled.rs`, `buffer/skiplist.rs`).
    NoveLsm,
    /// The RocksDB/LevelDB baseline: a DRAM memtable with a write-ahead log, level 0 of
    /// overlapping runs, leveled levels 1..6; Titan/BlobDB-style value separation when
    /// `kv_separation_threshold` is set (`designs/leveled.rs`).
    Leveled,
    /// MatrixKV: a DRAM memtable with its write-ahead log in PM, flushed into a matrix
    /// container in PM (RowTables, cross-row hints) that column compactions merge into L1 of a
    /// flattened leveled tree (`designs/matrixkv/`).
    MatrixKv,
    /// SLM-DB: persistent PM skiplists as memtables (no WAL), one level of SSTs, and a
    /// persistent B+-tree in PM indexing every key to its SST block (`designs/slmdb/`).
    SlmDb,
}

impl Profile {
    /// Every profile, in the order tables and `--compare profiles` list them.
    pub const ALL: [Profile; 5] = [
        Profile::FlatLsm,
        Profile::Leveled,
        Profile::NoveLsm,
        Profile::MatrixKv,
        Profile::SlmDb,
    ];

    /// The name recorded in the manifest and taken by `--profile`.
    pub fn name(self) -> &'static str {
        match self {
            Profile::FlatLsm => "flatlsm",
            Profile::Leveled => "leveled",
            Profile::NoveLsm => "novelsm",
            Profile::MatrixKv => "matrixkv",
            Profile::SlmDb => "slmdb",
        }
    }

    /// How stats, dumps and logs call `level` of this design's version.
    pub fn level_name(self, level: usize) -> String {
        match (self, level) {
            (Profile::FlatLsm, 0) => "L1 runs".to_string(),
            (Profile::FlatLsm, 1) => "L1".to_string(),
            (Profile::FlatLsm, 2) => "L2".to_string(),
            (_, l) => format!("L{l}"),
        }
    }

    /// How many levels of the version this design uses (stats list these).
    pub fn num_levels(self) -> usize {
        match self {
            Profile::FlatLsm => 3,
            Profile::SlmDb => 1,
            Profile::Leveled | Profile::NoveLsm | Profile::MatrixKv => crate::version::MAX_LEVELS,
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Profile {
    type Err = Error;

    fn from_str(s: &str) -> Result<Profile> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
                Error::InvalidArgument(format!(
                    "unknown profile '{s}' (expected one of: {})",
                    names.join(", ")
                ))
            })
    }
}
