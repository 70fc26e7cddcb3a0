//! The rows of a PM matrix container (MatrixKV's level 0, `crate::rowtable`) as a version
//! records them: which rows exist, where each starts, how far column compactions have consumed
//! it, and which rows form the compactor. Manifest tags 14–17 (docs/manifest-format.md).
//!
//! Invariants (checked by [`RowSet::apply`]):
//! - rows are added in increasing number order, each once;
//! - a row's first live entry only advances, and never past its entry count;
//! - a deleted row exists; the compactor boundary only advances.

use super::edit::VersionEdit;
use crate::coding::{put_varint64, Decoder};
use crate::error::{Error, Result};
use std::collections::BTreeMap;

pub(super) const TAG_NEW_ROW: u64 = 14;
pub(super) const TAG_ROW_FIRST: u64 = 15;
pub(super) const TAG_DELETED_ROW: u64 = 16;
pub(super) const TAG_COMPACTOR_THROUGH: u64 = 17;

/// A RowTable recorded once its pages are persisted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowMeta {
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
pub struct RowState {
    /// The row as written.
    pub meta: RowMeta,
    /// Entries before this one were merged into L1 by column compactions.
    pub first: u64,
}

/// The rows of a version.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowSet {
    /// Rows by number.
    pub rows: BTreeMap<u64, RowState>,
    /// Rows numbered at or below this form the compactor; newer ones the receiver.
    pub compactor_through: u64,
}

fn invalid(msg: String) -> Error {
    Error::InvalidState(msg)
}

impl RowSet {
    /// Applies the row fields of `edit`: new rows, then first entries, then deletions, then
    /// the compactor boundary.
    pub fn apply(&mut self, edit: &VersionEdit) -> Result<()> {
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
    pub fn snapshot_into(&self, edit: &mut VersionEdit) {
        edit.new_rows = self.rows.values().map(|r| r.meta).collect();
        let cut = self.rows.values().filter(|r| r.first > 0);
        edit.row_firsts = cut.map(|r| (r.meta.number, r.first)).collect();
        edit.compactor_through = (self.compactor_through > 0).then_some(self.compactor_through);
    }
}

/// Encodes the fields of tags 14–17.
pub(super) fn encode_row_fields(e: &VersionEdit, b: &mut Vec<u8>) {
    for r in &e.new_rows {
        put_varint64(b, TAG_NEW_ROW);
        for v in [r.number, r.first_page as u64, r.entries, r.bytes] {
            put_varint64(b, v);
        }
    }
    for &(number, first) in &e.row_firsts {
        put_varint64(b, TAG_ROW_FIRST);
        put_varint64(b, number);
        put_varint64(b, first);
    }
    for &number in &e.deleted_rows {
        put_varint64(b, TAG_DELETED_ROW);
        put_varint64(b, number);
    }
    if let Some(t) = e.compactor_through {
        put_varint64(b, TAG_COMPACTOR_THROUGH);
        put_varint64(b, t);
    }
}

/// Decodes one field of tags 14–17.
pub(super) fn decode_row_field(d: &mut Decoder<'_>, e: &mut VersionEdit, tag: u64) -> Result<()> {
    match tag {
        TAG_NEW_ROW => {
            let number = d.varint("row number")?;
            let page = d.varint("row first page")?;
            let first_page =
                u32::try_from(page).map_err(|_| d.error("row first page exceeds u32"))?;
            let entries = d.varint("row entries")?;
            let bytes = d.varint("row bytes")?;
            e.new_rows.push(RowMeta {
                number,
                first_page,
                entries,
                bytes,
            });
        }
        TAG_ROW_FIRST => {
            let number = d.varint("row number")?;
            e.row_firsts.push((number, d.varint("row first entry")?));
        }
        TAG_DELETED_ROW => e.deleted_rows.push(d.varint("deleted row")?),
        _ => {
            if e.compactor_through
                .replace(d.varint("compactor boundary")?)
                .is_some()
            {
                return Err(d.error("compactor boundary appears twice"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::Version;
    use std::path::Path;

    fn row(number: u64) -> RowMeta {
        RowMeta {
            number,
            first_page: number as u32 * 3,
            entries: 10,
            bytes: 1000,
        }
    }

    fn roundtrip(e: &VersionEdit) -> VersionEdit {
        VersionEdit::decode(&e.encode(), Path::new("MANIFEST-000001"), 0).unwrap()
    }

    #[test]
    fn row_fields_survive_encoding_and_a_snapshot_recreates_them() {
        let add = VersionEdit {
            new_rows: vec![row(4), row(7)],
            compactor_through: Some(4),
            ..VersionEdit::default()
        };
        assert_eq!(roundtrip(&add), add);
        let v = Version::default().apply(&add).unwrap();
        let cut = VersionEdit {
            row_firsts: vec![(4, 6)],
            deleted_rows: vec![7],
            ..VersionEdit::default()
        };
        assert_eq!(roundtrip(&cut), cut);
        let v = v.apply(&cut).unwrap();
        assert_eq!(v.rows.rows[&4].first, 6);
        let again = Version::default()
            .apply(&roundtrip(&v.snapshot_edit()))
            .unwrap();
        assert_eq!(again.rows, v.rows);
    }

    #[test]
    fn rows_out_of_order_backwards_or_missing_are_refused() {
        let v = Version::default()
            .apply(&VersionEdit {
                new_rows: vec![row(5)],
                row_firsts: vec![(5, 3)],
                compactor_through: Some(5),
                ..VersionEdit::default()
            })
            .unwrap();
        let bad = [
            VersionEdit {
                new_rows: vec![row(5)],
                ..VersionEdit::default()
            },
            VersionEdit {
                row_firsts: vec![(5, 2)],
                ..VersionEdit::default()
            },
            VersionEdit {
                row_firsts: vec![(5, 11)],
                ..VersionEdit::default()
            },
            VersionEdit {
                row_firsts: vec![(6, 1)],
                ..VersionEdit::default()
            },
            VersionEdit {
                deleted_rows: vec![6],
                ..VersionEdit::default()
            },
            VersionEdit {
                compactor_through: Some(4),
                ..VersionEdit::default()
            },
        ];
        for e in bad {
            assert!(v.apply(&e).is_err(), "{e:?} accepted");
        }
    }

    #[test]
    fn a_repeated_compactor_boundary_is_corruption() {
        let mut b = Vec::new();
        for _ in 0..2 {
            put_varint64(&mut b, TAG_COMPACTOR_THROUGH);
            put_varint64(&mut b, 3);
        }
        let err = VersionEdit::decode(&b, Path::new("M"), 0).unwrap_err();
        assert!(err.is_corruption(), "{err}");
    }
}
