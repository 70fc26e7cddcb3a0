//! Damage tests of the PM Log: corruption in the header or the durable part is reported with
//! file and offset, a torn tail ends the log instead of failing recovery, and the decoders
//! never panic on arbitrary bytes.

use super::tests::{entry, scan};
use super::*;
use crate::pm::SimulatedPmDevice;
use crate::types::MAX_SEQUENCE;
use format::encode_entry;
use proptest::prelude::*;

pub(super) fn committed_log(dev: &SimulatedPmDevice) -> Vec<u64> {
    let mut w = PmLogWriter::create(dev, 4, 4096, None).unwrap();
    let a = w
        .append_batch(&[entry(1, b"k1", &[1; 30]), entry(2, b"k2", &[2; 30])])
        .unwrap()
        .unwrap();
    w.commit().unwrap();
    a.into_iter().map(EntryOffset::get).collect()
}

pub(super) fn corruption_at(err: Error, dev: &SimulatedPmDevice) -> u64 {
    match err {
        Error::Corruption { file, offset, .. } => {
            assert_eq!(file, dev.dir().join("000004.pmlog"));
            offset
        }
        other => panic!("expected corruption, got {other}"),
    }
}

#[test]
fn corrupt_magic_is_reported_at_offset_0() {
    let dev = SimulatedPmDevice::new();
    committed_log(&dev);
    dev.corrupt("000004.pmlog", 0, b"XMEM").unwrap();
    let err = PmLog::open(&*dev, "000004.pmlog").err().unwrap();
    assert_eq!(corruption_at(err, &dev), 0);
}

#[test]
fn corrupt_header_field_fails_the_header_crc() {
    let dev = SimulatedPmDevice::new();
    committed_log(&dev);
    dev.corrupt("000004.pmlog", 33, &[0xff]).unwrap(); // inside `replaces`
    let err = PmLog::open_if_initialized(&*dev, "000004.pmlog")
        .err()
        .unwrap();
    assert_eq!(corruption_at(err, &dev), 40);
}

#[test]
fn used_size_beyond_file_size_is_corruption_at_offset_16() {
    let dev = SimulatedPmDevice::new();
    committed_log(&dev);
    dev.corrupt("000004.pmlog", 16, &4097u64.to_le_bytes())
        .unwrap();
    let err = PmLog::open(&*dev, "000004.pmlog").err().unwrap();
    assert_eq!(corruption_at(err, &dev), 16);
}

#[test]
fn corrupt_entry_byte_is_reported_at_the_entry_offset() {
    let dev = SimulatedPmDevice::new();
    let offsets = committed_log(&dev);
    dev.corrupt("000004.pmlog", offsets[1] as usize + 30, &[0xee])
        .unwrap();
    let log = PmLog::open(&*dev, "000004.pmlog").unwrap();
    assert_eq!(log.read_entry(offsets[0]).unwrap().key, b"k1");
    let err = log.read_entry(offsets[1]).err().unwrap();
    assert_eq!(corruption_at(err, &dev), offsets[1]);
    let err = scan(&log).err().unwrap();
    assert_eq!(corruption_at(err, &dev), offsets[1]);
}

#[test]
fn entry_length_running_past_used_size_is_corruption() {
    let dev = SimulatedPmDevice::new();
    let offsets = committed_log(&dev);
    let key_len_at = offsets[1] as usize + 13;
    dev.corrupt("000004.pmlog", key_len_at, &u32::MAX.to_le_bytes())
        .unwrap();
    let log = PmLog::open(&*dev, "000004.pmlog").unwrap();
    let err = scan(&log).err().unwrap();
    assert!(err.to_string().contains("runs past"), "{err}");
    assert_eq!(corruption_at(err, &dev), offsets[1]);
}

#[test]
fn region_size_mismatch_and_interrupted_creation_are_told_apart() {
    let dev = SimulatedPmDevice::new();
    let r = dev.create_region("000005.pmlog", 4096).unwrap();
    assert!(PmLog::open_if_initialized(&*dev, "000005.pmlog")
        .unwrap()
        .is_none());
    assert!(PmLog::open(&*dev, "000005.pmlog")
        .unwrap_err()
        .is_corruption());
    r.write(0, &format::encode_header(5, 8192, 0));
    let err = PmLog::open(&*dev, "000005.pmlog").err().unwrap();
    assert!(matches!(err, Error::Corruption { offset: 8, .. }), "{err}");
}

proptest! {
    #[test]
    fn decoders_never_panic_on_arbitrary_bytes(
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
        offset in any::<u64>(),
    ) {
        let p = Path::new("fuzz.pmlog");
        let _ = decode_entry(&bytes, offset, 0, p);
        let _ = decode_header(&bytes, p);
    }

    #[test]
    fn encoded_entries_round_trip_and_every_truncation_is_corruption(
        seq in 0..=MAX_SEQUENCE,
        key in proptest::collection::vec(any::<u8>(), 0..40),
        value in proptest::collection::vec(any::<u8>(), 0..80),
    ) {
        let e = entry(seq, &key, &value);
        let mut buf = Vec::new();
        let seed = crate::types::crc32c(&seq.to_le_bytes());
        encode_entry(&e, seq % 2 == 0, seed, &mut buf);
        prop_assert_eq!(buf.len(), encoded_entry_len(key.len(), value.len()));
        let p = Path::new("x.pmlog");
        let (d, n) = decode_entry(&buf, 64, seed, p).unwrap();
        prop_assert_eq!(d, e);
        prop_assert_eq!(n, buf.len());
        prop_assert!(decode_entry(&buf, 64, seed ^ 1, p).unwrap_err().is_corruption());
        for cut in 0..buf.len() {
            prop_assert!(decode_entry(&buf[..cut], 64, seed, p).unwrap_err().is_corruption());
        }
    }

    #[test]
    fn encoded_headers_round_trip(number in any::<u64>(), size in 64u64.., replaces in any::<u64>()) {
        let h = decode_header(&format::encode_header(number, size, replaces), Path::new("h")).unwrap();
        prop_assert_eq!(h, PmLogHeader { version: 2, number, file_size: size, used_size: 64, written_size: 64, replaces, gc_complete: false });
    }
}

/// A log with one committed batch (seq 1) and, beyond `used_size`, the uncommitted batches
/// `tail` (by sequence numbers); returns the device and each tail batch's entry offsets.
fn log_with_tail(tail: &[&[u64]]) -> (Arc<SimulatedPmDevice>, Vec<Vec<u64>>) {
    let dev = SimulatedPmDevice::with_group_commit();
    let mut w = PmLogWriter::create(&*dev, 4, 8192, None).unwrap();
    w.append_batch(&[entry(1, b"durable", b"d")])
        .unwrap()
        .unwrap();
    w.commit().unwrap();
    let offsets = tail
        .iter()
        .map(|seqs| {
            let batch: Vec<_> = seqs.iter().map(|&s| entry(s, b"tail", b"t")).collect();
            let offsets = w.append_batch(&batch).unwrap().unwrap();
            offsets.into_iter().map(EntryOffset::get).collect()
        })
        .collect();
    (dev, offsets)
}

fn seqs(log: &PmLog) -> Vec<u64> {
    scan(log).unwrap().iter().map(|e| e.0).collect()
}

#[test]
fn torn_tail_entry_with_bad_crc_ends_the_log_instead_of_failing_recovery() {
    let (dev, tail) = log_with_tail(&[&[2], &[3], &[4]]);
    dev.corrupt("000004.pmlog", tail[1][0] as usize + 22, &[0xee])
        .unwrap();
    let log = PmLog::open(&*dev, "000004.pmlog").unwrap();
    assert_eq!(seqs(&log), vec![1, 2], "the log ends before the torn entry");
    let extent = log.for_each_entry(|_, _| Ok(())).unwrap();
    assert_eq!(extent.end, tail[1][0]);
    assert!(extent.discarded > 0);
}

#[test]
fn tail_batch_missing_its_last_entry_is_dropped_whole() {
    let (dev, tail) = log_with_tail(&[&[2], &[3, 4, 5]]);
    dev.corrupt("000004.pmlog", tail[1][2] as usize, &[0; 4])
        .unwrap();
    let log = PmLog::open(&*dev, "000004.pmlog").unwrap();
    assert_eq!(seqs(&log), vec![1, 2], "no part of batch 3..=5 survives");
}

#[test]
fn stale_entries_with_older_sequences_in_the_tail_are_not_accepted() {
    // Bytes of a region's earlier life carry lower sequence numbers than its current data.
    let (dev, _) = log_with_tail(&[&[7], &[3], &[8]]);
    let log = PmLog::open(&*dev, "000004.pmlog").unwrap();
    assert_eq!(seqs(&log), vec![1, 7]);
}

#[test]
fn entries_left_by_an_earlier_log_in_a_reused_region_fail_the_seeded_crc() {
    // Log 4's region reused as log 5 (a recycled PM Log): header re-initialised, old bytes kept.
    let (dev, _) = log_with_tail(&[&[2], &[3]]);
    let mut image = dev.durable_image("000004.pmlog").unwrap();
    let fresh = format::encode_header(5, 8192, 0);
    image[..64].copy_from_slice(&fresh);
    image[56..64].copy_from_slice(&200u64.to_le_bytes()); // a torn written_size over old bytes
    let r = dev.create_region("000005.pmlog", 8192).unwrap();
    r.write(0, &image);
    r.persist(0, 8192).unwrap();
    let log = PmLog::open(&*dev, "000005.pmlog").unwrap();
    assert_eq!(
        seqs(&log),
        Vec::<u64>::new(),
        "log 4's entries are not log 5's"
    );
}

#[test]
fn damage_below_used_size_is_still_corruption_with_a_tail_present() {
    let (dev, _) = log_with_tail(&[&[2]]);
    dev.corrupt("000004.pmlog", 64 + 22, &[0xee]).unwrap();
    let log = PmLog::open(&*dev, "000004.pmlog").unwrap();
    assert_eq!(corruption_at(scan(&log).unwrap_err(), &dev), 64);
}

#[test]
fn written_size_beyond_file_size_is_corruption_at_offset_56() {
    let (dev, _) = log_with_tail(&[&[2]]);
    dev.corrupt("000004.pmlog", 56, &9000u64.to_le_bytes())
        .unwrap();
    let err = PmLog::open(&*dev, "000004.pmlog").err().unwrap();
    assert_eq!(corruption_at(err, &dev), 56);
}

#[test]
fn version_1_log_without_written_size_is_read_up_to_used_size() {
    let (dev, _) = log_with_tail(&[&[2]]);
    let mut image = dev.durable_image("000004.pmlog").unwrap();
    image[4] = 1; // version 1: no written_size field, no tail, unseeded entry crcs
    image[56..64].fill(0);
    let crc = format::header_crc(&image[..64]);
    image[40..44].copy_from_slice(&crc.to_le_bytes());
    let len = encoded_entry_len(b"durable".len(), 1);
    let crc = crate::types::crc32c(&image[68..64 + len]);
    image[64..68].copy_from_slice(&crc.to_le_bytes());
    dev.corrupt("000004.pmlog", 0, &image[..64 + len]).unwrap();
    let log = PmLog::open(&*dev, "000004.pmlog").unwrap();
    assert_eq!(seqs(&log), vec![1]);
}
