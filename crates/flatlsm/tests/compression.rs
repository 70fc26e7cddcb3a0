//! SST compression through the public API: every profile that writes SSTs writes them with LZ4
//! and with zstd, reopens and reads everything back; `check` verifies the compressed blocks and
//! `dump` shows them; the default rule writes flush outputs raw and L2 compressed.

mod common;

use flatlsm::inspect::{check_database_with_wal, dump_file, DumpFormat};
use flatlsm::{Compression, Db, Options, PmModeOption};
use std::collections::BTreeMap;
use std::path::Path;

/// A compressible value (repeated text), distinct per key and round.
fn value(i: u32, round: u32) -> Vec<u8> {
    format!("round {round} value of key {i:06};")
        .repeat(2)
        .into_bytes()
}

/// The tiny options of every profile that writes SSTs, by name. PM Logs (`flatlsm`) and the
/// write-ahead logs' PM directory (`matrixkv`) are files in `<db>/pm` made durable by msync, so
/// `check` sees them; the PM skiplists of `novelsm` and `slmdb` (whose msync'd writes are
/// slow) stay on a simulated device, and only their SSTs can be checked (by `dump`).
fn profiles(db: &Path) -> Vec<(&'static str, Options, bool)> {
    let on_disk = |mut o: Options| {
        o.pm_device = None;
        o.pm_path = Some(db.join("pm"));
        o.pm_mode = PmModeOption::Msync;
        o
    };
    vec![
        ("flatlsm", on_disk(common::simulated(1)), true),
        ("leveled", on_disk(common::leveled(1, false)), true),
        ("novelsm", common::novelsm(false), false),
        ("matrixkv", on_disk(common::matrixkv()), true),
        ("slmdb", common::slmdb(), false),
    ]
}

/// How many data blocks of each compression type the SSTs in `dir` hold, from `dump`.
fn block_types(dir: &Path) -> BTreeMap<String, usize> {
    let mut types = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "sst") {
            continue;
        }
        let mut out = Vec::new();
        dump_file(&path, DumpFormat::Text, &mut out).unwrap();
        for line in String::from_utf8(out).unwrap().lines() {
            if let Some(rest) = line.strip_prefix("block ") {
                let t = rest.split(": ").nth(1).unwrap().split(',').next().unwrap();
                *types.entry(t.to_string()).or_insert(0) += 1;
            }
        }
    }
    types
}

/// Writes rounds of overwrites (flushes and compactions run), then flushes and compacts all.
fn fill(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut model = BTreeMap::new();
    for round in 0..3u32 {
        for i in (0..2500u32).map(|i| (i * 7919) % 2500) {
            let key = format!("key{i:06}").into_bytes();
            db.put(&key, value(i, round)).unwrap();
            model.insert(key, value(i, round));
        }
    }
    db.compact_range(None, None).unwrap();
    db.wait_for_background_work().unwrap();
    model
}

/// Every key of `model` reads back by get and by a scan, and nothing else is there.
fn assert_reads_back(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>, what: &str) {
    for (k, v) in model.iter().step_by(11) {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v), "{what}");
    }
    let scanned: Vec<(Vec<u8>, Vec<u8>)> = db.iter().unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(scanned.len(), model.len(), "{what}");
    assert!(
        scanned
            .iter()
            .zip(model)
            .all(|(a, b)| a.0 == *b.0 && a.1 == *b.1),
        "{what}"
    );
}

#[test]
fn every_profile_writes_lz4_and_zstd_tables_that_read_back_after_reopen() {
    for c in [Compression::Lz4, Compression::ZSTD] {
        for i in 0..profiles(Path::new("/")).len() {
            let dir = tempfile::tempdir().unwrap();
            let (name, base, checkable) = profiles(dir.path()).swap_remove(i);
            let what = format!("{name} with {c}");
            let opts = base.compression_per_level(vec![c]);
            let db = Db::open(dir.path(), opts.clone()).unwrap();
            let model = fill(&db);
            assert_reads_back(&db, &model, &what);
            db.close().unwrap();
            drop(db);
            let db = Db::open(dir.path(), opts.clone()).unwrap();
            assert_reads_back(&db, &model, &what);
            drop(db);
            let types = block_types(dir.path());
            let blocks = types.get(&c.to_string());
            assert!(blocks.is_some_and(|&n| n > 0), "{what}: {types:?}");
            if checkable {
                assert_checks_clean(dir.path(), &opts, &what);
            }
        }
    }
}

/// `check` finds nothing wrong with the database (every compressed block decompresses).
fn assert_checks_clean(db: &Path, opts: &Options, what: &str) {
    let wal_dir = opts.wal_dir_for(db);
    let report = check_database_with_wal(db, &db.join("pm"), &wal_dir).unwrap();
    assert!(report.is_ok(), "{what}: {:?}", report.problems);
}

/// The default rule: what a flush writes (level 0) is raw; after `compact_range` moved
/// everything into L2, the tables there are LZ4-compressed.
#[test]
fn by_default_flushed_tables_are_raw_and_l2_tables_lz4() {
    let dir = tempfile::tempdir().unwrap();
    let opts = common::simulated(1).background_work(false);
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..2000u32 {
        db.put(format!("key{i:06}"), value(i, 0)).unwrap();
    }
    db.flush().unwrap();
    let flushed = block_types(dir.path());
    assert_eq!(flushed.keys().collect::<Vec<_>>(), ["none"], "{flushed:?}");
    db.compact_range(None, None).unwrap();
    let stats = db.stats();
    assert!(stats.levels[2].files > 0 && stats.levels[..2].iter().all(|l| l.files == 0));
    let compacted = block_types(dir.path());
    assert!(
        compacted.get("lz4").is_some_and(|&n| n > 0),
        "{compacted:?}"
    );
    assert_eq!(db.get("key001234").unwrap(), Some(value(1234, 0)));
}

/// Tables written with one compression stay readable when the database is reopened with
/// another (each block records its own type).
#[test]
fn a_database_reopened_with_another_compression_reads_its_old_tables() {
    let dir = tempfile::tempdir().unwrap();
    let base = common::leveled(1, false);
    let db = Db::open(
        dir.path(),
        base.clone().compression_per_level(vec![Compression::ZSTD]),
    )
    .unwrap();
    let model = fill(&db);
    db.close().unwrap();
    drop(db);
    let db = Db::open(
        dir.path(),
        base.compression_per_level(vec![Compression::None]),
    )
    .unwrap();
    assert_reads_back(&db, &model, "zstd tables under none");
    for i in 0..500u32 {
        db.put(format!("key{i:06}"), value(i, 9)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get("key000007").unwrap(), Some(value(7, 9)));
    assert_eq!(
        db.get("key002007").unwrap(),
        model.get(&b"key002007"[..]).cloned()
    );
}

/// `check` reads every compressed block: a damaged one is a problem naming the table and the
/// block's CRC.
#[test]
fn check_reports_a_damaged_compressed_block_with_its_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let (_, opts, _) = profiles(dir.path()).swap_remove(1);
    let opts = opts.compression_per_level(vec![Compression::Lz4]);
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    fill(&db);
    db.close().unwrap();
    drop(db);
    let sst = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sst"))
        .unwrap();
    let mut out = Vec::new();
    dump_file(&sst, DumpFormat::Text, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let first = text.lines().find(|l| l.starts_with("block 0 @0: lz4, "));
    let stored: u64 = first
        .expect(&text)
        .split(' ')
        .nth(4)
        .unwrap()
        .parse()
        .unwrap();
    let mut bytes = std::fs::read(&sst).unwrap();
    bytes[2] ^= 0x20;
    std::fs::write(&sst, bytes).unwrap();
    let wal_dir = opts.wal_dir_for(dir.path());
    let report = check_database_with_wal(dir.path(), &dir.path().join("pm"), &wal_dir).unwrap();
    let p = report.problems.iter().find(|p| p.file == sst);
    assert_eq!(p.expect("the table's problem").offset, Some(stored + 1));
}
