//! `report.md`: the run (date, machine, command, scale, budget, durations), then one section
//! per figure (setup, table, plots), and what the report cannot say. Generated, never edited.

use super::{Context, Section};
use std::fmt::Write as _;
use std::path::PathBuf;

/// Writes `DIR/report.md`; returns its path.
pub fn write(ctx: &Context<'_>, sections: &[Section], seconds: f64) -> Result<PathBuf, String> {
    let mut out = header(ctx, seconds);
    for s in sections {
        out += &section(s);
    }
    out += &caveats(ctx);
    let path = ctx.dir.join("report.md");
    std::fs::write(&path, out).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(path)
}

fn header(ctx: &Context<'_>, seconds: f64) -> String {
    let mut out =
        String::from("# The FlatLSM paper's evaluation, scaled (`--preset flatlsm-paper`)\n\n");
    let _ = writeln!(out, "- Date: {} (UTC)", utc_now());
    let _ = writeln!(out, "- Machine: {}", machine());
    let _ = writeln!(out, "- Disk: {}", ctx.disk.describe());
    let _ = writeln!(out, "- Command: `{}`", command_line());
    let _ = writeln!(
        out,
        "- Scale: {} (1 = the scale docs/bench.md states); every design got the same budget: \
         {} (bench/budget.rs spends it per design as its paper does; each design's spending \
         is printed in the run's output).",
        ctx.scale,
        ctx.budget.describe()
    );
    let _ = writeln!(out, "- Duration: {seconds:.0} s for the figures below.");
    out + "- Ratios are within one run of this report; never compare numbers across reports.\n"
}

fn section(s: &Section) -> String {
    let mut out = format!(
        "\n## {}: {}\n\n{}\n\nRun took {:.0} s.\n\n",
        s.figure, s.title, s.setup, s.seconds
    );
    out += &s.table;
    for p in &s.plots {
        let _ = write!(out, "\n![{}]({p})\n", s.figure);
    }
    out
}

/// What the report cannot say, with this run's machine facts.
fn caveats(ctx: &Context<'_>) -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "\n## What this report cannot say\n\n\
         - The machine has {cores} cores, and other processes may run beside the benchmark (the \
         CPU they used during each design's run is in the tables' last column): the numbers \
         point a direction; only ratios within one table mean anything.\n\
         - The data is a twentieth to a fortieth of the paper's (each figure's setup says), and \
         {}: the leveled designs' trees stay shallower than the paper's (their write \
         amplification is in the last column), so compaction stalls cost them less and smaller \
         gaps than the paper's are expected for write rows.\n{CAVEATS}",
        ctx.disk.beside_paper()
    )
}

const CAVEATS: &str = "\
- PM is emulated in DRAM (tmpfs) without added latency: PM-resident designs (NoveLSM's and \
  SLM-DB's skiplists, MatrixKV's container, FlatLSM's PM Logs) run at DRAM speed, kinder to \
  them than Optane.\n\
- The read figures (10 and 15) load 2–4 GiB per size at `--scale 1`, which the page cache holds, \
  where the paper read 80 GB from a SATA SSD. Their random reads are judged on \
  `readrandom_cold` (the database closed, the page cache dropped, the database opened again: \
  reads from the disk, as the paper's); the reads as the load left the cache are stated beside. \
  Without root the cache cannot be dropped and the result lines say so.\n\
- `leveled` plays RocksDB and `leveled+vsep` Titan; they are this engine's designs, not those \
  programs. RocksDB itself is not run under a budget.\n";

/// The current time as `YYYY-MM-DD HH:MM`.
fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// Howard Hinnant's days-to-civil-date conversion (days since 1970-01-01).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// "2 cores (model), 23 GiB RAM, Linux x.y": from /proc, "unknown" parts where missing.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = (cpuinfo.lines().find(|l| l.starts_with("model name")))
        .and_then(|l| l.split(':').nth(1))
        .map_or("unknown CPU".to_string(), |m| m.trim().to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let bytes = crate::bench::memory::meminfo_bytes("MemTotal").unwrap_or(0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "{cores} cores ({model}), {} GiB RAM, Linux {}; PM emulated in /dev/shm",
        bytes >> 30,
        kernel.trim()
    )
}

fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_since_the_epoch_become_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_784), (2026, 11, 27));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
