//! Moving data down the tree: parallel flush/compaction of a PMTable into the Ordered-L1 with
//! key-value separation (paper 4.4, Algorithms 4 and 5), L1→L2 leveled compaction, and
//! value-log garbage collection.

pub mod filter;
pub(crate) mod flush;
pub(crate) mod level;
pub(crate) mod output;
pub(crate) mod vlog_gc;
