//! A test-only engine: a BTreeMap behind a lock, with an optional delay inside `put` (after the
//! caller started the write, before it becomes visible) to expose ordering races in workloads.

use super::{Direction, Engine, EngineStats};
use std::collections::BTreeMap;
use std::sync::RwLock;
use std::time::Duration;

/// In-memory engine for unit tests of the workloads.
#[derive(Default)]
pub struct MemEngine {
    map: RwLock<BTreeMap<Vec<u8>, Vec<u8>>>,
    /// Sleep inside each put.
    put_delay: Duration,
}

impl MemEngine {
    /// An engine whose puts sleep `put_delay` before the write becomes visible.
    pub fn with_put_delay(put_delay: Duration) -> MemEngine {
        MemEngine {
            put_delay,
            ..MemEngine::default()
        }
    }
}

impl Engine for MemEngine {
    fn name(&self) -> String {
        "mem".into()
    }
    fn describe(&self) -> String {
        "in-memory test engine".into()
    }
    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), String> {
        std::thread::sleep(self.put_delay);
        self.map
            .write()
            .unwrap()
            .insert(key.to_vec(), value.to_vec());
        Ok(())
    }
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, String> {
        Ok(self.map.read().unwrap().get(key).cloned())
    }
    fn scan(
        &self,
        start: Option<&[u8]>,
        dir: Direction,
        limit: u64,
        visit: &mut dyn FnMut(usize) -> bool,
    ) -> Result<u64, String> {
        let map = self.map.read().unwrap();
        let entries: Vec<(&Vec<u8>, &Vec<u8>)> = match (start, dir) {
            (Some(k), Direction::Forward) => map.range(k.to_vec()..).take(limit as usize).collect(),
            (None, Direction::Forward) => map.iter().take(limit as usize).collect(),
            (Some(k), Direction::Reverse) => map
                .range(..=k.to_vec())
                .rev()
                .take(limit as usize)
                .collect(),
            (None, Direction::Reverse) => map.iter().rev().take(limit as usize).collect(),
        };
        let mut n = 0;
        for (k, v) in &entries {
            n += 1;
            if !visit(k.len() + v.len()) {
                break;
            }
        }
        Ok(n)
    }
    fn stats(&self) -> EngineStats {
        EngineStats::default()
    }
    fn tickers(&self) -> Vec<(String, u64)> {
        Vec::new()
    }
    fn wait_for_background_work(&self) -> Result<(), String> {
        Ok(())
    }
    fn reopen(&mut self) -> Result<Duration, String> {
        Ok(Duration::ZERO)
    }
    fn recovery_bytes(&self) -> Option<u64> {
        None
    }
    fn close(&mut self) -> Result<(), String> {
        Ok(())
    }
}
