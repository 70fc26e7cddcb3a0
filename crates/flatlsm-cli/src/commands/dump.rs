//! `dump`: prints one database file (SST, PM Log, manifest, value log, value-log redirect table
//! or CURRENT) record by record; for files holding keys, only a key range and up to a limit,
//! and for an SST its properties first (`sst_dump --show_properties`).

use crate::db_args::Encoding;
use flatlsm::inspect::{dump_file_with, DumpFormat, DumpOptions};
use std::path::PathBuf;

/// Flags of `flatlsm dump`.
#[derive(clap::Args, Debug)]
pub struct DumpArgs {
    /// The file (NNNNNN.sst, NNNNNN.pmlog, MANIFEST-NNNNNN, NNNNNN.vlog, NNNNNN.vredir or
    /// CURRENT).
    file: PathBuf,
    #[command(flatten)]
    enc: Encoding,
    /// Only records whose user key is at or after this one (SSTs, PM Logs, value logs and
    /// write-ahead logs).
    #[arg(long)]
    from: Option<String>,
    /// Only records whose user key is before this one (exclusive).
    #[arg(long)]
    to: Option<String>,
    /// Print at most this many records.
    #[arg(long)]
    limit: Option<u64>,
    /// Print an SST's properties first: file size, entries, data, index and filter blocks,
    /// smallest and largest key.
    #[arg(long = "show-properties", alias = "show_properties")]
    show_properties: bool,
}

/// The dump options the flags select.
fn options(a: &DumpArgs) -> Result<DumpOptions, String> {
    let format = if a.enc.hex {
        DumpFormat::Hex
    } else {
        DumpFormat::Text
    };
    let decode = |what, k: &Option<String>| k.as_deref().map(|k| a.enc.decode(what, k));
    let mut o = DumpOptions::new(format);
    o.from = decode("--from", &a.from).transpose()?;
    o.to = decode("--to", &a.to).transpose()?;
    o.limit = a.limit;
    o.show_properties = a.show_properties;
    Ok(o)
}

/// Dumps the file to stdout.
pub fn dump(a: DumpArgs) -> Result<(), String> {
    if !a.file.exists() {
        return Err(format!("{} does not exist", a.file.display()));
    }
    let opts = options(&a)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let n = dump_file_with(&a.file, &opts, &mut out).map_err(|e| e.to_string())?;
    drop(out);
    eprintln!("{n} records");
    Ok(())
}
