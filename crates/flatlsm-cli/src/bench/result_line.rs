//! db_bench's result line:
//! `"%-12s : %11.3f micros/op %ld ops/sec %.3f seconds %lu operations;%s%s"`, with
//! `" %6.1f MB/s"` when bytes were counted and e.g. `" (F of N found)"` as the extra message.

/// Formats one result line. `thread_seconds` is the sum of every worker's busy time, so
/// micros/op is per-operation latency as db_bench reports it; ops/sec uses wall time.
pub fn result_line(
    name: &str,
    ops: u64,
    wall_seconds: f64,
    thread_seconds: f64,
    bytes: u64,
    extra: &str,
) -> String {
    let micros = thread_seconds * 1e6 / ops.max(1) as f64;
    let rate = (ops as f64 / wall_seconds.max(1e-9)) as u64;
    let mb = if bytes > 0 {
        format!(
            " {:6.1} MB/s",
            bytes as f64 / 1_048_576.0 / wall_seconds.max(1e-9)
        )
    } else {
        String::new()
    };
    format!(
        "{name:<12} : {micros:11.3} micros/op {rate} ops/sec {wall_seconds:.3} seconds {ops} operations;{mb}{extra}"
    )
}

/// Fields of a parsed result line.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedResult {
    /// Benchmark name.
    pub name: String,
    /// Microseconds per operation.
    pub micros_per_op: f64,
    /// Throughput.
    pub ops_per_sec: f64,
    /// Wall seconds.
    pub seconds: f64,
    /// Operations.
    pub ops: u64,
    /// MB/s when present.
    pub mb_per_sec: Option<f64>,
}

/// Parses a db_bench result line (ours or db_bench's own); `None` if it is not one.
pub fn parse_result_line(line: &str) -> Option<ParsedResult> {
    let (name, rest) = line.split_once(" : ")?;
    let w: Vec<&str> = rest.split_whitespace().collect();
    if w.len() < 8 || w[1] != "micros/op" || w[3] != "ops/sec" || w[5] != "seconds" {
        return None;
    }
    let mb_per_sec = w
        .iter()
        .position(|t| *t == "MB/s")
        .and_then(|i| w.get(i.checked_sub(1)?)?.parse().ok());
    Some(ParsedResult {
        name: name.trim().to_string(),
        micros_per_op: w[0].parse().ok()?,
        ops_per_sec: w[2].parse().ok()?,
        seconds: w[4].parse().ok()?,
        ops: w[6].parse().ok()?,
        mb_per_sec,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_line_matches_db_bench_format() {
        let l = result_line("fillrandom", 4_000_000, 12.492, 12.492, 5_242_880_000, "");
        assert_eq!(
            l,
            "fillrandom   :       3.123 micros/op 320204 ops/sec 12.492 seconds 4000000 operations;  400.3 MB/s"
        );
        let r = result_line("readrandom", 10, 1.0, 1.0, 0, " (9 of 10 found)");
        assert_eq!(
            r,
            "readrandom   :  100000.000 micros/op 10 ops/sec 1.000 seconds 10 operations; (9 of 10 found)"
        );
    }

    #[test]
    fn result_lines_parse_back_including_db_bench_s_own() {
        let p = parse_result_line(
            "fillrandom   :      27.336 micros/op 36581 ops/sec 27.336 seconds 1000000 operations;  143.6 MB/s",
        )
        .unwrap();
        assert_eq!(p.name, "fillrandom");
        assert_eq!((p.ops, p.ops_per_sec as u64), (1_000_000, 36581));
        assert_eq!(p.mb_per_sec, Some(143.6));
        assert!(parse_result_line("DB path: [/tmp/x]").is_none());
    }
}
