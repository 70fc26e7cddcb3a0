//! Scenario tests of the PM Log: round trips, durability points, crash atomicity (damage:
//! `damage_tests.rs`).

use super::*;
use crate::pm::simulated::CrashKind;
use crate::pm::{MmapPmDevice, PmModeRequest, SimulatedPmDevice};
use crate::types::MAX_SEQUENCE;

pub(super) type Owned = (u64, ValueKind, Vec<u8>, Vec<u8>);

pub(super) fn entry<'a>(seq: u64, key: &'a [u8], value: &'a [u8]) -> LogEntry<'a> {
    LogEntry {
        seq,
        kind: ValueKind::Value,
        key,
        value,
    }
}

pub(super) fn owned(e: &LogEntry<'_>) -> Owned {
    (e.seq, e.kind, e.key.to_vec(), e.value.to_vec())
}

pub(super) fn scan(log: &PmLog) -> Result<Vec<Owned>> {
    let mut out = Vec::new();
    log.for_each_entry(|_, e| {
        out.push(owned(&e));
        Ok(())
    })?;
    Ok(out)
}

fn disk_dir() -> tempfile::TempDir {
    crate::testing::disk_tempdir()
}

#[test]
fn round_trip_on_msync_device_and_reopen_after_commit_sees_all_entries() {
    let dir = disk_dir();
    let dev = MmapPmDevice::open(dir.path(), PmModeRequest::Msync).unwrap();
    let mut w = PmLogWriter::create(&*dev, 7, 1 << 16, None).unwrap();
    let big = vec![b'v'; 1000];
    let a = w
        .append_batch(&[entry(1, b"a", b"1"), entry(2, b"b", b"2")])
        .unwrap()
        .unwrap();
    let b = w.append_batch(&[entry(3, b"big", &big)]).unwrap().unwrap();
    // Msync mode: readable at once, but used_size is published only by commit.
    assert_eq!(w.log().read_entry(b[0]).unwrap().value, &big[..]);
    assert_eq!(w.log().header().used_size, 64);
    assert_eq!(w.log().header().written_size, w.used_bytes());
    assert!(w.has_uncommitted());
    w.commit().unwrap();
    assert!(!w.has_uncommitted());
    assert_eq!(w.log().header().used_size, w.used_bytes());
    assert_eq!(w.log().read_entry(a[1]).unwrap().key, b"b");
    drop(w);
    let dev = MmapPmDevice::open(dir.path(), PmModeRequest::Msync).unwrap();
    let log = PmLog::open(&*dev, &pm_log_file_name(7)).unwrap();
    assert_eq!(log.number(), 7);
    assert_eq!(log.path(), dir.path().join("000007.pmlog"));
    let got = scan(&log).unwrap();
    let keys: Vec<_> = got.iter().map(|e| e.2.clone()).collect();
    assert_eq!(keys, vec![b"a".to_vec(), b"b".to_vec(), b"big".to_vec()]);
    assert_eq!(got[2].3, big);
}

#[test]
fn round_trip_on_simulated_device_with_gc_header_fields() {
    let dev = SimulatedPmDevice::new();
    let mut w = PmLogWriter::create(&*dev, 12, 4096, Some(9)).unwrap();
    let del = LogEntry {
        seq: 5,
        kind: ValueKind::Deletion,
        key: b"gone",
        value: b"",
    };
    w.append_batch(&[del]).unwrap().unwrap();
    w.mark_gc_complete().unwrap();
    let after = dev.crash(3);
    let log = PmLog::open(&*after, "000012.pmlog").unwrap();
    let h = log.header();
    assert_eq!((h.number, h.replaces, h.file_size), (12, 9, 4096));
    assert!(h.gc_complete);
    assert_eq!(scan(&log).unwrap(), vec![owned(&del)]);
}

#[test]
fn large_entry_is_durable_when_append_returns() {
    for seed in 0..16 {
        let dev = SimulatedPmDevice::new();
        let mut w = PmLogWriter::create(&*dev, 1, 8192, None).unwrap();
        let v = vec![7u8; 300];
        w.append_batch(&[entry(1, b"k", &v)]).unwrap().unwrap();
        assert!(!w.has_uncommitted());
        let log = PmLog::open(&*dev.crash(seed), "000001.pmlog").unwrap();
        assert_eq!(scan(&log).unwrap().len(), 1, "seed {seed}");
    }
}

#[test]
fn small_batches_are_readable_at_once_and_persisted_in_256_byte_groups() {
    let dev = SimulatedPmDevice::new();
    let mut w = PmLogWriter::create(&*dev, 1, 8192, None).unwrap();
    let persists = dev.persist_count();
    let v = [1u8; 40]; // 21 + 1 + 40 = 62 bytes per entry
    let mut offsets = Vec::new();
    for seq in 1..=4 {
        offsets.extend(w.append_batch(&[entry(seq, b"k", &v)]).unwrap().unwrap());
    }
    assert_eq!(
        dev.persist_count(),
        persists,
        "248 unpersisted bytes: no persist yet"
    );
    assert_eq!(
        w.log().read_entry(offsets[0]).unwrap().seq,
        1,
        "readable in place"
    );
    for seed in 0..8 {
        // A power loss may lose them (a suffix of whole batches) ...
        let log = PmLog::open(&*dev.crash(seed), "000001.pmlog").unwrap();
        let got = scan(&log).unwrap();
        assert!(
            got.len() <= 4 && got.iter().zip(1..).all(|(e, s)| e.0 == s),
            "seed {seed}"
        );
    }
    // ... a process crash keeps every one of them.
    let log = PmLog::open(&*dev.crash_process(), "000001.pmlog").unwrap();
    assert_eq!(scan(&log).unwrap().len(), 4);
    w.append_batch(&[entry(5, b"k", &v)]).unwrap().unwrap();
    assert!(!w.has_uncommitted(), "310 unpersisted bytes: persisted");
    for seed in 0..8 {
        let log = PmLog::open(&*dev.crash(seed), "000001.pmlog").unwrap();
        assert_eq!(scan(&log).unwrap().len(), 5);
    }
}

#[test]
fn msync_log_dropped_without_commit_keeps_every_batch_after_a_process_crash() {
    let dir = disk_dir();
    let dev = MmapPmDevice::open(dir.path(), PmModeRequest::Msync).unwrap();
    let mut w = PmLogWriter::create(&*dev, 8, 1 << 16, None).unwrap();
    for seq in 1..=50u64 {
        let key = seq.to_be_bytes();
        w.append_batch(&[entry(seq, &key, b"small")])
            .unwrap()
            .unwrap();
    }
    assert_eq!(w.log().header().used_size, 64, "nothing committed");
    drop(w); // the process dies: the mapping (page cache) keeps the stores
    let dev = MmapPmDevice::open(dir.path(), PmModeRequest::Msync).unwrap();
    let log = PmLog::open(&*dev, &pm_log_file_name(8)).unwrap();
    let extent = log.for_each_entry(|_, _| Ok(())).unwrap();
    assert_eq!(extent.discarded, 0);
    assert_eq!(scan(&log).unwrap().len(), 50);
    log.adopt_tail(&extent).unwrap();
    assert_eq!(
        log.header().used_size,
        extent.end,
        "the tail is durable now"
    );
}

#[test]
fn batch_that_does_not_fit_writes_nothing() {
    let dev = SimulatedPmDevice::new();
    let mut w = PmLogWriter::create(&*dev, 1, 200, None).unwrap();
    let v = [0u8; 120];
    assert!(w.append_batch(&[entry(1, b"k", &v)]).unwrap().is_none());
    assert_eq!(w.used_bytes(), 64);
    assert_eq!(w.capacity(), 200);
    assert!(w
        .append_batch(&[entry(1, b"k", &v[..100])])
        .unwrap()
        .is_some());
    assert!(PmLogWriter::create(&*dev, 2, 10, None).is_err());
    let bad_seq = entry(MAX_SEQUENCE + 1, b"k", b"");
    assert!(matches!(
        w.append_batch(&[bad_seq]),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn log_file_names_round_trip_and_reject_others() {
    assert_eq!(pm_log_file_name(42), "000042.pmlog");
    assert_eq!(parse_pm_log_file_name("000042.pmlog"), Some(42));
    assert_eq!(parse_pm_log_file_name("12345678.pmlog"), Some(12_345_678));
    for bad in [
        "42.pmlog",
        "000042.sst",
        "+00042.pmlog",
        ".pmlog",
        "00004a.pmlog",
    ] {
        assert_eq!(parse_pm_log_file_name(bad), None, "{bad}");
    }
}

/// One batch of the crash workload and the persist count after which it must survive.
struct Batch {
    entries: Vec<Owned>,
    /// Persist count when the append returned: a process crash after it keeps the batch.
    appended_at: u64,
    durable_at: Option<u64>,
}

/// A deterministic mix of small, large, multi-entry batches and commits. Returns the batches and
/// the persist count at which the log's creation completed.
fn crash_workload(dev: &SimulatedPmDevice) -> (Vec<Batch>, u64) {
    let mut w = PmLogWriter::create(dev, 3, 1 << 15, None).unwrap();
    let created_at = dev.persist_count();
    let sizes: [&[usize]; 10] = [
        &[20],
        &[40, 40, 40],
        &[400],
        &[50],
        &[150, 150],
        &[5],
        &[700],
        &[90],
        &[90, 0],
        &[1000, 10, 10],
    ];
    let mut batches: Vec<Batch> = Vec::new();
    let mut seq = 0;
    for (i, lens) in sizes.iter().enumerate() {
        let values: Vec<Vec<u8>> = lens.iter().map(|&n| vec![i as u8; n]).collect();
        let key = format!("key{i}").into_bytes();
        let batch: Vec<LogEntry<'_>> = values
            .iter()
            .map(|v| {
                seq += 1;
                entry(seq, &key, v)
            })
            .collect();
        let before = dev.persist_count();
        w.append_batch(&batch).unwrap().unwrap();
        batches.push(Batch {
            entries: batch.iter().map(owned).collect(),
            appended_at: dev.persist_count(),
            durable_at: None,
        });
        if dev.persist_count() > before {
            mark_durable(&mut batches, dev.persist_count());
        }
        if i == 3 || i == 7 || i + 1 == sizes.len() {
            w.commit().unwrap();
            mark_durable(&mut batches, dev.persist_count());
        }
    }
    (batches, created_at)
}

fn mark_durable(batches: &mut [Batch], at: u64) {
    for b in batches.iter_mut().filter(|b| b.durable_at.is_none()) {
        b.durable_at = Some(at);
    }
}

/// Number of whole batches the recovered entries form; panics if they are not a prefix of whole
/// batches.
fn whole_batches(recovered: &[Owned], batches: &[Batch], ctx: &str) -> usize {
    let mut pos = 0;
    for (i, b) in batches.iter().enumerate() {
        if pos == recovered.len() {
            return i;
        }
        let end = pos + b.entries.len();
        assert!(
            end <= recovered.len() && recovered[pos..end] == b.entries[..],
            "{ctx}: recovered entries are not a prefix of whole batches (batch {i})"
        );
        pos = end;
    }
    assert_eq!(pos, recovered.len(), "{ctx}: extra entries");
    batches.len()
}

#[test]
fn write_batches_are_atomic_at_every_persist_point() {
    every_persist_point_recovers_whole_durable_batches(SimulatedPmDevice::new);
}

#[test]
fn group_commit_log_keeps_committed_batches_at_every_persist_point() {
    // Msync semantics: persists only at commits, so power losses tear a long unpersisted tail.
    every_persist_point_recovers_whole_durable_batches(SimulatedPmDevice::with_group_commit);
}

/// Power loss at every persist point (right after it, or just before the next starts, with
/// random subsets of dirty lines and words): the recovered entries are a prefix of whole
/// batches holding every batch durable by then, and recovery's `adopt_tail` makes that prefix
/// stable under a second crash.
fn every_persist_point_recovers_whole_durable_batches(make: fn() -> Arc<SimulatedPmDevice>) {
    let reference = make();
    let (batches, created_at) = crash_workload(&reference);
    let total = reference.persist_count();
    assert!(batches.iter().all(|b| b.durable_at.is_some()));
    let mut outcomes = std::collections::BTreeSet::new();
    for n in 0..=total {
        for seed in 0..8 {
            // Even seeds: image right after persist n; odd: just before persist n + 1 starts.
            let before = seed % 2 == 1;
            let ctx = format!("crash at persist point {n} (before next: {before}), seed {seed}");
            let dev = make();
            if before {
                dev.freeze_before_persist(n, seed);
            } else {
                dev.freeze_after_persists(n, seed);
            }
            crash_workload(&dev);
            if let Some(k) = recover_after_crash(&dev.crash(seed), &batches, n, created_at, &ctx) {
                outcomes.insert(k);
            }
        }
    }
    // Not vacuous: the crash points recover many different prefixes, up to all batches.
    assert!(total > 3, "only {total} persist points");
    assert!(
        outcomes.len() > 3 && outcomes.contains(&batches.len()),
        "{outcomes:?}"
    );
}

/// Recovers the crashed log; returns how many whole batches it holds (`None`: never created).
fn recover_after_crash(
    crashed: &Arc<SimulatedPmDevice>,
    batches: &[Batch],
    n: u64,
    created_at: u64,
    ctx: &str,
) -> Option<usize> {
    if crashed.region_names().is_empty() {
        assert_eq!(n, 0, "{ctx}: the log's creation was lost");
        return None;
    }
    let Some(log) = PmLog::open_if_initialized(&**crashed, "000003.pmlog").unwrap() else {
        assert!(n < created_at, "{ctx}: created log came back blank");
        return None;
    };
    let recovered = scan(&log).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    let k = whole_batches(&recovered, batches, ctx);
    for (i, b) in batches.iter().enumerate() {
        if b.durable_at.is_some_and(|d| d <= n) {
            assert!(i < k, "{ctx}: batch {i} was durable at {:?}", b.durable_at);
        }
    }
    let extent = log.for_each_entry(|_, _| Ok(())).unwrap();
    log.adopt_tail(&extent).unwrap();
    let again = PmLog::open(&*crashed.crash(n ^ 0x5eed), "000003.pmlog").unwrap();
    assert_eq!(
        scan(&again).unwrap(),
        recovered,
        "{ctx}: adopted tail is not stable"
    );
    Some(k)
}

#[test]
fn process_crash_at_every_persist_point_keeps_every_appended_batch() {
    for make in [SimulatedPmDevice::new, SimulatedPmDevice::with_group_commit] {
        let reference = make();
        let (batches, _) = crash_workload(&reference);
        let points = (0..=reference.persist_count()).collect();
        let dev = make();
        dev.record_crash_points_of(CrashKind::ProcessCrash, points, 1, None);
        crash_workload(&dev);
        for image in dev.take_crash_images() {
            let n = image.persists;
            let crashed = dev.reopen_crash_image(&image);
            let Ok(Some(log)) = PmLog::open_if_initialized(&*crashed, "000003.pmlog") else {
                continue; // before the log's creation completed
            };
            let recovered = scan(&log).unwrap();
            let k = whole_batches(&recovered, &batches, &format!("process crash at {n}"));
            let appended = batches.iter().filter(|b| b.appended_at <= n).count();
            assert!(
                k >= appended,
                "process crash at {n}: {k} of {appended} appended batches"
            );
        }
    }
}
