//! Value logs written with direct I/O (docs/vlog-format.md, "Writing"): exact files whatever
//! the length of their last block, readable after reopen; a crash while the padded last block
//! is on disk leaves an unfinished log that open removes; a write failing on the I/O thread fails
//! the flush cleanly.

mod common;

use flatlsm::inspect::check_database;
use flatlsm::{Db, Error, Options, WriteOptions};
use flatlsm_core::fs::{CallHook, CrashFs, FaultKind, FaultPlan, FileSystem, FsCall, FsImage};
use flatlsm_core::pm::simulated::SimulatedPmDevice;
use flatlsm_core::vlog::parse_vlog_file_name;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// A value of `len` bytes (at least its prefix) whose first bytes name its key's index.
fn value(i: usize, len: usize) -> Vec<u8> {
    let mut v = format!("value-{i}-").into_bytes();
    v.resize(len.max(v.len()), (i % 251) as u8);
    v
}

fn read_all(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    db.iter().unwrap().map(|r| r.unwrap()).collect()
}

/// One flush per value length, each leaving a value log whose size ends at another offset
/// within its last 4 KiB block; all of them read back after a reopen and pass `check`.
#[test]
fn direct_value_logs_with_every_kind_of_tail_read_back_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = common::msync(dir.path(), 1);
    opts.background_work = false;
    opts.pmtable_size = 1 << 20;
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let mut want = BTreeMap::new();
    for (i, len) in (100..4200).step_by(137).enumerate() {
        let key = format!("key{i:05}").into_bytes();
        db.put(&key, value(i, len)).unwrap();
        want.insert(key, value(i, len));
        db.flush().unwrap();
    }
    let st = db.stats();
    assert!(st.vlog_direct_files + st.vlog_buffered_files >= 30);
    assert_eq!(read_all(&db), want);
    db.close().unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(read_all(&db), want);
    db.close().unwrap();
    let report = check_database(dir.path(), &dir.path().join("pmdir")).unwrap();
    assert!(report.is_ok(), "{report:?}");
}

/// Base options on an in-memory file system and a simulated PM device.
fn crash_options(fs: Arc<CrashFs>, pm: Arc<SimulatedPmDevice>) -> Options {
    let mut o = common::tiny_options(1);
    o.background_work = false;
    o.pmtable_size = 1 << 20;
    o.file_system = Some(fs);
    o.pm_device = Some(pm);
    o
}

/// The value log of the image, if any, with its bytes.
fn vlog_in(image: &CrashFs, dir: &Path) -> Option<Vec<u8>> {
    let names = image.list_dir(dir).ok()?;
    let name = names
        .into_iter()
        .find(|n| parse_vlog_file_name(n).is_some())?;
    image.live_contents(&dir.join(name))
}

/// A crash just after the padded last block was written (before the length is cut): the value
/// log ends in zeros up to a block boundary. No manifest names it yet, so open removes it, and
/// every synced write is still there (from the PM Log).
#[test]
fn crash_with_a_padded_direct_tail_leaves_an_unfinished_log_that_open_removes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (fs, pm) = (CrashFs::new(), SimulatedPmDevice::new());
    let db = Db::open(dir, crash_options(fs.clone(), pm.clone())).unwrap();
    let mut want = BTreeMap::new();
    for i in 0..40 {
        let key = format!("key{i:03}").into_bytes();
        db.put_opt(
            &key,
            value(i, 333),
            &WriteOptions {
                sync: true,
                ..WriteOptions::default()
            },
        )
        .unwrap();
        want.insert(key, value(i, 333));
    }
    let captured: Arc<Mutex<Option<(FsImage, _)>>> = Arc::default();
    let hook: CallHook = {
        let (fs, pm, out) = (Arc::downgrade(&fs), pm.clone(), captured.clone());
        Box::new(move |n, call| {
            let mut out = out.lock();
            if call == FsCall::SetLen && out.is_none() {
                let fs = fs.upgrade().unwrap();
                *out = Some((fs.capture_process(), pm.capture_now(n)));
            }
        })
    };
    fs.set_call_hook(Some(hook));
    db.flush().unwrap();
    fs.set_call_hook(None);
    drop(db);
    let (fs_image, pm_image) = captured.lock().take().expect("a value log was cut");
    let image = CrashFs::from_image(&fs_image);
    let vlog = vlog_in(&image, dir).expect("the image holds the unfinished value log");
    assert_eq!(vlog.len() % 4096, 0, "padded to a block boundary");
    assert_eq!(vlog.last(), Some(&0), "zero padding after the last record");
    let pm = SimulatedPmDevice::new().reopen_crash_image(&pm_image);
    let db = Db::open(dir, crash_options(image.clone(), pm)).unwrap();
    assert_eq!(read_all(&db), want);
    assert!(
        vlog_in(&image, dir).is_none(),
        "the unfinished log was removed"
    );
}

/// A write failing on the I/O thread (the value log exceeds one 2 MiB buffer) fails the flush
/// with an I/O error and stops writes; reopening finds every acknowledged write.
#[test]
fn a_write_failing_on_the_io_thread_fails_the_flush_and_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (fs, pm) = (CrashFs::new(), SimulatedPmDevice::new());
    let mut opts = crash_options(fs.clone(), pm.clone());
    opts.pmtable_size = 8 << 20;
    let db = Db::open(dir, opts.clone()).unwrap();
    let mut want = BTreeMap::new();
    for i in 0..1500 {
        let key = format!("key{i:05}").into_bytes();
        db.put(&key, value(i, 3000)).unwrap();
        want.insert(key, value(i, 3000));
    }
    // The hook runs before the fault plan is consulted: it arms a fault for the first call the
    // I/O thread makes (a block write).
    let armed: Arc<Mutex<bool>> = Arc::default();
    let hook: CallHook = {
        let (fs, armed) = (Arc::downgrade(&fs), armed.clone());
        Box::new(move |n, _| {
            let mut armed = armed.lock();
            if !*armed && std::thread::current().name() == Some("flatlsm-direct-io") {
                let kind = FaultKind::Io;
                fs.upgrade()
                    .unwrap()
                    .set_fault_plan(FaultPlan::At { call: n, kind });
                *armed = true;
            }
        })
    };
    fs.set_call_hook(Some(hook));
    let err = db.flush().unwrap_err();
    fs.set_call_hook(None);
    fs.set_fault_plan(FaultPlan::Never);
    assert!(*armed.lock(), "the value log used the I/O thread");
    assert_eq!(fs.injected_faults(), 1);
    assert!(matches!(err, Error::Io { .. }), "{err}");
    assert!(db.put(b"after", b"x").is_err());
    drop(db);
    let db = Db::open(dir, opts).unwrap();
    assert_eq!(read_all(&db), want);
}
