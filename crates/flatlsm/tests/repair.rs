//! `flatlsm::repair`: a database whose manifest is gone is rebuilt from its SSTs, value logs
//! and write buffers; a damaged SST is moved to `lost/` and reported; an intact database keeps
//! everything. Contents are compared with a `BTreeMap` model.

mod common;

use flatlsm::{repair, Db, Options, Profile};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Options of `profile` with PM (if any) in `<dir>/pmdir`, small enough for files to pile up.
fn options(dir: &Path, profile: Profile) -> Options {
    common::for_profile(dir, profile)
}

/// A database with data in SSTs (flushed and compacted) and in write buffers.
fn populate(dir: &Path, opts: &Options) -> Model {
    let mut model = Model::new();
    let db = Db::open(dir, opts.clone()).unwrap();
    common::write_rounds(&db, &mut model, "k", 2000, 0);
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    common::write_rounds(&db, &mut model, "k", 2000, 1);
    db.flush().unwrap();
    common::write_rounds(&db, &mut model, "k", 300, 2); // stays in write buffers
    db.close().unwrap();
    model
}

fn assert_contents(dir: &Path, opts: &Options, model: &Model) {
    let db = Db::open(dir, opts.clone()).unwrap();
    for i in 0..2000u32 {
        let key = format!("k-{i:05}").into_bytes();
        assert_eq!(db.get(&key).unwrap(), model.get(&key).cloned(), "key {i}");
    }
    db.close().unwrap();
}

fn remove_manifest(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name == "CURRENT" || name.starts_with("MANIFEST-") {
            std::fs::remove_file(dir.join(name)).unwrap();
        }
    }
}

fn ssts(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect();
    v.sort();
    v
}

fn a_database_without_its_manifest_is_rebuilt(profile: Profile) {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path(), profile);
    let model = populate(dir.path(), &opts);
    assert!(!ssts(dir.path()).is_empty());
    remove_manifest(dir.path());
    let mut refused = opts.clone();
    refused.create_if_missing = false;
    assert!(Db::open(dir.path(), refused).is_err());
    let report = repair(dir.path(), opts.clone()).unwrap();
    assert!(report.is_complete(), "{report}");
    assert_eq!(report.files_kept.len(), ssts(dir.path()).len(), "{report}");
    let separated = opts.kv_separation_threshold != usize::MAX;
    assert_eq!(!report.vlogs_kept.is_empty(), separated, "{report}");
    assert_contents(dir.path(), &opts, &model);
}

#[test]
fn a_flatlsm_database_without_its_manifest_is_rebuilt() {
    a_database_without_its_manifest_is_rebuilt(Profile::FlatLsm);
}

#[test]
fn a_leveled_database_without_its_manifest_is_rebuilt() {
    a_database_without_its_manifest_is_rebuilt(Profile::Leveled);
}

#[test]
fn a_novelsm_database_without_its_manifest_is_rebuilt() {
    a_database_without_its_manifest_is_rebuilt(Profile::NoveLsm);
}

#[test]
fn an_slmdb_database_without_its_manifest_is_rebuilt() {
    a_database_without_its_manifest_is_rebuilt(Profile::SlmDb);
}

#[test]
fn a_matrixkv_database_without_its_manifest_is_rebuilt() {
    a_database_without_its_manifest_is_rebuilt(Profile::MatrixKv);
}

/// MatrixKV's rows (its level 0, in the PM container) become level-0 SSTs: with the old
/// manifest, from each row's first live entry; the container is then free for new rows.
#[test]
fn matrixkv_rows_are_kept_by_repair_as_level_0_files() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path(), Profile::MatrixKv);
    let mut model = populate(dir.path(), &opts);
    let before = ssts(dir.path());
    let report = repair(dir.path(), opts.clone()).unwrap();
    assert!(report.is_complete(), "{report}");
    let new = report.files_kept.iter().filter(|p| !before.contains(p));
    assert!(new.count() > 0, "the rows were written as SSTs: {report}");
    assert_contents(dir.path(), &opts, &model);
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    common::write_rounds(&db, &mut model, "k", 2000, 3); // new rows in the freed container
    db.close().unwrap();
    assert_contents(dir.path(), &opts, &model);
}

/// A MatrixKV row whose entry fails its checksum is left out and reported; the container is
/// copied to lost/ before its pages are freed; every other row is recovered.
#[test]
fn a_damaged_matrixkv_row_is_reported_and_the_container_kept_in_lost() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path(), Profile::MatrixKv);
    let mut model = Model::new();
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    common::write_rounds(&db, &mut model, "a", 300, 0);
    db.flush().unwrap();
    common::write_rounds(&db, &mut model, "b", 300, 0);
    db.flush().unwrap();
    db.close().unwrap();
    let pm = opts.pm_device.clone().expect("a simulated PM device");
    let container = pm.open_region("matrix.pmc").unwrap();
    let page_size = 4 << 10;
    let first_row = (1..container.len() / page_size)
        .map(|p| p * page_size)
        .find(|&at| container.read(at, 8) == b"FLSMROW2")
        .expect("a row");
    container.write(first_row + 600, b"garbage!");
    drop(container);
    let report = repair(dir.path(), opts.clone()).unwrap();
    assert!(!report.is_complete(), "{report}");
    assert!(
        report.notes.iter().any(|n| n.contains("fails its check")),
        "{report}"
    );
    assert!(
        dir.path().join("lost").join("matrix.pmc").exists(),
        "{report}"
    );
    let db = Db::open(dir.path(), opts).unwrap();
    let (mut kept, mut lost) = (0, 0);
    for (key, value) in &model {
        match db.get(key).unwrap() {
            Some(got) => {
                assert_eq!(&got, value);
                kept += 1;
            }
            None => lost += 1,
        }
    }
    assert!(kept >= 300 && lost > 0, "kept {kept}, lost {lost}");
}

/// SLM-DB's B+-tree is an index of the SSTs: lost with the manifest, repair builds it again.
#[test]
fn an_slmdb_index_lost_with_its_manifest_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path(), Profile::SlmDb);
    let model = populate(dir.path(), &opts);
    remove_manifest(dir.path());
    let pm = opts.pm_device.clone().expect("a simulated PM device");
    pm.remove_region("index.pmbt").unwrap();
    let report = repair(dir.path(), opts.clone()).unwrap();
    assert!(report.is_complete(), "{report}");
    assert!(pm
        .list_regions()
        .unwrap()
        .contains(&"index.pmbt".to_string()));
    assert_contents(dir.path(), &opts, &model);
}

/// The states a crash during the tree's rebuild can leave: a half-built tree under the
/// rebuild's name (beside the old tree, or with the old one already removed). Open refuses a
/// database whose SSTs have no tree; repair run again builds it.
#[test]
fn an_slmdb_tree_rebuild_interrupted_by_a_crash_is_redone() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path(), Profile::SlmDb);
    let model = populate(dir.path(), &opts);
    let pm = opts.pm_device.clone().expect("a simulated PM device");
    pm.create_region("index.pmbt.rebuild", 1 << 20).unwrap();
    repair(dir.path(), opts.clone()).unwrap();
    assert_contents(dir.path(), &opts, &model);
    pm.create_region("index.pmbt.rebuild", 1 << 20).unwrap();
    pm.remove_region("index.pmbt").unwrap();
    let err = Db::open(dir.path(), opts.clone()).err().expect("refused");
    assert!(err.to_string().contains("B+-tree"), "{err}");
    repair(dir.path(), opts.clone()).unwrap();
    assert_contents(dir.path(), &opts, &model);
}

/// A manifest damaged in the middle cannot be loaded, but the range tombstones its readable
/// records hold are not lost: deleted keys stay deleted after repair.
#[test]
fn range_deletes_survive_a_repair_of_a_manifest_damaged_after_them() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path(), Profile::Leveled);
    let mut model = populate(dir.path(), &opts);
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    db.delete_range("k-00100", "k-00200").unwrap();
    model.retain(|k, _| !(b"k-00100".as_slice()..b"k-00200".as_slice()).contains(&k.as_slice()));
    for round in 4..7 {
        common::write_rounds(&db, &mut model, "m", 300, round);
        db.flush().unwrap(); // more manifest records after the tombstone's
    }
    db.close().unwrap();
    let manifest = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("MANIFEST-")
        })
        .unwrap();
    let mut listing = Vec::new();
    flatlsm::inspect::dump_file(&manifest, Default::default(), &mut listing).unwrap();
    let offsets: Vec<usize> = String::from_utf8(listing)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix('@')?.parse().ok())
        .collect();
    let mut bytes = std::fs::read(&manifest).unwrap();
    bytes[offsets[offsets.len() - 2] + 12] ^= 0xff; // the last record but one
    std::fs::write(&manifest, &bytes).unwrap();
    assert!(
        Db::open(dir.path(), opts.clone()).is_err(),
        "open refuses the damage"
    );
    let report = repair(dir.path(), opts.clone()).unwrap();
    assert!(
        report.notes.iter().any(|n| n.contains("readable records")),
        "{report}"
    );
    assert_eq!(
        Db::open(dir.path(), opts.clone())
            .unwrap()
            .get("k-00150")
            .unwrap(),
        None,
        "{report}"
    );
    assert_contents(dir.path(), &opts, &model);
}

#[test]
fn write_buffers_are_kept_by_repair() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path(), Profile::FlatLsm);
    let mut model = Model::new();
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    common::write_rounds(&db, &mut model, "k", 100, 0); // never flushed
    drop(db);
    remove_manifest(dir.path());
    let report = repair(dir.path(), opts.clone()).unwrap();
    assert!(!report.buffers_kept.is_empty(), "{report}");
    assert_contents(dir.path(), &opts, &model);
}

#[test]
fn repair_of_an_intact_database_keeps_everything() {
    for profile in [Profile::FlatLsm, Profile::Leveled] {
        let dir = tempfile::tempdir().unwrap();
        let opts = options(dir.path(), profile);
        let model = populate(dir.path(), &opts);
        let levels = files_per_level(dir.path(), &opts);
        let before = ssts(dir.path());
        let report = repair(dir.path(), opts.clone()).unwrap();
        assert!(report.is_complete(), "{report}");
        assert!(report.files_rewritten.is_empty(), "{report}");
        assert_eq!(ssts(dir.path()), before);
        assert_eq!(report.files_kept.len(), before.len());
        assert_eq!(files_per_level(dir.path(), &opts), levels, "{report}");
        assert_contents(dir.path(), &opts, &model);
    }
}

/// With the old manifest readable, files keep their levels: a database with files below
/// level 0 has them there after repair.
fn files_per_level(dir: &Path, opts: &Options) -> Vec<String> {
    let db = Db::open(dir, opts.clone()).unwrap();
    let per_level = (0..7).map(|l| format!("flatlsm.num-files-at-level{l}"));
    let counts: Vec<String> = per_level.map(|p| db.property(&p).unwrap()).collect();
    db.close().unwrap();
    assert!(counts[1..].iter().any(|c| c != "0"), "{counts:?}");
    counts
}

#[test]
fn a_corrupted_sst_is_moved_to_lost_and_the_rest_is_recovered() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path(), Profile::FlatLsm);
    opts.kv_separation_threshold = usize::MAX; // values inline: a lost SST loses only its keys
    let mut model = Model::new();
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    common::write_rounds(&db, &mut model, "a", 500, 0);
    db.flush().unwrap();
    db.wait_for_background_work().unwrap();
    let first = ssts(dir.path());
    common::write_rounds(&db, &mut model, "b", 500, 0);
    db.flush().unwrap();
    db.close().unwrap();
    let victim = ssts(dir.path())
        .into_iter()
        .find(|p| !first.contains(p))
        .expect("the second flush wrote an SST");
    let mut bytes = std::fs::read(&victim).unwrap();
    for b in &mut bytes[8..16] {
        *b ^= 0xff; // inside the first data block
    }
    std::fs::write(&victim, &bytes).unwrap();
    remove_manifest(dir.path());
    let report = repair(dir.path(), opts.clone()).unwrap();
    assert!(!report.is_complete());
    assert_eq!(report.files_lost.len(), 1, "{report}");
    assert_eq!(report.files_lost[0].0, victim);
    assert!(report.to_string().contains("lost"), "{report}");
    let lost = dir.path().join("lost").join(victim.file_name().unwrap());
    assert_eq!(std::fs::read(&lost).unwrap(), bytes, "moved, not deleted");
    let db = Db::open(dir.path(), opts).unwrap();
    for (key, value) in &model {
        let got = db.get(key).unwrap();
        if key.starts_with(b"a") {
            assert_eq!(got.as_ref(), Some(value));
        } else {
            assert!(
                got.is_none() || got.as_ref() == Some(value),
                "no wrong value"
            );
        }
    }
}

#[test]
fn repair_refuses_another_profile() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path(), Profile::FlatLsm);
    populate(dir.path(), &opts);
    let err = repair(dir.path(), common::leveled(1, true)).unwrap_err();
    assert!(err.to_string().contains("profile"), "{err}");
}

/// Regression: repair ordered level 0 by largest sequence alone, but a compaction output can
/// hold an old version of one key and the newest of another while a file left above it holds a
/// middle version of the first; the old version then shadowed the middle one (97 wrong values
/// of 20000 here). Repair now rewrites files whose versions interleave. Whether background
/// compactions leave such files depends on their timing (about one run in five left none, seen
/// in CI; all four tries of `flatlsm` left none once in the twelfth session, under a full
/// `cargo test --workspace`), so each ordered profile tries up to eight seeds until one does
/// (the tries stop at the first that does); every try checks the repaired contents.
#[test]
fn repair_never_lets_an_old_version_in_a_compaction_output_shadow_a_newer_one() {
    for profile in [Profile::Leveled, Profile::FlatLsm, Profile::SlmDb] {
        let ordered = profile != Profile::SlmDb; // SLM-DB's reads compare sequences
        let tries = if ordered { 8 } else { 1 };
        let rewrote = (0..tries).any(|seed| repaired_contents_are_right(profile, 12345 + seed));
        assert_eq!(
            rewrote, ordered,
            "{profile}: files rewritten in any of {tries} tries"
        );
    }
}

/// One try of the scenario above with `seed`: repair twice, then every key and a scan match the
/// model. Returns whether the first repair rewrote files.
fn repaired_contents_are_right(profile: Profile, seed: u64) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path(), profile);
    opts.kv_separation_threshold = usize::MAX;
    let mut model = Model::new();
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let mut x = seed;
    for round in 0..100_000u32 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let key = format!("k-{:05}", (x >> 33) % 20000).into_bytes();
        db.put(&key, common::round_value(round, round)).unwrap();
        model.insert(key, common::round_value(round, round));
    }
    db.close().unwrap();
    remove_manifest(dir.path());
    let report = repair(dir.path(), opts.clone()).unwrap();
    // Repaired again before any open: the manifest is readable now, so its files keep
    // their places and the rewritten inputs still on disk are left out.
    let rewritten = report.files_rewritten.clone();
    let report = repair(dir.path(), opts.clone()).unwrap();
    assert!(report.files_rewritten.is_empty(), "{profile}: {report}");
    let left_out = report
        .notes
        .iter()
        .any(|n| n.contains("not in the old manifest"));
    assert_eq!(left_out, !rewritten.is_empty(), "{profile}: {report}");
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let wrong = model
        .iter()
        .filter(|(k, v)| db.get(k).unwrap().as_ref() != Some(*v));
    assert_eq!(wrong.count(), 0, "{profile}: {report}");
    let scanned: Model = db.iter().unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(scanned, model, "{profile}");
    db.close().unwrap();
    assert!(
        rewritten.iter().all(|p| !p.exists()),
        "{profile}: open removes them"
    );
    !rewritten.is_empty()
}
