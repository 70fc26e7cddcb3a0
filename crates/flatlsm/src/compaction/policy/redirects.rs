//! The redirect fix-up pick (every design with value logs), once writes are quiet: a file of a
//! level >= 1 that still names a value log the GC collected is rewritten in place, alone, so its
//! pointers name the log the values moved to (the compaction output rewrites every pointer
//! through the redirect tables, `compaction/output.rs`).
//!
//! Why: until then every get of such a key searches the redirect table of its old log (a binary
//! search over the log's moved records) before it reads the value. While writes run the later
//! compactions fix the pointers as they pass; after the quiet GC has collected most logs (`db/
//! quiet.rs`), nearly every get would pay the search: 1 KB YCSB-C in memory ran 30% slower
//! before this pick. The files hold keys and pointers only, so the rewrite costs little next to
//! the GC that made it necessary; once no file names a victim its redirect is dropped.
//!
//! Rules: only when `PolicyView::writes_quiet`; level 0 is left to the designs' own compactions
//! (an in-place rewrite there would make old data look newer than later runs; FlatLSM's quiet
//! merge of the runs fixes their pointers as it goes).

use super::PolicyView;
use crate::compaction::job::Compaction;
use crate::version::{FileMeta, Version};

/// The first file (level 1 down), not busy, naming a redirected log, as a compaction of that
/// file into its own level; `None` unless writes are quiet.
pub(crate) fn rewrite_redirected(view: &PolicyView<'_>) -> Option<Compaction> {
    if !view.writes_quiet || view.version.redirects.is_empty() {
        return None;
    }
    let levels = view.version.levels.iter().enumerate().skip(1);
    let (level, file) = levels
        .flat_map(|(l, files)| files.iter().map(move |f| (l, f)))
        .find(|(_, f)| !(view.busy)(f.number) && names_victim(view.version, f))?;
    Some(super::range_dels::in_place(level, file.clone()))
}

/// True if `f` references a value log the version redirects.
fn names_victim(version: &Version, f: &FileMeta) -> bool {
    f.vlog_refs
        .iter()
        .any(|(log, _)| version.redirects.contains_key(log))
}
