//! `dump`: prints one database file (SST, PM Log, manifest, value log, value-log redirect table
//! or CURRENT) record by record.

use flatlsm::inspect::{dump_file, DumpFormat};
use std::path::PathBuf;

/// Flags of `flatlsm dump`.
#[derive(clap::Args, Debug)]
pub struct DumpArgs {
    /// The file (NNNNNN.sst, NNNNNN.pmlog, MANIFEST-NNNNNN, NNNNNN.vlog, NNNNNN.vredir or
    /// CURRENT).
    file: PathBuf,
    /// Print keys and values in hexadecimal.
    #[arg(long)]
    hex: bool,
}

/// Dumps the file to stdout.
pub fn dump(a: DumpArgs) -> Result<(), String> {
    if !a.file.exists() {
        return Err(format!("{} does not exist", a.file.display()));
    }
    let format = if a.hex {
        DumpFormat::Hex
    } else {
        DumpFormat::Text
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let n = dump_file(&a.file, format, &mut out).map_err(|e| e.to_string())?;
    drop(out);
    eprintln!("{n} records");
    Ok(())
}
