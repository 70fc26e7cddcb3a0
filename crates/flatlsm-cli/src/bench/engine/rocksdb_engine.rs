//! RocksDB in process (feature `rocksdb`), configured as the comparison asks: memtables
//! equal to the PMTable budget (write_buffer_size = pmtable_size, same max_write_buffer_number),
//! WAL in the PM directory, no compression, bloom filter 10 bits/key, the same block cache.
//!
//! With `RocksDbSetup::min_blob_size` it is RocksDB with integrated BlobDB ("RocksDB+Blob"):
//! values of at least that size (FlatLSM's `kv_separation_threshold`) go to blob files, and blob
//! GC runs during compaction, FlatLSM's key-value separation done RocksDB's way. Its
//! `rocksdb.flush.write.bytes` and `rocksdb.compact.write.bytes` already include blob-file
//! bytes, so write amplification is computed from them alone
//! (`rocksdb.blobdb.blob.file.bytes.written` counts the same bytes again).

use super::{Direction, Engine, EngineStats};
use rocksdb::statistics::{Histogram, Ticker};
use rocksdb::{BlockBasedOptions, Cache, DBCompressionType, Options, WriteOptions, DB};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A RocksDB database under test.
pub struct RocksDbEngine {
    db: Option<DB>,
    dir: PathBuf,
    wal_dir: Option<PathBuf>,
    options: Options,
    sync: bool,
    /// Integrated BlobDB is on.
    blob: bool,
    user_bytes: std::sync::atomic::AtomicU64,
}

/// How the comparison sizes RocksDB.
#[derive(Debug, Clone)]
pub struct RocksDbSetup {
    /// Memtable size (= PMTable size).
    pub write_buffer_size: usize,
    /// Memtables (= PMTables).
    pub max_write_buffer_number: usize,
    /// Block cache bytes (= FlatLSM's block cache).
    pub block_cache_size: usize,
    /// Data block size (= FlatLSM's).
    pub block_size: usize,
    /// Background threads (= FlatLSM's flush threads).
    pub background_jobs: usize,
    /// Integrated BlobDB: values of at least this many bytes go to blob files, blob GC on
    /// (`None`: plain RocksDB).
    pub min_blob_size: Option<u64>,
}

impl RocksDbEngine {
    /// Opens a fresh or existing RocksDB in `dir` with its WAL in `wal_dir`.
    pub fn open(
        dir: &Path,
        wal_dir: Option<&Path>,
        setup: &RocksDbSetup,
        sync: bool,
    ) -> Result<RocksDbEngine, String> {
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_write_buffer_size(setup.write_buffer_size);
        o.set_max_write_buffer_number(setup.max_write_buffer_number as i32);
        o.set_compression_type(DBCompressionType::None);
        if let Some(min) = setup.min_blob_size {
            o.set_enable_blob_files(true);
            o.set_min_blob_size(min);
            o.set_enable_blob_gc(true);
        }
        o.set_max_background_jobs(setup.background_jobs.max(2) as i32);
        o.enable_statistics();
        if let Some(w) = wal_dir {
            o.set_wal_dir(w);
        }
        let mut table = BlockBasedOptions::default();
        table.set_bloom_filter(10.0, false);
        table.set_block_size(setup.block_size);
        table.set_block_cache(&Cache::new_lru_cache(setup.block_cache_size));
        o.set_block_based_table_factory(&table);
        let db = open_with_default_cf(&o, dir)
            .map_err(|e| format!("opening RocksDB at {}: {e}", dir.display()))?;
        Ok(RocksDbEngine {
            db: Some(db),
            dir: dir.to_path_buf(),
            wal_dir: wal_dir.map(Path::to_path_buf),
            options: o,
            sync,
            blob: setup.min_blob_size.is_some(),
            user_bytes: Default::default(),
        })
    }

    fn db(&self) -> Result<&DB, String> {
        self.db
            .as_ref()
            .ok_or_else(|| "the database is closed".to_string())
    }

    /// Time flushes took: the sum of the `rocksdb.db.flush.micros` histogram.
    fn flush_micros(&self) -> u64 {
        self.options.get_histogram_data(Histogram::FlushTime).sum()
    }

    fn property(&self, name: &str) -> u64 {
        self.db
            .as_ref()
            .and_then(|d| d.property_int_value(name).ok().flatten())
            .unwrap_or(0)
    }
}

impl Engine for RocksDbEngine {
    fn name(&self) -> String {
        if self.blob {
            "RocksDB+Blob".into()
        } else {
            "RocksDB".into()
        }
    }

    fn describe(&self) -> String {
        format!(
            "{} {} (rocksdb crate 0.25, in process, release build): db {} | WAL {}",
            self.name(),
            "11.8.1",
            self.dir.display(),
            self.wal_dir
                .as_ref()
                .map_or_else(|| "<db>".into(), |w| w.display().to_string())
        )
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        let mut w = WriteOptions::default();
        w.set_sync(self.sync);
        self.db()?
            .put_opt(key, value, &w)
            .map_err(|e| e.to_string())?;
        self.user_bytes.fetch_add(
            (key.len() + value.len()) as u64,
            std::sync::atomic::Ordering::Relaxed,
        );
        Ok(())
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, String> {
        Ok(self
            .db()?
            .get_pinned(key)
            .map_err(|e| e.to_string())?
            .map(|v| v.to_vec()))
    }

    fn multi_get(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, String> {
        let db = self.db()?;
        let Some(cf) = db.cf_handle(rocksdb::DEFAULT_COLUMN_FAMILY_NAME) else {
            return keys.iter().map(|k| self.get(k)).collect();
        };
        let values = db.batched_multi_get_cf(cf, keys, false);
        let copy = |v: Result<Option<rocksdb::DBPinnableSlice>, rocksdb::Error>| {
            v.map(|v| v.map(|s| s.to_vec())).map_err(|e| e.to_string())
        };
        values.into_iter().map(copy).collect()
    }

    fn scan(
        &self,
        start: Option<&[u8]>,
        dir: Direction,
        limit: u64,
        visit: &mut dyn FnMut(usize) -> bool,
    ) -> Result<u64, String> {
        let mut it = self.db()?.raw_iterator();
        match (start, dir) {
            (Some(k), Direction::Forward) => it.seek(k),
            (Some(k), Direction::Reverse) => it.seek_for_prev(k),
            (None, Direction::Forward) => it.seek_to_first(),
            (None, Direction::Reverse) => it.seek_to_last(),
        }
        let mut n = 0;
        while n < limit && it.valid() {
            n += 1;
            // The limit's entry ends the scan without a step past it (whose value read
            // neither engine's user would pay for).
            if !visit(it.key().map_or(0, <[u8]>::len) + it.value().map_or(0, <[u8]>::len))
                || n == limit
            {
                break;
            }
            match dir {
                Direction::Forward => it.next(),
                Direction::Reverse => it.prev(),
            }
        }
        it.status().map_err(|e| e.to_string())?;
        Ok(n)
    }

    fn stats(&self) -> EngineStats {
        let t = |k| self.options.get_ticker_count(k);
        EngineStats {
            stall_micros: t(Ticker::StallMicros),
            user_bytes: self.user_bytes.load(std::sync::atomic::Ordering::Relaxed),
            // Blob-file bytes are inside both tickers already (module docs).
            ssd_bytes: t(Ticker::FlushWriteBytes) + t(Ticker::CompactWriteBytes),
            pm_bytes: t(Ticker::WalFileBytes),
            flush_bytes: t(Ticker::FlushWriteBytes),
            flush_micros: self.flush_micros(),
            store_compactions: Vec::new(),
            taken_ms: 0,
            sst_file_bytes: self.property("rocksdb.total-sst-files-size"),
            value_file_bytes: self.property("rocksdb.total-blob-file-size"),
            // Bytes of the current version's blob files less the garbage RocksDB counts in
            // them (`live-blob-file-size` alone counts the garbage as live).
            live_value_bytes: self
                .property("rocksdb.live-blob-file-size")
                .saturating_sub(self.property("rocksdb.live-blob-file-garbage-size")),
            // RocksDB's perf context would split its writes; not read here.
            breakdown: super::WriteBreakdown::default(),
        }
    }

    fn tickers(&self) -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = [
            ("rocksdb.bytes.written", Ticker::BytesWritten),
            ("rocksdb.wal.bytes", Ticker::WalFileBytes),
            ("rocksdb.flush.write.bytes", Ticker::FlushWriteBytes),
            ("rocksdb.compact.write.bytes", Ticker::CompactWriteBytes),
            ("rocksdb.stall.micros", Ticker::StallMicros),
            (
                "rocksdb.blobdb.blob.file.bytes.written",
                Ticker::BlobDbBlobFileBytesWritten,
            ),
        ]
        .into_iter()
        .map(|(k, t)| (k.to_string(), self.options.get_ticker_count(t)))
        .collect();
        v.push(("rocksdb.db.flush.micros.sum".into(), self.flush_micros()));
        v
    }

    fn wait_for_background_work(&self) -> Result<(), String> {
        // Settled = nothing running and nothing pending (the same test db_bench's
        // waitforcompaction makes), polled every 20 ms.
        loop {
            let busy = self.property("rocksdb.num-running-compactions")
                + self.property("rocksdb.num-running-flushes")
                + self.property("rocksdb.compaction-pending")
                + self.property("rocksdb.mem-table-flush-pending");
            if busy == 0 {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn reopen(&mut self) -> Result<Duration, String> {
        drop(self.db.take());
        let start = Instant::now();
        let db = open_with_default_cf(&self.options, &self.dir)
            .map_err(|e| format!("reopening RocksDB: {e}"))?;
        let took = start.elapsed();
        self.db = Some(db);
        Ok(took)
    }

    fn recovery_bytes(&self) -> Option<u64> {
        None
    }

    fn directories(&self) -> (Vec<PathBuf>, Vec<PathBuf>) {
        (
            vec![self.dir.clone()],
            self.wal_dir.iter().cloned().collect(),
        )
    }

    fn block_cache_bytes(&self) -> Option<u64> {
        Some(self.property("rocksdb.block-cache-usage"))
    }

    fn close(&mut self) -> Result<(), String> {
        drop(self.db.take());
        Ok(())
    }
}

/// Opens the database at `dir` naming its default column family, so that `cf_handle` finds it
/// (the batched `MultiGet` takes a handle; `DB::open` keeps none).
fn open_with_default_cf(opts: &Options, dir: &Path) -> Result<DB, rocksdb::Error> {
    let default =
        rocksdb::ColumnFamilyDescriptor::new(rocksdb::DEFAULT_COLUMN_FAMILY_NAME, opts.clone());
    DB::open_cf_descriptors(opts, dir, vec![default])
}
