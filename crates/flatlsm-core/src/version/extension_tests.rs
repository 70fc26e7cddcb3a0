//! Tests of the extension seam with a toy extension, [`Marks`]: tag 16 adds a mark, tag 15
//! removes one (its second field unused), tag 17 raises a high-water mark that never falls.

use super::*;
use crate::fs::{FileSystem, OsFileSystem};
use crate::version::{Manifest, ManifestState, Version};
use std::collections::BTreeSet;
use std::path::Path;

/// The toy extension's state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Marks {
    marks: BTreeSet<u64>,
    high: u64,
}

fn refuse(msg: String) -> Result<Extension> {
    Err(Error::InvalidState(msg))
}

impl Marks {
    fn one(&mut self, r: &DesignRecord) -> Result<()> {
        let n = r.fields[0];
        let ok = match r.tag {
            16 => self.marks.insert(n),
            15 => self.marks.remove(&n),
            _ => std::mem::replace(&mut self.high, n) <= n,
        };
        match ok {
            true => Ok(()),
            false => refuse(format!("toy record {} refuses {n}", r.tag)).map(drop),
        }
    }
}

impl VersionExtension for Marks {
    fn apply(&self, records: &[DesignRecord]) -> Result<Extension> {
        if !records.is_sorted_by_key(|r| r.tag) {
            return refuse("records out of tag order".into());
        }
        let mut next = self.clone();
        records.iter().try_for_each(|r| next.one(r))?;
        Ok(Extension::new(next))
    }

    fn snapshot(&self) -> Vec<DesignRecord> {
        let marks = self.marks.iter().map(|&n| DesignRecord::new(16, [n]));
        let high = (self.high > 0).then(|| DesignRecord::new(17, [self.high]));
        marks.chain(high).collect()
    }

    fn same_state(&self, other: &dyn VersionExtension) -> bool {
        (other as &dyn Any).downcast_ref::<Marks>() == Some(self)
    }

    fn len(&self) -> usize {
        self.marks.len()
    }
}

fn toy(_profile: Option<&str>) -> Extension {
    Extension::new(Marks::default())
}

fn records(list: &[(u64, &[u64])]) -> VersionEdit {
    VersionEdit {
        design_records: list
            .iter()
            .map(|(t, f)| DesignRecord::new(*t, *f))
            .collect(),
        ..VersionEdit::default()
    }
}

fn roundtrip(e: &VersionEdit) -> VersionEdit {
    VersionEdit::decode(&e.encode(), Path::new("MANIFEST-000001"), 0).unwrap()
}

fn marks(v: &Version) -> &Marks {
    v.extension.get::<Marks>().expect("the toy extension")
}

#[test]
fn a_toy_extension_applies_records_and_a_snapshot_recreates_it() {
    let add = records(&[(16, &[4]), (16, &[7]), (17, &[9])]);
    assert_eq!(roundtrip(&add), add);
    let v = Version::with_extension(toy(None)).apply(&add).unwrap();
    let cut = records(&[(15, &[7, 0])]);
    let v = v.apply(&cut).unwrap();
    assert_eq!(marks(&v).marks, BTreeSet::from([4]));
    assert_eq!((marks(&v).high, v.extension.state().len()), (9, 1));
    let snapshot = roundtrip(&v.snapshot_edit());
    let again = Version::with_extension(toy(None)).apply(&snapshot).unwrap();
    assert_eq!(again, v);
    assert_ne!(again, Version::with_extension(toy(None)));
    assert_ne!(Version::default(), Version::with_extension(toy(None)));
}

#[test]
fn records_reach_the_extension_and_the_file_grouped_by_tag() {
    let mixed = records(&[(17, &[3]), (16, &[5]), (15, &[5, 1]), (16, &[6])]);
    let sorted = records(&[(15, &[5, 1]), (16, &[5]), (16, &[6]), (17, &[3])]);
    assert_eq!(mixed.encode(), sorted.encode());
    let v = Version::with_extension(toy(None));
    let v = v.apply(&records(&[(16, &[5])])).unwrap();
    let after = v.apply(&mixed).unwrap();
    assert_eq!(after, v.apply(&sorted).unwrap());
    assert_eq!(after, v.apply(&roundtrip(&mixed)).unwrap());
    assert_eq!(marks(&after).marks, BTreeSet::from([5, 6]));
}

#[test]
fn an_edit_without_records_shares_the_extension_state() {
    let v = Version::with_extension(toy(None))
        .apply(&records(&[(16, &[1])]))
        .unwrap();
    let w = v.apply(&VersionEdit::default()).unwrap();
    let same = std::ptr::eq(marks(&v), marks(&w));
    assert!(same, "the state was copied");
}

#[test]
fn records_of_the_wrong_shape_are_refused_in_memory_and_on_disk() {
    let v = Version::with_extension(toy(None));
    let bad = [
        records(&[(16, &[1, 2])]),
        records(&[(13, &[1])]),
        records(&[(17, &[1]), (17, &[2])]),
    ];
    for e in bad {
        let err = v.apply(&e).unwrap_err();
        assert!(matches!(err, Error::InvalidState(_)), "{e:?}: {err}");
    }
    let mut twice = Vec::new();
    for _ in 0..2 {
        crate::coding::put_varint64(&mut twice, 17);
        crate::coding::put_varint64(&mut twice, 3);
    }
    let err = VersionEdit::decode(&twice, Path::new("M"), 0).unwrap_err();
    assert!(
        err.is_corruption() && err.to_string().contains("17 appears twice"),
        "{err}"
    );
    let truncated = &records(&[(14, &[1, 2, 3, 4])]).encode()[..3];
    let err = VersionEdit::decode(truncated, Path::new("M"), 0).unwrap_err();
    assert!(err.to_string().contains("design record field 3"), "{err}");
    let widest = DESIGN_RECORD_SHAPES.iter().map(|s| s.fields).max();
    assert!(widest <= Some(FIELD_NAMES.len()));
}

#[test]
fn a_version_without_an_extension_refuses_design_records() {
    let err = Version::default()
        .apply(&records(&[(16, &[1])]))
        .unwrap_err();
    assert!(err.to_string().contains("design record 16"), "{err}");
    let nothing = Version::default().apply(&VersionEdit::default()).unwrap();
    assert_eq!(nothing.snapshot_edit().design_records, Vec::new());
}

/// A manifest of the toy design: its snapshot names the profile the chooser sees.
fn toy_manifest(dir: &Path) -> ManifestState {
    let mut state = ManifestState {
        version: Version::with_extension(toy(None)),
        next_file_number: 2,
        profile: Some("toy".into()),
        ..ManifestState::default()
    };
    state.apply(&records(&[(16, &[8]), (17, &[8])])).unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(OsFileSystem);
    let mut m = Manifest::create(fs, dir, 1, &state).unwrap();
    let later = records(&[(16, &[9])]);
    m.append(&later).unwrap();
    state.apply(&later).unwrap();
    state
}

#[test]
fn replay_starts_from_the_chosen_extension_and_reports_a_refusal_as_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let state = toy_manifest(dir.path());
    let seen = std::sync::Mutex::new(Vec::new());
    let choose = |p: Option<&str>| {
        seen.lock().unwrap().push(p.map(str::to_string));
        toy(p)
    };
    assert_eq!(
        Manifest::recover(&OsFileSystem, dir.path(), &choose).unwrap(),
        state
    );
    assert_eq!(*seen.lock().unwrap(), [Some("toy".to_string())]);
    let err = Manifest::recover(&OsFileSystem, dir.path(), &super::super::no_extension);
    let msg = err.unwrap_err().to_string();
    assert!(
        msg.contains("without an extension") && msg.contains("offset 0"),
        "{msg}"
    );
    let fs: Arc<dyn FileSystem> = Arc::new(OsFileSystem);
    let mut m = Manifest::create(fs, dir.path(), 2, &state).unwrap();
    let at = m.file_size();
    m.append(&records(&[(16, &[9])])).unwrap();
    let err = Manifest::recover(&OsFileSystem, dir.path(), &toy).unwrap_err();
    let msg = err.to_string();
    assert!(err.is_corruption(), "{msg}");
    assert!(
        msg.contains("toy record 16 refuses 9") && msg.contains(&format!("offset {at}")),
        "{msg}"
    );
}
