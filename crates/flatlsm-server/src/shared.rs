//! What every connection shares: the database, the settings, the key locks, the SCAN cursors,
//! the client registry, counters for INFO, checkpoint state and the shutdown signal.

use crate::auth::Password;
use crate::clients::Clients;
use crate::config::ServerConfig;
use crate::cursors::Cursors;
use crate::locks::KeyLocks;
use crate::metrics::Metrics;
use flatlsm::{Db, WriteOptions};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::watch;

/// Counters INFO stats reports.
#[derive(Default)]
pub struct Counters {
    pub connections_received: AtomicU64,
    pub rejected_connections: AtomicU64,
    pub commands_processed: AtomicU64,
    pub error_replies: AtomicU64,
    pub protocol_errors: AtomicU64,
    pub net_input_bytes: AtomicU64,
    pub net_output_bytes: AtomicU64,
}

impl Counters {
    /// Adds `n` to `counter`.
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// The value of `counter`.
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

/// The state of BGSAVE checkpoints.
#[derive(Default)]
pub struct Saves {
    /// Unix time of the last successful checkpoint (the server's start time before one).
    pub last_save_unix: AtomicU64,
    /// A checkpoint is being written.
    pub in_progress: AtomicBool,
    /// The last checkpoint failed.
    pub last_failed: AtomicBool,
    /// Checkpoints written since start (numbers their directories within one second).
    pub made: AtomicU64,
}

/// The server's shared state.
pub struct Shared {
    pub db: Db,
    pub config: ServerConfig,
    pub write_options: WriteOptions,
    pub password: Option<Password>,
    pub locks: KeyLocks,
    pub cursors: Cursors,
    pub clients: Clients,
    pub counters: Counters,
    pub saves: Saves,
    pub started: Instant,
    /// Per-command series, when the metrics endpoint is on.
    pub metrics: Option<Metrics>,
    /// Set once to true by SHUTDOWN, a signal or a [`crate::ShutdownHandle`].
    pub shutdown: watch::Sender<bool>,
}

impl Shared {
    /// The shared state of a server over `db`.
    pub fn new(db: Db, config: ServerConfig, metrics: Option<Metrics>) -> Shared {
        let saves = Saves::default();
        saves.last_save_unix.store(unix_now(), Ordering::Relaxed);
        Shared {
            db,
            write_options: WriteOptions {
                sync: config.sync,
                ..WriteOptions::default()
            },
            password: config.requirepass.as_deref().map(Password::new),
            config,
            locks: KeyLocks::new(),
            cursors: Cursors::new(),
            clients: Clients::default(),
            counters: Counters::default(),
            saves,
            started: Instant::now(),
            metrics,
            shutdown: watch::channel(false).0,
        }
    }

    /// Starts a graceful shutdown (idempotent).
    pub fn begin_shutdown(&self) {
        self.shutdown.send_replace(true);
    }

    /// Whether a shutdown began.
    pub fn shutting_down(&self) -> bool {
        *self.shutdown.borrow()
    }
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
