//! Runs of pipelined requests executed together: consecutive plain `SET key value` requests,
//! or consecutive INCR, DECR, INCRBY and DECRBY requests, as one engine write (a pipelined INCR
//! paid a writer-lock hand-off and a write-path entry for each request); consecutive `GET key`
//! requests, and a counter run's reads, as one batched engine read (`Db::multi_get`: the keys'
//! lookups overlap their cache misses, which were most of a lone GET's time).
//!
//! Invariants: the replies are those the requests would get one after another (a counter sees
//! the increments before it in the run; a later SET of a key wins); a run holds all its keys'
//! locks (`crate::locks`) from its first read to the end of its write, so no other writer
//! interleaves; replies are encoded only after the write returned, and if it fails every
//! request of the run that would have written gets the engine's error instead.

use super::counters::{added, delta, plus};
use super::store::reply;
use super::{resp_version, Ctx, Session};
use crate::reply::Reply;
use bytes::Bytes;
use flatlsm::options::{MAX_KEY_SIZE, MAX_VALUE_SIZE};
use flatlsm::WriteBatch;
use std::collections::HashMap;

/// The kinds of request a run may hold (all of one kind).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `SET key value`, no options.
    PlainSet,
    /// INCR, DECR, INCRBY or DECRBY.
    Counter,
    /// `GET key`.
    Get,
}

/// The kind of `request`, if it may join a run: authenticated, arity right, and its key and
/// value within the engine's limits (so the run's write cannot fail on them).
fn kind(request: &[Bytes]) -> Option<Kind> {
    let name = request.first()?;
    if request.get(1).is_none_or(|key| key.len() > MAX_KEY_SIZE) {
        return None;
    }
    let is = |word: &str| name.eq_ignore_ascii_case(word.as_bytes());
    match request.len() {
        3 if is("set") && request[2].len() <= MAX_VALUE_SIZE => Some(Kind::PlainSet),
        2 if is("get") => Some(Kind::Get),
        2 if is("incr") || is("decr") => Some(Kind::Counter),
        3 if is("incrby") || is("decrby") => Some(Kind::Counter),
        _ => None,
    }
}

/// How many requests at the start of `requests` form one run (0 if the first cannot start
/// one); [`execute_run`] executes it.
pub fn batchable_run(requests: &[Vec<Bytes>], session: &Session) -> usize {
    let first = requests.first().and_then(|r| kind(r));
    if !session.authenticated || first.is_none() {
        return 0;
    }
    requests.iter().take_while(|r| kind(r) == first).count()
}

/// Executes a run ([`batchable_run`]): GETs as one read (no lock, as a GET takes none), the
/// writes as one atomic engine write under their keys' locks; each request counted and timed
/// as one command; the replies in request order.
pub fn execute_run(ctx: &mut Ctx<'_>, run: &[Vec<Bytes>]) -> Vec<Reply> {
    let started = std::time::Instant::now();
    let kind = kind(&run[0]);
    let _lock =
        (kind != Some(Kind::Get)).then(|| ctx.shared.locks.lock(run.iter().map(|r| &r[1][..])));
    let replies = match kind {
        Some(Kind::Get) => gets(ctx, run),
        Some(Kind::Counter) => counters(ctx, run),
        _ => vec![sets(ctx, run); run.len()],
    };
    record(ctx, run, &replies, started.elapsed());
    replies
}

/// The replies of a run of plain SETs (one `+OK`, or the engine's error, for all).
fn sets(ctx: &Ctx<'_>, run: &[Vec<Bytes>]) -> Reply {
    let mut batch = WriteBatch::new();
    for r in run {
        batch.put(&r[1], &r[2]);
    }
    match ctx.write(&batch) {
        Ok(()) => Reply::ok(),
        Err(error) => error,
    }
}

/// The replies of a run of GETs: each key's value or nil, read at one moment.
fn gets(ctx: &Ctx<'_>, run: &[Vec<Bytes>]) -> Vec<Reply> {
    let keys: Vec<&[u8]> = run.iter().map(|r| &r[1][..]).collect();
    let values = ctx.get_many(&keys);
    values
        .into_iter()
        .map(|v| reply(v.map(Reply::value)))
        .collect()
}

/// The replies of a run of counters: each new value computed over the values before it (the
/// run's keys read at once, under their locks), all written at once.
fn counters(ctx: &Ctx<'_>, run: &[Vec<Bytes>]) -> Vec<Reply> {
    let keys: Vec<&[u8]> = run.iter().map(|r| &r[1][..]).collect();
    let stored: HashMap<&[u8], Stored> = keys.iter().copied().zip(ctx.get_many(&keys)).collect();
    let mut values: HashMap<&[u8], i64> = HashMap::new();
    let mut replies: Vec<Reply> = run.iter().map(|r| count(r, &stored, &mut values)).collect();
    let mut batch = WriteBatch::new();
    for (key, value) in &values {
        batch.put(key, value.to_string().as_bytes());
    }
    if let Err(error) = ctx.write(&batch) {
        let failed = |reply: &mut Reply| matches!(reply, Reply::Int(_)).then(|| error.clone());
        replies
            .iter_mut()
            .for_each(|r| *r = failed(r).unwrap_or_else(|| r.clone()));
    }
    replies
}

/// A key's value as read before the run (or the error reading it).
type Stored = Result<Option<Vec<u8>>, Reply>;

/// One counter request over `values` (the run's new values so far) and `stored` (the keys'
/// values before the run): its reply.
fn count<'r>(
    request: &'r [Bytes],
    stored: &HashMap<&[u8], Stored>,
    values: &mut HashMap<&'r [u8], i64>,
) -> Reply {
    let key = &request[1][..];
    let before = |key| stored.get(key).cloned().unwrap_or(Ok(None));
    let new = delta(request).and_then(|by| match values.get(key) {
        Some(&value) => plus(value, by),
        None => before(key).and_then(|v| added(v.as_deref(), by)),
    });
    match new {
        Ok(new) => {
            values.insert(key, new);
            Reply::Int(new)
        }
        Err(error) => error,
    }
}

/// Counts and times every request of the run as the command it is (only with metrics on), and
/// records the last one as the client's last command (CLIENT LIST shows no more).
fn record(ctx: &Ctx<'_>, run: &[Vec<Bytes>], replies: &[Reply], took: std::time::Duration) {
    let name = |request: &[Bytes]| String::from_utf8_lossy(&request[0]).to_ascii_lowercase();
    if let Some(metrics) = &ctx.shared.metrics {
        for (request, reply) in run.iter().zip(replies) {
            metrics.observe(&name(request), took, reply.is_error());
        }
    }
    if let Some(last) = run.last() {
        let resp = resp_version(ctx.session.protocol);
        ctx.session.client.touch(&name(last), resp);
    }
}
