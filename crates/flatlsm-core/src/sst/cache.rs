//! A sharded LRU cache of decoded data blocks, charged by bytes.
//!
//! Keys are `(file_number, block_offset)`; file numbers are never reused, so entries of deleted
//! tables are never hit again and simply age out (or are dropped by [`BlockCache::erase_file`]).
//! Thread-safety: `BlockCache` is `Send + Sync`; each shard has its own mutex, and the hit/miss
//! counters are atomics. Invariant per shard: `usage == sum of charges of resident blocks`
//! and `usage <= capacity` after every insert.

use super::block::Block;
use crate::pm::PmArena;
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Most shards a cache is split into.
const MAX_SHARDS: usize = 16;
/// Smallest capacity of a shard when there are several, so that a shard holds many blocks.
const MIN_SHARD_CAPACITY: usize = 512 << 10;

/// Cache key: table file number and block offset.
type Key = (u64, u64);

struct Slot {
    block: Arc<Block>,
    charge: usize,
    tick: u64,
}

/// One LRU shard: `lru` maps a recency tick to the key last used at that tick.
#[derive(Default)]
struct Shard {
    map: HashMap<Key, Slot>,
    lru: BTreeMap<u64, Key>,
    usage: usize,
    tick: u64,
}

impl Shard {
    fn get(&mut self, key: Key) -> Option<Arc<Block>> {
        self.tick += 1;
        let slot = self.map.get_mut(&key)?;
        self.lru.remove(&slot.tick);
        slot.tick = self.tick;
        self.lru.insert(self.tick, key);
        Some(Arc::clone(&slot.block))
    }

    fn remove(&mut self, key: Key) -> usize {
        let Some(slot) = self.map.remove(&key) else {
            return 0;
        };
        self.lru.remove(&slot.tick);
        self.usage -= slot.charge;
        slot.charge
    }

    /// Inserts and evicts least recently used blocks; returns (bytes added, bytes evicted).
    fn insert(&mut self, key: Key, block: Arc<Block>, capacity: usize) -> (usize, usize) {
        let mut freed = self.remove(key);
        let charge = block.charge();
        if charge > capacity {
            return (0, freed);
        }
        while self.usage + charge > capacity {
            let Some((_, victim)) = self.lru.pop_first() else {
                break;
            };
            if let Some(slot) = self.map.remove(&victim) {
                self.usage -= slot.charge;
                freed += slot.charge;
            }
        }
        self.tick += 1;
        self.lru.insert(self.tick, key);
        self.map.insert(
            key,
            Slot {
                block,
                charge,
                tick: self.tick,
            },
        );
        self.usage += charge;
        (charge, freed)
    }
}

/// Sharded LRU cache of decoded blocks, shared by all tables of a database.
pub struct BlockCache {
    /// Where cached blocks' bytes live when the cache is placed in PM (`None`: the heap).
    arena: Option<Arc<PmArena>>,
    shards: Vec<Mutex<Shard>>,
    shard_capacity: usize,
    usage: AtomicUsize,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl BlockCache {
    /// A cache holding at most about `capacity_bytes` of blocks (0 disables caching).
    pub fn new(capacity_bytes: usize) -> Arc<Self> {
        Self::with_arena(capacity_bytes, None)
    }

    /// A cache whose blocks' bytes live in `arena` (PM used as memory, the placement study's
    /// block cache in PM), charged up to 7/8 of the arena so fragmentation rarely refuses a
    /// block; a block the arena cannot hold is simply not cached.
    pub fn in_pm(arena: Arc<PmArena>) -> Arc<Self> {
        let capacity = arena.capacity() / 8 * 7;
        Self::with_arena(capacity, Some(arena))
    }

    fn with_arena(capacity_bytes: usize, arena: Option<Arc<PmArena>>) -> Arc<Self> {
        let n = (capacity_bytes / MIN_SHARD_CAPACITY).clamp(1, MAX_SHARDS);
        Arc::new(BlockCache {
            arena,
            shards: (0..n).map(|_| Mutex::new(Shard::default())).collect(),
            shard_capacity: capacity_bytes / n,
            usage: AtomicUsize::new(0),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        })
    }

    /// Bytes of blocks currently cached.
    pub fn usage(&self) -> usize {
        self.usage.load(Ordering::Relaxed)
    }

    /// Number of lookups that found their block.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Number of lookups that did not find their block.
    pub fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }

    /// Looks up a block and counts a hit or a miss.
    pub fn get(&self, file_number: u64, offset: u64) -> Option<Arc<Block>> {
        let key = (file_number, offset);
        let found = self.shard(key).lock().get(key);
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Caches a block (blocks larger than a shard's capacity are not cached).
    pub fn insert(&self, file_number: u64, offset: u64, block: Arc<Block>) {
        let block = match &self.arena {
            None => block,
            Some(arena) => match block.to_pm(arena) {
                Some(copy) => Arc::new(copy),
                None => return,
            },
        };
        let key = (file_number, offset);
        let (added, freed) = self
            .shard(key)
            .lock()
            .insert(key, block, self.shard_capacity);
        self.usage.fetch_add(added, Ordering::Relaxed);
        self.usage.fetch_sub(freed, Ordering::Relaxed);
    }

    /// Drops every cached block of `file_number` (for example after the table was deleted).
    pub fn erase_file(&self, file_number: u64) {
        for shard in &self.shards {
            let mut s = shard.lock();
            let keys: Vec<Key> = s
                .map
                .keys()
                .filter(|k| k.0 == file_number)
                .copied()
                .collect();
            let freed: usize = keys.into_iter().map(|k| s.remove(k)).sum();
            self.usage.fetch_sub(freed, Ordering::Relaxed);
        }
    }

    fn shard(&self, key: Key) -> &Mutex<Shard> {
        let h =
            key.0.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ key.1.wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
        &self.shards[(h >> 32) as usize % self.shards.len()]
    }
}
