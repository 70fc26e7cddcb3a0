//! Fuzzes the server's request decoder (`flatlsm_server::request::next_request`, the shape
//! guard in front of the `redis-protocol` decoder): no panic, hang or unbounded allocation
//! whatever the bytes; each call consumes what it decodes, nothing when it needs more, and a
//! request's arguments respect the limits.
#![no_main]

use bytes::BytesMut;
use flatlsm_server::request::{next_request, Limits};

const LIMITS: Limits = Limits { max_args: 64, max_bulk_len: 4096, max_request_bytes: 1 << 16 };

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut buf = BytesMut::from(data);
    while let Ok(Some(args)) = next_request(&mut buf, &LIMITS) {
        assert!(args.len() <= LIMITS.max_args);
        assert!(args.iter().all(|a| a.len() <= LIMITS.max_bulk_len.max(64 << 10)));
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
