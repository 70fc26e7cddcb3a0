//! [`MatrixRows`]: the rows of the matrix container as one version sees them (newest first,
//! each with its first live entry), searched with cross-row hints; and [`Epoch`], which returns
//! the pages a column compaction freed only once no reader can still read them.
//!
//! Lazy deletion (MatrixKV 3.5): the view of version k holds `Arc<Epoch_k>`, and `Epoch_k`
//! holds `Arc<Epoch_{k+1}>`. The pages freed between views k and k+1 are parked in `Epoch_k`,
//! which drops — returning them to the allocator — only when view k and every older view are
//! gone, i.e. when no reader holds a version in which those pages were live.

use crate::designs::{Level0Store, ReadAt, ScanAt, StoreLookup};
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::rowtable::search::{hint_get, MatrixIter};
use crate::rowtable::{PageAllocator, RowTable};
use crate::sst::TableCache;
use parking_lot::Mutex;
use std::sync::{Arc, OnceLock};

/// Pages waiting for every view up to this epoch to go.
pub(crate) struct Epoch {
    allocator: Arc<PageAllocator>,
    freed: Mutex<Vec<u32>>,
    next: OnceLock<Arc<Epoch>>,
}

impl Epoch {
    /// The first epoch of a container.
    pub fn first(allocator: Arc<PageAllocator>) -> Arc<Epoch> {
        Arc::new(Epoch {
            allocator,
            freed: Mutex::new(Vec::new()),
            next: OnceLock::new(),
        })
    }

    /// Ends this epoch: `freed` wait for it and every older one; returns the next epoch.
    fn close(&self, freed: Vec<u32>) -> Arc<Epoch> {
        self.freed.lock().extend(freed);
        let next = Epoch::first(self.allocator.clone());
        let linked = self.next.get_or_init(|| next.clone());
        linked.clone()
    }
}

impl Drop for Epoch {
    fn drop(&mut self) {
        self.allocator.release(std::mem::take(self.freed.get_mut()));
    }
}

/// The container's rows as one version sees them.
pub(crate) struct MatrixRows {
    /// Newest row first, each with its first live entry.
    rows: Vec<(Arc<RowTable>, u64)>,
    /// Holds this view's epoch (see the module documentation).
    epoch: Arc<Epoch>,
}

impl MatrixRows {
    /// A view of `rows` (newest first) in `epoch`.
    pub fn new(rows: Vec<(Arc<RowTable>, u64)>, epoch: Arc<Epoch>) -> Arc<MatrixRows> {
        Arc::new(MatrixRows { rows, epoch })
    }

    /// The view after a change to `rows`: pages this view needed and the next does not are
    /// returned once this view and all older ones are gone.
    pub fn successor(&self, rows: Vec<(Arc<RowTable>, u64)>) -> Arc<MatrixRows> {
        let kept: std::collections::HashSet<u32> = rows
            .iter()
            .flat_map(|(t, first)| t.live_pages(*first))
            .collect();
        let freed = self.live_pages().filter(|p| !kept.contains(p)).collect();
        let epoch = self.epoch.close(freed);
        MatrixRows::new(rows, epoch)
    }

    fn live_pages(&self) -> impl Iterator<Item = u32> + '_ {
        self.rows.iter().flat_map(|(t, first)| t.live_pages(*first))
    }

    /// The rows, newest first, with their first live entries.
    pub fn rows(&self) -> &[(Arc<RowTable>, u64)] {
        &self.rows
    }
}

impl Level0Store for MatrixRows {
    fn get(&self, user_key: &[u8], read: ReadAt, _: &TableCache) -> Result<StoreLookup> {
        Ok(match hint_get(&self.rows, user_key, read.seq)? {
            Some(found) => StoreLookup::Found(found),
            None => StoreLookup::SearchBelow,
        })
    }

    /// One stream over every row, its seeks narrowed by the cross-row hints.
    fn iterators(&self, _: ScanAt, _: &Arc<TableCache>) -> Vec<Box<dyn InternalIterator>> {
        vec![Box::new(MatrixIter::new(self.rows.clone()))]
    }
}
