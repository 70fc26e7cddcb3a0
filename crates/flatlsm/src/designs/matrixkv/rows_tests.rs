//! Tests of [`RowSet`], MatrixKV's version extension: its records' encoding (manifest tags
//! 14–17, byte for byte as before the extension seam), its invariants, and its snapshots.

use super::*;
use crate::version::{no_extension, Manifest, ManifestState};
use std::path::Path;

fn row(number: u64) -> RowMeta {
    RowMeta {
        number,
        first_page: number as u32 * 3,
        entries: 10,
        bytes: 1000,
    }
}

fn roundtrip(e: &VersionEdit) -> VersionEdit {
    VersionEdit::decode(&e.encode(), Path::new("MANIFEST-000001"), 0).unwrap()
}

fn rows(v: &Version) -> &RowSet {
    v.extension.get::<RowSet>().expect("MatrixKV's extension")
}

fn empty() -> Version {
    Version::with_extension(extension())
}

#[test]
fn row_fields_survive_encoding_and_a_snapshot_recreates_them() {
    let add = RowEdit {
        new_rows: vec![row(4), row(7)],
        compactor_through: Some(4),
        ..RowEdit::default()
    }
    .into_edit();
    assert_eq!(roundtrip(&add), add);
    let v = empty().apply(&add).unwrap();
    let cut = RowEdit {
        row_firsts: vec![(4, 6)],
        deleted_rows: vec![7],
        ..RowEdit::default()
    }
    .into_edit();
    assert_eq!(roundtrip(&cut), cut);
    let v = v.apply(&cut).unwrap();
    assert_eq!(rows(&v).rows[&4].first, 6);
    let again = empty().apply(&roundtrip(&v.snapshot_edit())).unwrap();
    assert_eq!(rows(&again), rows(&v));
    assert_eq!(again, v);
}

/// The bytes of tags 14–17 as `version/rows.rs` wrote them before the rows left core: every
/// new row, then first entries, deletions and the boundary, whatever order the edit lists them.
#[test]
fn row_records_encode_exactly_as_the_manifest_format_says() {
    let fields = RowEdit {
        new_rows: vec![row(300)],
        row_firsts: vec![(5, 2)],
        deleted_rows: vec![6],
        compactor_through: Some(300),
    };
    let expected = [
        14, 0xac, 0x02, 0x84, 0x07, 10, 0xe8,
        0x07, // row 300: page 900, 10 entries, 1000 bytes
        15, 5, 2, // row 5 starts at entry 2
        16, 6, // row 6 deleted
        17, 0xac, 0x02, // compactor through 300
    ];
    assert_eq!(fields.clone().into_edit().encode(), expected);
    let mut reversed = fields.into_edit();
    reversed.design_records.reverse();
    assert_eq!(reversed.encode(), expected);
    let parsed = RowEdit::parse(&roundtrip(&reversed).design_records).unwrap();
    assert_eq!(
        parsed.records(),
        RowEdit::parse(&reversed.design_records).unwrap().records()
    );
}

#[test]
fn rows_out_of_order_backwards_or_missing_are_refused() {
    let v = empty()
        .apply(
            &RowEdit {
                new_rows: vec![row(5)],
                row_firsts: vec![(5, 3)],
                compactor_through: Some(5),
                ..RowEdit::default()
            }
            .into_edit(),
        )
        .unwrap();
    let bad = [
        (
            RowEdit {
                new_rows: vec![row(5)],
                ..RowEdit::default()
            },
            "row 5 added out of order",
        ),
        (
            RowEdit {
                row_firsts: vec![(5, 2)],
                ..RowEdit::default()
            },
            "entry 2 outside 3..=10",
        ),
        (
            RowEdit {
                row_firsts: vec![(5, 11)],
                ..RowEdit::default()
            },
            "entry 11 outside 3..=10",
        ),
        (
            RowEdit {
                row_firsts: vec![(6, 1)],
                ..RowEdit::default()
            },
            "row 6 is not in the version",
        ),
        (
            RowEdit {
                deleted_rows: vec![6],
                ..RowEdit::default()
            },
            "deleted row 6 is not in",
        ),
        (
            RowEdit {
                compactor_through: Some(4),
                ..RowEdit::default()
            },
            "moves back from 5 to 4",
        ),
    ];
    for (e, why) in bad {
        let err = v.apply(&e.into_edit()).unwrap_err();
        assert!(
            matches!(err, Error::InvalidState(_)) && err.to_string().contains(why),
            "{err}"
        );
    }
}

#[test]
fn a_first_page_beyond_u32_or_a_repeated_boundary_is_refused() {
    let huge = DesignRecord::new(TAG_NEW_ROW, [1, 1 << 32, 1, 1]);
    let err = empty().apply(&VersionEdit {
        design_records: vec![huge],
        ..VersionEdit::default()
    });
    assert!(err.unwrap_err().to_string().contains("exceeds u32"));
    let twice = [17u64, 3, 17, 3].map(|b| b as u8);
    let err = VersionEdit::decode(&twice, Path::new("M"), 0).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    let through = DesignRecord::new(TAG_COMPACTOR_THROUGH, [3]);
    let err = RowEdit::parse(&[through.clone(), through]).unwrap_err();
    assert!(
        err.to_string().contains("compactor boundary appears twice"),
        "{err}"
    );
}

/// Regression of the extension seam: a MatrixKV manifest written, closed and replayed keeps
/// its rows only through the extension the engine chooses for the profile it records; replayed
/// without one, its first record is refused as corruption.
#[test]
fn a_matrixkv_manifest_keeps_its_rows_through_the_chosen_extension() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = ManifestState {
        version: empty(),
        next_file_number: 9,
        profile: Some(crate::options::Profile::MatrixKv.name().to_string()),
        ..ManifestState::default()
    };
    let add = RowEdit {
        new_rows: vec![row(4), row(7)],
        compactor_through: Some(4),
        ..RowEdit::default()
    };
    state.apply(&add.into_edit()).unwrap();
    let fs: Arc<dyn crate::fs::FileSystem> = Arc::new(crate::fs::OsFileSystem);
    let mut m = Manifest::create(fs, dir.path(), 1, &state).unwrap();
    let cut = RowEdit {
        row_firsts: vec![(4, 6)],
        ..RowEdit::default()
    };
    m.append(&cut.clone().into_edit()).unwrap();
    state.apply(&cut.into_edit()).unwrap();
    drop(m);
    let choose = crate::designs::version_extension;
    let back = Manifest::recover(&crate::fs::OsFileSystem, dir.path(), &choose).unwrap();
    assert_eq!(back, state);
    assert_eq!(rows(&back.version).rows[&4].first, 6);
    assert_eq!(row_set(&back.version).compactor_through, 4);
    let err = Manifest::recover(&crate::fs::OsFileSystem, dir.path(), &no_extension);
    assert!(err.unwrap_err().is_corruption());
}
