//! Unit tests of the OPTIONS file: round trip, checksum, damage, forward compatibility, and
//! which files open keeps.

use super::*;
use crate::options::text::stored_values;
use crate::options::text::tests::every_field_changed;
use std::path::PathBuf;

fn file() -> PathBuf {
    PathBuf::from("/db/OPTIONS-000003")
}

/// `text` with its checksum recomputed (as a careful hand edit would).
fn resealed(text: &str) -> Vec<u8> {
    let start = text.rfind(CHECKSUM_SECTION).unwrap();
    let body = &text[..start];
    format!(
        "{body}{CHECKSUM_SECTION}crc32c = \"{:08x}\"\n",
        crc32c(body.as_bytes())
    )
    .into_bytes()
}

fn detail(e: Error) -> (PathBuf, String) {
    match e {
        Error::Corruption { file, detail, .. } => (file, detail),
        other => panic!("expected corruption, got {other}"),
    }
}

#[test]
fn every_stored_field_survives_the_file() {
    let changed = every_field_changed();
    let decoded = decode(encode(&changed).as_bytes(), &file()).unwrap();
    assert_eq!(stored_values(&decoded), stored_values(&changed));
    assert!(
        decoded.create_if_missing && !decoded.allow_missing_pm,
        "per-open: defaults"
    );
}

#[test]
fn options_file_names_round_trip_and_other_names_are_none() {
    assert_eq!(options_file_name(7), "OPTIONS-000007");
    assert_eq!(parse_options_file_name("OPTIONS-000007"), Some(7));
    assert_eq!(parse_options_file_name("OPTIONS-1234567"), Some(1_234_567));
    for bad in [
        "OPTIONS-7",
        "OPTIONS-0000007",
        "OPTIONS-000007.tmp",
        "OPTIONS",
        "LOG",
    ] {
        assert_eq!(parse_options_file_name(bad), None, "{bad}");
    }
}

#[test]
fn a_damaged_options_file_is_refused_naming_file_and_line() {
    let text = encode(&Options::default());
    let damaged = text.replacen("pmtable_size = 67108864", "pmtable_size = 67108865", 1);
    let (path, why) = detail(decode(damaged.as_bytes(), &file()).unwrap_err());
    assert_eq!(path, file());
    assert!(why.contains("checksum mismatch"), "{why}");
    let line = 1 + text.lines().position(|l| l == "[checksum]").unwrap();
    assert!(why.starts_with(&format!("line {line}:")), "{why}");
}

#[test]
fn a_truncated_options_file_is_refused() {
    let text = encode(&Options::default());
    let cut = &text.as_bytes()[..text.len() - 5];
    let (_, why) = detail(decode(cut, &file()).unwrap_err());
    assert!(why.contains("crc32c"), "{why}");
    let (_, why) = detail(decode(&cut[..100], &file()).unwrap_err());
    assert!(why.contains("no [checksum] section"), "{why}");
}

#[test]
fn unknown_names_and_sections_are_skipped_and_known_ones_still_apply() {
    let text = encode(&Options::default().pmtable_size(1 << 20));
    let edited = text
        .replacen("[options]\n", "[options]\nfuture_knob = 3\n", 1)
        .replacen("[slmdb]\n", "[future]\nx = \"y\"\n\n[slmdb]\n", 1);
    let decoded = decode(&resealed(&edited), &file()).unwrap();
    assert_eq!(decoded.pmtable_size, 1 << 20);
}

#[test]
fn a_bad_value_under_a_valid_checksum_names_the_option_line_and_expectation() {
    let text = encode(&Options::default());
    let edited = text.replacen("block_size = 4096", "block_size = large", 1);
    let line = 1 + edited
        .lines()
        .position(|l| l.starts_with("block_size"))
        .unwrap();
    let (_, why) = detail(decode(&resealed(&edited), &file()).unwrap_err());
    assert!(
        why.starts_with(&format!("line {line}: block_size: expected an integer")),
        "{why}"
    );
    let edited = text.replacen("format = 1", "format = 2", 1);
    let (_, why) = detail(decode(&resealed(&edited), &file()).unwrap_err());
    assert!(why.contains("format 2 is not the format 1"), "{why}");
    let edited = text.replacen("block_size = 4096", "block_size: 4096", 1);
    let (_, why) = detail(decode(&resealed(&edited), &file()).unwrap_err());
    assert!(why.contains("expected `name = value`"), "{why}");
}

#[test]
fn open_keeps_the_two_newest_and_rewrites_only_on_a_change() {
    let dir = tempfile::tempdir().unwrap();
    let (fs, db) = (OsFileSystem, dir.path());
    let names = || {
        let mut n: Vec<String> = fs.list_dir(db).unwrap();
        n.sort();
        n
    };
    assert!(load_options_from(&fs, db).unwrap().is_none());
    for size in [1 << 20, 1 << 20, 2 << 20, 4 << 20] {
        write_options_file(&fs, db, &Options::default().pmtable_size(size)).unwrap();
    }
    assert_eq!(names(), ["OPTIONS-000002", "OPTIONS-000003"]);
    let loaded = load_options_from(&fs, db).unwrap().unwrap();
    assert_eq!(loaded.pmtable_size, 4 << 20);
    let missing = load_options_from(&fs, &db.join("nothing")).unwrap();
    assert!(missing.is_none());
}
