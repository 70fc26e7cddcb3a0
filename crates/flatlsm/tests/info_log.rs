//! The info log (`LOG`) and the OPTIONS file of a database: what open, flushes and compactions
//! write to the LOG, its rotation across opens, a LOG that cannot be written, and the options
//! stored with the database (read back, kept two deep, damage refused, checked and dumped).

mod common;

use flatlsm::fs::{DirectFile, FileSystem, OsFileSystem, RandomAccessFile, WritableFile};
use flatlsm::inspect::{check_database, dump_file, DumpFormat};
use flatlsm::tool_support::is_database_file_name;
use flatlsm::{load_options, Db, Error, Options, Profile};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

fn log_text(db: &Path) -> String {
    std::fs::read_to_string(db.join("LOG")).unwrap()
}

fn opts(dir: &Path) -> Options {
    let mut o = common::tiny_options(1);
    o.pm_path = Some(dir.join("pm"));
    o.background_work = false;
    o
}

fn fill(db: &Db, n: u32) {
    for i in 0..n {
        db.put(format!("key{i:05}"), vec![b'v'; 200]).unwrap();
    }
}

/// The message of each LOG line (after the timestamp and the thread).
fn messages(text: &str) -> Vec<&str> {
    text.lines()
        .map(|l| l.splitn(3, ' ').nth(2).unwrap_or(""))
        .collect()
}

#[test]
fn log_records_options_at_open_then_a_flush_a_compaction_and_the_close() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Db::open(&path, opts(dir.path()).pmtable_size(96 << 10)).unwrap();
    fill(&db, 600);
    db.compact_range(None, None).unwrap();
    db.close().unwrap();
    let text = log_text(&path);
    let lines = messages(&text);
    assert!(lines[0].starts_with("FlatLSM version "), "{text}");
    assert_eq!(lines[1], format!("DB path: {}", path.display()));
    assert!(lines.contains(&"Options.pmtable_size: 98304"), "{text}");
    assert!(lines.contains(&"Options.profile: \"flatlsm\""), "{text}");
    assert!(
        lines.contains(&"Options.slmdb.btree_size: 1073741824"),
        "{text}"
    );
    let flush = lines
        .iter()
        .find(|l| l.starts_with("[flatlsm] flush: "))
        .expect(&text);
    assert!(
        flush.contains(" SST bytes, ") && flush.contains(" -> SSTs ["),
        "{flush}"
    );
    let compactions = lines
        .iter()
        .filter(|l| l.starts_with("[flatlsm] compaction: "));
    let into_l2: Vec<&&str> = compactions.filter(|l| l.contains(" + L2 [")).collect();
    assert!(
        !into_l2.is_empty() && into_l2[0].contains(" bytes) -> SSTs ["),
        "{text}"
    );
    assert!(lines.iter().any(|l| l.starts_with("opened ")), "{text}");
    assert_eq!(lines.last(), Some(&"database closed"));
    let line = text.lines().next().unwrap();
    let stamp = line.split(' ').next().unwrap();
    assert_eq!(stamp.len(), "2026/11/26-06:30:01.123456".len(), "{line}");
}

#[test]
fn each_open_rotates_the_log_and_keeps_at_most_keep_log_file_num_old_ones() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    for _ in 0..5 {
        Db::open(&path, opts(dir.path()).keep_log_file_num(2))
            .unwrap()
            .close()
            .unwrap();
    }
    let all = names(&path);
    let old: Vec<&String> = all.iter().filter(|n| n.starts_with("LOG.old.")).collect();
    assert_eq!(old.len(), 2, "{all:?}");
    assert!(all.contains(&"LOG".to_string()));
    assert!(all.iter().all(|n| is_database_file_name(n)), "{all:?}");
    let report = check_database(&path, &dir.path().join("pm")).unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
}

/// The OS file system, except that the info log cannot be written (its appends fail).
struct LogFailsFs;

struct FailingFile;

impl WritableFile for FailingFile {
    fn append(&mut self, _: &[u8]) -> io::Result<()> {
        Err(io::Error::other("injected LOG write failure"))
    }
    fn flush(&mut self) -> io::Result<()> {
        Err(io::Error::other("injected LOG flush failure"))
    }
    fn sync(&mut self) -> io::Result<()> {
        Err(io::Error::other("injected LOG sync failure"))
    }
    fn len(&self) -> u64 {
        0
    }
}

impl FileSystem for LogFailsFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        OsFileSystem.create_dir_all(path)
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        match path.file_name().is_some_and(|n| n == "LOG") {
            true => Ok(Box::new(FailingFile)),
            false => OsFileSystem.create(path),
        }
    }
    fn create_direct(&self, path: &Path, direct: bool) -> io::Result<Arc<dyn DirectFile>> {
        OsFileSystem.create_direct(path, direct)
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        OsFileSystem.open_append(path)
    }
    fn open(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        OsFileSystem.open(path)
    }
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        OsFileSystem.read_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        OsFileSystem.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        OsFileSystem.remove_file(path)
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        OsFileSystem.list_dir(path)
    }
    fn exists(&self, path: &Path) -> bool {
        OsFileSystem.exists(path)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        OsFileSystem.sync_dir(path)
    }
}

#[test]
fn a_log_that_cannot_be_written_fails_no_write_flush_or_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut o = opts(dir.path());
    o.file_system = Some(Arc::new(LogFailsFs));
    let db = Db::open(&path, o.clone()).unwrap();
    fill(&db, 600);
    db.compact_range(None, None).unwrap();
    fill(&db, 50);
    assert_eq!(db.stats().background_error, None);
    db.close().unwrap();
    let db = Db::open(&path, o).unwrap();
    assert_eq!(db.get("key00599").unwrap(), Some(vec![b'v'; 200]));
}

#[test]
fn options_come_back_from_the_database_with_profile_sub_options() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut o = common::leveled(1, false);
    o.pm_path = Some(dir.path().join("pm"));
    o.leveled.level0_file_num_compaction_trigger = 3;
    o.leveled.max_bytes_for_level_multiplier = 4.5;
    o.max_open_files = Some(33);
    Db::open(&path, o.clone()).unwrap().close().unwrap();
    let stored = load_options(&path).unwrap().expect("an OPTIONS file");
    assert_eq!(stored.profile, Profile::Leveled);
    assert_eq!(stored.leveled, o.leveled);
    assert_eq!(stored.pmtable_size, o.pmtable_size);
    assert_eq!(stored.max_open_files, Some(33));
    assert_eq!(stored.pm_path, o.pm_path);
    // Reopening with the stored options works as with the originals.
    Db::open(&path, stored).unwrap().close().unwrap();
}

#[test]
fn open_keeps_two_options_files_and_a_database_without_one_loads_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    for size in [64 << 10, 96 << 10, 128 << 10, 128 << 10] {
        let db = Db::open(&path, opts(dir.path()).pmtable_size(size)).unwrap();
        db.close().unwrap();
    }
    let files: Vec<String> = names(&path)
        .into_iter()
        .filter(|n| n.starts_with("OPTIONS-"))
        .collect();
    assert_eq!(files, ["OPTIONS-000002", "OPTIONS-000003"]);
    assert_eq!(
        load_options(&path).unwrap().unwrap().pmtable_size,
        128 << 10
    );
    for f in files {
        std::fs::remove_file(path.join(f)).unwrap();
    }
    assert!(load_options(&path).unwrap().is_none(), "an older database");
}

/// A damaged OPTIONS file is refused by `load_options` and reported by `check`, both naming
/// the file; `dump` prints an intact one option by option.
#[test]
fn a_damaged_options_file_is_refused_and_reported_by_check() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    Db::open(&path, opts(dir.path())).unwrap().close().unwrap();
    let file: PathBuf = path.join("OPTIONS-000001");
    let mut out = Vec::new();
    let printed = dump_file(&file, DumpFormat::Text, &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(
        printed > 40 && out.contains("pmtable_size = 65536\n"),
        "{out}"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replacen("block_size = ", "block_size = 1", 1)).unwrap();
    match load_options(&path).unwrap_err() {
        Error::Corruption {
            file: f, detail, ..
        } => {
            assert_eq!(f, file);
            assert!(
                detail.starts_with("line ") && detail.contains("checksum"),
                "{detail}"
            );
        }
        other => panic!("expected corruption, got {other}"),
    }
    let report = check_database(&path, &dir.path().join("pm")).unwrap();
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert!(report.problems[0].to_string().contains("OPTIONS-000001"));
}
