//! Builds one block (data or index) in the LevelDB entry format with prefix compression.
//!
//! Invariant: keys are added in strictly increasing internal-key order (the table builder checks
//! this); every `interval`-th entry (every [`RESTART_INTERVAL`]-th, or every one for a direct
//! block, `block_direct.rs`) is stored with `shared = 0` and its offset is recorded in the
//! restart array. Single owner; not shared between threads.

use crate::coding::put_varint32;

/// Entries between restart points.
pub(crate) const RESTART_INTERVAL: usize = 16;

/// Accumulates entries of one block.
pub(crate) struct BlockBuilder {
    /// Entries between restart points.
    interval: usize,
    buf: Vec<u8>,
    restarts: Vec<u32>,
    counter: usize,
    entries: usize,
    last_key: Vec<u8>,
}

impl BlockBuilder {
    /// An empty block with prefix compression (a restart every [`RESTART_INTERVAL`] entries).
    pub(crate) fn new() -> Self {
        Self::with_interval(RESTART_INTERVAL)
    }

    /// An empty direct block: every entry a restart point, read in place (`block_direct.rs`).
    pub(crate) fn direct() -> Self {
        Self::with_interval(1)
    }

    fn with_interval(interval: usize) -> Self {
        BlockBuilder {
            interval,
            buf: Vec::new(),
            restarts: vec![0],
            counter: 0,
            entries: 0,
            last_key: Vec::new(),
        }
    }

    /// Appends an entry. Key and value lengths must fit in u32 (checked by the caller).
    pub(crate) fn add(&mut self, key: &[u8], value: &[u8]) {
        let shared = if self.counter < self.interval {
            common_prefix(&self.last_key, key)
        } else {
            self.restarts.push(self.buf.len() as u32);
            self.counter = 0;
            0
        };
        put_varint32(&mut self.buf, shared as u32);
        put_varint32(&mut self.buf, (key.len() - shared) as u32);
        put_varint32(&mut self.buf, value.len() as u32);
        self.buf.extend_from_slice(&key[shared..]);
        self.buf.extend_from_slice(value);
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.counter += 1;
        self.entries += 1;
    }

    /// Size the block would have if finished now.
    pub(crate) fn estimated_size(&self) -> usize {
        self.buf.len() + 4 * self.restarts.len() + 4
    }

    /// True if no entry was added since the last reset.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The last key added (empty if none).
    pub(crate) fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// Finishes the block, returns its contents and resets the builder for the next block.
    pub(crate) fn finish(&mut self) -> Vec<u8> {
        let mut out = std::mem::take(&mut self.buf);
        for r in &self.restarts {
            out.extend_from_slice(&r.to_le_bytes());
        }
        out.extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        *self = BlockBuilder::with_interval(self.interval);
        out
    }
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
