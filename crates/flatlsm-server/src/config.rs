//! The server's settings: where it listens, the password, durability and every limit.
//!
//! Defaults are safe for a server on a shared machine: loopback only, bounded connections,
//! bulk lengths, argument counts, pipeline depth, query buffers and idle time.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

/// Everything `flatlsm serve` can set. Construct with `..ServerConfig::default()`.
///
/// ```
/// let config = flatlsm_server::ServerConfig {
///     port: 0, // an ephemeral port; `Server::local_addr` names it
///     requirepass: Some("secret".into()),
///     ..Default::default()
/// };
/// assert_eq!(config.bind.to_string(), "127.0.0.1");
/// ```
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Address to listen on (default 127.0.0.1: loopback only).
    pub bind: IpAddr,
    /// TCP port (default 6379, redis-server's; 0 picks a free one).
    pub port: u16,
    /// Clients must `AUTH` with this password before any other command (default: none).
    pub requirepass: Option<String>,
    /// Every write is synced (`WriteOptions::sync`) before its reply (default false: a
    /// server crash loses nothing acknowledged, a power failure may lose the last second).
    pub sync: bool,
    /// Most clients connected at once; one more gets an error and is closed (default 10000).
    pub max_clients: usize,
    /// Longest bulk string (key or value) a request may carry (default 64 MiB).
    pub proto_max_bulk_len: usize,
    /// Most arguments (command name included) in one request (default 1 Mi, redis-server's).
    pub max_args: usize,
    /// Most requests executed per batch; further pipelined requests wait in the socket
    /// until their turn, so a connection never holds more replies than this (default 1024).
    pub max_pipeline: usize,
    /// Most bytes buffered for one request not yet complete (default 1 GiB, redis-server's
    /// `client-query-buffer-limit`).
    pub query_buffer_limit: usize,
    /// Close a connection idle this long; `None` never (default 3600 s).
    pub idle_timeout: Option<Duration>,
    /// Most keys KEYS may return; past it KEYS fails, pointing to SCAN (default 100000).
    pub keys_limit: usize,
    /// Directory BGSAVE and SAVE put their checkpoints in (`checkpoint-<unix time>-<n>`).
    /// `None`: BGSAVE is refused with an error naming the flag.
    pub checkpoint_dir: Option<PathBuf>,
    /// How long a graceful shutdown waits for connections to finish their batch (default 5 s).
    pub shutdown_grace: Duration,
    /// Where to serve Prometheus metrics (`GET /metrics`); `None` (the default): no endpoint,
    /// and commands are not timed.
    pub metrics: Option<SocketAddr>,
    /// Worker threads of the runtime `serve_until_signal` builds; commands execute on them, so
    /// a command that waits holds one (0, the default: one per CPU).
    pub workers: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            bind: IpAddr::from([127, 0, 0, 1]),
            port: 6379,
            requirepass: None,
            sync: false,
            max_clients: 10_000,
            proto_max_bulk_len: 64 << 20,
            max_args: 1 << 20,
            max_pipeline: 1024,
            query_buffer_limit: 1 << 30,
            idle_timeout: Some(Duration::from_secs(3600)),
            keys_limit: 100_000,
            checkpoint_dir: None,
            shutdown_grace: Duration::from_secs(5),
            metrics: None,
            workers: 0,
        }
    }
}

impl ServerConfig {
    /// Refuses settings that cannot work (a zero limit), with the flag's name.
    pub fn validate(&self) -> Result<(), String> {
        let limits = [
            ("--maxclients", self.max_clients),
            ("--proto-max-bulk-len", self.proto_max_bulk_len),
            ("--max-args", self.max_args),
            ("--max-pipeline", self.max_pipeline),
            ("--client-query-buffer-limit", self.query_buffer_limit),
            ("--keys-limit", self.keys_limit),
        ];
        match limits.iter().find(|(_, v)| *v == 0) {
            Some((flag, _)) => Err(format!("{flag} must be at least 1")),
            None => Ok(()),
        }
    }
}
