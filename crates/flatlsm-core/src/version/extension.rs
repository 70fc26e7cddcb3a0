//! The design-owned part of a version: [`VersionExtension`], shared as an [`Extension`], and
//! the [`DesignRecord`]s of a [`VersionEdit`] that change it (manifest tags 14–17).
//!
//! Core records a design's own state (a store the design keeps beside the SSD tree) without
//! knowing what it means. An edit carries design records: a tag of the reserved range and its
//! varint fields, laid out as [`DESIGN_RECORD_SHAPES`] says. Core encodes and decodes them
//! by shape and hands an edit's records to the version's extension, which checks them against
//! its own invariants and returns its next state; for a snapshot the extension writes itself
//! back as records. A database's versions start from the extension its design supplies
//! (replay chooses it from the profile the manifest records: `manifest.rs`); the default,
//! [`NoExtension`], holds nothing and refuses every record.
//!
//! Invariants:
//! - a design record has a tag of [`DESIGN_RECORD_SHAPES`] and that tag's number of fields
//!   (decoding checks it, and [`Version::apply`](super::Version::apply) for edits built in
//!   memory);
//! - a tag whose shape is `once` appears at most once in an edit;
//! - an extension sees an edit's records grouped by tag, ascending, in edit order within a tag:
//!   the order [`VersionEdit::encode`] writes them, so a replay applies exactly what the
//!   engine applied before the crash;
//! - [`VersionExtension::apply`] never changes the state it is called on (versions share it).
//!
//! Thread-safety: extension states are immutable and `Send + Sync`, shared as `Arc`s.

use super::edit::VersionEdit;
use crate::coding::{put_varint64, Decoder};
use crate::error::{Error, Result};
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// How a design record of one tag is laid out: `fields` varints after the tag, and whether the
/// tag may appear only `once` in an edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordShape {
    /// The record's manifest tag.
    pub tag: u64,
    /// How many varint fields follow the tag.
    pub fields: usize,
    /// True if an edit holds at most one record of this tag.
    pub once: bool,
}

/// The design-record tags and their shapes. A tag's shape is part of the manifest format
/// (docs/manifest-format.md) and never changes: a design needing another layout takes a new tag.
pub const DESIGN_RECORD_SHAPES: [RecordShape; 4] = [
    RecordShape {
        tag: 14,
        fields: 4,
        once: false,
    },
    RecordShape {
        tag: 15,
        fields: 2,
        once: false,
    },
    RecordShape {
        tag: 16,
        fields: 1,
        once: false,
    },
    RecordShape {
        tag: 17,
        fields: 1,
        once: true,
    },
];

/// Names of a record's fields in decoding errors (as many as the widest shape has fields).
const FIELD_NAMES: [&str; 4] = [
    "design record field 1",
    "design record field 2",
    "design record field 3",
    "design record field 4",
];

/// The shape of design-record tag `tag`; `None` if `tag` is not one.
pub fn record_shape(tag: u64) -> Option<RecordShape> {
    DESIGN_RECORD_SHAPES.iter().find(|s| s.tag == tag).copied()
}

/// One design record of an edit: its tag and its fields, which only the design reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DesignRecord {
    /// A tag of [`DESIGN_RECORD_SHAPES`].
    pub tag: u64,
    /// The fields, as many as the tag's shape has.
    pub fields: Vec<u64>,
}

impl DesignRecord {
    /// A record of `tag` with `fields`.
    pub fn new(tag: u64, fields: impl Into<Vec<u64>>) -> Self {
        DesignRecord {
            tag,
            fields: fields.into(),
        }
    }
}

/// The design-owned state of a version. Implemented by a design (outside core); core only
/// applies records to it, writes it into snapshots and compares it.
pub trait VersionExtension: Any + Send + Sync + fmt::Debug {
    /// The state after an edit's `records` (each of its tag's shape, grouped by tag as the
    /// module says); [`Error::InvalidState`] naming the record that breaks one of the
    /// extension's invariants (replay reports it as corruption at the record's offset).
    /// `self` is unchanged.
    fn apply(&self, records: &[DesignRecord]) -> Result<Extension>;
    /// The records that recreate this state from the design's empty one (a snapshot's), in
    /// tag order.
    fn snapshot(&self) -> Vec<DesignRecord>;
    /// True if `other` holds the same state (two versions are equal only if this holds).
    fn same_state(&self, other: &dyn VersionExtension) -> bool;
    /// How many items the state holds (0: nothing), for emptiness checks and messages.
    fn len(&self) -> usize;
    /// True if the state holds nothing.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The extension of a version whose design keeps none: holds nothing, refuses every record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoExtension;

impl VersionExtension for NoExtension {
    fn apply(&self, records: &[DesignRecord]) -> Result<Extension> {
        match records.first() {
            Some(r) => Err(Error::InvalidState(format!(
                "design record {} in a version without an extension (the database's design \
                 records none)",
                r.tag
            ))),
            None => Ok(Extension::none()),
        }
    }

    fn snapshot(&self) -> Vec<DesignRecord> {
        Vec::new()
    }

    fn same_state(&self, other: &dyn VersionExtension) -> bool {
        (other as &dyn Any).is::<NoExtension>()
    }

    fn len(&self) -> usize {
        0
    }
}

/// A version's extension state, shared by the versions an edit without design records leaves
/// it to.
#[derive(Clone)]
pub struct Extension(Arc<dyn VersionExtension>);

impl Extension {
    /// The extension holding `state`.
    pub fn new(state: impl VersionExtension) -> Self {
        Extension(Arc::new(state))
    }

    /// The extension of designs without one ([`NoExtension`]).
    pub fn none() -> Self {
        Extension::new(NoExtension)
    }

    /// The state, if it is an `E` (how a design reads its own state).
    pub fn get<E: VersionExtension>(&self) -> Option<&E> {
        (&*self.0 as &dyn Any).downcast_ref::<E>()
    }

    /// The state.
    pub fn state(&self) -> &dyn VersionExtension {
        &*self.0
    }

    /// The extension after `records` (checked against their shapes first, then handed to the
    /// state in tag order); itself, shared, when there are none.
    pub fn apply(&self, records: &[DesignRecord]) -> Result<Extension> {
        if records.is_empty() {
            return Ok(self.clone());
        }
        check_shapes(records)?;
        in_tag_order(records, |sorted| self.0.apply(sorted))
    }
}

impl Default for Extension {
    fn default() -> Self {
        Extension::none()
    }
}

impl PartialEq for Extension {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.same_state(&*other.0)
    }
}

impl Eq for Extension {}

impl fmt::Debug for Extension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Refuses records built in memory that no decoder would produce: an unknown tag, a wrong
/// number of fields, a `once` tag repeated.
fn check_shapes(records: &[DesignRecord]) -> Result<()> {
    for (i, r) in records.iter().enumerate() {
        let shape = record_shape(r.tag)
            .ok_or_else(|| Error::InvalidState(format!("{} is not a design-record tag", r.tag)))?;
        if r.fields.len() != shape.fields {
            return Err(Error::InvalidState(format!(
                "design record {} has {} fields, its shape {}",
                r.tag,
                r.fields.len(),
                shape.fields
            )));
        }
        if shape.once && records[..i].iter().any(|o| o.tag == r.tag) {
            let msg = format!("design record {} appears twice in one edit", r.tag);
            return Err(Error::InvalidState(msg));
        }
    }
    Ok(())
}

/// `f` of `records` grouped by tag, ascending, in their order within a tag (a stable sort;
/// no copy when they already are).
fn in_tag_order<R>(records: &[DesignRecord], f: impl FnOnce(&[DesignRecord]) -> R) -> R {
    if records.is_sorted_by_key(|r| r.tag) {
        return f(records);
    }
    let mut sorted = records.to_vec();
    sorted.sort_by_key(|r| r.tag);
    f(&sorted)
}

/// Encodes the design records of an edit, in tag order.
pub(super) fn encode_design_records(records: &[DesignRecord], b: &mut Vec<u8>) {
    in_tag_order(records, |sorted| {
        for r in sorted {
            put_varint64(b, r.tag);
            r.fields.iter().for_each(|&v| put_varint64(b, v));
        }
    });
}

/// Decodes the fields of one design record of `shape` (its tag already read) into `e`.
pub(super) fn decode_design_record(
    d: &mut Decoder<'_>,
    e: &mut VersionEdit,
    shape: RecordShape,
) -> Result<()> {
    let mut fields = Vec::with_capacity(shape.fields);
    for name in &FIELD_NAMES[..shape.fields] {
        fields.push(d.varint(name)?);
    }
    if shape.once && e.design_records.iter().any(|r| r.tag == shape.tag) {
        return Err(d.error(format!("design record {} appears twice", shape.tag)));
    }
    e.design_records.push(DesignRecord::new(shape.tag, fields));
    Ok(())
}

#[cfg(test)]
#[path = "extension_tests.rs"]
mod tests;
