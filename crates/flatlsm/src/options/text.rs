//! The stored options as text: every field of [`Options`] a database keeps in its OPTIONS file
//! (`options/file.rs`) and prints in its info log, by section and name, with its value encoded
//! as a TOML-like literal that decodes to exactly the same value.
//!
//! Encoding: integers in decimal; floats as Rust prints them with `{:?}` (shortest text that
//! reads back bit for bit: `8.0`, `0.5`, `inf`); `true`/`false`; names (profile, PM mode,
//! placement) and paths as double-quoted strings in which `"`, `\`, control characters and
//! bytes that are not UTF-8 are written `\"`, `\\` and `\xNN`; an unset optional value as `none`.
//!
//! Not stored: the per-open choices `create_if_missing`, `error_if_exists`, `allow_missing_pm`
//! and `wal_point_in_time_recovery` (a later open must decide them afresh: replaying a stored
//! `allow_missing_pm` would silently accept lost writes), and the trait objects `file_system`
//! and `pm_device`. The test `every_field_is_stored_or_named_as_not_stored` stops the build of
//! the tests when a new field is neither.
//!
//! Invariant: for every stored field, `decode(encode(v)) == v` (floats: bit for bit).

use super::{Compression, Options, Placement, PmModeOption};
use crate::options::Profile;
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

/// A field value written as text and read back exactly.
pub(crate) trait OptionValue: Sized {
    /// The value as text (no newline).
    fn encode(&self) -> String;
    /// The value `text` encodes; `Err` says what was expected instead.
    fn decode(text: &str) -> Result<Self, String>;
}

/// Integers: decimal.
macro_rules! integer_values {
    ($($t:ty),*) => {$(
        impl OptionValue for $t {
            fn encode(&self) -> String {
                self.to_string()
            }
            fn decode(text: &str) -> Result<Self, String> {
                text.parse().map_err(|_| format!("an integer ({}), found {text:?}", stringify!($t)))
            }
        }
    )*};
}

integer_values!(u64, usize, i32);

impl OptionValue for f64 {
    fn encode(&self) -> String {
        format!("{self:?}")
    }
    fn decode(text: &str) -> Result<Self, String> {
        text.parse()
            .map_err(|_| format!("a number such as 0.5 or inf, found {text:?}"))
    }
}

impl OptionValue for bool {
    fn encode(&self) -> String {
        self.to_string()
    }
    fn decode(text: &str) -> Result<Self, String> {
        text.parse()
            .map_err(|_| format!("true or false, found {text:?}"))
    }
}

impl<T: OptionValue> OptionValue for Option<T> {
    fn encode(&self) -> String {
        self.as_ref().map_or_else(|| "none".to_string(), T::encode)
    }
    fn decode(text: &str) -> Result<Self, String> {
        match text {
            "none" => Ok(None),
            _ => T::decode(text)
                .map(Some)
                .map_err(|e| format!("none or {e}")),
        }
    }
}

impl OptionValue for PathBuf {
    fn encode(&self) -> String {
        quote(self.as_os_str().as_bytes())
    }
    fn decode(text: &str) -> Result<Self, String> {
        Ok(PathBuf::from(OsString::from_vec(unquote(text)?)))
    }
}

impl OptionValue for Profile {
    fn encode(&self) -> String {
        quote(self.name().as_bytes())
    }
    fn decode(text: &str) -> Result<Self, String> {
        name_of(text)?
            .parse()
            .map_err(|e: crate::error::Error| e.to_string())
    }
}

/// PM modes and placements: a quoted name from a fixed list.
macro_rules! named_values {
    ($t:ty { $($v:path => $name:literal),* }) => {
        impl OptionValue for $t {
            fn encode(&self) -> String {
                let name = match self { $($v => $name),* };
                quote(name.as_bytes())
            }
            fn decode(text: &str) -> Result<Self, String> {
                match name_of(text)?.as_str() {
                    $($name => Ok($v),)*
                    other => Err(format!("one of {}, found {other:?}", [$($name),*].join(", "))),
                }
            }
        }
    };
}

named_values!(PmModeOption {
    PmModeOption::Auto => "auto",
    PmModeOption::Msync => "msync",
    PmModeOption::Emulated => "emulated"
});
named_values!(Placement { Placement::Dram => "dram", Placement::Pm => "pm" });

impl OptionValue for Compression {
    fn encode(&self) -> String {
        quote(self.to_string().as_bytes())
    }
    fn decode(text: &str) -> Result<Self, String> {
        name_of(text)?
            .parse()
            .map_err(|e: crate::error::Error| e.to_string())
    }
}

/// A compression per level: the names, comma-separated, in one quoted string (`""`: none).
impl OptionValue for Vec<Compression> {
    fn encode(&self) -> String {
        let names: Vec<String> = self.iter().map(ToString::to_string).collect();
        quote(names.join(",").as_bytes())
    }
    fn decode(text: &str) -> Result<Self, String> {
        let names = name_of(text)?;
        names
            .split(',')
            .filter(|n| !n.is_empty())
            .map(|n| n.parse().map_err(|e: crate::error::Error| e.to_string()))
            .collect()
    }
}

/// The UTF-8 name a quoted string holds.
fn name_of(text: &str) -> Result<String, String> {
    String::from_utf8(unquote(text)?).map_err(|_| format!("a name, found {text:?}"))
}

/// `bytes` as a double-quoted string (module docs).
pub(crate) fn quote(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' | '\\' => out.extend(['\\', c]),
                c if c.is_control() && c.is_ascii() => out += &format!("\\x{:02x}", c as u8),
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out += &format!("\\x{b:02x}");
        }
    }
    out + "\""
}

/// The bytes of a string [`quote`] wrote; `Err` for anything else.
pub(crate) fn unquote(text: &str) -> Result<Vec<u8>, String> {
    let bad = || format!("a double-quoted string, found {text:?}");
    let inner = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .filter(|_| text.len() >= 2)
        .ok_or_else(bad)?;
    let mut out = Vec::with_capacity(inner.len());
    let mut bytes = inner.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'\\' => out.push(unescape(&mut bytes).ok_or_else(bad)?),
            b'"' => return Err(bad()),
            b => out.push(b),
        }
    }
    Ok(out)
}

/// The byte an escape stands for (after its `\`): `\\`, `\"` or `\xNN`.
fn unescape(rest: &mut impl Iterator<Item = u8>) -> Option<u8> {
    match rest.next()? {
        b @ (b'\\' | b'"') => Some(b),
        b'x' => {
            let hex = [rest.next()?, rest.next()?];
            u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()
        }
        _ => None,
    }
}

/// `stored_values` and `set_stored` from one table: per section, how to reach its struct from
/// the options (`|o| o.leveled`) and the names of its stored fields.
macro_rules! stored_options {
    ($( [$section:literal] |$o:ident| $target:expr => { $($name:ident),* $(,)? } )*) => {
        /// Every stored option of `opts` as (section, name, encoded value), in file order.
        pub(crate) fn stored_values(opts: &Options) -> Vec<(&'static str, &'static str, String)> {
            let mut values = Vec::new();
            $({
                let $o = opts;
                $( values.push(($section, stringify!($name), $target.$name.encode())); )*
            })*
            values
        }

        /// Sets option `name` of `section` from its encoded `text`: `Ok(false)` for a name this
        /// build does not store, `Err` (what was expected) for a value that does not decode.
        pub(crate) fn set_stored(
            opts: &mut Options,
            section: &str,
            name: &str,
            text: &str,
        ) -> Result<bool, String> {
            match (section, name) {
                $($( ($section, stringify!($name)) => {
                    let $o = &mut *opts;
                    $target.$name = OptionValue::decode(text)?;
                } )*)*
                _ => return Ok(false),
            }
            Ok(true)
        }
    };
}

/// The section of the top-level options.
pub(crate) const MAIN_SECTION: &str = "options";

/// `name` of `section` as the info log and error messages print it: `pmtable_size`,
/// `leveled.level0_in_pm`.
pub(crate) fn qualified(section: &str, name: &str) -> String {
    match section {
        MAIN_SECTION => name.to_string(),
        _ => format!("{section}.{name}"),
    }
}

stored_options! {
    ["options"] |o| o => {
        profile, wal_dir, pm_path, pm_mode, pm_write_latency_ns, pm_read_latency_ns,
        memtable_placement, block_cache_placement, pm_persist_interval_ms, pmtable_size,
        flush_immutable_num, max_write_buffer_number, slowdown_immutable_num,
        delayed_write_rate, l1_merge_trigger, pmtable_gc_ratio, l1_capacity, l1_data_ratio,
        target_file_size,
        flush_threads, kv_separation_threshold, vlog_direct_writes, vlog_cache_written,
        vlog_mmap_reads, value_cache, block_size, bloom_bits_per_key, block_cache_size, max_open_files,
        vlog_gc_garbage_ratio, vlog_gc_total_garbage_ratio, vlog_gc_quiet_garbage_ratio,
        vlog_gc_slowdown_garbage_ratio, quiet_cleanup,
        background_work, background_nice, write_breakdown,
        max_log_file_size,
        keep_log_file_num, compression, compression_per_level,
    }
    ["leveled"] |o| o.leveled => {
        max_bytes_for_level_base, max_bytes_for_level_multiplier,
        level0_file_num_compaction_trigger, level0_slowdown_writes_trigger,
        level0_stop_writes_trigger, level0_in_pm,
    }
    ["matrixkv"] |o| o.matrixkv => {
        container_size, receiver_limit, page_size, column_lower_bound, column_upper_bound,
        column_threads,
    }
    ["slmdb"] |o| o.slmdb => {
        btree_size, live_key_threshold, leaf_node_threshold, compaction_trigger,
        max_compaction_files, slowdown_candidates, stop_candidates, range_subrange_keys,
        sequentiality_threshold,
    }
}

#[cfg(test)]
#[path = "text_tests.rs"]
pub(crate) mod tests;
