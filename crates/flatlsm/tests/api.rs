//! The embedding API as a user meets it: keys and values of any `AsRef<[u8]>`, `_opt` forms,
//! range bounds and prefixes, double-ended iterators, `multi_get`, clones sharing one
//! database, and `close` closing every clone.

mod common;

use flatlsm::{Db, Error, ReadOptions, WriteOptions};

fn open() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), common::simulated(1)).unwrap();
    (dir, db)
}

fn keys(it: impl Iterator<Item = flatlsm::Result<(Vec<u8>, Vec<u8>)>>) -> Vec<String> {
    it.map(|r| String::from_utf8(r.unwrap().0).unwrap())
        .collect()
}

#[test]
fn strings_vectors_and_byte_slices_are_all_keys_and_values() {
    let (_dir, db) = open();
    db.put("s", String::from("string")).unwrap();
    db.put(String::from("v"), vec![1u8, 2]).unwrap();
    db.put(b"b", b"bytes").unwrap();
    db.put_opt(
        &b"o"[..],
        "synced",
        &WriteOptions {
            sync: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(db.get("s").unwrap().as_deref(), Some(&b"string"[..]));
    assert_eq!(db.get(String::from("v")).unwrap(), Some(vec![1, 2]));
    db.delete("s").unwrap();
    assert_eq!(db.get_opt("s", &ReadOptions::default()).unwrap(), None);
    assert!(db.insert_if_absent("n", "1").unwrap());
    assert!(!db.insert_if_absent("n", "2").unwrap());
    assert!(db.update_if_present("n", "3").unwrap());
    assert_eq!(db.get("n").unwrap().as_deref(), Some(&b"3"[..]));
}

#[test]
fn ranges_take_every_kind_of_bound_and_prefixes_stop_at_the_prefix() {
    let (_dir, db) = open();
    for k in ["a", "b", "ba", "bz", "c", "d"] {
        db.put(k, "v").unwrap();
    }
    assert_eq!(keys(db.range("b".."c").unwrap()), ["b", "ba", "bz"]);
    assert_eq!(keys(db.range("b"..="c").unwrap()), ["b", "ba", "bz", "c"]);
    assert_eq!(keys(db.range(.."b").unwrap()), ["a"]);
    assert_eq!(keys(db.range("c"..).unwrap()), ["c", "d"]);
    assert_eq!(keys(db.range::<&str>(..).unwrap()).len(), 6);
    assert_eq!(keys(db.prefix("b").unwrap()), ["b", "ba", "bz"]);
    assert_eq!(keys(db.prefix("b").unwrap().rev()), ["bz", "ba", "b"]);
    assert!(keys(db.prefix("x").unwrap()).is_empty());
}

/// Each key once, whichever end it comes from, also after a flush put them in SSTs.
#[test]
fn iterators_walk_from_both_ends_and_meet_once() {
    let (_dir, db) = open();
    for i in 0..500u32 {
        db.put(format!("k{i:04}"), i.to_le_bytes()).unwrap();
    }
    db.flush().unwrap();
    let mut it = db.iter().unwrap();
    let mut seen = Vec::new();
    loop {
        match (it.next(), it.next_back()) {
            (None, None) => break,
            (a, b) => seen.extend(a.into_iter().chain(b).map(|r| r.unwrap().0)),
        }
    }
    seen.sort();
    let want: Vec<Vec<u8>> = (0..500u32)
        .map(|i| format!("k{i:04}").into_bytes())
        .collect();
    assert_eq!(seen, want);
}

/// `multi_get` answers in order, from one view: a snapshot's values, even after overwrites.
#[test]
fn multi_get_answers_in_order_from_one_view() {
    let (_dir, db) = open();
    db.put("a", "1").unwrap();
    db.put("b", "2").unwrap();
    let snap = db.snapshot();
    db.put("a", "10").unwrap();
    db.delete("b").unwrap();
    let now: Vec<_> = db
        .multi_get(["b", "a", "zz"])
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(now, [None, Some(b"10".to_vec()), None]);
    let at = ReadOptions {
        snapshot: Some(&snap),
        ..Default::default()
    };
    let then: Vec<_> = db
        .multi_get_opt(["a", "b"], &at)
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(then, [Some(b"1".to_vec()), Some(b"2".to_vec())]);
}

/// Clones are handles to one database; `close` on any of them closes it for all, and every
/// call then says `Closed`; the lock is released, so it reopens.
#[test]
fn close_on_one_clone_closes_the_database_for_every_clone() {
    let dir = tempfile::tempdir().unwrap();
    let opts = common::simulated(1);
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let other = db.clone();
    std::thread::spawn({
        let db = db.clone();
        move || db.put("from a thread", "v").unwrap()
    })
    .join()
    .unwrap();
    assert_eq!(
        other.get("from a thread").unwrap().as_deref(),
        Some(&b"v"[..])
    );
    db.close().unwrap();
    assert!(matches!(other.put("k", "v"), Err(Error::Closed)));
    assert!(matches!(other.get("k"), Err(Error::Closed)));
    assert!(matches!(other.iter(), Err(Error::Closed)));
    assert!(matches!(other.flush(), Err(Error::Closed)));
    assert!(matches!(
        other.multi_get(["k"]).remove(0),
        Err(Error::Closed)
    ));
    drop((db, other));
    let again = Db::open(dir.path(), opts).unwrap();
    assert_eq!(
        again.get("from a thread").unwrap().as_deref(),
        Some(&b"v"[..])
    );
}

/// With `max_open_files` far below the SSTs there are, every read still succeeds (tables
/// closed and opened again), and 0 is refused by name.
#[test]
fn reads_work_with_fewer_open_files_than_ssts() {
    let dir = tempfile::tempdir().unwrap();
    let opts = common::simulated(1).max_open_files(2usize);
    let db = Db::open(dir.path(), opts).unwrap();
    for round in 0..6u32 {
        for i in 0..300u32 {
            let filler = "x".repeat(60);
            db.put(format!("k{i:04}"), format!("{round}-{i}")).unwrap();
            db.put(format!("f{round}-{i:04}"), &filler).unwrap();
        }
        db.flush().unwrap();
    }
    let ssts: usize = db.stats().levels.iter().map(|l| l.files).sum();
    assert!(ssts > 2, "{ssts} SSTs: the bound is not exercised");
    for _ in 0..2 {
        for i in (0..300u32).step_by(7) {
            let v = db.get(format!("k{i:04}")).unwrap();
            assert_eq!(v, Some(format!("5-{i}").into_bytes()));
        }
    }
    assert_eq!(db.prefix("k").unwrap().count(), 300);
    let zero = tempfile::tempdir().unwrap();
    let err = Db::open(zero.path(), common::simulated(1).max_open_files(0usize)).err();
    assert!(err.unwrap().to_string().contains("max_open_files"));
}
