//! Tests of [`VersionEdit`] coding and [`Version`].

use super::*;
use crate::error::Error;
use crate::types::{make_internal_key, ValueKind};
use proptest::prelude::*;
use std::path::Path;

fn ikey(user: &str, seq: u64) -> Vec<u8> {
    make_internal_key(user.as_bytes(), seq, ValueKind::Value)
}

/// A file covering user keys `[lo, hi]`.
pub(super) fn file(number: u64, lo: &str, hi: &str) -> FileMeta {
    FileMeta {
        number,
        file_size: number * 100,
        num_entries: number,
        smallest: ikey(lo, 9),
        largest: ikey(hi, 1),
        vlog_refs: Vec::new(),
        dir: crate::sst::SstDir::Data,
        range_dels_applied: 0,
    }
}

fn add(files: Vec<(usize, FileMeta)>) -> VersionEdit {
    VersionEdit {
        new_files: files,
        ..VersionEdit::default()
    }
}

fn numbers(v: &Version, level: usize) -> Vec<u64> {
    v.levels[level].iter().map(|f| f.number).collect()
}

fn arb_file() -> impl Strategy<Value = FileMeta> {
    (
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        proptest::collection::vec(any::<u8>(), 0..20),
        proptest::collection::vec(any::<u8>(), 0..20),
        proptest::collection::vec((any::<u64>(), any::<u64>()), 0..4),
        any::<bool>(),
    )
        .prop_map(
            |(number, file_size, num_entries, smallest, largest, vlog_refs, in_pm)| FileMeta {
                number,
                file_size,
                num_entries,
                smallest,
                largest,
                vlog_refs,
                dir: match in_pm {
                    true => crate::sst::SstDir::Pm,
                    false => crate::sst::SstDir::Data,
                },
                range_dels_applied: 0,
            },
        )
}

/// Design records of every shape, in tag order (as decoding a written edit gives them), the
/// `once` tag at most once.
fn arb_design_records() -> impl Strategy<Value = Vec<extension::DesignRecord>> {
    let shapes = extension::DESIGN_RECORD_SHAPES;
    let one = (0..shapes.len(), proptest::collection::vec(any::<u64>(), 4));
    proptest::collection::vec(one, 0..6).prop_map(move |picked| {
        let mut out: Vec<extension::DesignRecord> = picked
            .into_iter()
            .map(|(i, f)| extension::DesignRecord::new(shapes[i].tag, &f[..shapes[i].fields]))
            .collect();
        out.sort_by_key(|r| r.tag);
        out.dedup_by(|a, b| a.tag == b.tag && extension::record_shape(a.tag).unwrap().once);
        out
    })
}

fn arb_edit() -> impl Strategy<Value = VersionEdit> {
    (arb_edit_fields(), arb_design_records()).prop_map(|(edit, design_records)| VersionEdit {
        design_records,
        ..edit
    })
}

fn arb_edit_fields() -> impl Strategy<Value = VersionEdit> {
    (
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<u64>()),
        proptest::collection::vec((0usize..MAX_LEVELS, any::<u64>()), 0..4),
        proptest::collection::vec((0usize..MAX_LEVELS, arb_file()), 0..4),
        proptest::collection::vec((any::<u64>(), any::<u64>()), 0..4),
        proptest::collection::vec(any::<u64>(), 0..4),
        any::<bool>(),
        proptest::collection::vec((any::<u64>(), any::<u64>()), 0..4),
        proptest::option::of("[0-9a-f]{32}"),
        proptest::collection::vec(any::<(u64, u64, u64, u64)>(), 0..3),
        proptest::collection::vec(any::<u64>(), 0..3),
    )
        .prop_map(
            |(n, s, p, df, nf, nv, dv, track, logs, id, nr, dr)| VersionEdit {
                next_file_number: n,
                last_sequence: s,
                min_unflushed_pmlog: p,
                deleted_files: df,
                new_files: nf,
                new_vlogs: nv
                    .into_iter()
                    .map(|(number, total_bytes)| VlogMeta {
                        number,
                        total_bytes,
                    })
                    .collect(),
                deleted_vlogs: dv,
                tracks_pm_logs: track,
                new_pm_logs: logs
                    .into_iter()
                    .map(|(number, replaces)| PmLogMeta { number, replaces })
                    .collect(),
                identity: id.clone(),
                profile: id.map(|_| "leveled".to_string()),
                new_redirects: nr
                    .into_iter()
                    .map(|(victim, number, file_size, target)| RedirectMeta {
                        victim,
                        number,
                        file_size,
                        target,
                    })
                    .collect(),
                deleted_redirects: dr,
                ..VersionEdit::default()
            },
        )
}

proptest! {
    #[test]
    fn edit_encode_decode_round_trips(edit in arb_edit()) {
        let bytes = edit.encode();
        let back = VersionEdit::decode(&bytes, Path::new("m"), 0).unwrap();
        prop_assert_eq!(back, edit);
    }

    #[test]
    fn edit_decode_never_panics_on_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = VersionEdit::decode(&bytes, Path::new("m"), 7);
    }

    #[test]
    fn edit_decode_of_truncated_encoding_is_an_error_or_a_prefix(edit in arb_edit(), cut in 0usize..200) {
        let bytes = edit.encode();
        let cut = cut.min(bytes.len());
        // Any prefix either fails cleanly or decodes (when cut at a field boundary).
        let _ = VersionEdit::decode(&bytes[..cut], Path::new("m"), 0);
    }
}

#[test]
fn empty_edit_encodes_to_nothing() {
    assert!(VersionEdit::default().encode().is_empty());
    assert!(VersionEdit::default().is_empty());
}

#[test]
fn unknown_tag_is_corruption_at_its_offset() {
    let mut bytes = VersionEdit {
        next_file_number: Some(5),
        ..VersionEdit::default()
    }
    .encode();
    let at = bytes.len() as u64;
    bytes.push(99);
    match VersionEdit::decode(&bytes, Path::new("m"), 1000).unwrap_err() {
        Error::Corruption { offset, detail, .. } => {
            assert_eq!(offset, 1000 + at + 1);
            assert!(detail.contains("unknown"), "{detail}");
        }
        e => panic!("unexpected {e}"),
    }
}

#[test]
fn repeated_scalar_field_is_corruption() {
    let once = VersionEdit {
        last_sequence: Some(5),
        ..VersionEdit::default()
    }
    .encode();
    let twice = [once.clone(), once].concat();
    assert!(VersionEdit::decode(&twice, Path::new("m"), 0)
        .unwrap_err()
        .is_corruption());
}

#[test]
fn apply_keeps_levels_sorted_by_smallest_key() {
    let v = Version::default()
        .apply(&add(vec![
            (1, file(3, "m", "p")),
            (1, file(1, "a", "c")),
            (1, file(2, "d", "f")),
            (2, file(5, "x", "z")),
            (2, file(4, "b", "w")),
        ]))
        .unwrap();
    assert_eq!(numbers(&v, 1), vec![1, 2, 3]);
    assert_eq!(numbers(&v, 2), vec![4, 5]);
    assert_eq!(v.file_numbers(), vec![1, 2, 3, 4, 5]);
    assert_eq!(v.num_files(1), 3);
    assert_eq!(v.level_bytes(1), 600);
    assert_eq!(v.level_bytes(7), 0);
}

#[test]
fn apply_rejects_overlap_in_levels_at_least_one() {
    let v = Version::default()
        .apply(&add(vec![(1, file(1, "c", "f"))]))
        .unwrap();
    for (lo, hi) in [("a", "c"), ("f", "g"), ("d", "e"), ("a", "z")] {
        let err = v.apply(&add(vec![(1, file(2, lo, hi))])).unwrap_err();
        assert!(matches!(err, Error::InvalidState(_)), "{lo}-{hi}: {err}");
    }
    // Same user key with different sequence numbers is still an overlap.
    let mut same_key = file(3, "f", "g");
    same_key.smallest = ikey("f", 0);
    assert!(v.apply(&add(vec![(1, same_key)])).is_err());
    // Adjacent but disjoint is fine, and level 0 may overlap.
    assert!(v.apply(&add(vec![(1, file(4, "fa", "g"))])).is_ok());
    let l0 = v
        .apply(&add(vec![(0, file(5, "a", "z")), (0, file(6, "b", "c"))]))
        .unwrap();
    assert_eq!(numbers(&l0, 0), vec![5, 6]);
}

#[test]
fn apply_rejects_unknown_deletes_levels_and_duplicates() {
    let v = Version::default()
        .apply(&add(vec![(1, file(1, "a", "b"))]))
        .unwrap();
    let cases = [
        VersionEdit {
            deleted_files: vec![(1, 9)],
            ..VersionEdit::default()
        },
        VersionEdit {
            deleted_files: vec![(2, 1)],
            ..VersionEdit::default()
        },
        VersionEdit {
            deleted_vlogs: vec![4],
            ..VersionEdit::default()
        },
        add(vec![(MAX_LEVELS, file(2, "x", "y"))]),
        add(vec![(2, file(1, "x", "y"))]),
        add(vec![(2, file(2, "y", "x"))]),
    ];
    for edit in cases {
        let err = v.apply(&edit).unwrap_err();
        assert!(matches!(err, Error::InvalidState(_)), "{edit:?}: {err}");
    }
    assert_eq!(
        numbers(&v, 1),
        vec![1],
        "a failed apply leaves the version alone"
    );
}

#[test]
fn apply_moves_a_file_between_levels_in_one_edit() {
    let v = Version::default()
        .apply(&add(vec![(1, file(1, "a", "b"))]))
        .unwrap();
    let moved = v
        .apply(&VersionEdit {
            deleted_files: vec![(1, 1)],
            new_files: vec![(2, file(1, "a", "b"))],
            ..VersionEdit::default()
        })
        .unwrap();
    assert_eq!(moved.num_files(1), 0);
    assert_eq!(numbers(&moved, 2), vec![1]);
}

#[test]
fn apply_checks_value_log_references() {
    let mut f = file(1, "a", "b");
    f.vlog_refs = vec![(7, 100)];
    assert!(Version::default()
        .apply(&add(vec![(1, f.clone())]))
        .is_err());
    let v = Version::default()
        .apply(&VersionEdit {
            new_vlogs: vec![VlogMeta {
                number: 7,
                total_bytes: 500,
            }],
            new_files: vec![(1, f)],
            ..VersionEdit::default()
        })
        .unwrap();
    let drop_vlog = VersionEdit {
        deleted_vlogs: vec![7],
        ..VersionEdit::default()
    };
    assert!(v.apply(&drop_vlog).is_err(), "still referenced");
    let gc = VersionEdit {
        deleted_files: vec![(1, 1)],
        ..drop_vlog
    };
    let after = v.apply(&gc).unwrap();
    assert!(after.vlogs.is_empty());
}

#[test]
fn vlog_live_bytes_sums_refs_over_all_levels() {
    let vlogs = [1, 2, 3].map(|number| VlogMeta {
        number,
        total_bytes: 1000,
    });
    let mut a = file(10, "a", "b");
    a.vlog_refs = vec![(1, 100), (2, 50)];
    let mut b = file(11, "c", "d");
    b.vlog_refs = vec![(1, 25)];
    let mut c = file(12, "a", "z");
    c.vlog_refs = vec![(2, 7)];
    let v = Version::default()
        .apply(&VersionEdit {
            new_vlogs: vlogs.to_vec(),
            new_files: vec![(1, a), (1, b), (2, c)],
            ..VersionEdit::default()
        })
        .unwrap();
    let live = v.vlog_live_bytes();
    assert_eq!(
        live.into_iter().collect::<Vec<_>>(),
        vec![(1, 125), (2, 57), (3, 0)]
    );
}

fn three_files() -> Version {
    Version::default()
        .apply(&add(vec![
            (1, file(1, "b", "d")),
            (1, file(2, "f", "h")),
            (1, file(3, "j", "j")),
        ]))
        .unwrap()
}

#[test]
fn overlapping_files_uses_inclusive_ends() {
    let v = three_files();
    let q = |lo: &str, hi: &str| -> Vec<u64> {
        v.overlapping_files(1, lo.as_bytes(), hi.as_bytes())
            .iter()
            .map(|f| f.number)
            .collect()
    };
    assert_eq!(q("a", "b"), vec![1]);
    assert_eq!(q("d", "f"), vec![1, 2]);
    assert_eq!(q("da", "ez"), Vec::<u64>::new(), "between files");
    assert_eq!(q("h", "j"), vec![2, 3]);
    assert_eq!(q("a", "z"), vec![1, 2, 3]);
    assert_eq!(q("k", "z"), Vec::<u64>::new());
    assert_eq!(q("j", "j"), vec![3]);
    assert_eq!(q("z", "a"), Vec::<u64>::new(), "empty range");
    assert!(v.overlapping_files(9, b"a", b"z").is_empty());
}

#[test]
fn overlapping_files_scans_level_zero() {
    let v = Version::default()
        .apply(&add(vec![(0, file(1, "a", "m")), (0, file(2, "c", "d"))]))
        .unwrap();
    let got: Vec<u64> = v
        .overlapping_files(0, b"e", b"f")
        .iter()
        .map(|f| f.number)
        .collect();
    assert_eq!(got, vec![1]);
}

#[test]
fn file_for_key_finds_the_one_file_or_none() {
    let v = three_files();
    let at = |k: &str| v.file_for_key(1, k.as_bytes()).map(|f| f.number);
    assert_eq!(at("a"), None);
    assert_eq!(at("b"), Some(1));
    assert_eq!(at("d"), Some(1));
    assert_eq!(at("da"), None);
    assert_eq!(at("e"), None);
    assert_eq!(at("f"), Some(2));
    assert_eq!(at("h"), Some(2));
    assert_eq!(at("j"), Some(3));
    assert_eq!(at("ja"), None);
    assert_eq!(v.file_for_key(0, b"b"), None);
    assert_eq!(v.file_for_key(2, b"b"), None);
}

#[test]
fn snapshot_edit_recreates_the_version() {
    let mut v = three_files();
    v = v
        .apply(&VersionEdit {
            new_vlogs: vec![VlogMeta {
                number: 4,
                total_bytes: 9,
            }],
            new_files: vec![(2, file(5, "a", "z")), (0, file(6, "a", "b"))],
            ..VersionEdit::default()
        })
        .unwrap();
    let again = Version::default().apply(&v.snapshot_edit()).unwrap();
    assert_eq!(again, v);
}

fn tombstone(start: &str, end: &str, seq: u64) -> crate::range_del::RangeTombstone {
    crate::range_del::RangeTombstone {
        start: start.into(),
        end: end.into(),
        seq,
    }
}

#[test]
fn range_tombstones_and_applied_marks_round_trip_and_apply() {
    let mut f = file(7, "a", "c");
    f.range_dels_applied = 40;
    let mut edit = add(vec![(1, f)]);
    edit.new_range_dels = vec![tombstone("b", "d", 40), tombstone("x", "z", 41)];
    let decoded = VersionEdit::decode(&edit.encode(), Path::new("M"), 0).unwrap();
    assert_eq!(decoded, edit);
    let v = Version::default().apply(&edit).unwrap();
    assert_eq!(v.range_dels.covering_seq(b"c", 100), Some(40));
    assert_eq!(v.levels[1][0].range_dels_applied, 40);
    let retire = VersionEdit {
        retired_range_dels: vec![40],
        ..VersionEdit::default()
    };
    let v = v.apply(&retire).unwrap();
    assert_eq!(v.range_dels.covering_seq(b"c", 100), None);
    assert_eq!(Version::default().apply(&v.snapshot_edit()).unwrap(), v);
}

#[test]
fn a_bad_range_tombstone_edit_is_refused() {
    let retire_missing = VersionEdit {
        retired_range_dels: vec![5],
        ..VersionEdit::default()
    };
    assert!(Version::default().apply(&retire_missing).is_err());
    let empty = VersionEdit {
        new_range_dels: vec![tombstone("b", "b", 5)],
        ..VersionEdit::default()
    };
    assert!(Version::default().apply(&empty).is_err());
    let mut orphan_mark = Vec::new();
    crate::coding::put_varint64(&mut orphan_mark, 21);
    crate::coding::put_varint64(&mut orphan_mark, 9);
    crate::coding::put_varint64(&mut orphan_mark, 3);
    let err = VersionEdit::decode(&orphan_mark, Path::new("M"), 0).unwrap_err();
    assert!(err.to_string().contains("file 9"), "{err}");
}

/// The run count is kept per version (every write reads it); a version applied from a counted
/// one counts its own runs, and the count plays no part in equality.
#[test]
fn level0_runs_are_counted_once_per_version_and_anew_after_an_edit() {
    let one_run = Version::default()
        .apply(&add(vec![(0, file(1, "a", "c")), (0, file(2, "d", "f"))]))
        .unwrap();
    assert_eq!(one_run.level0_runs(), 1);
    let two_runs = one_run.apply(&add(vec![(0, file(3, "b", "e"))])).unwrap();
    assert_eq!(two_runs.level0_runs(), 2);
    assert_eq!(one_run.level0_runs(), 1);
    let uncounted = Version::default()
        .apply(&add(vec![(0, file(1, "a", "c")), (0, file(2, "d", "f"))]))
        .unwrap();
    assert_eq!(uncounted, one_run);
}
