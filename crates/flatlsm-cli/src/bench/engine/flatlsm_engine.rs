//! FlatLSM behind the [`Engine`] trait.

use super::{Direction, Engine, EngineStats};
use flatlsm::{Db, Options, ReadOptions, WriteOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A FlatLSM database under test.
pub struct FlatLsmEngine {
    db: Option<Db>,
    dir: PathBuf,
    options: Options,
    write: WriteOptions,
}

impl FlatLsmEngine {
    /// Opens (or creates) the database in `dir`.
    pub fn open(dir: &Path, options: Options, sync: bool) -> Result<FlatLsmEngine, String> {
        let db = Db::open(dir, options.clone())
            .map_err(|e| format!("opening FlatLSM at {}: {e}", dir.display()))?;
        Ok(FlatLsmEngine {
            db: Some(db),
            dir: dir.to_path_buf(),
            options,
            write: WriteOptions {
                sync,
                ..WriteOptions::default()
            },
        })
    }

    fn db(&self) -> Result<&Db, String> {
        self.db
            .as_ref()
            .ok_or_else(|| "the database is closed".to_string())
    }
}

fn err(e: flatlsm::Error) -> String {
    e.to_string()
}

impl Engine for FlatLsmEngine {
    /// "FlatLSM", or the profile's name for the other designs this engine builds.
    fn name(&self) -> String {
        match self.options.profile {
            flatlsm::Profile::FlatLsm => "FlatLSM".into(),
            p => p.name().into(),
        }
    }

    fn describe(&self) -> String {
        let mode = self.db.as_ref().and_then(|d| d.stats().pm_mode);
        format!(
            "{}: db {} | PM {} ({})",
            self.name(),
            self.dir.display(),
            self.options
                .pm_path
                .as_ref()
                .map_or_else(|| "<db>/pm".to_string(), |p| p.display().to_string()),
            mode.map(|m| m.to_string()).unwrap_or_default()
        )
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.db()?.put_opt(key, value, &self.write).map_err(err)
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, String> {
        self.db()?.get(key).map_err(err)
    }

    fn multi_get(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>, String> {
        let values = self.db()?.multi_get(keys);
        values.into_iter().map(|v| v.map_err(err)).collect()
    }

    /// The engine's own check (`slmdb`: the B+-tree alone; the others: a lookup).
    fn update_if_present(&self, key: &[u8], value: &[u8]) -> Result<bool, String> {
        let db = self.db()?;
        db.put_if_opt(key, value, true, &self.write).map_err(err)
    }

    fn scan(
        &self,
        start: Option<&[u8]>,
        dir: Direction,
        limit: u64,
        visit: &mut dyn FnMut(usize) -> bool,
    ) -> Result<u64, String> {
        let db = self.db()?;
        let opts = ReadOptions::default();
        // `range` returns an iterator already positioned at its lower bound, so a forward scan
        // from `k` costs exactly one seek (seekrandom and YCSB E time that seek).
        let mut it = match start {
            Some(k) if dir == Direction::Forward => db.range_opt(k.., &opts),
            _ => db.iter_opt(&opts),
        }
        .map_err(err)?;
        match (start, dir) {
            (_, Direction::Forward) => {}
            (Some(k), Direction::Reverse) => it.seek_for_prev(k),
            (None, Direction::Reverse) => it.seek_to_last(),
        }
        let mut n = 0;
        while n < limit && it.valid() {
            n += 1;
            // The limit's entry ends the scan without a step past it (whose value read
            // neither engine's user would pay for).
            if !visit(it.key().len() + it.value().len()) || n == limit {
                break;
            }
            match dir {
                Direction::Forward => it.advance(),
                Direction::Reverse => it.prev(),
            }
        }
        it.status().map_err(err)?;
        Ok(n)
    }

    fn stats(&self) -> EngineStats {
        let Some(db) = &self.db else {
            return EngineStats::default();
        };
        let s = db.stats();
        EngineStats {
            // Stopped and delayed time together, as RocksDB's `rocksdb.stall.micros` counts both.
            stall_micros: s.stall_micros + s.delayed_write_micros,
            user_bytes: s.user_bytes,
            ssd_bytes: s.ssd_bytes_written(),
            // The write path's PM, and what flushes put in PM (rows, level 0 in PM).
            pm_bytes: s.pm_bytes_written + s.flush_pm_bytes,
            flush_bytes: s.flush_bytes(),
            flush_micros: s.flush_micros,
            store_compactions: s
                .store_compactions
                .iter()
                .map(|c| (c.finished_ms, c.micros, c.store_bytes))
                .collect(),
            taken_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            sst_file_bytes: s.levels.iter().map(|l| l.bytes).sum(),
            value_file_bytes: s.vlogs.iter().map(|v| v.total_bytes).sum(),
            live_value_bytes: s.vlogs.iter().map(|v| v.live_bytes).sum(),
            breakdown: super::WriteBreakdown::of(&s),
        }
    }

    fn tickers(&self) -> Vec<(String, u64)> {
        let Some(db) = &self.db else {
            return Vec::new();
        };
        let s = db.stats();
        [
            ("flatlsm.bytes.written", s.user_bytes),
            ("flatlsm.number.keys.written", s.user_writes),
            ("flatlsm.pm.bytes.written", s.pm_bytes_written),
            ("flatlsm.pmtable.gc.bytes", s.pm_gc_bytes),
            ("flatlsm.flush.write.bytes", s.flush_bytes()),
            ("flatlsm.flush.pm.bytes", s.flush_pm_bytes),
            ("flatlsm.compact.write.bytes", s.compaction_bytes),
            ("flatlsm.vlog.gc.bytes", s.vlog_gc_bytes),
            ("flatlsm.stall.micros", s.stall_micros),
            ("flatlsm.stall.count", s.stall_count),
            ("flatlsm.delayed.writes", s.delayed_writes),
            ("flatlsm.delayed.write.micros", s.delayed_write_micros),
            ("flatlsm.slowdown.count", s.slowdown_count),
            ("flatlsm.flush.micros", s.flush_micros),
            ("flatlsm.flushes", s.flushes),
            ("flatlsm.compactions", s.compactions),
            ("flatlsm.vlog.direct.files", s.vlog_direct_files),
            ("flatlsm.vlog.buffered.files", s.vlog_buffered_files),
            ("flatlsm.block.cache.hit", s.block_cache.hits),
            ("flatlsm.block.cache.miss", s.block_cache.misses),
            ("flatlsm.value.cache.hit", s.block_cache.value_hits),
            ("flatlsm.value.cache.miss", s.block_cache.value_misses),
            ("flatlsm.block.cache.usage", s.block_cache.usage),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    fn wait_for_background_work(&self) -> Result<(), String> {
        self.db()?.wait_for_background_work().map_err(err)
    }

    fn reopen(&mut self) -> Result<Duration, String> {
        if let Some(db) = self.db.take() {
            db.close().map_err(err)?;
        }
        let start = Instant::now();
        let db = Db::open(&self.dir, self.options.clone())
            .map_err(|e| format!("reopening FlatLSM at {}: {e}", self.dir.display()))?;
        let took = start.elapsed();
        self.db = Some(db);
        Ok(took)
    }

    fn recovery_bytes(&self) -> Option<u64> {
        self.db.as_ref().map(|d| d.stats().pmtable_bytes)
    }

    fn flush_pmtables(&self) -> Result<u64, String> {
        let db = self.db()?;
        let bytes = db.stats().pmtable_bytes;
        db.flush().map_err(err)?;
        Ok(bytes)
    }

    /// The database directory; PM Logs and WALs in their own directories when set (inside
    /// the database directory otherwise, where they count as page cache).
    fn directories(&self) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let o = &self.options;
        let pm = [&o.pm_path, &o.wal_dir].into_iter().flatten().cloned();
        (vec![self.dir.clone()], pm.collect())
    }

    fn block_cache_bytes(&self) -> Option<u64> {
        self.db.as_ref().map(|d| d.stats().block_cache.usage)
    }

    fn close(&mut self) -> Result<(), String> {
        match self.db.take() {
            Some(db) => db.close().map_err(err),
            None => Ok(()),
        }
    }
}
