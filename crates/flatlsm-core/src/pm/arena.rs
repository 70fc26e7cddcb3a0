//! [`PmArena`]: PM used as memory — an allocator over one region (memkind's PMEM kind, in the
//! placement study's role). Nothing here is persistent: spans are written once, read many
//! times and freed when dropped; the region is removed by its owner at open and close.
//!
//! Allocation: best fit among free extents (kept by size and by offset, neighbours coalesced
//! on free), sizes rounded up to 64 bytes so spans start on cache lines.
//!
//! Thread-safety: `Send + Sync`; the free lists are under one mutex; a span's bytes are written
//! only by its creator before it is shared, so readers never race a writer.

use super::{PmRegion, CACHE_LINE};
use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::sync::Arc;

/// An allocator over one region.
pub struct PmArena {
    region: Arc<dyn PmRegion>,
    free: Mutex<FreeExtents>,
}

#[derive(Default)]
struct FreeExtents {
    by_offset: BTreeMap<usize, usize>,
    by_size: BTreeSet<(usize, usize)>,
}

impl FreeExtents {
    fn insert(&mut self, offset: usize, len: usize) {
        self.by_offset.insert(offset, len);
        self.by_size.insert((len, offset));
    }

    fn remove(&mut self, offset: usize, len: usize) {
        self.by_offset.remove(&offset);
        self.by_size.remove(&(len, offset));
    }

    /// Frees `[offset, offset + len)`, merging it with free neighbours.
    fn release(&mut self, mut offset: usize, mut len: usize) {
        if let Some((&o, &l)) = self.by_offset.range(..offset).next_back() {
            if o + l == offset {
                self.remove(o, l);
                (offset, len) = (o, l + len);
            }
        }
        if let Some(&l) = self.by_offset.get(&(offset + len)) {
            self.remove(offset + len, l);
            len += l;
        }
        self.insert(offset, len);
    }
}

impl PmArena {
    /// An arena over all of `region`.
    pub fn new(region: Arc<dyn PmRegion>) -> Arc<PmArena> {
        let mut free = FreeExtents::default();
        free.insert(0, region.len() / CACHE_LINE * CACHE_LINE);
        Arc::new(PmArena {
            region,
            free: Mutex::new(free),
        })
    }

    /// Bytes the arena can hand out in all.
    pub fn capacity(&self) -> usize {
        self.region.len()
    }

    /// A span holding a copy of `bytes`, or `None` if no free extent is large enough.
    pub fn store(self: &Arc<Self>, bytes: &[u8]) -> Option<PmSpan> {
        let size = bytes.len().max(1).next_multiple_of(CACHE_LINE);
        let offset = {
            let mut f = self.free.lock();
            let &(len, offset) = f.by_size.range((size, 0)..).next()?;
            f.remove(offset, len);
            if len > size {
                f.insert(offset + size, len - size);
            }
            offset
        };
        self.region.write(offset, bytes);
        Some(PmSpan {
            arena: self.clone(),
            offset,
            len: bytes.len(),
        })
    }
}

/// Bytes stored in a [`PmArena`]; freed on drop.
pub struct PmSpan {
    arena: Arc<PmArena>,
    offset: usize,
    len: usize,
}

impl PmSpan {
    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if the span holds no byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes in `range` (a read of PM: emulated read latency applies to the lines it
    /// touches). Panics if `range` is outside the span.
    pub fn slice(&self, range: Range<usize>) -> &[u8] {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "span range"
        );
        self.arena
            .region
            .read(self.offset + range.start, range.len())
    }
}

impl Drop for PmSpan {
    fn drop(&mut self) {
        let size = self.len.max(1).next_multiple_of(CACHE_LINE);
        self.arena.free.lock().release(self.offset, size);
    }
}

impl std::fmt::Debug for PmSpan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PmSpan({}+{})", self.offset, self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pm::{DramPmDevice, PmDevice};

    #[test]
    fn spans_are_stored_read_freed_and_coalesced() {
        let dev = DramPmDevice::new("/x");
        let arena = PmArena::new(dev.create_region("a", 4096).unwrap());
        let a = arena.store(&[1; 100]).unwrap();
        let b = arena.store(&[2; 1000]).unwrap();
        assert_eq!(a.slice(10..12), &[1, 1]);
        assert_eq!(b.slice(999..1000), &[2]);
        assert!(
            arena.store(&[3; 4000]).is_none(),
            "only 4096 - 1152 bytes are free"
        );
        drop(a);
        drop(b);
        let whole = arena.store(&[4; 4096]).unwrap();
        assert_eq!(whole.len(), 4096, "freed extents coalesce");
    }
}
