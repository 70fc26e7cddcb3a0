//! The registry of connected clients: ids, names and what CLIENT LIST and INFO show.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// One connected client, as others see it.
pub struct ClientInfo {
    /// Unique for the server's lifetime, from 1 (CLIENT ID).
    pub id: u64,
    /// The client's address.
    pub addr: SocketAddr,
    /// The server's address of this connection.
    pub local_addr: SocketAddr,
    created: Instant,
    state: Mutex<ClientState>,
}

struct ClientState {
    name: Option<String>,
    last_command: String,
    last_active: Instant,
    resp: u8,
}

impl ClientInfo {
    /// The name CLIENT SETNAME gave (None: none, or cleared with an empty name).
    pub fn name(&self) -> Option<String> {
        self.state.lock().name.clone()
    }

    /// Sets or clears (`None`) the client's name.
    pub fn set_name(&self, name: Option<String>) {
        self.state.lock().name = name;
    }

    /// Records a command the client just ran.
    pub fn touch(&self, command: &str, resp: u8) {
        let mut s = self.state.lock();
        s.last_command.clear();
        s.last_command.push_str(command);
        s.last_active = Instant::now();
        s.resp = resp;
    }

    /// The client's CLIENT LIST line (without the newline).
    pub fn line(&self) -> String {
        let s = self.state.lock();
        format!(
            "id={} addr={} laddr={} fd=-1 name={} age={} idle={} flags=N db=0 resp={} cmd={}",
            self.id,
            self.addr,
            self.local_addr,
            s.name.as_deref().unwrap_or(""),
            self.created.elapsed().as_secs(),
            s.last_active.elapsed().as_secs(),
            s.resp,
            s.last_command,
        )
    }
}

/// Every connected client.
#[derive(Default)]
pub struct Clients {
    next_id: AtomicU64,
    connected: Mutex<BTreeMap<u64, Arc<ClientInfo>>>,
}

impl Clients {
    /// Registers a new connection; it stays listed until [`Clients::remove`].
    pub fn add(&self, addr: SocketAddr, local_addr: SocketAddr) -> Arc<ClientInfo> {
        let now = Instant::now();
        let info = Arc::new(ClientInfo {
            id: self.next_id.fetch_add(1, Ordering::Relaxed) + 1,
            addr,
            local_addr,
            created: now,
            state: Mutex::new(ClientState {
                name: None,
                last_command: "NULL".into(),
                last_active: now,
                resp: 2,
            }),
        });
        self.connected.lock().insert(info.id, info.clone());
        info
    }

    /// Unregisters a closed connection.
    pub fn remove(&self, id: u64) {
        self.connected.lock().remove(&id);
    }

    /// How many clients are connected.
    pub fn count(&self) -> usize {
        self.connected.lock().len()
    }

    /// CLIENT LIST: one line per client, by id.
    pub fn list(&self) -> String {
        let clients: Vec<Arc<ClientInfo>> = self.connected.lock().values().cloned().collect();
        clients.iter().fold(String::new(), |mut out, c| {
            let _ = writeln!(out, "{}", c.line());
            out
        })
    }
}
