//! Recovery of a design whose write buffers are persistent PM skiplists (`novelsm`, `slmdb`): the
//! decisions. The manifest names every unflushed buffer (tag 9, as PM Logs), or its record was
//! in flight at the crash: a switch queues the record and writes go into the region at once
//! (`db/buffer_records.rs`), so a region numbered at or above the manifest's
//! `next_file_number` counts as named (`consistency::in_flight`). Each named region present is
//! recovered in place (`buffer/recover/skiplist.rs`: headers and nodes verified, an interrupted
//! batch unlinked, upper levels rebuilt) and joins the immutables; regions it does not name,
//! named ones that hold nothing, and in-flight ones whose creation the crash interrupted (header not
//! checking, head linking nothing: the header is persisted last, `pmskiplist`) are removed once the new manifest
//! is durable.
//!
//! Rules: a named region that is missing is `Corruption` (its writes would be lost) unless
//! `allow_missing_pm`, which accepts the loss with a warning; a damaged one, in flight or not,
//! is `Corruption` naming the region and offset (found by the recovery in place). Missing regions are judged
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
    let (in_flight, interrupted) = in_flight_regions(pm, &state, &named, &present)?;
    let found = named.intersection(&present).chain(&in_flight).copied();
    let found = found.collect::<BTreeSet<u64>>().into_iter().collect();
    let rebuilt = rebuild(Sources::Skiplists(&**pm, found), opts.bloom_bits_per_key)?;
    let remove = not_kept(&present, &rebuilt.tables, &interrupted);
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

/// The present regions the manifest does not name whose record was in flight: those formatted
/// (recovered as if named) and those whose creation the crash interrupted.
fn in_flight_regions(
    pm: &PmDeviceRef,
    state: &ManifestState,
    named: &BTreeSet<u64>,
    present: &BTreeSet<u64>,
) -> Result<(Vec<u64>, Vec<u64>)> {
    let (mut formatted, mut interrupted) = (Vec::new(), Vec::new());
    let unnamed = present.difference(named);
    for &n in unnamed.filter(|&&n| consistency::in_flight(state, n)) {
        let region = pm.open_region(&skiplist_region_name(n))?;
        match crate::pmskiplist::PmSkiplist::creation_interrupted(&*region) {
            true => interrupted.push(n),
            false => formatted.push(n),
        }
    }
    Ok((formatted, interrupted))
}

/// The regions present that hold no recovered buffer, with why they go (`interrupted`: those
/// whose creation the crash interrupted).
fn not_kept(
    present: &BTreeSet<u64>,
    tables: &[BufferRef],
    interrupted: &[u64],
) -> Vec<(String, String)> {
    let kept = |n: u64| tables.iter().any(|t| t.number() == n);
    let why = |n: u64| match interrupted.contains(&n) {
        true => "creation interrupted (header unwritten, no entry linked)",
        false => "not an unflushed buffer",
    };
    let gone = present.iter().copied().filter(|&n| !kept(n));
    gone.map(|n| (skiplist_region_name(n), why(n).to_string()))
        .collect()
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
