//! Rules of opening. A database and its PM directory belong together: opening with the wrong PM directory, a
//! missing database without `create_if_missing`, or a directory that is not a database is
//! refused with a message that says what to do, and modifies nothing.

mod common;

use flatlsm::{Db, Error, Options, ReadOptions, WriteOptions};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn opts(pm: &Path) -> Options {
    let mut o = common::tiny_options(1);
    o.pm_path = Some(pm.to_path_buf());
    o.pm_mode = flatlsm::PmModeOption::Msync;
    o
}

/// Every path below `dir` (files and directories), to show nothing changed.
fn tree(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            out.insert(e.path());
            if e.path().is_dir() {
                out.extend(tree(&e.path()));
            }
        }
    }
    out
}

fn create(db: &Path, pm: &Path, keys: &[&str]) {
    let d = Db::open(db, opts(pm)).unwrap();
    for k in keys {
        d.put_opt(
            k.as_bytes(),
            b"v",
            &WriteOptions {
                sync: true,
                ..WriteOptions::default()
            },
        )
        .unwrap();
    }
    d.close().unwrap();
}

#[test]
fn opening_with_another_databases_pm_dir_is_refused_and_modifies_nothing() {
    let t = tempfile::tempdir().unwrap();
    let (a, pm_a, b, pm_b) = (
        t.path().join("a"),
        t.path().join("pa"),
        t.path().join("b"),
        t.path().join("pb"),
    );
    create(&a, &pm_a, &["ka"]);
    create(&b, &pm_b, &["kb"]);
    let before = tree(t.path());
    let err = Db::open(&a, opts(&pm_b)).err().expect("must be refused");
    let msg = err.to_string();
    assert!(matches!(err, Error::InvalidState(_)), "{msg}");
    assert!(msg.contains("belongs to another FlatLSM database"), "{msg}");
    assert!(
        msg.contains(&pm_a.display().to_string()),
        "names the right PM dir: {msg}"
    );
    assert_eq!(tree(t.path()), before);
    let d = Db::open(&a, opts(&pm_a)).unwrap();
    assert_eq!(d.get(b"ka").unwrap(), Some(b"v".to_vec()));
}

#[test]
fn opening_with_an_empty_pm_dir_is_refused_unless_allow_missing_pm() {
    let t = tempfile::tempdir().unwrap();
    let (db, pm, elsewhere) = (
        t.path().join("db"),
        t.path().join("pm"),
        t.path().join("new-pm"),
    );
    let d = Db::open(&db, opts(&pm)).unwrap();
    d.put_opt(
        b"flushed",
        b"1",
        &WriteOptions {
            sync: true,
            ..WriteOptions::default()
        },
    )
    .unwrap();
    d.flush().unwrap();
    d.put_opt(
        b"only-in-pm",
        b"2",
        &WriteOptions {
            sync: true,
            ..WriteOptions::default()
        },
    )
    .unwrap();
    d.close().unwrap();
    let before = tree(t.path());
    let msg = Db::open(&db, opts(&elsewhere))
        .err()
        .expect("refused")
        .to_string();
    assert!(msg.contains("is not the PM directory of"), "{msg}");
    assert!(
        msg.contains("--pm-path") && msg.contains("allow_missing_pm"),
        "{msg}"
    );
    assert_eq!(tree(t.path()), before, "nothing created or changed");
    let mut o = opts(&elsewhere);
    o.allow_missing_pm = true;
    let d = Db::open(&db, o).unwrap();
    let r = ReadOptions::default();
    assert_eq!(d.get_opt(b"flushed", &r).unwrap(), Some(b"1".to_vec()));
    assert_eq!(
        d.get_opt(b"only-in-pm", &r).unwrap(),
        None,
        "the accepted loss"
    );
    d.close().unwrap();
    Db::open(&db, opts(&elsewhere)).expect("the new PM directory is now this database's");
}

#[test]
fn new_database_refuses_a_pm_dir_holding_logs_of_another_database() {
    let t = tempfile::tempdir().unwrap();
    let (a, pm, b) = (t.path().join("a"), t.path().join("pm"), t.path().join("b"));
    create(&a, &pm, &["ka"]);
    let msg = Db::open(&b, opts(&pm)).err().expect("refused").to_string();
    assert!(msg.contains("belongs to another FlatLSM database"), "{msg}");
    assert!(!b.exists(), "the new database directory was not created");
    // Without the identity file (a database made by an older build) the PM Logs still give it away.
    std::fs::remove_file(pm.join("IDENTITY")).unwrap();
    let msg = Db::open(&b, opts(&pm)).err().expect("refused").to_string();
    assert!(msg.contains("holds PM Logs"), "{msg}");
    assert!(!b.exists());
}

#[test]
fn missing_database_without_create_if_missing_is_refused_and_not_created() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("nope");
    let mut o = opts(&t.path().join("pm"));
    o.create_if_missing = false;
    let msg = Db::open(&db, o).err().expect("refused").to_string();
    assert!(msg.contains("does not exist"), "{msg}");
    assert!(tree(t.path()).is_empty());
}

#[test]
fn directory_that_is_not_a_database_is_refused_even_without_create_if_missing() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("notes.txt"), b"mine").unwrap();
    let before = tree(t.path());
    for create_if_missing in [true, false] {
        let mut o = opts(&t.path().join("pm"));
        o.create_if_missing = create_if_missing;
        let msg = Db::open(t.path(), o).err().expect("refused").to_string();
        assert!(msg.contains("is not a FlatLSM database"), "{msg}");
        assert_eq!(tree(t.path()), before);
    }
}

#[test]
fn second_open_in_one_process_is_refused_with_what_to_do() {
    let t = tempfile::tempdir().unwrap();
    let (db, pm) = (t.path().join("db"), t.path().join("pm"));
    let first = Db::open(&db, opts(&pm)).unwrap();
    let err = Db::open(&db, opts(&pm)).err().expect("refused");
    assert!(
        matches!(&err, Error::Locked { path, .. } if *path == db),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("already open in this process")
            && msg.contains("close the other handle first"),
        "{msg}"
    );
    drop(first);
}

/// Regression: `close` kept the LOCK until the handle was dropped, so a process could not
/// reopen a database it had closed while the old handle was still in scope.
#[test]
fn close_releases_the_lock_so_the_same_process_can_reopen() {
    let t = tempfile::tempdir().unwrap();
    let (db, pm) = (t.path().join("db"), t.path().join("pm"));
    let first = Db::open(&db, opts(&pm)).unwrap();
    first
        .put_opt(
            b"k",
            b"v",
            &WriteOptions {
                sync: true,
                ..WriteOptions::default()
            },
        )
        .unwrap();
    first.close().unwrap();
    let second = Db::open(&db, opts(&pm)).expect("reopen after close");
    assert_eq!(second.get(b"k").unwrap(), Some(b"v".to_vec()));
    assert!(matches!(first.get(b"k"), Err(Error::Closed)));
}

#[test]
fn second_handle_in_the_same_process_is_refused_and_does_not_break_the_first() {
    let t = tempfile::tempdir().unwrap();
    let (db, pm) = (t.path().join("db"), t.path().join("pm"));
    let first = Db::open(&db, opts(&pm)).unwrap();
    let msg = Db::open(&db, opts(&pm)).err().expect("refused").to_string();
    assert!(msg.contains("already open in this process"), "{msg}");
    first
        .put_opt(
            b"k",
            b"v",
            &WriteOptions {
                sync: true,
                ..WriteOptions::default()
            },
        )
        .unwrap();
    drop(first);
    Db::open(&db, opts(&pm)).expect("reopen after the first handle is gone");
}

/// Regression: the LOCK was an `flock` lock, which every child forked while it was held shares;
/// a process spawned by another thread kept a closed database "locked" until it exec'd, so a
/// reopen right after `close` failed at random ("locked by another process").
#[test]
fn reopen_after_close_while_other_threads_spawn_processes_is_not_refused() {
    let t = tempfile::tempdir().unwrap();
    let (db, pm) = (t.path().join("db"), t.path().join("pm"));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spawner = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = std::process::Command::new("true").status();
            }
        })
    };
    for _ in 0..50 {
        let d = Db::open(&db, opts(&pm)).expect("reopen must not see a stale lock");
        d.close().unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    spawner.join().unwrap();
}

/// The design is recorded when the database is created: `profile_of` reads it back, and a
/// database whose manifest names another profile is refused with the profile to use, before
/// anything is written.
#[test]
fn a_database_of_another_profile_is_refused_before_anything_changes() {
    let dir = tempfile::tempdir().unwrap();
    let (db, pm) = (dir.path().join("db"), dir.path().join("pm"));
    create(&db, &pm, &["a"]);
    assert_eq!(
        flatlsm::profile_of(&db).unwrap(),
        Some(flatlsm::Profile::FlatLsm)
    );
    let fs: std::sync::Arc<dyn flatlsm::fs::FileSystem> =
        std::sync::Arc::new(flatlsm::fs::OsFileSystem);
    let mut state =
        flatlsm_core::version::Manifest::load(&*fs, &db, &flatlsm::tool_support::version_extension)
            .unwrap()
            .state;
    state.profile = Some("matrixkv-next".to_string());
    let number = state.next_file_number;
    state.next_file_number += 1;
    flatlsm_core::version::Manifest::create(fs, &db, number, &state).unwrap();
    let before = tree(dir.path());
    let err = Db::open(&db, opts(&pm))
        .err()
        .expect("opened under the wrong profile");
    let msg = err.to_string();
    assert!(matches!(err, Error::InvalidArgument(_)), "{msg}");
    assert!(
        msg.contains("'matrixkv-next'") && msg.contains("'flatlsm'"),
        "{msg}"
    );
    assert_eq!(tree(dir.path()), before);
    let err = flatlsm::profile_of(&db).unwrap_err().to_string();
    assert!(err.contains("does not know"), "{err}");
}

/// Regression: each open seals the write buffer it recovers, and `close` abandoned the flush
/// that became due, so one `flatlsm put` after another left one more 64 MiB PM Log each time
/// (and wrote slowly: a slowdown after three). `close` now finishes the flushes already due.
#[test]
fn opening_and_closing_in_a_loop_does_not_pile_up_pm_logs() {
    let t = tempfile::tempdir().unwrap();
    let (db, pm) = (t.path().join("db"), t.path().join("pm"));
    for i in 0..10 {
        let d = Db::open(&db, opts(&pm)).unwrap();
        d.put(format!("k{i}"), "v").unwrap();
        d.close().unwrap();
    }
    let d = Db::open(&db, opts(&pm)).unwrap();
    let logs = d.stats().pmtables;
    assert!(
        logs <= d_flush_trigger() + 2,
        "{logs} PM Logs after 10 opens"
    );
    assert_eq!(d.iter().unwrap().count(), 10);
}

fn d_flush_trigger() -> usize {
    Options::default().flush_immutable_num
}
