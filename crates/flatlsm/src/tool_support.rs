//! What the `flatlsm` command-line tool and the engine's own tests use beyond the API: hidden
//! from the documentation and not part of the API (any release may change it).
//!
//! - rendering keys and values for people (`dump`, `get`, `scan` output);
//! - telling database and PM-directory files by name (the bench clears only those);
//! - PM Log layout facts (docs/pm-log-format.md): the encoded length of an entry, the largest
//!   entry that goes through the DRAM Buffer Log, and how many buffered bytes trigger its
//!   write-back (tests plan writes against these persist points);
//! - the FlatLSM paper's Fig. 17 for the bench: a closed database's PM Logs rebuilt in place
//!   (copy-free) or by copying each entry into DRAM (copy-required), timed by the caller;
//! - the version extension a recorded profile needs, for tests that read a manifest with
//!   `flatlsm_core::version::Manifest` directly.

pub use crate::designs::version_extension;
pub use crate::inspect::render::{escape_bytes, hex_bytes};
pub use crate::pmtable::log::{encoded_entry_len, BUFFER_FLUSH_BYTES, SMALL_ENTRY_LIMIT};
pub use crate::recovery::pm_log_replay::{replay_pm_logs, PmLogReplay, ReplayCount};
pub use crate::recovery::{is_database_file_name, is_pm_dir_file_name};
