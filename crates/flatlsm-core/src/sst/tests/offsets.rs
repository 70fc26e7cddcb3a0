//! `Table::approximate_offset_of` (block-granular key offsets) and the footer and filter
//! accessors `dump --show-properties` prints.

use super::*;
use crate::sst::FOOTER_LEN;
use crate::types::{make_internal_key, KIND_FOR_SEEK, MAX_SEQUENCE};

/// User keys `k0000..k0999` with 100-byte values in blocks of about 1 KiB.
fn thousand_keys() -> (Arc<Table>, u64) {
    let entries: Entries = (0..1000)
        .map(|i| (ik(format!("k{i:04}").as_bytes(), 1), vec![b'v'; 100]))
        .collect();
    let opts = TableBuildOptions {
        block_size: 1024,
        bloom_bits_per_key: 10,
        ..TableBuildOptions::default()
    };
    let (bytes, summary) = build(&entries, opts);
    (open(bytes, None).unwrap(), summary.file_size)
}

fn seek(user: &str) -> Vec<u8> {
    make_internal_key(user.as_bytes(), MAX_SEQUENCE, KIND_FOR_SEEK)
}

#[test]
fn offsets_grow_with_the_key_and_end_at_the_data_end() {
    let (t, _) = thousand_keys();
    let end = t.footer().data_end();
    assert_eq!(t.approximate_offset_of(&seek("a")), 0, "before every key");
    assert_eq!(t.approximate_offset_of(&seek("k0000")), 0);
    assert_eq!(t.approximate_offset_of(&seek("z")), end, "after every key");
    let half = t.approximate_offset_of(&seek("k0500")) as f64;
    let ratio = half / end as f64;
    assert!(
        (0.45..=0.55).contains(&ratio),
        "k0500 at {ratio} of the data"
    );
    let offsets: Vec<u64> = (0..1000)
        .step_by(50)
        .map(|i| t.approximate_offset_of(&seek(&format!("k{i:04}"))))
        .collect();
    assert!(offsets.windows(2).all(|w| w[0] < w[1]), "{offsets:?}");
}

#[test]
fn footer_and_filter_probes_describe_the_table() {
    let (t, size) = thousand_keys();
    let f = t.footer();
    assert_eq!(f.num_entries, 1000);
    assert!(f.has_filter() && f.filter.size >= 1000 * 10 / 8, "{f:?}");
    assert_eq!(f.index.end_with_trailer(), Some(size - FOOTER_LEN as u64));
    assert_eq!(t.filter_probes(), Some(6), "10 bits per key: 6 probes");
    let opts = TableBuildOptions {
        block_size: 1024,
        bloom_bits_per_key: 0,
        ..TableBuildOptions::default()
    };
    let plain = open(build(&[(ik(b"a", 1), b"1".to_vec())], opts).0, None).unwrap();
    assert_eq!(plain.filter_probes(), None);
}
