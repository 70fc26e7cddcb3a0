//! Repair's salvage of a PM Log: the valid prefix ends at a batch boundary before the damage,
//! and a cut log recovers exactly that prefix.

use super::tests::{entry, scan};
use super::*;
use crate::pm::SimulatedPmDevice;

#[test]
fn a_cut_keeps_the_whole_batches_before_a_damaged_entry_and_nothing_after() {
    let dev = SimulatedPmDevice::new();
    let mut w = PmLogWriter::create(&*dev, 7, 1 << 16, None).unwrap();
    let first = w.append_batch(&[entry(1, b"a", b"1"), entry(2, b"b", b"2")]);
    let second = w.append_batch(&[entry(3, b"c", b"3"), entry(4, b"d", b"4")]);
    w.append_batch(&[entry(5, b"e", b"5")]).unwrap().unwrap();
    w.commit().unwrap();
    let (first, second) = (first.unwrap().unwrap(), second.unwrap().unwrap());
    let log = w.log().clone();
    assert_eq!(log.durable_damage(), None, "an intact log");
    let damaged = second[1].get() as usize; // the second entry of the second batch
    log.region.write(damaged + 4, &[0xff; 8]); // its sequence number: the crc fails
    let damage = log.durable_damage().expect("found");
    assert_eq!(damage.at, damaged as u64);
    assert_eq!(damage.keep, second[0].get(), "the end of the first batch");
    assert!(damage.keep > first[1].get());
    log.cut(damage.keep).unwrap();
    drop(w);
    let log = PmLog::open(&*dev, &pm_log_file_name(7)).unwrap();
    assert_eq!(log.durable_damage(), None);
    let keys: Vec<Vec<u8>> = scan(&log).unwrap().into_iter().map(|e| e.2).collect();
    assert_eq!(keys, vec![b"a".to_vec(), b"b".to_vec()]);
}
