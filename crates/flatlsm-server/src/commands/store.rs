//! The engine calls commands make, with engine errors turned into replies, and the size
//! check of values a command builds (APPEND, SETRANGE, INCRBYFLOAT).

use super::{engine_error, Ctx};
use crate::reply::Reply;
use flatlsm::WriteBatch;

/// A command's result: its reply, or the error reply that ended it early (both are sent).
pub type Outcome = Result<Reply, Reply>;

/// The reply of an [`Outcome`].
pub fn reply(outcome: Outcome) -> Reply {
    outcome.unwrap_or_else(|error| error)
}

impl Ctx<'_> {
    /// The value of `key`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, Reply> {
        self.shared.db.get(key).map_err(engine_error)
    }

    /// The values of `keys`, in order, all as of one moment (one batched engine read: the
    /// keys' lookups overlap their memory accesses).
    pub fn get_many(&self, keys: &[&[u8]]) -> Vec<Result<Option<Vec<u8>>, Reply>> {
        let values = self.shared.db.multi_get(keys);
        values
            .into_iter()
            .map(|v| v.map_err(engine_error))
            .collect()
    }

    /// Sets `key` (returns after the engine's write returned; synced under `--sync`).
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<(), Reply> {
        let opts = &self.shared.write_options;
        self.shared
            .db
            .put_opt(key, value, opts)
            .map_err(engine_error)
    }

    /// Deletes `key`.
    pub fn delete(&self, key: &[u8]) -> Result<(), Reply> {
        let opts = &self.shared.write_options;
        self.shared.db.delete_opt(key, opts).map_err(engine_error)
    }

    /// Applies `batch` atomically.
    pub fn write(&self, batch: &WriteBatch) -> Result<(), Reply> {
        let opts = &self.shared.write_options;
        self.shared.db.write_opt(batch, opts).map_err(engine_error)
    }

    /// Refuses a value a command would make longer than `--proto-max-bulk-len`.
    pub fn check_length(&self, len: usize) -> Result<(), Reply> {
        if len > self.shared.config.proto_max_bulk_len {
            return Err(Reply::err(
                "string exceeds maximum allowed size (proto-max-bulk-len)",
            ));
        }
        Ok(())
    }
}
