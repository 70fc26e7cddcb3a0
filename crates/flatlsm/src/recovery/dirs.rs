//! The purge of orphans at open: files in the data and PM directories (`crate::layout`) the
//! recovered version does not name.

use crate::error::{IoContext, Result};
use crate::file_names::{parse_numbered_file, NumberedFile};
use crate::fs::FileSystem;
use crate::layout::pm_sst_names;
use crate::observe::info_log::event;
use crate::sst::SstDirs;
use crate::version::Version;
use std::collections::HashSet;

/// Deletes SSTs, value logs and redirect tables the recovered version does not name, and
/// leftover temporary files. Called only after `verify` passed and the new manifest is durable, which is what
/// makes it safe:
/// - An unnamed file is an output of a job whose manifest record never became durable (a
///   crash), or of a record that was durable once and then lost (a manifest cut short or
///   replaced by an older copy). After a lost record took effect its inputs were deleted (input
///   SSTs and value logs, or the flushed PM Log, which a tracking manifest still records), so
///   the recovered state names missing files and `verify` refused. Hence, once it passed,
///   every acknowledged write is in a named file or a kept PM Log and unnamed files hold copies.
/// - A rule "never delete files numbered at or above the recovered `next_file_number`" would add
///   nothing: a lost record's outputs can be numbered below it (a later record of another job
///   carries a higher `next_file_number`), and the outputs of a job a crash interrupted are
///   usually numbered above it and must go.
/// - Limit: a manifest written before PM Logs were recorded cannot reveal a lost flush record
///   whose only input was a PM Log. It is replaced by a tracking snapshot at this open.
pub(crate) fn purge_orphans(
    fs: &dyn FileSystem,
    dirs: &SstDirs,
    version: &Version,
    write_buffers: &[u64],
    info_log: &crate::observe::info_log::InfoLog,
) -> Result<()> {
    let mut live: HashSet<u64> = version.file_numbers().into_iter().collect();
    live.extend(write_buffers); // their write-ahead logs, for designs with one
    live.extend(version.vlogs.keys().copied());
    live.extend(version.redirect_file_numbers());
    let path = &dirs.data;
    let names = fs
        .list_dir(path)
        .context(|| format!("listing {}", path.display()))?;
    let in_data = names.into_iter().map(|n| (path, n));
    let in_pm = pm_sst_names(fs, dirs)?.into_iter().map(|n| (&dirs.pm, n));
    for (path, name) in in_data.chain(in_pm) {
        let orphan = match parse_numbered_file(&name) {
            Some(NumberedFile::Manifest(_)) => false,
            Some(f) => !live.contains(&f.number()),
            None => name.ends_with(".tmp"),
        };
        if orphan {
            let note = format!("removing orphan file {name} left by an interrupted job");
            event!(info_log, Info, note);
            fs.remove_file(&path.join(&name))
                .context(|| format!("removing orphan {name}"))?;
        }
    }
    Ok(())
}
