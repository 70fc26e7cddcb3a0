//! Replies, and their encodings in RESP2 and RESP3 (by the `redis-protocol` crate).
//!
//! A command builds one [`Reply`] whatever the protocol; the connection encodes it in the
//! protocol its client chose with `HELLO`. RESP2 has no maps, doubles or verbatim strings:
//! maps become flat arrays of key, value, ...; verbatim strings become bulk strings; a null
//! is `$-1` in RESP2 and `_` in RESP3.

use bytes::{Bytes, BytesMut};
use redis_protocol::resp2::types::BytesFrame as Resp2;
use redis_protocol::resp3::types::{BytesFrame as Resp3, FrameMap, VerbatimStringFormat};

/// The protocol a connection speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// RESP2, the default.
    Resp2,
    /// RESP3, after `HELLO 3`.
    Resp3,
}

/// One reply.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// A simple string (`+OK`).
    Simple(String),
    /// An error; the text starts with its code (`ERR ...`, `NOAUTH ...`).
    Error(String),
    /// An integer.
    Int(i64),
    /// A bulk string.
    Bulk(Bytes),
    /// The null bulk string (a missing key).
    Null,
    /// An array.
    Array(Vec<Reply>),
    /// A map (RESP3), a flat array of key, value, ... in RESP2.
    Map(Vec<(Reply, Reply)>),
    /// Text for humans (INFO, CLIENT LIST): verbatim `txt` in RESP3, bulk in RESP2.
    Verbatim(String),
}

impl Reply {
    /// `+OK`.
    pub fn ok() -> Reply {
        Reply::Simple("OK".into())
    }

    /// An error reply with the `ERR` code.
    pub fn err(message: impl std::fmt::Display) -> Reply {
        Reply::Error(format!("ERR {message}"))
    }

    /// A bulk string of `bytes`.
    pub fn bulk(bytes: impl Into<Bytes>) -> Reply {
        Reply::Bulk(bytes.into())
    }

    /// The value of a key: bulk, or null when missing.
    pub fn value(value: Option<Vec<u8>>) -> Reply {
        value.map_or(Reply::Null, Reply::bulk)
    }

    /// Whether this is an error reply.
    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_))
    }

    /// Appends the encoding of this reply in `protocol` to `out`.
    ///
    /// ```
    /// use flatlsm_server::reply::{Protocol, Reply};
    /// let mut out = bytes::BytesMut::new();
    /// Reply::Map(vec![(Reply::bulk("a"), Reply::Int(1))]).encode(Protocol::Resp2, &mut out);
    /// Reply::Null.encode(Protocol::Resp3, &mut out);
    /// assert_eq!(&out[..], b"*2\r\n$1\r\na\r\n:1\r\n_\r\n");
    /// ```
    pub fn encode(self, protocol: Protocol, out: &mut BytesMut) {
        if let Reply::Bulk(bytes) = &self {
            return encode_bulk(bytes, out);
        }
        // Encoding into a growable buffer fails only for frames the constructors below never
        // build (e.g. an error containing CRLF, which `sanitize_error` prevents).
        let encoded = match protocol {
            Protocol::Resp2 => {
                let frame = self.into_resp2();
                redis_protocol::resp2::encode::extend_encode(out, &frame, false)
            }
            Protocol::Resp3 => {
                let frame = self.into_resp3();
                redis_protocol::resp3::encode::complete::extend_encode(out, &frame, false)
            }
        };
        if let Err(e) = encoded {
            log::error!("could not encode a reply: {e:?}");
        }
    }

    fn into_resp2(self) -> Resp2 {
        match self {
            Reply::Simple(s) => Resp2::SimpleString(s.into()),
            Reply::Error(e) => Resp2::Error(sanitize_error(e).into()),
            Reply::Int(i) => Resp2::Integer(i),
            Reply::Bulk(b) => Resp2::BulkString(b),
            Reply::Verbatim(s) => Resp2::BulkString(s.into()),
            Reply::Null => Resp2::Null,
            Reply::Array(items) => Resp2::Array(items.into_iter().map(Reply::into_resp2).collect()),
            Reply::Map(pairs) => Resp2::Array(flatten(pairs).map(Reply::into_resp2).collect()),
        }
    }

    fn into_resp3(self) -> Resp3 {
        match self {
            Reply::Simple(s) => Resp3::SimpleString {
                data: s.into(),
                attributes: None,
            },
            Reply::Error(e) => Resp3::SimpleError {
                data: sanitize_error(e).into(),
                attributes: None,
            },
            Reply::Int(i) => Resp3::Number {
                data: i,
                attributes: None,
            },
            Reply::Bulk(b) => Resp3::BlobString {
                data: b,
                attributes: None,
            },
            Reply::Verbatim(s) => verbatim(s),
            Reply::Null => Resp3::Null,
            Reply::Array(items) => Resp3::Array {
                data: items.into_iter().map(Reply::into_resp3).collect(),
                attributes: None,
            },
            Reply::Map(pairs) => map(pairs),
        }
    }
}

/// A map's pairs as RESP2 sends them: key, value, key, value, ...
fn flatten(pairs: Vec<(Reply, Reply)>) -> impl Iterator<Item = Reply> {
    pairs.into_iter().flat_map(|(k, v)| [k, v])
}

fn verbatim(text: String) -> Resp3 {
    Resp3::VerbatimString {
        data: text.into(),
        format: VerbatimStringFormat::Text,
        attributes: None,
    }
}

fn map(pairs: Vec<(Reply, Reply)>) -> Resp3 {
    let data: FrameMap<Resp3, Resp3> = pairs
        .into_iter()
        .map(|(k, v)| (k.into_resp3(), v.into_resp3()))
        .collect();
    Resp3::Map {
        data,
        attributes: None,
    }
}

/// An error line may not contain CR or LF (they would end it early); they become spaces.
fn sanitize_error(message: String) -> String {
    if message.contains(['\r', '\n']) {
        message.replace(['\r', '\n'], " ")
    } else {
        message
    }
}

/// Appends a bulk string (`$<len>\r\n<bytes>\r\n`, the same in RESP2 and RESP3) to `out`.
/// Why not through the crate: its encoder sizes the buffer by zero-filling it before the
/// copy, which for the 1 KiB values of a pipelined GET was a pass over every byte more.
fn encode_bulk(bytes: &[u8], out: &mut BytesMut) {
    let mut digits = itoa::Buffer::new();
    let len = digits.format(bytes.len());
    out.reserve(1 + len.len() + 2 + bytes.len() + 2);
    out.extend_from_slice(b"$");
    out.extend_from_slice(len.as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(reply: Reply, protocol: Protocol) -> Vec<u8> {
        let mut out = BytesMut::new();
        reply.encode(protocol, &mut out);
        out.to_vec()
    }

    #[test]
    fn replies_encode_as_redis_server_sends_them() {
        assert_eq!(encoded(Reply::ok(), Protocol::Resp2), b"+OK\r\n");
        assert_eq!(
            encoded(Reply::err("x\ny"), Protocol::Resp2),
            b"-ERR x y\r\n"
        );
        assert_eq!(encoded(Reply::Null, Protocol::Resp2), b"$-1\r\n");
        assert_eq!(encoded(Reply::Int(-3), Protocol::Resp3), b":-3\r\n");
        let text = encoded(Reply::Verbatim("a".into()), Protocol::Resp3);
        assert_eq!(text, b"=5\r\ntxt:a\r\n");
    }

    #[test]
    fn bulk_strings_encoded_in_line_match_the_crates_encoding() {
        for len in [0usize, 1, 9, 10, 1024, 100_000] {
            let bytes = Bytes::from((0..len).map(|i| (i % 251) as u8).collect::<Vec<u8>>());
            let mut crate2 = BytesMut::new();
            let frame2 = Resp2::BulkString(bytes.clone());
            redis_protocol::resp2::encode::extend_encode(&mut crate2, &frame2, false).unwrap();
            let mut crate3 = BytesMut::new();
            let frame3 = Reply::Bulk(bytes.clone()).into_resp3();
            redis_protocol::resp3::encode::complete::extend_encode(&mut crate3, &frame3, false)
                .unwrap();
            assert_eq!(
                encoded(Reply::Bulk(bytes.clone()), Protocol::Resp2),
                crate2.to_vec()
            );
            assert_eq!(
                encoded(Reply::Bulk(bytes), Protocol::Resp3),
                crate3.to_vec()
            );
        }
    }
}
