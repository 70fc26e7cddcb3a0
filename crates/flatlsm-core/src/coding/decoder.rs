//! Length-prefixed bytes and a bounds-checked [`Decoder`] for tagged payloads (manifest
//! records, WAL batches).
//!
//! Varints are unsigned LEB128 (7 bits per byte, low group first, at most 10 bytes for a u64).
//! The [`Decoder`] never panics: every read is bounds-checked and a malformed field becomes an
//! [`Error::Corruption`] naming the file and the absolute offset of the field.

use super::put_varint64;
use crate::error::{Error, Result};
use std::path::Path;

/// Appends a varint length followed by the bytes.
pub(crate) fn put_bytes(buf: &mut Vec<u8>, b: &[u8]) {
    put_varint64(buf, b.len() as u64);
    buf.extend_from_slice(b);
}

/// A bounds-checked reader over an encoded payload.
pub(crate) struct Decoder<'a> {
    data: &'a [u8],
    pos: usize,
    path: &'a Path,
    base: u64,
}

impl<'a> Decoder<'a> {
    /// A decoder over `data`, which starts at file offset `base` of `path`.
    pub(crate) fn new(data: &'a [u8], path: &'a Path, base: u64) -> Self {
        Decoder {
            data,
            pos: 0,
            path,
            base,
        }
    }

    /// True when every byte was consumed.
    pub(crate) fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// Bytes not yet consumed.
    pub(crate) fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    /// Absolute file offset of the next byte.
    pub(crate) fn offset(&self) -> u64 {
        self.base.saturating_add(self.pos as u64)
    }

    /// A corruption error at the current position.
    pub(crate) fn error(&self, detail: impl Into<String>) -> Error {
        Error::corruption(self.path, self.offset(), detail)
    }

    /// Reads one varint.
    pub(crate) fn varint(&mut self, what: &str) -> Result<u64> {
        let mut v: u64 = 0;
        for i in 0..10 {
            let Some(&b) = self.data.get(self.pos + i) else {
                return Err(self.error(format!("truncated varint for {what}")));
            };
            if i == 9 && b > 1 {
                return Err(self.error(format!("varint overflow for {what}")));
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                self.pos += i + 1;
                return Ok(v);
            }
        }
        Err(self.error(format!("varint too long for {what}")))
    }

    /// Reads a varint that must fit a `usize`.
    pub(crate) fn varint_usize(&mut self, what: &str) -> Result<usize> {
        let at = self.offset();
        let v = self.varint(what)?;
        usize::try_from(v)
            .map_err(|_| Error::corruption(self.path, at, format!("{what} {v} does not fit usize")))
    }

    /// Reads one byte.
    pub(crate) fn byte(&mut self, what: &str) -> Result<u8> {
        let b = *self
            .data
            .get(self.pos)
            .ok_or_else(|| self.error(format!("{what} missing: the record ends")))?;
        self.pos += 1;
        Ok(b)
    }

    /// Reads a varint length and that many bytes.
    pub(crate) fn bytes(&mut self, what: &str) -> Result<&'a [u8]> {
        let at = self.offset();
        let len = self.varint_usize(what)?;
        if len > self.remaining() {
            return Err(Error::corruption(
                self.path,
                at,
                format!(
                    "{what} length {len} exceeds the {} remaining bytes",
                    self.remaining()
                ),
            ));
        }
        let b = &self.data[self.pos..self.pos + len];
        self.pos += len;
        Ok(b)
    }

    /// Reads a length-prefixed byte string that must be UTF-8.
    pub(crate) fn utf8(&mut self, what: &str) -> Result<&'a str> {
        let at = self.offset();
        let b = self.bytes(what)?;
        std::str::from_utf8(b)
            .map_err(|_| Error::corruption(self.path, at, format!("{what} is not UTF-8")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_boundaries() {
        for v in [
            0,
            1,
            127,
            128,
            16383,
            16384,
            u32::MAX as u64,
            u64::MAX - 1,
            u64::MAX,
        ] {
            let mut buf = Vec::new();
            put_varint64(&mut buf, v);
            let mut d = Decoder::new(&buf, Path::new("x"), 0);
            assert_eq!(d.varint("v").unwrap(), v);
            assert!(d.is_empty());
        }
    }

    #[test]
    fn overlong_and_truncated_varints_are_corruption() {
        let over = [0xff; 9].iter().copied().chain([0x02]).collect::<Vec<_>>();
        let mut d = Decoder::new(&over, Path::new("x"), 10);
        assert!(d.varint("v").unwrap_err().is_corruption());
        let mut d = Decoder::new(&[0x80, 0x80], Path::new("x"), 10);
        assert!(d.varint("v").unwrap_err().is_corruption());
    }

    #[test]
    fn byte_length_past_end_is_corruption_at_field_offset() {
        let mut buf = Vec::new();
        put_varint64(&mut buf, 5);
        buf.extend_from_slice(b"abc");
        let mut d = Decoder::new(&buf, Path::new("f"), 100);
        match d.bytes("key").unwrap_err() {
            Error::Corruption { offset, .. } => assert_eq!(offset, 100),
            e => panic!("unexpected {e}"),
        }
    }
}
