//! Counters: INCR, DECR, INCRBY, DECRBY and INCRBYFLOAT, each a read-modify-write under the
//! key's lock (`crate::locks`), so concurrent clients lose no increment.

use super::store::{reply, Outcome};
use super::{int_arg, is, parse_i64, Ctx};
use crate::reply::Reply;
use bytes::Bytes;

/// INCR key, DECR key, INCRBY key increment and DECRBY key decrement: the new value.
pub fn incr_family(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    reply(delta(args).and_then(|by| add(ctx, &args[1], by)))
}

/// The amount an INCR, DECR, INCRBY or DECRBY request (arity checked) adds.
pub(super) fn delta(args: &[Bytes]) -> Result<i64, Reply> {
    if is(&args[0], "incr") {
        return Ok(1);
    }
    if is(&args[0], "decr") {
        return Ok(-1);
    }
    let by = int_arg(&args[2])?;
    match is(&args[0], "incrby") {
        true => Ok(by),
        false => by
            .checked_neg()
            .ok_or_else(|| Reply::err("decrement would overflow")),
    }
}

/// The integer `current` holds (a missing key is 0) plus `by`.
pub(super) fn added(current: Option<&[u8]>, by: i64) -> Result<i64, Reply> {
    let current = match current {
        None => 0,
        Some(value) => parse_i64(value).ok_or_else(super::not_an_integer)?,
    };
    plus(current, by)
}

/// `current + by`, or the overflow error.
pub(super) fn plus(current: i64, by: i64) -> Result<i64, Reply> {
    current
        .checked_add(by)
        .ok_or_else(|| Reply::err("increment or decrement would overflow"))
}

/// Adds `by` to the integer at `key`; the new value.
fn add(ctx: &Ctx<'_>, key: &[u8], by: i64) -> Outcome {
    let _lock = ctx.shared.locks.lock_one(key);
    let new = added(ctx.get(key)?.as_deref(), by)?;
    ctx.put(key, new.to_string().as_bytes())?;
    Ok(Reply::Int(new))
}

/// INCRBYFLOAT key increment: the new value as a bulk string.
pub fn incrbyfloat(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let by = parse_f64(&args[2]).ok_or_else(|| Reply::err("value is not a valid float"));
    reply(by.and_then(|by| add_float(ctx, &args[1], by)))
}

fn add_float(ctx: &Ctx<'_>, key: &[u8], by: f64) -> Outcome {
    let _lock = ctx.shared.locks.lock_one(key);
    let current = match ctx.get(key)? {
        None => 0.0,
        Some(value) => parse_f64(&value).ok_or_else(|| Reply::err("value is not a valid float"))?,
    };
    let new = current + by;
    if !new.is_finite() {
        return Err(Reply::err("increment would produce NaN or Infinity"));
    }
    let text = format_float(new);
    ctx.put(key, text.as_bytes())?;
    Ok(Reply::bulk(text))
}

/// Parses a float as redis-server accepts one: no surrounding spaces, not NaN.
fn parse_f64(arg: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(arg).ok()?;
    if text.is_empty() || text.trim() != text {
        return None;
    }
    text.parse::<f64>().ok().filter(|v| !v.is_nan())
}

/// The shortest decimal that reads back as `v`, without an exponent: what redis-server's
/// `%.17Lf` with trailing zeros removed prints for the common cases (10.5 + 0.1 = "10.6").
fn format_float(v: f64) -> String {
    let text = format!("{v}");
    if text == "-0" {
        "0".into()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_parse_and_print_as_redis_server_does() {
        assert_eq!(parse_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_f64(b"5.0e3"), Some(5000.0));
        assert_eq!(parse_f64(b" 1"), None);
        assert_eq!(parse_f64(b"nan"), None);
        assert_eq!(parse_f64(b""), None);
        assert_eq!(format_float(10.5 + 0.1), "10.6");
        assert_eq!(format_float(3.0), "3");
        assert_eq!(format_float(5000.0), "5000");
        assert_eq!(format_float(1e21), "1000000000000000000000");
    }
}
