//! Block cache and table cache behaviour.

use super::*;
use crate::fs::{FileSystem, OsFileSystem};
use crate::sst::{sst_file_name, Block, SstDir, SstDirs, TableCache};

fn entries(n: u32) -> Entries {
    (0..n)
        .map(|i| (ik(format!("key{i:06}").as_bytes(), 1), vec![b'v'; 50]))
        .collect()
}

#[test]
fn block_cache_hits_on_repeated_reads() {
    let cache = BlockCache::new(1 << 20);
    let table = open(
        build(&entries(2000), TableBuildOptions::default()).0,
        Some(cache.clone()),
    )
    .unwrap();
    let key = ik(b"key000500", 1);
    assert!(table.get(&key).unwrap().is_some());
    assert_eq!((cache.hits(), cache.misses()), (0, 1));
    assert!(cache.usage() > 0);
    for _ in 0..5 {
        assert!(table.get(&key).unwrap().is_some());
    }
    assert_eq!((cache.hits(), cache.misses()), (5, 1));
    let (all, status) = scan(&table);
    status.unwrap();
    assert_eq!(all.len(), 2000);
    let blocks = cache.misses();
    assert!(blocks > 10, "scan loaded {blocks} blocks");
    let (_, status) = scan(&table);
    status.unwrap();
    assert_eq!(cache.misses(), blocks, "second scan is served by the cache");
}

#[test]
fn block_cache_stays_within_capacity_and_keeps_the_block_just_read() {
    let cache = BlockCache::new(64 << 10);
    let table = open(
        build(&entries(20_000), TableBuildOptions::default()).0,
        Some(cache.clone()),
    )
    .unwrap();
    scan(&table).1.unwrap();
    assert!(cache.usage() <= 64 << 10, "usage {}", cache.usage());
    assert!(cache.usage() > 0);
    assert!(cache.evictions() > 0 && cache.inserts() > cache.evictions());
    let hot = ik(b"key019999", 1);
    table.get(&hot).unwrap();
    let misses = cache.misses();
    table.get(&hot).unwrap();
    assert_eq!(
        cache.misses(),
        misses,
        "most recently used block is resident"
    );
    cache.erase_file(7);
    assert_eq!(cache.usage(), 0);
}

/// Opens in-memory table bytes as table `number` (tables sharing a cache need their own).
fn open_as(number: u64, entries: &Entries, cache: &Arc<BlockCache>) -> Arc<Table> {
    let bytes = build(entries, TableBuildOptions::default()).0;
    let size = bytes.len() as u64;
    let file = Arc::new(MemFile(bytes));
    Table::open(file, test_path(), number, size, Some(cache.clone())).unwrap()
}

/// Scan resistance: blocks read again (the hot set) outlive one scan of cold blocks four times
/// the cache's size, read once each. An LRU cache would hold only the scan's last blocks.
#[test]
fn a_hot_set_survives_a_scan_larger_than_the_block_cache() {
    let cache = BlockCache::new(1 << 20);
    let (filler, hot, cold) = (
        open_as(1, &entries(20_000), &cache),
        open_as(2, &entries(2_000), &cache),
        open_as(3, &entries(80_000), &cache),
    );
    scan(&filler).1.unwrap(); // the cache is full of blocks read once
    let hot_keys: Vec<_> = (0..4)
        .map(|i| ik(format!("key{:06}", i * 400).as_bytes(), 1))
        .collect();
    for key in hot_keys.iter().flat_map(|k| [k, k, k]) {
        assert!(hot.get(key).unwrap().is_some());
    }
    assert_eq!(
        cache.misses() - filler.num_blocks() as u64,
        4,
        "four hot blocks"
    );
    let evicted = cache.evictions();
    scan(&cold).1.unwrap();
    let scanned: u64 = (0..cold.num_blocks())
        .map(|i| cold.block_handle(i).size)
        .sum();
    assert!(
        scanned > 4 << 20,
        "the scan reads 4 times the cache's size: {scanned}"
    );
    assert!(cache.evictions() - evicted > cold.num_blocks() as u64 / 2);
    let misses = cache.misses();
    for key in &hot_keys {
        assert!(hot.get(key).unwrap().is_some());
    }
    assert_eq!(cache.misses(), misses, "every hot block is still cached");
}

/// `erase_file` drops the blocks of one table and keeps the others'.
#[test]
fn erasing_a_file_drops_only_its_blocks() {
    let cache = BlockCache::new(1 << 20);
    let (one, two) = (
        open_as(1, &entries(500), &cache),
        open_as(2, &entries(500), &cache),
    );
    scan(&one).1.unwrap();
    scan(&two).1.unwrap();
    let both = cache.usage();
    cache.erase_file(1);
    assert!(cache.usage() > 0 && cache.usage() < both);
    let misses = cache.misses();
    scan(&two).1.unwrap();
    assert_eq!(cache.misses(), misses, "table 2 is still cached");
    scan(&one).1.unwrap();
    assert_eq!(
        cache.misses() - misses,
        one.num_blocks() as u64,
        "table 1 is read again"
    );
}

#[test]
fn zero_capacity_block_cache_caches_nothing() {
    let cache = BlockCache::new(0);
    let table = open(
        build(&entries(100), TableBuildOptions::default()).0,
        Some(cache.clone()),
    )
    .unwrap();
    table.get(&ik(b"key000001", 1)).unwrap();
    table.get(&ik(b"key000001", 1)).unwrap();
    assert_eq!((cache.hits(), cache.usage()), (0, 0));
}

#[test]
fn tables_are_shared_between_threads() {
    let cache = BlockCache::new(256 << 10);
    let table = open(
        build(&entries(5000), TableBuildOptions::default()).0,
        Some(cache),
    )
    .unwrap();
    let handles: Vec<_> = (0..4u32)
        .map(|t| {
            let table = Arc::clone(&table);
            std::thread::spawn(move || {
                for i in (t..5000).step_by(4) {
                    let k = ik(format!("key{i:06}").as_bytes(), 1);
                    assert_eq!(table.get(&k).unwrap().unwrap().0, k);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn table_cache_opens_on_demand_shares_and_evicts() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(OsFileSystem);
    let path = dir.path().join(sst_file_name(12));
    let dirs = || SstDirs::data_only(dir.path().to_path_buf());
    let mut b = TableBuilder::new(
        fs.create(&path).unwrap(),
        path.clone(),
        TableBuildOptions::default(),
    );
    for (k, v) in entries(300) {
        b.add(&k, &v).unwrap();
    }
    let summary = b.finish().unwrap();
    let cache = TableCache::new(fs.clone(), dirs(), Some(BlockCache::new(1 << 20)));
    let t1 = cache.get(12, summary.file_size, SstDir::Data).unwrap();
    let t2 = cache.get(12, summary.file_size, SstDir::Data).unwrap();
    assert!(Arc::ptr_eq(&t1, &t2));
    assert_eq!(t1.path(), path);
    assert_eq!(t1.verify().unwrap(), 300);
    cache.evict(12);
    assert!(cache.is_empty());
    let e = TableCache::new(fs.clone(), dirs(), None)
        .get(12, summary.file_size + 1, SstDir::Data)
        .unwrap_err();
    assert_corruption_at(&e, &path);
    let missing = cache.get(13, 100, SstDir::Data);
    assert!(matches!(missing, Err(crate::Error::Io { .. })));
}

/// Regression (issue 26): a reader that dropped the last handle of a deleted table paid for
/// closing it (the file's truncate and discard); the purge closes evicted tables instead.
#[test]
fn an_evicted_table_is_closed_by_close_retired_not_by_its_last_reader() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(OsFileSystem);
    let path = dir.path().join(sst_file_name(5));
    let mut b = TableBuilder::new(fs.create(&path).unwrap(), path, Default::default());
    for (k, v) in entries(10) {
        b.add(&k, &v).unwrap();
    }
    let size = b.finish().unwrap().file_size;
    let cache = TableCache::new(fs, SstDirs::data_only(dir.path().to_path_buf()), None);
    let reading = cache.get(5, size, SstDir::Data).unwrap();
    let watch = Arc::downgrade(&reading);
    cache.evict(5);
    assert_eq!(cache.close_retired(), 1, "still read");
    drop(reading);
    assert!(
        watch.upgrade().is_some(),
        "the reader's drop did not close it"
    );
    assert_eq!(cache.close_retired(), 0);
    assert!(watch.upgrade().is_none(), "closed by close_retired");
}

/// With a capacity, the least recently used table leaves the cache; a reader holding it keeps
/// reading, and the next `get` opens the file again.
#[test]
fn a_bounded_table_cache_drops_a_table_used_once_before_one_used_again() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(OsFileSystem);
    let mut sizes = Vec::new();
    for n in 1..=3u64 {
        let path = dir.path().join(sst_file_name(n));
        let mut b = TableBuilder::new(fs.create(&path).unwrap(), path, Default::default());
        for (k, v) in entries(20) {
            b.add(&k, &v).unwrap();
        }
        sizes.push(b.finish().unwrap().file_size);
    }
    let dirs = SstDirs::data_only(dir.path().to_path_buf());
    let cache = TableCache::new(fs, dirs, None).with_capacity(2);
    let get = |n: u64| cache.get(n, sizes[n as usize - 1], SstDir::Data).unwrap();
    let first = get(1);
    get(2);
    get(1); // 1 is used again, 2 only once
    get(3);
    assert_eq!(cache.len(), 2);
    assert!(Arc::ptr_eq(&first, &get(1)), "1 stayed open");
    assert_eq!(first.verify().unwrap(), 20);
    let two = get(2); // opened again; 3 leaves
    assert_eq!((two.verify().unwrap(), cache.len()), (20, 2));
}

/// A table recorded in the PM directory is opened from there, not from the data directory.
#[test]
fn a_table_kept_in_the_pm_directory_is_opened_there() {
    let (data, pm) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let fs: Arc<dyn FileSystem> = Arc::new(OsFileSystem);
    let dirs = SstDirs {
        data: data.path().to_path_buf(),
        pm: pm.path().to_path_buf(),
    };
    let path = dirs.path(7, SstDir::Pm);
    assert_eq!(path, pm.path().join("000007.sst"));
    let mut b = TableBuilder::new(fs.create(&path).unwrap(), path.clone(), Default::default());
    for (k, v) in entries(10) {
        b.add(&k, &v).unwrap();
    }
    let size = b.finish().unwrap().file_size;
    let cache = TableCache::new(fs, dirs, None);
    assert!(cache.get(7, size, SstDir::Data).is_err());
    assert_eq!(cache.get(7, size, SstDir::Pm).unwrap().path(), path);
}

/// A block cache placed in PM (an arena over a region) serves the same reads from PM copies of
/// the blocks, and frees their space as it evicts them.
#[test]
fn block_cache_in_pm_serves_reads_from_its_arena() {
    use crate::pm::{DramPmDevice, PmArena, PmDevice};
    let dev = DramPmDevice::new("/pm");
    let arena = PmArena::new(dev.create_region("blockcache", 64 << 10).unwrap());
    let cache = BlockCache::in_pm(arena.clone());
    let table = open(
        build(&entries(4000), TableBuildOptions::default()).0,
        Some(cache.clone()),
    )
    .unwrap();
    for round in 0..2 {
        let (all, status) = scan(&table);
        status.unwrap();
        assert_eq!(all.len(), 4000, "round {round}");
        assert_eq!(all[1234].1, vec![b'v'; 50]);
    }
    assert!(cache.usage() <= 64 << 10, "charged beyond the arena");
    let key = ik(b"key003999", 1);
    let before = cache.hits();
    assert!(table.get(&key).unwrap().is_some());
    assert!(table.get(&key).unwrap().is_some());
    assert!(cache.hits() > before, "the PM copy was hit");
}

/// A value-log value cached beside the blocks: found again by its log and offset, counted
/// apart from the blocks, charged to the same capacity, and dropped with its log.
#[test]
fn a_value_is_cached_beside_the_blocks_and_counted_apart() {
    let cache = BlockCache::new(1 << 20);
    assert!(cache.get_value(7, 4096).is_none());
    let value = vec![b'x'; 3000];
    cache.insert_value(7, 4096, Arc::new(Block::single_value(value.clone())));
    let found = cache.get_value(7, 4096).expect("cached");
    assert_eq!((found.len(), found.value(0)), (1, &value[..]));
    assert!(
        cache.get_value(7, 8192).is_none(),
        "another record of the same log"
    );
    assert_eq!(
        (
            cache.value_hits(),
            cache.value_misses(),
            cache.value_inserts()
        ),
        (1, 2, 1)
    );
    assert_eq!((cache.hits(), cache.misses(), cache.inserts()), (0, 0, 0));
    assert!(cache.usage() >= 3000);
    cache.erase_file(7);
    assert!(cache.get_value(7, 4096).is_none());
}

/// An unbounded cache serves reads through its front map; an evicted table leaves it, so a
/// read after the file is deleted opens the file again (and fails) instead of reading a
/// table the cache let go.
#[test]
fn a_read_through_the_front_map_finds_the_table_and_an_evicted_table_leaves_it() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(OsFileSystem);
    let path = dir.path().join(sst_file_name(5));
    let mut b = TableBuilder::new(fs.create(&path).unwrap(), path.clone(), Default::default());
    let all = entries(10);
    for (k, v) in &all {
        b.add(k, v).unwrap();
    }
    let size = b.finish().unwrap().file_size;
    let cache = TableCache::new(fs, SstDirs::data_only(dir.path().to_path_buf()), None);
    let first = &all[0].0;
    let found = |c: &TableCache| c.with(5, size, SstDir::Data, |t| Ok(t.get(first)?.is_some()));
    assert!(found(&cache).unwrap(), "opened, then read");
    assert!(found(&cache).unwrap(), "read through the front map");
    cache.evict(5);
    std::fs::remove_file(&path).unwrap();
    assert!(
        found(&cache).is_err(),
        "the evicted table is gone from the front map"
    );
}
