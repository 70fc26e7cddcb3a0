//! Versions of the SSD tree and the manifest that records them (paper §4.3–4.4).
//!
//! FlatLSM keeps only two SSD levels: the *Ordered-L1* (level 1) and L2 (level 2); its L0 lives
//! in PMTables on persistent memory, so level 0 of a [`Version`] is reserved for later profiles.
//! Values are separated into value logs (see [`crate::vlog`]); a [`Version`] also tracks the
//! live value logs and, through each file's `vlog_refs`, how many bytes of each are still live,
//! and the value logs GC redirected (`Version::redirects`: victim → redirect table and target).
//!
//! - [`edit`]: [`VersionEdit`], one atomic change, and its tagged-field encoding.
//! - [`extension`]: [`VersionExtension`], the design-owned state a version carries, and the
//!   design records of an edit that change it.
//! - [`version`]: [`Version`], an immutable snapshot of the tree, and [`Version::apply`].
//! - [`manifest`]: the durable log of edits, `CURRENT`, and recovery.
//! - [`manifest_state`]: [`ManifestState`], what replaying the manifest builds (tree, counters,
//!   the PM Logs that may hold unflushed data, the database identity).
//!
//! Thread-safety: [`Version`] and [`VersionEdit`] are immutable plain data, shared as
//! `Arc<Version>`; [`Manifest`] has a single owner.

pub mod edit;
pub mod extension;
mod level_iter;
pub mod manifest;
pub mod manifest_state;
#[allow(clippy::module_inception)]
pub mod version;

#[cfg(test)]
mod manifest_tests;
#[cfg(test)]
mod redirect_tests;
#[cfg(test)]
mod tests;

pub use edit::{FileMeta, PmLogMeta, RedirectMeta, VersionEdit, VlogMeta};
pub use extension::{DesignRecord, Extension, NoExtension, VersionExtension};
pub use level_iter::LevelIterator;
pub use manifest::{
    apply_manifest_records, current_manifest_path, initial_state, manifest_file_name, no_extension,
    parse_manifest_file_name, read_manifest_records, readable_manifest_prefix, ChooseExtension,
    Manifest, ManifestRecord, RecoveredManifest, CURRENT_FILE_NAME,
};
pub use manifest_state::ManifestState;
pub use version::Version;

/// Number of levels in a [`Version`] (RocksDB's default `num_levels`): level 0, whose files
/// may overlap, and levels 1..=6, each sorted and non-overlapping. FlatLSM uses levels 0-2.
pub const MAX_LEVELS: usize = 7;
