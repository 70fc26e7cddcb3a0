//! A scan, like a get, stops at the first damage it meets: for every profile, one bit flipped in
//! one of the profile's own files (SSTs, value logs, PM Logs, and the design's PM regions:
//! `.pmskl` skiplists, MatrixKV's `matrix.pmc`, SLM-DB's `index.pmbt`) at many deterministic
//! offsets, then four scans (whole forward, whole backward, from a `seek`, backward from a
//! `seek_for_prev`). Every entry a scan yields must be the model's next one; the scan then ends
//! where the model ends or with an error — never with an entry from an older source surfacing
//! because a newer damaged one was skipped.
//!
//! Regression: the merging iterator left a child that stopped on an error out of the merge and
//! went on with the others, so a damaged SST let older versions (and deleted keys) of lower
//! levels through before the error (flatlsm: 67–76 wrong entries), and a damaged MatrixKV row
//! let the other rows' older versions through (65–89 wrong entries).

mod common;

use flatlsm::{Db, DbIterator, Options, Profile, ReadOptions, WriteBatch, WriteOptions};
use flatlsm_core::pm::simulated::SimulatedPmDevice;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Bit flips per damaged file (or PM region).
const FLIPS_PER_FILE: usize = 24;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// Values of several sizes, some over the profiles' 100-byte separation threshold.
fn value(i: u32, round: u32) -> Vec<u8> {
    let len = [12, 40, 150, 700][((i + round) % 4) as usize];
    (0..len)
        .map(|j| (i * 31 + j * 7 + round * 13) as u8)
        .collect()
}

/// A closed database of `profile`, written in rounds so that every key has older versions (and
/// deleted keys tombstones) in older sources: the first round compacted down, the later ones
/// flushed on top, the last one left in the write buffers.
struct Fixture {
    _dir: tempfile::TempDir,
    db: PathBuf,
    device: Option<Arc<SimulatedPmDevice>>,
    model: Model,
}

fn build(profile: Profile) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("db");
    let device = SimulatedPmDevice::new();
    let opts = options(&db_path, profile, &device);
    let simulated = opts.pm_device.is_some();
    let db = Db::open(&db_path, opts).unwrap();
    let mut model = Model::new();
    for round in 0..4u32 {
        write_round(&db, &mut model, round);
        match round {
            0 => db.compact_range(None, None).unwrap(),
            3 => {}
            _ => db.flush().unwrap(),
        }
    }
    db.wait_for_background_work().unwrap();
    db.close().unwrap();
    drop(db);
    Fixture {
        _dir: dir,
        db: db_path,
        device: simulated.then_some(device),
        model,
    }
}

/// Round 0 writes every key; later rounds overwrite a third and delete a tenth of them.
fn write_round(db: &Db, model: &mut Model, round: u32) {
    let w = WriteOptions::default();
    let keys = if round == 3 { 0..300 } else { 0..1200 };
    for i in keys.filter(|i| round == 0 || (i + round).is_multiple_of(3)) {
        let mut b = WriteBatch::new();
        b.put(key(i), value(i, round));
        model.insert(key(i), value(i, round));
        if round > 0 && i % 10 == round {
            b.delete(key(i + 1));
            model.remove(&key(i + 1));
        }
        db.write_opt(&b, &w).unwrap();
    }
}

/// The profile's tiny options for a database at `db`, its PM (if it has a simulated device) on
/// `device`.
fn options(db: &Path, profile: Profile, device: &Arc<SimulatedPmDevice>) -> Options {
    let mut o = common::for_profile(db, profile);
    if o.pm_device.is_some() {
        o.pm_device = Some(device.clone());
    }
    o
}

/// Something to damage: a file (relative to the database directory) or a simulated PM region.
#[derive(Clone, Debug)]
enum Target {
    File(PathBuf),
    Region(String),
}

/// The kinds of file and region a scan reads from, by name.
fn scanned_kind(name: &str) -> Option<&'static str> {
    let kinds = [
        ".sst",
        ".vlog",
        ".pmlog",
        ".pmskl",
        "matrix.pmc",
        "index.pmbt",
    ];
    kinds.into_iter().find(|k| name.ends_with(k))
}

/// Up to three targets of each kind: the lowest-, middle- and highest-named.
fn targets(f: &Fixture) -> Vec<Target> {
    let mut by_kind: BTreeMap<&str, Vec<Target>> = BTreeMap::new();
    for rel in files(&f.db, Path::new("")) {
        let name = rel.file_name().unwrap().to_string_lossy().into_owned();
        if let Some(kind) = scanned_kind(&name) {
            by_kind.entry(kind).or_default().push(Target::File(rel));
        }
    }
    for name in f.device.iter().flat_map(|d| d.region_names()) {
        if let Some(kind) = scanned_kind(&name) {
            by_kind.entry(kind).or_default().push(Target::Region(name));
        }
    }
    by_kind.into_values().flat_map(pick).collect()
}

fn pick(mut v: Vec<Target>) -> Vec<Target> {
    v.sort_by_key(|t| format!("{t:?}"));
    let mut idx = vec![0, v.len() / 2, v.len() - 1];
    idx.dedup();
    idx.into_iter().map(|i| v[i].clone()).collect()
}

/// Every file under `dir`/`rel`, relative to `dir`, sorted.
fn files(dir: &Path, rel: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir.join(rel)).unwrap() {
        let e = e.unwrap();
        let sub = rel.join(e.file_name());
        match e.file_type().unwrap().is_dir() {
            true => out.extend(files(dir, &sub)),
            false => out.push(sub),
        }
    }
    out.sort();
    out
}

/// The target's bytes, and the offsets worth flipping: every byte of a file; the non-zero
/// bytes of a region (most of a region is unused space).
fn contents(f: &Fixture, t: &Target) -> (Vec<u8>, Vec<usize>) {
    let bytes = match t {
        Target::File(rel) => std::fs::read(f.db.join(rel)).unwrap(),
        Target::Region(name) => f.device.as_ref().unwrap().durable_image(name).unwrap(),
    };
    let used = match t {
        Target::File(_) => (0..bytes.len()).collect(),
        Target::Region(_) => (0..bytes.len()).filter(|&i| bytes[i] != 0).collect(),
    };
    (bytes, used)
}

/// One damaged copy: the fixture with bit `bit` of byte `at` of `t` flipped.
struct Damage<'a> {
    target: &'a Target,
    at: usize,
    byte: u8,
}

impl Damage<'_> {
    /// Copies the fixture into `to`; returns the copy's PM device.
    fn copy(f: &Fixture, to: &Path) -> Arc<SimulatedPmDevice> {
        common::copy_dir(&f.db, to);
        match &f.device {
            Some(d) => d.crash_process(),
            None => SimulatedPmDevice::new(),
        }
    }

    /// Copies the fixture into `to` with the damage applied; returns the copy's PM device.
    fn apply(&self, f: &Fixture, to: &Path) -> Arc<SimulatedPmDevice> {
        let device = Self::copy(f, to);
        match self.target {
            Target::File(rel) => {
                let mut bytes = std::fs::read(to.join(rel)).unwrap();
                bytes[self.at] = self.byte;
                std::fs::write(to.join(rel), bytes).unwrap();
            }
            Target::Region(name) => device.corrupt(name, self.at, &[self.byte]).unwrap(),
        }
        device
    }
}

impl std::fmt::Display for Damage<'_> {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(out, "{:?} changed at {}", self.target, self.at)
    }
}

type Entry = (Vec<u8>, Vec<u8>);

/// Holds a scan's entries to the model's (in the scan's order): each must be the next one
/// expected; the scan ends with the expected ones or with an error.
fn check_scan(
    got: impl Iterator<Item = flatlsm::Result<Entry>>,
    mut want: impl Iterator<Item = (Vec<u8>, Vec<u8>)>,
) -> Result<(), String> {
    let show = |k: &[u8]| String::from_utf8_lossy(k).into_owned();
    for (n, item) in got.enumerate() {
        let Ok((k, v)) = item else { return Ok(()) };
        match want.next() {
            Some((wk, wv)) if wk == k && wv == v => {}
            Some((wk, _)) => {
                let what = if wk == k {
                    "a wrong value"
                } else {
                    "a wrong key"
                };
                return Err(format!(
                    "entry {n} is {what}: {} for {}",
                    show(&k),
                    show(&wk)
                ));
            }
            None => return Err(format!("entry {n} ({}) is past the end", show(&k))),
        }
    }
    match want.next() {
        Some((wk, _)) => Err(format!("ended without an error before {}", show(&wk))),
        None => Ok(()),
    }
}

/// The DbIterator cursor's walk from its position (`step` moves it) as entries, its error last.
fn walk(
    mut it: DbIterator,
    step: fn(&mut DbIterator),
) -> impl Iterator<Item = flatlsm::Result<Entry>> {
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        if it.valid() {
            let e = (it.key().to_vec(), it.value().to_vec());
            step(&mut it);
            return Some(Ok(e));
        }
        done = true;
        it.status().err().map(Err)
    })
}

/// The four scans of a copy: whole forward, whole backward, forward from a `seek` to the
/// middle key, backward from a `seek_for_prev` to it.
#[derive(Clone, Copy, Debug)]
enum Scan {
    Forward,
    Backward,
    FromSeek,
    FromSeekForPrev,
}

/// Opens the damaged copy at `path` and scans it the four ways.
fn scan_copy(path: &Path, opts: Options, model: &Model) -> Result<(), String> {
    let Ok(db) = Db::open(path, opts) else {
        return Ok(()); // damage found at open
    };
    for how in [
        Scan::Forward,
        Scan::Backward,
        Scan::FromSeek,
        Scan::FromSeekForPrev,
    ] {
        scan(&db, how, model).map_err(|e| format!("{how:?} scan: {e}"))?;
    }
    Ok(())
}

/// One scan of `db`, held to the model.
fn scan(db: &Db, how: Scan, model: &Model) -> Result<(), String> {
    let ro = ReadOptions {
        verify_checksums: true,
        ..ReadOptions::default()
    };
    let Ok(mut it) = db.iter_opt(&ro) else {
        return Ok(()); // damage found when pinning the sources
    };
    let owned = |(k, v): (&Vec<u8>, &Vec<u8>)| (k.clone(), v.clone());
    let mid = key(600);
    match how {
        Scan::Forward => check_scan(it, model.iter().map(owned)),
        Scan::Backward => check_scan(it.rev(), model.iter().rev().map(owned)),
        Scan::FromSeek => {
            it.seek(&mid);
            let want = model.range(mid.clone()..).map(owned);
            check_scan(walk(it, DbIterator::advance), want)
        }
        Scan::FromSeekForPrev => {
            it.seek_for_prev(&mid);
            let want = model.range(..=mid.clone()).rev().map(owned);
            check_scan(walk(it, DbIterator::prev), want)
        }
    }
}

/// Copies the fixture (with `damage` applied, if any) and scans the copy.
fn scan_damaged(f: &Fixture, profile: Profile, damage: Option<&Damage>) -> Result<(), String> {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("db");
    let device = match damage {
        Some(d) => d.apply(f, &path),
        None => Damage::copy(f, &path),
    };
    let mut opts = options(&path, profile, &device);
    opts.background_work = false;
    scan_copy(&path, opts, &f.model)
}

/// `FLIPS_PER_FILE` changes of one bit of `t`: a quarter in the last 64 bytes of a file (an
/// SST's footer and index, a value log's tail), the rest anywhere in its used bytes.
fn flips<'a>(f: &Fixture, t: &'a Target, rng: &mut StdRng) -> Vec<Damage<'a>> {
    let (bytes, used) = contents(f, t);
    let tail = used.len().saturating_sub(64);
    let one = |i: usize, rng: &mut StdRng| {
        let from = if i.is_multiple_of(4) && matches!(t, Target::File(_)) {
            tail
        } else {
            0
        };
        let at = used[rng.gen_range(from..used.len())];
        let byte = bytes[at] ^ (1 << rng.gen_range(0..8));
        Damage {
            target: t,
            at,
            byte,
        }
    };
    (0..FLIPS_PER_FILE).map(|i| one(i, rng)).collect()
}

/// Damages every target of the profile's fixture at `FLIPS_PER_FILE` offsets and scans each
/// copy; panics listing the copies whose scans went wrong.
fn scans_stop_at_the_first_damage(profile: Profile) {
    let f = build(profile);
    scan_damaged(&f, profile, None).expect("the undamaged fixture scans as its model");
    let mut rng = StdRng::seed_from_u64(0x5ca7_da7a);
    let (mut trials, mut failures) = (0, Vec::new());
    for target in targets(&f) {
        for damage in flips(&f, &target, &mut rng) {
            trials += 1;
            if let Err(e) = scan_damaged(&f, profile, Some(&damage)) {
                failures.push(format!("{damage}: {e}"));
            }
        }
    }
    println!("{profile}: {trials} damaged copies scanned");
    assert!(
        failures.is_empty(),
        "{profile}: {} of {trials} damaged copies scanned wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_damaged_flatlsm_database_scans_no_wrong_entry_before_the_error() {
    scans_stop_at_the_first_damage(Profile::FlatLsm);
}

#[test]
fn a_damaged_leveled_database_scans_no_wrong_entry_before_the_error() {
    scans_stop_at_the_first_damage(Profile::Leveled);
}

#[test]
fn a_damaged_novelsm_database_scans_no_wrong_entry_before_the_error() {
    scans_stop_at_the_first_damage(Profile::NoveLsm);
}

#[test]
fn a_damaged_matrixkv_database_scans_no_wrong_entry_before_the_error() {
    scans_stop_at_the_first_damage(Profile::MatrixKv);
}

#[test]
fn a_damaged_slmdb_database_scans_no_wrong_entry_before_the_error() {
    scans_stop_at_the_first_damage(Profile::SlmDb);
}
