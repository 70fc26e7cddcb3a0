//! Every command's happy path and its errors, over a raw TCP client, compared with the exact
//! bytes redis-server 7 sends.

mod support;

use support::{bulk, TestServer};

const OK: &str = "+OK\r\n";
const NULL: &str = "$-1\r\n";
const NOT_INT: &str = "-ERR value is not an integer or out of range\r\n";
const SYNTAX: &str = "-ERR syntax error\r\n";

#[test]
fn connection_commands_ping_echo_select_quit_and_arity_errors() {
    let server = TestServer::start();
    let mut c = server.client();
    assert_eq!(c.cmd(&["PING"]), "+PONG\r\n");
    assert_eq!(c.cmd(&["ping", "hi"]), bulk("hi"));
    assert_eq!(
        c.cmd(&["PING", "a", "b"]),
        "-ERR wrong number of arguments for 'ping' command\r\n"
    );
    assert_eq!(c.cmd(&["ECHO", "x y"]), bulk("x y"));
    assert_eq!(
        c.cmd(&["GET"]),
        "-ERR wrong number of arguments for 'get' command\r\n"
    );
    assert_eq!(c.cmd(&["SELECT", "0"]), OK);
    assert_eq!(c.cmd(&["SELECT", "1"]), "-ERR DB index is out of range\r\n");
    assert_eq!(c.cmd(&["SELECT", "x"]), NOT_INT);
    assert_eq!(
        c.cmd(&["NOSUCH", "a", "b"]),
        "-ERR unknown command 'NOSUCH', with args beginning with: 'a' 'b' \r\n"
    );
    assert_eq!(c.cmd(&["QUIT"]), OK);
    assert!(c.closed(), "QUIT closes the connection");
}

#[test]
fn hello_switches_between_resp2_and_resp3() {
    let server = TestServer::start();
    let mut c = server.client();
    let hello3 = c.cmd(&["HELLO", "3"]);
    assert!(hello3.starts_with("%7\r\n"), "{hello3}");
    assert!(hello3.contains("proto\r\n:3\r\n"), "{hello3}");
    assert_eq!(c.cmd(&["GET", "missing"]), "_\r\n", "RESP3 null");
    assert!(
        c.cmd(&["INFO", "server"]).starts_with('='),
        "INFO is verbatim text in RESP3"
    );
    assert!(c.cmd(&["HELLO", "2"]).starts_with("*14\r\n"));
    assert_eq!(c.cmd(&["GET", "missing"]), NULL);
    assert_eq!(
        c.cmd(&["HELLO", "4"]),
        "-NOPROTO unsupported protocol version\r\n"
    );
    assert_eq!(
        c.cmd(&["HELLO", "x"]),
        "-ERR Protocol version is not an integer or out of range\r\n"
    );
    assert_eq!(
        c.cmd(&["HELLO", "3", "BOGUS"]),
        "-ERR Syntax error in HELLO option 'BOGUS'\r\n"
    );
}

#[test]
fn auth_gates_every_command_until_the_password_is_given() {
    let config = flatlsm_server::ServerConfig {
        requirepass: Some("pw".into()),
        ..Default::default()
    };
    let server = TestServer::with(config);
    let mut c = server.client();
    assert_eq!(c.cmd(&["GET", "a"]), "-NOAUTH Authentication required.\r\n");
    assert_eq!(c.cmd(&["PING"]), "-NOAUTH Authentication required.\r\n");
    assert!(c
        .cmd(&["HELLO", "3"])
        .starts_with("-NOAUTH HELLO must be called"));
    let wrong = "-WRONGPASS invalid username-password pair or user is disabled.\r\n";
    assert_eq!(c.cmd(&["AUTH", "nope"]), wrong);
    assert_eq!(c.cmd(&["AUTH", "other", "pw"]), wrong);
    assert_eq!(c.cmd(&["AUTH", "pw"]), OK);
    assert_eq!(c.cmd(&["PING"]), "+PONG\r\n");
    let mut d = server.client();
    assert!(d
        .cmd(&["HELLO", "3", "AUTH", "default", "pw"])
        .starts_with('%'));
    assert_eq!(d.cmd(&["PING"]), "+PONG\r\n");
}

#[test]
fn auth_without_a_configured_password_is_an_error() {
    let server = TestServer::start();
    let mut c = server.client();
    let reply = c.cmd(&["AUTH", "x"]);
    assert!(
        reply.starts_with("-ERR AUTH <password> called without any password configured"),
        "{reply}"
    );
    assert_eq!(c.cmd(&["AUTH", "default", "anything"]), OK);
}

#[test]
fn client_id_setname_getname_list_and_info() {
    let server = TestServer::start();
    let mut c = server.client();
    let id = c.cmd(&["CLIENT", "ID"]);
    assert!(id.starts_with(':'), "{id}");
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]), NULL);
    assert_eq!(c.cmd(&["CLIENT", "SETNAME", "worker-1"]), OK);
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]), bulk("worker-1"));
    assert_eq!(
        c.cmd(&["CLIENT", "SETNAME", "has space"]),
        "-ERR Client names cannot contain spaces, newlines or special characters.\r\n"
    );
    let list = c.cmd(&["CLIENT", "LIST"]);
    assert!(
        list.contains("name=worker-1") && list.contains("cmd=client"),
        "{list}"
    );
    assert!(c.cmd(&["CLIENT", "INFO"]).contains("name=worker-1"));
    assert_eq!(c.cmd(&["CLIENT", "SETINFO", "LIB-NAME", "x"]), OK);
    assert_eq!(
        c.cmd(&["CLIENT", "NOPE"]),
        "-ERR unknown subcommand 'NOPE'. Try CLIENT HELP.\r\n"
    );
}

#[test]
fn command_count_info_and_docs_answer_redis_cli() {
    let server = TestServer::start();
    let mut c = server.client();
    assert!(c.cmd(&["COMMAND", "COUNT"]).starts_with(':'));
    let info = c.cmd(&["COMMAND", "INFO", "get", "nosuch"]);
    assert!(
        info.starts_with("*2\r\n*10\r\n$3\r\nget\r\n:2\r\n"),
        "{info}"
    );
    assert!(info.ends_with("$-1\r\n"), "{info}");
    assert_eq!(c.cmd(&["COMMAND", "DOCS"]), "*0\r\n");
    assert!(c.cmd(&["COMMAND"]).starts_with('*'));
    assert!(c
        .cmd(&["CONFIG", "GET", "appendonly"])
        .contains("appendonly"));
}

#[test]
fn set_get_and_set_options_nx_xx_get_and_refused_expiry() {
    let server = TestServer::start();
    let mut c = server.client();
    assert_eq!(c.cmd(&["GET", "k"]), NULL);
    assert_eq!(c.cmd(&["SET", "k", "v1"]), OK);
    assert_eq!(c.cmd(&["GET", "k"]), bulk("v1"));
    assert_eq!(c.cmd(&["SET", "k", "v2", "NX"]), NULL);
    assert_eq!(c.cmd(&["SET", "k", "v2", "XX"]), OK);
    assert_eq!(c.cmd(&["SET", "new", "v", "XX"]), NULL);
    assert_eq!(c.cmd(&["SET", "k", "v3", "GET"]), bulk("v2"));
    assert_eq!(c.cmd(&["SET", "k2", "v", "NX", "GET"]), NULL);
    assert_eq!(c.cmd(&["GET", "k2"]), bulk("v"));
    assert_eq!(c.cmd(&["SET", "k", "v", "NX", "XX"]), SYNTAX);
    assert_eq!(c.cmd(&["SET", "k", "v", "BOGUS"]), SYNTAX);
    assert_eq!(c.cmd(&["SET", "k", "v", "EX"]), SYNTAX);
    let refused =
        "-ERR EX, PX, EXAT, PXAT and KEEPTTL are not supported: FlatLSM keys do not expire\r\n";
    for ttl in [
        &["EX", "10"][..],
        &["PX", "5"],
        &["EXAT", "1"],
        &["PXAT", "1"],
        &["KEEPTTL"],
    ] {
        let mut args = vec!["SET", "k", "v"];
        args.extend_from_slice(ttl);
        assert_eq!(c.cmd(&args), refused);
    }
    assert_eq!(
        c.cmd(&["GET", "k"]),
        bulk("v3"),
        "refused SETs wrote nothing"
    );
    assert_eq!(c.cmd(&["SET", "", "empty key"]), OK);
    assert_eq!(c.cmd(&["GET", ""]), bulk("empty key"));
}

#[test]
fn setnx_getset_getdel_mget_mset_msetnx() {
    let server = TestServer::start();
    let mut c = server.client();
    assert_eq!(c.cmd(&["SETNX", "a", "1"]), ":1\r\n");
    assert_eq!(c.cmd(&["SETNX", "a", "2"]), ":0\r\n");
    assert_eq!(c.cmd(&["GETSET", "a", "3"]), bulk("1"));
    assert_eq!(c.cmd(&["GETSET", "fresh", "x"]), NULL);
    assert_eq!(c.cmd(&["GETDEL", "a"]), bulk("3"));
    assert_eq!(c.cmd(&["GETDEL", "a"]), NULL);
    assert_eq!(c.cmd(&["MSET", "m1", "x", "m2", "y"]), OK);
    assert_eq!(
        c.cmd(&["MSET", "m1", "x", "m2"]),
        "-ERR wrong number of arguments for 'mset' command\r\n"
    );
    assert_eq!(
        c.cmd(&["MGET", "m1", "nope", "m2"]),
        format!("*3\r\n{}$-1\r\n{}", bulk("x"), bulk("y"))
    );
    assert_eq!(c.cmd(&["MSETNX", "n1", "1", "m1", "z"]), ":0\r\n");
    assert_eq!(c.cmd(&["EXISTS", "n1"]), ":0\r\n", "MSETNX set nothing");
    assert_eq!(c.cmd(&["MSETNX", "n1", "1", "n2", "2"]), ":1\r\n");
    assert_eq!(
        c.cmd(&["MGET", "n1", "n2"]),
        format!("*2\r\n{}{}", bulk("1"), bulk("2"))
    );
}

#[test]
fn counters_incr_decr_incrby_decrby_incrbyfloat_and_their_errors() {
    let server = TestServer::start();
    let mut c = server.client();
    assert_eq!(c.cmd(&["INCR", "n"]), ":1\r\n");
    assert_eq!(c.cmd(&["INCRBY", "n", "10"]), ":11\r\n");
    assert_eq!(c.cmd(&["DECR", "n"]), ":10\r\n");
    assert_eq!(c.cmd(&["DECRBY", "n", "-5"]), ":15\r\n");
    assert_eq!(c.cmd(&["INCRBY", "n", "x"]), NOT_INT);
    assert_eq!(c.cmd(&["SET", "s", "abc"]), OK);
    assert_eq!(c.cmd(&["INCR", "s"]), NOT_INT);
    assert_eq!(c.cmd(&["SET", "big", "9223372036854775807"]), OK);
    assert_eq!(
        c.cmd(&["INCR", "big"]),
        "-ERR increment or decrement would overflow\r\n"
    );
    assert_eq!(
        c.cmd(&["DECRBY", "n", "-9223372036854775808"]),
        "-ERR decrement would overflow\r\n"
    );
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "10.5"]), bulk("10.5"));
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "0.1"]), bulk("10.6"));
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "-10.6"]), bulk("0"));
    assert_eq!(
        c.cmd(&["INCRBYFLOAT", "f", "x"]),
        "-ERR value is not a valid float\r\n"
    );
    assert_eq!(
        c.cmd(&["INCRBYFLOAT", "s", "1"]),
        "-ERR value is not a valid float\r\n"
    );
    assert_eq!(
        c.cmd(&["INCRBYFLOAT", "f", "inf"]),
        "-ERR increment would produce NaN or Infinity\r\n"
    );
}

#[test]
fn append_strlen_getrange_setrange() {
    let server = TestServer::start();
    let mut c = server.client();
    assert_eq!(c.cmd(&["APPEND", "s", "Hello"]), ":5\r\n");
    assert_eq!(c.cmd(&["APPEND", "s", " World"]), ":11\r\n");
    assert_eq!(c.cmd(&["STRLEN", "s"]), ":11\r\n");
    assert_eq!(c.cmd(&["STRLEN", "none"]), ":0\r\n");
    assert_eq!(c.cmd(&["GETRANGE", "s", "0", "4"]), bulk("Hello"));
    assert_eq!(c.cmd(&["GETRANGE", "s", "-5", "-1"]), bulk("World"));
    assert_eq!(c.cmd(&["GETRANGE", "s", "5", "1"]), bulk(""));
    assert_eq!(c.cmd(&["GETRANGE", "none", "0", "-1"]), bulk(""));
    assert_eq!(c.cmd(&["GETRANGE", "s", "a", "1"]), NOT_INT);
    assert_eq!(c.cmd(&["SETRANGE", "s", "6", "Redis"]), ":11\r\n");
    assert_eq!(c.cmd(&["GET", "s"]), bulk("Hello Redis"));
    assert_eq!(c.cmd(&["SETRANGE", "pad", "3", "x"]), ":4\r\n");
    assert_eq!(c.cmd(&["GET", "pad"]), "$4\r\n\0\0\0x\r\n");
    assert_eq!(c.cmd(&["SETRANGE", "none", "5", ""]), ":0\r\n");
    assert_eq!(c.cmd(&["EXISTS", "none"]), ":0\r\n");
    assert_eq!(
        c.cmd(&["SETRANGE", "s", "-1", "x"]),
        "-ERR offset is out of range\r\n"
    );
    let too_long = "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n";
    assert_eq!(c.cmd(&["SETRANGE", "s", "536870911", "xx"]), too_long);
}

#[test]
fn del_unlink_exists_type() {
    let server = TestServer::start();
    let mut c = server.client();
    c.cmd(&["MSET", "a", "1", "b", "2", "c", "3"]);
    assert_eq!(c.cmd(&["EXISTS", "a", "a", "nope"]), ":2\r\n");
    assert_eq!(c.cmd(&["TYPE", "a"]), "+string\r\n");
    assert_eq!(c.cmd(&["TYPE", "nope"]), "+none\r\n");
    assert_eq!(c.cmd(&["DEL", "a", "a", "nope"]), ":1\r\n");
    assert_eq!(c.cmd(&["UNLINK", "b", "c"]), ":2\r\n");
    assert_eq!(c.cmd(&["EXISTS", "a", "b", "c"]), ":0\r\n");
}

/// Every key SCAN returns from cursor 0 until the cursor is 0 again.
fn scan_all(c: &mut support::Client, extra: &[&str]) -> Vec<String> {
    let (mut cursor, mut keys) = ("0".to_string(), Vec::new());
    loop {
        let mut args = vec!["SCAN", cursor.as_str()];
        args.extend_from_slice(extra);
        let reply = c.cmd(&args);
        let lines: Vec<&str> = reply.split("\r\n").collect();
        cursor = lines[2].to_string();
        keys.extend(lines[4..].iter().skip(1).step_by(2).map(|k| k.to_string()));
        if cursor == "0" {
            return keys;
        }
    }
}

#[test]
fn scan_with_match_and_count_returns_each_key_once_while_keys_are_written() {
    let server = TestServer::start();
    let mut c = server.client();
    for i in 0..120 {
        c.cmd(&["SET", &format!("user:{i:03}"), "v"]);
        c.cmd(&["SET", &format!("item:{i:03}"), "v"]);
    }
    let mut users = scan_all(&mut c, &["MATCH", "user:*", "COUNT", "7"]);
    users.sort();
    assert_eq!(users.len(), 120);
    assert!(users.iter().all(|k| k.starts_with("user:")));
    assert_eq!(scan_all(&mut c, &["MATCH", "*:00?"]).len(), 20);
    assert_eq!(scan_all(&mut c, &["TYPE", "hash"]).len(), 0);
    // Stable under writes: keys written behind and ahead of the cursor between calls.
    let first = c.cmd(&["SCAN", "0", "COUNT", "50"]);
    let cursor = first.split("\r\n").nth(2).unwrap().to_string();
    c.cmd(&["SET", "aaa-behind", "v"]);
    c.cmd(&["SET", "zzz-ahead", "v"]);
    let rest = scan_all(&mut c, &[]);
    let _ = rest;
    let mut seen: Vec<String> = first
        .split("\r\n")
        .skip(5)
        .step_by(2)
        .map(String::from)
        .collect();
    seen.retain(|k| !k.is_empty());
    let more = scan_from(&mut c, &cursor);
    seen.extend(more);
    let unique: std::collections::BTreeSet<_> = seen.iter().cloned().collect();
    assert_eq!(unique.len(), seen.len(), "no key returned twice");
    assert!(unique.contains("zzz-ahead") && !unique.contains("aaa-behind"));
    assert_eq!(unique.len(), 241);
    assert_eq!(c.cmd(&["SCAN", "12345"]), "-ERR invalid cursor\r\n");
    assert_eq!(c.cmd(&["SCAN", "x"]), "-ERR invalid cursor\r\n");
    assert_eq!(c.cmd(&["SCAN", "0", "COUNT", "0"]), SYNTAX);
    assert_eq!(c.cmd(&["SCAN", "0", "BOGUS", "1"]), SYNTAX);
}

/// The keys of a scan resumed at `cursor`.
fn scan_from(c: &mut support::Client, cursor: &str) -> Vec<String> {
    let (mut cursor, mut keys) = (cursor.to_string(), Vec::new());
    while cursor != "0" {
        let reply = c.cmd(&["SCAN", &cursor, "COUNT", "50"]);
        let lines: Vec<&str> = reply.split("\r\n").collect();
        cursor = lines[2].to_string();
        keys.extend(
            lines[4..]
                .iter()
                .skip(1)
                .step_by(2)
                .filter(|k| !k.is_empty())
                .map(|k| k.to_string()),
        );
    }
    keys
}

#[test]
fn keys_dbsize_flushdb_and_the_keys_limit() {
    let config = flatlsm_server::ServerConfig {
        keys_limit: 5,
        ..Default::default()
    };
    let server = TestServer::with(config);
    let mut c = server.client();
    for i in 0..8 {
        c.cmd(&["SET", &format!("k{i}"), "v"]);
    }
    assert_eq!(
        c.cmd(&["KEYS", "k[1-3]"]),
        format!("*3\r\n{}{}{}", bulk("k1"), bulk("k2"), bulk("k3"))
    );
    assert_eq!(
        c.cmd(&["KEYS", "*"]),
        "-ERR KEYS would return more than 5 keys (--keys-limit); use SCAN\r\n"
    );
    assert_eq!(c.cmd(&["DBSIZE"]), ":8\r\n");
    assert!(c
        .cmd(&["INFO", "keyspace"])
        .contains("db0:keys=8,expires=0,avg_ttl=0"));
    assert_eq!(c.cmd(&["FLUSHDB", "BOGUS"]), SYNTAX);
    assert_eq!(c.cmd(&["FLUSHDB"]), OK);
    assert_eq!(c.cmd(&["DBSIZE"]), ":0\r\n");
    assert_eq!(c.cmd(&["KEYS", "*"]), "*0\r\n");
    assert_eq!(c.cmd(&["SET", "after", "flush"]), OK);
    assert_eq!(c.cmd(&["FLUSHALL", "ASYNC"]), OK);
    assert_eq!(c.cmd(&["GET", "after"]), NULL);
}

#[test]
fn info_sections_report_server_clients_stats_persistence_and_engine_properties() {
    let server = TestServer::start();
    let mut c = server.client();
    c.cmd(&["SET", "a", "1"]);
    let info = c.cmd(&["INFO"]);
    for field in [
        "# Server",
        "redis_version:",
        "# Clients",
        "connected_clients:1",
        "# Stats",
        "total_commands_processed:",
        "# Persistence",
        "rdb_last_save_time:",
        "flatlsm_num_files:",
        "flatlsm_latency_put_count:",
        "# Keyspace",
        "db0:keys=1",
    ] {
        assert!(info.contains(field), "{field} missing from\n{info}");
    }
    let clients_only = c.cmd(&["INFO", "clients"]);
    assert!(clients_only.contains("# Clients") && !clients_only.contains("# Server"));
}

#[test]
fn bgsave_writes_an_openable_checkpoint_and_lastsave_moves() {
    let server = TestServer::start();
    let mut c = server.client();
    c.cmd(&["SET", "saved", "yes"]);
    let before: u64 = c.cmd(&["LASTSAVE"])[1..].trim().parse().unwrap();
    assert_eq!(c.cmd(&["BGSAVE"]), "+Background saving started\r\n");
    let deadline = std::time::Instant::now() + support::STEP;
    while c
        .cmd(&["INFO", "persistence"])
        .contains("rdb_bgsave_in_progress:1")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "BGSAVE did not finish"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(c.cmd(&["SAVE"]), OK);
    let after: u64 = c.cmd(&["LASTSAVE"])[1..].trim().parse().unwrap();
    assert!(after >= before);
    let saves: Vec<_> = std::fs::read_dir(server.dir.path().join("saves"))
        .unwrap()
        .collect();
    assert_eq!(saves.len(), 2);
    let copy = saves[0].as_ref().unwrap().path();
    let opts = flatlsm::load_options(&copy).unwrap().unwrap_or_default();
    let db = flatlsm::Db::open_read_only(&copy, opts).unwrap();
    assert_eq!(db.get("saved").unwrap().as_deref(), Some(&b"yes"[..]));
}

#[test]
fn shutdown_closes_the_connection_without_a_reply_and_the_database_cleanly() {
    let mut server = TestServer::start();
    let mut c = server.client();
    c.cmd(&["SET", "durable", "1"]);
    let mut idle = server.client();
    assert_eq!(idle.cmd(&["PING"]), "+PONG\r\n");
    assert_eq!(c.cmd(&["SHUTDOWN", "BOGUS"]), SYNTAX);
    c.send(&["SHUTDOWN", "NOSAVE"]);
    assert_eq!(c.try_reply(), None, "no reply, the connection closes");
    server.join().unwrap();
    assert!(idle.closed(), "idle clients are disconnected too");
    let db =
        flatlsm::Db::open(server.db_path(), support::small_options(server.dir.path())).unwrap();
    assert_eq!(db.get("durable").unwrap().as_deref(), Some(&b"1"[..]));
}
