//! Pages of a matrix container: how a RowTable's logical byte stream maps onto the container's
//! pages ([`PageList`]), and which pages are free ([`PageAllocator`]).
//!
//! The free list is DRAM only. It is never persisted: at recovery it is rebuilt as "every page
//! no recorded row still uses" (`RowTable::live_pages`), so freeing a page has no persist point
//! and a crash can neither leak nor double-allocate one.
//!
//! Thread-safety: `PageAllocator` is `Send + Sync` (one mutex); `PageList` is plain data.

use crate::error::{Error, Result};
use parking_lot::Mutex;
use std::collections::BTreeSet;

/// The pages a RowTable occupies, in the order of its logical byte stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageList {
    /// Bytes per page.
    pub page_size: usize,
    /// Container page numbers; logical byte `l` lives in page `pages[l / page_size]`.
    pub pages: Vec<u32>,
}

impl PageList {
    /// Container offset of logical byte `logical` and the bytes left in its page.
    pub fn locate(&self, logical: u64) -> Option<(usize, usize)> {
        let index = usize::try_from(logical / self.page_size as u64).ok()?;
        let page = *self.pages.get(index)? as usize;
        let within = (logical % self.page_size as u64) as usize;
        Some((page * self.page_size + within, self.page_size - within))
    }

    /// Logical bytes the pages hold.
    pub fn capacity(&self) -> u64 {
        (self.pages.len() * self.page_size) as u64
    }

    /// Index in `pages` of the page holding logical byte `logical`.
    pub fn page_index(&self, logical: u64) -> usize {
        (logical / self.page_size as u64) as usize
    }
}

/// The free pages of a container of `page_count` pages.
///
/// Invariant: a page is either free here or owned by exactly one RowTable (written, or being
/// written by a flush that allocated it).
pub struct PageAllocator {
    page_count: u32,
    free: Mutex<BTreeSet<u32>>,
}

impl PageAllocator {
    /// A container whose pages are all free.
    pub fn new(page_count: u32) -> Self {
        PageAllocator {
            page_count,
            free: Mutex::new((0..page_count).collect()),
        }
    }

    /// A container where `used` pages belong to recovered rows; `Corruption`-free by
    /// construction: the caller validated the rows. A page listed twice is an error.
    pub fn with_used(page_count: u32, used: impl IntoIterator<Item = u32>) -> Result<Self> {
        let a = PageAllocator::new(page_count);
        {
            let mut free = a.free.lock();
            for p in used {
                if !free.remove(&p) {
                    return Err(Error::InvalidState(format!(
                        "matrix container page {p} is used twice or lies beyond the {page_count} pages"
                    )));
                }
            }
        }
        Ok(a)
    }

    /// Pages in the container.
    pub fn page_count(&self) -> u32 {
        self.page_count
    }

    /// Free pages now.
    pub fn free_count(&self) -> usize {
        self.free.lock().len()
    }

    /// Takes `n` free pages (lowest numbers first), or `None` (nothing taken) if fewer are free.
    pub fn allocate(&self, n: usize) -> Option<Vec<u32>> {
        let mut free = self.free.lock();
        if free.len() < n {
            return None;
        }
        Some((0..n).filter_map(|_| free.pop_first()).collect())
    }

    /// Gives pages back. Each must have been allocated and not freed since.
    pub fn release(&self, pages: impl IntoIterator<Item = u32>) {
        let mut free = self.free.lock();
        for p in pages {
            let fresh = free.insert(p);
            debug_assert!(fresh, "page {p} freed twice");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logical_bytes_map_through_the_page_list() {
        let list = PageList {
            page_size: 4096,
            pages: vec![7, 2],
        };
        assert_eq!(list.locate(0), Some((7 * 4096, 4096)));
        assert_eq!(list.locate(4100), Some((2 * 4096 + 4, 4092)));
        assert_eq!(list.locate(8192), None);
        assert_eq!(list.capacity(), 8192);
    }

    #[test]
    fn pages_are_allocated_once_until_released() {
        let a = PageAllocator::new(4);
        let first = a.allocate(3).unwrap();
        assert!(a.allocate(2).is_none(), "only one page is left");
        a.release(first);
        assert_eq!(a.free_count(), 4);
        let b = PageAllocator::with_used(4, [1, 3]).unwrap();
        assert_eq!(b.allocate(2), Some(vec![0, 2]));
        assert!(PageAllocator::with_used(4, [1, 1]).is_err());
        assert!(PageAllocator::with_used(4, [9]).is_err());
    }
}
