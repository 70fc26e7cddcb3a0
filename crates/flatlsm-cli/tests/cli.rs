//! End-to-end runs of the `flatlsm` binary.

use std::process::Command;

fn flatlsm() -> Command {
    Command::new(env!("CARGO_BIN_EXE_flatlsm"))
}

#[test]
fn bench_prints_db_bench_result_lines() {
    let dir = tempfile::tempdir().unwrap();
    let out = flatlsm()
        .args([
            "bench",
            "--benchmarks",
            "fillseq,fillrandom,readrandom,readseq",
            "--num",
            "2000",
        ])
        .args(["--value_size", "600", "--pmtable_size", "262144", "--db"])
        .arg(dir.path().join("db"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in ["fillseq", "fillrandom", "readrandom", "readseq"] {
        let line = text
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} line in {text}"));
        assert!(
            line.contains(" micros/op ")
                && line.contains(" ops/sec ")
                && line.contains(" operations;"),
            "{line}"
        );
    }
    assert!(text.contains("(2000 of 2000 found)") || text.contains(" of 2000 found)"));
}

#[test]
fn put_then_get_round_trips_and_missing_key_exits_nonzero() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let put = flatlsm()
        .args(["put", "--create-if-missing", "--db"])
        .arg(&db)
        .args(["hello", "world"])
        .output()
        .unwrap();
    assert!(
        put.status.success(),
        "{}",
        String::from_utf8_lossy(&put.stderr)
    );
    let get = flatlsm()
        .args(["get", "--db"])
        .arg(&db)
        .arg("hello")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&get.stdout).trim(), "world");
    let miss = flatlsm()
        .args(["get", "--db"])
        .arg(&db)
        .arg("nope")
        .output()
        .unwrap();
    assert!(!miss.status.success());
    assert!(String::from_utf8_lossy(&miss.stderr).contains("not found"));
}

#[test]
fn tmpfs_pm_directory_without_emulation_is_refused_with_a_clear_message() {
    if !std::path::Path::new("/dev/shm").is_dir() {
        eprintln!("skipped: no /dev/shm on this machine");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pm = tempfile::tempdir_in("/dev/shm").unwrap();
    let out = flatlsm()
        .args(["put", "--create-if-missing", "--db"])
        .arg(dir.path().join("db"))
        .args(["k", "v", "--pm-path"])
        .arg(pm.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("reboot"), "{err}");
}

/// `--btree-size` sizes the B+-tree of an `slmdb` database being created; later commands open
/// it as it is. Regression: a command without the flag, run before the first flush, made the
/// tree afresh at the default size (1 GiB) because no SST was recorded yet.
#[test]
fn an_slmdb_database_is_created_with_the_btree_size_given() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let put = flatlsm()
        .args(["put", "--create-if-missing", "--profile", "slmdb"])
        .args(["--pm-mode", "msync", "--btree-size", "2097152", "--db"])
        .arg(&db)
        .args(["hello", "world"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&put.stderr);
    assert!(put.status.success(), "{err}");
    let flush = flatlsm().args(["flush", "--db"]).arg(&db).output().unwrap();
    assert!(
        flush.status.success(),
        "{}",
        String::from_utf8_lossy(&flush.stderr)
    );
    let tree = std::fs::metadata(db.join("pm").join("index.pmbt")).unwrap();
    assert_eq!(tree.len(), 2 << 20);
    let get = flatlsm()
        .args(["get", "--db"])
        .arg(&db)
        .arg("hello")
        .output();
    assert_eq!(
        String::from_utf8_lossy(&get.unwrap().stdout).trim(),
        "world"
    );
}
