//! `flatlsm repair` as a new user runs it, with a stale manifest: CURRENT and the manifest
//! restored from a copy taken before twenty more writes and a flush.
//!
//! Regression (issue 29, item 1): repair exited 0, reporting the eleven SSTs written after the
//! copy as "left out; the next open removes them": `get` then found nothing, `scan` showed 0
//! entries, and the next writable open deleted the SSTs.

mod support;

use std::path::Path;
use support::{flatlsm, ok, s};

/// Copies file `from` to `to`.
fn copy(from: &Path, to: &Path) {
    std::fs::copy(from, to).unwrap();
}

#[test]
fn repair_with_a_stale_manifest_keeps_every_write_and_exits_1() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    let (saved_manifest, saved_current) = (t.path().join("manifest"), t.path().join("current"));
    ok(&["put", "--db", s(&db), "--create-if-missing", "a", "1"]);
    copy(&db.join("MANIFEST-000001"), &saved_manifest);
    copy(&db.join("CURRENT"), &saved_current);
    for i in 1..=20 {
        ok(&["put", "--db", s(&db), &format!("k{i}"), &format!("v{i}")]);
    }
    ok(&["flush", "--db", s(&db)]);
    for entry in std::fs::read_dir(&db).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("MANIFEST-")
        {
            std::fs::remove_file(path).unwrap();
        }
    }
    copy(&saved_manifest, &db.join("MANIFEST-000001"));
    copy(&saved_current, &db.join("CURRENT"));
    assert!(!flatlsm(&["get", "--db", s(&db), "k5"]).ok, "open refuses");

    let o = flatlsm(&["repair", "--db", s(&db)]);
    assert!(!o.ok, "not every file is accounted for: {}", o.stdout);
    assert!(o.stdout.contains("stale"), "{}", o.stdout);
    assert!(o.stderr.contains("missing"), "{}", o.stderr);
    assert!(!o.stdout.contains("left out"), "{}", o.stdout);

    for i in 1..=20 {
        let got = ok(&["get", "--db", s(&db), &format!("k{i}")]);
        assert_eq!(got.trim(), format!("v{i}"), "{}", o.stdout);
    }
    assert_eq!(ok(&["get", "--db", s(&db), "a"]).trim(), "1");
    ok(&["put", "--db", s(&db), "k21", "v21"]); // a writable open: its purge keeps every SST
    let scanned = flatlsm(&["scan", "--db", s(&db)]);
    assert_eq!(scanned.stdout.lines().count(), 22, "{}", scanned.stdout);
}
