//! [`WriteBatch`]: several updates applied atomically.
//!
//! Atomicity: a batch becomes one contiguous run of PM Log entries committed by a single
//! UsedSize store, and becomes visible to readers by a single advance of the visible sequence.

use crate::types::ValueKind;

/// One update in a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BatchOp {
    pub kind: ValueKind,
    pub key: Vec<u8>,
    pub value: Vec<u8>,
}

/// An ordered list of puts and deletes applied atomically by [`crate::db::Db::write`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteBatch {
    pub(crate) ops: Vec<BatchOp>,
    bytes: usize,
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a put of `value` at `key`.
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> &mut Self {
        self.push(ValueKind::Value, key.as_ref(), value.as_ref())
    }

    /// Adds a delete of `key`.
    pub fn delete(&mut self, key: impl AsRef<[u8]>) -> &mut Self {
        self.push(ValueKind::Deletion, key.as_ref(), &[])
    }

    fn push(&mut self, kind: ValueKind, key: &[u8], value: &[u8]) -> &mut Self {
        self.bytes += key.len() + value.len();
        self.ops.push(BatchOp {
            kind,
            key: key.to_vec(),
            value: value.to_vec(),
        });
        self
    }

    /// Number of updates.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// True if the batch holds no update.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Key + value bytes in the batch.
    pub fn user_bytes(&self) -> usize {
        self.bytes
    }

    /// Removes every update.
    pub fn clear(&mut self) {
        self.ops.clear();
        self.bytes = 0;
    }
}
