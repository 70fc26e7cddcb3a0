//! Scenario tests of the Prometheus endpoint (`--metrics`): what it counts, what it shows of
//! the engine, and that it answers nothing but `GET /metrics`.

mod support;

use flatlsm_server::ServerConfig;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use support::{TestServer, STEP};

fn with_metrics() -> TestServer {
    TestServer::with(ServerConfig {
        metrics: Some("127.0.0.1:0".parse().unwrap()),
        ..ServerConfig::default()
    })
}

/// The whole response to `request` (the endpoint closes the connection after it).
fn http(addr: SocketAddr, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(STEP)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

fn scrape(server: &TestServer) -> String {
    http(
        server.metrics.unwrap(),
        "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
    )
}

#[test]
fn the_endpoint_counts_each_command_its_errors_and_its_latency() {
    let server = with_metrics();
    let mut c = server.client();
    c.cmd(&["SET", "a", "1"]);
    c.cmd(&["GET", "a"]);
    c.cmd(&["GET", "b"]);
    c.cmd(&["INCRBY", "a", "x"]);
    let body = scrape(&server);
    assert!(body.starts_with("HTTP/1.1 200 OK"), "{body}");
    for line in [
        "flatlsm_server_commands_total{command=\"get\"} 2",
        "flatlsm_server_commands_total{command=\"set\"} 1",
        "flatlsm_server_command_errors_total{command=\"incrby\"} 1",
        "flatlsm_server_command_errors_total{command=\"get\"} 0",
        "flatlsm_server_command_duration_seconds_count{command=\"get\"} 2",
        "flatlsm_server_commands_processed_total 4",
        "flatlsm_server_connected_clients 1",
    ] {
        assert!(
            body.lines().any(|l| l == line),
            "no line {line:?} in\n{body}"
        );
    }
}

#[test]
fn the_endpoint_shows_the_engine_statistics_read_at_scrape_time() {
    let server = with_metrics();
    let mut c = server.client();
    let before = scrape(&server);
    c.cmd(&["SET", "k", "v"]);
    let after = scrape(&server);
    let seq = |body: &str| -> u64 {
        let line = body
            .lines()
            .find(|l| l.starts_with("flatlsm_latest_sequence_number "));
        line.and_then(|l| l.split(' ').nth(1)?.parse().ok())
            .unwrap()
    };
    assert_eq!(seq(&after), seq(&before) + 1);
    assert!(after.contains("\nflatlsm_num_files_at_level0 "), "{after}");
}

#[test]
fn the_endpoint_answers_only_get_metrics() {
    let server = with_metrics();
    let addr = server.metrics.unwrap();
    assert!(http(addr, "GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
    assert!(http(addr, "POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
    let mut garbage = TcpStream::connect(addr).unwrap();
    garbage.set_read_timeout(Some(STEP)).unwrap();
    garbage.write_all(&[b'x'; 9000]).unwrap();
    let mut rest = Vec::new();
    let _ = garbage.read_to_end(&mut rest); // closed, maybe reset: either way no response
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    let mut c = server.client();
    assert_eq!(c.cmd(&["PING"]), "+PONG\r\n", "the server still serves");
}

#[test]
fn without_the_flag_there_is_no_endpoint() {
    let server = TestServer::start();
    assert!(server.metrics.is_none());
}
