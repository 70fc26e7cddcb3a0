//! The request decoder: bytes from a client into commands (arrays of bulk strings), with the
//! server's limits enforced before anything large is buffered.
//!
//! A request must be `*N` followed by N `$L` bulk strings, N ≤ `max_args`, each L ≤
//! `max_bulk_len`: the *shape guard* walks the headers, refuses anything else (nested arrays,
//! other frame types, oversized lengths) before it is buffered, and notes where each argument
//! lies; the arguments are then slices of the request's bytes (no copy). Until the twelfth
//! session the `redis-protocol` crate decoded the request again once the guard had accepted
//! it; that second pass was 7% of a pipelined GET's server time for nothing the guard had not
//! already established, so the crate is now the oracle the tests and the fuzz target compare
//! this decoder with (`agrees_with_redis_protocol`). Lines not starting with `*` are inline
//! commands (`PING\r\n`, as typed into telnet): split on spaces and tabs, without
//! redis-server's quote handling.
//!
//! Invariant: [`next_request`] either returns a request and consumes exactly its bytes,
//! returns `Ok(None)` and consumes nothing (more bytes are needed), or returns an error after
//! which the caller closes the connection.

use bytes::{Bytes, BytesMut};
use std::ops::Range;

/// The limits a request must respect.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Most arguments, the command name included.
    pub max_args: usize,
    /// Longest bulk string.
    pub max_bulk_len: usize,
    /// Most bytes of one incomplete request (a longer one is refused before it completes).
    pub max_request_bytes: usize,
}

/// Longest inline command line, and longest `*N` / `$L` header line (redis-server's
/// `PROTO_INLINE_MAX_SIZE`).
pub const MAX_INLINE_LEN: usize = 64 << 10;

/// A request that breaks the protocol or a limit; the connection gets `-ERR Protocol error:
/// <message>` and is closed, as redis-server does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl std::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Protocol error: {}", self.0)
    }
}

fn fail<T>(message: impl Into<String>) -> Result<T, ProtocolError> {
    Err(ProtocolError(message.into()))
}

/// Decodes the next request at the start of `buf`: `Ok(Some(args))` (consumed from `buf`; an
/// empty request such as `*0` or a blank line yields empty `args`), `Ok(None)` if more bytes
/// are needed, or the error that must close the connection.
///
/// ```
/// use flatlsm_server::request::{next_request, Limits};
/// let limits = Limits { max_args: 8, max_bulk_len: 64, max_request_bytes: 1024 };
/// let mut buf = bytes::BytesMut::from(&b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\n*1\r\n$4\r\nPI"[..]);
/// assert_eq!(next_request(&mut buf, &limits).unwrap().unwrap(), vec!["GET", "k"]);
/// assert_eq!(next_request(&mut buf, &limits).unwrap().unwrap(), vec!["PING"]);
/// assert_eq!(next_request(&mut buf, &limits).unwrap(), None); // incomplete
/// let mut bad = bytes::BytesMut::from(&b"*1\r\n*1\r\n$1\r\nx\r\n"[..]);
/// assert!(next_request(&mut bad, &limits).is_err());
/// ```
pub fn next_request(
    buf: &mut BytesMut,
    limits: &Limits,
) -> Result<Option<Vec<Bytes>>, ProtocolError> {
    match buf.first() {
        None => Ok(None),
        Some(b'*') => next_multibulk(buf, limits),
        Some(_) => next_inline(buf, limits),
    }
}

/// A `*N` request: shape-checked, then its arguments sliced out of the consumed bytes.
fn next_multibulk(
    buf: &mut BytesMut,
    limits: &Limits,
) -> Result<Option<Vec<Bytes>>, ProtocolError> {
    let Some(request) = complete_request(buf, limits)? else {
        if buf.len() > limits.max_request_bytes {
            return fail("request exceeds the client query buffer limit");
        }
        return Ok(None);
    };
    let bytes = buf.split_to(request.bytes).freeze();
    Ok(Some(
        request.args.into_iter().map(|a| bytes.slice(a)).collect(),
    ))
}

/// A complete request at the start of a buffer, once it all arrived.
struct CompleteRequest {
    /// Its length, headers included.
    bytes: usize,
    /// Where each argument's bytes lie (none for `*0` and `*-1`: nothing to execute).
    args: Vec<Range<usize>>,
}

/// Walks the headers of a `*N` request: `Ok(None)` if it is not all there yet, where it ends
/// and where its arguments lie if it is, an error if it breaks the shape or a limit.
fn complete_request(buf: &[u8], limits: &Limits) -> Result<Option<CompleteRequest>, ProtocolError> {
    let Some((count, mut pos)) = header(buf, 0, b'*', "multibulk count")? else {
        return Ok(None);
    };
    if count > 0 && count as u64 > limits.max_args as u64 {
        return fail("invalid multibulk length");
    }
    let mut args = Vec::with_capacity(count.max(0) as usize);
    for _ in 0..count {
        let Some(arg) = bulk(buf, pos, limits)? else {
            return Ok(None);
        };
        pos = arg.end + 2;
        args.push(arg);
    }
    Ok(Some(CompleteRequest { bytes: pos, args }))
}

/// Where the bytes of the bulk string whose `$L` header starts at `pos` lie (its CRLF
/// follows), if it all arrived.
fn bulk(buf: &[u8], pos: usize, limits: &Limits) -> Result<Option<Range<usize>>, ProtocolError> {
    if let Some(&kind) = buf.get(pos) {
        if kind != b'$' {
            return fail(format!("expected '$', got '{}'", kind as char));
        }
    }
    let Some((len, start)) = header(buf, pos, b'$', "bulk count")? else {
        return Ok(None);
    };
    if len < 0 || len as u64 > limits.max_bulk_len as u64 {
        return fail("invalid bulk length");
    }
    let bytes = start..start + len as usize;
    match buf.get(bytes.end..bytes.end + 2) {
        None => Ok(None),
        Some(b"\r\n") => Ok(Some(bytes)),
        Some(_) => fail("expected CRLF after a bulk string"),
    }
}

/// Parses the header line `<kind><integer>\r\n` at `pos`: the integer and where the line
/// ends, `None` if the line is not complete.
fn header(
    buf: &[u8],
    pos: usize,
    kind: u8,
    what: &str,
) -> Result<Option<(i64, usize)>, ProtocolError> {
    let rest = buf.get(pos..).unwrap_or_default();
    if rest.is_empty() {
        return Ok(None);
    }
    debug_assert_eq!(rest[0], kind);
    let Some(newline) = rest.iter().position(|&b| b == b'\n') else {
        if rest.len() > MAX_INLINE_LEN {
            return fail(format!("too big {what} string"));
        }
        return Ok(None);
    };
    // The line must end in CRLF: the decoder finds a line's end by CRLF.
    let digits = rest[1..newline].strip_suffix(b"\r");
    let number = digits.and_then(|d| std::str::from_utf8(d).ok()?.parse::<i64>().ok());
    match number {
        Some(n) => Ok(Some((n, pos + newline + 1))),
        None => fail(format!("invalid {what}")),
    }
}

/// An inline command: one line split on spaces and tabs.
fn next_inline(buf: &mut BytesMut, limits: &Limits) -> Result<Option<Vec<Bytes>>, ProtocolError> {
    let Some(newline) = buf.iter().position(|&b| b == b'\n') else {
        if buf.len() > MAX_INLINE_LEN {
            return fail("too big inline request");
        }
        return Ok(None);
    };
    let line = buf.split_to(newline + 1).freeze();
    let text = line.slice(..newline);
    let args: Vec<Bytes> = text
        .split(|b| matches!(b, b' ' | b'\t' | b'\r'))
        .filter(|word| !word.is_empty())
        .map(|word| text.slice_ref(word))
        .collect();
    if args.len() > limits.max_args {
        return fail("invalid multibulk length");
    }
    Ok(Some(args))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        max_args: 4,
        max_bulk_len: 8,
        max_request_bytes: 64,
    };

    fn decode(bytes: &[u8]) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        next_request(&mut BytesMut::from(bytes), &LIMITS)
    }

    #[test]
    fn partial_requests_wait_for_more_bytes_at_every_split() {
        let whole = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n";
        for cut in 0..whole.len() {
            assert_eq!(decode(&whole[..cut]), Ok(None), "cut at {cut}");
        }
        assert_eq!(decode(whole).unwrap().unwrap(), vec!["SET", "k", "value"]);
    }

    #[test]
    fn limits_and_shapes_are_refused_before_buffering() {
        assert!(decode(b"*5\r\n").is_err(), "too many args");
        assert!(decode(b"*1\r\n$9\r\n").is_err(), "bulk too long");
        assert!(decode(b"*1\r\n$-1\r\n").is_err(), "null bulk");
        assert!(decode(b"*1\r\n:1\r\n").is_err(), "integer element");
        assert!(decode(b"*x\r\n").is_err(), "bad count");
        assert!(
            decode(b"*1\r\n$1\r\nab\r\n").is_err(),
            "bulk longer than declared"
        );
    }

    /// The `redis-protocol` crate's reading of one complete request: its arguments and length.
    fn crate_decode(bytes: &[u8]) -> Option<(Vec<Bytes>, usize)> {
        use redis_protocol::resp2::{decode::decode_bytes_mut, types::BytesFrame};
        let mut buf = BytesMut::from(bytes);
        let (frame, used, _) = decode_bytes_mut(&mut buf).ok()??;
        let BytesFrame::Array(items) = frame else {
            return None;
        };
        let bulk = |item| match item {
            BytesFrame::BulkString(b) => Some(b),
            _ => None,
        };
        Some((items.into_iter().map(bulk).collect::<Option<_>>()?, used))
    }

    #[test]
    fn agrees_with_redis_protocol() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(30);
        let limits = Limits {
            max_args: 16,
            max_bulk_len: 300,
            max_request_bytes: 1 << 16,
        };
        for _ in 0..2000 {
            let args: Vec<Vec<u8>> = (0..rng.gen_range(1..16))
                .map(|_| (0..rng.gen_range(0..300)).map(|_| rng.gen()).collect())
                .collect();
            let mut bytes = format!("*{}\r\n", args.len()).into_bytes();
            for a in &args {
                bytes.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
                bytes.extend_from_slice(a);
                bytes.extend_from_slice(b"\r\n");
            }
            let expected = crate_decode(&bytes).expect("the crate decodes it");
            let mut buf = BytesMut::from(&bytes[..]);
            buf.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
            let ours = next_request(&mut buf, &limits).unwrap().unwrap();
            assert_eq!((ours, bytes.len()), expected);
            assert_eq!(
                &buf[..],
                b"*1\r\n$4\r\nPING\r\n",
                "consumed exactly one request"
            );
        }
    }

    #[test]
    fn empty_and_inline_requests_decode() {
        assert_eq!(decode(b"*0\r\n").unwrap().unwrap(), Vec::<Bytes>::new());
        assert_eq!(decode(b"\r\n").unwrap().unwrap(), Vec::<Bytes>::new());
        assert_eq!(
            decode(b"set  a\tb\r\n").unwrap().unwrap(),
            vec!["set", "a", "b"]
        );
        assert!(decode(b"a b c d e\n").is_err(), "too many inline args");
    }
}
