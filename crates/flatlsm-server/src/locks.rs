//! The striped key locks: every command that writes takes the locks of its keys, so a
//! read-modify-write (INCR, APPEND, SET NX/XX/GET, GETSET, GETDEL, SETRANGE, MSETNX, DEL)
//! never interleaves with another write of the same key and no update is lost.
//!
//! Keys hash to one of [`STRIPES`] mutexes (two keys may share one; that only serializes
//! them). Invariant, so that two multi-key commands cannot deadlock: a command takes all its
//! stripes at once, in ascending stripe order, and holds them until its engine write
//! returned. Readers (GET, MGET, SCAN) take no lock: the engine's reads are consistent.

use parking_lot::{Mutex, MutexGuard};
use std::hash::{BuildHasher, RandomState};

/// Number of stripes: enough that unrelated keys of 50–1000 clients rarely share one.
pub const STRIPES: usize = 4096;

/// The lock table.
pub struct KeyLocks {
    stripes: Vec<Mutex<()>>,
    hasher: RandomState,
}

/// The held stripes of one command; dropping it releases them.
pub struct KeyGuard<'a> {
    _held: Vec<MutexGuard<'a, ()>>,
}

impl KeyLocks {
    /// A table of [`STRIPES`] unlocked stripes (a per-process random hash seed, so clients
    /// cannot pick keys that all collide).
    pub fn new() -> KeyLocks {
        KeyLocks {
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            hasher: RandomState::new(),
        }
    }

    fn stripe(&self, key: &[u8]) -> usize {
        (self.hasher.hash_one(key) % STRIPES as u64) as usize
    }

    /// Locks the stripes of `keys` (in ascending order, each once) until the guard drops.
    pub fn lock<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>) -> KeyGuard<'_> {
        let mut stripes: Vec<usize> = keys.into_iter().map(|k| self.stripe(k)).collect();
        stripes.sort_unstable();
        stripes.dedup();
        let held = stripes
            .into_iter()
            .map(|s| self.stripes[s].lock())
            .collect();
        KeyGuard { _held: held }
    }

    /// Locks the stripe of one key.
    pub fn lock_one(&self, key: &[u8]) -> KeyGuard<'_> {
        self.lock([key])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_multi_key_locks_taken_in_any_order_do_not_deadlock() {
        let locks = std::sync::Arc::new(KeyLocks::new());
        let keys: Vec<Vec<u8>> = (0..64).map(|i| format!("k{i}").into_bytes()).collect();
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let (locks, mut keys) = (locks.clone(), keys.clone());
                std::thread::spawn(move || {
                    keys.rotate_left(t * 7);
                    for _ in 0..200 {
                        let _g = locks.lock(keys.iter().map(|k| k.as_slice()));
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
    }
}
