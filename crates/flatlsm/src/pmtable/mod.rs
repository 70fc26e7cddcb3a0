//! PMTables (paper 4.2): the DRAM index over a PM Log, with a DRAM Buffer Log for small
//! entries. They are FlatLSM's L0: one mutable and several immutable tables.
//!
//! - [`log`]: the PM Log and its Buffer Log (format, persist order, recovery scan).
//! - [`table`]: the DRAM skiplist index over one log, point lookups and GC.
//! - `links`: the index nodes written but not linked yet, linked in sorted batches.
//! - [`live_filter`]: the bloom filter a mutable table fills as it indexes, for point reads.
//! - [`point_index`]: the hash table from each key to its newest version, for point reads.
//! - [`cursor`]: cursors over a table in internal-key order (owning, and borrowing for flushes).
//! - [`pool`]: PM Logs of retired tables, recycled for new ones.

pub mod cursor;
pub mod index;
mod links;
pub mod live_filter;
pub mod log;
pub mod point_index;
pub mod pool;
pub mod table;

pub use pool::PmLogPool;
pub use table::{MemLookup, PmTable};

/// True for the regions write buffers leave on a device: PM Logs and the pool's free logs.
pub(crate) fn is_buffer_region(name: &str) -> bool {
    crate::file_names::parse_pm_log_file_name(name).is_some() || pool::is_pool_file_name(name)
}
