//! Short runs of `flatlsm crashtest` (the long ones are documented in docs/crashtest.md).
//!
//! Every profile runs `--sync-percent 0` and `--sync-percent 100` under four kills with a fixed
//! seed ([`four_kills`]); the other runs take their seed from the clock.

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

/// Seed of [`four_kills`]: with `--max-run-ms 300` its kill schedule is 178 ms, a kill during
/// open (after 18 ms), 163 ms and 208 ms, so every run checks recovery of a database that holds
/// data, once killed while recovering, and no run is too short to write.
const FOUR_KILLS_SEED: &str = "95";

/// The figures of a crashtest summary line, e.g. `operations verified` from
/// `..., 11967 operations verified, ...`.
fn figure(text: &str, name: &str) -> u64 {
    let summary = text
        .lines()
        .rfind(|l| l.contains("kills survived ("))
        .unwrap_or_else(|| panic!("no summary line: {text}"));
    summary
        .split(", ")
        .filter_map(|part| part.split_once(' '))
        .find(|&(_, rest)| rest == name)
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("no {name:?} in {summary}"))
}

/// `flatlsm crashtest --profile P --sync-percent S` with four kills (one during open) on the
/// default PM mode (msync off DAX); returns the acknowledged non-sync operations verified
/// after asserting every kill survived, no acknowledged operation was lost, and some were
/// verified.
fn four_kills(profile: &str, sync_percent: &str) -> u64 {
    four_kills_with(profile, sync_percent, &[])
}

/// [`four_kills`] with more flags.
fn four_kills_with(profile: &str, sync_percent: &str, more: &[&str]) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--profile", profile, "--sync-percent", sync_percent];
    let schedule = ["--kills", "4", "--max-run-ms", "300"];
    let seed = ["--seed", FOUR_KILLS_SEED];
    let shape = ["--threads", "3", "--keys-per-thread", "500"];
    let args = [&flags[..], &schedule[..], &seed[..], &shape[..], more].concat();
    let (ok, text) = crashtest(&args, &dir.path().join("db"));
    assert!(ok, "{text}");
    assert!(text.contains("4 kills survived (1 during open"), "{text}");
    assert!(text.contains(", 0 acknowledged operations lost"), "{text}");
    assert!(figure(&text, "operations verified") > 0, "{text}");
    figure(&text, "acknowledged non-sync operations verified")
}

/// Non-sync writes under kills: a process crash loses no acknowledged write of `profile`,
/// none of which asked for sync (docs/durability.md).
fn no_acknowledged_non_sync_write_lost(profile: &str) {
    assert!(four_kills(profile, "0") > 0);
}

/// Synced writes under kills: the sync path (log fsync, msync, per-insert persist) loses no
/// acknowledged write of `profile` either.
fn no_acknowledged_synced_write_lost(profile: &str) {
    assert_eq!(four_kills(profile, "100"), 0);
}

#[test]
fn crashtest_flatlsm_with_only_non_sync_writes_loses_no_acknowledged_write() {
    no_acknowledged_non_sync_write_lost("flatlsm");
}

#[test]
fn crashtest_leveled_with_only_non_sync_writes_loses_no_acknowledged_write() {
    no_acknowledged_non_sync_write_lost("leveled");
}

#[test]
fn crashtest_novelsm_with_only_non_sync_writes_loses_no_acknowledged_write() {
    no_acknowledged_non_sync_write_lost("novelsm");
}

#[test]
fn crashtest_matrixkv_with_only_non_sync_writes_loses_no_acknowledged_write() {
    no_acknowledged_non_sync_write_lost("matrixkv");
}

#[test]
fn crashtest_slmdb_with_only_non_sync_writes_loses_no_acknowledged_write() {
    no_acknowledged_non_sync_write_lost("slmdb");
}

#[test]
fn crashtest_flatlsm_with_only_sync_writes_loses_no_acknowledged_write() {
    no_acknowledged_synced_write_lost("flatlsm");
}

#[test]
fn crashtest_leveled_with_only_sync_writes_loses_no_acknowledged_write() {
    no_acknowledged_synced_write_lost("leveled");
}

#[test]
fn crashtest_novelsm_with_only_sync_writes_loses_no_acknowledged_write() {
    no_acknowledged_synced_write_lost("novelsm");
}

#[test]
fn crashtest_matrixkv_with_only_sync_writes_loses_no_acknowledged_write() {
    no_acknowledged_synced_write_lost("matrixkv");
}

#[test]
fn crashtest_slmdb_with_only_sync_writes_loses_no_acknowledged_write() {
    no_acknowledged_synced_write_lost("slmdb");
}

/// [`no_acknowledged_non_sync_write_lost`] on PM emulated in /dev/shm (a process crash keeps
/// tmpfs pages as it keeps the page cache): in msync mode a PM skiplist pays three msyncs per
/// entry, so four kills verify a few dozen operations and no flush; here they verify thousands,
/// with flushes (and SLM-DB's index updates) killed too. Skipped without /dev/shm.
fn no_acknowledged_non_sync_write_lost_on_emulated_pm(profile: &str) {
    let shm = std::path::Path::new("/dev/shm");
    if !shm.is_dir() {
        return; // no DRAM file system to emulate PM on
    }
    let pm = tempfile::tempdir_in(shm).unwrap();
    let pm_path = pm.path().join("pm");
    let mode = ["--pm-mode", "emulated"];
    let path = ["--pm-path", pm_path.to_str().unwrap()];
    assert!(four_kills_with(profile, "0", &[&mode[..], &path[..]].concat()) > 0);
}

#[test]
fn crashtest_novelsm_on_emulated_pm_with_only_non_sync_writes_loses_no_acknowledged_write() {
    no_acknowledged_non_sync_write_lost_on_emulated_pm("novelsm");
}

#[test]
fn crashtest_slmdb_on_emulated_pm_with_only_non_sync_writes_loses_no_acknowledged_write() {
    no_acknowledged_non_sync_write_lost_on_emulated_pm("slmdb");
}
