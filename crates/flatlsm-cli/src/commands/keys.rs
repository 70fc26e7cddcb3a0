//! `put`, `get` and `delete`: one key at a time. Writes are synced before the command returns.

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
    let db = a.db.open()?;
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
