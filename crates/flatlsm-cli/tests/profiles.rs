//! The tool on databases of every profile: `put --profile` creates one, later commands open it
//! as what it is, `stats` names its levels, `check` verifies its write buffers (write-ahead logs,
//! PM skiplists) and reports damage with file and offset, and a wrong `--profile` is refused.

use std::path::Path;
use std::process::Command;

fn run(args: &[&str]) -> (bool, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_flatlsm"))
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), text)
}

fn ok(args: &[&str]) -> String {
    let (ok, text) = run(args);
    assert!(ok, "flatlsm {args:?} failed:\n{text}");
    text
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn files_ending(dir: &Path, suffix: &str) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    v.sort();
    v
}

#[test]
fn leveled_database_through_the_tool() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    ok(&[
        "put",
        "--db",
        s(&db),
        "--create-if-missing",
        "--profile",
        "leveled",
        "k1",
        "v1",
    ]);
    ok(&["put", "--db", s(&db), "k2", "v2"]);
    assert_eq!(ok(&["get", "--db", s(&db), "k1"]).trim(), "v1");
    let stats = ok(&["stats", "--db", s(&db)]);
    assert!(stats.contains("L6:") && stats.contains("DRAM"), "{stats}");
    assert!(ok(&["check", "--db", s(&db)]).contains("OK"));
    let wal = files_ending(&db, ".log").remove(0);
    assert!(ok(&["dump", s(&wal)]).contains("'k1' @ 1"));
    let (good, text) = run(&["put", "--db", s(&db), "--profile", "flatlsm", "k3", "v3"]);
    assert!(
        !good && text.contains("created with profile 'leveled'"),
        "{text}"
    );
    std::fs::remove_file(&wal).unwrap();
    let (good, text) = run(&["check", "--db", s(&db)]);
    assert!(
        !good && text.contains("write-ahead log but it is missing"),
        "{text}"
    );
}

#[test]
fn novelsm_database_through_the_tool() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let create = [
        "put",
        "--db",
        s(&db),
        "--create-if-missing",
        "--profile",
        "novelsm",
    ];
    ok(&[&create[..], &["--pm-mode", "msync", "k1", "v1"]].concat());
    assert_eq!(
        ok(&["get", "--db", s(&db), "--pm-mode", "msync", "k1"]).trim(),
        "v1"
    );
    let check = ok(&["check", "--db", s(&db)]);
    assert!(check.contains("OK"), "{check}");
    let skiplist = files_ending(&db.join("pm"), ".pmskl").remove(0);
    let mut bytes = std::fs::read(&skiplist).unwrap();
    let node = 64 + 112; // the first node: after the header and the head node (height 12)
    bytes[node + 20] ^= 0x40; // its value length, covered by its crc
    std::fs::write(&skiplist, bytes).unwrap();
    let (good, text) = run(&["check", "--db", s(&db)]);
    assert!(
        !good && text.contains(".pmskl") && text.contains("checksum"),
        "{text}"
    );
}
