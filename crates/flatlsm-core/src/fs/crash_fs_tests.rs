//! Unit tests of [`CrashFs`]: what survives a crash, and injected faults.

use super::*;
use crate::fs::write_file_atomic;

fn dir() -> PathBuf {
    PathBuf::from("/db")
}

fn fs_with_dir() -> Arc<CrashFs> {
    let fs = CrashFs::new();
    fs.create_dir_all(&dir()).unwrap();
    fs
}

#[test]
fn unsynced_directory_entry_is_lost_even_if_the_data_was_synced() {
    let fs = fs_with_dir();
    let mut f = fs.create(&dir().join("a")).unwrap();
    f.append(b"hello").unwrap();
    f.sync().unwrap();
    let after = CrashFs::from_image(&fs.capture(0));
    assert!(!after.exists(&dir().join("a")));
    fs.sync_dir(&dir()).unwrap();
    let after = CrashFs::from_image(&fs.capture(0));
    assert_eq!(after.read_all(&dir().join("a")).unwrap(), b"hello");
}

#[test]
fn unsynced_tail_survives_as_a_prefix_or_zeros() {
    let fs = fs_with_dir();
    let mut f = fs.create(&dir().join("a")).unwrap();
    fs.sync_dir(&dir()).unwrap();
    f.append(b"synced").unwrap();
    f.sync().unwrap();
    f.append(b"-tail").unwrap();
    let mut lens = BTreeSet::new();
    for seed in 0..64 {
        let img = CrashFs::from_image(&fs.capture(seed));
        let data = img.read_all(&dir().join("a")).unwrap();
        let (head, tail) = data.split_at(6);
        assert_eq!(head, b"synced");
        let zeros = tail.iter().all(|&b| b == 0);
        assert!(b"-tail".starts_with(tail) || zeros, "{data:?}");
        lens.insert((data.len(), zeros && !tail.is_empty()));
    }
    assert!(lens.contains(&(6, false)) && lens.len() > 3, "{lens:?}");
    assert!(lens.iter().any(|(_, zeros)| *zeros), "{lens:?}");
}

/// `capture_pages`: the synced bytes stay; each unsynced page is the data written or zeros,
/// independently of the others (a lost page before a kept one happens); the file ends after a
/// kept page or at its whole length.
#[test]
fn unsynced_pages_are_written_back_in_any_order() {
    let fs = fs_with_dir();
    let mut f = fs.create(&dir().join("a")).unwrap();
    fs.sync_dir(&dir()).unwrap();
    f.append(&[7; 1000]).unwrap();
    f.sync().unwrap();
    let tail: Vec<u8> = (0..5 * PAGE_SIZE).map(|i| (i % 251) as u8 | 1).collect();
    f.append(&tail).unwrap();
    let live = fs.live_contents(&dir().join("a")).unwrap();
    let mut out_of_order = 0;
    for seed in 0..64 {
        let img = CrashFs::from_image(&fs.capture_pages(seed));
        let data = img.read_all(&dir().join("a")).unwrap();
        assert_eq!(data[..1000], [7; 1000], "seed {seed}");
        let ends_well =
            [1000, live.len()].contains(&data.len()) || data.len().is_multiple_of(PAGE_SIZE);
        assert!(ends_well, "seed {seed}: {} bytes", data.len());
        let kept = kept_pages(&data, &live, seed);
        out_of_order += kept.windows(2).any(|w| !w[0] && w[1]) as u32;
    }
    assert!(out_of_order > 5, "{out_of_order} out-of-order images");
}

/// For each page (by file offset) of `data` after its synced 1000 bytes: true if it holds
/// what was written (`live`), false if zeros (anything else fails).
fn kept_pages(data: &[u8], live: &[u8], seed: u64) -> Vec<bool> {
    let pages = 0..data.len().div_ceil(PAGE_SIZE);
    let range = |p: usize| (p * PAGE_SIZE).max(1000)..((p + 1) * PAGE_SIZE).min(data.len());
    let kept = pages.map(range).filter(|r| !r.is_empty()).map(|r| {
        let zeros = data[r.clone()].iter().all(|&b| b == 0);
        assert!(zeros || data[r.clone()] == live[r], "seed {seed}");
        !zeros
    });
    kept.collect()
}

#[test]
fn rename_and_remove_are_durable_only_after_a_directory_sync() {
    let fs = fs_with_dir();
    write_file_atomic(&*fs, &dir().join("CURRENT"), b"one").unwrap();
    let mut f = fs.create(&dir().join("CURRENT.tmp")).unwrap();
    f.append(b"two").unwrap();
    f.sync().unwrap();
    fs.rename(&dir().join("CURRENT.tmp"), &dir().join("CURRENT"))
        .unwrap();
    assert_eq!(fs.read_all(&dir().join("CURRENT")).unwrap(), b"two");
    let after = CrashFs::from_image(&fs.capture(1));
    assert_eq!(after.read_all(&dir().join("CURRENT")).unwrap(), b"one");
    fs.remove_file(&dir().join("CURRENT")).unwrap();
    assert!(CrashFs::from_image(&fs.capture(1)).exists(&dir().join("CURRENT")));
    fs.sync_dir(&dir()).unwrap();
    assert!(!CrashFs::from_image(&fs.capture(1)).exists(&dir().join("CURRENT")));
}

#[test]
fn planned_faults_fail_the_chosen_calls_and_are_counted() {
    let fs = fs_with_dir();
    let mut f = fs.create(&dir().join("a")).unwrap();
    let next = fs.call_count();
    fs.set_fault_plan(FaultPlan::At {
        call: next,
        kind: FaultKind::ShortWrite,
    });
    assert!(f.append(b"abcd").is_err());
    assert_eq!(fs.live_contents(&dir().join("a")).unwrap(), b"ab");
    f.append(b"ok").unwrap();
    fs.set_fault_plan(FaultPlan::From {
        from: fs.call_count(),
        kind: FaultKind::NoSpace,
    });
    let err = fs.create(&dir().join("b")).err().unwrap();
    assert_eq!(err.raw_os_error(), Some(libc::ENOSPC));
    assert!(f.sync().is_err());
    assert_eq!(fs.injected_faults(), 3);
}

#[test]
fn call_hook_sees_each_counted_call() {
    let fs = fs_with_dir();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = Arc::clone(&seen);
    fs.set_call_hook(Some(Box::new(move |n, c| s2.lock().push((n, c)))));
    let mut f = fs.create(&dir().join("a")).unwrap();
    f.append(b"x").unwrap();
    f.sync().unwrap();
    fs.sync_dir(&dir()).unwrap();
    let kinds: Vec<FsCall> = seen.lock().iter().map(|(_, c)| *c).collect();
    assert_eq!(
        kinds,
        [FsCall::Open, FsCall::Append, FsCall::Sync, FsCall::SyncDir]
    );
    assert_eq!(fs.list_dir(&dir()).unwrap(), ["a"]);
    assert!(fs.read_all(&dir().join("nope")).is_err());
}

/// The info log is stored but never counted nor failed: a fault plan covering every call
/// leaves it working, and the call numbers of other files do not move.
#[test]
fn info_log_calls_are_neither_counted_nor_failed() {
    let fs = fs_with_dir();
    fs.set_fault_plan(FaultPlan::From {
        from: 0,
        kind: FaultKind::Io,
    });
    let mut log = fs.create(&dir().join("LOG")).unwrap();
    log.append(b"line\n").unwrap();
    log.sync().unwrap();
    drop(log);
    fs.rename(&dir().join("LOG"), &dir().join("LOG.old.7"))
        .unwrap();
    fs.remove_file(&dir().join("LOG.old.7")).unwrap();
    assert_eq!((fs.call_count(), fs.injected_faults()), (0, 0));
    assert!(
        fs.create(&dir().join("000001.sst")).is_err(),
        "data files still fail"
    );
    assert_eq!(fs.call_count(), 1);
}
