//! Unit tests of [`SimulatedPmDevice`]: what survives a crash, freezes and recorded crash points.

use super::*;

#[test]
fn crash_keeps_persisted_and_drops_never_written_back_data() {
    let dev = SimulatedPmDevice::new();
    let r = dev.create_region("r", 4096).unwrap();
    r.write(0, &[1; 128]);
    r.persist(0, 128).unwrap();
    r.write(1024, &[2; 64]);
    dev.freeze_after_persists(1, 7); // already reached: freeze now
    r.persist(1024, 64).unwrap(); // after the freeze: not in the image
    let after = dev.crash(0);
    let r2 = after.open_region("r").unwrap();
    assert_eq!(r2.read(0, 128), &[1; 128][..]);
    assert_eq!(dev.persist_count(), 2);
    // Line 16 was dirty at the freeze: each word is either old (0) or new (2), never mixed.
    for w in r2.read(1024, 64).chunks(8) {
        assert!(w == [0; 8] || w == [2; 8], "{w:?}");
    }
}

#[test]
fn unpersisted_lines_tear_only_at_8_byte_words() {
    let mut saw_old = false;
    let mut saw_new = false;
    for seed in 0..64 {
        let dev = SimulatedPmDevice::new();
        let r = dev.create_region("r", 256).unwrap();
        r.write(0, &[0xAB; 256]);
        let r2 = dev.crash(seed).open_region("r").unwrap();
        for w in r2.read(0, 256).chunks(8) {
            assert!(w == [0; 8] || w == [0xAB; 8], "torn word {w:?}");
            saw_old |= w == [0; 8];
            saw_new |= w == [0xAB; 8];
        }
    }
    assert!(saw_old && saw_new, "crash images should vary with the seed");
}

#[test]
fn freeze_at_a_persist_point_ignores_later_creates_and_removes() {
    let dev = SimulatedPmDevice::new();
    dev.freeze_after_persists(2, 1);
    let a = dev.create_region("a", 64).unwrap();
    a.store_u64(8, 42);
    a.persist(8, 8).unwrap();
    a.store_u64(16, 43);
    a.persist(16, 8).unwrap(); // second persist: freeze here
    dev.remove_region("a").unwrap();
    dev.create_region("b", 64).unwrap();
    let after = dev.crash(99);
    assert_eq!(after.region_names(), vec!["a"]);
    let a2 = after.open_region("a").unwrap();
    assert_eq!((a2.load_u64(8), a2.load_u64(16)), (42, 43));
}

#[test]
fn freeze_before_persist_sees_stores_issued_after_the_previous_persist() {
    let mut saw_store = false;
    for seed in 0..16 {
        let dev = SimulatedPmDevice::new();
        let r = dev.create_region("r", 64).unwrap();
        dev.freeze_before_persist(0, seed);
        r.store_u64(8, 5); // issued before persist 1 starts: may or may not survive
        r.persist(8, 8).unwrap();
        r.store_u64(16, 6); // after the freeze: never in the image
        let r2 = dev.crash(0).open_region("r").unwrap();
        assert!(matches!(r2.load_u64(8), 0 | 5));
        assert_eq!(r2.load_u64(16), 0);
        saw_store |= r2.load_u64(8) == 5;
    }
    assert!(saw_store);
}

#[test]
fn recorded_crash_points_capture_each_planned_persist_and_call_the_hook() {
    let dev = SimulatedPmDevice::new();
    let r = dev.create_region("r", 64).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let hook_seen = Arc::clone(&seen);
    let hook: CaptureHook = Box::new(move |n| hook_seen.lock().push(n));
    dev.record_crash_points([1, 2].into_iter().collect(), 3, Some(hook));
    for i in 1..=3u64 {
        r.store_u64(8 * i as usize, i);
        r.persist(8 * i as usize, 8).unwrap();
    }
    let images = dev.take_crash_images();
    assert_eq!(*seen.lock(), vec![1, 2]);
    assert_eq!(
        images.iter().map(|i| i.persists).collect::<Vec<_>>(),
        [1, 2]
    );
    let after = SimulatedPmDevice::from_crash_image(&images[1]);
    let r2 = after.open_region("r").unwrap();
    // Persists 1 and 2 completed; the store of persist 3 may or may not have reached PM.
    assert_eq!((r2.load_u64(8), r2.load_u64(16)), (1, 2));
    assert!(matches!(r2.load_u64(24), 0 | 3));
    assert!(dev.take_crash_images().is_empty());
    assert_eq!(dev.capture_now(1).persists, 3);
}

#[test]
fn corrupt_changes_what_reads_see_and_checks_range() {
    let dev = SimulatedPmDevice::new();
    let r = dev.create_region("r", 64).unwrap();
    dev.corrupt("r", 3, b"xy").unwrap();
    assert_eq!(r.read(3, 2), b"xy");
    assert_eq!(&dev.durable_image("r").unwrap()[3..5], b"xy");
    assert!(dev.corrupt("r", 63, b"xy").is_err());
    assert!(dev.corrupt("nope", 0, b"x").is_err());
    assert!(dev.open_region("nope").is_err());
    assert!(dev.create_region("r", 64).is_err());
}

/// Regression (issue 29): the device used plain writes for streaming stores, so no crash test
/// could tell a writer that persisted streamed bytes before draining them.
#[test]
fn streamed_bytes_persisted_before_a_drain_are_not_durable() {
    let dev = SimulatedPmDevice::new();
    let r = dev.create_region("r", 4096).unwrap();
    r.write_streaming(256, &[7; 512]);
    r.persist(256, 512).unwrap();
    assert_eq!(&dev.durable_image("r").unwrap()[256..768], &[0; 512][..]);
    r.drain_streaming();
    r.persist(256, 512).unwrap();
    assert_eq!(&dev.durable_image("r").unwrap()[256..768], &[7; 512][..]);
}

#[test]
fn streamed_bytes_are_visible_at_once_and_survive_a_process_crash() {
    let dev = SimulatedPmDevice::new();
    let r = dev.create_region("r", 4096).unwrap();
    r.write_streaming(64, &[9; 300]);
    assert_eq!(r.read(64, 300), &[9; 300][..]);
    let after = dev.crash_process().open_region("r").unwrap();
    assert_eq!(after.read(64, 300), &[9; 300][..]);
}
