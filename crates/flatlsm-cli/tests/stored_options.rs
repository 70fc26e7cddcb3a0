//! The tool opens an existing database with the options stored with it (its OPTIONS file),
//! overridden only by flags given on the command line; a database without an OPTIONS file
//! opens as before (defaults and flags). What an open used is read back from the `LOG` the
//! open wrote.

use flatlsm::{Db, Options, PmModeOption, Profile};
use std::path::Path;
use std::process::Command;

/// Runs `flatlsm args`; (success, stdout, stderr).
fn run(args: &[&str]) -> (bool, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_flatlsm"))
        .args(args)
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (o.status.success(), text(&o.stdout), text(&o.stderr))
}

fn ok(args: &[&str]) -> String {
    let (good, out, err) = run(args);
    assert!(good, "flatlsm {args:?} failed:\n{out}\n{err}");
    out
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The `Options.` lines of the LOG the last open of `db` wrote.
fn logged_options(db: &Path) -> String {
    let log = std::fs::read_to_string(db.join("LOG")).unwrap();
    let lines = log
        .lines()
        .filter_map(|l| l.split_once(" Options.").map(|(_, o)| o));
    lines.map(|l| format!("{l}\n")).collect()
}

/// A `flatlsm` database created by the library with its PM directory outside the database
/// directory and a small PMTable, holding `k` = `v`.
fn create(dir: &Path, opts: Options) -> std::path::PathBuf {
    let db = dir.join("db");
    let handle = Db::open(&db, opts).unwrap();
    handle.put("k", "v").unwrap();
    handle.close().unwrap();
    db
}

/// [`create`] with the PM directory outside the database, msync mode and 1 MiB PMTables:
/// options a command must know from the OPTIONS file to open it. Returns (db, PM directory).
fn create_with_pm_elsewhere(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let pm = dir.join("elsewhere-pm");
    let opts = Options::default()
        .pm_path(&pm)
        .pm_mode(PmModeOption::Msync)
        .pmtable_size(1 << 20);
    (create(dir, opts), pm)
}

#[test]
fn commands_open_a_database_with_its_stored_options_without_flags() {
    let dir = tempfile::tempdir().unwrap();
    let (db, pm) = create_with_pm_elsewhere(dir.path());
    // Without the stored options these would open PM at db/pm in auto mode and be refused.
    assert_eq!(ok(&["get", "--db", s(&db), "k"]).trim(), "v");
    let used = logged_options(&db);
    assert!(used.contains("pmtable_size: 1048576\n"), "{used}");
    assert!(
        used.contains(&format!("pm_path: \"{}\"\n", pm.display())),
        "{used}"
    );
    assert!(used.contains("pm_mode: \"msync\"\n"), "{used}");
    let check = ok(&["check", "--db", s(&db)]);
    assert!(check.contains("OK"), "{check}");
    assert!(
        !db.join("pm").exists(),
        "nothing was created at the default PM directory"
    );
}

#[test]
fn a_profile_sub_option_is_used_and_a_flag_given_overrides_the_stored_value() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::for_profile(Profile::Leveled)
        .pm_path(dir.path().join("pm"))
        .pm_mode(PmModeOption::Msync);
    opts.leveled.level0_file_num_compaction_trigger = 2;
    opts.leveled.max_bytes_for_level_base = 8 << 20;
    let db = create(dir.path(), opts);
    ok(&["put", "--db", s(&db), "k2", "v2"]);
    let used = logged_options(&db);
    assert!(used.contains("profile: \"leveled\"\n"), "{used}");
    assert!(
        used.contains("leveled.level0_file_num_compaction_trigger: 2\n"),
        "{used}"
    );
    assert!(
        used.contains("leveled.max_bytes_for_level_base: 8388608\n"),
        "{used}"
    );
    // A writing command: a read-only one (get) writes no LOG to look at.
    ok(&["put", "--db", s(&db), "--pm-mode", "emulated", "k3", "v3"]);
    let used = logged_options(&db);
    assert!(
        used.contains("pm_mode: \"emulated\"\n"),
        "the flag wins: {used}"
    );
    assert!(
        used.contains("leveled.level0_file_num_compaction_trigger: 2\n"),
        "{used}"
    );
}

#[test]
fn a_database_without_an_options_file_opens_with_defaults_and_flags() {
    let dir = tempfile::tempdir().unwrap();
    let (db, pm) = create_with_pm_elsewhere(dir.path());
    for entry in std::fs::read_dir(&db).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.starts_with("OPTIONS-") {
            std::fs::remove_file(db.join(name)).unwrap();
        }
    }
    let flags = ["--pm-path", s(&pm), "--pm-mode", "msync"];
    assert_eq!(
        ok(&[&["get", "--db", s(&db)][..], &flags, &["k"]].concat()).trim(),
        "v"
    );
    // A writing command: a read-only one (get) writes no LOG to look at.
    ok(&[&["put", "--db", s(&db)][..], &flags, &["k", "w"]].concat());
    let used = logged_options(&db);
    let default_size = Options::default().pmtable_size;
    assert!(
        used.contains(&format!("pmtable_size: {default_size}\n")),
        "{used}"
    );
}

#[test]
fn a_damaged_options_file_stops_the_command_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .pm_path(dir.path().join("pm"))
        .pm_mode(PmModeOption::Msync);
    let db = create(dir.path(), opts);
    let file = db.join("OPTIONS-000001");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replacen("block_size = 4", "block_size = 5", 1)).unwrap();
    let (good, _, err) = run(&["get", "--db", s(&db), "k"]);
    assert!(!good, "{err}");
    assert!(
        err.contains("OPTIONS-000001") && err.contains("checksum"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let (good, out, _) = run(&["check", "--db", s(&db)]);
    assert!(
        !good && out.contains("problem: ") && out.contains("OPTIONS-000001"),
        "{out}"
    );
}
