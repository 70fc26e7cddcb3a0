//! The info log: `LOG` in the database directory, the human-readable record of what the
//! database did (RocksDB's info LOG). Open writes the version, the path and every option; then
//! one line per flush, compaction, value-log GC, PMTable GC, write-stall start and end,
//! background error and close. A line reads `2026/11/26-06:30:01.123456 <thread> <message>`:
//! the time in UTC to the microsecond, the writing thread's name (or its numeric id) and the
//! message on one line.
//!
//! Rotation: each open renames the previous `LOG` to `LOG.old.<micros>`, and so does a line
//! that takes `LOG` to `Options::max_log_file_size` bytes or more (0: never by size). The
//! rotated name's number is the time of rotation in microseconds since the Unix epoch, raised
//! above every rotated log present, so names sort in rotation order even if the clock steps
//! back. After each rotation all but the `Options::keep_log_file_num` newest rotated logs are
//! deleted.
//!
//! Failure rule: the LOG never fails a user operation or a job. The first I/O error (creating,
//! writing or rotating it) is reported once through the `log` facade, and the LOG is not written
//! again until the next open.
//!
//! Persist order / recovery: none. The LOG goes through the database's [`FileSystem`] (so an
//! in-memory test file system holds it too) but is never synced nor read back: a crash may cut
//! its last lines. The fault-injecting `CrashFs` neither counts nor fails its calls
//! (docs/design-decisions.md, "The info log").
//!
//! Thread-safety: one mutex around the file; a line (or open's header) is appended and flushed
//! under it, so lines of different threads never interleave.

use crate::file_names::{old_info_log_file_name, parse_old_info_log_file_name, INFO_LOG_FILE};
use crate::fs::{FileSystem, FsRef, WritableFile};
use crate::options::text::stored_values;
use crate::options::Options;
use parking_lot::Mutex;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// `event!(info_log, Warn, message)`: logs `message` through the `log` facade at that level,
/// with the calling module as its target (as a `log::warn!` there would), and appends it to
/// the info log.
macro_rules! event {
    ($log:expr, $level:ident, $message:expr) => {{
        let message: &str = &$message;
        log::log!(log::Level::$level, "{message}");
        $log.line(message);
    }};
}
pub(crate) use event;

/// The info log of one open database; a disabled one writes nothing.
pub(crate) struct InfoLog {
    writer: Mutex<Option<Writer>>,
}

/// The open `LOG` and how it rotates.
struct Writer {
    fs: FsRef,
    dir: PathBuf,
    file: Box<dyn WritableFile>,
    max_size: u64,
    keep: usize,
}

impl InfoLog {
    /// Starts the LOG of the database directory `dir`: the previous `LOG` is rotated, old
    /// rotated logs beyond `keep_log_file_num` deleted, and the header (version, `dir`, every
    /// option of `opts`) written. A failure is reported once and leaves the log disabled.
    pub fn open(fs: FsRef, dir: &Path, opts: &Options) -> InfoLog {
        let (max_size, keep) = (opts.max_log_file_size, opts.keep_log_file_num);
        let writer = Writer::start(fs, dir, max_size, keep)
            .map_err(|e| report(dir, "creating", &e))
            .ok();
        let log = InfoLog {
            writer: Mutex::new(writer),
        };
        log.write(&header(dir, opts));
        log
    }

    /// Appends one line with `message` (newlines in it become spaces).
    pub fn line(&self, message: &str) {
        self.write(&[message.to_string()]);
    }

    /// Appends one line per message, in one write; disables the log on an I/O error.
    fn write(&self, messages: &[String]) {
        let mut guard = self.writer.lock();
        let Some(w) = guard.as_mut() else {
            return;
        };
        let (stamp, thread) = (timestamp(SystemTime::now()), thread_label());
        let text: String = messages
            .iter()
            .map(|m| format!("{stamp} {thread} {}\n", m.replace(['\n', '\r'], " ")))
            .collect();
        if let Err(e) = w.append(&text) {
            report(&w.dir, "writing", &e);
            *guard = None;
        }
    }
}

impl Writer {
    fn start(fs: FsRef, dir: &Path, max_size: u64, keep: usize) -> io::Result<Writer> {
        let path = dir.join(INFO_LOG_FILE);
        if fs.exists(&path) {
            retire(&*fs, dir, keep)?;
        }
        let file = fs.create(&path)?;
        let dir = dir.to_path_buf();
        Ok(Writer {
            fs,
            dir,
            file,
            max_size,
            keep,
        })
    }

    /// Appends `text`, hands it to the OS, and rotates once the file reached `max_size`.
    fn append(&mut self, text: &str) -> io::Result<()> {
        self.file.append(text.as_bytes())?;
        self.file.flush()?;
        if self.max_size > 0 && self.file.len() >= self.max_size {
            self.rotate()?;
        }
        Ok(())
    }

    /// Continues in a fresh `LOG`, whose first line names the rotated one.
    fn rotate(&mut self) -> io::Result<()> {
        let old = retire(&*self.fs, &self.dir, self.keep)?;
        self.file = self.fs.create(&self.dir.join(INFO_LOG_FILE))?;
        let stamp = timestamp(SystemTime::now());
        let first = format!("{stamp} {} continued from {old}\n", thread_label());
        self.file.append(first.as_bytes())?;
        self.file.flush()
    }
}

/// Renames `LOG` to a new `LOG.old.<micros>` (module docs), then deletes the oldest rotated
/// logs beyond `keep`; returns the new name.
fn retire(fs: &dyn FileSystem, dir: &Path, keep: usize) -> io::Result<String> {
    let mut old = rotated_logs(fs, dir)?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH);
    let now = now.unwrap_or_default().as_micros() as u64;
    let micros = now.max(old.last().map_or(0, |m| m + 1));
    let name = old_info_log_file_name(micros);
    fs.rename(&dir.join(INFO_LOG_FILE), &dir.join(&name))?;
    old.push(micros);
    for m in &old[..old.len().saturating_sub(keep)] {
        fs.remove_file(&dir.join(old_info_log_file_name(*m)))?;
    }
    Ok(name)
}

/// The numbers of the rotated logs in `dir`, oldest first.
fn rotated_logs(fs: &dyn FileSystem, dir: &Path) -> io::Result<Vec<u64>> {
    let names = fs.list_dir(dir)?;
    let mut old: Vec<u64> = names
        .iter()
        .filter_map(|n| parse_old_info_log_file_name(n))
        .collect();
    old.sort_unstable();
    Ok(old)
}

/// Reports the LOG's first failure; nothing more is written to it until the next open.
fn report(dir: &Path, what: &str, e: &io::Error) {
    let path = dir.join(INFO_LOG_FILE);
    log::warn!(
        "{what} the info log {} failed: {e}; it is not written again until the database is reopened",
        path.display()
    );
}

/// Open's first lines: the version, the directory, then every option, one per line.
fn header(dir: &Path, opts: &Options) -> Vec<String> {
    let mut lines = vec![
        format!("FlatLSM version {}", env!("CARGO_PKG_VERSION")),
        format!("DB path: {}", dir.display()),
    ];
    for (section, name, value) in stored_values(opts) {
        let name = crate::options::text::qualified(section, name);
        lines.push(format!("Options.{name}: {value}"));
    }
    let custom = |set: bool| if set { "custom" } else { "default" };
    lines.extend([
        format!("Options.create_if_missing: {}", opts.create_if_missing),
        format!("Options.error_if_exists: {}", opts.error_if_exists),
        format!("Options.allow_missing_pm: {}", opts.allow_missing_pm),
        format!(
            "Options.wal_point_in_time_recovery: {}",
            opts.wal_point_in_time_recovery
        ),
        format!(
            "Options.file_system: {}",
            custom(opts.file_system.is_some())
        ),
        format!("Options.pm_device: {}", custom(opts.pm_device.is_some())),
    ]);
    lines
}

/// The calling thread's name, or its numeric id; no whitespace.
fn thread_label() -> String {
    let t = std::thread::current();
    let label = match t.name() {
        Some(name) => name.to_string(),
        None => format!("{:?}", t.id()),
    };
    let label = label.trim_start_matches("ThreadId(").trim_end_matches(')');
    label.replace(char::is_whitespace, "_")
}

/// `now` as `YYYY/MM/DD-hh:mm:ss.uuuuuu` in UTC (RocksDB's layout).
fn timestamp(now: SystemTime) -> String {
    let d = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    let (days, secs) = (d.as_secs() / 86_400, d.as_secs() % 86_400);
    let (y, m, day) = civil_from_days(days);
    let (hh, mm, ss) = (secs / 3600, secs / 60 % 60, secs % 60);
    let micros = d.subsec_micros();
    format!("{y:04}/{m:02}/{day:02}-{hh:02}:{mm:02}:{ss:02}.{micros:06}")
}

/// The (year, month, day) of `days` after 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let (era, doe) = (z / 146_097, z % 146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + u64::from(month <= 2), month, day)
}

#[cfg(test)]
#[path = "info_log_tests.rs"]
mod tests;
