//! The command table (name, arity, flags, key positions, handler) and the COMMAND command
//! that reports it (redis-cli and cluster-aware clients read it).

use super::{admin, connection, counters, keyspace, strings, Ctx};
use crate::reply::Reply;
use bytes::Bytes;
use std::collections::HashMap;
use std::sync::LazyLock;

/// A command's handler: `args[0]` is the name; the arity was checked.
pub type Handler = fn(&mut Ctx<'_>, &[Bytes]) -> Reply;

/// One command as COMMAND INFO describes it.
pub struct Spec {
    /// Lowercase name.
    pub name: &'static str,
    /// N: exactly N arguments (name included); -N: at least N.
    pub arity: i64,
    /// COMMAND's flags (`write`, `readonly`, `fast`, ...).
    pub flags: &'static [&'static str],
    /// Position of the first key (0: none), of the last (-1: the last argument), the step.
    pub keys: (i64, i64, i64),
    /// Allowed before AUTH.
    pub before_auth: bool,
    /// Runs the command.
    pub handler: Handler,
}

const fn spec(
    name: &'static str,
    arity: i64,
    flags: &'static [&'static str],
    keys: (i64, i64, i64),
    handler: Handler,
) -> Spec {
    Spec {
        name,
        arity,
        flags,
        keys,
        before_auth: false,
        handler,
    }
}

const R: &[&str] = &["readonly", "fast"];
const W: &[&str] = &["write", "denyoom", "fast"];
const WSLOW: &[&str] = &["write"];
const ADMIN: &[&str] = &["admin", "noscript"];
const CONN: &[&str] = &["fast", "stale", "loading"];
const NONE: (i64, i64, i64) = (0, 0, 0);
const ONE: (i64, i64, i64) = (1, 1, 1);
const ALL: (i64, i64, i64) = (1, -1, 1);

/// Every command the server knows.
pub static COMMANDS: &[Spec] = &[
    spec("ping", -1, CONN, NONE, connection::ping),
    spec("echo", 2, CONN, NONE, connection::echo),
    Spec {
        before_auth: true,
        ..spec("hello", -1, CONN, NONE, connection::hello)
    },
    Spec {
        before_auth: true,
        ..spec("auth", -2, CONN, NONE, connection::auth)
    },
    spec("select", 2, CONN, NONE, connection::select),
    Spec {
        before_auth: true,
        ..spec("quit", -1, CONN, NONE, connection::quit)
    },
    spec("client", -2, CONN, NONE, connection::client),
    spec("config", -2, ADMIN, NONE, connection::config),
    spec("command", -1, CONN, NONE, command),
    spec("info", -1, CONN, NONE, admin::info),
    spec("bgsave", -1, ADMIN, NONE, admin::bgsave),
    spec("save", 1, ADMIN, NONE, admin::save),
    spec("lastsave", 1, CONN, NONE, admin::lastsave),
    spec("shutdown", -1, ADMIN, NONE, admin::shutdown),
    spec("get", 2, R, ONE, strings::get),
    spec("set", -3, W, ONE, strings::set),
    spec("setnx", 3, W, ONE, strings::setnx),
    spec("getset", 3, W, ONE, strings::getset),
    spec("getdel", 2, W, ONE, strings::getdel),
    spec("mget", -2, R, ALL, strings::mget),
    spec("mset", -3, W, (1, -1, 2), strings::mset),
    spec("msetnx", -3, W, (1, -1, 2), strings::msetnx),
    spec("append", 3, W, ONE, strings::append),
    spec("strlen", 2, R, ONE, strings::strlen),
    spec("getrange", 4, R, ONE, strings::getrange),
    spec("substr", 4, R, ONE, strings::getrange),
    spec("setrange", 4, W, ONE, strings::setrange),
    spec("incr", 2, W, ONE, counters::incr_family),
    spec("decr", 2, W, ONE, counters::incr_family),
    spec("incrby", 3, W, ONE, counters::incr_family),
    spec("decrby", 3, W, ONE, counters::incr_family),
    spec("incrbyfloat", 3, W, ONE, counters::incrbyfloat),
    spec("del", -2, WSLOW, ALL, keyspace::del),
    spec("unlink", -2, WSLOW, ALL, keyspace::del),
    spec("exists", -2, R, ALL, keyspace::exists),
    spec("type", 2, R, ONE, keyspace::type_of),
    spec("scan", -2, &["readonly"], NONE, keyspace::scan),
    spec("keys", 2, &["readonly"], NONE, keyspace::keys),
    spec("dbsize", 1, R, NONE, keyspace::dbsize),
    spec("flushdb", -1, WSLOW, NONE, keyspace::flushdb),
    spec("flushall", -1, WSLOW, NONE, keyspace::flushdb),
];

static BY_NAME: LazyLock<HashMap<&'static str, &'static Spec>> =
    LazyLock::new(|| COMMANDS.iter().map(|s| (s.name, s)).collect());

/// The command named `name` (lowercase).
pub fn lookup(name: &str) -> Option<&'static Spec> {
    BY_NAME.get(name).copied()
}

/// COMMAND [COUNT | INFO name... | DOCS [name...] | LIST].
fn command(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let Some(sub) = args.get(1) else {
        return Reply::Array(COMMANDS.iter().map(describe).collect());
    };
    match String::from_utf8_lossy(sub).to_ascii_lowercase().as_str() {
        "count" if args.len() == 2 => Reply::Int(COMMANDS.len() as i64),
        "list" if args.len() == 2 => {
            Reply::Array(COMMANDS.iter().map(|s| Reply::bulk(s.name)).collect())
        }
        "info" => Reply::Array(args[2..].iter().map(|n| info_of(n)).collect()),
        // No documentation is served: clients fall back to their own (redis-cli does).
        "docs" => Reply::Map(Vec::new()),
        _ => Reply::err(format!(
            "unknown subcommand '{}'. Try COMMAND HELP.",
            String::from_utf8_lossy(sub)
        )),
    }
}

fn info_of(name: &[u8]) -> Reply {
    let name = String::from_utf8_lossy(name).to_ascii_lowercase();
    lookup(&name).map_or(Reply::Null, describe)
}

/// One command as COMMAND INFO shows it (redis-server 7's ten fields).
fn describe(s: &Spec) -> Reply {
    let flags = s.flags.iter().map(|f| Reply::Simple((*f).into())).collect();
    let (first, last, step) = s.keys;
    Reply::Array(vec![
        Reply::bulk(s.name),
        Reply::Int(s.arity),
        Reply::Array(flags),
        Reply::Int(first),
        Reply::Int(last),
        Reply::Int(step),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
    ])
}
