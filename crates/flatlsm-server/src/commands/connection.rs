//! Connection commands: PING, ECHO, HELLO, AUTH, SELECT, QUIT, CLIENT and CONFIG GET.

use super::{int_arg, is, parse_i64, syntax_error, wrong_arity, Ctx};
use crate::glob;
use crate::reply::{Protocol, Reply};
use bytes::Bytes;

/// The redis-server version whose commands and replies this server follows (HELLO, INFO).
pub const COMPATIBLE_REDIS_VERSION: &str = "7.0.0";

/// PING [message].
pub fn ping(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    match args {
        [_] => Reply::Simple("PONG".into()),
        [_, message] => Reply::Bulk(message.clone()),
        _ => wrong_arity("ping"),
    }
}

/// ECHO message.
pub fn echo(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    Reply::Bulk(args[1].clone())
}

/// QUIT: OK, then the connection closes.
pub fn quit(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> Reply {
    ctx.session.close = true;
    Reply::ok()
}

/// SELECT index: only database 0 exists.
pub fn select(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    match int_arg(&args[1]) {
        Ok(0) => Reply::ok(),
        Ok(_) => Reply::err("DB index is out of range"),
        Err(reply) => reply,
    }
}

/// AUTH [username] password. The only user is `default`.
pub fn auth(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let (user, password) = match args {
        [_, password] => (None, password),
        [_, user, password] => (Some(user), password),
        _ => return syntax_error(),
    };
    if user.is_none() && ctx.shared.password.is_none() {
        return Reply::err(
            "AUTH <password> called without any password configured for the default user. \
             Are you sure your configuration is correct?",
        );
    }
    authenticate(ctx, user.map(|u| &u[..]), password)
}

/// Checks a user and password; on success the session is authenticated.
fn authenticate(ctx: &mut Ctx<'_>, user: Option<&[u8]>, password: &[u8]) -> Reply {
    let user_ok = user.is_none_or(|u| u == b"default");
    let password_ok = ctx
        .shared
        .password
        .as_ref()
        .is_none_or(|p| p.check(password));
    if user_ok && password_ok {
        ctx.session.authenticated = true;
        Reply::ok()
    } else {
        Reply::Error("WRONGPASS invalid username-password pair or user is disabled.".into())
    }
}

/// HELLO [protover [AUTH username password] [SETNAME clientname]].
pub fn hello(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    hello_checked(ctx, args).unwrap_or_else(|refused| refused)
}

/// HELLO's reply, or the error that refused it (nothing changed then but a successful AUTH).
fn hello_checked(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Reply, Reply> {
    let protocol = hello_protocol(ctx.session.protocol, args.get(1))?;
    let options = hello_options(args.get(2..).unwrap_or_default())?;
    hello_authenticate(ctx, options.auth)?;
    if let Some(name) = options.name {
        set_client_name(ctx, name)?;
    }
    ctx.session.protocol = protocol;
    Ok(hello_reply(ctx, protocol))
}

/// The protocol HELLO asks for (`current` when it names none).
fn hello_protocol(current: Protocol, version: Option<&Bytes>) -> Result<Protocol, Reply> {
    match version.map(|v| parse_i64(v)) {
        None => Ok(current),
        Some(None) => Err(Reply::err(
            "Protocol version is not an integer or out of range",
        )),
        Some(Some(2)) => Ok(Protocol::Resp2),
        Some(Some(3)) => Ok(Protocol::Resp3),
        Some(Some(_)) => Err(Reply::Error("NOPROTO unsupported protocol version".into())),
    }
}

const HELLO_NOAUTH: &str = "NOAUTH HELLO must be called with the client already authenticated, \
    otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the \
    client and select the RESP protocol version at the same time";

/// Applies HELLO's AUTH option, then requires an authenticated session.
fn hello_authenticate(ctx: &mut Ctx<'_>, auth: Option<(&[u8], &[u8])>) -> Result<(), Reply> {
    if let Some((user, password)) = auth {
        let reply = authenticate(ctx, Some(user), password);
        if reply.is_error() {
            return Err(reply);
        }
    }
    match ctx.session.authenticated {
        true => Ok(()),
        false => Err(Reply::Error(HELLO_NOAUTH.into())),
    }
}

struct HelloOptions<'a> {
    auth: Option<(&'a [u8], &'a [u8])>,
    name: Option<&'a [u8]>,
}

fn hello_options(mut rest: &[Bytes]) -> Result<HelloOptions<'_>, Reply> {
    let mut options = HelloOptions {
        auth: None,
        name: None,
    };
    loop {
        match rest {
            [] => return Ok(options),
            [word, user, password, tail @ ..] if is(word, "auth") => {
                options.auth = Some((user, password));
                rest = tail;
            }
            [word, name, tail @ ..] if is(word, "setname") => {
                options.name = Some(name);
                rest = tail;
            }
            [word, ..] => {
                let word = String::from_utf8_lossy(word);
                return Err(Reply::err(format!("Syntax error in HELLO option '{word}'")));
            }
        }
    }
}

fn hello_reply(ctx: &Ctx<'_>, protocol: Protocol) -> Reply {
    let proto = if protocol == Protocol::Resp3 { 3 } else { 2 };
    let field = |k: &str, v: Reply| (Reply::bulk(k.to_string()), v);
    Reply::Map(vec![
        field("server", Reply::bulk("redis")),
        field("version", Reply::bulk(COMPATIBLE_REDIS_VERSION)),
        field("proto", Reply::Int(proto)),
        field("id", Reply::Int(ctx.session.client.id as i64)),
        field("mode", Reply::bulk("standalone")),
        field("role", Reply::bulk("master")),
        field("modules", Reply::Array(Vec::new())),
    ])
}

/// CLIENT ID | SETNAME name | GETNAME | LIST | INFO | SETINFO attr value.
pub fn client(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
    let client = ctx.session.client.clone();
    match (sub.as_str(), args.len()) {
        ("id", 2) => Reply::Int(client.id as i64),
        ("getname", 2) => client.name().map_or(Reply::Null, Reply::bulk),
        ("setname", 3) => set_client_name(ctx, &args[2]).map_or_else(|e| e, |()| Reply::ok()),
        ("list", _) => Reply::Verbatim(ctx.shared.clients.list()),
        ("info", 2) => Reply::Verbatim(format!("{}\n", client.line())),
        // Client libraries announce themselves (redis-py does on connect); nothing is kept.
        ("setinfo", 4) => Reply::ok(),
        ("id" | "getname" | "setname" | "info" | "setinfo", _) => {
            wrong_arity(&format!("client|{sub}"))
        }
        _ => Reply::err(format!(
            "unknown subcommand '{}'. Try CLIENT HELP.",
            String::from_utf8_lossy(&args[1])
        )),
    }
}

/// Names the client; an empty name clears it. redis-server's character rule applies.
fn set_client_name(ctx: &mut Ctx<'_>, name: &[u8]) -> Result<(), Reply> {
    if name.iter().any(|&c| !(b'!'..=b'~').contains(&c)) {
        return Err(Reply::err(
            "Client names cannot contain spaces, newlines or special characters.",
        ));
    }
    let name = (!name.is_empty()).then(|| String::from_utf8_lossy(name).into_owned());
    ctx.session.client.set_name(name);
    Ok(())
}

/// CONFIG GET pattern...: the few parameters clients and redis-benchmark ask about. Settings
/// change only by restarting with other flags, so CONFIG SET is refused.
pub fn config(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    if !is(&args[1], "get") {
        return Reply::err(format!(
            "CONFIG {} is not supported: restart flatlsm serve with other flags",
            String::from_utf8_lossy(&args[1]).to_ascii_uppercase()
        ));
    }
    if args.len() < 3 {
        return wrong_arity("config|get");
    }
    let params = parameters(ctx);
    let wanted = |name: &str| {
        args[2..]
            .iter()
            .any(|p| glob::matches(&p.to_ascii_lowercase(), name.as_bytes()))
    };
    let pairs = params
        .into_iter()
        .filter(|(name, _)| wanted(name))
        .map(|(name, value)| (Reply::bulk(name), Reply::bulk(value)))
        .collect();
    Reply::Map(pairs)
}

fn parameters(ctx: &Ctx<'_>) -> Vec<(&'static str, String)> {
    let c = &ctx.shared.config;
    let timeout = c.idle_timeout.map_or(0, |t| t.as_secs());
    vec![
        ("appendonly", "no".into()),
        ("save", String::new()),
        ("databases", "1".into()),
        ("bind", c.bind.to_string()),
        ("port", c.port.to_string()),
        ("maxclients", c.max_clients.to_string()),
        ("timeout", timeout.to_string()),
        ("proto-max-bulk-len", c.proto_max_bulk_len.to_string()),
        (
            "client-query-buffer-limit",
            c.query_buffer_limit.to_string(),
        ),
    ]
}
