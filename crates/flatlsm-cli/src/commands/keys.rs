//! `put`, `get`, `delete` (one key at a time) and `delete-range`. Writes are synced before the
//! command returns.

use crate::db_args::{DbArgs, Encoding};
use flatlsm::WriteOptions;

/// Flags of `flatlsm put`.
#[derive(clap::Args, Debug)]
pub struct PutArgs {
    #[command(flatten)]
    db: DbArgs,
    #[command(flatten)]
    enc: Encoding,
    /// The key.
    key: String,
    /// The value.
    value: String,
}

/// Flags of `flatlsm get` and `flatlsm delete`.
#[derive(clap::Args, Debug)]
pub struct KeyArgs {
    #[command(flatten)]
    db: DbArgs,
    #[command(flatten)]
    enc: Encoding,
    /// The key.
    key: String,
}

/// Flags of `flatlsm delete-range`.
#[derive(clap::Args, Debug)]
pub struct RangeArgs {
    #[command(flatten)]
    db: DbArgs,
    #[command(flatten)]
    enc: Encoding,
    /// The first key deleted.
    start: String,
    /// The first key kept after the range (exclusive).
    end: String,
}

/// Sets a key (durably: the write is synced).
pub fn put(a: PutArgs) -> Result<(), String> {
    let key = a.enc.decode("key", &a.key)?;
    let value = a.enc.decode("value", &a.value)?;
    let db = a.db.open()?;
    db.put_opt(
        &key,
        &value,
        &WriteOptions {
            sync: true,
            ..WriteOptions::default()
        },
    )
    .map_err(|e| e.to_string())?;
    db.close().map_err(|e| e.to_string())
}

/// Prints a key's value; a missing key is an error (exit code 1).
pub fn get(a: KeyArgs) -> Result<(), String> {
    let key = a.enc.decode("key", &a.key)?;
    let db = a.db.open_read_only()?;
    match db.get(&key).map_err(|e| e.to_string())? {
        Some(v) => {
            crate::emit(&a.enc.encode(&v));
            Ok(())
        }
        None => Err(format!("key {:?} not found", a.key)),
    }
}

/// Deletes a key (durably). Deleting a missing key is not an error, as in RocksDB.
pub fn delete(a: KeyArgs) -> Result<(), String> {
    let key = a.enc.decode("key", &a.key)?;
    let db = a.db.open()?;
    db.delete_opt(
        &key,
        &WriteOptions {
            sync: true,
            ..WriteOptions::default()
        },
    )
    .map_err(|e| e.to_string())?;
    db.close().map_err(|e| e.to_string())
}

/// Deletes every key in `[start, end)` with one range tombstone (durably).
pub fn delete_range(a: RangeArgs) -> Result<(), String> {
    let start = a.enc.decode("start", &a.start)?;
    let end = a.enc.decode("end", &a.end)?;
    let db = a.db.open()?;
    db.delete_range(&start, &end).map_err(|e| e.to_string())?;
    db.close().map_err(|e| e.to_string())
}
