//! Inputs on which a decoder panicked, found by fuzzing (docs/fuzzing.md), each kept under
//! `fuzz/corpus/<target>/regression-*` and fed to its decoder here, as given and resealed
//! (`fuzz_api::check`): each must now be refused with a corruption error (or accepted).

use flatlsm::fuzz_api::{check, decode, reseal};
use std::path::PathBuf;

/// The committed regression input `name` of `target`.
fn input(target: &str, name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
        .join(format!("regression-{name}"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Decodes the input resealed (its checksums made to match, what a crafted file has) and
/// expects a corruption error; then the full check of the fuzz target.
fn refused_when_resealed(target: &str, name: &str) {
    let data = input(target, name);
    let sealed = reseal(target, &data).expect("a format with checksums");
    match decode(target, &sealed) {
        Err(e) => assert!(e.is_corruption(), "{target}/{name}: {e}"),
        Ok(()) => panic!("{target}/{name}: accepted"),
    }
    check(target, &data);
}

/// The full check of the fuzz target (as given and resealed): no panic, no inconsistency.
fn survives(target: &str, name: &str) {
    check(target, &input(target, name));
}

#[test]
fn a_row_whose_metadata_points_past_its_pages_is_refused_not_a_panic() {
    refused_when_resealed("rowtable", "meta-offset-past-pages");
}

#[test]
fn a_row_whose_metadata_offset_lies_past_its_data_end_is_refused_not_a_panic() {
    refused_when_resealed("rowtable", "meta-offset-past-data-end");
}

#[test]
fn a_skiplist_head_with_a_damaged_height_word_leaves_no_stale_upper_links() {
    survives("pm_skiplist", "damaged-head-height");
}

#[test]
fn a_btree_slot_whose_key_record_does_not_start_with_its_key_bytes_is_refused() {
    refused_when_resealed("pm_btree", "record-unlike-slot-key");
}

#[test]
fn a_skiplist_link_near_the_largest_offset_is_refused_not_an_overflow() {
    survives("pm_skiplist", "link-near-u64-max");
    let data = input("pm_skiplist", "link-near-u64-max");
    assert!(decode("pm_skiplist", &data).is_err_and(|e| e.is_corruption()));
}

/// Crafted (not found by the fuzzer): the head emptied, the only key of the next leaf made the
/// empty key. Recovery gave that leaf the head's fence, and removing the key then panicked.
#[test]
fn a_btree_leaf_after_the_head_holding_the_empty_key_is_refused() {
    refused_when_resealed("pm_btree", "empty-key-outside-head");
}

#[test]
fn a_footer_read_at_an_offset_near_the_largest_is_refused_not_an_overflow() {
    survives("sst_footer", "offset-near-u64-max");
    let data = input("sst_footer", "offset-near-u64-max");
    assert!(decode("sst_footer", &data).is_err_and(|e| e.is_corruption()));
}
