//! The rows of the matrix container: as a version records them ([`RowSet`], MatrixKV's version
//! extension, changed by manifest tags 14–17) and as one version sees them ([`MatrixRows`],
//! searched with cross-row hints), with [`Epoch`], which returns the pages a column compaction
//! freed only once no reader can still read them.
//!
//! Records (design records of core's `version::extension`; docs/manifest-format.md): tag 14 a
//! new row (number, first page, entries, bytes), 15 a row's first live entry (number, entry),
//! 16 a deleted row (number), 17 the compactor boundary. Invariants (checked by
//! [`RowSet`]'s `apply`, so a manifest breaking them is refused at replay):
//! - rows are added in increasing number order, each once; a first page fits a u32;
//! - a row's first live entry only advances, and never past its entry count;
//! - a deleted row exists; the compactor boundary only advances, at most once per edit.
//!
//! Lazy deletion (MatrixKV 3.5): the view of version k holds `Arc<Epoch_k>`, and `Epoch_k`
//! holds `Arc<Epoch_{k+1}>`. The pages freed between views k and k+1 are parked in `Epoch_k`,
//! which drops — returning them to the allocator — only when view k and every older view are
//! gone, i.e. when no reader holds a version in which those pages were live.

use crate::designs::{Level0Store, ReadAt, ScanAt, StoreLookup};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::rowtable::search::{hint_get, MatrixIter};
use crate::rowtable::{PageAllocator, RowTable};
use crate::sst::TableCache;
use crate::version::extension::record_shape;
use crate::version::{DesignRecord, Extension, Version, VersionEdit, VersionExtension};
use parking_lot::Mutex;
use std::any::Any;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

const TAG_NEW_ROW: u64 = 14;
const TAG_ROW_FIRST: u64 = 15;
const TAG_DELETED_ROW: u64 = 16;
const TAG_COMPACTOR_THROUGH: u64 = 17;

/// A RowTable recorded once its pages are persisted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowMeta {
    /// The row's number (arrival order; also a file number, never reused).
    pub number: u64,
    /// The container page holding its header.
    pub first_page: u32,
    /// Entries in the row.
    pub entries: u64,
    /// Bytes of its entries.
    pub bytes: u64,
}

/// A row and its first live entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowState {
    /// The row as written.
    pub meta: RowMeta,
    /// Entries before this one were merged into L1 by column compactions.
    pub first: u64,
}

/// The rows a version records: MatrixKV's version extension.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RowSet {
    /// Rows by number.
    pub rows: BTreeMap<u64, RowState>,
    /// Rows numbered at or below this form the compactor; newer ones the receiver.
    pub compactor_through: u64,
}

/// The rows of a version whose extension is not MatrixKV's.
static NO_ROWS: RowSet = RowSet {
    rows: BTreeMap::new(),
    compactor_through: 0,
};

/// The version extension of a new `matrixkv` database: no rows.
pub(crate) fn extension() -> Extension {
    Extension::new(RowSet::default())
}

/// The rows `version` records (none if its extension is not MatrixKV's).
pub(crate) fn row_set(version: &Version) -> &RowSet {
    version.extension.get::<RowSet>().unwrap_or(&NO_ROWS)
}

/// The row fields of one edit, read from (or written as) its design records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RowEdit {
    /// Rows added.
    pub new_rows: Vec<RowMeta>,
    /// Rows whose first live entry advanced: (row number, first live entry).
    pub row_firsts: Vec<(u64, u64)>,
    /// Rows removed (fully consumed by column compactions).
    pub deleted_rows: Vec<u64>,
    /// The newest row of the compactor, when a receiver turned into it.
    pub compactor_through: Option<u64>,
}

fn invalid(msg: String) -> Error {
    Error::InvalidState(msg)
}

impl RowEdit {
    /// The row fields of `records` (core hands an extension only records of their tag's
    /// shape); `InvalidState` for a first page beyond u32, a repeated boundary, or a record
    /// that is not a row record of its shape.
    pub fn parse(records: &[DesignRecord]) -> Result<RowEdit> {
        let mut e = RowEdit::default();
        records.iter().try_for_each(|r| e.read(r))?;
        Ok(e)
    }

    fn read(&mut self, r: &DesignRecord) -> Result<()> {
        let f = &r.fields;
        if record_shape(r.tag).map(|s| s.fields) != Some(f.len()) {
            return Err(invalid(format!(
                "design record {} is not a row record",
                r.tag
            )));
        }
        match r.tag {
            TAG_NEW_ROW => self.new_rows.push(row_meta(f)?),
            TAG_ROW_FIRST => self.row_firsts.push((f[0], f[1])),
            TAG_DELETED_ROW => self.deleted_rows.push(f[0]),
            TAG_COMPACTOR_THROUGH if self.compactor_through.is_none() => {
                self.compactor_through = Some(f[0]);
            }
            TAG_COMPACTOR_THROUGH => {
                return Err(invalid("compactor boundary appears twice".into()))
            }
            tag => return Err(invalid(format!("design record {tag} is not a row record"))),
        }
        Ok(())
    }

    /// The design records of these fields, in tag order.
    pub fn records(&self) -> Vec<DesignRecord> {
        let new = self.new_rows.iter().map(|m| {
            let fields = [m.number, m.first_page as u64, m.entries, m.bytes];
            DesignRecord::new(TAG_NEW_ROW, fields)
        });
        let firsts =
            (self.row_firsts.iter()).map(|&(n, f)| DesignRecord::new(TAG_ROW_FIRST, [n, f]));
        let deleted = (self.deleted_rows.iter()).map(|&n| DesignRecord::new(TAG_DELETED_ROW, [n]));
        let through =
            (self.compactor_through.iter()).map(|&t| DesignRecord::new(TAG_COMPACTOR_THROUGH, [t]));
        new.chain(firsts).chain(deleted).chain(through).collect()
    }

    /// An edit holding only these fields.
    pub fn into_edit(self) -> VersionEdit {
        VersionEdit {
            design_records: self.records(),
            ..VersionEdit::default()
        }
    }
}

/// The row a tag-14 record's fields (number, first page, entries, bytes) describe.
fn row_meta(f: &[u64]) -> Result<RowMeta> {
    let first_page = u32::try_from(f[1])
        .map_err(|_| invalid(format!("row {}: first page {} exceeds u32", f[0], f[1])))?;
    Ok(RowMeta {
        number: f[0],
        first_page,
        entries: f[2],
        bytes: f[3],
    })
}

/// Numbers of the rows `edit` adds (outputs of a flush, pending until it is installed).
pub(crate) fn new_row_numbers(edit: &VersionEdit) -> Vec<u64> {
    let new = edit.design_records.iter().filter(|r| r.tag == TAG_NEW_ROW);
    new.filter_map(|r| r.fields.first().copied()).collect()
}

impl RowSet {
    /// Applies an edit's row fields: new rows, then first entries, then deletions, then the
    /// compactor boundary.
    fn apply_rows(&mut self, edit: &RowEdit) -> Result<()> {
        for meta in &edit.new_rows {
            self.add(*meta)?;
        }
        for &(number, first) in &edit.row_firsts {
            self.advance(number, first)?;
        }
        for &number in &edit.deleted_rows {
            if self.rows.remove(&number).is_none() {
                return Err(invalid(format!(
                    "deleted row {number} is not in the version"
                )));
            }
        }
        self.move_boundary(edit.compactor_through)
    }

    fn add(&mut self, meta: RowMeta) -> Result<()> {
        if self
            .rows
            .last_key_value()
            .is_some_and(|(&n, _)| n >= meta.number)
        {
            return Err(invalid(format!("row {} added out of order", meta.number)));
        }
        self.rows.insert(meta.number, RowState { meta, first: 0 });
        Ok(())
    }

    fn advance(&mut self, number: u64, first: u64) -> Result<()> {
        let row = self.rows.get_mut(&number);
        let row = row.ok_or_else(|| invalid(format!("row {number} is not in the version")))?;
        if first < row.first || first > row.meta.entries {
            return Err(invalid(format!(
                "row {number}: first live entry {first} outside {}..={}",
                row.first, row.meta.entries
            )));
        }
        row.first = first;
        Ok(())
    }

    fn move_boundary(&mut self, through: Option<u64>) -> Result<()> {
        match through {
            Some(t) if t < self.compactor_through => Err(invalid(format!(
                "compactor boundary moves back from {} to {t}",
                self.compactor_through
            ))),
            Some(t) => {
                self.compactor_through = t;
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// The row fields of an edit recreating this set.
    fn snapshot_fields(&self) -> RowEdit {
        let cut = self.rows.values().filter(|r| r.first > 0);
        RowEdit {
            new_rows: self.rows.values().map(|r| r.meta).collect(),
            row_firsts: cut.map(|r| (r.meta.number, r.first)).collect(),
            deleted_rows: Vec::new(),
            compactor_through: (self.compactor_through > 0).then_some(self.compactor_through),
        }
    }
}

impl VersionExtension for RowSet {
    fn apply(&self, records: &[DesignRecord]) -> Result<Extension> {
        let edit = RowEdit::parse(records)?;
        let mut next = self.clone();
        next.apply_rows(&edit)?;
        Ok(Extension::new(next))
    }

    fn snapshot(&self) -> Vec<DesignRecord> {
        self.snapshot_fields().records()
    }

    fn same_state(&self, other: &dyn VersionExtension) -> bool {
        (other as &dyn Any).downcast_ref::<RowSet>() == Some(self)
    }

    fn len(&self) -> usize {
        self.rows.len()
    }
}

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

#[cfg(test)]
#[path = "rows_tests.rs"]
mod tests;
