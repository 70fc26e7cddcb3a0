//! `export`: streams every live key-value pair of a key range, in key order and as of one
//! moment (one iterator), as lines of the `kv_lines` format (docs/export-format.md), to stdout
//! or a file. The database is opened read-only (`Db::open_read_only`): nothing in it changes and
//! other readers may have it open too.
//!
//! A file is written under a temporary name (`FILE.partial`), synced and then renamed to
//! `FILE`, so `FILE` only ever appears complete; a failed export removes the temporary file.

use super::scan::{half_open, KeyRangeArgs};
use super::transfer_progress::TransferProgress;
use crate::db_args::{DbArgs, Encoding};
use flatlsm::kv_lines::LineFormat;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Flags of `flatlsm export`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Format (docs/export-format.md): one pair per line. Text (default): \
    KEY, a tab, VALUE, each escaped: printable ASCII as is, \\\\ for a backslash, \\t \\n \\r, \
    and \\xNN for any other byte. With --hex: HEXKEY, a space, HEXVALUE. Both round-trip any \
    bytes and are what `flatlsm import` reads."
)]
pub struct ExportArgs {
    #[command(flatten)]
    db: DbArgs,
    #[command(flatten)]
    enc: Encoding,
    #[command(flatten)]
    range: KeyRangeArgs,
    /// Write to this file (replaced only once the export is complete) instead of stdout.
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// No progress bar and no summary line on stderr.
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// Pairs and key-and-value bytes written so far.
#[derive(Default)]
struct Counts {
    pairs: u64,
    bytes: u64,
}

/// Exports the range to the output; prints a summary on stderr unless `--quiet`.
pub fn export(a: ExportArgs) -> Result<(), String> {
    let (lower, upper) = a.range.bounds(a.enc)?;
    let db = a.db.open_read_only()?;
    let pairs = db
        .range::<&[u8]>(half_open(lower.as_deref(), upper.as_deref()))
        .map_err(|e| e.to_string())?;
    let counts = write_output(&a, pairs)?;
    if !a.quiet {
        let (n, bytes) = (counts.pairs, counts.bytes);
        eprintln!("exported {n} pairs ({bytes} bytes of keys and values)");
    }
    db.close().map_err(|e| e.to_string())
}

/// Writes `pairs` to `--output` or stdout, with the progress bar.
fn write_output(a: &ExportArgs, pairs: flatlsm::DbIterator) -> Result<Counts, String> {
    let format = LineFormat::new(a.enc.hex);
    let progress = TransferProgress::new("export", a.quiet, None);
    let counts = match &a.output {
        Some(path) => to_file(path, |out| write_pairs(pairs, format, out, &progress)),
        None => to_stdout(|out| write_pairs(pairs, format, out, &progress)),
    };
    progress.finish();
    counts
}

/// An error while writing the output, or while reading the database.
enum Failure {
    Write(std::io::Error),
    Read(String),
}

/// Writes one line per pair; progress every 1,024 pairs.
fn write_pairs(
    pairs: flatlsm::DbIterator,
    format: LineFormat,
    out: &mut dyn Write,
    progress: &TransferProgress,
) -> Result<Counts, Failure> {
    let (mut counts, mut line) = (Counts::default(), Vec::new());
    for pair in pairs {
        let (k, v) = pair.map_err(|e| Failure::Read(e.to_string()))?;
        line.clear();
        format.write_pair(&k, &v, &mut line);
        out.write_all(&line).map_err(Failure::Write)?;
        counts.pairs += 1;
        counts.bytes += (k.len() + v.len()) as u64;
        if counts.pairs.is_multiple_of(1024) {
            progress.update(counts.pairs, counts.bytes, 0);
        }
    }
    out.flush().map_err(Failure::Write)?;
    Ok(counts)
}

/// Runs `write` on stdout; a reader that went away (e.g. `| head`) ends the export quietly.
fn to_stdout(
    write: impl FnOnce(&mut dyn Write) -> Result<Counts, Failure>,
) -> Result<Counts, String> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match write(&mut out) {
        Ok(c) => Ok(c),
        Err(Failure::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            Ok(Counts::default())
        }
        Err(Failure::Write(e)) => Err(format!("writing to stdout: {e}")),
        Err(Failure::Read(e)) => Err(e),
    }
}

/// Runs `write` on `path`'s temporary file, then syncs it and renames it to `path`.
fn to_file(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<Counts, Failure>,
) -> Result<Counts, String> {
    let partial = partial_name(path);
    let result = write_file(&partial, write).and_then(|c| {
        std::fs::rename(&partial, path)
            .map_err(|e| format!("renaming {} to {}: {e}", partial.display(), path.display()))?;
        Ok(c)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    result
}

fn write_file(
    partial: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<Counts, Failure>,
) -> Result<Counts, String> {
    let failed = |e: std::io::Error| format!("writing {}: {e}", partial.display());
    let file = File::create(partial).map_err(failed)?;
    let mut out = BufWriter::new(file);
    let counts = match write(&mut out) {
        Ok(c) => c,
        Err(Failure::Write(e)) => return Err(failed(e)),
        Err(Failure::Read(e)) => return Err(e),
    };
    let file = out.into_inner().map_err(|e| failed(e.into_error()))?;
    file.sync_all().map_err(failed)?;
    Ok(counts)
}

/// `FILE.partial`: where an export to `FILE` is written until it is complete.
fn partial_name(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}
