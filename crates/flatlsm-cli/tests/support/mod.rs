//! What the CLI tests share: running the `flatlsm` binary and checking its outcome.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Out {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

pub fn flatlsm(args: &[&str]) -> Out {
    let o = Command::new(env!("CARGO_BIN_EXE_flatlsm"))
        .args(args)
        .output()
        .unwrap();
    Out {
        ok: o.status.success(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

pub fn ok(args: &[&str]) -> String {
    let o = flatlsm(args);
    assert!(o.ok, "flatlsm {args:?} failed:\n{}\n{}", o.stdout, o.stderr);
    o.stdout
}

/// A refusal: exit code 1 and one line on stderr containing `needle`.
pub fn refused(args: &[&str], needle: &str) {
    let o = flatlsm(args);
    assert!(!o.ok, "flatlsm {args:?} should fail:\n{}", o.stdout);
    assert_eq!(
        o.stderr.trim_end().lines().count(),
        1,
        "one line: {}",
        o.stderr
    );
    assert!(
        o.stderr.starts_with("flatlsm: ") && o.stderr.contains(needle),
        "{}",
        o.stderr
    );
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A database with keys a0..a9 (small values) and b0..b4 (600-byte values, in a value log).
pub fn small_db(dir: &Path) -> PathBuf {
    let db = dir.join("db");
    ok(&["put", "--db", s(&db), "--create-if-missing", "a0", "v0"]);
    let d = flatlsm::Db::open(&db, flatlsm::Options::default()).unwrap();
    let w = flatlsm::WriteOptions::default();
    for i in 1..10 {
        d.put_opt(format!("a{i}").as_bytes(), format!("v{i}").as_bytes(), &w)
            .unwrap();
    }
    for i in 0..5 {
        d.put_opt(format!("b{i}").as_bytes(), [b'x'; 600], &w)
            .unwrap();
    }
    d.close().unwrap();
    db
}

/// The first file of `dir` (by name) whose name `pred` accepts.
pub fn first_named(dir: &Path, pred: impl Fn(&str) -> bool) -> PathBuf {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&pred))
        .collect();
    v.sort();
    v.remove(0)
}
