//! End-to-end runs of `flatlsm serve` as a process: flags and `--help`, graceful shutdown on
//! SIGTERM, and scale-out behind twemproxy (nutcracker) with a server SIGKILLed and
//! restarted (skipped with a message when nutcracker is not installed).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const STEP: Duration = Duration::from_secs(30);

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `flatlsm serve` child process; SIGKILLed if still running when dropped.
struct Serve(Child);

impl Serve {
    fn start(db: &Path, port: u16) -> Serve {
        let child = Command::new(env!("CARGO_BIN_EXE_flatlsm"))
            .args([
                "serve",
                "--create-if-missing",
                "--port",
                &port.to_string(),
                "--db",
            ])
            .arg(db)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for_pong(port);
        Serve(child)
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args(["-s", name, &self.0.id().to_string()])
            .status();
        assert!(status.unwrap().success());
    }

    /// Waits (bounded) for the process to exit; its exit status.
    fn wait(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + STEP;
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "flatlsm serve did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A pipelining RESP client.
struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    fn connect(port: u16) -> std::io::Result<Client> {
        let stream = TcpStream::connect(SocketAddr::from(([127, 0, 0, 1], port)))?;
        stream.set_read_timeout(Some(STEP))?;
        Ok(Client {
            stream,
            buf: Vec::new(),
        })
    }

    /// Sends every command, then reads one reply per command (as decoded frames).
    fn pipeline(
        &mut self,
        commands: &[Vec<String>],
    ) -> Vec<redis_protocol::resp2::types::OwnedFrame> {
        let mut out = Vec::new();
        for args in commands {
            out.extend(format!("*{}\r\n", args.len()).bytes());
            for a in args {
                out.extend(format!("${}\r\n{a}\r\n", a.len()).bytes());
            }
        }
        self.stream.write_all(&out).unwrap();
        (0..commands.len()).map(|_| self.reply()).collect()
    }

    fn reply(&mut self) -> redis_protocol::resp2::types::OwnedFrame {
        loop {
            if let Ok(Some((frame, len))) = redis_protocol::resp2::decode::decode(&self.buf) {
                self.buf.drain(..len);
                return frame;
            }
            let mut chunk = [0u8; 65536];
            let n = self.stream.read(&mut chunk).unwrap();
            assert!(n > 0, "connection closed");
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    fn cmd(&mut self, args: &[&str]) -> redis_protocol::resp2::types::OwnedFrame {
        let args = args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        self.pipeline(&[args]).remove(0)
    }
}

fn wait_for_pong(port: u16) {
    let deadline = Instant::now() + STEP;
    loop {
        if let Ok(mut c) = Client::connect(port) {
            if c.cmd(&["PING"])
                == redis_protocol::resp2::types::OwnedFrame::SimpleString(b"PONG".to_vec())
            {
                return;
            }
        }
        assert!(
            Instant::now() < deadline,
            "nothing answers PING on port {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn serve_help_documents_every_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_flatlsm"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--bind",
        "--port",
        "--requirepass",
        "--requirepass-file",
        "--db",
        "--create-if-missing",
        "--profile",
        "--pm-path",
        "--sync",
        "--maxclients",
        "--proto-max-bulk-len",
        "--max-args",
        "--max-pipeline",
        "--timeout",
        "--dir",
        "docs/server.md",
    ] {
        assert!(
            help.contains(flag),
            "{flag} missing from serve --help:\n{help}"
        );
    }
}

#[test]
fn serve_refuses_a_missing_database_and_bad_flags_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_flatlsm"))
        .args(["serve", "--port", "0", "--db"])
        .arg(dir.path().join("nope"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
    let out = Command::new(env!("CARGO_BIN_EXE_flatlsm"))
        .args(["serve", "--create-if-missing", "--max-args", "0", "--db"])
        .arg(dir.path().join("db"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-args must be at least 1"));
}

#[test]
fn sigterm_drains_clients_and_closes_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut server = Serve::start(&dir.path().join("db"), port);
    let mut c = Client::connect(port).unwrap();
    let sets: Vec<Vec<String>> = (0..500)
        .map(|i| vec!["SET".into(), format!("k{i}"), "v".into()])
        .collect();
    assert!(c
        .pipeline(&sets)
        .iter()
        .all(|r| matches!(r, redis_protocol::resp2::types::OwnedFrame::SimpleString(_))));
    server.signal("TERM");
    assert!(server.wait().success(), "a graceful shutdown exits 0");
    let out = Command::new(env!("CARGO_BIN_EXE_flatlsm"))
        .args(["get", "--db"])
        .arg(dir.path().join("db"))
        .arg("k499")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "v");
}

/// Writes `keys` keys through the proxy in pipelines; returns the acknowledged ones.
fn write_through(proxy: u16, keys: usize) -> Vec<String> {
    let mut c = Client::connect(proxy).unwrap();
    let mut acked = Vec::new();
    for chunk in (0..keys).collect::<Vec<_>>().chunks(1000) {
        let sets: Vec<Vec<String>> = chunk
            .iter()
            .map(|i| vec!["SET".into(), format!("key:{i}"), format!("value:{i}")])
            .collect();
        for (set, reply) in sets.iter().zip(c.pipeline(&sets)) {
            if reply == redis_protocol::resp2::types::OwnedFrame::SimpleString(b"OK".to_vec()) {
                acked.push(set[1].clone());
            }
        }
    }
    acked
}

/// How many of `keys` read back their value through the proxy (retrying errors, bounded:
/// the proxy reconnects to a restarted server after its retry timeout).
fn verified_through(proxy: u16, keys: &[String]) -> usize {
    let deadline = Instant::now() + STEP;
    let mut c = Client::connect(proxy).unwrap();
    let mut good = 0;
    for chunk in keys.chunks(1000) {
        let gets: Vec<Vec<String>> = chunk
            .iter()
            .map(|k| vec!["GET".into(), k.clone()])
            .collect();
        loop {
            let replies = c.pipeline(&gets);
            if replies
                .iter()
                .any(|r| matches!(r, redis_protocol::resp2::types::OwnedFrame::Error(_)))
                && Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(200));
                continue;
            }
            let want = |k: &String| {
                redis_protocol::resp2::types::OwnedFrame::BulkString(
                    k.replace("key:", "value:").into_bytes(),
                )
            };
            good += chunk
                .iter()
                .zip(&replies)
                .filter(|(k, r)| **r == want(k))
                .count();
            break;
        }
    }
    good
}

fn dbsize(port: u16) -> i64 {
    match Client::connect(port).unwrap().cmd(&["DBSIZE"]) {
        redis_protocol::resp2::types::OwnedFrame::Integer(n) => n,
        other => panic!("DBSIZE: {other:?}"),
    }
}

#[test]
fn twemproxy_spreads_100k_keys_over_three_servers_and_loses_none_across_a_sigkill() {
    let has_nutcracker = Command::new("sh")
        .args(["-c", "command -v nutcracker"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_nutcracker {
        println!("SKIPPED: nutcracker is not installed (apt-get install nutcracker)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let mut servers: Vec<Serve> = ports
        .iter()
        .enumerate()
        .map(|(i, &p)| Serve::start(&dir.path().join(format!("db{i}")), p))
        .collect();
    let (proxy, stats) = (free_port(), free_port());
    let _nutcracker = start_nutcracker(dir.path(), proxy, stats, &ports);
    let acked = write_through(proxy, 100_000);
    assert_eq!(
        acked.len(),
        100_000,
        "every write through the proxy is acknowledged"
    );
    assert_eq!(verified_through(proxy, &acked), 100_000);
    let shares: Vec<i64> = ports.iter().map(|&p| dbsize(p)).collect();
    assert_eq!(shares.iter().sum::<i64>(), 100_000);
    assert!(
        shares.iter().all(|&s| s > 10_000),
        "each server holds a share: {shares:?}"
    );
    servers[1].0.kill().unwrap(); // SIGKILL
    servers[1].wait();
    servers[1] = Serve::start(&dir.path().join("db1"), ports[1]);
    assert_eq!(
        dbsize(ports[1]),
        shares[1],
        "the killed server recovered every acknowledged key"
    );
    assert_eq!(
        verified_through(proxy, &acked),
        100_000,
        "keys lost after the kill and restart"
    );
    println!("twemproxy: 100000 keys written, 100000 verified after SIGKILL + restart, 0 lost; shares {shares:?}");
}

/// nutcracker over `servers` (ketama, as examples/nutcracker.yml), listening on `proxy`.
fn start_nutcracker(dir: &Path, proxy: u16, stats: u16, servers: &[u16]) -> Serve {
    let mut conf = format!(
        "flatlsm:\n  listen: 127.0.0.1:{proxy}\n  hash: fnv1a_64\n  distribution: ketama\n  redis: true\n  \
         auto_eject_hosts: false\n  timeout: 5000\n  server_retry_timeout: 500\n  server_failure_limit: 1\n  servers:\n"
    );
    for (i, port) in servers.iter().enumerate() {
        conf.push_str(&format!("    - 127.0.0.1:{port}:1 flatlsm{i}\n"));
    }
    let path = dir.join("nutcracker.yml");
    std::fs::write(&path, conf).unwrap();
    let child = Command::new("nutcracker")
        .arg("-c")
        .arg(&path)
        .arg("-o")
        .arg(dir.join("nutcracker.log"))
        .args(["-a", "127.0.0.1", "-s", &stats.to_string()])
        .spawn()
        .unwrap();
    wait_for_pong(proxy);
    Serve(child)
}
