//! Which compression the SSTs of each level get ([`Options::compression`],
//! [`Options::compression_per_level`]), and the check of those options.
//!
//! The rule, the same for every design because every design names its SST levels by the
//! version's level numbers: without a per-level list, levels 0 and 1 (what flushes write and
//! the first level compactions fill: `flatlsm`'s L1 runs and Ordered-L1, `leveled`'s L0 and L1,
//! `matrixkv`'s L1 written by column compactions, `slmdb`'s single level) are written
//! uncompressed and every deeper level with [`Options::compression`], RocksDB's common setting
//! (none for the hot upper levels, LZ4 below). The choice applies to tables as they are
//! written: each block records its own type, so changing it never makes an old table
//! unreadable.

use super::{Compression, Options};
use crate::error::{Error, Result};
use crate::version::MAX_LEVELS;

/// Levels written uncompressed unless [`Options::compression_per_level`] is set: levels
/// `0..UNCOMPRESSED_LEVELS` (flush outputs and L1).
pub const UNCOMPRESSED_LEVELS: usize = 2;

impl Options {
    /// The compression of SSTs written to `level` of the version.
    ///
    /// ```
    /// use flatlsm::{Compression, Options};
    /// let o = Options::default();
    /// assert_eq!(o.compression_for_level(0), Compression::None);
    /// assert_eq!(o.compression_for_level(2), Compression::Lz4);
    /// let o = o.compression_per_level(vec![Compression::None, Compression::ZSTD]);
    /// assert_eq!(o.compression_for_level(6), Compression::ZSTD);
    /// ```
    pub fn compression_for_level(&self, level: usize) -> Compression {
        let per_level = &self.compression_per_level;
        match per_level.get(level).or(per_level.last()) {
            Some(c) => *c,
            None if level < UNCOMPRESSED_LEVELS => Compression::None,
            None => self.compression,
        }
    }

    /// The compression of every level, by level number.
    pub(crate) fn compression_by_level(&self) -> [Compression; MAX_LEVELS] {
        std::array::from_fn(|level| self.compression_for_level(level))
    }

    /// Zstd levels in range; at most one per-level entry per level.
    pub(super) fn validate_compression(&self) -> Result<()> {
        let n = self.compression_per_level.len();
        if n > MAX_LEVELS {
            return Err(Error::InvalidArgument(format!(
                "compression_per_level has {n} entries, at most {MAX_LEVELS} (one per level)"
            )));
        }
        let mut every = std::iter::once(&self.compression).chain(&self.compression_per_level);
        every.try_for_each(|c| c.validate())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_default_flush_levels_and_l1_are_raw_and_deeper_levels_lz4() {
        let by_level = Options::default().compression_by_level();
        assert_eq!(by_level[..2], [Compression::None; 2]);
        assert_eq!(by_level[2..], [Compression::Lz4; MAX_LEVELS - 2]);
        let zstd = Options::default().compression(Compression::ZSTD);
        assert_eq!(zstd.compression_for_level(1), Compression::None);
        assert_eq!(zstd.compression_for_level(3), Compression::ZSTD);
    }

    #[test]
    fn a_per_level_list_decides_every_level_its_last_entry_the_deeper_ones() {
        let one = Options::default().compression_per_level(vec![Compression::ZSTD]);
        assert_eq!(one.compression_by_level(), [Compression::ZSTD; MAX_LEVELS]);
        let two =
            Options::default().compression_per_level(vec![Compression::Lz4, Compression::None]);
        assert_eq!(two.compression_for_level(0), Compression::Lz4);
        assert_eq!(two.compression_for_level(5), Compression::None);
    }

    #[test]
    fn bad_zstd_levels_and_overlong_lists_are_refused() {
        let bad = Compression::Zstd { level: 40 };
        let e = Options::default().compression(bad).validate().unwrap_err();
        assert!(e.to_string().contains("zstd level 40"), "{e}");
        let per_level = Options::default().compression_per_level(vec![Compression::None, bad]);
        assert!(per_level.validate().is_err());
        let long = Options::default().compression_per_level(vec![Compression::None; 8]);
        assert!(long
            .validate()
            .unwrap_err()
            .to_string()
            .contains("8 entries"));
        assert!(Options::default().validate().is_ok());
    }
}
