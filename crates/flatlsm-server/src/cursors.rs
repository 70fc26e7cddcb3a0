//! SCAN cursors. A cursor stands for the last key a SCAN call returned; the next call resumes
//! at the first key after it, so a scan is stable under writes: every key present from the
//! first call to the last is returned exactly once, keys added or removed meanwhile may or may
//! not be. Clients (redis-cli, redis-py) parse a cursor as a decimal integer, and keys are up
//! to 64 KiB, so the cursor is a number naming the key in a server-side table rather than the
//! key itself.
//!
//! The table keeps the newest [`MAX_CURSORS`] cursors and at most [`MAX_CURSOR_BYTES`] of keys;
//! an older cursor, or one from before a restart, gets `ERR invalid cursor` (numbers start at
//! a clock-derived base, so a restarted server does not take an old number for a new key).

use parking_lot::Mutex;
use std::collections::BTreeMap;

/// Most cursors remembered.
pub const MAX_CURSORS: usize = 65_536;
/// Most key bytes remembered for cursors.
pub const MAX_CURSOR_BYTES: usize = 64 << 20;

/// The cursor table.
pub struct Cursors {
    inner: Mutex<Table>,
}

struct Table {
    next: u64,
    keys: BTreeMap<u64, Vec<u8>>,
    bytes: usize,
}

impl Cursors {
    /// An empty table whose numbers start at a clock-derived base.
    pub fn new() -> Cursors {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        // Numbers stay below 2^62 so they never wrap, and never 0 (the end of a scan).
        let next = (nanos % (1 << 61)) + 1;
        Cursors {
            inner: Mutex::new(Table {
                next,
                keys: BTreeMap::new(),
                bytes: 0,
            }),
        }
    }

    /// A new cursor standing for `last_key`.
    pub fn issue(&self, last_key: Vec<u8>) -> u64 {
        let mut t = self.inner.lock();
        let id = t.next;
        t.next += 1;
        t.bytes += last_key.len();
        t.keys.insert(id, last_key);
        while t.keys.len() > MAX_CURSORS || t.bytes > MAX_CURSOR_BYTES {
            match t.keys.pop_first() {
                Some((_, key)) => t.bytes -= key.len(),
                None => break,
            }
        }
        id
    }

    /// The key cursor `id` stands for; `None` for an unknown or forgotten cursor.
    pub fn resume_after(&self, id: u64) -> Option<Vec<u8>> {
        self.inner.lock().keys.get(&id).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_resolve_until_the_table_forgets_them() {
        let cursors = Cursors::new();
        let first = cursors.issue(b"a".to_vec());
        assert_ne!(first, 0);
        assert_eq!(cursors.resume_after(first), Some(b"a".to_vec()));
        assert_eq!(cursors.resume_after(first + 1), None);
        for i in 0..MAX_CURSORS {
            cursors.issue(i.to_string().into_bytes());
        }
        assert_eq!(
            cursors.resume_after(first),
            None,
            "the oldest cursor is forgotten"
        );
    }
}
