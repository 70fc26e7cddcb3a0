//! String commands: GET, SET, SETNX, GETSET, GETDEL, MGET, MSET, MSETNX, APPEND, STRLEN,
//! GETRANGE, SETRANGE.
//!
//! Every write takes the key locks of its keys (`crate::locks`) and holds them until the
//! engine's write returned, so commands that read before they write (SET NX/XX/GET, GETSET,
//! GETDEL, SETNX, MSETNX, APPEND, SETRANGE) see no other write of their keys in between.

use super::store::{reply, Outcome};
use super::{int_arg, is, syntax_error, wrong_arity, Ctx};
use crate::reply::Reply;
use bytes::Bytes;
use flatlsm::WriteBatch;

/// GET key.
pub fn get(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    reply(ctx.get(&args[1]).map(Reply::value))
}

/// SET's options.
#[derive(Default)]
struct SetOptions {
    only_if_absent: bool,
    only_if_present: bool,
    return_old: bool,
    expiry: bool,
}

/// SET key value [NX | XX] [GET] [EX s | PX ms | EXAT t | PXAT t | KEEPTTL].
pub fn set(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let options = match set_options(&args[3..]) {
        Ok(o) => o,
        Err(e) => return e,
    };
    if options.expiry {
        return Reply::err(
            "EX, PX, EXAT, PXAT and KEEPTTL are not supported: FlatLSM keys do not expire",
        );
    }
    reply(set_with(ctx, &args[1], &args[2], &options))
}

fn set_options(mut rest: &[Bytes]) -> Result<SetOptions, Reply> {
    let mut o = SetOptions::default();
    while let Some((word, tail)) = rest.split_first() {
        rest = tail;
        if is(word, "nx") && !o.only_if_present {
            o.only_if_absent = true;
        } else if is(word, "xx") && !o.only_if_absent {
            o.only_if_present = true;
        } else if is(word, "get") {
            o.return_old = true;
        } else if is(word, "keepttl") {
            o.expiry = true;
        } else if ["ex", "px", "exat", "pxat"].iter().any(|w| is(word, w)) && !rest.is_empty() {
            o.expiry = true;
            rest = &rest[1..];
        } else {
            return Err(syntax_error());
        }
    }
    Ok(o)
}

fn set_with(ctx: &Ctx<'_>, key: &[u8], value: &[u8], o: &SetOptions) -> Outcome {
    let _lock = ctx.shared.locks.lock_one(key);
    if !(o.only_if_absent || o.only_if_present || o.return_old) {
        ctx.put(key, value)?;
        return Ok(Reply::ok());
    }
    let old = ctx.get(key)?;
    let write = if o.only_if_absent {
        old.is_none()
    } else {
        !o.only_if_present || old.is_some()
    };
    if write {
        ctx.put(key, value)?;
    }
    Ok(match (o.return_old, write) {
        (true, _) => Reply::value(old),
        (false, true) => Reply::ok(),
        (false, false) => Reply::Null,
    })
}

/// SETNX key value: 1 if set, 0 if the key existed.
pub fn setnx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let _lock = ctx.shared.locks.lock_one(&args[1]);
    let outcome = ctx.get(&args[1]).and_then(|old| match old {
        Some(_) => Ok(Reply::Int(0)),
        None => ctx.put(&args[1], &args[2]).map(|()| Reply::Int(1)),
    });
    reply(outcome)
}

/// GETSET key value: the old value.
pub fn getset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let _lock = ctx.shared.locks.lock_one(&args[1]);
    let outcome = ctx.get(&args[1]).and_then(|old| {
        ctx.put(&args[1], &args[2])?;
        Ok(Reply::value(old))
    });
    reply(outcome)
}

/// GETDEL key: the value, and the key is deleted.
pub fn getdel(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let _lock = ctx.shared.locks.lock_one(&args[1]);
    let outcome = ctx.get(&args[1]).and_then(|old| {
        if old.is_some() {
            ctx.delete(&args[1])?;
        }
        Ok(Reply::value(old))
    });
    reply(outcome)
}

/// MGET key...: every value as of one moment.
pub fn mget(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let values = ctx.shared.db.multi_get(&args[1..]);
    let value = |v: flatlsm::Result<Option<Vec<u8>>>| {
        reply(v.map(Reply::value).map_err(super::engine_error))
    };
    Reply::Array(values.into_iter().map(value).collect())
}

/// The key-value pairs of MSET and MSETNX, or the arity error.
fn pairs<'a>(name: &str, args: &'a [Bytes]) -> Result<Vec<(&'a Bytes, &'a Bytes)>, Reply> {
    let rest = &args[1..];
    if !rest.len().is_multiple_of(2) {
        return Err(wrong_arity(name));
    }
    Ok(rest.chunks_exact(2).map(|p| (&p[0], &p[1])).collect())
}

/// MSET key value [key value ...]: one atomic write batch.
pub fn mset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let outcome = pairs("mset", args).and_then(|pairs| {
        let _lock = ctx.shared.locks.lock(pairs.iter().map(|(k, _)| &k[..]));
        ctx.write(&batch_of(&pairs))?;
        Ok(Reply::ok())
    });
    reply(outcome)
}

/// MSETNX key value [key value ...]: 1 and all set if none existed, else 0 and none set.
pub fn msetnx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let outcome = pairs("msetnx", args).and_then(|pairs| {
        let _lock = ctx.shared.locks.lock(pairs.iter().map(|(k, _)| &k[..]));
        for (key, _) in &pairs {
            if ctx.get(key)?.is_some() {
                return Ok(Reply::Int(0));
            }
        }
        ctx.write(&batch_of(&pairs))?;
        Ok(Reply::Int(1))
    });
    reply(outcome)
}

fn batch_of(pairs: &[(&Bytes, &Bytes)]) -> WriteBatch {
    let mut batch = WriteBatch::new();
    for (key, value) in pairs {
        batch.put(key, value);
    }
    batch
}

/// APPEND key value: the new length.
pub fn append(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let _lock = ctx.shared.locks.lock_one(&args[1]);
    let outcome = ctx.get(&args[1]).and_then(|old| {
        let mut value = old.unwrap_or_default();
        ctx.check_length(value.len() + args[2].len())?;
        value.extend_from_slice(&args[2]);
        ctx.put(&args[1], &value)?;
        Ok(Reply::Int(value.len() as i64))
    });
    reply(outcome)
}

/// STRLEN key: 0 for a missing key.
pub fn strlen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    reply(
        ctx.get(&args[1])
            .map(|v| Reply::Int(v.map_or(0, |v| v.len()) as i64)),
    )
}

/// GETRANGE key start end (inclusive, negative from the end), as redis-server clamps them.
pub fn getrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let bounds = int_arg(&args[2]).and_then(|s| Ok((s, int_arg(&args[3])?)));
    let outcome = bounds.and_then(|(start, end)| {
        let value = ctx.get(&args[1])?.unwrap_or_default();
        let range = clamp_range(start, end, value.len() as i64);
        Ok(Reply::bulk(
            range.map_or(Vec::new(), |(s, e)| value[s..=e].to_vec()),
        ))
    });
    reply(outcome)
}

/// The byte range `[start, end]` of a `len`-byte string GETRANGE returns, if not empty.
fn clamp_range(start: i64, end: i64, len: i64) -> Option<(usize, usize)> {
    if start < 0 && end < 0 && start > end {
        return None;
    }
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let end = if end < 0 {
        (len + end).max(0)
    } else {
        end.min(len - 1)
    };
    (len > 0 && start <= end).then_some((start as usize, end as usize))
}

/// SETRANGE key offset value: overwrites from `offset`, zero-padding; the new length.
pub fn setrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Reply {
    let offset = match int_arg(&args[2]) {
        Ok(o) if o >= 0 => o as usize,
        Ok(_) => return Reply::err("offset is out of range"),
        Err(e) => return e,
    };
    let patch = &args[3];
    let _lock = ctx.shared.locks.lock_one(&args[1]);
    let outcome = ctx.get(&args[1]).and_then(|old| {
        let mut value = old.unwrap_or_default();
        if patch.is_empty() {
            return Ok(Reply::Int(value.len() as i64));
        }
        ctx.check_length(offset.saturating_add(patch.len()))?;
        value.resize(value.len().max(offset + patch.len()), 0);
        value[offset..offset + patch.len()].copy_from_slice(patch);
        ctx.put(&args[1], &value)?;
        Ok(Reply::Int(value.len() as i64))
    });
    reply(outcome)
}

#[cfg(test)]
mod tests {
    use super::clamp_range;

    #[test]
    fn getrange_bounds_clamp_as_redis_server_clamps_them() {
        assert_eq!(clamp_range(0, 3, 10), Some((0, 3)));
        assert_eq!(clamp_range(-3, -1, 10), Some((7, 9)));
        assert_eq!(clamp_range(0, -1, 10), Some((0, 9)));
        assert_eq!(clamp_range(5, 100, 10), Some((5, 9)));
        assert_eq!(clamp_range(-100, 2, 10), Some((0, 2)));
        assert_eq!(clamp_range(-1, -5, 10), None);
        assert_eq!(clamp_range(3, 1, 10), None);
        assert_eq!(clamp_range(0, -1, 0), None);
    }
}
