//! `Db::open_read_only`: any number of readers at once, never beside a writer, reads as a
//! reopen would, refuses every write, and leaves the database directory and the PM directory
//! byte for byte as they were.

mod common;

use flatlsm::{Db, Error, Options};
use std::collections::BTreeMap;
use std::path::Path;

/// Every file under `dir` with its bytes (PM regions included).
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in walk(dir) {
        let name = entry.strip_prefix(dir).unwrap().display().to_string();
        out.insert(name, std::fs::read(&entry).unwrap());
    }
    out
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        match p.is_dir() {
            true => files.extend(walk(&p)),
            false => files.push(p),
        }
    }
    files
}

/// Options of each profile with PM emulated in DRAM (a PM directory under /dev/shm where
/// there is one: fast); the caller sets the PM directory.
fn profiles() -> Vec<(&'static str, Options)> {
    let pm = |o: Options| {
        o.pm_mode(flatlsm::PmModeOption::Emulated)
            .pmtable_size(256 << 10)
    };
    let mut slmdb = common::slmdb();
    slmdb.pm_device = None;
    let mut matrixkv = common::matrixkv();
    matrixkv.pm_device = None;
    vec![
        ("flatlsm", pm(Options::default())),
        (
            "leveled",
            pm(Options::default().profile(flatlsm::Profile::Leveled)),
        ),
        (
            "novelsm",
            pm(Options::default().profile(flatlsm::Profile::NoveLsm)),
        ),
        ("matrixkv", pm(matrixkv)),
        ("slmdb", pm(slmdb)),
    ]
}

fn fill(db: &Db, n: u32) {
    for i in 0..n {
        db.put(format!("k{i:05}"), vec![i as u8; 100 + i as usize % 300])
            .unwrap();
    }
}

#[test]
fn readers_see_the_data_refuse_writes_and_change_nothing_on_disk() {
    for (name, opts) in profiles() {
        let dir = tempfile::tempdir().unwrap();
        let pm_dir = match Path::new("/dev/shm").is_dir() {
            true => tempfile::tempdir_in("/dev/shm").unwrap(),
            false => tempfile::tempdir().unwrap(),
        };
        let opts = opts.pm_path(pm_dir.path());
        let path = dir.path().join("db");
        let files = || (tree(dir.path()), tree(pm_dir.path()));
        let db = Db::open(&path, opts.clone()).unwrap();
        fill(&db, 3000);
        db.flush().unwrap();
        fill(&db, 500); // also in the write buffers
        db.delete_range("k00100", "k00200").unwrap();
        db.close().unwrap();
        drop(db);
        let before = files();
        let a = Db::open_read_only(&path, opts.clone()).unwrap();
        let b = Db::open_read_only(&path, opts.clone()).unwrap();
        assert_eq!(a.iter().unwrap().count(), 2900, "{name}");
        assert_eq!(b.get("k00001").unwrap(), Some(vec![1u8; 101]), "{name}");
        assert_eq!(b.get("k00150").unwrap(), None, "{name}");
        assert!(matches!(a.put("x", "y"), Err(Error::ReadOnly(_))), "{name}");
        assert!(
            matches!(a.delete_range("a", "b"), Err(Error::ReadOnly(_))),
            "{name}"
        );
        assert!(matches!(a.flush(), Err(Error::ReadOnly(_))), "{name}");
        assert!(matches!(
            a.compact_range(None, None),
            Err(Error::ReadOnly(_))
        ));
        a.wait_for_background_work().unwrap();
        let writer = Db::open(&path, opts.clone());
        assert!(
            matches!(writer, Err(Error::Locked { .. })),
            "{name}: a writer beside readers"
        );
        drop((a, b));
        assert!(
            files() == before,
            "{name}: the read-only opens changed files"
        );
        let db = Db::open(&path, opts.clone()).unwrap();
        let reader = Db::open_read_only(&path, opts);
        assert!(
            matches!(reader, Err(Error::Locked { .. })),
            "{name}: a reader beside a writer"
        );
        assert_eq!(db.iter().unwrap().count(), 2900, "{name}");
    }
}

#[test]
fn a_missing_database_is_refused_and_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nothing");
    let opts = Options::default().pm_path(dir.path().join("pm"));
    let err = Db::open_read_only(&path, opts).err().unwrap();
    assert!(err.to_string().contains("does not exist"), "{err}");
    assert!(!path.exists() && !dir.path().join("pm").exists());
}
