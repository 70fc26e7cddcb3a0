//! PMTable GC sizing: live bytes and the predicted GC output are in log units (entry headers
//! included), and the prediction equals what `rewrite_live` writes, with and without a
//! snapshot that keeps older versions. A failed log creation or GC leaves no region.

use super::{LogEntry, PmTable};
use crate::pm::simulated::SimulatedPmDevice;
use crate::pm::PmDevice;
use crate::pmtable::log::{encoded_entry_len, PM_LOG_HEADER_LEN};
use crate::types::ValueKind;
use std::sync::Arc;

const HEADER: u64 = PM_LOG_HEADER_LEN as u64;

/// Appends single-entry batches `(key, value)` with sequences 1, 2, ...; `None` is a delete.
fn table_with(device: &dyn PmDevice, writes: &[(&[u8], Option<&[u8]>)]) -> Arc<PmTable> {
    let table = PmTable::create(device, 1, 64 << 10, None).unwrap();
    for (i, (key, value)) in writes.iter().enumerate() {
        let entry = LogEntry {
            seq: i as u64 + 1,
            kind: if value.is_some() {
                ValueKind::Value
            } else {
                ValueKind::Deletion
            },
            key,
            value: value.unwrap_or_default(),
        };
        assert!(table.append_batch(&[entry]).unwrap());
    }
    table
}

/// Regression (issue 9, item 1): live bytes counted only keys and values, so a table without
/// garbage looked like one with a garbage ratio of up to 11.5 (2-byte keys, empty values).
#[test]
fn live_bytes_of_a_table_without_garbage_equal_its_entry_bytes() {
    let device = SimulatedPmDevice::new();
    let table = table_with(
        &*device,
        &[(b"ab", Some(b"")), (b"cd", None), (b"ef", Some(b"x"))],
    );
    let entries = table.log_bytes() - HEADER;
    assert_eq!(
        entries,
        2 * encoded_entry_len(2, 0) as u64 + encoded_entry_len(2, 1) as u64
    );
    assert_eq!(table.live_bytes(), entries);
    assert_eq!(
        table.gc_output_bytes(3, &Default::default()),
        table.log_bytes()
    );
}

#[test]
fn gc_output_prediction_matches_the_rewritten_log() {
    let device = SimulatedPmDevice::new();
    let writes: Vec<(&[u8], Option<&[u8]>)> = vec![
        (b"a", Some(b"1")),
        (b"a", Some(b"22")),
        (b"b", Some(&[7; 300])),
        (b"a", None),
        (b"b", Some(b"4444")),
    ];
    let table = table_with(&*device, &writes);
    assert_eq!(
        table.live_bytes(),
        (encoded_entry_len(1, 0) + encoded_entry_len(1, 4)) as u64
    );
    for (oldest, number) in [(5, 2), (2, 3), (0, 4)] {
        let predicted = table.gc_output_bytes(oldest, &Default::default());
        let fresh = table
            .rewrite_live(&*device, number, 64 << 10, oldest, &Default::default())
            .unwrap();
        assert_eq!(fresh.log_bytes(), predicted, "oldest snapshot {oldest}");
    }
    // No snapshot: only the newest versions; a snapshot at 2 also keeps a@2 and b@3.
    assert_eq!(
        table.gc_output_bytes(5, &Default::default()),
        HEADER + table.live_bytes()
    );
    let with_snapshot =
        HEADER + table.live_bytes() + (encoded_entry_len(1, 2) + encoded_entry_len(1, 300)) as u64;
    assert_eq!(table.gc_output_bytes(2, &Default::default()), with_snapshot);
}

/// Regression (issue 9, item 7): a log whose header could not be persisted stayed on the
/// device, one more region per retry.
#[test]
fn failed_pm_log_creation_leaves_no_region() {
    for budget in [0, 1] {
        let device = SimulatedPmDevice::new();
        fail_after(&device, budget);
        assert!(PmTable::create(&*device, 1, 64 << 10, None).is_err());
        assert!(device.region_names().is_empty(), "budget {budget}");
        device.fail_persists_after(None);
        PmTable::create(&*device, 1, 64 << 10, None).unwrap();
    }
}

/// Regression (issue 9, item 7): a PMTable GC that failed while copying left its new log.
#[test]
fn failed_pmtable_gc_leaves_no_region() {
    let device = SimulatedPmDevice::new();
    let big = [7u8; 300]; // a batch of 256 bytes or more is written (and persisted) at once
    let table = table_with(&*device, &[(b"a", Some(&big)), (b"a", Some(&big))]);
    // The new log's header persists, then copying the entry fails.
    fail_after(&device, 2);
    let err = table
        .rewrite_live(&*device, 2, 64 << 10, 2, &Default::default())
        .err()
        .unwrap();
    assert!(err.to_string().contains("persisting entries"), "{err}");
    assert_eq!(device.region_names(), ["000001.pmlog"]);
    device.fail_persists_after(None);
    let fresh = table
        .rewrite_live(&*device, 3, 64 << 10, 2, &Default::default())
        .unwrap();
    assert_eq!(
        fresh.log_bytes(),
        table.gc_output_bytes(2, &Default::default())
    );
}

/// From now on `more` persists of `device` succeed and every later one fails.
fn fail_after(device: &SimulatedPmDevice, more: u64) {
    device.fail_persists_after(Some(device.persist_count() + more));
}
