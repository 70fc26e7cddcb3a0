//! `--metrics ADDR`: Prometheus metrics over HTTP (`GET /metrics`, text format 0.0.4), built with
//! the `prometheus` crate's registry and text encoder.
//!
//! What it exports:
//! - per command (label `command`, the table's lowercase name, so the label set is bounded):
//!   `flatlsm_server_commands_total`, `flatlsm_server_command_errors_total` and the latency
//!   histogram `flatlsm_server_command_duration_seconds` (1 µs to 1 s), recorded by
//!   [`Metrics::observe`] around each command's handler;
//! - read at each scrape: the counters INFO's stats section shows
//!   (`flatlsm_server_<name>_total`), connected clients, and every integer property and
//!   statistic of the engine (`flatlsm_<property>` gauges, as INFO's persistence section names
//!   them).
//!
//! The endpoint is deliberately small: one request per connection, at most 8 KiB of request
//! read within 5 s, `GET /metrics` answered 200 and anything else 404, then the connection
//! closes. It listens where `--metrics` says; give a loopback address unless the scraper is
//! elsewhere (it needs no password, like redis_exporter's endpoint).

use crate::shared::{Counters, Shared};
use prometheus::{Encoder, Histogram, HistogramOpts, IntCounter, IntCounterVec, Opts, Registry};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Latency buckets in seconds: 1 µs to about 1 s, doubling.
fn latency_buckets() -> Vec<f64> {
    (0..21).map(|i| 1e-6 * f64::from(1u32 << i)).collect()
}

/// One command's series.
struct CommandSeries {
    calls: IntCounter,
    errors: IntCounter,
    latency: Histogram,
}

/// The per-command series, registered once at start for every command of the table.
pub struct Metrics {
    registry: Registry,
    commands: HashMap<&'static str, CommandSeries>,
}

impl Metrics {
    /// Series for each of `commands` (the command table's names).
    pub fn new(commands: &[&'static str]) -> prometheus::Result<Metrics> {
        let registry = Registry::new();
        let calls = counter_vec(&registry, "commands_total", "Commands executed")?;
        let errors = counter_vec(
            &registry,
            "command_errors_total",
            "Commands that replied an error",
        )?;
        let opts = HistogramOpts::new("command_duration_seconds", "Command execution time")
            .namespace("flatlsm_server")
            .buckets(latency_buckets());
        let latency = prometheus::HistogramVec::new(opts, &["command"])?;
        registry.register(Box::new(latency.clone()))?;
        let series = |name: &'static str| CommandSeries {
            calls: calls.with_label_values(&[name]),
            errors: errors.with_label_values(&[name]),
            latency: latency.with_label_values(&[name]),
        };
        let commands = commands.iter().map(|&n| (n, series(n))).collect();
        Ok(Metrics { registry, commands })
    }

    /// Records one execution of `command` that took `took` and replied an error or not.
    pub fn observe(&self, command: &str, took: Duration, error: bool) {
        if let Some(s) = self.commands.get(command) {
            s.calls.inc();
            s.latency.observe(took.as_secs_f64());
            if error {
                s.errors.inc();
            }
        }
    }

    /// The text exposition of every series, with the scrape-time values of `shared`.
    pub fn render(&self, shared: &Shared) -> prometheus::Result<Vec<u8>> {
        let mut families = self.registry.gather();
        families.extend(scrape_time(shared)?.gather());
        let mut out = Vec::new();
        prometheus::TextEncoder::new().encode(&families, &mut out)?;
        Ok(out)
    }
}

fn counter_vec(registry: &Registry, name: &str, help: &str) -> prometheus::Result<IntCounterVec> {
    let opts = Opts::new(name, help).namespace("flatlsm_server");
    let vec = IntCounterVec::new(opts, &["command"])?;
    registry.register(Box::new(vec.clone()))?;
    Ok(vec)
}

/// A registry of the values read now: server counters, clients, engine properties.
fn scrape_time(shared: &Shared) -> prometheus::Result<Registry> {
    let registry = Registry::new();
    for (name, value) in server_counters(shared) {
        let counter = IntCounter::new(format!("flatlsm_server_{name}_total"), name)?;
        counter.inc_by(value);
        registry.register(Box::new(counter))?;
    }
    let clients = shared.clients.count() as i64;
    gauge(&registry, "flatlsm_server_connected_clients", clients)?;
    for (name, value) in crate::info::engine_numbers(shared) {
        gauge(&registry, &name, value)?;
    }
    Ok(registry)
}

fn gauge(registry: &Registry, name: &str, value: i64) -> prometheus::Result<()> {
    let g = prometheus::IntGauge::new(name, name)?;
    g.set(value);
    registry.register(Box::new(g))
}

/// The counters INFO's stats section shows, by their INFO names.
fn server_counters(shared: &Shared) -> [(&'static str, u64); 7] {
    let c = &shared.counters;
    [
        (
            "connections_received",
            Counters::get(&c.connections_received),
        ),
        (
            "rejected_connections",
            Counters::get(&c.rejected_connections),
        ),
        ("commands_processed", Counters::get(&c.commands_processed)),
        ("error_replies", Counters::get(&c.error_replies)),
        ("protocol_errors", Counters::get(&c.protocol_errors)),
        ("net_input_bytes", Counters::get(&c.net_input_bytes)),
        ("net_output_bytes", Counters::get(&c.net_output_bytes)),
    ]
}

/// Longest request the endpoint reads.
const MAX_REQUEST: usize = 8 << 10;
/// How long the endpoint waits for a request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// Serves `GET /metrics` on `listener` until the server shuts down.
pub async fn serve(shared: Arc<Shared>, listener: TcpListener) {
    let mut shutdown = shared.shutdown.subscribe();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(answer(shared.clone(), stream));
                }
                Err(e) => log::warn!("metrics endpoint: accept failed: {e}"),
            },
            _ = shutdown.wait_for(|&down| down) => return,
        }
    }
}

/// Reads one request and answers it; errors only end the connection.
async fn answer(shared: Arc<Shared>, mut stream: TcpStream) {
    let Ok(Some(head)) = tokio::time::timeout(REQUEST_TIMEOUT, read_head(&mut stream)).await else {
        return;
    };
    let response = match head.starts_with(b"GET /metrics ") {
        true => metrics_response(&shared),
        false => response("404 Not Found", b"only GET /metrics is served\n".to_vec()),
    };
    let _ = stream.write_all(&response).await;
    let _ = stream.shutdown().await;
}

/// The request's bytes up to its blank line; `None` if the client closed or sent too much.
async fn read_head(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() > MAX_REQUEST || stream.read_buf(&mut head).await.ok()? == 0 {
            return None;
        }
    }
    Some(head)
}

fn metrics_response(shared: &Shared) -> Vec<u8> {
    let Some(metrics) = &shared.metrics else {
        return response("404 Not Found", b"metrics are off\n".to_vec());
    };
    match metrics.render(shared) {
        Ok(body) => response("200 OK", body),
        Err(e) => response("500 Internal Server Error", format!("{e}\n").into_bytes()),
    }
}

fn response(status: &str, body: Vec<u8>) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(&body);
    out
}
