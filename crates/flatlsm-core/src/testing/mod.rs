//! Test support shared by this crate's tests and the designs' tests (feature `test-support`):
//! iterator walk checks against a sorted model, temp dirs on a disk-backed file system, and
//! bytes no compressor can shrink.
//! The crash-simulating and fault-injecting file systems live in [`crate::fs`] and the
//! simulated PM device in [`crate::pm`], behind the same feature.

pub mod walk_check;

use crate::pm::raw::{self, RAMFS_MAGIC, TMPFS_MAGIC};
use std::fs;
use std::path::Path;

/// `n` bytes no codec can shrink (a xorshift stream seeded by `seed`).
pub fn noise(seed: u64, n: usize) -> Vec<u8> {
    let mut x = (seed + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A temp dir on a disk-backed file system (the system temp dir may be tmpfs elsewhere).
pub fn disk_tempdir() -> tempfile::TempDir {
    let tmp = std::env::temp_dir();
    let m = raw::fs_magic(&tmp).unwrap_or(0);
    if m != TMPFS_MAGIC && m != RAMFS_MAGIC {
        return tempfile::tempdir_in(tmp).unwrap();
    }
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-tmp");
    fs::create_dir_all(&target).unwrap();
    tempfile::tempdir_in(target).unwrap()
}
