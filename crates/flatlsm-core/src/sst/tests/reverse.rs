//! Reverse iteration over tables (TableIterator) and over a level of tables (LevelIterator),
//! including errors met while moving backward.

use super::*;
use crate::fs::{FileSystem, OsFileSystem};
use crate::sst::{sst_file_name, TableCache};
use crate::testing::walk_check::{check_random_walk, check_reverse_scan};
use crate::version::FileMeta;
use crate::version::LevelIterator;

/// User keys `k0000..` (every third number), each with versions 9 and 4, the older a tombstone.
fn versioned(range: std::ops::Range<u32>) -> Entries {
    let mut out = Vec::new();
    for u in range.step_by(3) {
        let user = format!("k{u:04}");
        out.push((ik(user.as_bytes(), 9), format!("{user}@9").into_bytes()));
        out.push((
            make_internal_key(user.as_bytes(), 4, ValueKind::Deletion),
            Vec::new(),
        ));
    }
    out
}

fn small_blocks() -> TableBuildOptions {
    TableBuildOptions {
        block_size: 128,
        bloom_bits_per_key: 10,
        ..TableBuildOptions::default()
    }
}

#[test]
fn table_iterator_reverse_scan_is_forward_scan_reversed_across_blocks() {
    let entries = versioned(0..600);
    let table = open(build(&entries, small_blocks()).0, None).unwrap();
    assert!(table.num_blocks() > 10, "the test needs many blocks");
    check_reverse_scan(&mut table.iter(), &entries);
}

#[test]
fn table_iterator_random_walk_in_both_directions_matches_model() {
    let entries = versioned(0..600);
    let table = open(build(&entries, small_blocks()).0, None).unwrap();
    check_random_walk(&mut table.iter(), &entries, 11, 3000);
}

#[test]
fn table_iterator_backward_scan_over_a_damaged_block_reports_corruption_naming_the_file() {
    let entries = versioned(0..600);
    let mut bytes = build(&entries, small_blocks()).0;
    bytes[5] ^= 0x40; // inside the first data block: its checksum no longer matches.
    let table = open(bytes, None).unwrap();
    let mut it = table.iter();
    it.seek_to_last();
    let mut got = Vec::new();
    while it.valid() {
        got.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    assert_corruption_at(&it.status().unwrap_err(), &test_path());
    got.reverse();
    assert!(
        !got.is_empty() && entries.ends_with(&got),
        "entries after the damage are intact"
    );
}

/// Writes `parts` as tables 1.. in a temporary directory; returns the level's files and cache.
fn level(parts: &[Entries]) -> (tempfile::TempDir, Vec<Arc<FileMeta>>, Arc<TableCache>) {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(OsFileSystem);
    let mut files = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let number = i as u64 + 1;
        let path = dir.path().join(sst_file_name(number));
        let mut b = TableBuilder::new(fs.create(&path).unwrap(), path, small_blocks());
        for (k, v) in part {
            b.add(k, v).unwrap();
        }
        let summary = b.finish().unwrap();
        files.push(Arc::new(FileMeta {
            number,
            file_size: summary.file_size,
            num_entries: part.len() as u64,
            smallest: part[0].0.clone(),
            largest: part[part.len() - 1].0.clone(),
            vlog_refs: Vec::new(),
            dir: crate::sst::SstDir::Data,
            range_dels_applied: 0,
        }));
    }
    let dirs = crate::sst::SstDirs::data_only(dir.path().to_path_buf());
    let cache = Arc::new(TableCache::new(fs, dirs, None));
    (dir, files, cache)
}

fn level_parts() -> Vec<Entries> {
    vec![
        versioned(0..90),
        versioned(90..300),
        versioned(300..310),
        versioned(310..600),
    ]
}

#[test]
fn level_iterator_reverse_scan_and_random_walk_cross_file_boundaries() {
    let parts = level_parts();
    let model: Entries = parts.concat();
    let (_dir, files, cache) = level(&parts);
    check_reverse_scan(
        &mut LevelIterator::new(files.clone(), cache.clone()),
        &model,
    );
    check_random_walk(&mut LevelIterator::new(files, cache), &model, 21, 3000);
}

#[test]
fn level_iterator_of_no_files_is_invalid_in_both_directions() {
    let (_dir, _, cache) = level(&[]);
    let mut it = LevelIterator::new(Vec::new(), cache);
    it.seek_to_last();
    assert!(!it.valid());
    it.seek_for_prev(&ik(b"k0001", 1));
    assert!(!it.valid());
    it.status().unwrap();
}

#[test]
fn level_iterator_status_keeps_corruption_kind_when_a_file_fails_to_open() {
    // Regression: LevelIterator::status turned every error into InvalidState.
    let parts = level_parts();
    let (dir, files, cache) = level(&parts);
    let mut damaged: Vec<Arc<FileMeta>> = files.iter().map(|f| Arc::new((**f).clone())).collect();
    Arc::make_mut(&mut damaged[0]).file_size += 1; // The footer is no longer where it should be.
    let mut it = LevelIterator::new(damaged, cache);
    it.seek_to_last();
    while it.valid() {
        it.prev();
    }
    let e = it.status().unwrap_err();
    assert_corruption_at(&e, &dir.path().join(sst_file_name(1)));
}
