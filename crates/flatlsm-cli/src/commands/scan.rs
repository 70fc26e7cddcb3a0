//! `scan`: prints keys and values in key order, over a range or a prefix, up to a limit.

use crate::db_args::{DbArgs, Encoding};
use std::io::Write;
use std::ops::Bound;

/// `--from`, `--to` (half-open) and `--prefix`: the keys a reading command covers.
#[derive(clap::Args, Debug)]
pub struct KeyRangeArgs {
    /// First key (inclusive; default: the first key).
    #[arg(long)]
    from: Option<String>,
    /// End key (exclusive; default: past the last key).
    #[arg(long)]
    to: Option<String>,
    /// Only keys starting with this prefix (combined with --from/--to).
    #[arg(long)]
    prefix: Option<String>,
}

impl KeyRangeArgs {
    /// The range as one `[lower, upper)`, keys decoded by `enc`.
    pub(crate) fn bounds(&self, enc: Encoding) -> Result<Bounds, String> {
        let (from, to) = (self.from.as_deref(), self.to.as_deref());
        key_bounds(enc, from, to, self.prefix.as_deref())
    }
}

/// Flags of `flatlsm scan`.
#[derive(clap::Args, Debug)]
pub struct ScanArgs {
    #[command(flatten)]
    db: DbArgs,
    #[command(flatten)]
    enc: Encoding,
    #[command(flatten)]
    range: KeyRangeArgs,
    /// Print at most this many entries.
    #[arg(long)]
    limit: Option<u64>,
    /// Print only the keys.
    #[arg(long = "keys-only")]
    keys_only: bool,
    /// Walk from the last key backwards.
    #[arg(long)]
    reverse: bool,
}

/// Bounds of the scan: the intersection of `[from, to)` and the prefix range.
/// A lower (inclusive) and an upper (exclusive) key bound; `None` is unbounded.
pub(crate) type Bounds = (Option<Vec<u8>>, Option<Vec<u8>>);

/// A key and its value, or the error that ended the scan.
type Entry = flatlsm::Result<(Vec<u8>, Vec<u8>)>;

fn bounds(a: &ScanArgs) -> Result<Bounds, String> {
    a.range.bounds(a.enc)
}

/// `--from`, `--to` and `--prefix` (each optional, decoded by `enc`) as one `[lower, upper)`.
pub(crate) fn key_bounds(
    enc: Encoding,
    from: Option<&str>,
    to: Option<&str>,
    prefix: Option<&str>,
) -> Result<Bounds, String> {
    let mut lower = from.map(|k| enc.decode("--from", k)).transpose()?;
    let mut upper = to.map(|k| enc.decode("--to", k)).transpose()?;
    if let Some(p) = prefix {
        let p = enc.decode("--prefix", p)?;
        if lower.as_ref().is_none_or(|l| *l < p) {
            lower = Some(p.clone());
        }
        if let Some(end) = flatlsm::prefix_end(&p) {
            if upper.as_ref().is_none_or(|u| *u > end) {
                upper = Some(end);
            }
        }
    }
    Ok((lower, upper))
}

/// Prints `key => value` lines (or keys only), then a count on stderr.
pub fn scan(a: ScanArgs) -> Result<(), String> {
    let (lower, upper) = bounds(&a)?;
    let db = a.db.open_read_only()?;
    let it = db
        .range::<&[u8]>(half_open(lower.as_deref(), upper.as_deref()))
        .map_err(|e| e.to_string())?;
    let entries: Box<dyn Iterator<Item = Entry>> = if a.reverse {
        Box::new(it.rev())
    } else {
        Box::new(it)
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut n = 0u64;
    for entry in entries {
        if a.limit.is_some_and(|l| n >= l) {
            break;
        }
        let (k, v) = entry.map_err(|e| e.to_string())?;
        let line = if a.keys_only {
            a.enc.encode(&k)
        } else {
            format!("{} => {}", a.enc.encode(&k), a.enc.encode(&v))
        };
        if writeln!(out, "{line}").is_err() {
            return Ok(()); // The reader went away (e.g. `| head`).
        }
        n += 1;
    }
    let _ = out.flush();
    eprintln!("{n} entries");
    Ok(())
}

/// `[lower, upper)` as range bounds (each end optional).
pub(crate) fn half_open<'k>(
    lower: Option<&'k [u8]>,
    upper: Option<&'k [u8]>,
) -> (Bound<&'k [u8]>, Bound<&'k [u8]>) {
    let lo = lower.map_or(Bound::Unbounded, Bound::Included);
    (lo, upper.map_or(Bound::Unbounded, Bound::Excluded))
}
