//! Equal memory budgets (issue 28): one DRAM and one PM budget per comparison, and each
//! design's options derived from it the way its paper spends memory.
//!
//! - `flatlsm`: PM on six PMTables (the paper's `max` of 6; flush at 2, the presets' rule), or
//!   more and smaller ones when six would each hold more than [`ENTRIES_PER_PMTABLE`] entries
//!   (small values: flush at a third of them); DRAM on their indexes, the rest on the block
//!   cache.
//! - `leveled` (RocksDB, Titan with separation) and `matrixkv`: DRAM memtables (two, RocksDB's
//!   default count) with their indexes take at most half the DRAM, the block cache the rest;
//!   the write-ahead log lies in PM (it holds at most what the two memtables hold).
//!   `matrixkv` spends the rest of PM on its container; `leveled` leaves it unused (RocksDB's
//!   "low PM usage" the paper names), `leveled-L0-PM` fills it with level-0 files.
//! - `novelsm`: two persistent skiplists of half the PM each (its paper: 2 × 6 GB in 12 GB).
//! - `slmdb`: two persistent skiplists of an eighth of the PM each, the B+-tree the rest.
//!
//! Invariant (tested for every design and value size): the items of a [`Spending`] sum to at
//! most the budget in each memory. Estimates, not measurements: a DRAM index is counted at
//! [`index_bytes`] per table; the OS page cache, SST index blocks and filters are outside
//! every budget alike.

use flatlsm::{Options, Profile};

/// Bytes of DRAM and PM one comparison grants every design.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// DRAM: write buffers and their DRAM indexes, block cache.
    pub dram: u64,
    /// PM: PMTables, PM skiplists, the matrix container, the B+-tree, write-ahead logs.
    pub pm: u64,
}

/// Which memory an item takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memory {
    /// Main memory.
    Dram,
    /// Persistent memory (emulated in a tmpfs here).
    Pm,
}

/// One thing a design spends budget on.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// The memory it takes.
    pub memory: Memory,
    /// What it is, as tables name it ("6 PMTables", "block cache").
    pub what: String,
    /// Its bytes.
    pub bytes: u64,
}

/// How one design spends a budget, and the options that say so.
#[derive(Clone, Debug)]
pub struct Spending {
    /// Every item, DRAM and PM, summing to at most the budget in each.
    pub items: Vec<Item>,
    /// Write buffers: bytes each, how many at most, flush trigger.
    pub write_buffer: (usize, usize, usize),
    /// Block cache bytes.
    pub block_cache: usize,
    /// `matrixkv`: container bytes (0 otherwise).
    pub container: u64,
    /// `slmdb`: B+-tree bytes (0 otherwise).
    pub btree: u64,
    /// `leveled-L0-PM`: level-0 files the PM holds at the stop trigger (0 otherwise).
    pub level0_files: usize,
}

/// Write buffers are whole multiples of this (the engine's smallest PMTable).
const BUFFER_UNIT: u64 = 64 << 10;
/// The matrix container's page size, and its unit.
const CONTAINER_PAGE: u64 = 64 << 10;
/// A B+-tree node (`flatlsm_core::pmbtree::NODE_SIZE`); the tree is whole nodes.
const BTREE_NODE: u64 = 4096;
/// One arena chunk of a DRAM index, counted once per table for the partly used last one.
const INDEX_CHUNK: u64 = 512 << 10;
/// FlatLSM's PMTables, and the immutables that start a flush (the paper: 6 and 4; here a
/// flush merges every immutable, docs/design-decisions.md), when entries are not small.
const FLATLSM_TABLES: (usize, usize) = (6, 2);
/// Most entries a PMTable of a budget holds: past it the PM goes to more, smaller tables (at
/// most [`MAX_PMTABLES`]). A skiplist insert's cost grows with its table's entries; at 256 B,
/// twelve tables of the same gigabyte wrote 1.07–1.08× leveled where six wrote 0.95×
/// (docs/design-decisions.md, "The paper's evaluation at equal budgets").
pub const ENTRIES_PER_PMTABLE: u64 = 320_000;
/// Most PMTables a budget is spread over.
const MAX_PMTABLES: usize = 16;

impl Budget {
    /// "DRAM 512 MiB, PM 1024 MiB".
    pub fn describe(&self) -> String {
        format!("DRAM {}, PM {}", mib(self.dram), mib(self.pm))
    }

    /// This budget times `factor` (the preset's `--scale`).
    pub fn scaled(&self, factor: f64) -> Budget {
        let scale = |b: u64| (b as f64 * factor) as u64;
        Budget {
            dram: scale(self.dram),
            pm: scale(self.pm),
        }
    }
}

/// `n` bytes as "N MiB" (or KiB below a MiB).
pub fn mib(n: u64) -> String {
    match n >= 1 << 20 {
        true => format!("{:.0} MiB", n as f64 / 1048576.0),
        false => format!("{} KiB", n >> 10),
    }
}

/// DRAM an index of a write buffer of `table` bytes takes with entries of `entry` bytes: per
/// entry 4 words, 2 links (1.33 on average), the key in words and 3 words of point index (its
/// table is a quarter to a half full, and the tables it outgrew hold half as much again);
/// plus a chunk.
pub fn index_bytes(table: u64, entry: u64, key: usize) -> u64 {
    let node = 8 * (4 + 2 + key.div_ceil(8) as u64 + 3);
    table / entry.max(1) * node + INDEX_CHUNK
}

/// The shape of the workload's entries, which sizes the DRAM indexes.
#[derive(Clone, Copy, Debug)]
pub struct Entries {
    /// Key bytes.
    pub key: usize,
    /// Value bytes.
    pub value: usize,
}

impl Entries {
    /// Bytes one entry takes in a write buffer's log.
    fn log_bytes(&self) -> u64 {
        flatlsm::tool_support::encoded_entry_len(self.key, self.value) as u64
    }

    fn index(&self, table: u64) -> u64 {
        index_bytes(table, self.log_bytes(), self.key)
    }
}

/// How the design of `profile` (with level 0 in PM when `level0_in_pm`) spends `budget`.
pub fn spend(
    budget: Budget,
    profile: Profile,
    level0_in_pm: bool,
    e: Entries,
) -> Result<Spending, String> {
    let spending = match profile {
        Profile::FlatLsm => pmtables(budget, e),
        Profile::NoveLsm => pm_skiplists(budget, 2, 0),
        Profile::SlmDb => slmdb(budget),
        Profile::MatrixKv => matrixkv(budget, e),
        _ => leveled(budget, e, level0_in_pm),
    }
    .map_err(|e| format!("budget {} for {profile}: {e}", budget.describe()))?;
    check_within(&spending, budget, profile)?;
    Ok(spending)
}

/// Sets the options `s` derived (the profile's own were set before).
pub fn apply(s: &Spending, o: &mut Options) {
    (
        o.pmtable_size,
        o.max_write_buffer_number,
        o.flush_immutable_num,
    ) = s.write_buffer;
    o.block_cache_size = s.block_cache;
    if s.container > 0 {
        o.matrixkv.container_size = s.container;
        o.matrixkv.column_lower_bound = (s.container * 5 / 128).max(CONTAINER_PAGE);
        o.matrixkv.column_upper_bound = 2 * o.matrixkv.column_lower_bound;
    }
    if s.btree > 0 {
        o.slmdb.btree_size = s.btree;
    }
    if s.level0_files > 0 {
        let files = s.level0_files;
        o.leveled.level0_in_pm = true;
        o.leveled.level0_file_num_compaction_trigger = (files * 8 / 10).max(1);
        o.leveled.level0_slowdown_writes_trigger = (files * 9 / 10).max(1);
        o.leveled.level0_stop_writes_trigger = files;
    }
}

impl Spending {
    /// Bytes of `memory` the items take.
    pub fn total(&self, memory: Memory) -> u64 {
        let of = self.items.iter().filter(|i| i.memory == memory);
        of.map(|i| i.bytes).sum()
    }

    /// "PM: 6 PMTables of 170 MiB = 1020 MiB; DRAM: ..." (one line).
    pub fn describe(&self) -> String {
        let part = |m: Memory, name: &str| {
            let items: Vec<String> = (self.items.iter().filter(|i| i.memory == m))
                .map(|i| format!("{} {}", i.what, mib(i.bytes)))
                .collect();
            format!("{name} {} ({})", mib(self.total(m)), items.join(" + "))
        };
        format!("{}; {}", part(Memory::Dram, "DRAM"), part(Memory::Pm, "PM"))
    }
}

fn item(memory: Memory, what: impl Into<String>, bytes: u64) -> Item {
    Item {
        memory,
        what: what.into(),
        bytes,
    }
}

/// `bytes` rounded down to a multiple of `unit`.
fn round_down(bytes: u64, unit: u64) -> u64 {
    bytes / unit * unit
}

fn buffer_size(bytes: u64, what: &str) -> Result<usize, String> {
    match round_down(bytes, BUFFER_UNIT) {
        0 => Err(format!(
            "{what}: {} is below one write buffer of {} (raise the budget)",
            mib(bytes),
            mib(BUFFER_UNIT)
        )),
        b => usize::try_from(b).map_err(|_| format!("{what}: {b} bytes do not fit usize")),
    }
}

/// What remains of the DRAM for the block cache once `used` is spent.
fn block_cache(budget: Budget, used: u64) -> Result<u64, String> {
    budget.dram.checked_sub(used).ok_or_else(|| {
        format!(
            "its write buffers' DRAM ({}) exceeds the DRAM budget of {}",
            mib(used),
            mib(budget.dram)
        )
    })
}

/// How many PMTables a PM budget of `pm` bytes is spread over, and how many immutables start a
/// flush.
pub fn pmtable_count(pm: u64, e: Entries) -> (usize, usize) {
    let (tables, flush_at) = FLATLSM_TABLES;
    let entries = pm / e.log_bytes().max(1);
    let needed = entries.div_ceil(ENTRIES_PER_PMTABLE) as usize;
    match needed > tables {
        true => (needed.min(MAX_PMTABLES), needed.min(MAX_PMTABLES) / 3),
        false => (tables, flush_at),
    }
}

fn pmtables(budget: Budget, e: Entries) -> Result<Spending, String> {
    let (tables, flush_at) = pmtable_count(budget.pm, e);
    let size = buffer_size(budget.pm / tables as u64, "a PMTable")?;
    let indexes = tables as u64 * e.index(size as u64);
    let cache = block_cache(budget, indexes)?;
    Ok(Spending {
        items: vec![
            item(
                Memory::Pm,
                format!("{tables} PMTables"),
                tables as u64 * size as u64,
            ),
            item(Memory::Dram, "PMTable indexes", indexes),
            item(Memory::Dram, "block cache", cache),
        ],
        write_buffer: (size, tables, flush_at),
        ..bare(cache)
    })
}

/// A spending with nothing but a block cache of `cache` bytes (the designs fill in the rest).
fn bare(cache: u64) -> Spending {
    Spending {
        items: Vec::new(),
        write_buffer: (0, 0, 0),
        block_cache: cache as usize,
        container: 0,
        btree: 0,
        level0_files: 0,
    }
}

/// Two persistent skiplists of `pm / share` each (NoveLSM: 2; SLM-DB: 8), `btree` bytes of PM
/// for a B+-tree beside them; DRAM all block cache.
fn pm_skiplists(budget: Budget, share: u64, btree: u64) -> Result<Spending, String> {
    let size = buffer_size(budget.pm / share, "PM skiplist")?;
    let mut items = vec![
        item(Memory::Pm, "2 PM skiplists", 2 * size as u64),
        item(Memory::Dram, "block cache", budget.dram),
    ];
    if btree > 0 {
        items.push(item(Memory::Pm, "B+-tree", btree));
    }
    Ok(Spending {
        items,
        write_buffer: (size, 2, 1),
        btree,
        ..bare(budget.dram)
    })
}

fn slmdb(budget: Budget) -> Result<Spending, String> {
    let skiplists = 2 * round_down(budget.pm / 8, BUFFER_UNIT);
    let btree = round_down(budget.pm - skiplists, BTREE_NODE);
    if btree < 2 * BTREE_NODE {
        return Err(format!(
            "a PM budget of {} leaves no B+-tree",
            mib(budget.pm)
        ));
    }
    pm_skiplists(budget, 8, btree)
}

/// The DRAM memtable size of `leveled` and `matrixkv`: two tables with their indexes in half
/// the DRAM.
fn dram_memtable(budget: Budget, e: Entries) -> Result<usize, String> {
    let half_each = (budget.dram / 4).saturating_sub(INDEX_CHUNK);
    let per_byte = 1.0 + e.index(1 << 30).saturating_sub(INDEX_CHUNK) as f64 / (1u64 << 30) as f64;
    buffer_size((half_each as f64 / per_byte) as u64, "DRAM memtable")
}

/// Two DRAM memtables, their indexes and write-ahead log; returns the items and the bytes of
/// DRAM and of PM they take.
fn memtables_and_wal(m: usize, e: Entries) -> (Vec<Item>, u64, u64) {
    let (tables, wal) = (2 * m as u64, 2 * m as u64);
    let indexes = 2 * e.index(m as u64);
    let items = vec![
        item(Memory::Dram, "2 memtables", tables),
        item(Memory::Dram, "their indexes", indexes),
        item(Memory::Pm, "write-ahead log", wal),
    ];
    (items, tables + indexes, wal)
}

fn leveled(budget: Budget, e: Entries, level0_in_pm: bool) -> Result<Spending, String> {
    let m = dram_memtable(budget, e)?;
    let (mut items, dram, wal) = memtables_and_wal(m, e);
    let cache = block_cache(budget, dram)?;
    items.push(item(Memory::Dram, "block cache", cache));
    let level0_files = match level0_in_pm {
        true => level0_files(budget.pm.saturating_sub(wal), m)?,
        false => 0,
    };
    if level0_files > 0 {
        let bytes = level0_files as u64 * m as u64;
        items.push(item(
            Memory::Pm,
            format!("{level0_files} level-0 files"),
            bytes,
        ));
    }
    Ok(Spending {
        items,
        write_buffer: (m, 2, 1),
        level0_files,
        ..bare(cache)
    })
}

/// Level-0 files of one memtable each that `pm` bytes hold at the stop trigger (at least 4).
fn level0_files(pm: u64, m: usize) -> Result<usize, String> {
    match (pm / m as u64) as usize {
        n if n >= 4 => Ok(n),
        _ => Err(format!(
            "{} of PM holds fewer than 4 level-0 files",
            mib(pm)
        )),
    }
}

fn matrixkv(budget: Budget, e: Entries) -> Result<Spending, String> {
    let m = dram_memtable(budget, e)?;
    let (mut items, dram, wal) = memtables_and_wal(m, e);
    let cache = block_cache(budget, dram)?;
    let container = round_down(budget.pm.saturating_sub(wal), CONTAINER_PAGE);
    if container < (4 * m as u64).max(16 * CONTAINER_PAGE) {
        return Err(format!(
            "a container of {} must hold 4 memtables of {} (raise the PM budget)",
            mib(container),
            mib(m as u64)
        ));
    }
    items.push(item(Memory::Dram, "block cache", cache));
    items.push(item(Memory::Pm, "container", container));
    Ok(Spending {
        items,
        write_buffer: (m, 2, 1),
        container,
        ..bare(cache)
    })
}

/// The invariant: no memory spent beyond its budget.
fn check_within(s: &Spending, budget: Budget, profile: Profile) -> Result<(), String> {
    let (dram, pm) = (s.total(Memory::Dram), s.total(Memory::Pm));
    match dram <= budget.dram && pm <= budget.pm {
        true => Ok(()),
        false => Err(format!(
            "{profile}: spends DRAM {dram} and PM {pm}, over the budget ({})",
            budget.describe()
        )),
    }
}

#[cfg(test)]
#[path = "budget_tests.rs"]
mod tests;
