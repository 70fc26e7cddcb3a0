//! Short runs of `flatlsm crashtest` (the long ones are documented in docs/crashtest.md).

use std::process::Command;

fn crashtest(args: &[&str], db: &std::path::Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_flatlsm"))
        .arg("crashtest")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn crashtest_survives_twenty_kills_with_every_key_verified() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, text) = crashtest(
        &["--kills", "20", "--threads", "3", "--max-run-ms", "300"],
        &dir.path().join("db"),
    );
    assert!(ok, "{text}");
    assert!(text.contains("20 kills survived"), "{text}");
}

/// The `leveled` profile: DRAM memtables behind write-ahead logs lose no acknowledged write,
/// non-sync ones included, when the process is killed.
#[test]
fn crashtest_leveled_survives_kills_with_every_key_verified() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, text) = crashtest(
        &[
            "--profile",
            "leveled",
            "--kills",
            "12",
            "--threads",
            "3",
            "--max-run-ms",
            "300",
        ],
        &dir.path().join("db"),
    );
    assert!(ok, "{text}");
    assert!(text.contains("12 kills survived"), "{text}");
}

/// Ten kills of `profile` on msync PM, every key verified after each.
fn ten_kills_on_msync_pm(profile: &str) {
    ten_kills_on_msync_pm_with(profile, &[]);
}

/// [`ten_kills_on_msync_pm`] with more flags.
fn ten_kills_on_msync_pm_with(profile: &str, more: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--profile", profile, "--pm-mode", "msync", "--kills", "10"];
    let rest = [&["--threads", "3", "--max-run-ms", "300"][..], more].concat();
    let (ok, text) = crashtest(&[&flags[..], &rest[..]].concat(), &dir.path().join("db"));
    assert!(ok, "{text}");
    assert!(text.contains("10 kills survived"), "{text}");
}

/// The `leveled` profile with level 0 in the PM directory (RocksDB-L0-NVM): killed processes
/// lose no acknowledged write and leave no level-0 file the manifest names unsynced.
#[test]
fn crashtest_leveled_with_level0_in_pm_survives_kills_with_every_key_verified() {
    ten_kills_on_msync_pm_with("leveled", &["--level0-in-pm"]);
}

/// The `novelsm` profile: persistent PM skiplists (msync PM here) lose no acknowledged write
/// when the process is killed.
#[test]
fn crashtest_novelsm_survives_kills_with_every_key_verified() {
    ten_kills_on_msync_pm("novelsm");
}

#[test]
fn crashtest_loses_no_acknowledged_non_sync_write_in_msync_mode() {
    // Before PM Log v2, msync mode published used_size only at the 1 s group commit, so a
    // process crash lost up to a second of acknowledged non-sync writes.
    let dir = tempfile::tempdir().unwrap();
    let (ok, text) = crashtest(
        &[
            "--kills",
            "12",
            "--pm-mode",
            "msync",
            "--sync-percent",
            "0",
            "--threads",
            "3",
            "--max-run-ms",
            "400",
        ],
        &dir.path().join("db"),
    );
    assert!(ok, "{text}");
    assert!(text.contains("12 kills survived"), "{text}");
    assert!(text.contains("0 acknowledged operations lost"), "{text}");
}

#[test]
fn crashtest_survives_kills_in_emulated_pm_mode_with_large_values() {
    let dir = tempfile::tempdir().unwrap();
    let shm = std::path::Path::new("/dev/shm");
    if !shm.is_dir() {
        return; // no DRAM file system to emulate PM on
    }
    let pm = tempfile::tempdir_in(shm).unwrap();
    let pm_path = pm.path().join("pm");
    let (ok, text) = crashtest(
        &[
            "--kills",
            "6",
            "--pm-mode",
            "emulated",
            "--pm-path",
            pm_path.to_str().unwrap(),
            "--value-size",
            "400..3000",
            "--sync-percent",
            "0",
            "--max-run-ms",
            "300",
        ],
        &dir.path().join("db"),
    );
    assert!(ok, "{text}");
    assert!(text.contains("6 kills survived"), "{text}");
}

#[test]
fn crashtest_refuses_an_existing_database_and_bad_flags() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, text) = crashtest(&["--kills", "1"], dir.path());
    assert!(
        !ok && text.contains("needs a fresh database directory"),
        "{text}"
    );
    let db = dir.path().join("db");
    let (ok, text) = crashtest(&["--value-size", "8..100"], &db);
    assert!(!ok && text.contains("--value-size"), "{text}");
}

/// The `matrixkv` profile: rows in a PM matrix container (msync PM here), write-ahead logs in
/// the PM directory; killed processes lose no acknowledged write.
#[test]
fn crashtest_matrixkv_survives_kills_with_every_key_verified() {
    ten_kills_on_msync_pm("matrixkv");
}

/// The `slmdb` profile: persistent PM skiplists and the PM B+-tree (msync PM here); killed
/// processes lose no acknowledged write, and every key is found through the index.
#[test]
fn crashtest_slmdb_survives_kills_with_every_key_verified() {
    ten_kills_on_msync_pm("slmdb");
}
