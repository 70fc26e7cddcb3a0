//! Writers for the outputs of a flush/compaction/GC job: a rolling sequence of SSTables (with
//! per-file value-log reference accounting) and a value log for separated values.
//!
//! Invariants: one user key's versions never straddle two output files, so files of a level
//! stay non-overlapping in user keys. A copied pointer into a value log that GC redirected is
//! rewritten to the record's new place (lazy fix-up, `db/values.rs`), as the version current
//! when the output was created sees it; each file's `vlog_refs` counts the pointers it holds
//! after that rewrite, so new files never name a log redirected before the job began.

use super::context::JobContext;
use crate::error::{Error, Result};
use crate::sst::{TableBuildOptions, TableBuilder};
use crate::types::{
    append_internal_key, parse_internal_key, user_key_of, SequenceNumber, ValueKind, ValuePointer,
};
use crate::version::{FileMeta, VlogMeta, MAX_LEVELS};
use crate::vlog::{VlogIo, VlogWriter};
use std::collections::BTreeMap;

struct OpenTable {
    number: u64,
    builder: TableBuilder,
    vlog_refs: BTreeMap<u64, u64>,
}

/// A rolling sequence of output SSTables.
pub(crate) struct TableOutput<'a> {
    ctx: &'a JobContext<'a>,
    /// The level of the version the outputs go to (decides their compression).
    level: usize,
    current: Option<OpenTable>,
    last_user_key: Vec<u8>,
    /// Reused buffer for the internal keys [`TableOutput::add_pointer`] builds.
    key_scratch: Vec<u8>,
    files: Vec<FileMeta>,
}

impl<'a> TableOutput<'a> {
    /// Outputs for `level` of the version.
    pub fn new(ctx: &'a JobContext<'a>, level: usize) -> Self {
        TableOutput {
            ctx,
            level,
            current: None,
            last_user_key: Vec::new(),
            key_scratch: Vec::new(),
            files: Vec::new(),
        }
    }

    /// Adds an entry; keys must arrive in internal-key order. A value pointer is rewritten if
    /// its log is redirected, and accounted to the log it then names.
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        if parse_internal_key(ikey).map(|p| p.kind) != Some(ValueKind::ValuePointer) {
            return self.add_entry(ikey, value, None);
        }
        let ptr = ValuePointer::decode(value)
            .ok_or_else(|| Error::InvalidState("malformed value pointer in merge".into()))?;
        let moved = self.ctx.locator.locate(&ptr)?;
        if moved == ptr {
            return self.add_entry(ikey, value, Some(&ptr));
        }
        self.add_entry(ikey, &moved.encode(), Some(&moved))
    }

    /// Adds `user_key`@`seq` pointing at `ptr` (a value just written to a value log), building
    /// the internal key in a reused buffer.
    pub fn add_pointer(
        &mut self,
        user_key: &[u8],
        seq: SequenceNumber,
        ptr: &ValuePointer,
    ) -> Result<()> {
        let mut key = std::mem::take(&mut self.key_scratch);
        key.clear();
        append_internal_key(&mut key, user_key, seq, ValueKind::ValuePointer);
        let res = self.add_entry(&key, &ptr.encode(), Some(ptr));
        self.key_scratch = key;
        res
    }

    /// Adds an entry, rolling to a new file first if the current one is full (never between
    /// two versions of one user key); `ptr` is the entry's value pointer, if it is one.
    fn add_entry(&mut self, ikey: &[u8], value: &[u8], ptr: Option<&ValuePointer>) -> Result<()> {
        let uk = user_key_of(ikey);
        let roll = self
            .current
            .as_ref()
            .is_some_and(|t| t.builder.estimated_size() >= self.ctx.options.target_file_size)
            && uk != self.last_user_key.as_slice();
        if roll {
            self.finish_current()?;
        }
        if self.current.is_none() {
            self.current = Some(self.open_table()?);
        }
        let t = self.current.as_mut().expect("opened above");
        t.builder.add(ikey, value)?;
        if let Some(ptr) = ptr {
            *t.vlog_refs.entry(ptr.file_number).or_insert(0) += u64::from(ptr.record_len);
        }
        self.last_user_key.clear();
        self.last_user_key.extend_from_slice(uk);
        Ok(())
    }

    fn open_table(&self) -> Result<OpenTable> {
        let number = self.ctx.host.new_output_number();
        let path = self
            .ctx
            .table_cache
            .dirs()
            .path(number, self.ctx.options.sst_dir);
        let file = self
            .ctx
            .fs
            .create(&path)
            .map_err(|e| Error::io(format!("creating {}", path.display()), e))?;
        let opts = TableBuildOptions {
            block_size: self.ctx.options.block_size,
            bloom_bits_per_key: self.ctx.options.bloom_bits_per_key,
            compression: self.ctx.options.compression[self.level.min(MAX_LEVELS - 1)],
        };
        Ok(OpenTable {
            number,
            builder: TableBuilder::new(file, path, opts),
            vlog_refs: BTreeMap::new(),
        })
    }

    fn finish_current(&mut self) -> Result<()> {
        let Some(t) = self.current.take() else {
            return Ok(());
        };
        let summary = t.builder.finish()?;
        self.files.push(FileMeta {
            number: t.number,
            file_size: summary.file_size,
            num_entries: summary.num_entries,
            smallest: summary.smallest,
            largest: summary.largest,
            vlog_refs: t.vlog_refs.into_iter().collect(),
            dir: self.ctx.options.sst_dir,
            range_dels_applied: self
                .ctx
                .range_dels
                .applied_through(self.ctx.oldest_snapshot),
        });
        Ok(())
    }

    /// Finishes the last file; returns every file written (synced).
    pub fn finish(mut self) -> Result<Vec<FileMeta>> {
        self.finish_current()?;
        Ok(self.files)
    }
}

/// A value log written by one job thread, created on the first separated value.
pub(crate) struct VlogOutput<'a> {
    ctx: &'a JobContext<'a>,
    writer: Option<VlogWriter>,
    first_offset: u64,
}

impl<'a> VlogOutput<'a> {
    pub fn new(ctx: &'a JobContext<'a>) -> Self {
        VlogOutput {
            ctx,
            writer: None,
            first_offset: 0,
        }
    }

    /// Appends a record; returns the encoded pointer to store in the SSTable.
    pub fn append(&mut self, key: &[u8], value: &[u8]) -> Result<ValuePointer> {
        if self.writer.is_none() {
            let number = self.ctx.host.new_output_number();
            let io = VlogIo {
                direct: self.ctx.options.vlog_direct_writes,
                cache_written: self.ctx.options.vlog_cache_written,
            };
            let w = VlogWriter::create(self.ctx.fs, self.ctx.dir, number, io)?;
            self.first_offset = w.len();
            self.writer = Some(w);
        }
        self.writer
            .as_mut()
            .expect("created above")
            .append(key, value)
    }

    /// The log's file number, once the first record created it.
    pub fn number(&self) -> Option<u64> {
        self.writer.as_ref().map(VlogWriter::number)
    }

    /// Syncs the log; returns its metadata (record bytes) if anything was written.
    pub fn finish(self) -> Result<Option<VlogMeta>> {
        let Some(w) = self.writer else {
            return Ok(None);
        };
        let (number, direct) = (w.number(), w.is_direct());
        let size = w.finish()?;
        self.ctx.host.count_vlog_file(direct);
        Ok(Some(VlogMeta {
            number,
            total_bytes: size - self.first_offset,
        }))
    }
}
