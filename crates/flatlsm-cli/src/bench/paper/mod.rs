//! `--preset flatlsm-paper` (issue 28): the FlatLSM paper's evaluation (its section 5), scaled
//! to this machine, each figure one run with every design at one equal budget
//! (`bench/budget.rs`), written to `--report DIR`: `report.md` (a table per figure beside the
//! paper's numbers, each row judged agrees / smaller gap / contradicts, with the reason) and
//! the plots.
//!
//! Scale at `--scale 1` (the paper: 80 GB of data, 16 B keys, PMTables 6 × 2 GB, MatrixKV 8 GB
//! and NoveLSM 12 GB of PM): every design gets DRAM 512 MiB and PM 1 GiB; Fig. 9a writes
//! 35 s per value size over 16 GiB of keys (12 GiB at 16 and 64 KB), Fig. 9b 2 GiB of sequential writes per size (1/40), Fig. 10
//! loads 2 GiB per size at random (1/40) and reads 100k keys at random and 100k entries in
//! order, Fig. 11 loads 1M records of 4 KB and runs 500k operations per workload (E: 50k),
//! Table 2 reads Fig. 11's YCSB-A (or runs the load and A alone), Fig. 12 writes 8 GiB of 4 KB
//! values per PMTable count, Fig. 15's reads load 4 GiB per size in order (1/20) and read 100k
//! keys at random (its writes are Fig. 9a's Titan rows), Fig. 17 fills PMTables of 256 MiB,
//! 512 MiB and 1 GiB in all (the paper: 4 GB), Fig. 18 writes 1 GiB per value size into 2 GiB
//! write buffers (preset `pm-memtables`; Fig. 19 again at 256 B and 4 KB, its parts timed),
//! Figs. 20–21 with Table 1 share one run of 8 GiB of 4 KB random writes (preset
//! `designs-4k`'s), and Figs. 16 and 22 break down Fig. 9a's writes (its run, kept). `--scale` multiplies all of it (budgets
//! floored at DRAM 8 MiB, PM 16 MiB; loads at 4 MiB and read counts at 1,000 per size).

mod breakdown;
mod by_size;
mod causes;
mod disk;
mod fig10;
mod fig11;
mod fig12;
mod fig15;
mod fig16;
mod fig17;
mod fig18;
mod fig19;
mod fig20;
mod fig22;
mod fig9a;
mod fig9b;
mod latency;
mod report;
mod table1;
mod table2;
mod verdict;

use super::budget::Budget;
use super::config::BenchConfig;
use super::outcome::Outcome;
use super::workdir::WorkDir;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The figures this preset runs, in the paper's order (`table1` and `table2` are its Tables 1
/// and 2, `20` its Figs. 20 and 21).
pub const FIGURES: [&str; 14] = [
    "9a", "9b", "10", "11", "table1", "table2", "12", "15", "16", "17", "18", "19", "20", "22",
];

/// The smallest budget a scaled run gets: every design's buffers still fit.
const MIN_BUDGET: Budget = Budget {
    dram: 8 << 20,
    pm: 16 << 20,
};

/// One figure's part of the report.
pub struct Section {
    /// "Fig. 9a".
    pub figure: String,
    /// What the figure shows.
    pub title: String,
    /// The workload, its scale and the budget, in prose.
    pub setup: String,
    /// The table (markdown), one row per comparison.
    pub table: String,
    /// Plots, relative to the report directory.
    pub plots: Vec<String>,
    /// Wall time of the figure's run.
    pub seconds: f64,
}

/// What every figure's run shares: the configuration, the scale, the budget and where the
/// report goes.
pub struct Context<'a> {
    /// The resolved flags and preset.
    pub cfg: &'a BenchConfig,
    /// Where the databases go.
    pub work: &'a WorkDir,
    /// `--scale`.
    pub scale: f64,
    /// The budget every design gets, scaled.
    pub budget: Budget,
    /// The report directory.
    pub dir: PathBuf,
    /// The disk's measured sequential write speed.
    pub disk: disk::DiskSpeed,
    /// Runs more than one figure shows (Table 1 and Figs. 20–21; Fig. 11 and Table 2), by name,
    /// kept by the first figure that ran them.
    runs: RefCell<Vec<(&'static str, Vec<Outcome>)>>,
}

impl Context<'_> {
    /// `bytes` at this run's scale, at least `floor`.
    pub fn bytes(&self, bytes: u64, floor: u64) -> u64 {
        ((bytes as f64 * self.scale) as u64).max(floor)
    }

    /// A count at this run's scale, at least `floor`.
    pub fn count(&self, n: u64, floor: u64) -> u64 {
        ((n as f64 * self.scale) as u64).max(floor)
    }

    /// The configuration of one figure: the run's, with this budget and plots under `name`.
    pub fn figure_config(&self, name: &str) -> BenchConfig {
        let mut one = self.cfg.clone();
        one.budget = Some(self.budget);
        one.args.plot = Some(self.dir.join(name));
        one.args.num = None;
        one.args.reads = None;
        one.value_sizes.clear();
        one
    }

    /// The outcomes of run `name` if an earlier figure of this report kept them.
    pub fn earlier_run(&self, name: &str) -> Option<Vec<Outcome>> {
        let runs = self.runs.borrow();
        runs.iter().find(|r| r.0 == name).map(|r| r.1.clone())
    }

    /// Keeps run `name` for the figures after this one that show it too.
    pub fn keep_run(&self, name: &'static str, outcomes: &[Outcome]) {
        self.runs.borrow_mut().push((name, outcomes.to_vec()));
    }

    /// Run `name`: an earlier figure's, else `run`'s, kept for the figures after this one.
    pub fn shared_run(
        &self,
        name: &'static str,
        run: impl FnOnce() -> Result<Vec<Outcome>, String>,
    ) -> Result<Vec<Outcome>, String> {
        if let Some(outcomes) = self.earlier_run(name) {
            return Ok(outcomes);
        }
        let outcomes = run()?;
        self.keep_run(name, &outcomes);
        Ok(outcomes)
    }
}

/// Runs the chosen figures and writes the report.
pub fn run(cfg: &BenchConfig, work: &WorkDir) -> Result<(), String> {
    let ctx = context(cfg, work)?;
    let started = Instant::now();
    let mut sections = Vec::new();
    for figure in chosen(cfg.args.figures.as_deref())? {
        let t = Instant::now();
        let mut section = run_figure(figure, &ctx)?;
        section.seconds = t.elapsed().as_secs_f64();
        sections.push(section);
    }
    let path = report::write(&ctx, &sections, started.elapsed().as_secs_f64())?;
    println!("report: {}", path.display());
    Ok(())
}

/// Runs one figure of [`FIGURES`].
fn run_figure(figure: &str, ctx: &Context<'_>) -> Result<Section, String> {
    match figure {
        "9a" => fig9a::run(ctx),
        "9b" => fig9b::run(ctx),
        "10" => fig10::run(ctx),
        "11" => fig11::run(ctx),
        "table1" => table1::run(ctx),
        "table2" => table2::run(ctx),
        "12" => fig12::run(ctx),
        "15" => fig15::run(ctx),
        "16" => fig16::run(ctx),
        "17" => fig17::run(ctx),
        "18" => fig18::run(ctx),
        "19" => fig19::run(ctx),
        "20" => fig20::run(ctx),
        "22" => fig22::run(ctx),
        other => Err(format!("no figure {other:?} in this preset")),
    }
}

fn context<'a>(cfg: &'a BenchConfig, work: &'a WorkDir) -> Result<Context<'a>, String> {
    let dir = cfg
        .args
        .report
        .clone()
        .ok_or("--preset flatlsm-paper needs --report DIR")?;
    let scale = cfg.args.scale.unwrap_or(1.0);
    if !(scale.is_finite() && scale > 0.0) {
        return Err(format!("--scale {scale}: must be a number > 0"));
    }
    let given = cfg
        .budget
        .ok_or("--preset flatlsm-paper runs at a budget")?;
    // A budget from the flags is taken as it is; the preset's scales with the data.
    let budget = match cfg.args.dram_budget.is_some() {
        true => given,
        false => floored(given.scaled(scale)),
    };
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let disk = probe_disk(work, scale)?;
    Ok(Context {
        cfg,
        work,
        scale,
        budget,
        dir,
        disk,
        runs: RefCell::new(Vec::new()),
    })
}

/// Measures the disk beside the databases ([`disk::PROBE_BYTES`] at this scale, at least
/// 4 MiB) and prints what it found.
fn probe_disk(work: &WorkDir, scale: f64) -> Result<disk::DiskSpeed, String> {
    let bytes = ((disk::PROBE_BYTES as f64 * scale) as u64).max(4 << 20);
    let dir = work.db.parent().unwrap_or(Path::new("."));
    let speed = disk::DiskSpeed::measure(dir, bytes)?;
    println!("disk: {}", speed.describe());
    Ok(speed)
}

fn floored(b: Budget) -> Budget {
    Budget {
        dram: b.dram.max(MIN_BUDGET.dram),
        pm: b.pm.max(MIN_BUDGET.pm),
    }
}

/// The figures of `--figures` (all by default), in report order; an unknown one is refused.
fn chosen(list: Option<&str>) -> Result<Vec<&'static str>, String> {
    let Some(list) = list else {
        return Ok(FIGURES.to_vec());
    };
    let asked: Vec<&str> = list.split(',').map(str::trim).collect();
    if let Some(bad) = asked.iter().find(|f| !FIGURES.contains(f)) {
        return Err(format!(
            "--figures: {bad:?} is not in this preset (it has {}; see docs/bench.md for the \
             paper's figures it leaves out)",
            FIGURES.join(", ")
        ));
    }
    Ok(FIGURES.into_iter().filter(|f| asked.contains(f)).collect())
}

/// The outcome of `bench` on design `engine`, for `figure`'s error message.
pub fn find<'a>(
    outcomes: &'a [Outcome],
    engine: &str,
    bench: &str,
    figure: &str,
) -> Result<&'a Outcome, String> {
    outcomes
        .iter()
        .find(|o| o.engine == engine && o.name == bench)
        .ok_or_else(|| format!("{figure}: no {bench} result of {engine}"))
}

/// `path` relative to the report directory, for links in report.md.
pub fn relative(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir).unwrap_or(path).display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_chosen_in_report_order_and_unknown_ones_refused() {
        assert_eq!(chosen(None).unwrap(), FIGURES);
        assert_eq!(
            chosen(Some("17,15,9b,10,9a")).unwrap(),
            ["9a", "9b", "10", "15", "17"]
        );
        assert_eq!(chosen(Some("20,17,9a")).unwrap(), ["9a", "17", "20"]);
        assert_eq!(chosen(Some("12,table2")).unwrap(), ["table2", "12"]);
        let e = chosen(Some("9a,13")).unwrap_err();
        assert!(e.contains("\"13\"") && e.contains("leaves out"), "{e}");
    }
}
