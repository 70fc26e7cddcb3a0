//! The database subcommands of the `flatlsm` tool (one file per family).

pub mod approxsize;
pub mod backup;
pub mod check;
pub mod dump;
pub mod export;
pub mod import;
pub mod keys;
pub mod maintenance;
pub mod repair;
pub mod scan;
pub mod serve;
pub mod stats;
mod transfer_progress;
