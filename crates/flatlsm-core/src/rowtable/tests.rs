//! RowTables: build and reopen, corruption refused, and the property that cross-row hint search
//! answers exactly what a full search of every row answers.

use super::build::{build_row, shared_prefix_len, RowBound, RowTarget};
use super::search::{hint_get, hint_positions, naive_get, RowIter};
use super::*;
use crate::iter::{InternalIterator, VecIterator};
use crate::pm::dram::DramPmDevice;
use crate::pm::PmDevice;
use crate::types::{make_internal_key, user_key_of, ValueKind};
use proptest::prelude::*;

const PAGE: usize = 4096;

struct Container {
    region: Arc<dyn PmRegion>,
    allocator: PageAllocator,
}

fn container(pages: u32) -> Container {
    let device = DramPmDevice::new("/test");
    let region = device
        .create_region("matrix", pages as usize * PAGE)
        .unwrap();
    Container {
        region,
        allocator: PageAllocator::new(pages),
    }
}

impl Container {
    fn build(
        &self,
        number: u64,
        prev: Option<(&RowTable, u64)>,
        entries: Vec<(Vec<u8>, Vec<u8>)>,
    ) -> RowTable {
        let target = RowTarget {
            region: &self.region,
            allocator: &self.allocator,
            page_size: PAGE,
        };
        let bound = bound_of(&entries);
        let mut source = VecIterator::new(entries);
        build_row(&target, number, prev, bound, &mut source)
            .unwrap()
            .unwrap()
    }
}

/// The exact size bound of `entries` (internal keys and values).
fn bound_of(entries: &[(Vec<u8>, Vec<u8>)]) -> RowBound {
    fn user(e: Option<&(Vec<u8>, Vec<u8>)>) -> &[u8] {
        e.map_or(&[][..], |e| user_key_of(&e.0))
    }
    RowBound {
        entries: entries.len() as u64,
        key_value_bytes: entries
            .iter()
            .map(|(k, v)| (k.len() - 8 + v.len()) as u64)
            .sum(),
        shared_prefix: shared_prefix_len(user(entries.first()), user(entries.last())),
    }
}

/// A user key, its sequence, and its value (`None`: a tombstone).
type Item = (Vec<u8>, u64, Option<Vec<u8>>);

/// Sorted entries of `items`.
fn entries(items: &[Item]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut v: Vec<(Vec<u8>, Vec<u8>)> = items
        .iter()
        .map(|(k, seq, val)| match val {
            Some(v) => (make_internal_key(k, *seq, ValueKind::Value), v.clone()),
            None => (make_internal_key(k, *seq, ValueKind::Deletion), Vec::new()),
        })
        .collect();
    v.sort_by(|a, b| crate::types::compare_internal_keys(&a.0, &b.0));
    v
}

#[test]
fn a_row_reopens_from_its_first_page_with_every_entry() {
    let c = container(64);
    let big = vec![7u8; 3 * PAGE]; // spans pages
    let e = entries(&[
        (b"apple".to_vec(), 3, Some(b"red".to_vec())),
        (b"kiwi".to_vec(), 5, Some(big.clone())),
        (b"pear".to_vec(), 4, None),
    ]);
    let row = c.build(9, None, e.clone());
    let first = row.pages().pages[0];
    let reopened = RowTable::open(c.region.clone(), PAGE, first, 9).unwrap();
    assert_eq!(reopened.len(), 3);
    for (i, (k, v)) in e.iter().enumerate() {
        let got = reopened.entry(i as u64).unwrap();
        assert_eq!((&got.ikey[..], &got.value[..]), (&k[..], &v[..]));
    }
    assert!(
        RowTable::open(c.region.clone(), PAGE, first, 8).is_err(),
        "wrong number accepted"
    );
}

#[test]
fn a_damaged_header_metadata_or_entry_is_refused_with_its_offset() {
    let c = container(16);
    let row = c.build(
        1,
        None,
        entries(&[
            (b"a".to_vec(), 1, Some(b"x".to_vec())),
            (b"b".to_vec(), 2, Some(b"y".to_vec())),
        ]),
    );
    let base = row.pages().pages[0] as usize * PAGE;
    let flip = |at: usize| {
        let b = c.region.read(at, 1)[0];
        c.region.write(at, &[b ^ 0x40]);
    };
    flip(base + 20); // entries count: header crc
    let err = RowTable::open(c.region.clone(), PAGE, row.pages().pages[0], 1)
        .err()
        .unwrap();
    assert!(err.to_string().contains("header checksum"), "{err}");
    flip(base + 20);
    let meta = row.pages().locate(row.meta_offset).unwrap().0;
    flip(meta + 9); // a forward pointer: metadata crc
    let err = RowTable::open(c.region.clone(), PAGE, row.pages().pages[0], 1)
        .err()
        .unwrap();
    assert!(err.to_string().contains("metadata array"), "{err}");
    flip(meta + 9);
    let value_at = row.pages().locate(row.meta(1).offset).unwrap().0 + ENTRY_HEADER_LEN + 9;
    flip(value_at);
    let err = row.entry(1).unwrap_err();
    assert!(
        err.is_corruption() && err.to_string().contains("value checksum"),
        "{err}"
    );
}

#[test]
fn a_row_that_does_not_fit_takes_no_pages() {
    let c = container(2);
    let target = RowTarget {
        region: &c.region,
        allocator: &c.allocator,
        page_size: PAGE,
    };
    let e = entries(&[(b"k".to_vec(), 1, Some(vec![0; 3 * PAGE]))]);
    let bound = bound_of(&e);
    assert!(build_row(&target, 1, None, bound, &mut VecIterator::new(e))
        .unwrap()
        .is_none());
    assert_eq!(c.allocator.free_count(), 2);
}

/// A row laid out for a loose bound (versions the flush dropped) keeps only the pages it
/// uses; the rest are free again at once, and the row reopens whole.
#[test]
fn a_loose_bound_returns_the_pages_the_row_does_not_use() {
    let c = container(64);
    let e = entries(&[
        (b"a".to_vec(), 1, Some(vec![1; 500])),
        (b"b".to_vec(), 2, Some(vec![2; 500])),
    ]);
    let mut bound = bound_of(&e);
    bound.key_value_bytes += 20 * PAGE as u64; // as if many versions were dropped
    let target = RowTarget {
        region: &c.region,
        allocator: &c.allocator,
        page_size: PAGE,
    };
    let row = build_row(&target, 3, None, bound, &mut VecIterator::new(e.clone()))
        .unwrap()
        .unwrap();
    assert_eq!(row.used_pages(), 1);
    assert_eq!(c.allocator.free_count(), 63);
    let reopened = RowTable::open(c.region.clone(), PAGE, row.pages().pages[0], 3).unwrap();
    assert_eq!(&reopened.entry(1).unwrap().value[..], &e[1].1[..]);
    assert_eq!(reopened.live_pages(0), vec![row.pages().pages[0]]);
}

#[test]
fn truncation_keeps_the_header_page_and_the_pages_from_the_first_live_entry() {
    let c = container(64);
    let items: Vec<_> = (0..40u32)
        .map(|i| (format!("k{i:03}").into_bytes(), 1, Some(vec![1u8; 500])))
        .collect();
    let row = c.build(1, None, entries(&items));
    let all = row.live_pages(0);
    assert_eq!(all, row.pages().pages);
    let later = row.live_pages(30);
    assert!(later.len() < all.len() && later[0] == all[0]);
    assert_eq!(later.last(), all.last());
    assert!(row.bytes_from(30) < row.bytes_from(0));
}

#[test]
fn a_row_iterator_walks_seeks_and_steps_back_over_live_entries() {
    let c = container(64);
    let items: Vec<_> = (0..20u32)
        .map(|i| (format!("k{i:02}").into_bytes(), 10, Some(vec![i as u8; 30])))
        .collect();
    let row = Arc::new(c.build(1, None, entries(&items)));
    let mut it = RowIter::new(row, 5);
    let model = &entries(&items)[5..];
    crate::testing::walk_check::check_reverse_scan(&mut it, model);
    crate::testing::walk_check::check_random_walk(&mut it, model, 7, 400);
    it.seek(&make_internal_key(b"k07x", 99, ValueKind::Value));
    assert_eq!(crate::types::user_key_of(it.key()), b"k08");
}

/// One random row: keys from a small space so rows overlap, several versions of a key.
fn row_items(seq_base: u64) -> impl Strategy<Value = Vec<Item>> {
    prop::collection::vec(
        (
            0u16..300,
            0u64..3,
            prop::option::weighted(0.8, prop::collection::vec(any::<u8>(), 0..40)),
        ),
        0..60,
    )
    .prop_map(move |v| {
        let mut seen = std::collections::BTreeSet::new();
        v.into_iter()
            .filter(|(k, s, _)| seen.insert((*k, *s)))
            .map(|(k, s, val)| {
                (
                    format!("{:0>width$}", k, width = (k % 5 + 1) as usize).into_bytes(),
                    seq_base + s,
                    val,
                )
            })
            .collect()
    })
}

/// Prefixes every key of a property-test row starts with: none, short, and longer than a row
/// records ([`MAX_SHARED_PREFIX`]).
const SHARED_PREFIXES: [&str; 4] = ["", "user", "\0\0\0\0\0\0\x01", "tenant-0042/bucket-7/"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Rows built newest-last with forward pointers, some truncated from the front: every
    /// lookup and seek position through the hints equals a full binary search of every row.
    #[test]
    fn hint_search_answers_what_a_full_search_answers(
        rows in prop::collection::vec(row_items(0), 1..7),
        cuts in prop::collection::vec(0u64..70, 7),
        probes in prop::collection::vec((0u16..320, 0u64..40, 0u8..8), 1..40),
        shared in prop::sample::select(SHARED_PREFIXES.to_vec()),
    ) {
        let c = container(512);
        let mut built: Vec<RowTable> = Vec::new();
        let mut firsts: Vec<u64> = Vec::new();
        let with_prefix = |k: &[u8]| [shared.as_bytes(), k].concat();
        for (i, items) in rows.iter().enumerate() {
            let seq_base = 3 * i as u64 + 1;
            let items: Vec<_> = items.iter().map(|(k, s, v)| (with_prefix(k), s + seq_base, v.clone())).collect();
            // Built while the previous row was cut less far than it is at the lookups.
            let prev = built.last().map(|r| (r, *firsts.last().unwrap() / 2));
            let row = c.build(i as u64 + 1, prev, entries(&items));
            firsts.push(cuts[i].min(row.len()));
            built.push(row);
        }
        let live: Vec<(&RowTable, u64)> = built.iter().zip(&firsts).rev().map(|(t, &first)| (t, first)).collect();
        for (k, snap, kind) in probes {
            let digits = format!("{:0>width$}", k, width = (k % 5 + 1) as usize).into_bytes();
            // Mostly keys sharing the rows' prefix; else keys below, inside or above it.
            let key = match kind {
                0 => digits,
                1 => shared.as_bytes()[..shared.len() / 2].to_vec(),
                2 => [shared.as_bytes(), b"~"].concat(),
                _ => with_prefix(&digits),
            };
            prop_assert_eq!(hint_get(&live, &key, snap).unwrap(), naive_get(&live, &key, snap).unwrap());
            let hinted = hint_positions(&live, &key).unwrap();
            for (row, p) in live.iter().zip(hinted) {
                prop_assert_eq!(p, row.0.lower_bound(&key, row.1, row.0.len()).unwrap());
            }
        }
    }
}

/// Keys sharing a long prefix (db_bench's zero-padded numbers, `user…` keys): the row records
/// it, its metadata prefixes start after it, and keys outside it are placed without a read.
#[test]
fn a_row_records_the_prefix_its_keys_share_and_searches_past_it() {
    let c = container(64);
    let keys: Vec<Vec<u8>> = (0..50u32)
        .map(|i| format!("0000000000{i:06}").into_bytes())
        .collect();
    let items: Vec<Item> = keys
        .iter()
        .map(|k| (k.clone(), 1, Some(b"v".to_vec())))
        .collect();
    let row = c.build(1, None, entries(&items));
    let reopened = RowTable::open(c.region.clone(), PAGE, row.pages().pages[0], 1).unwrap();
    for r in [&row, &reopened] {
        assert_eq!(r.shared, b"00000000000000");
        assert_eq!(r.probe(b"00"), Probe::Below);
        assert_eq!(r.probe(b"1"), Probe::Above);
        assert_eq!(r.lower_bound(b"0000000000000017", 0, 50).unwrap(), 17);
        assert_eq!(r.lower_bound(b"00000000000000175", 0, 50).unwrap(), 18);
        assert_eq!(r.lower_bound(b"000", 0, 50).unwrap(), 0);
        assert_eq!(r.lower_bound(b"0001", 0, 50).unwrap(), 50);
    }
    // The element prefixes differ: a search reads the data only at its target.
    assert_ne!(row.meta(1).prefix, row.meta(2).prefix);
}

/// A scan over several overlapping rows, some cut from the front, merges them in order and
/// its hinted seeks land where a plain merge's do.
#[test]
fn a_matrix_iterator_merges_rows_and_seeks_through_the_hints() {
    use crate::iter::MergingIterator;
    let c = container(256);
    let mut built: Vec<Arc<RowTable>> = Vec::new();
    for r in 0..4u64 {
        let items: Vec<Item> = (0..60u32)
            .filter(|i| !(i + r as u32).is_multiple_of(3))
            .map(|i| {
                (
                    format!("k{:03}", i * 2 + r as u32 % 2).into_bytes(),
                    r * 100 + 1,
                    Some(vec![r as u8; 20]),
                )
            })
            .collect();
        let prev = built.last().map(|t| (&**t, 0));
        built.push(Arc::new(c.build(r + 1, prev, entries(&items))));
    }
    let rows: Vec<(Arc<RowTable>, u64)> = built
        .iter()
        .rev()
        .map(|t| (t.clone(), (t.number() * 3) % 7))
        .collect();
    let plain = || {
        let children = rows
            .iter()
            .map(|(t, f)| Box::new(RowIter::new(t.clone(), *f)) as Box<dyn InternalIterator>);
        MergingIterator::new(children.collect())
    };
    let mut model = Vec::new();
    let mut p = plain();
    p.seek_to_first();
    while p.valid() {
        model.push((p.key().to_vec(), p.value().to_vec()));
        p.next();
    }
    let mut it = super::search::MatrixIter::new(rows.clone());
    crate::testing::walk_check::check_reverse_scan(&mut it, &model);
    crate::testing::walk_check::check_random_walk(&mut it, &model, 3, 500);
}
