//! Safety limits and bad input: connection, bulk-length, argument-count and idle limits;
//! malformed requests answered with a protocol error and the connection closed; random bytes
//! never take the server down.

mod support;

use flatlsm_server::ServerConfig;
use rand::{Rng, SeedableRng};
use std::time::Duration;
use support::{TestServer, STEP};

#[test]
fn a_client_past_maxclients_gets_an_error_and_is_closed() {
    let server = TestServer::with(ServerConfig {
        max_clients: 2,
        ..Default::default()
    });
    let mut a = server.client();
    let mut b = server.client();
    assert_eq!(a.cmd(&["PING"]), "+PONG\r\n");
    assert_eq!(b.cmd(&["PING"]), "+PONG\r\n");
    let mut c = server.client();
    assert_eq!(c.reply(), "-ERR max number of clients reached\r\n");
    assert!(c.closed());
    drop(a);
    let deadline = std::time::Instant::now() + STEP;
    loop {
        let mut d = server.client();
        d.send(&["PING"]);
        if d.reply() == "+PONG\r\n" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "a freed slot is never reused"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `bytes` on a fresh connection; the reply must be a protocol error, then a close.
fn assert_refused(server: &TestServer, bytes: &[u8], expected: &str) {
    let mut c = server.client();
    c.send_bytes(bytes);
    let reply = c.reply();
    assert_eq!(
        reply,
        format!("-ERR Protocol error: {expected}\r\n"),
        "for {:?}",
        String::from_utf8_lossy(bytes)
    );
    assert!(c.closed(), "the connection closes after a protocol error");
}

#[test]
fn oversized_bulks_and_argument_counts_are_refused_before_they_are_buffered() {
    let config = ServerConfig {
        proto_max_bulk_len: 1024,
        max_args: 8,
        ..Default::default()
    };
    let server = TestServer::with(config);
    assert_refused(
        &server,
        b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1025\r\n",
        "invalid bulk length",
    );
    assert_refused(&server, b"*9\r\n", "invalid multibulk length");
    assert_refused(&server, b"*2147483648\r\n", "invalid multibulk length");
    assert_refused(
        &server,
        b"SET a b c d e f g h i\r\n",
        "invalid multibulk length",
    );
    let mut c = server.client();
    let value = "v".repeat(1024);
    assert_eq!(
        c.cmd(&["SET", "k", &value]),
        "+OK\r\n",
        "the limit itself is allowed"
    );
}

#[test]
fn malformed_requests_get_a_protocol_error_and_the_connection_closes() {
    let server = TestServer::start();
    assert_refused(
        &server,
        b"*1\r\n*1\r\n$4\r\nPING\r\n",
        "expected '$', got '*'",
    );
    assert_refused(&server, b"*1\r\n:5\r\n", "expected '$', got ':'");
    assert_refused(&server, b"*x\r\n", "invalid multibulk count");
    assert_refused(&server, b"*1\r\n$-1\r\n", "invalid bulk length");
    assert_refused(
        &server,
        b"*1\r\n$4\r\nPINGxx",
        "expected CRLF after a bulk string",
    );
    assert_refused(&server, b"*1\n", "invalid multibulk count");
    let long_header = [b"*".as_slice(), &[b'1'; 70_000]].concat();
    assert_refused(&server, &long_header, "too big multibulk count string");
    let long_inline = vec![b'a'; 70_000];
    assert_refused(&server, &long_inline, "too big inline request");
    assert_eq!(
        server.client().cmd(&["PING"]),
        "+PONG\r\n",
        "the server still serves"
    );
}

#[test]
fn a_connection_error_is_one_line_in_the_database_log() {
    let mut server = TestServer::start();
    assert_refused(&server, b"*1\r\n:5\r\n", "expected '$', got ':'");
    server.stop().unwrap();
    let log = std::fs::read_to_string(server.db_path().join("LOG")).unwrap();
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("[server] client"))
        .collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(
        lines[0].contains("expected '$', got ':'; closed"),
        "{}",
        lines[0]
    );
}

#[test]
fn requests_before_a_malformed_one_are_answered_first() {
    let server = TestServer::start();
    let mut c = server.client();
    c.send_bytes(b"*1\r\n$4\r\nPING\r\nPING\r\n*1\r\n*0\r\n");
    assert_eq!(c.reply(), "+PONG\r\n");
    assert_eq!(c.reply(), "+PONG\r\n");
    assert!(c.reply().starts_with("-ERR Protocol error"));
    assert!(c.closed());
}

#[test]
fn an_idle_client_is_disconnected_after_the_timeout() {
    let config = ServerConfig {
        idle_timeout: Some(Duration::from_millis(300)),
        ..Default::default()
    };
    let server = TestServer::with(config);
    let mut c = server.client();
    assert_eq!(c.cmd(&["PING"]), "+PONG\r\n");
    let started = std::time::Instant::now();
    assert!(c.closed());
    assert!(started.elapsed() < STEP);
    let mut half = server.client();
    half.send_bytes(b"*1\r\n$4\r\nPI");
    assert!(
        half.closed(),
        "a half-sent request does not keep a connection forever"
    );
}

#[test]
fn random_bytes_never_crash_or_hang_the_server() {
    let server = TestServer::with(ServerConfig {
        idle_timeout: Some(Duration::from_millis(200)),
        ..Default::default()
    });
    let mut rng = rand::rngs::StdRng::seed_from_u64(30);
    let alphabet = b"*$:+-\r\n0123456789-PINGSETabc \t";
    for _ in 0..200 {
        let len = rng.gen_range(1..64);
        let bytes: Vec<u8> = (0..len)
            .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
            .collect();
        let mut c = server.client();
        c.send_bytes(&bytes);
        // Whatever it answers, it then closes: the client sent all it will (EOF).
        c.stream.shutdown(std::net::Shutdown::Write).unwrap();
        assert!(c.closed());
    }
    assert_eq!(server.client().cmd(&["PING"]), "+PONG\r\n");
}

#[test]
fn values_larger_than_the_engine_accepts_get_an_error_not_a_crash() {
    let server = TestServer::with(ServerConfig {
        proto_max_bulk_len: 2 << 20,
        ..Default::default()
    });
    let mut c = server.client();
    // The test database has 1 MiB PMTables: a value must fit in half of one.
    let big = "x".repeat(1 << 20);
    let reply = c.cmd(&["SET", "big", &big]);
    assert!(reply.starts_with("-ERR storage engine:"), "{reply}");
    assert_eq!(c.cmd(&["PING"]), "+PONG\r\n");
}
