//! `flatlsm-server`: a Redis-protocol (RESP2, and RESP3 after `HELLO 3`) server over one open
//! FlatLSM database, the engine behind `flatlsm serve`.
//!
//! It uses only the public API of the `flatlsm` crate. Requests are decoded with the
//! `redis-protocol` crate behind a shape guard ([`request`]); each connection runs as a tokio
//! task that decodes up to `max_pipeline` requests, executes them on its worker thread (the
//! engine's calls block, so a write waiting out a stall holds the worker: `workers` sets how
//! many there are) and writes every reply before reading on. A reply to a write is sent only after the engine's write returned.
//!
//! ```no_run
//! use flatlsm_server::{Server, ServerConfig};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let db = flatlsm::Db::open("/var/lib/kv", flatlsm::Options::default())?;
//! let config = ServerConfig { port: 0, ..ServerConfig::default() };
//! let runtime = tokio::runtime::Runtime::new()?;
//! runtime.block_on(async {
//!     let server = Server::bind(db, config).await?;
//!     println!("listening on {}", server.local_addr());
//!     server.run().await // until SHUTDOWN, or `server.shutdown_handle().shutdown()`
//! })?;
//! # Ok(())
//! # }
//! ```
//!
//! Modules: [`config`] (flags and limits), [`request`] (the request decoder and its limits),
//! [`reply`] (replies and their RESP2/RESP3 encodings), `server` (accepting, shutdown),
//! `connection` (one client's loop), `commands` (the command table and every command),
//! `locks` (the striped key locks behind read-modify-write commands), `glob` (MATCH patterns),
//! `cursors` (SCAN cursors), `clients` (the client registry), `info` (INFO), `metrics` (the
//! Prometheus endpoint), `auth` (password checks).

mod auth;
mod clients;
mod commands;
pub mod config;
mod connection;
mod cursors;
mod glob;
mod info;
mod locks;
mod metrics;
pub mod reply;
pub mod request;
mod server;
mod shared;

pub use config::ServerConfig;
pub use server::{serve_until_signal, Server, ServerError, ShutdownHandle};
