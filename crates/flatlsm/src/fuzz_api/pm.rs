//! The targets of the PM structures recovered in place: the persistent skiplist (`.pmskl`) and
//! the persistent B+-tree (`index.pmbt`, its leaves and key pages). The input is the whole
//! region, copied into DRAM (so the walk may write to it, as the engine does after recovery).

use super::{inconsistent, u64_at};
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::pm::{DramPmDevice, PmDevice, PmRegion};
use crate::pmbtree::{Location, PmBtree};
use crate::pmskiplist::{PmSkiplist, PmSkiplistIter};
use crate::types::{compare_internal_keys, make_internal_key, ValueKind, MAX_SEQUENCE};
use std::ops::Bound;
use std::sync::Arc;

/// Keys a walk looks up again (seek, get), at most: enough to reach every leaf or level of a
/// seed, few enough to keep an execution cheap.
pub(super) const PROBES: usize = 16;

/// `data` as the PM region `name`, in DRAM.
pub(super) fn region(name: &str, data: &[u8]) -> Result<Arc<dyn PmRegion>> {
    let region = DramPmDevice::new("fuzz").create_region(name, data.len())?;
    region.write(0, data);
    Ok(region)
}

/// A skiplist region, numbered as its header says: verified and recovered, then iterated both
/// ways, every probed key sought, and one entry inserted and found.
pub(super) fn pm_skiplist(data: &[u8]) -> Result<()> {
    let number = u64_at(data, 8);
    let region = region("000001.pmskl", data)?;
    let checked = PmSkiplist::verify(&*region, number)?;
    let list = Arc::new(PmSkiplist::recover(region, number)?);
    if list.len() != checked.entries {
        let what = format!("recover kept {} entries, verify {checked:?}", list.len());
        return Err(inconsistent("pm_skiplist", what));
    }
    let keys = skiplist_forward(&list)?;
    skiplist_backward(&list)?;
    skiplist_seeks(&list, &keys)?;
    skiplist_insert(&list)
}

/// Every entry in order (strictly ascending, as many as recovery counted); the probed keys.
fn skiplist_forward(list: &Arc<PmSkiplist>) -> Result<Vec<Vec<u8>>> {
    let mut it = PmSkiplistIter::new(list.clone());
    let (mut keys, mut last, mut n) = (Vec::new(), None::<Vec<u8>>, 0u64);
    it.seek_to_first();
    while it.valid() && n <= list.len() {
        if last
            .as_deref()
            .is_some_and(|l| compare_internal_keys(l, it.key()).is_ge())
        {
            return Err(inconsistent(
                "pm_skiplist",
                format!("entry {n} out of order"),
            ));
        }
        last = Some(it.key().to_vec());
        if keys.len() < PROBES {
            keys.push(it.key().to_vec());
        }
        n += 1;
        it.next();
    }
    match n == list.len() {
        true => Ok(keys),
        false => Err(inconsistent(
            "pm_skiplist",
            format!("iterated {n} of {} entries", list.len()),
        )),
    }
}

/// The last [`PROBES`] entries backwards, strictly descending.
fn skiplist_backward(list: &Arc<PmSkiplist>) -> Result<()> {
    let mut it = PmSkiplistIter::new(list.clone());
    it.seek_to_last();
    let mut last: Option<Vec<u8>> = None;
    for _ in 0..PROBES {
        if !it.valid() {
            break;
        }
        if last
            .as_deref()
            .is_some_and(|l| compare_internal_keys(l, it.key()).is_le())
        {
            return Err(inconsistent(
                "pm_skiplist",
                "backward step out of order".into(),
            ));
        }
        last = Some(it.key().to_vec());
        it.prev();
    }
    Ok(())
}

/// Each probed key is found by a seek.
fn skiplist_seeks(list: &Arc<PmSkiplist>, keys: &[Vec<u8>]) -> Result<()> {
    let mut it = PmSkiplistIter::new(list.clone());
    for k in keys {
        it.seek(k);
        if !it.valid() || it.key() != k.as_slice() {
            return Err(inconsistent("pm_skiplist", "a seek missed an entry".into()));
        }
    }
    Ok(())
}

/// An insert after recovery (through the rebuilt upper levels) is found by a seek.
fn skiplist_insert(list: &Arc<PmSkiplist>) -> Result<()> {
    let seq = list.max_sequence() + 1;
    if seq > MAX_SEQUENCE || !list.insert_batch(&[(seq, ValueKind::Value, b"fuzz", b"v")])? {
        return Ok(());
    }
    let ikey = make_internal_key(b"fuzz", seq, ValueKind::Value);
    skiplist_seeks(list, &[ikey])
}

/// A B+-tree region: recovered, scanned (strictly ascending), every probed key found by `get`
/// at the location the scan gave, a page read after a key, then a key removed and put back
/// and a long key (an out-of-line record) put and removed.
pub(super) fn pm_btree(data: &[u8]) -> Result<()> {
    let tree = PmBtree::recover(region("index.pmbt", data)?)?;
    let all = tree.scan()?;
    if all.windows(2).any(|w| w[0].0 >= w[1].0) {
        return Err(inconsistent("pm_btree", "the scan is not ascending".into()));
    }
    for (key, loc) in all.iter().take(PROBES) {
        if tree.get(key)? != Some(*loc) {
            return Err(inconsistent(
                "pm_btree",
                "get disagrees with the scan".into(),
            ));
        }
    }
    let Some((key, loc)) = all.first() else {
        return Ok(());
    };
    tree.entries_after(Bound::Excluded(key))?;
    btree_changes(&tree, key, *loc)
}

/// Removes `key` and puts it back; puts and removes a long key.
fn btree_changes(tree: &PmBtree, key: &[u8], loc: Location) -> Result<()> {
    if tree.remove(key)? != Some(loc) || tree.get(key)?.is_some() {
        return Err(inconsistent("pm_btree", "a remove missed its key".into()));
    }
    // Putting back may find the tree full (no free node for a split): not a decoder matter.
    if tree.upsert(key, loc).is_ok() && tree.get(key)? != Some(loc) {
        return Err(inconsistent("pm_btree", "an upsert was not found".into()));
    }
    let long = [b'~'; 100];
    if tree.upsert(&long, loc).is_ok() && tree.remove(&long)? != Some(loc) {
        return Err(inconsistent("pm_btree", "a long key was not found".into()));
    }
    Ok(())
}
