//! PMTables (paper section 4.2): a DRAM index over a PM Log plus a DRAM Buffer Log; they form L0.
//!
//! [`log`] is the persistent part: the append-only PM Log with its crash-consistency protocol.

pub mod log;
