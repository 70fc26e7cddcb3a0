//! What the CLI tests share: running the `flatlsm` binary and checking its outcome.
#![allow(dead_code)]

use std::path::Path;
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
