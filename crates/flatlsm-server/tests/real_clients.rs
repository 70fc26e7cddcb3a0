//! Real clients against the server: Debian's `redis-cli` and `redis-benchmark`
//! (`redis-tools`), and the Python `redis` package in a venv. Each test prints SKIPPED with
//! the reason when its client is not available.

mod support;

use std::path::PathBuf;
use std::process::Command;
use support::TestServer;

fn redis_cli(server: &TestServer, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &server.addr.port().to_string()])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "redis-cli {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn redis_cli_sets_gets_scans_and_reads_info() {
    if !support::installed("redis-cli") {
        println!("SKIPPED: redis-cli is not installed (apt-get install redis-tools)");
        return;
    }
    let server = TestServer::start();
    assert_eq!(redis_cli(&server, &["PING"]), "PONG\n");
    assert_eq!(
        redis_cli(&server, &["SET", "greeting", "hello world"]),
        "OK\n"
    );
    assert_eq!(redis_cli(&server, &["GET", "greeting"]), "hello world\n");
    assert_eq!(redis_cli(&server, &["INCRBY", "n", "5"]), "5\n");
    for i in 0..30 {
        redis_cli(&server, &["SET", &format!("scan:{i}"), "x"]);
    }
    let scanned = redis_cli(&server, &["--scan", "--pattern", "scan:*"]);
    assert_eq!(scanned.lines().count(), 30, "{scanned}");
    assert!(redis_cli(&server, &["INFO", "persistence"]).contains("flatlsm_num_files"));
    assert_eq!(
        redis_cli(&server, &["-3", "GET", "greeting"]),
        "hello world\n"
    );
    let piped = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "printf 'SET p1 a\\nGET p1\\n' | redis-cli -p {}",
            server.addr.port()
        ))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&piped.stdout), "OK\na\n");
}

#[test]
fn redis_benchmark_runs_a_short_pipelined_load() {
    if !support::installed("redis-benchmark") {
        println!("SKIPPED: redis-benchmark is not installed (apt-get install redis-tools)");
        return;
    }
    let server = TestServer::start();
    let out = Command::new("redis-benchmark")
        .args(["-h", "127.0.0.1", "-p", &server.addr.port().to_string()])
        .args([
            "-t",
            "set,get,incr,mset",
            "-n",
            "2000",
            "-r",
            "1000",
            "-c",
            "8",
            "-P",
            "16",
            "-q",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for test in ["SET:", "GET:", "INCR:", "MSET (10 keys):"] {
        assert!(text.contains(test), "{test} missing from\n{text}");
    }
    let mut c = server.client();
    assert!(c.cmd(&["DBSIZE"]) != ":0\r\n");
}

/// A venv with the `redis` package (made once per target directory), or why there is none.
fn python_with_redis() -> Result<PathBuf, String> {
    let venv = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("redis-py-venv");
    let python = venv.join("bin/python");
    let has_redis = |p: &PathBuf| {
        Command::new(p)
            .args(["-c", "import redis"])
            .status()
            .is_ok_and(|s| s.success())
    };
    if python.exists() && has_redis(&python) {
        return Ok(python);
    }
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output();
    if !made.as_ref().is_ok_and(|o| o.status.success()) {
        return Err("python3 with venv is not available (apt-get install python3-venv)".into());
    }
    let pip = Command::new(venv.join("bin/pip"))
        .args(["install", "-q", "redis"])
        .output();
    match pip {
        Ok(o) if o.status.success() && has_redis(&python) => Ok(python),
        _ => Err("pip could not install the redis package (offline?)".into()),
    }
}

const PY_SCRIPT: &str = r#"
import sys, redis
r = redis.Redis(host="127.0.0.1", port=int(sys.argv[1]), protocol=int(sys.argv[2]))
assert r.ping()
assert r.set("a", "1") and r.get("a") == b"1"
assert r.set("a", "2", nx=True) is None
assert r.incr("n", 5) == 5 and r.decr("n") == 4
assert abs(r.incrbyfloat("f", 1.5) - 1.5) < 1e-9
r.mset({"k1": "v1", "k2": "v2"})
assert r.mget(["k1", "k2", "nope"]) == [b"v1", b"v2", None]
assert r.append("s", "ab") == 2 and r.strlen("s") == 2 and r.getrange("s", 0, 0) == b"a"
assert r.exists("k1", "k2", "nope") == 2 and r.delete("k1") == 1
keys = sorted(r.scan_iter(match="k*", count=1))
assert keys == [b"k2"], keys
assert r.dbsize() >= 5
assert "redis_version" in r.info()
p = r.pipeline(transaction=False)
for i in range(100):
    p.set(f"p{i}", i)
assert all(p.execute())
assert r.get("p99") == b"99"
r.client_setname("py")
assert r.client_getname() in ("py", b"py")
r.flushdb()
assert r.dbsize() == 0
print("ok")
"#;

#[test]
fn python_redis_client_runs_its_common_calls_in_resp2_and_resp3() {
    let python = match python_with_redis() {
        Ok(p) => p,
        Err(reason) => {
            println!("SKIPPED: {reason}");
            return;
        }
    };
    let server = TestServer::start();
    for protocol in ["2", "3"] {
        let out = Command::new(&python)
            .args(["-c", PY_SCRIPT, &server.addr.port().to_string(), protocol])
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(stdout.trim(), "ok", "RESP{protocol}: {stderr}");
    }
}
