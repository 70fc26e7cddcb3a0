//! End-to-end runs of `flatlsm bench`: every benchmark name, the output formats (result line,
//! histogram, CSV, JSON, PNG), flag errors, and `--compare rocksdb` through db_bench when
//! /usr/bin/db_bench is installed.

use std::path::Path;
use std::process::{Command, Output};

fn flatlsm() -> Command {
    Command::new(env!("CARGO_BIN_EXE_flatlsm"))
}

fn run_ok(cmd: &mut Command) -> String {
    let out: Output = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// `flatlsm bench` with small settings so flushes and compactions happen within a few thousand
/// writes.
fn small_bench(dir: &Path) -> Command {
    let mut cmd = flatlsm();
    cmd.arg("bench")
        .args([
            "--num",
            "1500",
            "--value_size",
            "200",
            "--pmtable_size",
            "262144",
        ])
        .args(["--report_interval_seconds", "0.2", "--db"])
        .arg(dir.join("db"));
    cmd
}

fn result_line<'a>(text: &'a str, name: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(&format!("{name:<12} : ")))
        .unwrap_or_else(|| panic!("no result line for {name} in\n{text}"))
}

/// `readrandom_cold` closes the database, drops the page cache (as root; otherwise the result
/// says it could not) and opens the database again: every key the load wrote is found.
#[test]
fn readrandom_cold_reopens_the_database_and_finds_every_key() {
    let dir = tempfile::tempdir().unwrap();
    let out = small_bench(dir.path())
        .args(["--benchmarks", "fillseq,readrandom_cold"])
        .output()
        .unwrap();
    let (text, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{text}\nstderr: {stderr}");
    let line = result_line(&text, "readrandom_cold");
    assert!(line.contains("(1500 of 1500 found)"), "{line}");
    let said =
        stderr.contains("dropped the OS page cache") || line.contains("could not be dropped");
    assert!(said, "{line}\nstderr: {stderr}");
}

#[test]
fn every_benchmark_name_runs_and_prints_db_bench_lines() {
    let dir = tempfile::tempdir().unwrap();
    let names = "fillseq,fillrandom,overwrite,readrandom,readseq,readreverse,seekrandom,readrandomwriterandom,\
                 updaterandom,ycsba,ycsbb,ycsbc,ycsbd,ycsbe,ycsbf,reopen";
    let json = dir.path().join("out.json");
    let plots = dir.path().join("plots");
    let text = run_ok(
        small_bench(dir.path())
            .args(["--benchmarks", names, "--histogram=1", "--statistics"])
            .args(["--seek_nexts", "5", "--threads", "2", "--json"])
            .arg(&json)
            .arg("--plot")
            .arg(&plots),
    );
    for name in names.split(',') {
        let line = result_line(&text, name);
        let w: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            (w[3], w[5], w[7], w[9]),
            ("micros/op", "ops/sec", "seconds", "operations;"),
            "{line}"
        );
    }
    // Two threads, each doing num operations, as db_bench counts them.
    assert!(result_line(&text, "fillrandom").contains(" 3000 operations;"));
    assert!(result_line(&text, "readrandom").contains(" of 3000 found)"));
    assert!(result_line(&text, "ycsbe").contains("scans:"));
    assert!(text.contains("ycsb_load    : "));
    assert!(text.contains("Microseconds per write:\nCount: "));
    assert!(text.contains("Percentiles: P50: "));
    assert!(text.contains("flatlsm.stall.micros COUNT : "));
    assert!(text.contains("stall intervals (< 50% of mean"));
    assert!(text.contains("settled in "));
    assert!(text.contains("  process CPU "), "{text}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let results = doc["results"].as_array().unwrap();
    assert_eq!(
        results.len(),
        names.split(',').count() + 1,
        "plus ycsb_load"
    );
    assert!(results.iter().any(|r| r["reopen_seconds"].is_number()));
    let fill = results
        .iter()
        .find(|r| r["benchmark"] == "fillrandom")
        .unwrap();
    assert_eq!(fill["operations"], 3000);
    assert!(fill["latency"]["p99_us"].as_f64().unwrap() > 0.0);
    assert!(fill["settle"]["write_amplification"].as_f64().unwrap() > 0.0);
    assert!(fill["cpu_seconds_per_million_ops"].as_f64().unwrap() > 0.0);
    assert!(fill["engine_stats"].get("flush_mb_per_sec").is_some());
    assert!(fill["engine_stats"]["write_nanos"]["mem_data"].is_u64());
    assert!(fill.get("device_read_bytes").is_some());
    for png in ["throughput.png", "latency_cdf.png"] {
        let bytes = std::fs::read(plots.join(png)).unwrap();
        assert_eq!(&bytes[..4], b"\x89PNG");
    }
    let csv = std::fs::read_to_string(plots.join("intervals.csv")).unwrap();
    assert!(csv.starts_with("engine,benchmark,secs_elapsed,interval_ops,interval_qps\n"));
}

/// `flush` flushes what the PMTables hold and reports its bytes and CPU per MB.
#[test]
fn flush_benchmark_reports_the_pmtable_bytes_it_flushed() {
    let dir = tempfile::tempdir().unwrap();
    let text = run_ok(
        flatlsm()
            .args(["bench", "--benchmarks", "fillrandom,flush", "--num", "300"])
            .args(["--value_size", "1000", "--pmtable_size", "4194304"])
            .args(["--vlog_direct_writes=1", "--statistics", "--db"])
            .arg(dir.path().join("db")),
    );
    let line = result_line(&text, "flush");
    assert!(line.contains(" MB of PMTables in "), "{line}");
    assert!(line.contains(" ms per MB)"), "{line}");
    assert!(!line.contains(" (0.0 MB of PMTables"), "{line}");
    assert!(text.contains("flatlsm.vlog.direct.files COUNT : "));
}

#[test]
fn readreverse_and_readseq_make_one_pass_over_every_key() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        run_ok(small_bench(dir.path()).args(["--benchmarks", "fillseq,readseq,readreverse"]));
    assert!(
        result_line(&text, "readseq").contains(" 1500 operations;"),
        "{text}"
    );
    assert!(
        result_line(&text, "readreverse").contains(" 1500 operations;"),
        "{text}"
    );
}

#[test]
fn bad_flags_are_refused_with_clear_messages() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 4] = [
        (
            &["--benchmarks", "fillrandom,nosuch"],
            "unknown benchmark \"nosuch\"",
        ),
        (&["--preset", "paper-scaled"], "needs --pm_path"),
        (
            &["--compare", "leveldb"],
            "expected \"rocksdb\" or \"profiles\"",
        ),
        (&["--key_size", "4"], "--key_size 4"),
    ];
    for (args, want) in cases {
        let out = small_bench(dir.path()).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(want),
            "{args:?}: {err}"
        );
    }
}

/// `--compare profiles` runs every design on the same workload and prints one table with a
/// column per design and FlatLSM's ratios to the others.
#[test]
fn compare_profiles_runs_every_design_and_prints_one_table() {
    let dir = tempfile::tempdir().unwrap();
    let text = run_ok(
        small_bench(dir.path())
            .args([
                "--benchmarks",
                "fillrandom,readrandom",
                "--compare",
                "profiles",
                "--container_size",
                "16777216",
                "--container_page_size",
                "4096",
            ])
            .args(["--pm_path"])
            .arg(dir.path().join("pm"))
            .args(["--plot"])
            .arg(dir.path().join("plots")),
    );
    for variant in [
        "FlatLSM (values",
        "leveled\n",
        "leveled+vsep (values",
        "novelsm\n",
    ] {
        assert!(text.contains(&format!("== {variant}")), "{text}");
    }
    let table = text
        .split("=== Comparison of designs ===")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        [
            "FlatLSM/leveled ",
            "FlatLSM/leveled+vsep",
            "FlatLSM/novelsm"
        ]
        .iter()
        .all(|c| table.contains(c)),
        "{table}"
    );
    assert!(dir.path().join("plots").join("throughput.png").exists());
}

/// `--preset placement` runs the study's nine workloads (1/50/90 % reads × three placements)
/// and prints its table beside the study's ratios, with a figure.
#[test]
fn placement_preset_runs_nine_workloads_and_prints_the_study_table() {
    let dir = tempfile::tempdir().unwrap();
    let text = run_ok(
        flatlsm()
            .args([
                "bench",
                "--preset",
                "placement",
                "--duration",
                "1",
                "--num",
                "20000",
            ])
            .args([
                "--pmtable_size",
                "1048576",
                "--cache_size",
                "4194304",
                "--db",
            ])
            .arg(dir.path().join("db"))
            .arg("--pm_path")
            .arg(dir.path().join("pm"))
            .arg("--plot")
            .arg(dir.path().join("plots")),
    );
    assert!(text.matches("% reads, ").count() >= 9, "{text}");
    let table = text
        .split("=== PM placement study")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    for reads in ["   1% |", "  50% |", "  90% |"] {
        assert!(table.contains(reads), "{table}");
    }
    assert!(dir.path().join("plots").join("throughput.png").exists());
}

/// `--preset pm-memtables` (the paper's Fig. 18) compares the designs' memtables at three value
/// sizes and prints throughput by value size; `--preset designs-4k` is `--compare profiles`.
#[test]
fn pm_memtables_preset_sweeps_value_sizes_over_every_design() {
    let dir = tempfile::tempdir().unwrap();
    let text = run_ok(
        flatlsm()
            .args(["bench", "--preset", "pm-memtables", "--num", "3000"])
            .args(["--pmtable_size", "8388608", "--db"])
            .arg(dir.path().join("db"))
            .arg("--pm_path")
            .arg(dir.path().join("pm"))
            .arg("--plot")
            .arg(dir.path().join("plots")),
    );
    let table = text
        .split("=== By value size")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    for size in [" 256 B |", " 1024 B |", " 4096 B |"] {
        assert!(table.contains(size), "{table}");
    }
    assert!(
        table.contains("novelsm") && table.contains("leveled"),
        "{table}"
    );
}

#[test]
fn fresh_run_refuses_a_directory_that_is_not_a_database() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("db")).unwrap();
    std::fs::write(dir.path().join("db").join("notes.txt"), "keep me").unwrap();
    let out = small_bench(dir.path())
        .args(["--benchmarks", "fillseq"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("notes.txt"));
    assert!(dir.path().join("db").join("notes.txt").exists());
}

#[test]
fn compare_rocksdb_through_db_bench_prints_one_table() {
    let db_bench = Path::new("/usr/bin/db_bench");
    if !db_bench.exists() {
        println!("SKIPPED: /usr/bin/db_bench not installed (apt-get install rocksdb-tools)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let text = run_ok(
        small_bench(dir.path())
            .args([
                "--benchmarks",
                "fillrandom,readrandom",
                "--compare",
                "rocksdb",
            ])
            .arg("--plot")
            .arg(dir.path().join("plots")),
    );
    assert!(text.contains("[db_bench] fillrandom   : "), "{text}");
    assert!(text.contains("assertions enabled"), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("[db_bench] fillrandom"))
        .unwrap();
    assert_eq!(line.matches("MB/s").count(), 1, "{line}");
    let table = text.split("=== Comparison").nth(1).unwrap();
    assert!(table.contains("FlatLSM/db_bench"), "{table}");
    for row in [
        "throughput (ops/s)",
        "P99.9 latency (us)",
        "stall intervals",
        "write amp. settled",
        "flush MB/s",
        "CPU s / Mops",
    ] {
        assert!(table.contains(row), "{row} missing in {table}");
    }
    assert!(dir.path().join("plots").join("throughput.png").exists());
}

/// Runs only in a `--features rocksdb` build (RocksDB compiled from source).
#[cfg(feature = "rocksdb")]
#[test]
fn compare_rocksdb_in_process_prints_a_rocksdb_column() {
    let dir = tempfile::tempdir().unwrap();
    let text = run_ok(
        small_bench(dir.path())
            .args(["--benchmarks", "fillrandom,readrandom,ycsba,reopen"])
            .args([
                "--compare",
                "rocksdb",
                "--db_bench",
                "/nonexistent/db_bench",
            ])
            .arg("--plot")
            .arg(dir.path().join("plots")),
    );
    let table = text.split("=== Comparison").nth(1).unwrap();
    assert!(table.contains("FlatLSM/RocksDB "), "{table}");
    assert!(table.contains("FlatLSM/RocksDB+Blob"), "{table}");
    assert!(table.contains("== ycsba"), "{table}");
    let cpu = table
        .lines()
        .find(|l| l.starts_with("CPU s / Mops"))
        .unwrap();
    assert_eq!(
        cpu.matches('x').count(),
        2,
        "a ratio per RocksDB engine: {cpu}"
    );
    assert!(text.contains("RocksDB+Blob 11.8.1"), "{text}");
    assert!(
        text.contains("db_bench: /nonexistent/db_bench not found; skipped"),
        "{text}"
    );
}
