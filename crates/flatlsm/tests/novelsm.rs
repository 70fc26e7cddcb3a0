//! The `novelsm` profile through the public API: persistent PM skiplists recovered in place at
//! reopen (no write-ahead log), flushed into the leveled SSD tree, the profile enforced, a
//! missing skiplist refused.

mod common;

use flatlsm::{Db, Profile};
use std::path::Path;

fn opts(dir: &Path) -> flatlsm::Options {
    let mut o = common::novelsm(false);
    o.pm_device = None;
    o.pm_path = Some(dir.join("pm"));
    o.pm_mode = flatlsm::PmModeOption::Msync;
    o
}

fn regions(pm: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(pm)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".pmskl"))
        .collect();
    names.sort();
    names
}

/// Writes live in PM skiplists without a log; a reopen recovers them in place, and flushing
/// moves them into SSTables and deletes the skiplists.
#[test]
fn skiplists_are_recovered_in_place_and_deleted_after_their_flush() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(dir.path());
    o.background_work = false;
    let db = Db::open(dir.path().join("db"), o.clone()).unwrap();
    for i in 0..2000u32 {
        let v = format!("value-{i}-{}", "x".repeat(i as usize % 200));
        db.put(format!("k{i:05}").as_bytes(), v.as_bytes()).unwrap();
    }
    assert!(
        regions(&dir.path().join("pm")).len() > 1,
        "no skiplist was sealed"
    );
    drop(db);
    let db = Db::open(dir.path().join("db"), o.clone()).unwrap();
    for i in (0..2000u32).step_by(37) {
        let got = db.get(format!("k{i:05}").as_bytes()).unwrap();
        assert!(got.unwrap().starts_with(format!("value-{i}-").as_bytes()));
    }
    db.flush().unwrap();
    assert_eq!(
        regions(&dir.path().join("pm")).len(),
        1,
        "flushed skiplists must go"
    );
    assert!(!std::fs::read_dir(dir.path().join("db"))
        .unwrap()
        .any(|e| { e.unwrap().file_name().to_string_lossy().ends_with(".log") }));
    assert_eq!(db.stats().profile, Profile::NoveLsm);
}

/// A skiplist the manifest names must be there.
#[test]
fn a_missing_skiplist_is_refused_unless_its_loss_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(dir.path());
    o.background_work = false;
    let db = Db::open(dir.path().join("db"), o.clone()).unwrap();
    db.put(b"k", b"v").unwrap();
    drop(db);
    for name in regions(&dir.path().join("pm")) {
        std::fs::remove_file(dir.path().join("pm").join(name)).unwrap();
    }
    let err = Db::open(dir.path().join("db"), o.clone()).err().unwrap();
    assert!(
        err.is_corruption() && err.to_string().contains(".pmskl"),
        "{err}"
    );
    o.allow_missing_pm = true;
    let db = Db::open(dir.path().join("db"), o).unwrap();
    assert_eq!(db.get(b"k").unwrap(), None);
}

#[test]
fn a_novelsm_database_is_not_opened_as_leveled() {
    let dir = tempfile::tempdir().unwrap();
    drop(Db::open(dir.path().join("db"), opts(dir.path())).unwrap());
    let err = Db::open(dir.path().join("db"), common::leveled(1, false))
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("created with profile 'novelsm'"),
        "{err}"
    );
}

/// Regression: a batch that fits an empty PMTable by its PM Log bytes but not an empty
/// skiplist (whose nodes carry up to 12 links each) was admitted, sealed the mutable skiplist
/// and then failed with `InvalidState`. It is now refused up front with `InvalidArgument`,
/// nothing is sealed, and the database keeps taking writes.
#[test]
fn batch_larger_than_an_empty_skiplist_is_refused_before_anything_is_sealed() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(dir.path());
    o.background_work = false;
    o.pmtable_size = 64 << 10;
    let db = Db::open(dir.path().join("db"), o).unwrap();
    db.put(b"before", b"1").unwrap();
    let mut batch = flatlsm::WriteBatch::new();
    for i in 0..1500u32 {
        batch.put(format!("{i:06}").as_bytes(), b"v"); // ~23 log bytes, ~130 node bytes each
    }
    let err = db.write(&batch).unwrap_err();
    assert!(
        matches!(err, flatlsm::Error::InvalidArgument(ref m) if m.contains("write buffer")),
        "{err}"
    );
    assert_eq!(
        regions(&dir.path().join("pm")).len(),
        1,
        "a skiplist was sealed"
    );
    db.put(b"after", b"2").unwrap();
    assert_eq!(db.get(b"before").unwrap(), Some(b"1".to_vec()));
}

/// The manifest file CURRENT names in `db`.
fn manifest_of(db: &Path) -> std::path::PathBuf {
    let current = std::fs::read_to_string(db.join("CURRENT")).unwrap();
    db.join(current.trim())
}

/// A skiplist's manifest record is queued at its switch, not synced before its first write
/// (as PM Logs' are: `db/buffer_records.rs`). Put back a manifest from before the switches to
/// stand for a crash before the queued records reached it: the regions created after it are
/// in flight and keep their writes, and a region whose creation was interrupted (blank header)
/// is removed rather than refused as damage.
#[test]
fn skiplists_whose_record_was_in_flight_keep_their_writes_and_a_blank_one_goes() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, pm) = (dir.path().join("db"), dir.path().join("pm"));
    let mut o = opts(dir.path());
    o.background_work = false;
    o.flush_immutable_num = o.max_write_buffer_number - 1; // nothing flushed at close
    let db = Db::open(&db_dir, o.clone()).unwrap();
    db.put(b"before", b"the switches").unwrap(); // its skiplist stays named and unflushed
    db.close().unwrap();
    let (manifest, current) = (manifest_of(&db_dir), std::fs::read(db_dir.join("CURRENT")));
    let old = std::fs::read(&manifest).unwrap();
    let db = Db::open(&db_dir, o.clone()).unwrap();
    for i in 0..600u32 {
        db.put(format!("k{i:05}").as_bytes(), [b'v'; 300]).unwrap();
    }
    assert!(regions(&pm).len() > 1, "no skiplist was sealed");
    db.close().unwrap();
    std::fs::remove_file(manifest_of(&db_dir)).unwrap();
    std::fs::write(&manifest, old).unwrap();
    std::fs::write(db_dir.join("CURRENT"), current.unwrap()).unwrap();
    let blank = pm.join("999999.pmskl");
    std::fs::write(&blank, vec![0u8; 128 << 10]).unwrap();
    let db = Db::open(&db_dir, o).expect("the skiplists in flight are kept");
    for i in 0..600u32 {
        let got = db.get(format!("k{i:05}").as_bytes()).unwrap();
        assert_eq!(got.as_deref(), Some(&[b'v'; 300][..]), "key {i}");
    }
    assert_eq!(
        db.get(b"before").unwrap().as_deref(),
        Some(&b"the switches"[..])
    );
    assert!(!blank.exists(), "an interrupted creation is removed");
}
