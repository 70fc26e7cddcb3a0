//! Recovery of a design whose write buffers are persistent PM skiplists (`novelsm`, `slmdb`): the
//! decisions. The manifest names every unflushed buffer (tag 9, as PM Logs; a PM skiplist's
//! record is written before its first write, `DbInner::record_buffer`); each named region
//! present is recovered in place (`buffer/recover/skiplist.rs`: headers and nodes verified, an
//! interrupted batch unlinked, upper levels rebuilt) and joins the immutables; regions it does
//! not name, and named ones that hold nothing, are removed once the new manifest is durable.
//!
//! Rules: a named region that is missing is `Corruption` (its writes would be lost) unless
//! `allow_missing_pm`, which accepts the loss with a warning; a damaged one is `Corruption`
//! naming the region and offset (found by the recovery in place). Missing regions are judged
//! before any region is recovered, so apart from an interrupted batch's unlinks (idempotent,
//! and the batch was never acknowledged), nothing is written before the checks pass.

use super::consistency;
use super::open::{KindInput, Recovered};
use crate::buffer::recover::{rebuild, Sources};
use crate::buffer::BufferRef;
use crate::error::{Error, Result};
use crate::file_names::{parse_skiplist_region_name, skiplist_region_name};
use crate::pm::PmDeviceRef;
use crate::version::ManifestState;
use std::collections::BTreeSet;

/// Verifies the tree files the manifest names, judges the skiplists it names that are missing
/// and has the others recovered in place.
pub(super) fn recover_skiplists(input: KindInput<'_>) -> Result<Recovered> {
    let (fs, path, pm, manifest, opts) = input.parts();
    let (state, redirects) = consistency::verified_tree(fs, path, manifest.as_ref(), opts)?;
    let (named, present) = (unflushed(&state), present_regions(pm)?);
    for &n in named.difference(&present) {
        missing(pm, n, opts.allow_missing_pm)?;
    }
    let found = named.intersection(&present).copied().collect();
    let rebuilt = rebuild(Sources::Skiplists(&**pm, found), opts.bloom_bits_per_key)?;
    let remove = not_kept(&present, &rebuilt.tables);
    Ok(Recovered {
        state,
        tables: rebuilt.tables,
        remove,
        emptied: Vec::new(),
        redirects,
        wals: Default::default(),
    })
}

/// The buffers the manifest names as unflushed (at or above `min_unflushed_pmlog`).
fn unflushed(state: &ManifestState) -> BTreeSet<u64> {
    let named = state.pm_logs.iter().flatten().copied();
    named.filter(|&n| n >= state.min_unflushed_pmlog).collect()
}

/// The regions present that hold no recovered buffer, with why they go.
fn not_kept(present: &BTreeSet<u64>, tables: &[BufferRef]) -> Vec<(String, String)> {
    let kept = |n: u64| tables.iter().any(|t| t.number() == n);
    let why = || "not an unflushed buffer".to_string();
    let gone = present.iter().copied().filter(|&n| !kept(n));
    gone.map(|n| (skiplist_region_name(n), why())).collect()
}

fn present_regions(pm: &PmDeviceRef) -> Result<BTreeSet<u64>> {
    let names = pm.list_regions()?;
    Ok(names
        .iter()
        .filter_map(|n| parse_skiplist_region_name(n))
        .collect())
}

/// A named skiplist is missing: refused, or accepted with a warning under `allow_missing_pm`.
fn missing(pm: &PmDeviceRef, n: u64, allow: bool) -> Result<()> {
    let path = pm.dir().join(skiplist_region_name(n));
    let detail = "the manifest names this PM skiplist but it is missing: its writes are lost";
    let e = Error::corruption(&path, 0, detail);
    if !allow {
        return Err(e);
    }
    log::warn!("{e}: accepted (allow_missing_pm)");
    Ok(())
}
