//! Unit tests of `raw`: mappings, streaming writes, flush-instruction detection.

use super::*;

/// Regression: a DRAM write buffer of 2 GiB was memset at creation (seconds of page
/// faults before the first write). Large buffers are anonymous mappings: zero on first read,
/// writable anywhere, msync a no-op.
#[test]
fn large_anonymous_buffer_is_a_lazy_zero_mapping() {
    let len = 64 << 20;
    let m = RawMapping::anonymous(len);
    assert!(matches!(m.backing, Backing::Anonymous));
    assert_eq!(m.read(len - 4096, 4096), &[0u8; 4096][..]);
    m.write(len - 5, b"tail!");
    m.store_u64(8, 42);
    assert_eq!((m.read(len - 5, 5), m.load_u64(8)), (&b"tail!"[..], 42));
    m.msync(0, len).unwrap();
}

#[test]
fn heap_mapping_reads_back_writes_and_atomics() {
    let m = RawMapping::anonymous(256);
    m.write(10, b"hello");
    assert_eq!(m.read(10, 5), b"hello");
    m.store_u64(64, 0x0102_0304_0506_0708);
    assert_eq!(m.load_u64(64), 0x0102_0304_0506_0708);
    assert_eq!(m.read(64, 1), &[0x08]);
    assert_eq!(m.flush(60, 8), 2);
    fence();
}

#[test]
fn streaming_writes_land_exactly_at_every_alignment_and_length() {
    let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
    for offset in 0..33 {
        for len in [0, 1, 15, 16, 17, 31, 64, 255, 256, 300] {
            let m = RawMapping::anonymous(512);
            m.write_streaming(offset, &data[..len]);
            fence();
            assert_eq!(
                m.read(offset, len),
                &data[..len],
                "offset {offset} len {len}"
            );
            assert!(m.read(0, offset).iter().all(|&b| b == 0), "bytes before");
            assert!(m
                .read(offset + len, 512 - offset - len)
                .iter()
                .all(|&b| b == 0));
        }
    }
}

#[test]
#[should_panic(expected = "outside a region")]
fn streaming_write_out_of_range_is_a_caller_bug() {
    RawMapping::anonymous(64).write_streaming(60, &[0; 8]);
}

#[test]
#[should_panic(expected = "outside a region")]
fn out_of_range_read_is_a_caller_bug() {
    RawMapping::anonymous(16).read(10, 7);
}

#[test]
fn flush_instruction_is_detected() {
    let i = flush_instr();
    #[cfg(target_arch = "x86_64")]
    assert!(matches!(
        i,
        FlushInstr::Clwb | FlushInstr::ClflushOpt | FlushInstr::Clflush
    ));
    #[cfg(target_arch = "aarch64")]
    assert!(matches!(i, FlushInstr::DcCvap | FlushInstr::DcCvac));
    let _ = i;
    assert_eq!(
        has_cache_line_writeback(),
        cfg!(any(target_arch = "x86_64", target_arch = "aarch64"))
    );
}
