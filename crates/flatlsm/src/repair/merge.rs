//! The merging half of [`super::repair`]: makes the SSTs it found safe to read as level 0.
//!
//! Level 0 is read newest file first, stopping at the first version found. That is right only
//! if, of two files sharing a user key, the later one holds the newer versions. Files found on
//! disk need not be so: a compaction output can hold an old version of one key and the newest
//! of another (its inputs came from two levels) while a file left above it holds a middle
//! version of the first. Two files *conflict* when their user-key ranges overlap and their
//! sequence ranges overlap. Repair groups conflicting runs (a run: files that never overlap in
//! user keys), transitively, and rewrites each group as one new run through a merging
//! iterator, which orders versions by sequence whatever file holds them; until no two runs
//! conflict. Then any two overlapping files have disjoint sequence ranges, and ordering the
//! files by largest sequence is level 0's order. Every version is kept (no snapshot or
//! tombstone rule applies); an entry seen twice (the same internal key) is written once.
//!
//! Persist order: each output is written under a `.tmp` name, synced, renamed and its directory
//! synced. Inputs stay until the new manifest — which names only the outputs — commits; the
//! next open then purges them as orphans (their every entry is in an output). A crash before the
//! commit leaves outputs duplicating their inputs: the next repair finds both, they conflict,
//! and the rewrite writes each entry once.

use super::scan::{Scan, ScannedSst};
use crate::error::{IoContext, Result};
use crate::fs::{tmp_path, FsRef};
use crate::iter::{InternalIterator, MergingIterator};
use crate::options::Options;
use crate::sst::{SstDir, SstDirs, TableBuildOptions, TableBuilder, TableCache};
use crate::types::user_key_of;
use crate::version::LevelIterator;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Tables a repair keeps open at most without `Options::max_open_files` (well below the usual
/// soft limit of 1024 descriptors).
const MAX_OPEN_TABLES: usize = 256;

/// Files that never overlap in user keys, in key order.
pub(super) type Run = Vec<ScannedSst>;

/// How repair writes the runs it rewrites.
pub(super) struct RunWriter {
    fs: FsRef,
    dirs: SstDirs,
    tables: Arc<TableCache>,
    build: TableBuildOptions,
    target_file_size: u64,
    /// The next file number to use (above every number present).
    pub next_number: u64,
    /// The files rewritten into new runs (the next open purges them).
    pub rewritten: Vec<PathBuf>,
}

impl RunWriter {
    /// A writer of files numbered from `next_number`, laid out as `opts` says for level 0.
    pub fn new(fs: FsRef, dirs: SstDirs, opts: &Options, next_number: u64) -> Self {
        let open = opts.max_open_files.unwrap_or(MAX_OPEN_TABLES);
        let tables = Arc::new(TableCache::new(fs.clone(), dirs.clone(), None).with_capacity(open));
        let build = TableBuildOptions {
            block_size: opts.block_size,
            bloom_bits_per_key: opts.bloom_bits_per_key,
            compression: opts.compression_for_level(0),
        };
        RunWriter {
            fs,
            dirs,
            tables,
            build,
            target_file_size: opts.target_file_size,
            next_number,
            rewritten: Vec::new(),
        }
    }

    /// Rewrites conflicting runs until none conflict (only if level 0 is `read_in_order`);
    /// returns every file, in level-0 order.
    pub fn resolve(&mut self, mut runs: Vec<Run>, read_in_order: bool) -> Result<Vec<ScannedSst>> {
        if read_in_order {
            runs = self.merge_conflicts(runs)?;
        }
        let mut files: Vec<ScannedSst> = runs.into_iter().flatten().collect();
        files.sort_by_key(|s| (s.max_seq, s.meta.number));
        Ok(files)
    }

    /// Merges conflicting runs until none conflict.
    fn merge_conflicts(&mut self, mut runs: Vec<Run>) -> Result<Vec<Run>> {
        loop {
            let groups = conflict_groups(&runs);
            if groups.iter().all(|g| g.len() == 1) {
                return Ok(runs);
            }
            runs = self.merge_groups(runs, groups)?;
        }
    }

    /// One run per group: a lone run as it is, a group of several merged.
    fn merge_groups(&mut self, runs: Vec<Run>, groups: Vec<Vec<usize>>) -> Result<Vec<Run>> {
        let mut slots: Vec<Option<Run>> = runs.into_iter().map(Some).collect();
        let mut out = Vec::with_capacity(groups.len());
        for group in groups {
            let members: Vec<Run> = group.iter().filter_map(|&i| slots[i].take()).collect();
            match members.len() {
                1 => out.extend(members),
                _ => out.push(self.merge(members)?),
            }
        }
        Ok(out)
    }

    /// Writes the entries of `runs`, merged, as one new run. Their files are read as few
    /// non-overlapping sequences as their overlaps allow, so the merge holds one table open
    /// per sequence (the depth of the overlap), not one per file.
    fn merge(&mut self, runs: Vec<Run>) -> Result<Run> {
        let files: Vec<ScannedSst> = runs.into_iter().flatten().collect();
        for s in &files {
            self.rewritten
                .push(self.dirs.path(s.meta.number, s.meta.dir));
        }
        let children: Vec<Box<dyn InternalIterator>> = pack(files)
            .into_iter()
            .map(|seq| {
                let files = seq.into_iter().map(|s| Arc::new(s.meta)).collect();
                Box::new(LevelIterator::new(files, self.tables.clone())) as Box<_>
            })
            .collect();
        self.write_run(&mut MergingIterator::new(children))
    }

    /// Writes `source` (in internal-key order) as a run of new files in the database directory,
    /// each entry once, a user key's versions in one file.
    pub fn write_run(&mut self, source: &mut dyn InternalIterator) -> Result<Run> {
        let mut out = RunOutput::default();
        source.seek_to_first();
        while source.valid() {
            self.add_once(&mut out, source.key(), source.value())?;
            source.next();
        }
        source.status()?;
        self.close_file(&mut out)?;
        Ok(out.run)
    }

    /// Adds an entry unless it repeats the last one (a crashed repair's output beside its
    /// input); a new user key may start a new file.
    fn add_once(&mut self, out: &mut RunOutput, key: &[u8], value: &[u8]) -> Result<()> {
        let last = out.last.as_deref();
        if last == Some(key) {
            return Ok(());
        }
        let new_user_key = last.is_none_or(|l| user_key_of(l) != user_key_of(key));
        if new_user_key && out.current.as_ref().is_some_and(|f| self.full(f)) {
            self.close_file(out)?;
        }
        let file = match &mut out.current {
            Some(f) => f,
            None => out.current.insert(self.create()?),
        };
        file.add(key, value)?;
        let last = out.last.get_or_insert_with(Vec::new);
        last.clear();
        last.extend_from_slice(key);
        Ok(())
    }

    /// Finishes the file being written, if any, into the run.
    fn close_file(&self, out: &mut RunOutput) -> Result<()> {
        if let Some(f) = out.current.take() {
            out.run.push(f.finish(&*self.fs)?);
        }
        Ok(())
    }

    fn full(&self, f: &OutputFile) -> bool {
        f.builder.estimated_size() >= self.target_file_size
    }

    fn create(&mut self) -> Result<OutputFile> {
        let number = self.next_number;
        self.next_number += 1;
        let path = self.dirs.path(number, SstDir::Data);
        let tmp = tmp_path(&path);
        let file = self
            .fs
            .create(&tmp)
            .context(|| format!("creating {}", tmp.display()))?;
        Ok(OutputFile {
            number,
            builder: TableBuilder::new(file, tmp.clone(), self.build.clone()),
            scan: Scan::default(),
            tmp,
            path,
        })
    }
}

/// A run being written: its finished files, the one being written, the last entry's key.
#[derive(Default)]
struct RunOutput {
    run: Run,
    current: Option<OutputFile>,
    last: Option<Vec<u8>>,
}

/// One output being written.
struct OutputFile {
    number: u64,
    builder: TableBuilder,
    scan: Scan,
    tmp: PathBuf,
    path: PathBuf,
}

impl OutputFile {
    fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.scan.add(key, value, &self.path)?;
        self.builder.add(key, value)
    }

    /// Finishes (synced), renames to its final name and syncs the directory.
    fn finish(self, fs: &dyn crate::fs::FileSystem) -> Result<ScannedSst> {
        let summary = self.builder.finish()?;
        let (tmp, path) = (&self.tmp, &self.path);
        fs.rename(tmp, path)
            .context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        fs.sync_dir(dir)
            .context(|| format!("syncing {}", dir.display()))?;
        self.scan
            .into_sst(self.number, summary.file_size, SstDir::Data, path)
    }
}

/// `files` as few sequences of files that never overlap in user keys as possible (first fit
/// by smallest key, which is optimal for intervals).
fn pack(mut files: Vec<ScannedSst>) -> Vec<Run> {
    files.sort_by(|a, b| user_key_of(&a.meta.smallest).cmp(user_key_of(&b.meta.smallest)));
    let mut runs: Vec<Run> = Vec::new();
    for f in files {
        let after = |run: &Run| {
            let last = run.last().expect("runs are never empty");
            user_key_of(&last.meta.largest) < user_key_of(&f.meta.smallest)
        };
        match runs.iter_mut().find(|r| after(r)) {
            Some(run) => run.push(f),
            None => runs.push(vec![f]),
        }
    }
    runs
}

/// True if `a` and `b` share user keys and sequence numbers (see the module documentation).
fn conflict(a: &ScannedSst, b: &ScannedSst) -> bool {
    let (a_lo, a_hi) = (user_key_of(&a.meta.smallest), user_key_of(&a.meta.largest));
    let (b_lo, b_hi) = (user_key_of(&b.meta.smallest), user_key_of(&b.meta.largest));
    let keys = a_lo <= b_hi && b_lo <= a_hi;
    keys && a.min_seq <= b.max_seq && b.min_seq <= a.max_seq
}

fn runs_conflict(a: &Run, b: &Run) -> bool {
    a.iter().any(|x| b.iter().any(|y| conflict(x, y)))
}

/// The runs' indexes grouped by conflict, transitively (union-find); every run in one group.
fn conflict_groups(runs: &[Run]) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..runs.len()).collect();
    for i in 0..runs.len() {
        for j in i + 1..runs.len() {
            if runs_conflict(&runs[i], &runs[j]) {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                parent[a] = b;
            }
        }
    }
    let mut groups: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for i in 0..runs.len() {
        groups.entry(root(&mut parent, i)).or_default().push(i);
    }
    groups.into_values().collect()
}

fn root(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}
