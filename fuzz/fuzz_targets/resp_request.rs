//! Fuzzes the server's request decoder (`flatlsm_server::request::next_request`): no panic,
//! hang or unbounded allocation whatever the bytes; each call consumes what it decodes,
//! nothing when it needs more, a request's arguments respect the limits, and every `*N`
//! request it accepts is what the `redis-protocol` crate decodes from the same bytes.
#![no_main]

use bytes::BytesMut;
use flatlsm_server::request::{next_request, Limits};
use redis_protocol::resp2::{decode::decode_bytes_mut, types::BytesFrame};

const LIMITS: Limits = Limits { max_args: 64, max_bulk_len: 4096, max_request_bytes: 1 << 16 };

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut buf = BytesMut::from(data);
    loop {
        let before = buf.clone();
        let Ok(Some(args)) = next_request(&mut buf, &LIMITS) else {
            break;
        };
        assert!(args.len() <= LIMITS.max_args);
        assert!(args.iter().all(|a| a.len() <= LIMITS.max_bulk_len.max(64 << 10)));
        if before.first() == Some(&b'*') && !args.is_empty() {
            let used = before.len() - buf.len();
            assert_eq!(crate_decode(before), Some((args, used)));
        }
    }
    // Fed byte by byte, the decoder must reach the same requests.
    let (mut whole, mut split) = (BytesMut::from(data), BytesMut::new());
    let mut from_whole = Vec::new();
    while let Ok(Some(args)) = next_request(&mut whole, &LIMITS) {
        from_whole.push(args);
    }
    let mut from_split = Vec::new();
    for &byte in data.iter().take(4096) {
        split.extend_from_slice(&[byte]);
        match next_request(&mut split, &LIMITS) {
            Ok(Some(args)) => from_split.push(args),
            Ok(None) => {}
            Err(_) => break,
        }
    }
    if data.len() <= 4096 {
        assert!(from_split.len() <= from_whole.len());
        assert_eq!(from_split[..], from_whole[..from_split.len()]);
    }
});

/// The `redis-protocol` crate's reading of the request at the start of `buf`: its arguments
/// (an array of bulk strings) and its length.
fn crate_decode(mut buf: BytesMut) -> Option<(Vec<bytes::Bytes>, usize)> {
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
