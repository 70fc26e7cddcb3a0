//! Rust range bounds as the half-open `[lower, upper)` byte ranges iterators take.
//!
//! Keys order bytewise, so the smallest key after `k` is `k` followed by a zero byte, and the
//! smallest key after every key starting with `p` is `p` with its last byte below 0xFF
//! incremented and the rest dropped (none if `p` is all 0xFF: the range is unbounded above).

use std::ops::{Bound, RangeBounds};

/// `(lower inclusive, upper exclusive)` of `range`.
pub(super) fn half_open<K: AsRef<[u8]>>(
    range: &impl RangeBounds<K>,
) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
    let lower = match range.start_bound() {
        Bound::Included(k) => Some(k.as_ref().to_vec()),
        Bound::Excluded(k) => Some(successor(k.as_ref())),
        Bound::Unbounded => None,
    };
    let upper = match range.end_bound() {
        Bound::Included(k) => Some(successor(k.as_ref())),
        Bound::Excluded(k) => Some(k.as_ref().to_vec()),
        Bound::Unbounded => None,
    };
    (lower, upper)
}

/// The smallest key greater than `key`.
fn successor(key: &[u8]) -> Vec<u8> {
    let mut k = key.to_vec();
    k.push(0);
    k
}

/// The smallest key greater than every key starting with `prefix`; `None` if there is none
/// (an empty prefix, or one of 0xFF bytes only): the exclusive upper bound of a prefix's keys,
/// for a range that starts elsewhere than the prefix itself (e.g. after a cursor key).
///
/// ```
/// assert_eq!(flatlsm::prefix_end(b"user:"), Some(b"user;".to_vec()));
/// assert_eq!(flatlsm::prefix_end(b"a\xff"), Some(b"b".to_vec()));
/// assert_eq!(flatlsm::prefix_end(b"\xff"), None);
/// ```
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let last = prefix.iter().rposition(|&b| b != 0xFF)?;
    let mut end = prefix[..=last].to_vec();
    end[last] += 1;
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Option<Vec<u8>> {
        Some(s.as_bytes().to_vec())
    }

    #[test]
    fn inclusive_ends_and_exclusive_starts_become_the_next_key() {
        assert_eq!(half_open(&("a".."c")), (b("a"), b("c")));
        assert_eq!(half_open(&("a"..="c")), (b("a"), b("c\0")));
        let start: (Bound<&str>, Bound<&str>) = (Bound::Excluded("a"), Bound::Unbounded);
        assert_eq!(half_open::<&str>(&start), (b("a\0"), None));
        assert_eq!(half_open::<&str>(&(..)), (None, None));
    }

    #[test]
    fn a_prefix_ends_at_its_last_byte_below_0xff_incremented() {
        assert_eq!(prefix_end(b"user:"), b("user;"));
        assert_eq!(prefix_end(&[b'a', 0xFF, 0xFF]), b("b"));
        assert_eq!(prefix_end(&[0xFF, 0xFF]), None);
        assert_eq!(prefix_end(b""), None);
    }
}
