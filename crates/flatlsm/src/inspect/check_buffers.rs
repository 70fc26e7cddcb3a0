//! `check` of the write buffers, per design (the profile the manifest records):
//! - `flatlsm`: the PM directory's identity and PM Logs, planned as open plans them;
//! - `leveled`: the write-ahead logs, judged as open judges them (`recovery/wal_rules.rs`: every log
//!   the manifest names present and whole, only the newest with a torn tail, no writes missing
//!   between two logs, no unnamed log with writes), every record of each replayed;
//! - `novelsm`: the PM directory's identity and every PM skiplist the manifest names, present
//!   and verified node by node (read from a copy: a check writes nothing);
//! - `matrixkv`: the write-ahead logs as `leveled`, the identity, and the matrix container:
//!   its header, every recorded row's header and metadata, both checksums of every live entry.

use super::check::Checker;
use crate::designs::matrixkv::rows::{row_set, RowSet};
use crate::designs::{durable_parts, BufferKind};
use crate::error::{Error, Result};
use crate::file_names::skiplist_region_name;
use crate::file_names::{parse_wal_file_name, wal_file_name};
use crate::fs::{FileSystem, OsFileSystem};
use crate::options::Profile;
use crate::pm::{DramPmDevice, PmDevice, PmRegion};
use crate::pmskiplist::PmSkiplist;
use crate::recovery::wal_rules::{named_logs, plan_wals, WalDir, WalPlan};
use crate::rowtable::container_header::read_container_header;
use crate::rowtable::RowTable;
use crate::version::RecoveredManifest;
use crate::wal::WalReplay;
use std::path::Path;
use std::sync::Arc;

impl Checker {
    /// Checks the write buffers the way the database's design keeps them.
    pub(super) fn check_write_buffers(
        &mut self,
        pm_dir: &Path,
        m: Option<&RecoveredManifest>,
    ) -> Result<()> {
        let recorded = m.and_then(|m| m.state.profile.as_deref());
        let parts = match crate::designs::recorded_profile(recorded).parse::<Profile>() {
            Ok(profile) => durable_parts(profile),
            Err(e) => {
                self.problem(e, &self.dir.clone());
                return Ok(());
            }
        };
        if parts.wals {
            self.check_wals(m);
        }
        if parts.pm_dir {
            self.check_identity(pm_dir, m);
        }
        match parts.pm_buffers {
            Some(BufferKind::PmSkiplist) => self.check_skiplists(pm_dir, m),
            Some(_) => self.check_pm_dir(pm_dir, m)?,
            None => {}
        }
        self.check_store_regions(pm_dir, m, parts.store_regions);
        Ok(())
    }

    /// Checks each region of a design's own store by the format its name stands for.
    fn check_store_regions(
        &mut self,
        pm_dir: &Path,
        m: Option<&RecoveredManifest>,
        regions: &[&str],
    ) {
        for &region in regions {
            match region {
                crate::file_names::CONTAINER_REGION => self.check_container(pm_dir, m),
                crate::file_names::BTREE_REGION => self.check_btree(pm_dir, m),
                _ => {}
            }
        }
    }

    /// Judges the write-ahead logs as open does, replaying every record of each (a log read
    /// fails as damage of that log); without a manifest, replays each log present.
    fn check_wals(&mut self, m: Option<&RecoveredManifest>) {
        let dir = self.wal_dir.clone();
        let names = self.fs.list_dir(&dir).unwrap_or_default();
        let present: Vec<u64> = names
            .iter()
            .filter_map(|n| parse_wal_file_name(n))
            .collect();
        let Some(m) = m else {
            return present.iter().for_each(|&n| self.check_wal(n));
        };
        let w = WalDir {
            dir: &dir,
            manifest: m,
            present: &present,
            point_in_time: false,
        };
        let report = &mut self.report;
        let plan = plan_wals(&w, |n| {
            let scan = crate::wal::replay_prefix(&OsFileSystem, &dir, n, |_, _, _, _| Ok(()));
            let scan = scan.unwrap_or_else(|e| (WalReplay::default(), Some(e)));
            report.files_checked += 1;
            report.records_checked += scan.0.entries;
            Ok(scan)
        });
        match plan {
            Ok(plan) => self.report_wal_plan(&dir, plan),
            Err(e) => self.problem(e, &dir),
        }
    }

    /// Reports the problems of a plan of the logs in `dir`, and what open drops as notes.
    fn report_wal_plan(&mut self, dir: &Path, plan: WalPlan) {
        for e in plan.problems {
            self.problem(e, dir);
        }
        for note in plan.notes {
            self.report.notes.push(format!("{note} (at next open)"));
        }
        for (n, why) in plan.drop {
            let path = dir.join(wal_file_name(n));
            let note = format!("{}: {why}; removed at next open", path.display());
            self.report.notes.push(note);
        }
    }

    fn check_skiplists(&mut self, pm_dir: &Path, m: Option<&RecoveredManifest>) {
        for n in m.map_or_else(Vec::new, |m| named_logs(&m.state)) {
            let path = pm_dir.join(skiplist_region_name(n));
            match verify_skiplist(&path, n) {
                Ok(check) => {
                    self.report.files_checked += 1;
                    self.report.records_checked += check.entries;
                    if check.uncommitted > 0 {
                        let note = format!(
                            "{}: {} entries of an interrupted batch (dropped at next open)",
                            path.display(),
                            check.uncommitted
                        );
                        self.report.notes.push(note);
                    }
                }
                Err(e) => self.problem(e, &path),
            }
        }
    }
}

impl Checker {
    /// Checks the matrix container's header, every recorded row's header and metadata, and
    /// both checksums of every live entry.
    fn check_container(&mut self, pm_dir: &Path, m: Option<&RecoveredManifest>) {
        let rows = m.map(|m| row_set(&m.state.version));
        let Some(rows) = rows.filter(|r| !r.rows.is_empty()) else {
            return;
        };
        let path = pm_dir.join(crate::file_names::CONTAINER_REGION);
        match check_rows(&path, rows) {
            Ok(entries) => {
                self.report.files_checked += 1;
                self.report.records_checked += entries;
            }
            Err(e) => self.problem(e, &path),
        }
    }
}

impl Checker {
    /// SLM-DB's B+-tree, recovered from a copy in memory (the file is left alone): its leaves,
    /// slots and key records; entries naming an SST the manifest lacks are noted (keys of an
    /// interrupted flush, which its skiplist still holds).
    fn check_btree(&mut self, pm_dir: &Path, m: Option<&RecoveredManifest>) {
        let Some(m) = m.filter(|m| m.state.version.num_files(0) > 0) else {
            return;
        };
        let path = pm_dir.join(crate::file_names::BTREE_REGION);
        let scanned = copy_region(&path, "the manifest names SSTs this B+-tree indexes")
            .and_then(|r| crate::pmbtree::PmBtree::recover(r)?.scan());
        let entries = match scanned {
            Ok(entries) => entries,
            Err(e) => return self.problem(e, &path),
        };
        self.report.files_checked += 1;
        self.report.records_checked += entries.len() as u64;
        let named = |n: u64| m.state.version.levels[0].iter().any(|f| f.number == n);
        let unnamed = entries.iter().filter(|(_, l)| !named(l.file)).count();
        if unnamed > 0 {
            self.report.notes.push(format!(
                "{}: {unnamed} entries name SSTs the manifest lacks (an interrupted flush; its \
                 skiplist holds those keys and its next flush indexes them again)",
                path.display()
            ));
        }
    }
}

/// Verifies the rows of the container in file `path` from a copy in memory; the entries read.
fn check_rows(path: &Path, rows: &RowSet) -> Result<u64> {
    let region = copy_region(path, "the manifest names rows of this matrix container")?;
    let page_size = read_container_header(&*region)?;
    let mut entries = 0;
    for r in rows.rows.values() {
        let table = RowTable::open(region.clone(), page_size, r.meta.first_page, r.meta.number)?;
        for i in r.first..table.len() {
            table.entry(i)?;
            entries += 1;
        }
    }
    Ok(entries)
}

/// Verifies the skiplist in file `path` from a copy in memory.
fn verify_skiplist(path: &Path, number: u64) -> Result<crate::pmskiplist::PslCheck> {
    let region = copy_region(path, "the manifest names this PM skiplist")?;
    PmSkiplist::verify(&*region, number)
}

/// A DRAM copy of the PM file `path` (`why` it must exist goes into the error).
fn copy_region(path: &Path, why: &str) -> Result<Arc<dyn PmRegion>> {
    let data = crate::fs::OsFileSystem.read_all(path).map_err(|e| {
        let detail = format!("{why} but it cannot be read: {e}");
        Error::corruption(path, 0, detail)
    })?;
    let copy = DramPmDevice::new(path.parent().unwrap_or(Path::new("/")));
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let region = copy.create_region(&name, data.len())?;
    region.write(0, &data);
    Ok(region)
}
