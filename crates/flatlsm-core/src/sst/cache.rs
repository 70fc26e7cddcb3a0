//! The block cache: decoded data blocks keyed by `(file_number, block_offset)`, charged by
//! bytes ([`Block::charge`]), scan resistant. It also holds values read from value logs,
//! keyed by `(log number, record offset)` (RocksDB's blob cache sharing the block cache):
//! SSTs and value logs share one file-number space, so the keys never collide, and one
//! capacity bounds both. A cached value is a one-entry [`Block`] ([`Block::single_value`]),
//! counted apart ([`BlockCache::value_hits`] ...).
//!
//! Policy: `quick_cache`'s sync cache (a CLOCK-Pro variant close to S3-FIFO). A block read for
//! the first time enters a small *cold* queue and leaves it unless it is read again before it
//! reaches the queue's end; blocks read again move to the *hot* queue (most of the capacity),
//! and recently dropped keys are remembered (ghosts) so that a block read again soon after
//! enters hot directly. One long scan of blocks read once therefore passes through the cold
//! queue without pushing the hot blocks out, which an LRU does not survive. While the cache
//! is still filling up, new blocks go straight to hot.
//!
//! Deleted tables: file numbers are never reused, so a deleted table's blocks are never hit
//! again and correctness does not depend on dropping them; [`BlockCache::erase_file`] still
//! drops them at once (one pass over the resident blocks, as the LRU this replaced did) so
//! that their bytes, and in PM their arena space, are given back without waiting for them to
//! age out.
//!
//! PM placement ([`BlockCache::in_pm`]): a block is copied into the arena before it is
//! inserted; the copy's bytes are freed when the last `Arc` of it is dropped, that is when the
//! cache has dropped it (eviction, `erase_file`) and no reader holds it any more. Evicted
//! blocks are dropped after the shard's lock is released.
//!
//! Invariants: `usage() <= capacity` after every insert (per shard, `quick_cache` evicts before
//! it admits); a block larger than 90% of a shard is never cached. Thread-safety: `Send +
//! Sync`; each shard has its own lock, and the counters are relaxed atomics (each exact, not a
//! consistent cut).

use super::block::Block;
use crate::counter::StripedCounter;
use crate::pm::PmArena;
use quick_cache::sync::Cache;
use quick_cache::{DefaultHashBuilder, Lifecycle, OptionsBuilder, Weighter};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Most shards a cache is split into.
const MAX_SHARDS: usize = 16;
/// Smallest capacity of a shard when there are several, so that a shard holds many blocks.
const MIN_SHARD_CAPACITY: usize = 512 << 10;
/// The charge of a typical block (4 KiB of data plus its decoded keys and entry table), to
/// size the cache's tables and ghost list.
const TYPICAL_CHARGE: usize = 8 << 10;
/// A block is cached only if it takes at most this percentage of its shard (below
/// `quick_cache`'s hot share, 97%, past which it refuses a block and reports it evicted).
const LARGEST_PERCENT: u64 = 90;

/// Cache key: table file number and block offset.
type Key = (u64, u64);

/// Charges a block its [`Block::charge`] bytes.
#[derive(Clone)]
struct ByCharge;

impl Weighter<Key, Arc<Block>> for ByCharge {
    fn weight(&self, _key: &Key, block: &Arc<Block>) -> u64 {
        block.charge() as u64
    }
}

/// Counts evictions and keeps the evicted blocks to drop them outside the shard lock.
#[derive(Clone)]
struct CountEvictions(Arc<AtomicU64>);

impl Lifecycle<Key, Arc<Block>> for CountEvictions {
    type RequestState = Vec<Arc<Block>>;

    fn on_evict(&self, evicted: &mut Self::RequestState, _key: Key, block: Arc<Block>) {
        self.0.fetch_add(1, Ordering::Relaxed);
        evicted.push(block);
    }
}

/// Scan-resistant cache of decoded blocks, shared by all tables of a database.
pub struct BlockCache {
    /// Where cached blocks' bytes live when the cache is placed in PM (`None`: the heap).
    arena: Option<Arc<PmArena>>,
    blocks: Cache<Key, Arc<Block>, ByCharge, DefaultHashBuilder, CountEvictions>,
    capacity: usize,
    /// Lookups and inserts of SST blocks.
    blocks_seen: Counts,
    /// Lookups and inserts of value-log values.
    values_seen: Counts,
    evictions: Arc<AtomicU64>,
}

/// Hits, misses and inserts of one kind of entry.
#[derive(Default)]
struct Counts {
    hits: StripedCounter,
    misses: StripedCounter,
    inserts: StripedCounter,
}

impl BlockCache {
    /// A cache holding at most about `capacity_bytes` of blocks (0 disables caching).
    ///
    /// ```
    /// use flatlsm_core::sst::BlockCache;
    /// let cache = BlockCache::new(8 << 20);
    /// assert_eq!((cache.capacity(), cache.usage(), cache.hits()), (8 << 20, 0, 0));
    /// ```
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

    fn with_arena(capacity: usize, arena: Option<Arc<PmArena>>) -> Arc<Self> {
        let evictions = Arc::new(AtomicU64::new(0));
        let blocks = Cache::with_options(
            cache_options(capacity),
            ByCharge,
            DefaultHashBuilder::default(),
            CountEvictions(evictions.clone()),
        );
        Arc::new(BlockCache {
            arena,
            blocks,
            capacity,
            blocks_seen: Counts::default(),
            values_seen: Counts::default(),
            evictions,
        })
    }

    /// Bytes of blocks the cache may hold.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bytes of blocks and values currently cached.
    pub fn usage(&self) -> usize {
        self.blocks.weight() as usize
    }

    /// Number of lookups that found their block.
    pub fn hits(&self) -> u64 {
        self.blocks_seen.hits.get()
    }

    /// Number of lookups that did not find their block.
    pub fn misses(&self) -> u64 {
        self.blocks_seen.misses.get()
    }

    /// Number of blocks admitted to the cache.
    pub fn inserts(&self) -> u64 {
        self.blocks_seen.inserts.get()
    }

    /// Number of value lookups that found their value.
    pub fn value_hits(&self) -> u64 {
        self.values_seen.hits.get()
    }

    /// Number of value lookups that did not find their value.
    pub fn value_misses(&self) -> u64 {
        self.values_seen.misses.get()
    }

    /// Number of values admitted to the cache.
    pub fn value_inserts(&self) -> u64 {
        self.values_seen.inserts.get()
    }

    /// Number of blocks the cache dropped to make room (not counting [`BlockCache::erase_file`]).
    pub fn evictions(&self) -> u64 {
        self.evictions.load(Ordering::Relaxed)
    }

    /// Looks up a block and counts a hit or a miss.
    pub fn get(&self, file_number: u64, offset: u64) -> Option<Arc<Block>> {
        self.lookup(file_number, offset, &self.blocks_seen)
    }

    /// Caches a block (one too large for the cache, or that a PM arena has no room for, is
    /// not cached).
    pub fn insert(&self, file_number: u64, offset: u64, block: Arc<Block>) {
        self.admit(file_number, offset, block, &self.blocks_seen)
    }

    /// Looks up the value of the record at `offset` of value log `log_number` (a one-entry
    /// block: [`Block::value`] of entry 0), counting a value hit or miss.
    pub fn get_value(&self, log_number: u64, offset: u64) -> Option<Arc<Block>> {
        self.lookup(log_number, offset, &self.values_seen)
    }

    /// Caches the value of the record at `offset` of value log `log_number`, as
    /// [`BlockCache::insert`] caches a block.
    pub fn insert_value(&self, log_number: u64, offset: u64, value: Arc<Block>) {
        self.admit(log_number, offset, value, &self.values_seen)
    }

    fn lookup(&self, number: u64, offset: u64, counts: &Counts) -> Option<Arc<Block>> {
        let found = self.blocks.get(&(number, offset));
        let counter = match found.is_some() {
            true => &counts.hits,
            false => &counts.misses,
        };
        counter.add(1);
        found
    }

    fn admit(&self, number: u64, offset: u64, block: Arc<Block>, counts: &Counts) {
        if block.charge() as u64 > self.blocks.shard_capacity() / 100 * LARGEST_PERCENT {
            return;
        }
        let block = match &self.arena {
            None => block,
            Some(arena) => match block.to_pm(arena) {
                Some(copy) => Arc::new(copy),
                None => return,
            },
        };
        self.blocks.insert((number, offset), block);
        counts.inserts.add(1);
    }

    /// Drops every cached block (or value) of `file_number` (for example after the table or
    /// value log was deleted).
    pub fn erase_file(&self, file_number: u64) {
        self.blocks.retain(|key, _| key.0 != file_number);
    }
}

/// `quick_cache`'s options for `capacity` bytes: up to [`MAX_SHARDS`] shards of at least
/// [`MIN_SHARD_CAPACITY`] (a power of two; `quick_cache` uses fewer if a shard would hold
/// fewer than 32 typical blocks).
fn cache_options(capacity: usize) -> quick_cache::Options {
    let shards = (capacity / MIN_SHARD_CAPACITY).clamp(1, MAX_SHARDS);
    OptionsBuilder::new()
        .shards(1 << shards.ilog2())
        .weight_capacity(capacity as u64)
        .estimated_items_capacity((capacity / TYPICAL_CHARGE).max(1))
        .build()
        .expect("the two required options are set")
}
