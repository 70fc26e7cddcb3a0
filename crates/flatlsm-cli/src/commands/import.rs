//! `import`: reads key-value pairs in the `kv_lines` format (docs/export-format.md) from a
//! file or stdin and writes them in write batches, each applied atomically; the database is
//! closed at the end, which makes every write durable.
//!
//! A malformed line stops the import: the lines before it are written (the batch in progress
//! included), nothing from it on, and the error names the line. So what an import leaves behind
//! never depends on the batch size.

use super::transfer_progress::TransferProgress;
use crate::db_args::{DbArgs, Encoding};
use flatlsm::kv_lines::LineFormat;
use flatlsm::{Db, WriteBatch};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// Flags of `flatlsm import`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Reads what `flatlsm export` writes (docs/export-format.md): one pair per \
    line, KEY, a tab, VALUE with \\\\ \\t \\n \\r \\xNN escapes, or with --hex HEXKEY, a space, \
    HEXVALUE. A malformed line stops the import with \"line N: what was expected\" and exit \
    code 1: the pairs of the lines before it are written and stay, nothing from that line on \
    is written. Every write is synced at the end (the database is closed), as after `put`."
)]
pub struct ImportArgs {
    #[command(flatten)]
    db: DbArgs,
    #[command(flatten)]
    enc: Encoding,
    /// Read from this file (default: stdin; `-` is stdin too).
    #[arg(long, short = 'i')]
    input: Option<PathBuf>,
    /// Pairs per write batch.
    #[arg(long = "batch-size", alias = "batch_size", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..))]
    batch_size: u64,
    /// Key and value bytes per write batch (a batch ends at whichever limit comes first).
    #[arg(long = "batch-bytes", alias = "batch_bytes", default_value_t = 4 << 20,
          value_parser = clap::value_parser!(u64).range(1..))]
    batch_bytes: u64,
    /// No progress bar and no summary line on stderr.
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// The input and its size, if it is a file.
type Input = (Box<dyn BufRead>, Option<u64>);

fn open_input(path: Option<&Path>) -> Result<Input, String> {
    let Some(path) = path.filter(|p| *p != Path::new("-")) else {
        return Ok((Box::new(BufReader::new(std::io::stdin())), None));
    };
    let file = std::fs::File::open(path).map_err(|e| format!("opening {}: {e}", path.display()))?;
    let size = file.metadata().ok().map(|m| m.len());
    Ok((Box::new(BufReader::with_capacity(1 << 20, file)), size))
}

/// Imports the input; prints a summary on stderr unless `--quiet`.
pub fn import(a: ImportArgs) -> Result<(), String> {
    let (input, total) = open_input(a.input.as_deref())?;
    let db = a.db.open()?;
    let progress = TransferProgress::new("import", a.quiet, total);
    let mut imp = Importer::new(&db, &a, &progress);
    let read = imp.read_all(input);
    let written = imp.write_batch();
    progress.finish();
    let closed = db.close().map_err(|e| e.to_string());
    written.and(read).and(closed)?;
    if !a.quiet {
        eprintln!(
            "imported {} pairs ({} bytes of keys and values)",
            imp.pairs, imp.bytes
        );
    }
    Ok(())
}

/// The import in progress: the batch being filled and what is written so far.
struct Importer<'a> {
    db: &'a Db,
    format: LineFormat,
    progress: &'a TransferProgress,
    batch: WriteBatch,
    /// Line numbers of the batch's first and last pair.
    batch_lines: (u64, u64),
    limits: (u64, u64),
    pairs: u64,
    bytes: u64,
    read: u64,
}

impl<'a> Importer<'a> {
    fn new(db: &'a Db, a: &ImportArgs, progress: &'a TransferProgress) -> Importer<'a> {
        Importer {
            db,
            format: LineFormat::new(a.enc.hex),
            progress,
            batch: WriteBatch::new(),
            batch_lines: (0, 0),
            limits: (a.batch_size, a.batch_bytes),
            pairs: 0,
            bytes: 0,
            read: 0,
        }
    }

    /// Reads and batches every line; stops at the first malformed one or read error.
    fn read_all(&mut self, mut input: Box<dyn BufRead>) -> Result<(), String> {
        let mut line = Vec::new();
        for number in 1u64.. {
            if !self.read_line(&mut input, &mut line, number)? {
                break;
            }
            let body = line.strip_suffix(b"\n").unwrap_or(&line);
            let parsed = self.format.parse_line(body);
            let (key, value) = parsed.map_err(|e| format!("line {number}: {e}"))?;
            self.add(number, &key, &value)?;
        }
        Ok(())
    }

    /// Reads line `number` into `line`; false at the end of the input.
    fn read_line(
        &mut self,
        input: &mut dyn BufRead,
        line: &mut Vec<u8>,
        number: u64,
    ) -> Result<bool, String> {
        line.clear();
        let n = input
            .read_until(b'\n', line)
            .map_err(|e| format!("reading line {number} of the input: {e}"))?;
        self.read += n as u64;
        Ok(n > 0)
    }

    /// Adds the pair of line `number`; writes the batch once it is full.
    fn add(&mut self, number: u64, key: &[u8], value: &[u8]) -> Result<(), String> {
        if self.batch.is_empty() {
            self.batch_lines.0 = number;
        }
        self.batch_lines.1 = number;
        self.batch.put(key, value);
        let full = self.batch.len() as u64 >= self.limits.0
            || self.batch.user_bytes() as u64 >= self.limits.1;
        if full {
            self.write_batch()?;
        }
        Ok(())
    }

    /// Writes the batch in progress (if any); a batch that fails is dropped, not retried.
    fn write_batch(&mut self) -> Result<(), String> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let (first, last) = self.batch_lines;
        let batch = std::mem::replace(&mut self.batch, WriteBatch::new());
        self.db
            .write(&batch)
            .map_err(|e| format!("writing the pairs of lines {first} to {last}: {e}"))?;
        self.pairs += batch.len() as u64;
        self.bytes += batch.user_bytes() as u64;
        self.progress.update(self.pairs, self.bytes, self.read);
        Ok(())
    }
}
