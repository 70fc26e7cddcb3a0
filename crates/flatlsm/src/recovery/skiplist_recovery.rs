//! Recovery of a design whose write buffers are persistent PM skiplists (`novelsm`): the
//! manifest names every unflushed buffer (tag 9, as PM Logs); each named region is recovered in
//! place (`pmskiplist`: headers and nodes verified, an interrupted batch unlinked, upper levels
//! rebuilt) and joins the immutables; regions it does not name are removed once the new
//! manifest is durable.
//!
//! Rules: a named region that is missing is `Corruption` (its writes would be lost) unless
//! `allow_missing_pm`, which accepts the loss with a warning; a damaged one is `Corruption`
//! naming the region and offset. Apart from an interrupted batch's unlinks (idempotent, and the
//! batch was never acknowledged), nothing is written before the checks pass.

use super::consistency;
use super::open::Recovered;
use crate::buffer::skiplist::SkiplistBuffer;
use crate::buffer::BufferRef;
use crate::error::{Error, Result};
use crate::file_names::{parse_skiplist_region_name, skiplist_region_name};
use crate::fs::FileSystem;
use crate::options::Options;
use crate::pm::PmDeviceRef;
use crate::version::RecoveredManifest;
use std::collections::BTreeSet;
use std::path::Path;

/// Verifies the tree files the manifest names and recovers every skiplist it names.
pub(super) fn recover_skiplists(
    fs: &dyn FileSystem,
    path: &Path,
    pm: &PmDeviceRef,
    manifest: Option<RecoveredManifest>,
    opts: &Options,
) -> Result<Recovered> {
    let (state, redirects) = consistency::verified_tree(fs, path, manifest.as_ref(), opts)?;
    let named: BTreeSet<u64> = state.pm_logs.iter().flatten().copied().collect();
    let named: BTreeSet<u64> = named.range(state.min_unflushed_pmlog..).copied().collect();
    let present = present_regions(pm)?;
    let mut tables = Vec::new();
    for &n in &named {
        if !present.contains(&n) {
            missing(pm, n, opts.allow_missing_pm)?;
            continue;
        }
        let buffer = SkiplistBuffer::recover(&**pm, n)?;
        if !crate::buffer::WriteBuffer::is_empty(&*buffer) {
            tables.push(buffer as BufferRef);
        }
    }
    tables.reverse(); // newest first
    let remove = present
        .iter()
        .filter(|n| !tables.iter().any(|t| t.number() == **n))
        .map(|&n| {
            (
                skiplist_region_name(n),
                "not an unflushed buffer".to_string(),
            )
        })
        .collect();
    Ok(Recovered {
        state,
        tables,
        remove,
        emptied: Vec::new(),
        redirects,
        wals: Default::default(),
    })
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
