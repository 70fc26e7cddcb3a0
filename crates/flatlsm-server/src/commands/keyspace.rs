//! Keyspace commands: DEL/UNLINK, EXISTS, TYPE, SCAN, KEYS, DBSIZE and FLUSHDB/FLUSHALL.
//!
//! SCAN and KEYS walk the engine's ordered key space; a pattern's literal prefix (`user:` of
//! `user:*`) narrows the walk to that prefix's range.

use super::store::{reply, Outcome};
use super::{engine_error, int_arg, is, syntax_error, Ctx};
use crate::glob;
use crate::reply::Reply;
use bytes::Bytes;
use flatlsm::WriteBatch;
use std::ops::Bound;

/// DEL key... (and UNLINK): how many of the keys existed; all are deleted in one batch.
pub fn del(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let keys = &args[1..];
    let _lock = ctx.shared.locks.lock(keys.iter().map(|k| &k[..]));
    let outcome = existing(ctx, keys).and_then(|present| {
        let mut batch = WriteBatch::new();
        let mut counted = std::collections::HashSet::new();
        for (key, _) in keys.iter().zip(present).filter(|(_, p)| *p) {
            if counted.insert(key) {
                batch.delete(key);
            }
        }
        if !batch.is_empty() {
            ctx.write(&batch)?;
        }
        Ok(Reply::Int(counted.len() as i64))
    });
    reply(outcome)
}

/// Whether each of `keys` has a value, as of one moment.
fn existing(ctx: &Ctx<'_>, keys: &[Bytes]) -> Result<Vec<bool>, Reply> {
    let values = ctx.shared.db.multi_get(keys);
    values
        .into_iter()
        .map(|v| v.map(|v| v.is_some()).map_err(engine_error))
        .collect()
}

/// EXISTS key...: how many of the keys exist (a key named twice counts twice).
pub fn exists(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let present = existing(ctx, &args[1..]);
    reply(present.map(|p| Reply::Int(p.into_iter().filter(|&p| p).count() as i64)))
}

/// TYPE key: `string`, or `none` for a missing key.
pub fn type_of(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let kind =
        |v: Option<Vec<u8>>| Reply::Simple(if v.is_some() { "string" } else { "none" }.into());
    reply(ctx.get(&args[1]).map(kind))
}

/// SCAN's options.
struct ScanOptions {
    pattern: Option<Bytes>,
    count: usize,
    only_other_types: bool,
}

/// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]; see `crate::cursors`.
pub fn scan(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let start = match parse_cursor(ctx, &args[1]) {
        Ok(start) => start,
        Err(e) => return e,
    };
    match scan_options(ctx, &args[2..]) {
        Ok(o) if o.only_other_types => scan_reply(0, Vec::new()),
        Ok(o) => reply(scan_from(ctx, start, &o)),
        Err(e) => e,
    }
}

/// The key a cursor resumes after (`None`: from the start).
fn parse_cursor(ctx: &Ctx<'_>, arg: &[u8]) -> Result<Option<Vec<u8>>, Reply> {
    let id = std::str::from_utf8(arg)
        .ok()
        .and_then(|s| s.parse::<u64>().ok());
    match id {
        Some(0) => Ok(None),
        Some(id) => ctx
            .shared
            .cursors
            .resume_after(id)
            .map(Some)
            .ok_or_else(invalid_cursor),
        None => Err(invalid_cursor()),
    }
}

fn invalid_cursor() -> Reply {
    Reply::err("invalid cursor")
}

fn scan_options(ctx: &Ctx<'_>, mut rest: &[Bytes]) -> Result<ScanOptions, Reply> {
    let mut o = ScanOptions {
        pattern: None,
        count: 10,
        only_other_types: false,
    };
    while let [word, value, tail @ ..] = rest {
        rest = tail;
        if is(word, "match") {
            o.pattern = Some(value.clone());
        } else if is(word, "count") {
            let count = int_arg(value)?;
            if count < 1 {
                return Err(syntax_error());
            }
            // COUNT is a hint of the work per call; a huge one would be KEYS without its guard.
            o.count = (count as usize).min(ctx.shared.config.keys_limit);
        } else if is(word, "type") {
            o.only_other_types = !is(value, "string");
        } else {
            return Err(syntax_error());
        }
    }
    if rest.is_empty() {
        Ok(o)
    } else {
        Err(syntax_error())
    }
}

/// Examines up to `count` keys after `start`; the matching ones and the next cursor.
fn scan_from(ctx: &Ctx<'_>, start: Option<Vec<u8>>, o: &ScanOptions) -> Outcome {
    let pattern = o.pattern.as_deref().unwrap_or(b"*");
    let mut keys = key_walk(ctx, pattern, start)?;
    let (found, last) = examine(&mut keys, pattern, o.count)?;
    let cursor = match last {
        Some(last) if keys.next().is_some() => ctx.shared.cursors.issue(last),
        _ => 0,
    };
    Ok(scan_reply(cursor, found))
}

/// The keys matching `pattern` among the next `count` of `keys`, and the last key examined
/// when `count` were (`None` when the walk ended first).
fn examine(
    keys: &mut flatlsm::DbIterator,
    pattern: &[u8],
    count: usize,
) -> Result<(Vec<Reply>, Option<Vec<u8>>), Reply> {
    let (mut found, mut last) = (Vec::new(), None);
    for _ in 0..count {
        let Some(entry) = keys.next() else {
            return Ok((found, None));
        };
        let key = entry.map_err(engine_error)?.0;
        if glob::matches(pattern, &key) {
            found.push(Reply::bulk(key.clone()));
        }
        last = Some(key);
    }
    Ok((found, last))
}

fn scan_reply(cursor: u64, keys: Vec<Reply>) -> Reply {
    Reply::Array(vec![Reply::bulk(cursor.to_string()), Reply::Array(keys)])
}

/// An iterator over the keys that may match `pattern`, after `after` if given.
fn key_walk(
    ctx: &Ctx<'_>,
    pattern: &[u8],
    after: Option<Vec<u8>>,
) -> Result<flatlsm::DbIterator, Reply> {
    let prefix = glob::literal_prefix(pattern);
    let upper = flatlsm::prefix_end(&prefix).map_or(Bound::Unbounded, Bound::Excluded);
    let lower = match after {
        Some(key) if key >= prefix => Bound::Excluded(key),
        _ => Bound::Included(prefix),
    };
    ctx.shared.db.range((lower, upper)).map_err(engine_error)
}

/// KEYS pattern: every matching key, refused past `--keys-limit` matches.
pub fn keys(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let pattern = &args[1];
    let limit = ctx.shared.config.keys_limit;
    let outcome = key_walk(ctx, pattern, None).and_then(|walk| {
        let mut found = Vec::new();
        for entry in walk {
            let key = entry.map_err(engine_error)?.0;
            if glob::matches(pattern, &key) {
                if found.len() == limit {
                    return Err(Reply::err(format!(
                        "KEYS would return more than {limit} keys (--keys-limit); use SCAN"
                    )));
                }
                found.push(Reply::bulk(key));
            }
        }
        Ok(Reply::Array(found))
    });
    reply(outcome)
}

/// Keys DBSIZE counts exactly; past them it estimates.
pub const DBSIZE_EXACT_KEYS: u64 = 100_000;

/// DBSIZE: exact up to [`DBSIZE_EXACT_KEYS`] keys; past them an estimate, see [`estimate_keys`].
pub fn dbsize(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> Reply {
    reply(
        estimate_keys(&ctx.shared.db)
            .map(|n| Reply::Int(n as i64))
            .map_err(engine_error),
    )
}

/// The number of keys: counted exactly up to [`DBSIZE_EXACT_KEYS`]; past them, those counted
/// scaled by the database's size on SSD over the counted range's (`Db::approximate_size`,
/// which assumes keys of even size and density), capped by the engine's entry count
/// (`Stats::estimated_keys`, which counts every version). Where the counted range has no SSD
/// size (it lies in the write buffers) the ratio is unknown and the entry count is the
/// estimate: the count so far was returned before, 100,000 for a server holding millions.
pub fn estimate_keys(db: &flatlsm::Db) -> flatlsm::Result<u64> {
    let mut counted = 0;
    let mut last = Vec::new();
    for entry in db.iter()? {
        if counted == DBSIZE_EXACT_KEYS {
            return scaled_estimate(db, counted, &last);
        }
        last = entry?.0;
        counted += 1;
    }
    Ok(counted)
}

/// [`estimate_keys`] past the exact count: `counted` keys up to `last`.
fn scaled_estimate(db: &flatlsm::Db, counted: u64, last: &[u8]) -> flatlsm::Result<u64> {
    let entries = db.stats().estimated_keys;
    let all = db.approximate_size::<&[u8]>(..)?;
    let part = db.approximate_size(..=last)?;
    let scaled = (u128::from(counted) * u128::from(all)).checked_div(u128::from(part));
    let scaled = scaled.map_or(entries, |n| u64::try_from(n).unwrap_or(u64::MAX));
    Ok(counted.max(scaled.min(entries)))
}

/// FLUSHDB [ASYNC | SYNC] (and FLUSHALL): every key deleted by one range tombstone.
pub fn flushdb(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    if args.len() > 2
        || args
            .get(1)
            .is_some_and(|a| !is(a, "async") && !is(a, "sync"))
    {
        return syntax_error();
    }
    // The largest key there can be: the range [empty, it) and then the key itself.
    let last = vec![0xff; flatlsm::options::MAX_KEY_SIZE];
    let db = &ctx.shared.db;
    let deleted = db.delete_range(b"", &last).and_then(|()| db.delete(&last));
    reply(deleted.map(|()| Reply::ok()).map_err(engine_error))
}

#[cfg(test)]
mod tests {
    use super::{estimate_keys, DBSIZE_EXACT_KEYS};

    /// Regression (sixth session): with more than the exact count of keys all in the write
    /// buffers, DBSIZE answered the count so far (100,000 for a server holding millions).
    #[test]
    fn dbsize_past_the_exact_count_estimates_keys_in_write_buffers_and_on_ssd() {
        let dir = tempfile::tempdir().unwrap();
        let opts = flatlsm::Options::default().pm_path(dir.path().join("pm"));
        let db = flatlsm::Db::open(dir.path().join("db"), opts).unwrap();
        let keys = 2 * DBSIZE_EXACT_KEYS + DBSIZE_EXACT_KEYS / 2;
        let mut batch = flatlsm::WriteBatch::new();
        for i in 0..keys {
            batch.put(format!("key{i:09}"), "v");
            if i % 10_000 == 9_999 {
                db.write(&batch).unwrap();
                batch = flatlsm::WriteBatch::new();
            }
        }
        let within = |n: u64| n.abs_diff(keys) <= keys / 10;
        let in_buffers = estimate_keys(&db).unwrap();
        assert!(
            within(in_buffers),
            "{in_buffers} of {keys} in write buffers"
        );
        db.flush().unwrap();
        let on_ssd = estimate_keys(&db).unwrap();
        assert!(within(on_ssd), "{on_ssd} of {keys} on SSD");
    }
}
