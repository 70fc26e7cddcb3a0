//! The database as the host of its background jobs: the [`JobHost`] it offers a running job and
//! the [`JobContext`] it builds for each one (`compaction/context.rs`).

use crate::compaction::context::{JobContext, JobHost, JobOptions};
use crate::db::state::DbInner;
use crate::observe::stats::Counters;
use crate::sst::SstDir;
use crate::values::ValueLocator;
use crate::version::Version;
use std::sync::Arc;
use std::time::Duration;

/// The longest a job sleeps for slowed writers at one look at the pace (so a closing
/// database waits at most this long for it).
const MAX_YIELD: Duration = Duration::from_millis(50);

impl JobHost for DbInner {
    fn new_output_number(&self) -> u64 {
        DbInner::new_output_number(self)
    }

    fn abandon_outputs(&self, numbers: &[u64]) {
        self.versions.abandon_outputs(numbers)
    }

    fn closing(&self) -> bool {
        self.bg.shutting_down()
    }

    /// Stopped writers wait for a flush; once none can come (`waits.rs`) they stop waiting
    /// too, and so does this. Slowed writers get half of the job's time back.
    fn yield_to_writers(&self, busy: Duration) {
        while self.writes_stopped() && self.stop_waiting().is_none() {
            let mut g = self.bg.signal();
            self.bg.wait_for(&mut g, Duration::from_millis(10));
        }
        if self.slowdown_due() && !self.bg.shutting_down() {
            std::thread::sleep(busy.min(MAX_YIELD));
        }
    }

    fn flush_read(&self, bytes: u64) {
        self.stall.progress.read(bytes);
    }

    fn count_vlog_file(&self, direct: bool) {
        let counter = match direct {
            true => &self.counters.vlog_direct_files,
            false => &self.counters.vlog_buffered_files,
        };
        Counters::add(counter, 1);
    }

    fn sync_point(&self, point: &'static str) {
        DbInner::sync_point(self, point)
    }
}

impl DbInner {
    /// The options every job reads.
    fn job_options(&self) -> JobOptions {
        let o = &self.opts;
        JobOptions {
            target_file_size: o.target_file_size,
            block_size: o.block_size,
            bloom_bits_per_key: o.bloom_bits_per_key,
            compression: o.compression_by_level(),
            kv_separation_threshold: o.kv_separation_threshold,
            flush_threads: o.flush_threads,
            vlog_direct_writes: o.vlog_direct_writes,
            vlog_cache_written: o.vlog_cache_written,
            keep_tombstones: false,
            sst_dir: SstDir::Data,
        }
    }

    /// The context of a flush starting now: a job context shaped by the design's flush
    /// (threads, output file size).
    pub(crate) fn flush_context(&self) -> JobContext<'_> {
        let mut ctx = self.job_context();
        let shape = self.design.flush_shape(&self.opts);
        ctx.options.flush_threads = shape.threads;
        ctx.options.target_file_size = shape.target_file_size;
        ctx.options.sst_dir = shape.sst_dir;
        ctx
    }

    /// A pointer locator for `version` over this database's value logs and redirect tables.
    pub(crate) fn locator(&self, version: Arc<Version>) -> ValueLocator {
        ValueLocator::new(
            version,
            self.files.vlogs().clone(),
            self.files.redirects().clone(),
        )
    }

    /// The context of a job starting now: the oldest snapshot and the current version's
    /// pointer translations as of this moment.
    pub(crate) fn job_context(&self) -> JobContext<'_> {
        JobContext {
            fs: self.files.dyn_fs(),
            dir: self.files.path(),
            table_cache: self.files.table_cache(),
            options: self.job_options(),
            oldest_snapshot: self.snapshots.oldest(self.visible()),
            range_dels: self.versions.sv().version.range_dels.clone(),
            locator: self.locator(self.versions.sv().version.clone()),
            host: self,
            info_log: &self.info_log,
        }
    }
}
