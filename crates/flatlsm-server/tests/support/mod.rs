//! Test support: a server on 127.0.0.1 port 0 in a background thread over a fresh database in
//! a temporary directory, stopped (bounded) when dropped, and a raw RESP client.
#![allow(dead_code)] // Each test binary uses part of it.

use bytes::BytesMut;
use flatlsm::{Db, Options};
use flatlsm_server::{Server, ServerConfig, ShutdownHandle};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long any single test step may wait for the server.
pub const STEP: Duration = Duration::from_secs(20);

/// A running server; dropping it shuts it down and waits (bounded) for it to stop.
pub struct TestServer {
    pub addr: SocketAddr,
    /// The metrics endpoint's address, when the configuration asked for one.
    pub metrics: Option<SocketAddr>,
    pub dir: tempfile::TempDir,
    handle: ShutdownHandle,
    thread: Option<JoinHandle<Result<(), String>>>,
}

/// Small write buffers, so tests cross flushes quickly and PM files stay small.
pub fn small_options(dir: &std::path::Path) -> Options {
    Options::default()
        .pm_path(dir.join("pm"))
        .pmtable_size(1 << 20)
}

impl TestServer {
    /// A server with the default settings (port 0).
    pub fn start() -> TestServer {
        TestServer::with(ServerConfig::default())
    }

    /// A server with `config` (its port is replaced by 0).
    pub fn with(config: ServerConfig) -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path().join("db"), small_options(dir.path())).unwrap();
        TestServer::over(db, dir, config)
    }

    /// A server over an open database.
    pub fn over(db: Db, dir: tempfile::TempDir, config: ServerConfig) -> TestServer {
        let config = ServerConfig {
            port: 0,
            checkpoint_dir: Some(dir.path().join("saves")),
            ..config
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let server = Server::bind(db, config).await.map_err(|e| e.to_string())?;
                let addrs = (server.local_addr(), server.metrics_addr());
                tx.send((addrs, server.shutdown_handle())).unwrap();
                server.run().await.map_err(|e| e.to_string())
            })
        });
        let ((addr, metrics), handle) = rx.recv_timeout(STEP).expect("server did not start");
        TestServer {
            addr,
            metrics,
            dir,
            handle,
            thread: Some(thread),
        }
    }

    /// A new client connection.
    pub fn client(&self) -> Client {
        Client::connect(self.addr)
    }

    /// Shuts down and waits for the server to return (at most [`STEP`]).
    pub fn stop(&mut self) -> Result<(), String> {
        self.handle.shutdown();
        self.join()
    }

    /// Waits for the server to return by itself (e.g. after SHUTDOWN).
    pub fn join(&mut self) -> Result<(), String> {
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        let deadline = Instant::now() + STEP;
        while !thread.is_finished() {
            assert!(
                Instant::now() < deadline,
                "server did not stop within {STEP:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        thread.join().unwrap()
    }

    /// The database directory.
    pub fn db_path(&self) -> PathBuf {
        self.dir.path().join("db")
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.stop();
        }
    }
}

/// A raw RESP client: sends commands, returns each reply's exact bytes as text.
pub struct Client {
    pub stream: TcpStream,
    buf: BytesMut,
}

impl Client {
    /// Connects with a read timeout, so a missing reply fails the test instead of hanging.
    pub fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(STEP)).unwrap();
        Client {
            stream,
            buf: BytesMut::new(),
        }
    }

    /// Sends one command as a RESP array of bulk strings.
    pub fn send(&mut self, args: &[&str]) {
        let bytes: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.send_bytes(&encode(&bytes));
    }

    /// Sends raw bytes.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    /// Sends `requests` as one pipeline (one write) and returns their replies in order.
    pub fn pipeline(&mut self, requests: &[&[&[u8]]]) -> Vec<String> {
        let bytes: Vec<u8> = requests.iter().flat_map(|r| encode(r)).collect();
        self.send_bytes(&bytes);
        (0..requests.len()).map(|_| self.reply()).collect()
    }

    /// One command's reply, as its exact RESP bytes (lossy UTF-8).
    pub fn cmd(&mut self, args: &[&str]) -> String {
        self.send(args);
        self.reply()
    }

    /// The next reply's exact bytes; panics on a closed connection or a timeout.
    pub fn reply(&mut self) -> String {
        self.try_reply().expect("connection closed before a reply")
    }

    /// The next reply, `None` if the server closed the connection first.
    pub fn try_reply(&mut self) -> Option<String> {
        loop {
            if let Some(len) = reply_len(&self.buf) {
                let reply = self.buf.split_to(len);
                return Some(String::from_utf8_lossy(&reply).into_owned());
            }
            let mut chunk = [0u8; 65536];
            match self.stream.read(&mut chunk) {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    /// Whether the server closed the connection (reads until EOF or an error).
    pub fn closed(&mut self) -> bool {
        let mut chunk = [0u8; 1024];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(0) => return true,
                Ok(_) => continue,
                Err(e) => return e.kind() == std::io::ErrorKind::ConnectionReset,
            }
        }
    }
}

/// The length of the complete reply at the start of `buf`: RESP2 (whose `$-1` the RESP3
/// decoder refuses) or RESP3.
fn reply_len(buf: &[u8]) -> Option<usize> {
    if let Ok(Some((_, len))) = redis_protocol::resp2::decode::decode(buf) {
        return Some(len);
    }
    match redis_protocol::resp3::decode::complete::decode(buf) {
        Ok(Some((_, len))) => Some(len),
        _ => None,
    }
}

/// A RESP array of bulk strings.
pub fn encode(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// `$N\r\n<s>\r\n`.
pub fn bulk(s: &str) -> String {
    format!("${}\r\n{s}\r\n", s.len())
}

/// Whether `program` can be run (found on PATH).
pub fn installed(program: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}
