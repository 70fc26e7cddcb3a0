//! Moving data down the tree: parallel flush of PMTables into a new L1 run with key-value
//! separation (paper 4.4, Algorithms 4 and 5), merging L1's runs into its ordered run, L1→L2
//! leveled compaction, and value-log garbage collection.

pub(crate) mod context;
pub(crate) mod filtered;
pub(crate) mod flush;
pub(crate) mod job;
pub(crate) mod output;
pub(crate) mod policy;
pub(crate) mod vlog_gc;
