//! [`ArenaIndex`]: the DRAM skiplist of a PMTable, allocated in an arena of 64-bit words, as
//! RocksDB's memtable is (one bump allocation per entry, no per-entry `malloc`, no epoch-based
//! reclamation: nothing is ever removed, and the whole arena is dropped with the table).
//!
//! Layout of a node at word address `a` (addresses are global word numbers; 0 is "none"):
//! `a+0` trailer (seq << 8 | kind), `a+1` log offset, `a+2` value length,
//! `a+3` key length (low 32 bits) | height (bits 32..40), `a+4 ..` `height` links (addresses of
//! the next node at each level), then the user key packed big-endian into words (zero-padded).
//! Comparing two keys word by word as integers is the same as comparing their bytes (with the
//! shorter key first on a tie): a zero pad byte is below any real byte, and a key is only
//! padded where it has ended.
//!
//! Links are made in sorted batches (`links.rs`): an insert writes its node and records it in
//! the point index (which serves point reads and tells the insert which versions of its key
//! exist), and leaves it *pending*; the writer links pending nodes a batch at a time, in key
//! order, each search starting from the one before (a finger): a few steps per node instead of
//! a search from the top (about forty cache misses on a table of a million entries, most of a
//! small write's time). Every skiplist walk starts with [`ArenaIndex::link_pending`], which
//! links what waits, so an ordered reader misses no node inserted before it began.
//!
//! Invariants:
//! - One writer at a time (`writer` mutex). Readers lock it only to link pending nodes (the
//!   first call of a walk, when any wait); point reads through the point index never lock.
//! - A node's words are written before it is linked: each link is published with a `Release`
//!   store and read with `Acquire`, so a reader that reaches a node sees all of its words (and
//!   the chunk holding it, which the writer set before).
//! - Nodes are never removed or changed once linked; an address stays valid for the index's life.
//! - Order: user key ascending, then trailer descending (newest first), as internal keys.
//! - Each inserted node is recorded in the point index (`point_index.rs`: a key's newest node)
//!   after its words are written, under the writer lock and before the insert returns, so
//!   before the write's sequence is published. It is linked then or in a later batch, always
//!   before a walk that begins after the insert returned.
//! - `pending` is 0 only when every node is linked (stored with `Release` after the links).
//!
//! All of it is safe Rust: every shared word is an atomic.

use super::links::PendingLinks;
use super::log::EntryOffset;
use super::point_index::{key_hash, Nodes, Point, PointIndex};
use crate::error::{Error, Result};
use parking_lot::Mutex;
use std::cmp::Ordering;
use std::sync::atomic::{
    AtomicU64, AtomicUsize, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
};
use std::sync::OnceLock;

/// Tallest tower (RocksDB's default for its skiplist memtable).
pub const MAX_HEIGHT: usize = 12;
/// A node gets one more level with probability 1/BRANCHING.
const BRANCHING: u64 = 4;
/// Words per arena chunk (512 KiB). A node never straddles two chunks.
const CHUNK_WORDS: usize = 1 << 16;
/// Fixed words before a node's links.
const NODE_FIXED_WORDS: usize = 4;

/// Address of an index node (never 0).
pub type NodeRef = u64;

/// A node at each level (0: the head), e.g. a search's predecessors.
pub type Fingers = [NodeRef; MAX_HEIGHT];

/// What a node records about its log entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeInfo {
    /// Sequence number << 8 | kind.
    pub trailer: u64,
    /// Where the entry is in the PM Log.
    pub offset: EntryOffset,
    /// Length of the entry's value.
    pub value_len: usize,
}

/// Other versions of the key of a node just inserted (0: none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Versions {
    /// A newer version of the key, if the index holds one (an older entry replayed after a
    /// newer one).
    pub newer: NodeRef,
    /// The version the node replaces as the key's newest.
    pub replaced: NodeRef,
}

/// Writer-only state.
struct WriterState {
    /// Next free word.
    next_free: u64,
    rng: u64,
    /// Nodes written but not linked yet.
    links: PendingLinks,
}

/// A skiplist of (user key, trailer) → [`NodeInfo`] in an arena (module documentation).
pub struct ArenaIndex {
    chunks: Box<[OnceLock<Box<[AtomicU64]>>]>,
    head: [AtomicU64; MAX_HEIGHT],
    height: AtomicUsize,
    len: AtomicUsize,
    /// Nodes not linked yet (`WriterState::links`' count).
    pending: AtomicUsize,
    writer: Mutex<WriterState>,
    /// Each key's newest node, for point reads (written under `writer`).
    points: PointIndex,
}

/// Words a key of `len` bytes takes.
fn key_words(len: usize) -> usize {
    len.div_ceil(8)
}

/// Word `i` of `key` packed big-endian, zero-padded past its end.
fn key_word(key: &[u8], i: usize) -> u64 {
    crate::types::word_at(key, i * 8)
}

impl ArenaIndex {
    /// An empty index sized for the entries of a log of `log_capacity` bytes: every entry takes
    /// at least 21 log bytes and at most 8× as many arena bytes, so the chunk directory can
    /// never run out for such a log.
    pub fn new(log_capacity: usize) -> Self {
        let chunks = (log_capacity.saturating_mul(8) / (CHUNK_WORDS * 8)) + 2;
        ArenaIndex {
            chunks: (0..chunks).map(|_| OnceLock::new()).collect(),
            head: Default::default(),
            height: AtomicUsize::new(1),
            len: AtomicUsize::new(0),
            pending: AtomicUsize::new(0),
            writer: Mutex::new(WriterState {
                next_free: 1,
                rng: 0x9E37_79B9_7F4A_7C15,
                links: PendingLinks::default(),
            }),
            points: PointIndex::default(),
        }
    }

    /// An index whose inserts link from the first one on (no lazy links), for the tests of
    /// the linking writer.
    #[cfg(test)]
    pub fn linking_eagerly(log_capacity: usize) -> Self {
        let index = Self::new(log_capacity);
        index.writer.lock().links.set_lazy(0);
        index
    }

    /// Nodes written but not linked yet.
    #[cfg(test)]
    pub fn pending_links(&self) -> usize {
        self.pending.load(Acquire)
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.len.load(Acquire)
    }

    /// True if no node was inserted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of DRAM the index holds: its arena chunks and its point index.
    pub fn memory_bytes(&self) -> usize {
        let chunks = self.chunks.iter().filter(|c| c.get().is_some()).count();
        chunks * CHUNK_WORDS * 8 + self.points.memory_bytes()
    }

    /// Bytes of the point index's tables.
    #[cfg(test)]
    pub fn point_index_bytes(&self) -> usize {
        self.points.memory_bytes()
    }

    fn word(&self, addr: u64) -> &AtomicU64 {
        let chunk = (addr as usize) / CHUNK_WORDS;
        // Invariant: a reachable address lies in a chunk set before the node was linked.
        let words = self.chunks[chunk]
            .get()
            .expect("index chunk of a linked node");
        &words[(addr as usize) % CHUNK_WORDS]
    }

    /// The node after `node` (`0` = the head) at `level`; 0 if none.
    fn link(&self, node: NodeRef, level: usize) -> NodeRef {
        match node {
            0 => self.head[level].load(Acquire),
            n => self
                .word(n + (NODE_FIXED_WORDS + level) as u64)
                .load(Acquire),
        }
    }

    fn set_link(&self, node: NodeRef, level: usize, to: NodeRef) {
        match node {
            0 => self.head[level].store(to, Release),
            n => self
                .word(n + (NODE_FIXED_WORDS + level) as u64)
                .store(to, Release),
        }
    }

    fn key_len_and_height(&self, node: NodeRef) -> (usize, usize) {
        let w = self.word(node + 3).load(Relaxed);
        ((w & 0xFFFF_FFFF) as usize, (w >> 32) as usize)
    }

    /// What `node` records.
    pub fn info(&self, node: NodeRef) -> NodeInfo {
        NodeInfo {
            trailer: self.word(node).load(Relaxed),
            offset: EntryOffset::restore(self.word(node + 1).load(Relaxed)),
            value_len: self.word(node + 2).load(Relaxed) as usize,
        }
    }

    /// Length of `node`'s user key.
    pub fn user_key_len(&self, node: NodeRef) -> usize {
        self.key_len_and_height(node).0
    }

    /// Word address of `node`'s first key word, and the key's length.
    fn key_start(&self, node: NodeRef) -> (u64, usize) {
        let (len, height) = self.key_len_and_height(node);
        (node + (NODE_FIXED_WORDS + height) as u64, len)
    }

    /// Appends `node`'s user key to `dst`.
    pub fn append_user_key(&self, node: NodeRef, dst: &mut Vec<u8>) {
        let (start, len) = self.key_start(node);
        let end = dst.len() + len;
        for i in 0..key_words(len) {
            dst.extend_from_slice(&self.word(start + i as u64).load(Relaxed).to_be_bytes());
        }
        dst.truncate(end);
    }

    /// Appends `node`'s internal key (user key + little-endian trailer) to `dst`.
    pub fn append_internal_key(&self, node: NodeRef, dst: &mut Vec<u8>) {
        self.append_user_key(node, dst);
        dst.extend_from_slice(&self.info(node).trailer.to_le_bytes());
    }

    /// Word `i` of the key that starts at word `start` and is `len` bytes long (0 past its end).
    fn key_word_at(&self, (start, len): (u64, usize), i: usize) -> u64 {
        match i < key_words(len) {
            true => self.word(start + i as u64).load(Relaxed),
            false => 0,
        }
    }

    /// Compares `node`'s user key with `key`.
    pub fn compare_user_key(&self, node: NodeRef, key: &[u8]) -> Ordering {
        let mine = self.key_start(node);
        for i in 0..key_words(mine.1).max(key_words(key.len())) {
            let (a, b) = (self.key_word_at(mine, i), key_word(key, i));
            if a != b {
                return a.cmp(&b);
            }
        }
        mine.1.cmp(&key.len())
    }

    /// Compares two nodes as internal keys (user key ascending, then trailer descending).
    fn compare_nodes(&self, a: NodeRef, b: NodeRef) -> Ordering {
        let (ka, kb) = (self.key_start(a), self.key_start(b));
        for i in 0..key_words(ka.1).max(key_words(kb.1)) {
            let (x, y) = (self.key_word_at(ka, i), self.key_word_at(kb, i));
            if x != y {
                return x.cmp(&y);
            }
        }
        let trailers = || self.word(b).load(Relaxed).cmp(&self.word(a).load(Relaxed));
        ka.1.cmp(&kb.1).then_with(trailers)
    }

    /// Compares `node` with the internal key (`key`, `trailer`).
    fn compare(&self, node: NodeRef, key: &[u8], trailer: u64) -> Ordering {
        self.compare_user_key(node, key)
            .then_with(|| trailer.cmp(&self.word(node).load(Relaxed)))
    }

    /// True if `node` comes before the target (`key`, `trailer`): strictly, or also when equal
    /// if `or_equal`.
    fn before(&self, node: NodeRef, key: &[u8], trailer: u64, or_equal: bool) -> bool {
        match self.compare(node, key, trailer) {
            Ordering::Less => true,
            Ordering::Equal => or_equal,
            Ordering::Greater => false,
        }
    }

    /// Walks down from the top: the last node before the target at each level (0 = head) is
    /// written to `prevs`; returns the first node not before the target.
    fn search(&self, key: &[u8], trailer: u64, or_equal: bool, prevs: &mut [NodeRef]) -> NodeRef {
        let mut x = 0;
        let mut level = self.height.load(Acquire) - 1;
        loop {
            let next = self.link(x, level);
            if next != 0 && self.before(next, key, trailer, or_equal) {
                x = next;
                continue;
            }
            if let Some(p) = prevs.get_mut(level) {
                *p = x;
            }
            if level == 0 {
                return next;
            }
            level -= 1;
        }
    }

    /// What the point index knows of `key`: its newest node, that it has none, or nothing.
    pub fn newest(&self, key: &[u8]) -> Point {
        self.points.find(self, key, key_hash(key))
    }

    /// The first node at or after (`key`, `trailer`); `None` if there is none.
    pub fn lower_bound(&self, key: &[u8], trailer: u64) -> Option<NodeRef> {
        self.link_pending();
        Some(self.search(key, trailer, false, &mut [])).filter(|&n| n != 0)
    }

    /// The first node strictly after (`key`, `trailer`).
    #[cfg(test)]
    pub fn after(&self, key: &[u8], trailer: u64) -> Option<NodeRef> {
        self.link_pending();
        Some(self.search(key, trailer, true, &mut [])).filter(|&n| n != 0)
    }

    /// The last node strictly before (`key`, `trailer`).
    pub fn before_key(&self, key: &[u8], trailer: u64) -> Option<NodeRef> {
        self.last_before(key, trailer, false)
    }

    /// The last node at or before (`key`, `trailer`).
    pub fn at_or_before(&self, key: &[u8], trailer: u64) -> Option<NodeRef> {
        self.last_before(key, trailer, true)
    }

    fn last_before(&self, key: &[u8], trailer: u64, or_equal: bool) -> Option<NodeRef> {
        self.link_pending();
        let mut prevs = [0; MAX_HEIGHT];
        self.search(key, trailer, or_equal, &mut prevs);
        Some(prevs[0]).filter(|&n| n != 0)
    }

    /// The first node.
    pub fn first(&self) -> Option<NodeRef> {
        self.link_pending();
        Some(self.link(0, 0)).filter(|&n| n != 0)
    }

    /// The last node.
    pub fn last(&self) -> Option<NodeRef> {
        self.link_pending();
        let mut x = 0;
        for level in (0..self.height.load(Acquire)).rev() {
            while self.link(x, level) != 0 {
                x = self.link(x, level);
            }
        }
        Some(x).filter(|&n| n != 0)
    }

    /// The node after `node`.
    pub fn next(&self, node: NodeRef) -> Option<NodeRef> {
        Some(self.link(node, 0)).filter(|&n| n != 0)
    }

    /// Starts loading the node after `node`, so that a cursor's next step finds it on its way
    /// (nodes lie in insert order, not key order: each step is a cache miss otherwise). A
    /// plain load whose value is unused: the core goes on with the caller's work meanwhile.
    pub fn touch_next(&self, node: NodeRef) {
        if let Some(next) = self.next(node) {
            std::hint::black_box(self.word(next + 3).load(Relaxed));
        }
    }

    /// The node before `node` (a search: nodes have no back links).
    pub fn prev(&self, node: NodeRef) -> Option<NodeRef> {
        let mut key = Vec::new();
        self.append_user_key(node, &mut key);
        self.before_key(&key, self.info(node).trailer)
    }

    /// Every node in order.
    pub fn iter(&self) -> impl Iterator<Item = NodeRef> + '_ {
        std::iter::successors(self.first(), move |&n| self.next(n))
    }

    /// Inserts (`key`, `info.trailer`) → `info`. The pair must not be in the index yet.
    /// Returns the other versions of `key` the index holds.
    pub fn insert(&self, key: &[u8], info: NodeInfo) -> Result<Versions> {
        let mut w = self.writer.lock();
        let height = random_height(&mut w.rng);
        let node = self.allocate(&mut w, NODE_FIXED_WORDS + height + key_words(key.len()))?;
        self.fill(node, key, info, height);
        let versions = match self.points.record(self, key, key_hash(key), node) {
            Point::Unknown => self.link_now(&mut w, node, key, info.trailer),
            known => self.defer(&mut w, node, known),
        };
        self.len.fetch_add(1, Release);
        Ok(versions)
    }

    /// Leaves `node` pending (the writer links some pending nodes at each insert); its key's
    /// versions are what the point index held before it (`prior`).
    fn defer(&self, w: &mut WriterState, node: NodeRef, prior: Point) -> Versions {
        w.links.push(self, node);
        self.pending.store(w.links.count(), Release);
        match prior {
            Point::Newest(p) if self.newer(p, node) => Versions {
                newer: p,
                replaced: 0,
            },
            Point::Newest(p) => Versions {
                newer: 0,
                replaced: p,
            },
            _ => Versions {
                newer: 0,
                replaced: 0,
            },
        }
    }

    /// Links `node` at once, after every pending node, and finds its key's versions around it
    /// (for a node the point index could not record).
    fn link_now(&self, w: &mut WriterState, node: NodeRef, key: &[u8], trailer: u64) -> Versions {
        self.link_all(w);
        let mut prevs = [0; MAX_HEIGHT];
        self.search(key, trailer, false, &mut prevs);
        let version = |n: NodeRef| match n != 0 && self.compare_user_key(n, key).is_eq() {
            true => n,
            false => 0,
        };
        let replaced = version(self.link(prevs[0], 0));
        self.link_at(node, &prevs);
        Versions {
            newer: version(prevs[0]),
            replaced,
        }
    }

    /// Links every pending node, so that a walk that starts now misses no inserted node.
    /// Cheap when none waits (one atomic load); otherwise takes the writer lock.
    pub fn link_pending(&self) {
        if self.pending.load(Acquire) != 0 {
            self.link_all(&mut self.writer.lock());
        }
    }

    fn link_all(&self, w: &mut WriterState) {
        w.links.link_all(self);
        self.pending.store(0, Release);
    }

    /// Sorts nodes as internal keys: by their first three key words (most keys are shorter
    /// than 24 bytes: no node is read again), then in full.
    pub(super) fn sort_nodes(&self, nodes: &mut Vec<NodeRef>) {
        let prefix = |n: NodeRef| {
            let k = self.key_start(n);
            let w = |i| self.key_word_at(k, i);
            ([w(0), w(1), w(2)], n)
        };
        let mut keyed: Vec<([u64; 3], NodeRef)> = nodes.iter().map(|&n| prefix(n)).collect();
        keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| self.compare_nodes(a.1, b.1)));
        nodes.clear();
        nodes.extend(keyed.iter().map(|k| k.1));
    }

    /// Links `node`, which follows every node `prevs` holds, searching from `prevs` (the
    /// predecessors of the node linked before it); leaves `prevs` at its own predecessors, or
    /// at it where it has a level.
    ///
    /// A finger search: it climbs from level 0 only while the next node one level up is still
    /// before `node`, then walks down from there. Levels above the climb keep their
    /// predecessor unread: their next node comes at or after the one that stopped the climb,
    /// so after `node` too. A node `g` places after the previous one costs about
    /// 2·log₄(g) comparisons, not two per level of the whole list.
    pub(super) fn link_from(&self, node: NodeRef, prevs: &mut Fingers, key: &mut Vec<u8>) {
        key.clear();
        self.append_user_key(node, key);
        let trailer = self.word(node).load(Relaxed);
        let top = self.climb(prevs, key, trailer);
        let mut moved = false;
        for level in (0..=top).rev() {
            // If the level above moved its finger, the node it reached lies past the previous
            // node, so at or past `prevs[level]`; else `prevs[level]` is the later of the two.
            let from = match moved {
                true => prevs[level + 1],
                false => prevs[level],
            };
            let x = self.advance(from, level, key, trailer);
            moved = x != prevs[level];
            prevs[level] = x;
        }
        self.link_at(node, prevs);
        let height = self.key_len_and_height(node).1;
        prevs[..height].fill(node);
    }

    /// The highest level whose finger must move for (`key`, `trailer`): the climb stops
    /// below the first level whose finger's next node is not before it.
    fn climb(&self, prevs: &Fingers, key: &[u8], trailer: u64) -> usize {
        let height = self.height.load(Relaxed);
        let mut level = 0;
        while level + 1 < height {
            let next = self.link(prevs[level + 1], level + 1);
            if next == 0 || !self.before(next, key, trailer, false) {
                break;
            }
            level += 1;
        }
        level
    }

    /// From `x` along `level`: the last node before (`key`, `trailer`).
    fn advance(&self, mut x: NodeRef, level: usize, key: &[u8], trailer: u64) -> NodeRef {
        loop {
            let next = self.link(x, level);
            if next == 0 || !self.before(next, key, trailer, false) {
                return x;
            }
            x = next;
        }
    }

    /// Links `node` after `prevs[level]` at each of its levels, bottom first.
    fn link_at(&self, node: NodeRef, prevs: &[NodeRef; MAX_HEIGHT]) {
        let height = self.key_len_and_height(node).1;
        for (level, &prev) in prevs.iter().enumerate().take(height) {
            self.word(node + (NODE_FIXED_WORDS + level) as u64)
                .store(self.link(prev, level), Relaxed);
        }
        if height > self.height.load(Relaxed) {
            self.height.store(height, Release);
        }
        for (level, &prev) in prevs.iter().enumerate().take(height) {
            self.set_link(prev, level, node);
        }
    }

    /// Writes a node's fixed words and key (not yet linked).
    fn fill(&self, node: NodeRef, key: &[u8], info: NodeInfo, height: usize) {
        self.word(node).store(info.trailer, Relaxed);
        self.word(node + 1).store(info.offset.get(), Relaxed);
        self.word(node + 2).store(info.value_len as u64, Relaxed);
        let shape = key.len() as u64 | (height as u64) << 32;
        self.word(node + 3).store(shape, Relaxed);
        let start = node + (NODE_FIXED_WORDS + height) as u64;
        for i in 0..key_words(key.len()) {
            self.word(start + i as u64).store(key_word(key, i), Relaxed);
        }
    }

    /// Allocates `words` contiguous words in one chunk.
    fn allocate(&self, w: &mut WriterState, words: usize) -> Result<NodeRef> {
        let offset_in_chunk = w.next_free as usize % CHUNK_WORDS;
        if offset_in_chunk + words > CHUNK_WORDS {
            w.next_free += (CHUNK_WORDS - offset_in_chunk) as u64;
        }
        let node = w.next_free;
        let chunk = node as usize / CHUNK_WORDS;
        let slot = self.chunks.get(chunk).ok_or_else(|| {
            Error::InvalidState(format!("PMTable index: arena full at chunk {chunk}"))
        })?;
        slot.get_or_init(|| (0..CHUNK_WORDS).map(|_| AtomicU64::new(0)).collect());
        w.next_free += words as u64;
        Ok(node)
    }
}

impl Nodes for ArenaIndex {
    fn holds(&self, node: NodeRef, key: &[u8]) -> bool {
        self.compare_user_key(node, key) == Ordering::Equal
    }

    fn newer(&self, a: NodeRef, b: NodeRef) -> bool {
        self.word(a).load(Relaxed) > self.word(b).load(Relaxed)
    }
}

/// A tower height in 1..=MAX_HEIGHT, each level with probability 1/BRANCHING (xorshift64).
fn random_height(rng: &mut u64) -> usize {
    let mut height = 1;
    loop {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        if height == MAX_HEIGHT || !rng.is_multiple_of(BRANCHING) {
            return height;
        }
        height += 1;
    }
}

#[cfg(test)]
#[path = "index_tests.rs"]
mod tests;
