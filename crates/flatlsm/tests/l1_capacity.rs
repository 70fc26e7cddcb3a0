//! The Ordered-L1's capacity counts the data it represents (issue 10, item 3): SST bytes plus
//! the value-log bytes its files reference.

mod common;

use flatlsm::Db;

#[test]
fn l1_of_separated_values_compacts_into_l2_once_its_data_exceeds_the_capacity() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = common::simulated(1);
    o.background_work = false;
    o.kv_separation_threshold = 100;
    o.l1_capacity = 256 << 10; // 256 KiB of data; the SSTs alone stay far below it
    o.l1_merge_trigger = 1; // the flush's run is merged into the ordered L1 at once
    let db = Db::open(dir.path(), o).unwrap();
    for i in 0..400u32 {
        let key = format!("key{i:05}");
        db.put(key.as_bytes(), [i as u8; 2000]).unwrap();
    }
    db.flush().unwrap();
    let before = db.stats();
    assert!(before.levels[0].bytes < 256 << 10, "{before}");
    assert!(before.levels[0].data_bytes > 256 << 10, "{before}");
    db.wait_for_background_work().unwrap();
    let after = db.stats();
    assert!(
        after.levels[2].files > 0,
        "L1 never compacted into L2: {after}"
    );
    assert!(after.levels[1].data_bytes <= 256 << 10, "{after}");
}
