//! Redis glob patterns (`KEYS`, `SCAN MATCH`): `*`, `?`, `[abc]`, `[^a]`, `[a-z]` and `\x`,
//! matched over bytes as redis-server's `stringmatchlen` does.

/// Whether `text` matches `pattern`.
///
/// The classic two-pointer wildcard match: on a mismatch, the last `*` seen absorbs one more
/// byte and matching resumes after it. Only `*` matches more than one byte, so retrying from
/// the last star alone is complete, and the time is O(pattern × text) whatever the pattern
/// (a recursive matcher is exponential in the number of stars).
pub fn matches(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (pattern, text);
    let mut last_star: Option<(&[u8], &[u8])> = None;
    loop {
        if let [b'*', rest @ ..] = p {
            p = rest;
            last_star = Some((p, t));
            continue;
        }
        match (t.split_first(), p.is_empty()) {
            (None, _) => return p.iter().all(|&b| b == b'*'),
            (Some((&c, tail)), false) => {
                if let Some((true, rest)) = one(p, c) {
                    (p, t) = (rest, tail);
                    continue;
                }
            }
            (Some(_), true) => {}
        }
        // Mismatch: let the last star absorb one more byte, or fail.
        match last_star {
            Some((after_star, absorbed)) if !absorbed.is_empty() => {
                last_star = Some((after_star, &absorbed[1..]));
                (p, t) = (after_star, &absorbed[1..]);
            }
            _ => return false,
        }
    }
}

/// Matches one byte `c` against the element at the start of `pattern` (not `*`): whether it
/// matched and the pattern after that element; `None` for a malformed element.
fn one(pattern: &[u8], c: u8) -> Option<(bool, &[u8])> {
    match pattern {
        [b'?', rest @ ..] => Some((true, rest)),
        [b'\\', escaped, rest @ ..] => Some((*escaped == c, rest)),
        [b'[', rest @ ..] => class(rest, c),
        [literal, rest @ ..] => Some((*literal == c, rest)),
        [] => None,
    }
}

/// A `[...]` class (after the `[`): whether `c` is in it, and the pattern after the `]` (an
/// unclosed class ends at the end of the pattern, as in redis-server).
fn class(body: &[u8], c: u8) -> Option<(bool, &[u8])> {
    let (negate, mut body) = match body {
        [b'^', rest @ ..] => (true, rest),
        _ => (false, body),
    };
    let mut hit = false;
    loop {
        match body {
            [] => return Some((hit != negate, body)),
            [b']', rest @ ..] => return Some((hit != negate, rest)),
            [b'\\', x, rest @ ..] => {
                hit |= *x == c;
                body = rest;
            }
            [lo, b'-', hi, rest @ ..] if *hi != b']' => {
                let (lo, hi) = if lo <= hi { (*lo, *hi) } else { (*hi, *lo) };
                hit |= (lo..=hi).contains(&c);
                body = rest;
            }
            [x, rest @ ..] => {
                hit |= *x == c;
                body = rest;
            }
        }
    }
}

/// The literal bytes every match starts with (before the first special character): the
/// prefix a scan can be narrowed to.
pub fn literal_prefix(pattern: &[u8]) -> Vec<u8> {
    let mut prefix = Vec::new();
    let mut rest = pattern;
    loop {
        match rest {
            [b'*' | b'?' | b'[', ..] | [] | [b'\\'] => return prefix,
            [b'\\', x, tail @ ..] | [x, tail @ ..] => {
                prefix.push(*x);
                rest = tail;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_as_redis_server_matches_them() {
        let cases: &[(&str, &str, bool)] = &[
            ("*", "", true),
            ("a*", "abc", true),
            ("a*c", "abbbc", true),
            ("a*c", "abbbd", false),
            ("h?llo", "hello", true),
            ("h?llo", "hllo", false),
            ("h[ae]llo", "hallo", true),
            ("h[ae]llo", "hillo", false),
            ("h[^e]llo", "hallo", true),
            ("h[^e]llo", "hello", false),
            ("h[a-b]llo", "hbllo", true),
            ("h[b-a]llo", "hallo", true),
            ("h\\*llo", "h*llo", true),
            ("h\\*llo", "hallo", false),
            ("key:*:x", "key:1:x", true),
            ("[", "a", false),
            (
                "*a*a*a*a*a*a*a*a*a*a*a*b",
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                false,
            ),
            ("**", "x", true),
            ("a*", "", false),
        ];
        for (pattern, text, want) in cases {
            assert_eq!(
                matches(pattern.as_bytes(), text.as_bytes()),
                *want,
                "{pattern} {text}"
            );
        }
    }

    #[test]
    fn literal_prefix_stops_at_the_first_wildcard() {
        assert_eq!(literal_prefix(b"user:*"), b"user:");
        assert_eq!(literal_prefix(b"a\\*b?"), b"a*b");
        assert_eq!(literal_prefix(b"*x"), b"");
        assert_eq!(literal_prefix(b"abc"), b"abc");
    }
}
