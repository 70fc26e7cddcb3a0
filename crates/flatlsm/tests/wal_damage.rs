//! Regression tests for issue 29 (item 5, bullets 2 and 3): damage in a write-ahead log other
//! than the newest one's torn tail is a hole in the write order, refused with the file and
//! offset (or, under `wal_point_in_time_recovery`, recovery stops at it and drops everything
//! newer); a log holding writes that the manifest does not name (a manifest cut short) is
//! refused, never deleted as an orphan. `check` reports what open refuses. For `leveled` and
//! `matrixkv` (the designs with write-ahead logs; `novelsm`'s buffers are PM skiplists).

mod common;

use flatlsm::inspect::check_database_with_wal;
use flatlsm::{Db, Error, Options, PmModeOption, Profile};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const PROFILES: [Profile; 2] = [Profile::Leveled, Profile::MatrixKv];

/// Writes and deletes (one batch each; the write at index `i` has sequence `i + 1`).
const OPS: usize = 4000;

/// A database of `profile` in `<dir>/db` (PM, for `matrixkv`, in `<dir>/pm`, msync files so
/// `check` reads the container): no background work, so every write buffer stays unflushed,
/// each in its own log.
struct Setup {
    profile: Profile,
    dir: PathBuf,
}

impl Setup {
    fn new(dir: &Path, profile: Profile) -> Setup {
        let dir = dir.to_path_buf();
        Setup { profile, dir }
    }

    fn db(&self) -> PathBuf {
        self.dir.join("db")
    }

    fn options(&self) -> Options {
        let mut o = match self.profile {
            Profile::MatrixKv => common::matrixkv(),
            _ => common::leveled(1, false),
        };
        o.pm_device = None;
        o.pm_path = Some(self.dir.join("pm"));
        o.pm_mode = PmModeOption::Msync;
        o.background_work = false;
        o.max_write_buffer_number = 10;
        o.flush_immutable_num = 9;
        o.slowdown_immutable_num = Some(10);
        o
    }

    fn wal_dir(&self) -> PathBuf {
        self.options().wal_dir_for(&self.db())
    }

    /// The write-ahead logs present, oldest first.
    fn wals(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(self.wal_dir())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "log"))
            .collect();
        v.sort();
        v
    }

    fn manifest(&self) -> PathBuf {
        let mut v: Vec<PathBuf> = std::fs::read_dir(self.db())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().contains("MANIFEST-"))
            .collect();
        v.sort();
        v.pop().unwrap()
    }

    fn check(&self) -> flatlsm::inspect::CheckReport {
        check_database_with_wal(&self.db(), &self.dir.join("pm"), &self.wal_dir()).unwrap()
    }
}

fn key(i: usize) -> Vec<u8> {
    format!("key{:05}", i % 700).into_bytes()
}

/// Op `i`: a delete of a key written before, or a put.
fn op(i: usize) -> Option<Vec<u8>> {
    (i % 13 != 5).then(|| format!("v{i}-{}", "x".repeat(i % 150)).into_bytes())
}

/// The contents after the first `n` ops.
fn model(n: usize) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut m = BTreeMap::new();
    for i in 0..n {
        match op(i) {
            Some(v) => m.insert(key(i), v),
            None => m.remove(&key(i)),
        };
    }
    m
}

/// Writes every op and closes: several sealed logs and the mutable one's.
fn build(s: &Setup) {
    let db = Db::open(s.db(), s.options()).unwrap();
    for i in 0..OPS {
        match op(i) {
            Some(v) => db.put(key(i), v).unwrap(),
            None => db.delete(key(i)).unwrap(),
        }
    }
    db.close().unwrap();
    let logs = s.wals();
    assert!(logs.len() >= 4, "{:?}: too few logs {logs:?}", s.profile);
    assert!(s.check().is_ok(), "{:?}: {:?}", s.profile, s.check());
}

/// Reads every key the ops touch and compares with `expected`.
fn assert_contents(db: &Db, expected: &BTreeMap<Vec<u8>, Vec<u8>>, what: &str) {
    for i in 0..700 {
        let got = db.get(key(i)).unwrap();
        assert_eq!(got.as_ref(), expected.get(&key(i)), "{what}: key {i}");
    }
}

/// Where each record of a log ends (after its 16-byte header).
fn record_ends(data: &[u8]) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut pos = 16;
    while pos + 12 <= data.len() {
        let len = u32::from_le_bytes(data[pos..pos + 4].try_into().unwrap()) as usize;
        pos += 12 + len;
        ends.push(pos);
    }
    ends
}

/// The open must be refused with `Corruption` naming `file`, and `check` must report a problem
/// naming it too.
fn assert_refused_naming(s: &Setup, file: &Path, what: &str) {
    let err = match Db::open(s.db(), s.options()) {
        Ok(_) => panic!("{:?}, {what}: the open was not refused", s.profile),
        Err(e) => e,
    };
    let Error::Corruption { file: named, .. } = &err else {
        panic!("{:?}, {what}: expected corruption, got {err}", s.profile);
    };
    assert_eq!(named, file, "{:?}, {what}: {err}", s.profile);
    let report = s.check();
    assert!(
        report.problems.iter().any(|p| p.file == file),
        "{:?}, {what}: check did not report {}: {report:?}",
        s.profile,
        file.display()
    );
}

/// Runs `damage` on a fresh database of each profile, then `verify`.
fn each_profile(damage: impl Fn(&Setup) -> PathBuf, verify: impl Fn(&Setup, &Path)) {
    for profile in PROFILES {
        let dir = tempfile::tempdir().unwrap();
        let s = Setup::new(dir.path(), profile);
        build(&s);
        let damaged = damage(&s);
        verify(&s, &damaged);
    }
}

fn cut(path: &Path, len: usize) {
    let data = std::fs::read(path).unwrap();
    std::fs::write(path, &data[..len]).unwrap();
}

/// Regression: a sealed log (synced when its buffer sealed) cut inside its last record was
/// read as a torn tail; its last writes were dropped while the newer logs replayed after them
/// (stale values returned, deleted keys came back) and `check` said OK.
#[test]
fn a_truncated_older_write_ahead_log_is_refused_not_replayed_past() {
    let damage = |s: &Setup| {
        let log = s.wals()[0].clone();
        let len = std::fs::metadata(&log).unwrap().len() as usize;
        cut(&log, len - 7);
        log
    };
    each_profile(damage, |s, log| assert_refused_naming(s, log, "cut"));
}

/// Regression: flipped last bytes of a sealed log made its last record fail its checksum with
/// nothing after it, which was taken for a torn tail and dropped.
#[test]
fn flipped_last_bytes_of_an_older_write_ahead_log_are_refused() {
    let damage = |s: &Setup| {
        let log = s.wals()[1].clone();
        let mut data = std::fs::read(&log).unwrap();
        let n = data.len();
        data[n - 2] ^= 0x5a;
        data[n - 1] ^= 0xa5;
        std::fs::write(&log, &data).unwrap();
        log
    };
    each_profile(damage, |s, log| assert_refused_naming(s, log, "flip"));
}

/// Regression: a sealed log cut exactly at a record boundary reads as a shorter, clean log;
/// the newer log's sequence marker shows the writes between them are missing.
#[test]
fn an_older_log_cut_at_a_record_boundary_is_refused_by_the_sequence_check() {
    let damage = |s: &Setup| {
        let log = s.wals()[0].clone();
        let ends = record_ends(&std::fs::read(&log).unwrap());
        cut(&log, ends[ends.len() - 3]);
        log
    };
    each_profile(damage, |s, log| assert_refused_naming(s, log, "boundary"));
}

/// With `wal_point_in_time_recovery`, the same damage ends recovery at the hole: the writes
/// before it are there, everything newer is dropped (its logs deleted), and the database then
/// opens by default and takes writes, also when a crash kept the dropped logs (put back here).
#[test]
fn point_in_time_recovery_stops_at_the_hole_and_drops_everything_newer() {
    let damage = |s: &Setup| {
        let log = s.wals()[1].clone();
        let len = std::fs::metadata(&log).unwrap().len() as usize;
        cut(&log, len - 7);
        log
    };
    each_profile(damage, |s, log| {
        let dir = log.parent().unwrap();
        let number = log.file_stem().unwrap().to_str().unwrap().parse().unwrap();
        let kept =
            flatlsm_core::wal::replay(&flatlsm::fs::OsFileSystem, dir, number, |_, _, _, _| Ok(()))
                .unwrap()
                .max_sequence as usize;
        let newer: Vec<(PathBuf, Vec<u8>)> = s
            .wals()
            .into_iter()
            .filter(|p| p > log)
            .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
            .collect();
        assert!(!newer.is_empty());
        let mut o = s.options();
        o.wal_point_in_time_recovery = true;
        let db = Db::open(s.db(), o).unwrap();
        assert_contents(&db, &model(kept), "point in time");
        db.put(b"after", b"pit").unwrap();
        db.close().unwrap();
        drop(db);
        assert!(newer.iter().all(|(p, _)| !p.exists()), "dropped logs kept");
        newer
            .iter()
            .for_each(|(p, data)| std::fs::write(p, data).unwrap());
        assert!(s.check().is_ok(), "{:?}: {:?}", s.profile, s.check());
        let db = Db::open(s.db(), s.options()).unwrap();
        let mut expected = model(kept);
        assert_contents(&db, &expected, "reopened");
        expected.insert(b"after".to_vec(), b"pit".to_vec());
        assert_eq!(db.get(b"after").unwrap().as_deref(), Some(&b"pit"[..]));
    });
}

/// Regression (matrixkv, and leveled the same way): a manifest cut by one byte lost its last
/// record, the one naming the newest log; the log was then deleted as an orphan with every
/// write in it (wrong values, resurrected deletes, missing keys) and `check` said OK. Since
/// switches queue their records (`db/buffer_records.rs`), such a log is numbered at or above
/// the next file number of the records left: its record was in flight, and open replays it.
#[test]
fn a_manifest_cut_by_one_byte_never_drops_the_log_its_last_record_named() {
    let damage = |s: &Setup| {
        let manifest = s.manifest();
        let len = std::fs::metadata(&manifest).unwrap().len() as usize;
        cut(&manifest, len - 1);
        s.wals().pop().unwrap()
    };
    each_profile(damage, |s, newest| {
        assert!(newest.exists(), "{:?}: the log was deleted", s.profile);
        let db = Db::open(s.db(), s.options())
            .unwrap_or_else(|e| panic!("{:?}: the log in flight is replayed: {e}", s.profile));
        assert_contents(&db, &model(OPS), &format!("{:?}, manifest cut", s.profile));
        db.close().unwrap();
    });
}

/// The newest log may end in a torn record (a crash during an unsynced append, so before the
/// seal close appends): it is dropped, and the log, no longer the newest once the database
/// runs on, is not refused later.
#[test]
fn the_newest_logs_torn_tail_is_dropped_and_later_opens_accept_the_log() {
    let damage = |s: &Setup| {
        let log = s.wals().pop().unwrap();
        let ends = record_ends(&std::fs::read(&log).unwrap());
        cut(&log, ends[ends.len() - 2] - 3); // the seal gone, the last write torn
        log
    };
    each_profile(damage, |s, _| {
        let db = Db::open(s.db(), s.options()).unwrap();
        assert_contents(&db, &model(OPS - 1), "torn tail");
        for i in 0..OPS / 4 {
            db.put(format!("more{i}"), [b'm'; 80]).unwrap();
        }
        db.close().unwrap();
        drop(db);
        assert!(s.check().is_ok(), "{:?}: {:?}", s.profile, s.check());
        let db = Db::open(s.db(), s.options()).unwrap();
        assert_contents(&db, &model(OPS - 1), "reopened");
    });
}

/// Regression (matrixkv): with rows recorded, a missing matrix container failed the open with
/// an I/O error ("opening PM region ... No such file") after the open had started writing;
/// it is `Corruption` naming the container, decided before anything is written.
#[test]
fn a_missing_matrix_container_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let s = Setup::new(dir.path(), Profile::MatrixKv);
    build(&s);
    let mut o = s.options();
    o.background_work = true;
    let db = Db::open(s.db(), o).unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    drop(db);
    let container = dir.path().join("pm/matrix.pmc");
    std::fs::remove_file(&container).unwrap();
    let log = std::fs::read_to_string(s.db().join("LOG")).unwrap();
    assert_refused_naming(&s, &container, "container removed");
    let after = std::fs::read_to_string(s.db().join("LOG")).unwrap();
    assert_eq!(log, after, "the refused open wrote its info log");
}

/// Range deletes take sequences without a log record: after every write here, so each log
/// ends one sequence before the next log's marker, a gap the manifest's tombstones fill; the
/// logs open as written.
#[test]
fn range_deletes_between_two_logs_are_not_taken_for_missing_writes() {
    for profile in PROFILES {
        let dir = tempfile::tempdir().unwrap();
        let s = Setup::new(dir.path(), profile);
        let db = Db::open(s.db(), s.options()).unwrap();
        for i in 0..200 {
            db.put(key(i), [b'r'; 2000]).unwrap();
            db.delete_range(key(i + 1), key(i + 3)).unwrap();
        }
        db.close().unwrap();
        drop(db);
        assert!(s.wals().len() >= 4, "{profile:?}: too few logs");
        assert!(s.check().is_ok(), "{profile:?}: {:?}", s.check());
        drop(Db::open(s.db(), s.options()).unwrap());
        let db = Db::open(s.db(), s.options()).unwrap();
        assert_eq!(
            db.get(key(199)).unwrap().as_deref(),
            Some(&[b'r'; 2000][..])
        );
    }
}
