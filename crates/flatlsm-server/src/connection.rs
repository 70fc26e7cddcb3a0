//! One client's connection: read, decode up to `max_pipeline` requests, execute them, write
//! every reply, repeat.
//!
//! Commands execute on the runtime's worker thread that polls the connection, as Kvrocks'
//! workers run them: a hand-off to a blocking pool per batch cost a third of the throughput of
//! pipelined GETs (two thread wake-ups per batch). The price: a command that waits (a write
//! the engine stalls, a read from the device) holds its worker, and the connections queued on
//! it wait too; `ServerConfig::workers` sets how many workers there are.
//!
//! Invariants: replies go out in request order; a reply to a write is encoded only after the
//! engine's write returned; a protocol error is answered after the replies of the requests
//! before it, then the connection closes; the connection never holds more than one batch of
//! replies (further pipelined requests wait in the socket, which pushes back on the client).

use crate::clients::ClientInfo;
use crate::commands::{batchable_run, execute, execute_run, Ctx, Session};
use crate::reply::{Protocol, Reply};
use crate::request::{next_request, Limits, ProtocolError};
use crate::shared::{Counters, Shared};
use bytes::{Bytes, BytesMut};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Why a connection ended, for the log line.
#[derive(Debug)]
enum Ended {
    ClientClosed,
    Quit,
    ShuttingDown,
    IdleTimeout,
    Protocol(ProtocolError),
    Io(std::io::Error),
    Panicked(String),
}

struct Connection {
    shared: Arc<Shared>,
    stream: TcpStream,
    input: BytesMut,
    limits: Limits,
    session: Option<Session>,
}

/// Serves `stream` until the client leaves, breaks the protocol, idles out, or the server
/// shuts down; logs one line if it ended on an error.
pub async fn serve(shared: Arc<Shared>, stream: TcpStream, client: Arc<ClientInfo>) {
    let limits = Limits {
        max_args: shared.config.max_args,
        max_bulk_len: shared.config.proto_max_bulk_len,
        max_request_bytes: shared.config.query_buffer_limit,
    };
    let session = Session {
        authenticated: shared.password.is_none(),
        client: client.clone(),
        protocol: Protocol::Resp2,
        close: false,
        silent: false,
    };
    let mut conn = Connection {
        shared: shared.clone(),
        stream,
        input: BytesMut::with_capacity(16 << 10),
        limits,
        session: Some(session),
    };
    let ended = conn.run().await;
    log_end(&shared, &client, &ended);
    shared.clients.remove(client.id);
}

/// One line for a connection that ended on an error (none for a normal end), on stderr and in
/// the database's LOG.
fn log_end(shared: &Shared, client: &ClientInfo, ended: &Ended) {
    let Some(what) = end_error(ended) else {
        return;
    };
    let line = format!("client {} id={}: {what}", client.addr, client.id);
    match ended {
        Ended::Panicked(_) => log::error!("{line}"),
        Ended::IdleTimeout => log::info!("{line}"),
        _ => log::warn!("{line}"),
    }
    shared.db.log_line(&format!("[server] {line}"));
}

/// What went wrong, if the connection ended on an error.
fn end_error(ended: &Ended) -> Option<String> {
    match ended {
        Ended::ClientClosed | Ended::Quit | Ended::ShuttingDown => None,
        Ended::IdleTimeout => Some("closed after idle timeout".into()),
        Ended::Protocol(e) => Some(format!("{e}; closed")),
        Ended::Io(e) => Some(format!("I/O error: {e}")),
        Ended::Panicked(e) => Some(format!("command panicked: {e}")),
    }
}

impl Connection {
    async fn run(&mut self) -> Ended {
        let mut shutdown = self.shared.shutdown.subscribe();
        loop {
            let full = match self.serve_decoded().await {
                Ok(full) => full,
                Err(ended) => return ended,
            };
            if self.shared.shutting_down() {
                return Ended::ShuttingDown;
            }
            // A full batch may have left complete requests in the buffer: no read before them.
            if !full {
                if let Some(ended) = self.read_more(&mut shutdown).await {
                    return ended;
                }
            }
        }
    }

    /// Executes the requests decoded from the buffer (one batch at most) and answers them:
    /// whether the batch was full, or why the connection ends.
    async fn serve_decoded(&mut self) -> Result<bool, Ended> {
        let (requests, error) = self.decode_batch();
        let full = requests.len() == self.shared.config.max_pipeline;
        if !requests.is_empty() {
            if let Some(ended) = self.execute(requests).await {
                return Err(ended);
            }
        }
        match error {
            Some(error) => Err(self.refuse(error).await),
            None => Ok(full),
        }
    }

    /// Decodes up to `max_pipeline` requests; a protocol error stops decoding.
    fn decode_batch(&mut self) -> (Vec<Vec<Bytes>>, Option<ProtocolError>) {
        let mut requests = Vec::new();
        while requests.len() < self.shared.config.max_pipeline {
            match next_request(&mut self.input, &self.limits) {
                Ok(Some(args)) if args.is_empty() => {}
                Ok(Some(args)) => requests.push(args),
                Ok(None) => break,
                Err(e) => return (requests, Some(e)),
            }
        }
        (requests, None)
    }

    /// Reads more input; `Some` if the connection must end.
    async fn read_more(
        &mut self,
        shutdown: &mut tokio::sync::watch::Receiver<bool>,
    ) -> Option<Ended> {
        let idle = self.shared.config.idle_timeout;
        let read = self.stream.read_buf(&mut self.input);
        let read = async {
            match idle {
                Some(limit) => tokio::time::timeout(limit, read).await.ok(),
                None => Some(read.await),
            }
        };
        tokio::select! {
            result = read => match result {
                None => Some(Ended::IdleTimeout),
                Some(Ok(0)) => Some(Ended::ClientClosed),
                Some(Ok(n)) => {
                    Counters::add(&self.shared.counters.net_input_bytes, n as u64);
                    None
                }
                Some(Err(e)) => Some(Ended::Io(e)),
            },
            _ = shutdown.wait_for(|&down| down) => Some(Ended::ShuttingDown),
        }
    }

    /// Runs a batch and writes its replies; `Some` if the connection must end (a command
    /// that panicked ends its connection only, with a log line).
    async fn execute(&mut self, requests: Vec<Vec<Bytes>>) -> Option<Ended> {
        let session = self.session.take()?;
        let shared = &self.shared;
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_batch(shared, session, requests)
        }));
        let (session, out) = match ran {
            Ok(done) => done,
            Err(panic) => return Some(Ended::Panicked(panic_message(&panic))),
        };
        let close = session.close;
        self.session = Some(session);
        if let Err(e) = self.write(&out).await {
            return Some(e);
        }
        close.then_some(Ended::Quit)
    }

    async fn write(&mut self, out: &[u8]) -> Result<(), Ended> {
        let write = self.stream.write_all(out);
        let written = match self.shared.config.idle_timeout {
            Some(limit) => tokio::time::timeout(limit, write)
                .await
                .map_err(|_| Ended::IdleTimeout)?,
            None => write.await,
        };
        Counters::add(&self.shared.counters.net_output_bytes, out.len() as u64);
        written.map_err(Ended::Io)
    }

    /// Answers a protocol error, then ends the connection.
    async fn refuse(&mut self, error: ProtocolError) -> Ended {
        Counters::add(&self.shared.counters.protocol_errors, 1);
        let protocol = self
            .session
            .as_ref()
            .map_or(Protocol::Resp2, |s| s.protocol);
        let mut out = BytesMut::new();
        Reply::err(&error).encode(protocol, &mut out);
        let _ = self.write(&out).await;
        Ended::Protocol(error)
    }
}

/// Executes `requests` in order and encodes their replies; stops after a command that closes
/// the connection. A run of two or more plain SETs, or of counters, is one engine write
/// (`execute_run`).
fn run_batch(
    shared: &Arc<Shared>,
    mut session: Session,
    requests: Vec<Vec<Bytes>>,
) -> (Session, BytesMut) {
    let mut out = BytesMut::new();
    let mut rest = &requests[..];
    while !rest.is_empty() {
        let ctx = &mut Ctx {
            shared,
            session: &mut session,
        };
        let (done, stop) = run_next(ctx, rest, &mut out);
        rest = &rest[done..];
        if stop {
            break;
        }
    }
    (session, out)
}

/// Executes the next request (or the next run of batchable writes) and encodes its replies into `out`;
/// how many requests it took, and whether the batch stops there (the connection closes).
fn run_next(ctx: &mut Ctx<'_>, requests: &[Vec<Bytes>], out: &mut BytesMut) -> (usize, bool) {
    let run = batchable_run(requests, ctx.session);
    let replies = match run >= 2 {
        true => execute_run(ctx, &requests[..run]),
        false => vec![execute(ctx, &requests[0])],
    };
    replies.iter().for_each(|reply| count(ctx.shared, reply));
    let taken = replies.len();
    if std::mem::take(&mut ctx.session.silent) {
        return (taken, true);
    }
    for reply in replies {
        reply.encode(ctx.session.protocol, out);
    }
    (taken, ctx.session.close)
}

/// The message a panic carried (a `&str` or a `String`), for the log line.
fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    let text = panic.downcast_ref::<&str>().map(|s| s.to_string());
    text.or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

fn count(shared: &Shared, reply: &Reply) {
    Counters::add(&shared.counters.commands_processed, 1);
    if reply.is_error() {
        Counters::add(&shared.counters.error_replies, 1);
    }
}
