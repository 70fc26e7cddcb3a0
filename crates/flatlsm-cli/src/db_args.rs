//! The flags every database command shares (`--db`, `--pm-path`, ...), and how the CLI opens a
//! database: never creating one unless asked, and with one-line errors saying what to do.
//!
//! An existing database opens with the options stored with it (its newest OPTIONS file,
//! `flatlsm::load_options`), each overridden by a flag given on the command line; a database
//! without an OPTIONS file (written before they existed) opens with the defaults and the flags,
//! as before. Every such flag is an `Option` (or a switch that is off unless given), so "given"
//! needs no `ArgMatches::value_source`. The per-open switches (`--create-if-missing`,
//! `--allow-missing-pm`, `--wal-point-in-time`) are never stored: each command decides them.

use crate::parse_pm_mode;
use flatlsm::{Compression, Db, Options, Profile};
use std::path::{Path, PathBuf};

/// Where the database lives and how to open it.
#[derive(clap::Args, Clone, Debug)]
pub struct DbArgs {
    /// Database directory.
    #[arg(long)]
    pub db: PathBuf,
    /// PM directory (default: the database's stored one, else pm inside the --db directory).
    /// Must be the one the database was created with.
    #[arg(long = "pm-path", alias = "pm_path")]
    pub pm_path: Option<PathBuf>,
    /// PM mode: auto, msync or emulated (DRAM; lost at reboot). Default: the database's stored
    /// mode, else auto.
    #[arg(long = "pm-mode", alias = "pm_mode")]
    pub pm_mode: Option<String>,
    /// Design of a database being created: flatlsm (default). An existing database opens as
    /// the profile it was created with; naming another one is refused.
    #[arg(long)]
    pub profile: Option<String>,
    /// Directory of the write-ahead logs (profile leveled; default: the database's stored one,
    /// else the database directory).
    #[arg(long = "wal-dir", alias = "wal_dir")]
    pub wal_dir: Option<PathBuf>,
    /// Create the database if it does not exist.
    #[arg(long = "create-if-missing")]
    pub create_if_missing: bool,
    /// Bytes of PM for the B+-tree of an `slmdb` database being created (default 1 GiB: about
    /// 8 million keys of up to 32 bytes). An existing tree keeps its size.
    #[arg(long = "btree-size", alias = "btree_size")]
    pub btree_size: Option<u64>,
    /// Open even though the PM directory lost its contents, accepting the loss of the writes
    /// that were only in PM (e.g. emulated PM after a reboot).
    #[arg(long = "allow-missing-pm")]
    pub allow_missing_pm: bool,
    /// Designs with write-ahead logs: recover up to the first hole in the logs (damage in a
    /// log before the newest, a missing log) and drop every write after it, instead of
    /// refusing to open.
    #[arg(long = "wal-point-in-time")]
    pub wal_point_in_time: bool,
    /// Compression of the SSTs this command writes (flush, compaction), at every level: none,
    /// lz4, zstd or zstd:LEVEL (default: none for flush outputs and L1, lz4 below). Tables
    /// already written keep theirs.
    #[arg(long)]
    pub compression: Option<String>,
}

/// The compression `--compression` names (`none`, `lz4`, `zstd`, `zstd:LEVEL`), if given.
fn parse_compression(name: Option<&str>) -> Result<Option<Compression>, String> {
    name.map(str::parse)
        .transpose()
        .map_err(|e: flatlsm::Error| format!("--compression: {e}"))
}

impl DbArgs {
    /// The write-ahead log directory these flags select.
    pub fn wal_dir(&self) -> PathBuf {
        match self.options() {
            Ok(o) => o.wal_dir_for(&self.db),
            Err(_) => self.wal_dir.clone().unwrap_or_else(|| self.db.clone()),
        }
    }

    /// The PM directory these flags and the stored options select.
    pub fn pm_dir(&self) -> PathBuf {
        match self.options() {
            Ok(o) => o.pm_path.unwrap_or_else(|| self.db.join("pm")),
            Err(_) => self.pm_path.clone().unwrap_or_else(|| self.db.join("pm")),
        }
    }

    /// The profile to open with: `--profile`, else the database's own, else the default.
    fn profile(&self) -> Result<Profile, String> {
        if let Some(name) = &self.profile {
            return name.parse().map_err(|e: flatlsm::Error| e.to_string());
        }
        let recorded = flatlsm::profile_of(&self.db).map_err(|e| e.to_string())?;
        Ok(recorded.unwrap_or_default())
    }

    /// The options to open with: the stored ones (else the defaults of the database's
    /// profile), then the flags given.
    pub fn options(&self) -> Result<Options, String> {
        let mut o = match self.stored_options()? {
            Some(stored) => stored,
            None => Options::default().profile(self.profile()?),
        };
        self.apply_flags(&mut o)?;
        Ok(o)
    }

    /// The database's stored options; `None` for a database without an OPTIONS file.
    fn stored_options(&self) -> Result<Option<Options>, String> {
        flatlsm::load_options(&self.db).map_err(|e| {
            format!(
                "{e} (the database's stored options: remove that OPTIONS file to open with the \
                 previous one, or with the defaults if there is none)"
            )
        })
    }

    /// Overrides `o` with every flag given.
    fn apply_flags(&self, o: &mut Options) -> Result<(), String> {
        if let Some(name) = &self.profile {
            o.profile = name.parse().map_err(|e: flatlsm::Error| e.to_string())?;
        }
        if let Some(size) = self.btree_size {
            o.slmdb.btree_size = size;
        }
        if let Some(dir) = &self.wal_dir {
            o.wal_dir = Some(dir.clone());
        }
        if let Some(dir) = &self.pm_path {
            o.pm_path = Some(dir.clone());
        }
        if let Some(mode) = &self.pm_mode {
            o.pm_mode = parse_pm_mode(mode)?;
        }
        if let Some(c) = parse_compression(self.compression.as_deref())? {
            o.compression_per_level = vec![c];
        }
        o.create_if_missing = self.create_if_missing;
        o.allow_missing_pm = self.allow_missing_pm;
        o.wal_point_in_time_recovery = self.wal_point_in_time;
        Ok(())
    }

    /// Opens the database; a missing directory is refused unless `--create-if-missing`.
    pub fn open(&self) -> Result<Db, String> {
        if !self.create_if_missing {
            require_database(&self.db)?;
        }
        Db::open(&self.db, self.options()?).map_err(|e| e.to_string())
    }

    /// Opens the existing database for reading only (`Db::open_read_only`): nothing in it or
    /// its PM directory changes, and other readers may have it open too.
    pub fn open_read_only(&self) -> Result<Db, String> {
        require_database(&self.db)?;
        Db::open_read_only(&self.db, self.options()?).map_err(|e| e.to_string())
    }
}

/// A one-line error unless `db` is an existing FlatLSM database directory.
pub fn require_database(db: &Path) -> Result<(), String> {
    if !db.exists() {
        return Err(format!(
            "database {} does not exist (to create it, pass --create-if-missing to put or import)",
            db.display()
        ));
    }
    if !db.is_dir() {
        return Err(format!("{} is not a directory", db.display()));
    }
    if !db.join("CURRENT").exists() {
        return Err(format!(
            "{} is not a FlatLSM database (no CURRENT file); check the --db path",
            db.display()
        ));
    }
    Ok(())
}

/// How keys and values are given on the command line and printed.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct Encoding {
    /// Keys and values are given and printed in hexadecimal.
    #[arg(long)]
    pub hex: bool,
}

impl Encoding {
    /// Decodes a key or value given on the command line.
    pub fn decode(self, what: &str, s: &str) -> Result<Vec<u8>, String> {
        if !self.hex {
            return Ok(s.as_bytes().to_vec());
        }
        if !s.len().is_multiple_of(2) {
            return Err(format!("{what} {s:?} is not hex: odd number of digits"));
        }
        (0..s.len())
            .step_by(2)
            .map(|i| {
                u8::from_str_radix(&s[i..i + 2], 16)
                    .map_err(|_| format!("{what} {s:?} is not hex: bad digits at {i}"))
            })
            .collect()
    }

    /// Renders bytes for output: hex, or text with non-printable bytes as `\xNN`.
    pub fn encode(self, b: &[u8]) -> String {
        if self.hex {
            flatlsm::tool_support::hex_bytes(b)
        } else {
            flatlsm::tool_support::escape_bytes(b)
        }
    }
}
