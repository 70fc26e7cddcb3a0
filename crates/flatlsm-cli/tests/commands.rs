//! End-to-end runs of the database subcommands of `flatlsm`, including every refusal: a missing
//! database, a directory that is not one, a locked database, a PM directory that is not the
//! database's (each: one-line message, exit code 1, nothing modified), and `check` finding
//! planted damage. Dump's selections are in `dump.rs`; export, import and approxsize in
//! `transfer.rs`.

mod support;

use support::{first_named, flatlsm, ok, refused, s, small_db};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Paths and modification times below `dir`, to show a refused command changed nothing.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u64, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let m = e.metadata().unwrap();
        out.insert(e.path(), (m.len(), m.modified().unwrap()));
        if m.is_dir() {
            out.extend(snapshot(&e.path()));
        }
    }
    out
}

#[test]
fn put_get_delete_round_trip_in_text_and_hex() {
    let t = tempfile::tempdir().unwrap();
    let db = small_db(t.path());
    let db = s(&db);
    assert_eq!(ok(&["get", "--db", db, "a3"]).trim(), "v3");
    ok(&["put", "--db", db, "--hex", "00ff", "cafe"]);
    assert_eq!(ok(&["get", "--db", db, "--hex", "00ff"]).trim(), "cafe");
    ok(&["delete", "--db", db, "a3"]);
    refused(&["get", "--db", db, "a3"], "not found");
    ok(&["delete-range", "--db", db, "a5", "a8"]);
    let left = ok(&["scan", "--db", db, "--prefix", "a", "--keys-only"]);
    let left: Vec<&str> = left.lines().collect();
    assert_eq!(left, ["a0", "a1", "a2", "a4", "a8", "a9"]);
    refused(
        &["delete-range", "--db", db, "b", "a"],
        "start is after its end",
    );
    refused(&["get", "--db", db, "--hex", "0g"], "is not hex");
}

#[test]
fn scan_honours_range_prefix_limit_and_keys_only() {
    let t = tempfile::tempdir().unwrap();
    let db = small_db(t.path());
    let db = s(&db);
    let all = ok(&["scan", "--db", db]);
    assert_eq!(all.lines().count(), 15, "{all}");
    assert_eq!(all.lines().next().unwrap(), "a0 => v0");
    let range = ok(&["scan", "--db", db, "--from", "a2", "--to", "a5"]);
    assert_eq!(range, "a2 => v2\na3 => v3\na4 => v4\n");
    let prefix = ok(&[
        "scan",
        "--db",
        db,
        "--prefix",
        "b",
        "--limit",
        "2",
        "--keys-only",
    ]);
    assert_eq!(prefix, "b0\nb1\n");
    let reverse = ok(&["scan", "--db", db, "--reverse", "--to", "a3", "--keys-only"]);
    assert_eq!(reverse, "a2\na1\na0\n");
    let hex = ok(&["scan", "--db", db, "--hex", "--prefix", "6130"]);
    assert_eq!(hex, "6130 => 7630\n");
}

/// `--compression` sets what a command's flush and compaction write (every level); `dump`
/// shows the blocks' type and `check` reads them; an unknown name is refused.
#[test]
fn compact_with_compression_writes_zstd_blocks_that_dump_and_check_read() {
    let t = tempfile::tempdir().unwrap();
    let db = small_db(t.path());
    let d = flatlsm::Db::open(&db, flatlsm::Options::default()).unwrap();
    for i in 0..300 {
        let value = format!("compressible value {};", i % 5).repeat(8);
        d.put(format!("c{i:04}"), value).unwrap();
    }
    d.close().unwrap();
    let db = s(&db);
    ok(&["compact", "--db", db, "--compression", "zstd"]);
    let ssts: String = std::fs::read_dir(db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .map(|p| ok(&["dump", s(&p)]))
        .collect();
    assert!(
        ssts.contains(": zstd, ") && ssts.contains("data blocks: "),
        "{ssts}"
    );
    ok(&["check", "--db", db]);
    assert_eq!(
        ok(&["get", "--db", db, "c0123"]).trim(),
        "compressible value 3;".repeat(8)
    );
    refused(
        &["compact", "--db", db, "--compression", "snappy"],
        "unknown compression",
    );
}

#[test]
fn stats_prints_levels_and_json_after_flush_and_compact() {
    let t = tempfile::tempdir().unwrap();
    let db = small_db(t.path());
    let db = s(&db);
    assert!(ok(&["flush", "--db", db]).contains("flushed"));
    assert!(ok(&["compact", "--db", db]).contains("L2 "));
    let human = ok(&["stats", "--db", db]);
    for field in [
        "PM mode:",
        "PMTables:",
        "L1 (Ordered):",
        "L2:",
        "value logs:",
        "write amplification",
        "block cache:",
        "bloom filters:",
        "latency (us)",
    ] {
        assert!(human.contains(field), "{field} missing in {human}");
    }
    let ops = ["get", "put", "write", "seek", "next"];
    assert!(ops
        .iter()
        .all(|op| human.lines().any(|l| l.starts_with(op))));
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["stats", "--db", db, "--json"])).unwrap();
    let l2 = &json["levels"][2];
    assert_eq!(l2["name"], "L2", "{json}");
    assert!(l2["files"].as_u64().unwrap() >= 1, "{json}");
    assert!(!json["vlogs"].as_array().unwrap().is_empty(), "{json}");
    assert_eq!(json["profile"], "flatlsm");
    for op in ops {
        let l = &json["latency"][op];
        assert!(
            l["count"].as_u64().is_some() && l["p999_micros"].as_f64().is_some(),
            "{json}"
        );
    }
    assert!(
        json["block_cache"]["capacity"].as_u64().unwrap() > 0,
        "{json}"
    );
    assert!(json["bloom"]["useful"].as_u64().is_some(), "{json}");
    assert!(
        json["derived"]["write_amplification"].as_f64().is_some(),
        "{json}"
    );
    assert_eq!(
        ok(&["get", "--db", db, "a7"]).trim(),
        "v7",
        "data survives flush and compact"
    );
}

#[test]
fn dump_prints_sst_pm_log_manifest_and_current() {
    let t = tempfile::tempdir().unwrap();
    let db = small_db(t.path());
    ok(&["flush", "--db", s(&db)]);
    ok(&["put", "--db", s(&db), "late", "in-pm"]);
    let find = |dir: &Path, suffix: &str| -> PathBuf {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.to_str().unwrap().ends_with(suffix)
                    || p.file_name().unwrap().to_str().unwrap().starts_with(suffix)
            })
            .unwrap_or_else(|| panic!("no {suffix} in {dir:?}"))
    };
    let sst: String = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .map(|p| ok(&["dump", s(&p)]))
        .collect();
    assert!(sst.contains("'a5' @ ") && sst.contains("=> 'v5'"), "{sst}");
    assert!(sst.contains("-> vlog "), "large values are pointers: {sst}");
    let pm = std::fs::read_dir(db.join("pm"))
        .unwrap()
        .map(|e| e.unwrap().path());
    let dumps: String = pm
        .filter(|p| p.extension().is_some_and(|e| e == "pmlog"))
        .map(|p| ok(&["dump", s(&p)]))
        .collect();
    assert!(
        dumps.contains("'late' @ ") && dumps.contains("'in-pm'"),
        "{dumps}"
    );
    // `flush` waits for the background work, which merges the flushed run into the L1.
    assert!(ok(&["dump", s(&find(&db, "MANIFEST-"))]).contains("add L1 SST"));
    assert!(ok(&["dump", s(&db.join("CURRENT"))]).contains("MANIFEST-"));
    assert!(
        ok(&["dump", "--hex", s(&find(&db, ".vlog"))]).contains("6234"),
        "hex of b4"
    );
    refused(
        &["dump", s(&t.path().join("missing.sst"))],
        "does not exist",
    );
}

#[test]
fn check_passes_then_finds_a_planted_corruption_with_file_and_offset() {
    let t = tempfile::tempdir().unwrap();
    let db = small_db(t.path());
    ok(&["flush", "--db", s(&db)]);
    assert!(ok(&["check", "--db", s(&db)]).contains(": OK"));
    let sst = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sst"))
        .unwrap();
    let mut bytes = std::fs::read(&sst).unwrap();
    bytes[5] ^= 0xff;
    std::fs::write(&sst, bytes).unwrap();
    let o = flatlsm(&["check", "--db", s(&db)]);
    assert!(!o.ok);
    let line = o
        .stdout
        .lines()
        .find(|l| l.starts_with("problem: "))
        .expect(&o.stdout);
    assert!(line.contains(s(&sst)) && line.contains("offset "), "{line}");
    assert!(o.stderr.contains("problem(s) found"), "{}", o.stderr);
}

/// Damage that open refuses, and the file `check` must name.
type Damage = fn(&Path) -> PathBuf;

/// Regression (issue 9): `check` exited 0 on a manifest truncated to 0 bytes, a deleted
/// `db/IDENTITY` and a deleted PM Log, which open refuses. Now `get` (open) is refused and
/// `check` exits 1 with a problem naming the file.
#[test]
fn check_refuses_what_open_refuses() {
    let damages: [(&str, Damage); 4] = [
        ("manifest truncated to 0 bytes", |db| {
            let m = first_named(db, |n| n.starts_with("MANIFEST-"));
            std::fs::write(&m, b"").unwrap();
            m
        }),
        ("db/IDENTITY deleted", |db| {
            std::fs::remove_file(db.join("IDENTITY")).unwrap();
            db.join("IDENTITY")
        }),
        ("a PM Log deleted", |db| {
            let log = first_named(&db.join("pm"), |n| n.ends_with(".pmlog"));
            std::fs::remove_file(&log).unwrap();
            log
        }),
        ("a bit flipped in pm/IDENTITY", |db| {
            let p = db.join("pm").join("IDENTITY");
            let mut b = std::fs::read(&p).unwrap();
            b[20] ^= 0x10;
            std::fs::write(&p, b).unwrap();
            p
        }),
    ];
    for (what, damage) in damages {
        let t = tempfile::tempdir().unwrap();
        let db = small_db(t.path());
        let file = damage(&db);
        refused(&["get", "--db", s(&db), "a3"], s(&file));
        let o = flatlsm(&["check", "--db", s(&db)]);
        let named = o
            .stdout
            .lines()
            .any(|l| l.starts_with("problem: ") && l.contains(s(&file)));
        assert!(!o.ok && named, "{what}: {}{}", o.stdout, o.stderr);
    }
}

#[test]
fn missing_database_is_refused_and_not_created() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("nope");
    for cmd in ["get", "delete"] {
        refused(&[cmd, "--db", s(&db), "k"], "does not exist");
    }
    for cmd in [
        "scan",
        "stats",
        "check",
        "flush",
        "compact",
        "export",
        "import",
        "approxsize",
    ] {
        refused(&[cmd, "--db", s(&db)], "does not exist");
    }
    refused(&["put", "--db", s(&db), "k", "v"], "--create-if-missing");
    assert!(!db.exists());
}

#[test]
fn directory_that_is_not_a_database_is_refused_and_untouched() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("photo.jpg"), b"not a db").unwrap();
    let before = snapshot(t.path());
    refused(
        &["get", "--db", s(t.path()), "k"],
        "is not a FlatLSM database",
    );
    refused(&["check", "--db", s(t.path())], "is not a FlatLSM database");
    refused(
        &["put", "--db", s(t.path()), "--create-if-missing", "k", "v"],
        "is not a FlatLSM database",
    );
    assert_eq!(snapshot(t.path()), before);
}

#[test]
fn locked_database_is_refused_while_another_handle_has_it_open() {
    let t = tempfile::tempdir().unwrap();
    let db = small_db(t.path());
    // No background threads: the holder's own work (spare PM Logs prepared at start) would
    // change the directory while the refused commands are checked for touching nothing.
    let quiet = flatlsm::Options::default().background_work(false);
    let holder = flatlsm::Db::open(&db, quiet).unwrap();
    let before = snapshot(&db);
    refused(&["get", "--db", s(&db), "a1"], "by another process");
    refused(&["check", "--db", s(&db)], "by another process");
    assert_eq!(snapshot(&db), before);
    drop(holder);
    assert_eq!(ok(&["get", "--db", s(&db), "a1"]).trim(), "v1");
}

#[test]
fn pm_directory_of_another_database_or_an_empty_one_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    let (pm_a, pm_b) = (t.path().join("pm-a"), t.path().join("pm-b"));
    ok(&[
        "put",
        "--db",
        s(&a),
        "--pm-path",
        s(&pm_a),
        "--create-if-missing",
        "k",
        "a",
    ]);
    ok(&[
        "put",
        "--db",
        s(&b),
        "--pm-path",
        s(&pm_b),
        "--create-if-missing",
        "k",
        "b",
    ]);
    let before = snapshot(t.path());
    refused(
        &["get", "--db", s(&a), "--pm-path", s(&pm_b), "k"],
        "belongs to another FlatLSM database",
    );
    let default_pm = a.join("pm");
    refused(
        &["get", "--db", s(&a), "--pm-path", s(&default_pm), "k"],
        "is not the PM directory of",
    );
    assert_eq!(snapshot(t.path()), before, "nothing modified");
    // Without the flag the database's stored PM directory is used (its OPTIONS file).
    assert_eq!(ok(&["get", "--db", s(&a), "k"]).trim(), "a");
    let o = flatlsm(&["check", "--db", s(&a), "--pm-path", s(&pm_b)]);
    assert!(
        !o.ok && o.stdout.contains("belongs to another FlatLSM database"),
        "{}",
        o.stdout
    );
    assert_eq!(
        ok(&["get", "--db", s(&a), "--pm-path", s(&pm_a), "k"]).trim(),
        "a"
    );
}

#[test]
fn every_subcommand_has_help() {
    for cmd in [
        "put",
        "get",
        "delete",
        "delete-range",
        "scan",
        "export",
        "import",
        "approxsize",
        "stats",
        "check",
        "dump",
        "compact",
        "flush",
        "checkpoint",
        "backup",
        "restore",
        "repair",
        "bench",
        "crashtest",
    ] {
        let out = ok(&[cmd, "--help"]);
        assert!(out.contains("Usage: flatlsm "), "{cmd}: {out}");
    }
}

#[test]
fn read_commands_open_read_only_and_change_nothing() {
    let t = tempfile::tempdir().unwrap();
    let db = small_db(t.path());
    let db = s(&db);
    let before = snapshot(t.path());
    // A reader in this process beside the commands' own read-only opens.
    let reader = flatlsm::Db::open_read_only(db, flatlsm::Options::default()).unwrap();
    assert_eq!(ok(&["get", "--db", db, "a1"]).trim(), "v1");
    assert!(ok(&["scan", "--db", db, "--keys-only"]).contains("b4"));
    assert!(ok(&["stats", "--db", db, "--json"]).contains("\"levels\""));
    assert!(ok(&["check", "--db", db]).contains("OK"));
    assert!(ok(&["export", "--db", db, "--prefix", "a"]).starts_with("a0\tv0\n"));
    assert!(ok(&["approxsize", "--db", db])
        .trim()
        .parse::<u64>()
        .is_ok());
    refused(&["put", "--db", db, "k", "v"], "by another process");
    refused(&["import", "--db", db], "by another process");
    drop(reader);
    assert_eq!(
        snapshot(t.path()),
        before,
        "a read command changed the database"
    );
}

#[test]
fn checkpoint_backup_and_restore_make_databases_that_open() {
    let t = tempfile::tempdir().unwrap();
    let db = small_db(t.path());
    let db = s(&db);
    let copy = t.path().join("copy");
    ok(&["checkpoint", "--db", db, s(&copy)]);
    assert_eq!(ok(&["get", "--db", s(&copy), "a3"]).trim(), "v3");
    refused(&["checkpoint", "--db", db, s(&copy)], "already exists");
    let backups = t.path().join("backups");
    assert!(ok(&["backup", "--db", db, "--backup-dir", s(&backups)]).contains("backup 1"));
    ok(&["delete", "--db", db, "a3"]);
    assert!(ok(&["backup", "--db", db, "--backup-dir", s(&backups)]).contains("backup 2"));
    let first = t.path().join("restored-1");
    let newest = t.path().join("restored-2");
    let restore = |to: &Path, n: Option<&str>| {
        let mut args = vec!["restore", "--backup-dir", s(&backups), "--db", s(to)];
        args.extend(n.map(|n| ["--backup", n]).into_iter().flatten());
        ok(&args)
    };
    restore(&first, Some("1"));
    restore(&newest, None);
    assert_eq!(ok(&["get", "--db", s(&first), "a3"]).trim(), "v3");
    refused(&["get", "--db", s(&newest), "a3"], "not found");
    assert!(ok(&["check", "--db", s(&first)]).contains("OK"));
    refused(
        &["restore", "--backup-dir", s(&backups), "--db", s(&first)],
        "already exists",
    );
}

/// A small `profile` database with PM beside it (its OPTIONS file records where), data both in
/// SSTs or the design's store and in write buffers.
fn profile_db(dir: &Path, profile: flatlsm::Profile) -> PathBuf {
    let db = dir.join("db");
    let mut o = flatlsm::Options::default();
    o.profile = profile;
    o.pm_path = Some(dir.join("pm"));
    o.pm_mode = flatlsm::PmModeOption::Msync;
    o.pmtable_size = 1 << 20;
    o.matrixkv.container_size = 16 << 20;
    o.slmdb.btree_size = 4 << 20;
    let d = flatlsm::Db::open(&db, o).unwrap();
    for i in 0..200 {
        d.put(format!("a{i}"), format!("v{i}")).unwrap();
    }
    d.flush().unwrap();
    d.put("b0", "w0").unwrap();
    d.close().unwrap();
    db
}

#[test]
fn repair_rebuilds_slmdb_and_matrixkv_databases_with_their_stored_options() {
    for profile in [flatlsm::Profile::SlmDb, flatlsm::Profile::MatrixKv] {
        let t = tempfile::tempdir().unwrap();
        let db = profile_db(t.path(), profile);
        std::fs::remove_file(first_named(&db, |n| n.starts_with("MANIFEST-"))).unwrap();
        std::fs::remove_file(db.join("CURRENT")).unwrap();
        let out = ok(&["repair", "--db", s(&db)]);
        assert!(out.contains("files moved to lost/: 0"), "{profile}: {out}");
        assert_eq!(ok(&["get", "--db", s(&db), "a7"]).trim(), "v7", "{profile}");
        assert_eq!(ok(&["get", "--db", s(&db), "b0"]).trim(), "w0", "{profile}");
        assert!(ok(&["check", "--db", s(&db)]).contains("OK"), "{profile}");
    }
}

#[test]
fn repair_rebuilds_a_deleted_manifest_and_exits_1_when_a_file_is_lost() {
    let t = tempfile::tempdir().unwrap();
    let db = small_db(t.path());
    ok(&["compact", "--db", s(&db)]);
    let manifest = first_named(&db, |n| n.starts_with("MANIFEST-"));
    std::fs::remove_file(&manifest).unwrap();
    std::fs::remove_file(db.join("CURRENT")).unwrap();
    let out = ok(&["repair", "--db", s(&db)]);
    assert!(out.contains("files moved to lost/: 0"), "{out}");
    assert_eq!(ok(&["get", "--db", s(&db), "a3"]).trim(), "v3");
    let sst = first_named(&db, |n| n.ends_with(".sst"));
    let mut bytes = std::fs::read(&sst).unwrap();
    bytes[8] ^= 0xff;
    std::fs::write(&sst, &bytes).unwrap();
    let o = flatlsm(&["repair", "--db", s(&db)]);
    assert!(!o.ok, "{}", o.stdout);
    assert!(o.stdout.contains("lost "), "{}", o.stdout);
    assert!(o.stderr.contains("could not be recovered"), "{}", o.stderr);
    assert!(db.join("lost").join(sst.file_name().unwrap()).exists());
    ok(&["put", "--db", s(&db), "c0", "w0"]);
}
