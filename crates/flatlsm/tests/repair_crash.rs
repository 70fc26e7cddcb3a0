//! `flatlsm::repair` crashed (a power loss: only what was synced survives, unsynced tails kept
//! or not as the seed picks) before every create, sync, rename, remove and directory sync it
//! makes while rewriting interleaved files and committing its manifest, then run again: the
//! database opens with every write, whatever the crash left (outputs duplicating their inputs,
//! `.tmp` files, no CURRENT).

mod common;

use flatlsm::{repair, Db, Options};
use flatlsm_core::fs::{CrashFs, FsCall, FsImage};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn options(fs: &Arc<CrashFs>) -> Options {
    let mut o = common::leveled(1, false);
    o.file_system = Some(fs.clone());
    o
}

/// Random overwrites: several levels, with compaction outputs whose versions interleave with
/// files above them (so repair rewrites files).
fn populate(dir: &Path, fs: &Arc<CrashFs>) -> Model {
    let mut model = Model::new();
    let db = Db::open(dir, options(fs)).unwrap();
    let mut x = 7u64;
    for round in 0..30_000u32 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let key = format!("k-{:05}", (x >> 33) % 6000).into_bytes();
        let value = format!("value-{round}").into_bytes();
        db.put(&key, &value).unwrap();
        model.insert(key, value);
    }
    db.close().unwrap();
    model
}

fn remove_manifest(fs: &CrashFs, dir: &Path) {
    use flatlsm::fs::FileSystem;
    for name in fs.list_dir(dir).unwrap() {
        if name == "CURRENT" || name.starts_with("MANIFEST-") {
            fs.remove_file(&dir.join(name)).unwrap();
        }
    }
}

/// What a power loss before call `at` of a repair of `image` leaves.
fn crash_repair_at(dir: &Path, image: &FsImage, at: u64) -> FsImage {
    let fs = CrashFs::from_image(image);
    let captured: Arc<Mutex<Option<FsImage>>> = Arc::default();
    let (weak, out) = (Arc::downgrade(&fs), captured.clone());
    fs.set_call_hook(Some(Box::new(move |n, _: FsCall| {
        if let (true, Some(fs)) = (n == at, weak.upgrade()) {
            *out.lock() = Some(fs.capture(n));
        }
    })));
    repair(dir, options(&fs)).unwrap();
    fs.set_call_hook(None);
    let image = captured.lock().take();
    image.expect("the repair reached the call")
}

fn assert_contents(dir: &Path, fs: &Arc<CrashFs>, model: &Model, at: u64) {
    let db = Db::open(dir, options(fs)).unwrap();
    for (key, value) in model {
        let got = db.get(key).unwrap();
        assert_eq!(got.as_ref(), Some(value), "crash before call {at}");
    }
    db.close().unwrap();
}

/// The calls of a repair of `image` that change what a crash leaves: all but appends (whose
/// unsynced bytes every capture keeps, cuts or zeroes as its seed picks).
fn persist_points(dir: &Path, image: &FsImage) -> Vec<u64> {
    let fs = CrashFs::from_image(image);
    let points: Arc<Mutex<Vec<u64>>> = Arc::default();
    let out = points.clone();
    fs.set_call_hook(Some(Box::new(move |n, kind| {
        if kind != FsCall::Append {
            out.lock().push(n);
        }
    })));
    let report = repair(dir, options(&fs)).unwrap();
    assert!(!report.files_rewritten.is_empty(), "{report}");
    fs.set_call_hook(None);
    let points = points.lock().clone();
    points
}

#[test]
fn repair_crashed_at_any_persist_point_and_run_again_recovers_every_write() {
    let dir = tempfile::tempdir().unwrap();
    let fs = CrashFs::new();
    let model = populate(dir.path(), &fs);
    remove_manifest(&fs, dir.path());
    let image = fs.capture_process();
    for at in persist_points(dir.path(), &image) {
        let crashed = CrashFs::from_image(&crash_repair_at(dir.path(), &image, at));
        let report = repair(dir.path(), options(&crashed))
            .unwrap_or_else(|e| panic!("repair after a crash before call {at}: {e}"));
        assert!(report.is_complete(), "crash before call {at}: {report}");
        assert_contents(dir.path(), &crashed, &model, at);
    }
}
