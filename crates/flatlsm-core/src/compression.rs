//! Block compression: the [`Compression`] choice, the type byte each codec is recorded under,
//! and the stored form of a compressed buffer.
//!
//! Stored form of a compressed buffer (`docs/sst-format.md`, "Block trailer"): `varint32
//! raw_len ++ codec payload` (RocksDB's `compress_format_version` 2), so a reader knows the
//! size to expect and refuses any other. Type bytes are RocksDB's: 0 none, 4 LZ4 (the block
//! format, no frame), 7 zstd (one frame).
//!
//! Invariants: [`compress`] keeps a compressed form only when it saves at least 1/8 of the raw
//! bytes (RocksDB's `GoodCompressionRatio`), otherwise the caller stores the buffer raw;
//! [`decompress`] returns exactly the bytes given to [`compress`] or an error, never other
//! bytes and never a panic, whatever the input. Pure functions: thread-safe.

use crate::coding::MAX_BLOCK_SIZE;
use crate::error::{Error, Result};
use std::cell::RefCell;
use std::fmt;
use std::ops::RangeInclusive;
use std::str::FromStr;

/// Type byte of a buffer stored as is.
pub const TYPE_NONE: u8 = 0;
/// Type byte of an LZ4-compressed buffer (RocksDB's `kLZ4Compression`).
pub const TYPE_LZ4: u8 = 4;
/// Type byte of a zstd-compressed buffer (RocksDB's `kZSTD`).
pub const TYPE_ZSTD: u8 = 7;
/// The zstd level of plain `zstd` (zstd's own default).
pub const DEFAULT_ZSTD_LEVEL: i32 = 3;
/// The zstd levels accepted.
pub const ZSTD_LEVELS: RangeInclusive<i32> = 1..=22;

/// How a table builder compresses its data blocks.
///
/// ```
/// use flatlsm_core::compression::Compression;
/// let c: Compression = "zstd:6".parse().unwrap();
/// assert_eq!(c, Compression::Zstd { level: 6 });
/// assert_eq!("lz4".parse::<Compression>().unwrap().to_string(), "lz4");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Blocks are stored as built.
    #[default]
    None,
    /// LZ4 (fast; `lz4_flex`, pure Rust).
    Lz4,
    /// Zstandard at `level` (one of [`ZSTD_LEVELS`]; smaller output, slower than LZ4).
    Zstd {
        /// The compression level.
        level: i32,
    },
}

impl Compression {
    /// Zstandard at [`DEFAULT_ZSTD_LEVEL`].
    pub const ZSTD: Compression = Compression::Zstd {
        level: DEFAULT_ZSTD_LEVEL,
    };

    /// The type byte buffers compressed this way are recorded under.
    pub fn type_byte(self) -> u8 {
        match self {
            Compression::None => TYPE_NONE,
            Compression::Lz4 => TYPE_LZ4,
            Compression::Zstd { .. } => TYPE_ZSTD,
        }
    }

    /// `InvalidArgument` unless a zstd level lies in [`ZSTD_LEVELS`].
    pub fn validate(self) -> Result<()> {
        match self {
            Compression::Zstd { level } if !ZSTD_LEVELS.contains(&level) => {
                Err(Error::InvalidArgument(format!(
                    "zstd level {level} is outside the accepted range {}..={}",
                    ZSTD_LEVELS.start(),
                    ZSTD_LEVELS.end()
                )))
            }
            _ => Ok(()),
        }
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Compression::Zstd { level } if *level != DEFAULT_ZSTD_LEVEL => {
                write!(f, "zstd:{level}")
            }
            other => f.write_str(type_name(other.type_byte()).unwrap_or("?")),
        }
    }
}

/// Parses `none`, `lz4`, `zstd` or `zstd:LEVEL` (db_bench's `--compression_type` names).
impl FromStr for Compression {
    type Err = Error;

    fn from_str(s: &str) -> Result<Compression> {
        let c = match s {
            "none" => Compression::None,
            "lz4" => Compression::Lz4,
            "zstd" => Compression::ZSTD,
            _ => parse_zstd_level(s)?,
        };
        c.validate()?;
        Ok(c)
    }
}

/// `zstd:LEVEL`, else an error listing the accepted names.
fn parse_zstd_level(s: &str) -> Result<Compression> {
    s.strip_prefix("zstd:")
        .and_then(|l| l.parse().ok())
        .map(|level| Compression::Zstd { level })
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "unknown compression {s:?} (expected none, lz4, zstd or zstd:LEVEL)"
            ))
        })
}

/// The name of type byte `t` (`none`, `lz4`, `zstd`), `None` for a type this build lacks.
pub fn type_name(t: u8) -> Option<&'static str> {
    match t {
        TYPE_NONE => Some("none"),
        TYPE_LZ4 => Some("lz4"),
        TYPE_ZSTD => Some("zstd"),
        _ => None,
    }
}

/// The stored form of `raw` compressed with `c`, if `c` compresses and saves at least 1/8 of
/// the bytes; `None`: store `raw` as is (type [`TYPE_NONE`]). One-off form of
/// [`Compressor::compress`].
pub fn compress(c: Compression, raw: &[u8]) -> Option<Vec<u8>> {
    Compressor::new(c).compress(raw)
}

/// Compresses buffer after buffer with one [`Compression`], reusing the codec's context (a zstd
/// context costs an allocation of about a megabyte). Single owner (`Send`).
pub struct Compressor {
    compression: Compression,
    /// Made on the first zstd buffer; `None` if zstd refused to make one (then buffers are
    /// stored raw).
    zstd: Option<zstd::bulk::Compressor<'static>>,
}

impl Compressor {
    /// A compressor for `compression`.
    pub fn new(compression: Compression) -> Compressor {
        Compressor {
            compression,
            zstd: None,
        }
    }

    /// The stored form of `raw`, if the compression saves at least 1/8 of the bytes; `None`:
    /// store `raw` as is. A codec error also yields `None` (compression is an optimisation; the
    /// raw bytes are always a correct block).
    pub fn compress(&mut self, raw: &[u8]) -> Option<Vec<u8>> {
        let raw_len = u32::try_from(raw.len()).ok();
        let raw_len = raw_len.filter(|&n| n as usize <= MAX_BLOCK_SIZE)?;
        let mut stored = Vec::with_capacity(raw.len() / 2 + 8);
        crate::coding::put_varint32(&mut stored, raw_len);
        stored.extend(self.payload(raw)?);
        (stored.len() <= raw.len() - raw.len() / 8).then_some(stored)
    }

    /// The codec's output for `raw`; `None` for no compression or a codec error.
    fn payload(&mut self, raw: &[u8]) -> Option<Vec<u8>> {
        match self.compression {
            Compression::None => None,
            Compression::Lz4 => Some(lz4_flex::block::compress(raw)),
            Compression::Zstd { level } => {
                let zstd = match &mut self.zstd {
                    Some(z) => z,
                    none => none.insert(zstd::bulk::Compressor::new(level).ok()?),
                };
                zstd.compress(raw).ok()
            }
        }
    }
}

/// The raw bytes of a buffer stored with type byte `t` (`stored` itself for [`TYPE_NONE`]).
/// `Err` describes what is wrong: an unknown type, a damaged payload, a size other than the
/// recorded one.
pub fn decompress(t: u8, stored: Vec<u8>) -> std::result::Result<Vec<u8>, String> {
    if t == TYPE_NONE {
        return Ok(stored);
    }
    let name = type_name(t).ok_or_else(|| format!("unknown compression type {t}"))?;
    let (raw_len, n) = raw_size_prefix(&stored).map_err(|e| format!("{name} block {e}"))?;
    let raw = decode_payload(t, &stored[n..], raw_len).map_err(|e| format!("{name}: {e}"))?;
    if raw.len() != raw_len {
        let got = raw.len();
        return Err(format!(
            "{name} block decompressed to {got} bytes, expected {raw_len}"
        ));
    }
    Ok(raw)
}

/// The raw size a compressed buffer records and the prefix's length.
fn raw_size_prefix(stored: &[u8]) -> std::result::Result<(usize, usize), String> {
    let (raw_len, n) = crate::coding::get_varint32(stored).ok_or("has no valid raw-size prefix")?;
    match raw_len as usize {
        len if len > MAX_BLOCK_SIZE => Err(format!(
            "claims {len} raw bytes, more than {MAX_BLOCK_SIZE}"
        )),
        len => Ok((len, n)),
    }
}

/// Runs the codec of type `t` (LZ4 or zstd) on `payload`, producing at most `raw_len` bytes.
fn decode_payload(t: u8, payload: &[u8], raw_len: usize) -> std::result::Result<Vec<u8>, String> {
    if t == TYPE_ZSTD {
        return zstd_decompress(payload, raw_len);
    }
    let mut raw = vec![0u8; raw_len];
    let n = lz4_flex::block::decompress_into(payload, &mut raw).map_err(|e| e.to_string())?;
    raw.truncate(n);
    Ok(raw)
}

thread_local! {
    /// Each reading thread's zstd context, made on its first zstd block and reused.
    static ZSTD_DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// Decompresses one zstd frame of at most `raw_len` bytes with this thread's context.
fn zstd_decompress(payload: &[u8], raw_len: usize) -> std::result::Result<Vec<u8>, String> {
    ZSTD_DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let d = match &mut *slot {
            Some(d) => d,
            none => none.insert(zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?),
        };
        d.decompress(payload, raw_len).map_err(|e| e.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compressible(n: usize) -> Vec<u8> {
        (0..n).map(|i| b"abcdefgh"[i % 8]).collect()
    }

    #[test]
    fn each_codec_round_trips_a_compressible_buffer() {
        let raw = compressible(4096);
        for c in [Compression::Lz4, Compression::ZSTD] {
            let stored = compress(c, &raw).expect("compressible");
            assert!(stored.len() < raw.len() / 4, "{c}: {}", stored.len());
            assert_eq!(decompress(c.type_byte(), stored).unwrap(), raw, "{c}");
        }
    }

    /// One compressor (one zstd context) serves buffer after buffer, and one thread's reused
    /// decompression context each of them, also after a damaged frame.
    #[test]
    fn a_compressor_and_the_decompression_context_are_reused_across_buffers() {
        for c in [Compression::Lz4, Compression::Zstd { level: 7 }] {
            let mut compressor = Compressor::new(c);
            for n in [100, 4096, 777, 65536] {
                let raw = compressible(n);
                let stored = compressor.compress(&raw).expect("compressible");
                assert!(decompress(c.type_byte(), vec![0x80, 0x01, 0xff]).is_err());
                assert_eq!(decompress(c.type_byte(), stored).unwrap(), raw, "{c} {n}");
            }
        }
    }

    #[test]
    fn a_buffer_that_saves_less_than_an_eighth_is_kept_raw() {
        let raw = crate::testing::noise(0, 4096);
        for c in [Compression::None, Compression::Lz4, Compression::ZSTD] {
            assert_eq!(compress(c, &raw), None, "{c}");
        }
        assert_eq!(decompress(TYPE_NONE, raw.clone()).unwrap(), raw);
    }

    #[test]
    fn an_unknown_type_a_damaged_payload_or_a_wrong_size_is_an_error() {
        let raw = compressible(4096);
        assert!(decompress(9, raw.clone()).unwrap_err().contains("unknown"));
        for c in [Compression::Lz4, Compression::ZSTD] {
            let stored = compress(c, &raw).unwrap();
            let mut cut = stored.clone();
            cut.truncate(stored.len() / 2);
            assert!(decompress(c.type_byte(), cut).is_err(), "{c} truncated");
            let mut longer = stored.clone();
            longer[..2].copy_from_slice(&[0x81, 0x20]); // claims 4097 raw bytes
            assert!(decompress(c.type_byte(), longer).is_err(), "{c} size");
            assert!(decompress(c.type_byte(), Vec::new()).is_err(), "{c} empty");
        }
    }

    #[test]
    fn names_parse_and_print_back() {
        for s in ["none", "lz4", "zstd", "zstd:1", "zstd:19"] {
            assert_eq!(s.parse::<Compression>().unwrap().to_string(), s);
        }
        assert_eq!("zstd:3".parse::<Compression>().unwrap(), Compression::ZSTD);
        for bad in ["snappy", "zstd:0", "zstd:23", "zstd:x", ""] {
            assert!(bad.parse::<Compression>().is_err(), "{bad}");
        }
    }
}
