//! Accepting clients, the connection limit, and graceful shutdown.
//!
//! Shutdown (SHUTDOWN, SIGTERM/SIGINT, or a [`ShutdownHandle`]): the listener closes, every
//! connection finishes the batch it is executing, sends its replies and closes; after at most
//! `shutdown_grace` the remaining connections are dropped; then the database is closed on the
//! blocking pool (closing persists the write buffer and stops background work).

use crate::config::ServerConfig;
use crate::shared::{Counters, Shared};
use flatlsm::Db;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// Why the server could not start or stop cleanly.
#[derive(Debug)]
pub enum ServerError {
    /// A setting that cannot work.
    Config(String),
    /// Binding, accepting or the runtime failed.
    Io(std::io::Error),
    /// Closing the database failed.
    Db(flatlsm::Error),
}

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerError::Config(e) => write!(f, "{e}"),
            ServerError::Io(e) => write!(f, "{e}"),
            ServerError::Db(e) => write!(f, "closing the database: {e}"),
        }
    }
}

impl std::error::Error for ServerError {}

/// A bound server, not yet accepting; [`Server::run`] serves.
pub struct Server {
    listener: TcpListener,
    /// The metrics endpoint's listener, when `--metrics` asked for one.
    metrics: Option<TcpListener>,
    shared: Arc<Shared>,
}

/// Stops a running server gracefully from anywhere (cheap to clone).
#[derive(Clone)]
pub struct ShutdownHandle {
    shared: Arc<Shared>,
}

impl ShutdownHandle {
    /// Begins the graceful shutdown; [`Server::run`] returns once it is done.
    pub fn shutdown(&self) {
        self.shared.begin_shutdown();
    }
}

impl Server {
    /// Checks `config` and binds its address; the server owns `db` from now on and closes it
    /// when [`Server::run`] ends.
    pub async fn bind(db: Db, config: ServerConfig) -> Result<Server, ServerError> {
        config.validate().map_err(ServerError::Config)?;
        let listener = bind(SocketAddr::new(config.bind, config.port)).await?;
        let (metrics, series) = match config.metrics {
            Some(address) => (Some(bind(address).await?), Some(command_series()?)),
            None => (None, None),
        };
        let shared = Arc::new(Shared::new(db, config, series));
        Ok(Server {
            listener,
            metrics,
            shared,
        })
    }

    /// The metrics endpoint's address, if it has one (with the port picked for port 0).
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// The address it listens on (with the port picked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::new(self.shared.config.bind, self.shared.config.port))
    }

    /// A handle that shuts this server down.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle {
            shared: self.shared.clone(),
        }
    }

    /// Serves until shut down, then drains the connections and closes the database.
    pub async fn run(mut self) -> Result<(), ServerError> {
        if let Some(listener) = self.metrics.take() {
            tokio::spawn(crate::metrics::serve(self.shared.clone(), listener));
        }
        let mut connections = JoinSet::new();
        let mut shutdown = self.shared.shutdown.subscribe();
        loop {
            tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, peer)) => self.admit(stream, peer, &mut connections).await,
                    // Out of descriptors and the like: keep serving the clients we have.
                    Err(e) => {
                        log::warn!("accept failed: {e}");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    }
                },
                _ = shutdown.wait_for(|&down| down) => break,
            }
            while connections.try_join_next().is_some() {}
        }
        let Server {
            listener, shared, ..
        } = self;
        drop(listener);
        drain(&shared, connections).await;
        close_db(shared).await
    }

    /// Starts serving a new client, or refuses it past `max_clients`.
    async fn admit(&self, mut stream: TcpStream, peer: SocketAddr, connections: &mut JoinSet<()>) {
        let counters = &self.shared.counters;
        Counters::add(&counters.connections_received, 1);
        if self.shared.clients.count() >= self.shared.config.max_clients {
            Counters::add(&counters.rejected_connections, 1);
            log::warn!("client {peer}: refused, max number of clients reached");
            let _ = stream
                .write_all(b"-ERR max number of clients reached\r\n")
                .await;
            return;
        }
        // Replies are written whole; Nagle's delay would only add latency.
        let _ = stream.set_nodelay(true);
        let local = stream.local_addr().unwrap_or_else(|_| self.local_addr());
        let client = self.shared.clients.add(peer, local);
        connections.spawn(crate::connection::serve(
            self.shared.clone(),
            stream,
            client,
        ));
    }
}

/// Binds `address`; the error names it.
async fn bind(address: SocketAddr) -> Result<TcpListener, ServerError> {
    TcpListener::bind(address).await.map_err(|e| {
        let detail = format!("bind {address}: {e}");
        ServerError::Io(std::io::Error::new(e.kind(), detail))
    })
}

/// The metrics series of every command of the table.
fn command_series() -> Result<crate::metrics::Metrics, ServerError> {
    let names = crate::commands::command_names();
    crate::metrics::Metrics::new(&names).map_err(|e| ServerError::Config(format!("--metrics: {e}")))
}

/// Waits up to `shutdown_grace` for connections to finish, then drops the rest.
async fn drain(shared: &Shared, mut connections: JoinSet<()>) {
    let grace = shared.config.shutdown_grace;
    let all_done = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(grace, all_done).await.is_err() {
        log::warn!(
            "shutdown: {} connections still busy after {grace:?}; dropping them",
            connections.len()
        );
        connections.abort_all();
        while connections.join_next().await.is_some() {}
    }
}

/// Closes the database on the blocking pool (closing waits for background work).
async fn close_db(shared: Arc<Shared>) -> Result<(), ServerError> {
    let closed = tokio::task::spawn_blocking(move || shared.db.close()).await;
    match closed {
        Ok(result) => result.map_err(ServerError::Db),
        Err(e) => Err(ServerError::Io(std::io::Error::other(e.to_string()))),
    }
}

/// Runs a server over `db` on a new multi-threaded runtime until SHUTDOWN, SIGTERM or SIGINT;
/// `on_ready` is called with the bound address once clients can connect.
pub fn serve_until_signal(
    db: Db,
    config: ServerConfig,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<(), ServerError> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if config.workers > 0 {
        builder.worker_threads(config.workers);
    }
    let runtime = builder
        .enable_all()
        .thread_name("flatlsm-server")
        .build()
        .map_err(ServerError::Io)?;
    runtime.block_on(async {
        let server = Server::bind(db, config).await?;
        on_ready(server.local_addr());
        let handle = server.shutdown_handle();
        tokio::spawn(async move {
            wait_for_signal().await;
            handle.shutdown();
        });
        server.run().await
    })
}

/// Returns at the first SIGTERM or SIGINT (never, if the handlers cannot be installed).
async fn wait_for_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        log::warn!("could not install the SIGTERM/SIGINT handlers; stop with SHUTDOWN");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => log::info!("SIGTERM: shutting down"),
        _ = int.recv() => log::info!("SIGINT: shutting down"),
    }
}
