//! `flatlsm dump`'s selections: `--from`/`--to`/`--limit` over SSTs, PM Logs and value logs,
//! `--show-properties` for SSTs (as `sst_dump --show_properties`), and both refused, with one
//! line and exit code 1, for files without keys or that are not SSTs.

mod support;

use support::{first_named, flatlsm, ok, refused, s, small_db};

use std::path::{Path, PathBuf};

/// Every file of `dir` whose name ends with `suffix`, sorted.
fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().ends_with(suffix))
        .collect();
    v.sort();
    v
}

/// The records `dump` printed (its stderr count) and its stdout, over every file.
fn dump_all(files: &[PathBuf], flags: &[&str]) -> (u64, String) {
    let (mut n, mut text) = (0, String::new());
    for f in files {
        let o = flatlsm(&[&["dump", s(f)], flags].concat());
        assert!(o.ok, "{}", o.stderr);
        n += o
            .stderr
            .trim()
            .trim_end_matches(" records")
            .parse::<u64>()
            .unwrap();
        text += &o.stdout;
    }
    (n, text)
}

#[test]
fn dump_selects_a_key_range_and_a_limit_and_shows_sst_properties() {
    let t = tempfile::tempdir().unwrap();
    let db = small_db(t.path());
    ok(&["flush", "--db", s(&db)]);
    ok(&["put", "--db", s(&db), "late", "in-pm"]);
    let ssts = files_ending(&db, ".sst");
    let (n, text) = dump_all(&ssts, &["--from", "a2", "--to", "a5"]);
    assert_eq!(n, 3, "{text}");
    for (k, present) in [("a1", false), ("a2", true), ("a4", true), ("a5", false)] {
        assert_eq!(text.contains(&format!("'{k}' @ ")), present, "{k}: {text}");
    }
    assert_eq!(dump_all(&ssts, &["--limit", "1"]).0, ssts.len() as u64);
    let (n, b) = dump_all(&ssts, &["--from", "b", "--limit", "1"]);
    let records: Vec<&str> = b.lines().filter(|l| l.contains(" @ ")).collect();
    assert!(n >= 1 && records.iter().all(|l| l.starts_with("'b")), "{b}");
    let hex = dump_all(&ssts, &["--hex", "--from", "6233"]).1;
    assert!(hex.contains("6233 @ ") && !hex.contains("6232 @ "), "{hex}");
    let (n, props) = dump_all(&ssts[..1], &["--show-properties", "--limit", "0"]);
    assert_eq!(n, 0);
    for field in [
        "file size: ",
        "entries: ",
        "data blocks: ",
        "index block: ",
        "filter block: ",
        "bits per entry",
        "smallest key: '",
        "largest key: '",
    ] {
        assert!(props.contains(field), "{field} missing: {props}");
    }
    let pm = files_ending(&db.join("pm"), ".pmlog");
    assert_eq!(dump_all(&pm, &["--from", "late", "--to", "latf"]).0, 1);
    assert_eq!(dump_all(&pm, &["--from", "m"]).0, 0);
    assert_eq!(
        dump_all(&files_ending(&db, ".vlog"), &["--limit", "1"]).0,
        1
    );
    let manifest = first_named(&db, |n| n.starts_with("MANIFEST-"));
    refused(
        &["dump", s(&manifest), "--limit", "1"],
        "applies only to SSTs",
    );
    refused(
        &["dump", s(&db.join("CURRENT")), "--show-properties"],
        "properties are shown only for SSTs",
    );
}
