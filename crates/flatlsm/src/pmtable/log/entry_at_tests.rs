//! The trusted read path of the PM Log (`EntryOffset`, `PmLog::entry_at`): it skips the crc,
//! so only offsets the log handed out (appends, the recovery scan) may reach it, and it still
//! checks every length.

use super::damage_tests::{committed_log, corruption_at};
use super::tests::{entry, owned, scan};
use super::*;
use crate::pm::SimulatedPmDevice;

/// `entry_at` skips the crc, so it must only ever see offsets the log handed out: a byte the
/// media changed is caught by the verifying paths (point read by any offset, recovery scan),
/// while a trusted offset reads the entry as written (its crc was checked once: by the writer's
/// own encoding or the recovery scan).
#[test]
fn entry_at_skips_the_crc_that_read_entry_and_recovery_check() {
    let dev = SimulatedPmDevice::new();
    let mut w = PmLogWriter::create(&*dev, 4, 4096, None).unwrap();
    let at = w
        .append_batch(&[entry(1, b"k1", &[1; 30]), entry(2, b"k2", &[2; 30])])
        .unwrap()
        .unwrap();
    w.commit().unwrap();
    dev.corrupt("000004.pmlog", at[1].get() as usize + 30, &[0xee])
        .unwrap();
    let log = w.log();
    assert_eq!(log.entry_at(at[1]).unwrap().key, b"k2");
    let span = log.value_span(at[1]).unwrap();
    assert_eq!(log.value_bytes(span), log.entry_at(at[1]).unwrap().value);
    let err = log.read_entry(at[1]).err().unwrap();
    assert_eq!(corruption_at(err, &dev), at[1].get());
    let reopened = PmLog::open(&*dev, "000004.pmlog").unwrap();
    let err = scan(&reopened).err().unwrap();
    assert_eq!(corruption_at(err, &dev), at[1].get());
}

/// Recovery hands out the offsets it verified, and they read back the same entries.
#[test]
fn recovery_scan_hands_out_trusted_offsets_of_the_entries_it_verified() {
    let dev = SimulatedPmDevice::new();
    committed_log(&dev);
    let log = PmLog::open(&*dev, "000004.pmlog").unwrap();
    let mut found = Vec::new();
    log.for_each_entry(|at, e| {
        found.push((at, owned(&e)));
        Ok(())
    })
    .unwrap();
    assert_eq!(found.len(), 2);
    for (at, e) in found {
        assert_eq!(owned(&log.entry_at(at).unwrap()), e);
    }
}

/// Even a misused trusted offset (past the readable tail, or inside an entry) is an error or a
/// decoded entry, never a panic or a read past the tail.
#[test]
fn entry_at_checks_bounds_and_lengths() {
    let dev = SimulatedPmDevice::new();
    let mut w = PmLogWriter::create(&*dev, 4, 4096, None).unwrap();
    w.append_batch(&[entry(1, b"k1", &[7; 300])])
        .unwrap()
        .unwrap();
    let log = w.log();
    let end = w.used_bytes();
    assert!(matches!(
        log.entry_at(EntryOffset(end)),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        log.entry_at(EntryOffset(10)),
        Err(Error::InvalidArgument(_))
    ));
    for inside in 65..end {
        let _ = log.entry_at(EntryOffset(inside));
        let _ = log.value_span(EntryOffset(inside));
    }
}

/// A region that records the longest read asked of it (to see how much of PM a read touches).
struct ReadScope {
    inner: Arc<dyn crate::pm::PmRegion>,
    longest: std::sync::atomic::AtomicUsize,
}

impl crate::pm::PmRegion for ReadScope {
    fn path(&self) -> &std::path::Path {
        self.inner.path()
    }
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn mode(&self) -> crate::pm::PmMode {
        self.inner.mode()
    }
    fn read(&self, offset: usize, len: usize) -> &[u8] {
        self.longest
            .fetch_max(len, std::sync::atomic::Ordering::Relaxed);
        self.inner.read(offset, len)
    }
    fn write(&self, offset: usize, data: &[u8]) {
        self.inner.write(offset, data)
    }
    fn store_u64(&self, offset: usize, value: u64) {
        self.inner.store_u64(offset, value)
    }
    fn load_u64(&self, offset: usize) -> u64 {
        self.inner.load_u64(offset)
    }
    fn persist(&self, offset: usize, len: usize) -> std::io::Result<()> {
        self.inner.persist(offset, len)
    }
}

/// Regression: a point read of one entry read the whole rest of the log (`readable_from`), so
/// with emulated PM read latency (charged per line read) a memtable in PM took milliseconds
/// per read (the placement study's memtable-in-PM runs fell to ~100 ops/s). A read now asks
/// for the entry's own bytes only.
#[test]
fn regression_a_point_read_reads_only_its_entry() {
    let dev = crate::pm::DramPmDevice::new("/pm");
    let scope = Arc::new(ReadScope {
        inner: dev.create_region("pool", 1 << 20).unwrap(),
        longest: Default::default(),
    });
    let mut w = PmLogWriter::create_recycled(&*dev, scope.clone(), "pool", 4, None).unwrap();
    let mut offsets = Vec::new();
    for i in 0..1000u64 {
        let key = format!("key{i:04}");
        offsets.extend(
            w.append_batch(&[entry(i + 1, key.as_bytes(), &[7; 100])])
                .unwrap()
                .unwrap(),
        );
    }
    scope.longest.store(0, std::sync::atomic::Ordering::Relaxed);
    let log = w.log();
    assert_eq!(log.entry_at(offsets[10]).unwrap().key, b"key0010");
    assert_eq!(log.read_entry(offsets[20]).unwrap().key, b"key0020");
    let longest = scope.longest.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        longest <= encoded_entry_len(7, 100),
        "read {longest} bytes for one entry"
    );
}
