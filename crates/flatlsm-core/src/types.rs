//! Keys, sequence numbers and value pointers shared by every layer.
//!
//! An *internal key* is `user_key ++ trailer`, where the trailer is a little-endian u64
//! `(sequence << 8) | kind`. Internal keys order by user key ascending, then by sequence
//! descending (newest first), then by kind descending, exactly as in LevelDB. Every sorted
//! structure of the engine (PMTable index, SSTables, merges) uses [`compare_internal_keys`].

use std::cmp::Ordering;

/// A write's position in the total order of writes. Only the low 56 bits are used.
pub type SequenceNumber = u64;

/// Largest sequence number that fits in an internal key trailer.
pub const MAX_SEQUENCE: SequenceNumber = (1 << 56) - 1;

/// Size of the trailer appended to the user key in an internal key.
pub const TRAILER_LEN: usize = 8;

/// What an internal key's value means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum ValueKind {
    /// A tombstone: the key was deleted; the value is empty.
    Deletion = 0,
    /// The value bytes are stored inline.
    Value = 1,
    /// The value is an encoded [`ValuePointer`] into a value log.
    ValuePointer = 2,
}

impl ValueKind {
    /// Decodes a kind byte; `None` for an unknown value.
    pub fn from_u8(b: u8) -> Option<Self> {
        match b {
            0 => Some(ValueKind::Deletion),
            1 => Some(ValueKind::Value),
            2 => Some(ValueKind::ValuePointer),
            _ => None,
        }
    }
}

/// Kind used in lookup keys: the highest kind, so a seek lands on the newest entry of a sequence.
pub const KIND_FOR_SEEK: ValueKind = ValueKind::ValuePointer;

/// Packs a sequence number and a kind into a trailer.
pub fn pack_trailer(seq: SequenceNumber, kind: ValueKind) -> u64 {
    debug_assert!(seq <= MAX_SEQUENCE);
    (seq << 8) | kind as u64
}

/// Builds an internal key.
pub fn make_internal_key(user_key: &[u8], seq: SequenceNumber, kind: ValueKind) -> Vec<u8> {
    let mut k = Vec::with_capacity(user_key.len() + TRAILER_LEN);
    append_internal_key(&mut k, user_key, seq, kind);
    k
}

/// Appends an internal key to `dst` (lets hot loops reuse one buffer).
pub fn append_internal_key(
    dst: &mut Vec<u8>,
    user_key: &[u8],
    seq: SequenceNumber,
    kind: ValueKind,
) {
    dst.extend_from_slice(user_key);
    dst.extend_from_slice(&pack_trailer(seq, kind).to_le_bytes());
}

/// A parsed view of an internal key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedInternalKey<'a> {
    /// The user's key.
    pub user_key: &'a [u8],
    /// Sequence number of the write.
    pub seq: SequenceNumber,
    /// What the value means.
    pub kind: ValueKind,
}

/// Splits an internal key; `None` when it is too short or the kind byte is unknown.
pub fn parse_internal_key(ikey: &[u8]) -> Option<ParsedInternalKey<'_>> {
    if ikey.len() < TRAILER_LEN {
        return None;
    }
    let (user_key, trailer) = ikey.split_at(ikey.len() - TRAILER_LEN);
    let t = u64::from_le_bytes(trailer.try_into().ok()?);
    Some(ParsedInternalKey {
        user_key,
        seq: t >> 8,
        kind: ValueKind::from_u8((t & 0xff) as u8)?,
    })
}

/// The user-key part of an internal key (the whole slice if it is shorter than a trailer).
pub fn user_key_of(ikey: &[u8]) -> &[u8] {
    &ikey[..ikey.len().saturating_sub(TRAILER_LEN)]
}

/// An internal key's user key and trailer (as [`compare_internal_keys`] reads them: a key
/// shorter than a trailer is an empty user key with trailer 0).
pub fn split_internal_key(ikey: &[u8]) -> (&[u8], u64) {
    (user_key_of(ikey), trailer_of(ikey))
}

fn trailer_of(ikey: &[u8]) -> u64 {
    if ikey.len() < TRAILER_LEN {
        return 0;
    }
    let t = &ikey[ikey.len() - TRAILER_LEN..];
    u64::from_le_bytes(t.try_into().expect("8 bytes"))
}

/// Total order on internal keys: user key ascending, then trailer descending (newest first).
pub fn compare_internal_keys(a: &[u8], b: &[u8]) -> Ordering {
    compare_bytes(user_key_of(a), user_key_of(b)).then_with(|| trailer_of(b).cmp(&trailer_of(a)))
}

/// Bytewise order of `a` and `b`, as `a.cmp(b)` gives it, compared eight bytes at a time in
/// line. Why: a lookup compares about twenty short keys (a binary search in an index block
/// and in a data block), and `<[u8]>::cmp` calls the C library's `memcmp` for each, whose call
/// and length dispatch cost more than the comparison of a 16-byte key itself.
#[inline]
pub fn compare_bytes(a: &[u8], b: &[u8]) -> Ordering {
    let common = a.len().min(b.len());
    let (mut wa, mut wb) = (a[..common].chunks_exact(8), b[..common].chunks_exact(8));
    for (x, y) in (&mut wa).zip(&mut wb) {
        let (x, y) = (u64::from_be_bytes(word(x)), u64::from_be_bytes(word(y)));
        if x != y {
            return x.cmp(&y);
        }
    }
    let tail = wa.remainder().iter().zip(wb.remainder());
    for (x, y) in tail {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// The 8 bytes of `key` from byte `at` on, big-endian, zero-padded past its end. Two keys'
/// words at the same offset, where they differ, order as the keys do bytewise (a key that ends
/// first pads with zeros, which sort first), given the keys agree before `at`.
#[inline]
pub fn word_at(key: &[u8], at: usize) -> u64 {
    if let Some(chunk) = key.get(at..at.saturating_add(8)) {
        return u64::from_be_bytes(word(chunk));
    }
    let mut padded = [0u8; 8];
    let tail = key.get(at..).unwrap_or(&[]);
    padded[..tail.len()].copy_from_slice(tail);
    u64::from_be_bytes(padded)
}

/// An eight-byte slice as an array (its callers slice exactly eight bytes).
#[inline]
fn word(chunk: &[u8]) -> [u8; 8] {
    chunk.try_into().expect("callers pass eight bytes")
}

/// An owned internal key with the internal-key order, for use in ordered containers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct InternalKey(pub Vec<u8>);

impl InternalKey {
    /// Builds an internal key.
    pub fn new(user_key: &[u8], seq: SequenceNumber, kind: ValueKind) -> Self {
        InternalKey(make_internal_key(user_key, seq, kind))
    }
    /// The encoded bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
    /// The user-key part.
    pub fn user_key(&self) -> &[u8] {
        user_key_of(&self.0)
    }
}

impl Ord for InternalKey {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_internal_keys(&self.0, &other.0)
    }
}

impl PartialOrd for InternalKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Where a separated value lives: a record in a value-log file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ValuePointer {
    /// Number of the value-log file.
    pub file_number: u64,
    /// Byte offset of the record (not of the value) in that file.
    pub offset: u64,
    /// Length of the value in bytes.
    pub value_len: u32,
    /// Length of the whole record (header + key + value), for garbage accounting and reads.
    pub record_len: u32,
}

/// Encoded size of a [`ValuePointer`].
pub const VALUE_POINTER_LEN: usize = 24;

impl ValuePointer {
    /// Fixed 24-byte little-endian encoding: file u64, offset u64, value_len u32, record_len u32.
    pub fn encode(&self) -> [u8; VALUE_POINTER_LEN] {
        let mut b = [0u8; VALUE_POINTER_LEN];
        b[0..8].copy_from_slice(&self.file_number.to_le_bytes());
        b[8..16].copy_from_slice(&self.offset.to_le_bytes());
        b[16..20].copy_from_slice(&self.value_len.to_le_bytes());
        b[20..24].copy_from_slice(&self.record_len.to_le_bytes());
        b
    }

    /// Decodes; `None` if the slice is not exactly 24 bytes.
    pub fn decode(b: &[u8]) -> Option<Self> {
        if b.len() != VALUE_POINTER_LEN {
            return None;
        }
        Some(ValuePointer {
            file_number: u64::from_le_bytes(b[0..8].try_into().ok()?),
            offset: u64::from_le_bytes(b[8..16].try_into().ok()?),
            value_len: u32::from_le_bytes(b[16..20].try_into().ok()?),
            record_len: u32::from_le_bytes(b[20..24].try_into().ok()?),
        })
    }
}

/// CRC32C (Castagnoli) of `data`, the checksum used for every persisted record.
pub fn crc32c(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

/// CRC32C continued over more data.
pub fn crc32c_extend(crc: u32, data: &[u8]) -> u32 {
    crc32c::crc32c_append(crc, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_keys_order_by_user_key_then_newest_first() {
        let a1 = make_internal_key(b"a", 1, ValueKind::Value);
        let a2 = make_internal_key(b"a", 2, ValueKind::Value);
        let b1 = make_internal_key(b"b", 1, ValueKind::Value);
        assert_eq!(compare_internal_keys(&a2, &a1), Ordering::Less);
        assert_eq!(compare_internal_keys(&a1, &b1), Ordering::Less);
        assert_eq!(compare_internal_keys(&b1, &a2), Ordering::Greater);
    }

    #[test]
    fn prefix_user_keys_order_before_longer_keys() {
        let a = make_internal_key(b"a", 9, ValueKind::Value);
        let ab = make_internal_key(b"ab", 1, ValueKind::Value);
        assert_eq!(compare_internal_keys(&a, &ab), Ordering::Less);
    }

    proptest::proptest! {
        #[test]
        fn word_wise_comparison_orders_bytes_as_slices_do(
            a in proptest::collection::vec(proptest::num::u8::ANY, 0..40),
            b in proptest::collection::vec(proptest::num::u8::ANY, 0..40),
            shared in 0usize..40,
        ) {
            // A shared prefix, so that long equal runs (where the words agree) are common.
            let prefix: Vec<u8> = a.iter().copied().take(shared).collect();
            let b = [prefix.as_slice(), &b].concat();
            proptest::prop_assert_eq!(compare_bytes(&a, &b), a.as_slice().cmp(&b));
            proptest::prop_assert_eq!(compare_bytes(&b, &a), b.as_slice().cmp(&a));
            proptest::prop_assert_eq!(compare_bytes(&a, &a), Ordering::Equal);
        }
    }

    #[test]
    fn internal_key_round_trips() {
        let k = make_internal_key(b"key", 42, ValueKind::Deletion);
        let p = parse_internal_key(&k).unwrap();
        assert_eq!(p.user_key, b"key");
        assert_eq!(p.seq, 42);
        assert_eq!(p.kind, ValueKind::Deletion);
    }

    #[test]
    fn value_pointer_round_trips() {
        let p = ValuePointer {
            file_number: 7,
            offset: 1 << 40,
            value_len: 4096,
            record_len: 4130,
        };
        assert_eq!(ValuePointer::decode(&p.encode()), Some(p));
        assert_eq!(ValuePointer::decode(&[0; 3]), None);
    }
}
