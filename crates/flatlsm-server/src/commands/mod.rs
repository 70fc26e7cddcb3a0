//! Command execution: the per-connection session, the checks every command passes (known
//! name, authentication, arity) and helpers the command families share.
//!
//! Families: `connection` (PING, ECHO, HELLO, AUTH, SELECT, QUIT, CLIENT, CONFIG), `strings`
//! (GET, SET and the other single-value commands), `counters` (INCR and its relatives),
//! `keyspace` (DEL, EXISTS, TYPE, SCAN, KEYS, DBSIZE, FLUSHDB), `admin` (INFO, BGSAVE, SAVE,
//! LASTSAVE, SHUTDOWN) and `table` (the command table and COMMAND).

mod admin;
mod batched;
mod connection;
mod counters;
mod keyspace;
mod store;
mod strings;
mod table;

use crate::clients::ClientInfo;
use crate::reply::{Protocol, Reply};
use crate::shared::Shared;
use bytes::Bytes;
use std::sync::Arc;

pub use batched::{batchable_run, execute_run};
pub use connection::COMPATIBLE_REDIS_VERSION;
pub use keyspace::estimate_keys;

/// One connection's state.
pub struct Session {
    /// The client as CLIENT LIST shows it.
    pub client: Arc<ClientInfo>,
    /// The protocol replies are encoded in (HELLO switches it).
    pub protocol: Protocol,
    /// AUTH succeeded, or no password is required.
    pub authenticated: bool,
    /// Close the connection after this batch's replies are sent (QUIT, SHUTDOWN).
    pub close: bool,
    /// Send no reply to this command (SHUTDOWN closes the connection instead).
    pub silent: bool,
}

/// What a command runs against.
pub struct Ctx<'a> {
    /// The server's shared state.
    pub shared: &'a Arc<Shared>,
    /// The calling connection.
    pub session: &'a mut Session,
}

/// The reply to one request (`args[0]` is the command name; `args` is not empty).
pub fn execute(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let name = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
    let Some(spec) = table::lookup(&name) else {
        return unknown_command(&args[0], &args[1..]);
    };
    ctx.session
        .client
        .touch(spec.name, resp_version(ctx.session.protocol));
    // redis-server's order: unknown command, then arity, then authentication.
    if !arity_ok(spec.arity, args.len()) {
        return wrong_arity(spec.name);
    }
    if !ctx.session.authenticated && !spec.before_auth {
        return Reply::Error("NOAUTH Authentication required.".into());
    }
    let shared = ctx.shared; // a copy of the reference: `ctx` stays free to lend mutably
    let Some(metrics) = &shared.metrics else {
        return (spec.handler)(ctx, args);
    };
    let started = std::time::Instant::now();
    let reply = (spec.handler)(ctx, args);
    metrics.observe(spec.name, started.elapsed(), reply.is_error());
    reply
}

/// The name of every command the server knows (lowercase).
pub fn command_names() -> Vec<&'static str> {
    table::COMMANDS.iter().map(|s| s.name).collect()
}

pub(crate) fn resp_version(protocol: Protocol) -> u8 {
    match protocol {
        Protocol::Resp2 => 2,
        Protocol::Resp3 => 3,
    }
}

/// redis-server's arity rule: N exactly, or -N at least N arguments (name included).
fn arity_ok(arity: i64, given: usize) -> bool {
    let given = given as i64;
    if arity >= 0 {
        given == arity
    } else {
        given >= -arity
    }
}

/// `ERR wrong number of arguments for 'get' command`.
pub fn wrong_arity(name: &str) -> Reply {
    Reply::err(format!("wrong number of arguments for '{name}' command"))
}

/// redis-server's reply to an unknown command, quoting arguments up to 128 bytes in all.
fn unknown_command(name: &[u8], args: &[Bytes]) -> Reply {
    let mut quoted = Vec::new();
    for arg in args {
        if quoted.len() >= 128 {
            break;
        }
        let room = 128 - quoted.len();
        quoted.push(b'\'');
        quoted.extend_from_slice(&arg[..arg.len().min(room)]);
        quoted.extend_from_slice(b"' ");
    }
    let name = String::from_utf8_lossy(&name[..name.len().min(128)]);
    let quoted = String::from_utf8_lossy(&quoted);
    Reply::err(format!(
        "unknown command '{name}', with args beginning with: {quoted}"
    ))
}

/// `ERR syntax error`.
pub fn syntax_error() -> Reply {
    Reply::err("syntax error")
}

/// `ERR value is not an integer or out of range`.
pub fn not_an_integer() -> Reply {
    Reply::err("value is not an integer or out of range")
}

/// The reply to an engine error.
pub fn engine_error(e: flatlsm::Error) -> Reply {
    match e {
        flatlsm::Error::Closed => {
            Reply::err("the database is closed (the server is shutting down)")
        }
        other => Reply::err(format!("storage engine: {other}")),
    }
}

/// Parses an integer as redis-server's `string2ll` does: optional `-`, no `+`, no spaces,
/// no leading zeros, within i64.
pub fn parse_i64(arg: &[u8]) -> Option<i64> {
    let digits = arg.strip_prefix(b"-").unwrap_or(arg);
    let canonical = match digits {
        [b'0'] => arg.len() == 1,
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !canonical {
        return None;
    }
    std::str::from_utf8(arg).ok()?.parse().ok()
}

/// An integer argument, or the reply refusing it.
pub fn int_arg(arg: &[u8]) -> Result<i64, Reply> {
    parse_i64(arg).ok_or_else(not_an_integer)
}

/// Whether `arg` is `word`, ignoring ASCII case.
pub fn is(arg: &[u8], word: &str) -> bool {
    arg.eq_ignore_ascii_case(word.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::parse_i64;

    #[test]
    fn integers_parse_as_redis_server_parses_them() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-12"), Some(-12));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            "",
            "-",
            "-0",
            "01",
            "+1",
            " 1",
            "1 ",
            "1.0",
            "9223372036854775808",
            "x",
        ] {
            assert_eq!(parse_i64(bad.as_bytes()), None, "{bad:?}");
        }
    }
}
