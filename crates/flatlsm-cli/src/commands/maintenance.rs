//! `flush` and `compact`: run background work now and wait for it.

use crate::db_args::{DbArgs, Encoding};

/// Flags of `flatlsm flush`.
#[derive(clap::Args, Debug)]
pub struct FlushArgs {
    #[command(flatten)]
    db: DbArgs,
}

/// Flags of `flatlsm compact`.
#[derive(clap::Args, Debug)]
pub struct CompactArgs {
    #[command(flatten)]
    db: DbArgs,
    #[command(flatten)]
    enc: Encoding,
    /// First key of the range (default: the first key).
    #[arg(long)]
    from: Option<String>,
    /// Last key of the range (default: the last key).
    #[arg(long)]
    to: Option<String>,
}

/// Flushes every PMTable to the Ordered-L1.
pub fn flush(a: FlushArgs) -> Result<(), String> {
    let db = a.db.open()?;
    db.flush().map_err(|e| e.to_string())?;
    db.wait_for_background_work().map_err(|e| e.to_string())?;
    crate::emit(&format!("flushed; {} PMTable(s) left", db.stats().pmtables));
    db.close().map_err(|e| e.to_string())
}

/// Flushes, then compacts the key range down the tree.
pub fn compact(a: CompactArgs) -> Result<(), String> {
    let from = a
        .from
        .as_deref()
        .map(|k| a.enc.decode("--from", k))
        .transpose()?;
    let to =
        a.to.as_deref()
            .map(|k| a.enc.decode("--to", k))
            .transpose()?;
    let db = a.db.open()?;
    db.compact_range(from.as_deref(), to.as_deref())
        .map_err(|e| e.to_string())?;
    db.wait_for_background_work().map_err(|e| e.to_string())?;
    let s = db.stats();
    let levels: Vec<String> = s
        .levels
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, l)| format!("L{i} {} files", l.files))
        .collect();
    crate::emit(&format!("compacted; {}", levels.join(", ")));
    db.close().map_err(|e| e.to_string())
}
