//! Bytes rendered for people, in `dump` and `check` output (and by the `flatlsm` tool, through
//! `tool_support`).

/// Renders bytes for people: printable ASCII as is, everything else as `\xNN`.
pub fn escape_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_graphic() || b == b' ' {
            if b == b'\\' {
                out.push('\\');
            }
            out.push(b as char);
        } else {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// Renders bytes as lowercase hexadecimal.
pub fn hex_bytes(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
