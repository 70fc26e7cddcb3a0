//! End-to-end runs of `export`, `import` and `approxsize`: binary keys and values (line feeds,
//! tabs, carriage returns, backslashes, 0xFF bytes, empty values, values in the value log)
//! survive export → import → export unchanged in both line formats and at any batch size; a
//! malformed line stops the import at its number with what was before it written; approxsize
//! of half the keys is about half the total.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

struct Out {
    ok: bool,
    stdout: Vec<u8>,
    stderr: String,
}

/// Runs `flatlsm args` with `stdin` as its standard input.
fn run(args: &[&str], stdin: &[u8]) -> Out {
    let mut child = Command::new(env!("CARGO_BIN_EXE_flatlsm"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let _ = input.write_all(stdin);
    drop(input);
    let o = child.wait_with_output().unwrap();
    Out {
        ok: o.status.success(),
        stdout: o.stdout,
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn ok(args: &[&str]) -> Vec<u8> {
    let o = run(args, b"");
    assert!(o.ok, "flatlsm {args:?} failed: {}", o.stderr);
    o.stdout
}

/// A refusal: exit code 1 and one line on stderr containing `needle`.
fn refused(o: Out, needle: &str) {
    assert!(!o.ok, "should fail");
    assert_eq!(o.stderr.trim_end().lines().count(), 1, "{}", o.stderr);
    assert!(o.stderr.contains(needle), "{}", o.stderr);
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Keys and values no line format can take raw, a value in the value log, and 2,500 plain ones.
fn awkward_pairs() -> Vec<(Vec<u8>, Vec<u8>)> {
    let all_bytes: Vec<u8> = (0..=255).cycle().take(3000).collect();
    let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = vec![
        (b"line\nfeed".to_vec(), b"tab\there".to_vec()),
        (b"cr\r\n".to_vec(), b"back\\slash\\x41".to_vec()),
        (vec![0xff, 0xff, 0x00], vec![0xff; 5]),
        (b"empty value".to_vec(), Vec::new()),
        (b"in the value log".to_vec(), all_bytes),
        ("caf\u{e9}".as_bytes().to_vec(), b" spaces ".to_vec()),
    ];
    pairs.extend((0..2500).map(|i| (format!("k{i:05}").into_bytes(), vec![b'v'; i % 40])));
    pairs
}

fn source_db(dir: &Path) -> PathBuf {
    let db = dir.join("src");
    let mut o = flatlsm::Options::default();
    o.create_if_missing = true;
    let d = flatlsm::Db::open(&db, o).unwrap();
    for (k, v) in awkward_pairs() {
        d.put(k, v).unwrap();
    }
    d.close().unwrap();
    db
}

fn assert_holds_every_pair(db: &Path) {
    let d = flatlsm::Db::open(db, flatlsm::Options::default()).unwrap();
    for (k, v) in awkward_pairs() {
        assert_eq!(d.get(&k).unwrap(), Some(v), "{k:?}");
    }
    assert_eq!(d.iter().unwrap().count(), awkward_pairs().len());
}

#[test]
fn export_import_export_round_trips_binary_pairs_in_text_and_hex() {
    let t = tempfile::tempdir().unwrap();
    let src = source_db(t.path());
    for (i, flags) in [vec![], vec!["--hex"]].into_iter().enumerate() {
        let first = ok(&[&["export", "--db", s(&src)], &flags[..]].concat());
        assert_eq!(first.iter().filter(|&&b| b == b'\n').count(), 2506);
        let file = t.path().join(format!("export-{i}"));
        std::fs::write(&file, &first).unwrap();
        let dst = t.path().join(format!("dst-{i}"));
        let import = [
            "import",
            "--db",
            s(&dst),
            "--create-if-missing",
            "--input",
            s(&file),
        ];
        ok(&[&import[..], &flags[..], &["--batch-size", "100"]].concat());
        assert_holds_every_pair(&dst);
        let again = ok(&[&["export", "--db", s(&dst)], &flags[..]].concat());
        assert!(first == again, "export {flags:?} differs after import");
    }
}

#[test]
fn text_export_escapes_what_a_line_cannot_hold() {
    let t = tempfile::tempdir().unwrap();
    let src = source_db(t.path());
    let text = String::from_utf8(ok(&["export", "--db", s(&src)])).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "caf\\xc3\\xa9\t spaces ");
    assert!(lines.contains(&"cr\\r\\n\tback\\\\slash\\\\x41"), "{text}");
    assert!(lines.contains(&"empty value\t"), "{text}");
    assert!(lines.contains(&"line\\nfeed\ttab\\there"), "{text}");
    assert!(
        lines.contains(&"\\xff\\xff\\x00\t\\xff\\xff\\xff\\xff\\xff"),
        "{text}"
    );
    let hex = ok(&[
        "export",
        "--db",
        s(&src),
        "--hex",
        "--prefix",
        "6b3030303031",
    ]);
    assert_eq!(hex, b"6b3030303031 76\n");
}

#[test]
fn export_to_a_file_honours_range_and_prefix_and_leaves_no_partial_file() {
    let t = tempfile::tempdir().unwrap();
    let src = source_db(t.path());
    let out = t.path().join("range.txt");
    let o = run(
        &[
            "export",
            "--db",
            s(&src),
            "--from",
            "k00010",
            "--to",
            "k00013",
            "-o",
            s(&out),
        ],
        b"",
    );
    assert!(o.ok && o.stdout.is_empty(), "{}", o.stderr);
    assert!(o.stderr.contains("exported 3 pairs"), "{}", o.stderr);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        text,
        "k00010\tvvvvvvvvvv\nk00011\tvvvvvvvvvvv\nk00012\tvvvvvvvvvvvv\n"
    );
    let quiet = run(
        &["export", "--db", s(&src), "--prefix", "k0249", "--quiet"],
        b"",
    );
    assert!(quiet.ok && quiet.stderr.is_empty(), "{}", quiet.stderr);
    assert_eq!(quiet.stdout.iter().filter(|&&b| b == b'\n').count(), 10);
    let names: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| n.to_string_lossy().ends_with(".partial")),
        "{names:?}"
    );
}

#[test]
fn a_malformed_line_stops_the_import_at_its_number_keeping_the_lines_before() {
    let input = b"a\t1\nb\t2\nno separator\nd\t4\n";
    for batch in ["1", "1000"] {
        let t = tempfile::tempdir().unwrap();
        let db = t.path().join("db");
        let args = [
            "import",
            "--db",
            s(&db),
            "--create-if-missing",
            "--batch-size",
            batch,
        ];
        refused(run(&args, input), "line 3: expected KEY<TAB>VALUE");
        let left = ok(&["export", "--db", s(&db), "--quiet"]);
        assert_eq!(left, b"a\t1\nb\t2\n", "batch size {batch}");
    }
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    let hex = ["import", "--db", s(&db), "--create-if-missing", "--hex"];
    refused(
        run(&hex, b"61 31\n6g 32\n"),
        "line 2: key: expected hex digits at byte 0",
    );
    refused(
        run(&hex, b"61 31\r\n"),
        "line 1: value: expected hex digits",
    );
    let text = ["import", "--db", s(&db)];
    refused(
        run(&text, b"a\t1\r\n"),
        "line 1: value: raw carriage return",
    );
    refused(
        run(&text, b"a\\q\t1\n"),
        "line 1: key: bad escape at byte 1",
    );
    assert_eq!(ok(&["export", "--db", s(&db), "--hex", "-q"]), b"61 31\n");
}

#[test]
fn import_refuses_a_missing_input_or_database_and_creates_nothing() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    let missing = t.path().join("missing.txt");
    let args = [
        "import",
        "--db",
        s(&db),
        "--create-if-missing",
        "-i",
        s(&missing),
    ];
    refused(run(&args, b""), "missing.txt");
    refused(
        run(&["import", "--db", s(&db)], b"a\t1\n"),
        "does not exist",
    );
    let zero = run(&["import", "--db", s(&db), "--batch-size", "0"], b"");
    assert!(
        !zero.ok && zero.stderr.contains("--batch-size"),
        "{}",
        zero.stderr
    );
    assert!(!db.exists());
    let o = run(
        &["import", "--db", s(&db), "--create-if-missing"],
        b"a\t1\n\t\n",
    );
    assert!(
        o.ok && o.stderr.contains("imported 2 pairs"),
        "{}",
        o.stderr
    );
}

fn bytes_of(args: &[&str]) -> u64 {
    let out = String::from_utf8(ok(args)).unwrap();
    out.trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {out}"))
}

#[test]
fn approxsize_of_half_the_keys_is_about_half_the_total() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("db");
    let mut o = flatlsm::Options::default();
    o.create_if_missing = true;
    let d = flatlsm::Db::open(&db, o).unwrap();
    let mut x = 1u64; // a linear congruential sequence: values no block compression shrinks
    for i in 0..10_000 {
        let value: Vec<u8> = (0..100)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 56) as u8
            })
            .collect();
        d.put(format!("key{i:06}"), value).unwrap();
    }
    d.compact_range(None, None).unwrap();
    d.close().unwrap();
    let all = bytes_of(&["approxsize", "--db", s(&db)]);
    assert!(all >= 1_000_000, "{all}");
    let half = bytes_of(&["approxsize", "--db", s(&db), "--to", "key005000"]);
    let ratio = half as f64 / (all as f64 / 2.0);
    assert!((0.7..=1.3).contains(&ratio), "{half} of {all}");
    let hex_from = "6b6579303035303030"; // key005000
    let rest = bytes_of(&["approxsize", "--db", s(&db), "--hex", "--from", hex_from]);
    assert!(
        (0.7..=1.3).contains(&(rest as f64 / (all as f64 / 2.0))),
        "{rest} of {all}"
    );
    let empty = [
        "approxsize",
        "--db",
        s(&db),
        "--from",
        "key000100",
        "--to",
        "key000100",
    ];
    assert_eq!(bytes_of(&empty), 0);
    assert_eq!(bytes_of(&["approxsize", "--db", s(&db), "--from", "x"]), 0);
}
