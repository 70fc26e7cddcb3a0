//! `--l1_ratios` (preset `l1-ratio`): the benchmarks once per Ordered-L1 / data ratio, FlatLSM
//! alone, then one table of the first benchmark's figures per ratio, as the paper's Fig. 13
//! (random-write throughput against the Ordered-L1's share of the data).
//!
//! Each ratio gets a fresh database (and PM directory); `l1_capacity` is the ratio times the
//! bytes the run writes (`num` × (key + value size)), and `l1_data_ratio` is 1 so that fixed
//! capacity, as in the paper, is L1's target.

use super::config::BenchConfig;
use super::outcome::Outcome;
use super::workdir::WorkDir;

/// Runs every ratio of `cfg.l1_ratios`; returns the outcomes, engines labelled by ratio.
pub fn run(cfg: &BenchConfig, work: &WorkDir) -> Result<Vec<Outcome>, String> {
    let mut all = Vec::new();
    let mut rows = Vec::new();
    for &ratio in &cfg.l1_ratios {
        let one = with_ratio(cfg, ratio);
        println!(
            "== Ordered-L1 / data = {ratio} (l1_capacity {} bytes)",
            one.options.l1_capacity
        );
        let mut outcomes = super::run_flatlsm(&one, work)?;
        super::remove_flatlsm_files(&one, work)?;
        for o in &mut outcomes {
            o.engine = format!("FlatLSM L1={ratio}");
        }
        rows.extend(outcomes.first().map(|o| row(ratio, o)));
        all.extend(outcomes);
    }
    print!("{}", table(&rows));
    Ok(all)
}

/// `cfg` with `l1_capacity` = `ratio` × the bytes written.
fn with_ratio(cfg: &BenchConfig, ratio: f64) -> BenchConfig {
    let data = cfg.num as f64 * (cfg.key_size + cfg.value_size) as f64;
    let mut one = cfg.clone();
    one.options.l1_capacity = ((data * ratio) as u64).max(1);
    one.options.l1_data_ratio = 1.0;
    one
}

/// One table row: ratio, ops/s, WA settled (or at end), stall intervals, P99.9 µs.
fn row(ratio: f64, o: &Outcome) -> String {
    let wa = o
        .settle
        .as_ref()
        .map_or(o.stats.write_amplification(), |s| s.write_amplification);
    format!(
        "{ratio:>14} | {:>12.0} | {:>10.3} | {:>15} | {:>11.1}\n",
        o.ops_per_sec(),
        wa,
        o.interval_stats.stalls,
        o.latency.p999
    )
}

fn table(rows: &[String]) -> String {
    let head = "\n=== Ordered-L1 / data (first benchmark) ===\n";
    let cols = "L1 / data      |        ops/s |         WA | stall intervals | P99.9 (us)\n";
    format!("{head}{cols}{}", rows.concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(args: &[&str]) -> Result<BenchConfig, String> {
        BenchConfig::resolve(crate::bench::flags::parse_for_test(args)?)
    }

    #[test]
    fn each_ratio_sizes_l1_as_that_share_of_the_written_bytes() {
        let cfg = resolve(&[
            "--num",
            "1000",
            "--value_size",
            "84",
            "--l1_ratios",
            "0.5,2",
        ])
        .unwrap();
        assert_eq!(cfg.l1_ratios, vec![0.5, 2.0]);
        assert_eq!(with_ratio(&cfg, 0.5).options.l1_capacity, 50_000);
        assert_eq!(with_ratio(&cfg, 2.0).options.l1_capacity, 200_000);
    }

    #[test]
    fn the_l1_ratio_preset_sweeps_the_papers_ratios() {
        let cfg = resolve(&["--preset", "l1-ratio", "--pm_path", "/dev/shm/x"]).unwrap();
        assert_eq!(cfg.l1_ratios, vec![0.125, 0.25, 0.5, 1.0]);
    }

    #[test]
    fn bad_ratios_and_a_comparison_are_refused() {
        for bad in ["0", "-1", "x", "0.5,", "inf"] {
            let flag = format!("--l1_ratios={bad}");
            let e = resolve(&[&flag]).unwrap_err();
            assert!(e.contains("--l1_ratios"), "{bad}: {e}");
        }
        let e = resolve(&["--l1_ratios", "0.5", "--compare", "rocksdb"]).unwrap_err();
        assert!(e.contains("drop --compare"), "{e}");
    }
}
