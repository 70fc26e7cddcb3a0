//! Many clients at once and pipelining: no lost updates under concurrent read-modify-writes,
//! replies in request order, MSET/MSETNX atomic.

mod support;

use support::{bulk, encode, TestServer};

#[test]
fn concurrent_incr_from_eight_clients_loses_no_update() {
    let server = TestServer::start();
    let (clients, each) = (8, 300);
    let threads: Vec<_> = (0..clients)
        .map(|_| {
            let mut c = server.client();
            std::thread::spawn(move || {
                for _ in 0..each {
                    assert!(c.cmd(&["INCR", "counter"]).starts_with(':'));
                    assert!(c.cmd(&["APPEND", "log", "x"]).starts_with(':'));
                    assert!(c.cmd(&["INCRBYFLOAT", "float", "0.5"]).starts_with('$'));
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    let mut c = server.client();
    let total = clients * each;
    assert_eq!(c.cmd(&["GET", "counter"]), bulk(&total.to_string()));
    assert_eq!(c.cmd(&["STRLEN", "log"]), format!(":{total}\r\n"));
    assert_eq!(c.cmd(&["GET", "float"]), bulk(&(total / 2).to_string()));
}

#[test]
fn concurrent_msetnx_on_overlapping_keys_sets_each_key_once() {
    let server = TestServer::start();
    let threads: Vec<_> = (0..6)
        .map(|t| {
            let mut c = server.client();
            std::thread::spawn(move || {
                let mut won = 0;
                for i in 0..100 {
                    let (a, b) = (format!("a{i}"), format!("b{i}"));
                    let id = t.to_string();
                    won += (c.cmd(&["MSETNX", &a, &id, &b, &id]) == ":1\r\n") as usize;
                }
                won
            })
        })
        .collect();
    let won: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(won, 100, "exactly one MSETNX wins each pair");
    let mut c = server.client();
    for i in 0..100 {
        let (a, b) = (
            c.cmd(&["GET", &format!("a{i}")]),
            c.cmd(&["GET", &format!("b{i}")]),
        );
        assert_eq!(a, b, "both keys of pair {i} come from the same MSETNX");
    }
}

#[test]
fn a_pipeline_of_5000_commands_gets_every_reply_in_order() {
    let config = flatlsm_server::ServerConfig {
        max_pipeline: 64,
        ..Default::default()
    };
    let server = TestServer::with(config);
    let mut c = server.client();
    let mut pipeline = Vec::new();
    for i in 0..2500 {
        let key = format!("p{i}");
        pipeline.extend(encode(&[b"SET", key.as_bytes(), i.to_string().as_bytes()]));
        pipeline.extend(encode(&[b"GET", key.as_bytes()]));
    }
    // Written from another thread: the server pushes back once its socket buffers are full.
    let mut writer = c.stream.try_clone().unwrap();
    let sender =
        std::thread::spawn(move || std::io::Write::write_all(&mut writer, &pipeline).unwrap());
    for i in 0..2500 {
        assert_eq!(c.reply(), "+OK\r\n");
        assert_eq!(c.reply(), bulk(&i.to_string()));
    }
    sender.join().unwrap();
    assert_eq!(c.cmd(&["DBSIZE"]), ":2500\r\n");
}

#[test]
fn many_clients_connect_and_work_at_once() {
    let server = TestServer::start();
    let threads: Vec<_> = (0..64)
        .map(|t| {
            let mut c = server.client();
            std::thread::spawn(move || {
                for i in 0..20 {
                    let key = format!("c{t}:{i}");
                    assert_eq!(c.cmd(&["SET", &key, &key]), "+OK\r\n");
                    assert_eq!(c.cmd(&["GET", &key]), bulk(&key));
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    assert_eq!(server.client().cmd(&["DBSIZE"]), ":1280\r\n");
}

/// Consecutive plain SETs of one pipeline are one engine write; the replies and the values are
/// those of one SET after another (a later SET of a key wins, a SET with options or another
/// command in between breaks the run and keeps its own reply).
#[test]
fn a_pipeline_of_plain_sets_reads_as_one_set_after_another() {
    let server = TestServer::start();
    let mut c = server.client();
    let requests: [&[&[u8]]; 8] = [
        &[b"SET", b"a", b"1"],
        &[b"SET", b"a", b"2"],
        &[b"SET", b"b", b"x"],
        &[b"GET", b"a"],
        &[b"SET", b"b", b"y"],
        &[b"SET", b"c", b"z", b"EX", b"10"],
        &[b"SET", b"c", b"w"],
        &[b"MGET", b"a", b"b", b"c"],
    ];
    let replies = c.pipeline(&requests);
    assert_eq!(replies[..4], ["+OK\r\n", "+OK\r\n", "+OK\r\n", &bulk("2")]);
    assert_eq!(replies[4], "+OK\r\n");
    assert!(replies[5].starts_with("-ERR"), "{}", replies[5]);
    assert_eq!(replies[6], "+OK\r\n");
    assert_eq!(
        replies[7],
        format!("*3\r\n{}{}{}", bulk("2"), bulk("y"), bulk("w"))
    );
}

/// Pipelined GETs (one batched engine read per run) answer as one GET after another: each
/// sees the writes pipelined before it, a missing key is nil, a GET with a wrong arity is
/// refused alone, and a counter run reads its keys' values as stored before it.
#[test]
fn a_pipeline_of_gets_reads_as_one_get_after_another() {
    let server = TestServer::start();
    let mut c = server.client();
    let requests: [&[&[u8]]; 10] = [
        &[b"SET", b"a", b"1"],
        &[b"GET", b"a"],
        &[b"get", b"missing"],
        &[b"GET", b"a", b"extra"],
        &[b"GET", b"a"],
        &[b"SET", b"a", b"5"],
        &[b"GET", b"a"],
        &[b"INCR", b"a"],
        &[b"INCRBY", b"a", b"10"],
        &[b"GET", b"a"],
    ];
    let replies = c.pipeline(&requests);
    assert_eq!(
        replies[..3],
        ["+OK\r\n".to_string(), bulk("1"), "$-1\r\n".into()]
    );
    assert!(
        replies[3].starts_with("-ERR wrong number"),
        "{}",
        replies[3]
    );
    assert_eq!(replies[4..7], [bulk("1"), "+OK\r\n".into(), bulk("5")]);
    assert_eq!(
        replies[7..],
        [":6\r\n".to_string(), ":16\r\n".into(), bulk("16")]
    );
}

/// SETs and MSETs pipelined together: the values and replies are those of one request after
/// another, and an MSET with a missing value gets its own error.
#[test]
fn a_pipeline_of_sets_and_msets_reads_as_one_request_after_another() {
    let server = TestServer::start();
    let mut c = server.client();
    let requests: [&[&[u8]]; 7] = [
        &[b"SET", b"a", b"1"],
        &[b"MSET", b"a", b"2", b"b", b"3"],
        &[b"mset", b"c", b"4"],
        &[b"SET", b"b", b"5"],
        &[b"MSET", b"d"],
        &[b"MSET", b"d", b"6", b"e"],
        &[b"MGET", b"a", b"b", b"c", b"d"],
    ];
    let replies = c.pipeline(&requests);
    assert_eq!(replies[..4], ["+OK\r\n"; 4]);
    assert!(
        replies[4].starts_with("-ERR wrong number"),
        "{}",
        replies[4]
    );
    assert!(
        replies[5].starts_with("-ERR wrong number"),
        "{}",
        replies[5]
    );
    let values = [bulk("2"), bulk("5"), bulk("4"), "$-1\r\n".to_string()];
    assert_eq!(replies[6], format!("*4\r\n{}", values.concat()));
}

/// Consecutive counters of one pipeline are one engine write; each reply is the value one
/// counter after another would give (a key counted twice in the run sees the first count), and
/// one that fails (not an integer, overflow, bad increment) fails alone.
#[test]
fn a_pipeline_of_counters_reads_as_one_counter_after_another() {
    let server = TestServer::start();
    let mut c = server.client();
    assert_eq!(c.cmd(&["SET", "text", "abc"]), "+OK\r\n");
    assert_eq!(
        c.cmd(&["SET", "big", &(i64::MAX - 1).to_string()]),
        "+OK\r\n"
    );
    let requests: [&[&[u8]]; 10] = [
        &[b"INCR", b"n"],
        &[b"INCRBY", b"n", b"10"],
        &[b"DECR", b"n"],
        &[b"INCR", b"text"],
        &[b"INCR", b"big"],
        &[b"INCR", b"big"],
        &[b"DECRBY", b"m", b"5"],
        &[b"INCRBY", b"m", b"x"],
        &[b"incr", b"n"],
        &[b"MGET", b"n", b"m", b"big", b"text"],
    ];
    let replies = c.pipeline(&requests);
    assert_eq!(replies[..3], [":1\r\n", ":11\r\n", ":10\r\n"]);
    assert!(
        replies[3].starts_with("-ERR value is not an integer"),
        "{}",
        replies[3]
    );
    assert_eq!(replies[4], format!(":{}\r\n", i64::MAX));
    assert!(replies[5].contains("overflow"), "{}", replies[5]);
    assert_eq!(replies[6], ":-5\r\n");
    assert!(
        replies[7].starts_with("-ERR value is not an integer"),
        "{}",
        replies[7]
    );
    assert_eq!(replies[8], ":11\r\n");
    let expected = [
        bulk("11"),
        bulk("-5"),
        bulk(&i64::MAX.to_string()),
        bulk("abc"),
    ];
    assert_eq!(replies[9], format!("*4\r\n{}", expected.concat()));
}

/// A client that has not authenticated gets NOAUTH for each SET of a pipeline, and nothing
/// is written.
#[test]
fn a_pipeline_of_sets_before_auth_is_refused_set_by_set() {
    let server = TestServer::with(flatlsm_server::ServerConfig {
        requirepass: Some("pw".into()),
        ..Default::default()
    });
    let mut c = server.client();
    let set = |k: &[u8]| encode(&[b"SET", k, b"v"]);
    c.send_bytes(&[set(b"a"), set(b"b")].concat());
    for _ in 0..2 {
        assert!(c.reply().starts_with("-NOAUTH"));
    }
    assert_eq!(c.cmd(&["AUTH", "pw"]), "+OK\r\n");
    assert_eq!(c.cmd(&["EXISTS", "a", "b"]), ":0\r\n");
}
