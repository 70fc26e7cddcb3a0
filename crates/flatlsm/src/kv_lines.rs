//! The line format of `export` and `import` (docs/export-format.md): one key-value pair per
//! line, ended by a line feed, in one of two encodings that both round-trip arbitrary bytes.
//!
//! - text (default): `KEY<TAB>VALUE`, each field escaped: printable ASCII other than `\` as
//!   is, `\\` for a backslash, `\t`, `\n`, `\r` for tab, line feed, carriage return, and
//!   `\xNN` (two hex digits) for every other byte. On input any other byte is also taken as is
//!   (UTF-8 text may be written unescaped), but a raw tab in a field, a raw carriage return
//!   (a CRLF file) and an unknown escape are refused.
//! - hex (`--hex`): `HEXKEY<SPACE>HEXVALUE`, lowercase on output, either case on input.
//!
//! Exactly one separator per line; an empty field (e.g. an empty value) is allowed.
//!
//! It lives in the library (hidden from the documentation, not a stable API) so that the
//! `export_format` fuzz target reaches it through `fuzz_api`; the `flatlsm` tool uses it.

/// How a pair is written on its line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineFormat {
    /// `KEY<TAB>VALUE`, escaped.
    Text,
    /// `HEXKEY<SPACE>HEXVALUE`.
    Hex,
}

const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

impl LineFormat {
    /// The format `--hex` selects.
    pub fn new(hex: bool) -> LineFormat {
        if hex {
            LineFormat::Hex
        } else {
            LineFormat::Text
        }
    }

    fn separator(self) -> u8 {
        match self {
            LineFormat::Text => b'\t',
            LineFormat::Hex => b' ',
        }
    }

    /// Appends the line of `(key, value)`, line feed included, to `out`.
    pub fn write_pair(self, key: &[u8], value: &[u8], out: &mut Vec<u8>) {
        self.write_field(key, out);
        out.push(self.separator());
        self.write_field(value, out);
        out.push(b'\n');
    }

    fn write_field(self, field: &[u8], out: &mut Vec<u8>) {
        match self {
            LineFormat::Text => field.iter().for_each(|&b| escape_byte(b, out)),
            LineFormat::Hex => field.iter().for_each(|&b| push_hex(b, out)),
        }
    }

    /// The pair on `line` (without its line feed), or what was expected instead.
    pub fn parse_line(self, line: &[u8]) -> Result<(Vec<u8>, Vec<u8>), String> {
        let sep = self.separator();
        let Some(at) = line.iter().position(|&b| b == sep) else {
            return Err(self.shape_error(line));
        };
        let (key, value) = (&line[..at], &line[at + 1..]);
        Ok((
            self.parse_field("key", key)?,
            self.parse_field("value", value)?,
        ))
    }

    fn shape_error(self, line: &[u8]) -> String {
        let found = if line.is_empty() {
            "an empty line"
        } else {
            "no separator"
        };
        match self {
            LineFormat::Text => format!("expected KEY<TAB>VALUE (text format), found {found}"),
            LineFormat::Hex => format!("expected HEXKEY<SPACE>HEXVALUE (--hex), found {found}"),
        }
    }

    fn parse_field(self, what: &str, field: &[u8]) -> Result<Vec<u8>, String> {
        match self {
            LineFormat::Text => unescape(field).map_err(|e| format!("{what}: {e}")),
            LineFormat::Hex => unhex(field).map_err(|e| format!("{what}: {e}")),
        }
    }
}

fn push_hex(b: u8, out: &mut Vec<u8>) {
    out.push(HEX_DIGITS[usize::from(b >> 4)]);
    out.push(HEX_DIGITS[usize::from(b & 0xf)]);
}

fn escape_byte(b: u8, out: &mut Vec<u8>) {
    match b {
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'\t' => out.extend_from_slice(b"\\t"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        0x20..=0x7e => out.push(b),
        _ => {
            out.extend_from_slice(b"\\x");
            push_hex(b, out);
        }
    }
}

fn hex_value(d: u8) -> Option<u8> {
    (d as char).to_digit(16).and_then(|v| u8::try_from(v).ok())
}

/// The byte of the two hex digits at `field[at..at + 2]`, if they are hex digits.
fn hex_pair(field: &[u8], at: usize) -> Option<u8> {
    let hi = hex_value(*field.get(at)?)?;
    Some(hi << 4 | hex_value(*field.get(at + 1)?)?)
}

fn unhex(field: &[u8]) -> Result<Vec<u8>, String> {
    if !field.len().is_multiple_of(2) {
        return Err(format!(
            "expected hex digits in pairs, found {} characters",
            field.len()
        ));
    }
    (0..field.len())
        .step_by(2)
        .map(|i| hex_pair(field, i).ok_or_else(|| format!("expected hex digits at byte {i}")))
        .collect()
}

fn unescape(field: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let (byte, used) = match field[i] {
            b'\\' => unescape_at(field, i)?,
            b'\t' => {
                return Err(format!(
                    "expected one tab per line, found another at byte {i}"
                ))
            }
            b'\r' => return Err(format!("raw carriage return at byte {i} (write \\r)")),
            b => (b, 1),
        };
        out.push(byte);
        i += used;
    }
    Ok(out)
}

/// The byte of the escape at `field[i]` (a backslash) and the escape's length.
fn unescape_at(field: &[u8], i: usize) -> Result<(u8, usize), String> {
    let simple = match field.get(i + 1) {
        Some(b'\\') => Some(b'\\'),
        Some(b't') => Some(b'\t'),
        Some(b'n') => Some(b'\n'),
        Some(b'r') => Some(b'\r'),
        _ => None,
    };
    if let Some(b) = simple {
        return Ok((b, 2));
    }
    match (field.get(i + 1), hex_pair(field, i + 2)) {
        (Some(b'x'), Some(b)) => Ok((b, 4)),
        _ => Err(format!(
            "bad escape at byte {i}: expected \\\\, \\t, \\n, \\r or \\xNN"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::LineFormat::{self, Hex, Text};

    fn line(f: LineFormat, k: &[u8], v: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        f.write_pair(k, v, &mut out);
        out
    }

    #[test]
    fn every_byte_round_trips_in_both_formats() {
        let all: Vec<u8> = (0..=255).collect();
        for f in [Text, Hex] {
            let l = line(f, &all, b"\\\t\n\r\xff");
            assert_eq!(l.iter().filter(|&&b| b == b'\n').count(), 1, "{f:?}");
            let parsed = f.parse_line(&l[..l.len() - 1]).unwrap();
            assert_eq!(parsed, (all.clone(), b"\\\t\n\r\xff".to_vec()), "{f:?}");
        }
    }

    #[test]
    fn text_lines_escape_only_what_they_must() {
        assert_eq!(line(Text, b"user:1", b"a b"), b"user:1\ta b\n");
        assert_eq!(
            line(Text, b"a\\b", b"\t\n\r\x00\xff"),
            b"a\\\\b\t\\t\\n\\r\\x00\\xff\n"
        );
        assert_eq!(line(Hex, b"\x00\xff", b""), b"00ff \n");
    }

    #[test]
    fn input_may_hold_raw_utf8_and_uppercase_hex() {
        let parsed = Text.parse_line("clé\tvalé\\x41".as_bytes()).unwrap();
        assert_eq!(parsed, ("clé".into(), "valéA".into()));
        assert_eq!(Hex.parse_line(b"0A ff").unwrap(), (vec![10], vec![255]));
        assert_eq!(Text.parse_line(b"\t").unwrap(), (vec![], vec![]));
    }

    #[test]
    fn malformed_lines_say_what_was_expected() {
        let err = |f: LineFormat, l: &[u8]| f.parse_line(l).unwrap_err();
        assert!(err(Text, b"no tab here").contains("KEY<TAB>VALUE"));
        assert!(err(Text, b"").contains("an empty line"));
        assert!(err(Text, b"k\tv\tw").contains("one tab per line"));
        assert!(err(Text, b"k\tv\r").contains("carriage return"));
        assert!(err(Text, b"k\\q\tv").starts_with("key: bad escape at byte 1"));
        assert!(err(Text, b"k\tv\\x4").starts_with("value: bad escape"));
        assert!(err(Hex, b"6b76").contains("HEXKEY<SPACE>HEXVALUE"));
        assert!(err(Hex, b"6b 7").contains("in pairs"));
        assert!(err(Hex, b"6g 76").contains("hex digits at byte 0"));
    }
}
