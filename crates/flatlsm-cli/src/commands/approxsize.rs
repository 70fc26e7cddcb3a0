//! `approxsize`: about how many bytes a key range takes in table files and value logs
//! (`Db::approximate_size`, RocksDB's `GetApproximateSizes`; `ldb approxsize`), from a
//! read-only open.

use super::scan::{half_open, KeyRangeArgs};
use crate::db_args::{DbArgs, Encoding};

/// Flags of `flatlsm approxsize`.
#[derive(clap::Args, Debug)]
pub struct ApproxSizeArgs {
    #[command(flatten)]
    db: DbArgs,
    #[command(flatten)]
    enc: Encoding,
    #[command(flatten)]
    range: KeyRangeArgs,
}

/// Prints the approximate size of the range in bytes, a number alone on its line.
pub fn approxsize(a: ApproxSizeArgs) -> Result<(), String> {
    let (lower, upper) = a.range.bounds(a.enc)?;
    let db = a.db.open_read_only()?;
    let range = half_open(lower.as_deref(), upper.as_deref());
    let bytes = db
        .approximate_size::<&[u8]>(range)
        .map_err(|e| e.to_string())?;
    crate::emit(&bytes.to_string());
    db.close().map_err(|e| e.to_string())
}
