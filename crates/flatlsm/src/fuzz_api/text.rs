//! The targets of the text files: the OPTIONS file, IDENTITY and the export format. What one
//! accepts must survive a round trip through its encoder (encode, decode, encode again gives
//! the same text), and loaded options are validated as open validates them.

use super::{inconsistent, path};
use crate::error::{Error, Result};
use crate::kv_lines::LineFormat;
use crate::layout::identity::{encode_identity, parse_identity};
use crate::options::file::{decode, encode};
use crate::types::crc32c;

/// The first line of an OPTIONS file's checksum section (options/file.rs).
const CHECKSUM_SECTION: &[u8] = b"[checksum]\n";

/// An OPTIONS file: decoded, re-encoded and decoded again to the same text, then validated
/// (an out-of-range value is open's `InvalidArgument`, not a decoder failure).
pub(super) fn options_file(data: &[u8]) -> Result<()> {
    let p = path("OPTIONS-000001");
    let opts = decode(data, p)?;
    let text = encode(&opts);
    let again = decode(text.as_bytes(), p)
        .map_err(|e| inconsistent("options_file", format!("its re-encoding is refused: {e}")))?;
    if encode(&again) != text {
        let what = "the re-encoding decodes to other options".to_string();
        return Err(inconsistent("options_file", what));
    }
    match opts.validate() {
        Ok(()) | Err(Error::InvalidArgument(_)) => Ok(()),
        Err(e) => Err(inconsistent("options_file", format!("validate: {e}"))),
    }
}

/// An IDENTITY file (either format): parsed, re-encoded in the current format and parsed again
/// to the same identity.
pub(super) fn identity(data: &[u8]) -> Result<()> {
    let p = path("IDENTITY");
    let parsed = parse_identity(data).map_err(|(at, why)| Error::corruption(p, at, why))?;
    let text = encode_identity(&parsed.id, &parsed.pm_path);
    match parse_identity(text.as_bytes()) {
        Ok(i) if (i.id == parsed.id && i.pm_path == parsed.pm_path && !i.legacy) => Ok(()),
        other => Err(inconsistent("identity", format!("re-encoded: {other:?}"))),
    }
}

/// An export: every line as `flatlsm import` reads it, in the text format or else the hex one
/// (the first format's error is reported); each pair written back and read again unchanged.
pub(super) fn export_format(data: &[u8]) -> Result<()> {
    export_lines(data, LineFormat::Text)
        .or_else(|e| export_lines(data, LineFormat::Hex).map_err(|_| e))
}

fn export_lines(data: &[u8], format: LineFormat) -> Result<()> {
    let mut offset = 0;
    for (n, raw) in data.split_inclusive(|&b| b == b'\n').enumerate() {
        let body = raw.strip_suffix(b"\n").unwrap_or(raw);
        let bad =
            |e: String| Error::corruption(path("export"), offset, format!("line {}: {e}", n + 1));
        let pair = format.parse_line(body).map_err(bad)?;
        let mut line = Vec::new();
        format.write_pair(&pair.0, &pair.1, &mut line);
        if format.parse_line(&line[..line.len() - 1]) != Ok(pair) {
            let what = format!("line {} does not read back as written", n + 1);
            return Err(inconsistent("export_format", what));
        }
        offset += raw.len() as u64;
    }
    Ok(())
}

/// An OPTIONS file whose last line is its checksum of the bytes before its (last) checksum
/// section; a file without one gets one.
pub(super) fn reseal_options(data: &[u8]) -> Vec<u8> {
    let starts_line = |i: usize| i == 0 || data[i - 1] == b'\n';
    let section = (0..data.len())
        .rev()
        .find(|&i| data[i..].starts_with(CHECKSUM_SECTION) && starts_line(i));
    let mut out = data[..section.unwrap_or(data.len())].to_vec();
    if !out.is_empty() && !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    let crc = crc32c(&out);
    out.extend_from_slice(CHECKSUM_SECTION);
    out.extend_from_slice(format!("crc32c = \"{crc:08x}\"\n").as_bytes());
    out
}

/// An IDENTITY file's first two lines and their checksum line; `None` without two lines.
pub(super) fn reseal_identity(data: &[u8]) -> Option<Vec<u8>> {
    let second = data
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(1)?
        .0;
    let mut out = data[..=second].to_vec();
    let crc = crc32c(&out);
    out.extend_from_slice(format!("crc32c {crc:08x}\n").as_bytes());
    Some(out)
}
