//! [`DirectWriter`] over the in-memory crash file system and over real files (O_DIRECT on a
//! disk directory): every tail length reads back exactly, a sync in the middle of a partial
//! block is rewritten correctly, buffers cycle through the I/O thread, faults fail the writer.

use super::*;
use crate::fs::{CrashFs, FaultKind, FaultPlan, FileSystem, OsFileSystem};
use std::path::Path;

/// Byte `i` of the test pattern (a period prime to the block size, so blocks differ).
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

/// Appends `data` in chunks of the given (cycled) sizes.
fn append_in_chunks(w: &mut DirectWriter, data: &[u8], sizes: &[usize]) {
    let mut pos = 0;
    for &n in sizes.iter().cycle() {
        if pos == data.len() {
            break;
        }
        let end = (pos + n).min(data.len());
        w.append(&data[pos..end]).unwrap();
        pos = end;
    }
}

fn writer(fs: &dyn FileSystem, path: &Path) -> DirectWriter {
    DirectWriter::new(fs.create_direct(path, true).unwrap())
}

/// Lengths around every boundary the writer has: blocks, buffers, the in-flight limit.
fn boundary_lengths() -> Vec<usize> {
    let (b, a) = (BUFFER_SIZE, DIRECT_ALIGN);
    let mut lens = vec![0, 1, 16, a - 1, a, a + 1, 3 * a + 17, b - 1, b, b + 1];
    lens.extend([2 * b + a + 5, (MAX_IN_FLIGHT + 2) * b + 123]);
    lens
}

#[test]
fn every_tail_length_reads_back_exactly_and_is_durable() {
    let fs = CrashFs::new();
    fs.create_dir_all(Path::new("/d")).unwrap();
    for tail in 0..=DIRECT_ALIGN {
        let path = Path::new("/d/f");
        let data = pattern(2 * DIRECT_ALIGN + tail);
        let mut w = writer(&*fs, path);
        append_in_chunks(&mut w, &data, &[7, 1000, 1]);
        w.sync().unwrap();
        assert_eq!(w.len(), data.len() as u64);
        assert!(fs.read_all(path).unwrap() == data, "tail {tail}");
        fs.sync_dir(Path::new("/d")).unwrap();
        let after_power_loss = CrashFs::from_image(&fs.capture(tail as u64));
        assert!(
            after_power_loss.read_all(path).unwrap() == data,
            "tail {tail}"
        );
    }
}

#[test]
fn boundary_lengths_read_back_exactly_on_real_files() {
    let dir = crate::testing::disk_tempdir();
    for len in boundary_lengths() {
        let path = dir.path().join(format!("f{len}"));
        let data = pattern(len);
        let mut w = writer(&OsFileSystem, &path);
        append_in_chunks(&mut w, &data, &[4113, 1 << 20, 3]);
        w.sync().unwrap();
        drop(w);
        assert!(std::fs::read(&path).unwrap() == data, "length {len}");
    }
}

/// A flush in the middle of a block writes it padded and cuts the file; the bytes appended
/// after it complete that block, which is written again whole.
#[test]
fn flushes_between_appends_keep_the_file_exact() {
    let dir = crate::testing::disk_tempdir();
    let path = dir.path().join("f");
    let data = pattern(3 * DIRECT_ALIGN + 10);
    let mut w = writer(&OsFileSystem, &path);
    for (i, chunk) in data.chunks(997).enumerate() {
        w.append(chunk).unwrap();
        w.flush().unwrap();
        let end = ((i + 1) * 997).min(data.len());
        assert!(
            std::fs::read(&path).unwrap() == data[..end],
            "after chunk {i}"
        );
    }
    w.sync().unwrap();
}

/// Several buffers in flight, then a crash image of the live view: every whole buffer handed
/// over is in the file once the writer has drained.
#[test]
fn buffers_cycle_through_the_io_thread() {
    let fs = CrashFs::new();
    fs.create_dir_all(Path::new("/d")).unwrap();
    let path = Path::new("/d/f");
    let data = pattern((MAX_IN_FLIGHT + 3) * BUFFER_SIZE + 5);
    let mut w = writer(&*fs, path);
    append_in_chunks(&mut w, &data, &[65536]);
    w.flush().unwrap();
    assert!(fs.live_contents(path).unwrap() == data);
    drop(w);
}

#[test]
fn a_failed_block_write_fails_the_writer_for_good() {
    for kind in [FaultKind::Io, FaultKind::ShortWrite, FaultKind::NoSpace] {
        let fs = CrashFs::new();
        fs.create_dir_all(Path::new("/d")).unwrap();
        let mut w = writer(&*fs, Path::new("/d/f"));
        let from = fs.call_count();
        fs.set_fault_plan(FaultPlan::From { from, kind });
        let data = pattern(BUFFER_SIZE + 10);
        // The full buffer's write fails on the I/O thread; the error surfaces at the latest
        // when the writer drains.
        let first = w.append(&data).and_then(|()| w.sync());
        assert!(first.is_err(), "{kind:?}");
        fs.set_fault_plan(FaultPlan::Never);
        assert!(w.append(b"more").is_err());
        assert!(w.sync().is_err());
    }
}

/// The file system refusing a direct write (here: a misaligned one, which Linux's ext4 and xfs
/// refuse with EINVAL) switches the file to buffered writes, which the file then reports.
#[test]
fn a_refused_direct_write_falls_back_to_buffered_writes() {
    const EXT4_MAGIC: i64 = 0xEF53;
    const XFS_MAGIC: i64 = 0x5846_5342;
    let dir = crate::testing::disk_tempdir();
    let path = dir.path().join("f");
    let file = OsFileSystem.create_direct(&path, true).unwrap();
    let data = pattern(DIRECT_ALIGN + 1);
    file.write_at(0, &data[1..]).unwrap();
    assert!(std::fs::read(&path).unwrap() == data[1..]);
    let magic = crate::pm::raw::fs_magic(dir.path()).unwrap_or(0);
    if magic == EXT4_MAGIC || magic == XFS_MAGIC {
        assert!(!file.is_direct(), "the refused direct write fell back");
    }
    let buffered = OsFileSystem
        .create_direct(&dir.path().join("g"), false)
        .unwrap();
    assert!(!buffered.is_direct());
}

#[test]
fn a_buffered_file_written_behind_reads_back_exactly_at_every_boundary() {
    let dir = crate::testing::disk_tempdir();
    for (i, len) in boundary_lengths().into_iter().enumerate() {
        let path = dir.path().join(format!("f{i}"));
        let data = pattern(len);
        let mut w = DirectWriter::new(OsFileSystem.create_direct(&path, false).unwrap());
        append_in_chunks(&mut w, &data, &[4096, 17, 100_000]);
        w.sync().unwrap();
        assert!(!w.is_direct());
        assert!(std::fs::read(&path).unwrap() == data, "length {len}");
    }
}
