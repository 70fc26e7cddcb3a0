//! Unit tests of the info log: line layout, header, rotation, and the failure rule.

use super::*;
use crate::fs::{FaultFs, OsFileSystem};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

fn names(dir: &Path) -> Vec<String> {
    let mut n = OsFileSystem.list_dir(dir).unwrap();
    n.sort();
    n
}

fn read(path: PathBuf) -> String {
    String::from_utf8(std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn timestamps_are_utc_to_the_microsecond() {
    let t = UNIX_EPOCH + Duration::new(1_764_139_801, 123_456_789);
    assert_eq!(timestamp(t), "2025/11/26-06:50:01.123456");
    assert_eq!(timestamp(UNIX_EPOCH), "1970/01/01-00:00:00.000000");
    assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    assert_eq!(civil_from_days(47_541), (2100, 3, 1));
}

#[test]
fn open_writes_version_path_and_every_option_one_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default().pmtable_size(1 << 20);
    let log = InfoLog::open(Arc::new(OsFileSystem), dir.path(), &opts);
    log.line("flush: two\nlines");
    let text = read(dir.path().join("LOG"));
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].ends_with(&format!(" FlatLSM version {}", env!("CARGO_PKG_VERSION"))));
    assert!(lines[1].ends_with(&format!(" DB path: {}", dir.path().display())));
    assert!(text.contains(" Options.pmtable_size: 1048576\n"), "{text}");
    assert!(
        text.contains(" Options.leveled.level0_in_pm: false\n"),
        "{text}"
    );
    assert!(
        text.contains(" Options.allow_missing_pm: false\n"),
        "{text}"
    );
    let options = lines.iter().filter(|l| l.contains(" Options.")).count();
    assert_eq!(options, stored_values(&opts).len() + 6);
    let last = lines.last().unwrap();
    let fields: Vec<&str> = last.splitn(3, ' ').collect();
    assert_eq!(fields[1], thread_label());
    assert_eq!(fields[2], "flush: two lines");
}

#[test]
fn rotation_by_size_keeps_at_most_keep_log_file_num_old_logs() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .max_log_file_size(64 << 10)
        .keep_log_file_num(2);
    let log = InfoLog::open(Arc::new(OsFileSystem), dir.path(), &opts);
    // Lines of about 600 bytes (the test thread's name is long): over four rotations.
    for i in 0..500 {
        log.line(&format!("event {i} {}", "x".repeat(400)));
    }
    let n = names(dir.path());
    assert_eq!(n.len(), 3, "{n:?}");
    assert_eq!(n[0], "LOG");
    let first = read(dir.path().join("LOG"));
    let first = first.lines().next().unwrap();
    assert!(
        first.ends_with(&format!("continued from {}", n[2])),
        "{first}"
    );
    let older = read(dir.path().join(&n[2]));
    assert!(older.len() >= 64 << 10 && !older.contains("FlatLSM version"));
    drop(log);
    // Each open rotates too, and the numbers keep their order.
    InfoLog::open(Arc::new(OsFileSystem), dir.path(), &opts);
    let after = names(dir.path());
    assert_eq!(after.len(), 3);
    assert_eq!(after[1], n[2]);
}

#[test]
fn a_log_write_failure_is_reported_once_and_the_log_stops() {
    let dir = tempfile::tempdir().unwrap();
    let fs = Arc::new(FaultFs::default());
    let log = InfoLog::open(fs.clone(), dir.path(), &Options::default());
    log.line("before");
    fs.fail_writes.store(true, Ordering::SeqCst);
    log.line("lost");
    fs.fail_writes.store(false, Ordering::SeqCst);
    log.line("after");
    let text = read(dir.path().join("LOG"));
    assert!(text.contains(" before\n") && !text.contains("lost") && !text.contains("after"));
    assert!(log.writer.lock().is_none(), "disabled until reopen");
}

#[test]
fn a_log_that_cannot_be_created_is_disabled_without_error() {
    let fs = Arc::new(FaultFs::default());
    fs.disk_full.store(true, Ordering::SeqCst);
    let dir = tempfile::tempdir().unwrap();
    let log = InfoLog::open(fs, dir.path(), &Options::default());
    log.line("nothing");
    assert!(names(dir.path()).is_empty());
}
