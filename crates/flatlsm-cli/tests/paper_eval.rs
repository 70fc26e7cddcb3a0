//! `flatlsm bench --preset flatlsm-paper` end to end at a tiny `--scale`: every figure it has
//! runs, and the report holds a judged table per figure, the budget and the plots.

use std::process::Command;

/// A PM directory in /dev/shm where there is one (PM emulated in DRAM, as the preset runs: on a
/// disk every persist is a write-back and the test takes minutes), else in `dir`.
fn pm_dir(dir: &std::path::Path) -> (Option<tempfile::TempDir>, std::path::PathBuf) {
    let shm = std::path::Path::new("/dev/shm");
    match shm.is_dir() {
        true => {
            let pm = tempfile::tempdir_in(shm).unwrap();
            let path = pm.path().join("pm");
            (Some(pm), path)
        }
        false => (None, dir.join("pm")),
    }
}

#[test]
fn the_paper_preset_writes_a_report_with_every_figure_at_a_small_scale() {
    let dir = tempfile::tempdir().unwrap();
    let (_shm, pm) = pm_dir(dir.path());
    let report = dir.path().join("report");
    let out = Command::new(env!("CARGO_BIN_EXE_flatlsm"))
        .args(["bench", "--preset", "flatlsm-paper", "--scale", "0.001"])
        .args(["--report_interval_seconds", "0.2", "--db"])
        .arg(dir.path().join("db"))
        .arg("--pm_path")
        .arg(&pm)
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\nstderr: {stderr}");
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    for part in [
        "## Fig. 9a",
        "## Fig. 9b",
        "## Fig. 10",
        "**(b) Sequential reads (readseq)**",
        "## Fig. 11",
        "## Fig. 15 (reads)",
        "## Fig. 16",
        "## Table 1",
        "## Table 2",
        "## Fig. 12",
        "## Fig. 17",
        "## Fig. 18",
        "## Fig. 19",
        "## Figs. 20–21",
        "## Fig. 22",
        "DRAM 8 MiB, PM 16 MiB",
        // The disk is measured, not assumed (`bench/paper/disk.rs`).
        "- Disk: ",
        "sequential writes (4 MiB written then synced",
        "the paper's SATA SSD (about 0.5 GB/s)",
    ] {
        assert!(md.contains(part), "{part} missing:\n{md}");
    }
    // A row that does not agree says why (`bench/paper/causes.rs`).
    let verdicts = [
        "| agrees |",
        "| smaller gap — why: ",
        "| contradicts — why: ",
        "| not judged |",
    ];
    let rows = md
        .lines()
        .filter(|l| verdicts.iter().any(|v| l.contains(v)));
    // Figs. 9a and 9b 5 sizes × 4 designs; Fig. 10 2 benchmarks × 5 sizes × 3; Fig. 11 7
    // workloads; Table 1 3 designs; Table 2 4 figures; Fig. 12 4 counts and the smallest's
    // second run; Fig. 15 5 sizes
    // against Titan; Fig. 16 2 tables × 5 sizes × 2 designs; Fig. 17 3 capacities; Fig. 18 5
    // sizes × 2 memtables; Fig. 19 2 sizes × 3 memtables; Figs. 20–21 3 designs × 2 measures;
    // Fig. 22 2 tables × 2 sizes × 4 designs.
    assert_eq!(
        rows.count(),
        20 + 20 + 30 + 7 + 3 + 4 + 5 + 5 + 20 + 3 + 10 + 6 + 6 + 16,
        "{md}"
    );
    assert_write_parts_were_timed(&md);
    for plot in [
        "fig9a/by_value_size_fillrandom.png",
        "fig9b/by_value_size_fillseq.png",
        "fig10/by_value_size_readrandom.png",
        "fig10/by_value_size_readseq.png",
        "fig15/by_value_size_readrandom.png",
        "fig11/ycsb_over_leveled.png",
        "fig12/pmtable_capacity.png",
        "fig17/recovery.png",
        "fig18/by_value_size_fillrandom.png",
        "fig20/fig20_throughput.png",
        "fig20/fig21_throughput.png",
    ] {
        assert!(report.join(plot).exists(), "{plot}");
    }
    assert!(stdout.contains("budget spent: DRAM"), "{stdout}");
}

/// The breakdowns carry the engine's timers: the DRAM memtable's WAL took time, FlatLSM, which
/// has no WAL, took none, and its PM Log append did.
fn assert_write_parts_were_timed(md: &str) {
    let cells = |start: &str| -> Vec<String> {
        let row = md.lines().find(|l| l.starts_with(start)).unwrap();
        row.split(" | ").map(str::to_string).collect()
    };
    let dram = cells("| 256 B | leveled (DRAM memtable + PM WAL) |");
    let pmtable = cells("| 256 B | FlatLSM (PMTable) |");
    assert_ne!(dram[4], "0.00 (0 %)", "{md}");
    assert_eq!(pmtable[4], "0.00 (0 %)", "{md}");
    assert_ne!(pmtable[5], "0.00 (0 %)", "{md}");
}

#[test]
fn the_paper_preset_refuses_unknown_figures_and_a_missing_report() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_flatlsm"))
            .args(["bench", "--preset", "flatlsm-paper", "--pm_path"])
            .arg(dir.path().join("pm"))
            .args(extra)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    assert!(run(&[]).contains("--report DIR"));
    let report = dir.path().join("r").display().to_string();
    assert!(run(&["--report", &report, "--figures", "9a,99"]).contains("\"99\""));
    assert!(run(&["--report", &report, "--figures", "13"]).contains("leaves out"));
}
