//! `serve`: a Redis-protocol server over one database (the `flatlsm-server` crate); its flags
//! follow redis-server's names where they exist. See docs/server.md.

use crate::db_args::DbArgs;
use flatlsm_server::ServerConfig;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Flags of `flatlsm serve`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Example: flatlsm serve --db /var/lib/kv --create-if-missing --port 6380\n\
    Then: redis-cli -p 6380 set hello world. Stop with SIGTERM, Ctrl-C or SHUTDOWN; the \
    database is closed cleanly. Commands, limits and durability: docs/server.md."
)]
pub struct ServeArgs {
    #[command(flatten)]
    db: DbArgs,
    /// Address to listen on. The default accepts local clients only; another address exposes
    /// the database to the network (set --requirepass).
    #[arg(long, default_value = "127.0.0.1")]
    bind: IpAddr,
    /// TCP port (0: any free port, printed at start).
    #[arg(long, default_value_t = 6379)]
    port: u16,
    /// Clients must AUTH with this password (visible in the process list: prefer
    /// --requirepass-file).
    #[arg(long, conflicts_with = "requirepass_file")]
    requirepass: Option<String>,
    /// File holding the password (its first line; trailing newline ignored).
    #[arg(long = "requirepass-file")]
    requirepass_file: Option<PathBuf>,
    /// Sync every write before replying (durable against power failure; slower).
    #[arg(long)]
    sync: bool,
    /// Most clients connected at once; one more is refused with an error.
    #[arg(long, default_value_t = 10_000)]
    maxclients: usize,
    /// Longest key or value a request may carry, in bytes.
    #[arg(long = "proto-max-bulk-len", default_value_t = 64 << 20)]
    proto_max_bulk_len: usize,
    /// Most arguments in one request (command name included).
    #[arg(long = "max-args", default_value_t = 1 << 20)]
    max_args: usize,
    /// Most pipelined requests executed per batch (the rest wait in the socket).
    #[arg(long = "max-pipeline", default_value_t = 1024)]
    max_pipeline: usize,
    /// Most bytes buffered for one incomplete request.
    #[arg(long = "client-query-buffer-limit", default_value_t = 1 << 30)]
    client_query_buffer_limit: usize,
    /// Close connections idle this many seconds (0: never).
    #[arg(long, default_value_t = 3600)]
    timeout: u64,
    /// Most keys KEYS returns before it fails, pointing to SCAN.
    #[arg(long = "keys-limit", default_value_t = 100_000)]
    keys_limit: usize,
    /// Directory BGSAVE and SAVE write checkpoints into (default: <db>.checkpoints beside the
    /// database directory).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Serve Prometheus metrics at http://ADDR/metrics (per-command counts and latency
    /// histograms, the server's counters, the engine's statistics), e.g. 127.0.0.1:9121.
    #[arg(long, value_name = "ADDR")]
    metrics: Option<std::net::SocketAddr>,
    /// Worker threads; commands run on them, so a command that waits for the device holds
    /// one (0: one per CPU).
    #[arg(long, default_value_t = 0)]
    workers: usize,
}

/// Opens the database and serves it until SHUTDOWN, SIGTERM or SIGINT.
pub fn serve(a: ServeArgs) -> Result<(), String> {
    let config = a.config()?;
    let db = a.db.open()?;
    let result = flatlsm_server::serve_until_signal(db, config, |address| {
        log::info!("serving {} on {address}", a.db.db.display());
        crate::emit(&format!("flatlsm serve: listening on {address}"));
    });
    result.map_err(|e| e.to_string())
}

impl ServeArgs {
    fn config(&self) -> Result<ServerConfig, String> {
        let config = ServerConfig {
            bind: self.bind,
            port: self.port,
            requirepass: self.password()?,
            sync: self.sync,
            max_clients: self.maxclients,
            proto_max_bulk_len: self.proto_max_bulk_len,
            max_args: self.max_args,
            max_pipeline: self.max_pipeline,
            query_buffer_limit: self.client_query_buffer_limit,
            idle_timeout: (self.timeout > 0).then(|| Duration::from_secs(self.timeout)),
            keys_limit: self.keys_limit,
            checkpoint_dir: Some(self.checkpoint_dir()),
            metrics: self.metrics,
            workers: self.workers,
            ..ServerConfig::default()
        };
        config.validate()?;
        Ok(config)
    }

    fn password(&self) -> Result<Option<String>, String> {
        let Some(path) = &self.requirepass_file else {
            return Ok(self.requirepass.clone());
        };
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("--requirepass-file {}: {e}", path.display()))?;
        let password = text.lines().next().unwrap_or("").to_string();
        if password.is_empty() {
            return Err(format!(
                "--requirepass-file {}: the first line is empty",
                path.display()
            ));
        }
        Ok(Some(password))
    }

    fn checkpoint_dir(&self) -> PathBuf {
        self.dir.clone().unwrap_or_else(|| {
            let mut name = self.db.db.file_name().unwrap_or_default().to_os_string();
            name.push(".checkpoints");
            self.db.db.with_file_name(name)
        })
    }
}
