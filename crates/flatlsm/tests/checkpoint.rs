//! `Db::checkpoint`: an openable copy made while the source keeps writing, on every profile;
//! hard links or copies; refusals.

mod common;

use flatlsm::{CheckpointOptions, Db, Error, Options, PmModeOption};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Each profile with PM in a directory (emulated, under /dev/shm when there is one).
fn profiles(pm: &Path) -> Vec<(&'static str, Options)> {
    let on_dir = |mut o: Options| {
        o.pm_device = None;
        o.pm_path(pm).pm_mode(PmModeOption::Emulated)
    };
    vec![
        ("flatlsm", on_dir(common::tiny_options(2))),
        ("leveled", on_dir(common::leveled(2, true))),
        ("novelsm", on_dir(common::novelsm(false))),
        ("matrixkv", on_dir(common::matrixkv())),
        ("slmdb", on_dir(common::slmdb())),
    ]
}

fn pm_dir() -> tempfile::TempDir {
    match Path::new("/dev/shm").is_dir() {
        true => tempfile::tempdir_in("/dev/shm").unwrap(),
        false => tempfile::tempdir().unwrap(),
    }
}

fn value(i: u32) -> Vec<u8> {
    vec![(i % 251) as u8; 50 + (i as usize % 400)]
}

#[test]
fn a_checkpoint_taken_while_writing_opens_with_every_earlier_write() {
    for (name, opts) in profiles(pm_dir().path()) {
        let (t, pm) = (tempfile::tempdir().unwrap(), pm_dir());
        let opts = opts.pm_path(pm.path());
        let db = Arc::new(Db::open(t.path().join("db"), opts.clone()).unwrap());
        for i in 0..2000 {
            db.put(format!("k{i:05}"), value(i)).unwrap();
        }
        db.delete_range("k00100", "k00200").unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut i = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    db.put(format!("late{i:06}"), value(i)).unwrap();
                    i += 1;
                }
            })
        };
        let copy = t.path().join("copy");
        db.checkpoint(&copy).unwrap();
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap();
        let mut copy_opts = opts.clone().pm_mode(PmModeOption::Msync);
        copy_opts.pm_path = None;
        let c = Db::open(&copy, copy_opts).unwrap();
        let early = c.prefix("k").unwrap().count();
        assert_eq!(early, 1900, "{name}: the copy lacks acknowledged writes");
        assert_eq!(c.get("k00001").unwrap(), Some(value(1)), "{name}");
        assert_eq!(c.get("k00150").unwrap(), None, "{name}");
        c.put("only-in-copy", "x").unwrap();
        assert_eq!(
            db.get("only-in-copy").unwrap(),
            None,
            "{name}: copy and source share state"
        );
        assert_eq!(
            db.prefix("k").unwrap().count(),
            1900,
            "{name}: the source changed"
        );
    }
}

#[test]
fn copies_share_no_inode_with_the_source_and_bad_targets_are_refused() {
    let (t, pm) = (tempfile::tempdir().unwrap(), pm_dir());
    let opts = Options::default()
        .pm_path(pm.path())
        .pm_mode(PmModeOption::Emulated);
    let db = Db::open(t.path().join("db"), opts).unwrap();
    for i in 0..500 {
        db.put(format!("k{i}"), value(i)).unwrap();
    }
    db.flush().unwrap();
    let copy = t.path().join("copy");
    db.checkpoint_opt(&copy, &CheckpointOptions::default().hard_links(false))
        .unwrap();
    use std::os::unix::fs::MetadataExt;
    for e in std::fs::read_dir(&copy).unwrap() {
        let e = e.unwrap();
        if e.path().is_file() {
            assert_eq!(e.metadata().unwrap().nlink(), 1, "{:?} is linked", e.path());
        }
    }
    let again = db.checkpoint(&copy).unwrap_err();
    assert!(matches!(again, Error::InvalidArgument(_)), "{again}");
    let c = Db::open(&copy, Options::default()).unwrap();
    assert_eq!(c.iter().unwrap().count(), 500);
}

/// Regression: a checkpoint took the compaction lock before `write_lock`; a writer holding
/// `write_lock` waited for a flush, the MatrixKV flush for container room, and the column
/// compaction that frees it for the checkpoint's compaction lock: all four hung. Checkpoints
/// while a writer keeps a small container full must all finish (a watchdog fails the test
/// instead of hanging).
#[test]
fn checkpoints_beside_a_writer_filling_the_matrix_container_never_deadlock() {
    let (t, pm) = (tempfile::tempdir().unwrap(), pm_dir());
    let opts = profiles(pm.path()).remove(3).1;
    let db = Arc::new(Db::open(t.path().join("db"), opts).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            for i in 0u32.. {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                db.put(format!("k{:06}", i % 20_000), value(i)).unwrap();
            }
        })
    };
    let (done, finished) = std::sync::mpsc::channel();
    let base = t.path().to_path_buf();
    let checkpoints = std::thread::spawn(move || {
        for n in 0..12 {
            db.checkpoint(base.join(format!("copy{n}"))).unwrap();
        }
        done.send(()).unwrap();
    });
    let waited = finished.recv_timeout(std::time::Duration::from_secs(120));
    assert!(waited.is_ok(), "checkpoints did not finish: deadlock");
    stop.store(true, Ordering::Relaxed);
    checkpoints.join().unwrap();
    writer.join().unwrap();
}
