//! The crash-test parent: the kill loop and the per-kill verification of every key.

use super::journal::{journal_path, read_journal};
use super::verify::{durable_prefix, match_prefix, KeyState};
use super::workload::{parse_user_key, parse_value, user_key};
use super::{Config, CrashtestArgs};
use flatlsm::{Db, ReadOptions};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Longest wait for a child to open the database.
const OPEN_TIMEOUT: Duration = Duration::from_secs(120);
/// Percentage of kills that hit the child before it reports `ready` (crash during recovery).
const EARLY_KILL_PERCENT: u32 = 10;

/// Totals printed at the end.
#[derive(Default)]
struct Totals {
    kills: u32,
    early_kills: u32,
    ops_verified: u64,
    keys_checked: u64,
    acked_non_sync: u64,
}

/// Runs kills until `--kills` or `--duration` is reached; `Err` on the first mismatch.
pub fn run_parent(cfg: &Config, args: &CrashtestArgs) -> Result<(), String> {
    if cfg.db.exists() {
        return Err(format!(
            "{} exists: crashtest needs a fresh database directory",
            cfg.db.display()
        ));
    }
    std::fs::create_dir_all(&cfg.state_dir)
        .map_err(|e| format!("creating {}: {e}", cfg.state_dir.display()))?;
    let kills = args.kills.unwrap_or(if args.duration.is_some() {
        u32::MAX
    } else {
        20
    });
    let deadline = args
        .duration
        .map(|s| Instant::now() + Duration::from_secs(s));
    println!("crashtest: seed {} db {}", cfg.seed, cfg.db.display());
    let mut rng = StdRng::seed_from_u64(cfg.seed);
    let mut baseline = vec![vec![None; cfg.keys_per_thread as usize]; cfg.threads as usize];
    let mut totals = Totals::default();
    let start = Instant::now();
    for run in 0u32.. {
        if totals.kills >= kills || deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let early = kill_one_child(cfg, args, run, &mut rng)?;
        totals.kills += 1;
        totals.early_kills += u32::from(early);
        verify_run(cfg, run, &mut baseline, &mut totals).map_err(|e| {
            format!(
                "verification after kill {} (run {run}) failed: {e}",
                run + 1
            )
        })?;
        if totals.kills.is_multiple_of(50) {
            println!(
                "crashtest: {} kills survived, {} operations verified, {:.0} s",
                totals.kills,
                totals.ops_verified,
                start.elapsed().as_secs_f64()
            );
        }
    }
    println!(
        "crashtest: {} kills survived ({} during open/recovery), {} operations verified, \
         {} key checks, {} acknowledged non-sync operations verified, 0 acknowledged operations \
         lost, {:.1} s",
        totals.kills,
        totals.early_kills,
        totals.ops_verified,
        totals.keys_checked,
        totals.acked_non_sync,
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Starts child `run`, kills it at a random moment; returns whether it was killed before it
/// finished opening the database.
fn kill_one_child(
    cfg: &Config,
    args: &CrashtestArgs,
    run: u32,
    rng: &mut StdRng,
) -> Result<bool, String> {
    // A journal left by an earlier crashtest in the same state directory must not be mistaken
    // for this run's (a child killed before it creates its journal leaves none).
    for t in 0..cfg.threads {
        let stale = journal_path(&cfg.state_dir, run, t);
        match std::fs::remove_file(&stale) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("removing {}: {e}", stale.display()))
            }
            _ => {}
        }
    }
    let stderr_path = cfg.state_dir.join(format!("run-{run:06}.stderr"));
    let stderr = std::fs::File::create(&stderr_path)
        .map_err(|e| format!("creating {}: {e}", stderr_path.display()))?;
    let mut child = Command::new(std::env::current_exe().map_err(|e| e.to_string())?)
        .args(child_args(cfg, args, run))
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("starting the child: {e}"))?;
    let early = rng.gen_range(0..100) < EARLY_KILL_PERCENT;
    if early {
        std::thread::sleep(Duration::from_millis(rng.gen_range(0..30)));
    } else {
        wait_ready(&mut child)?;
        std::thread::sleep(Duration::from_millis(
            rng.gen_range(1..=args.max_run_ms.max(1)),
        ));
    }
    if let Ok(Some(status)) = child.try_wait() {
        let log = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        return Err(format!(
            "child run {run} exited by itself ({status}): {log}"
        ));
    }
    child
        .kill()
        .map_err(|e| format!("killing the child: {e}"))?;
    let _ = child.wait();
    Ok(early)
}

fn child_args(cfg: &Config, args: &CrashtestArgs, run: u32) -> Vec<std::ffi::OsString> {
    let mut v: Vec<std::ffi::OsString> =
        vec!["crashtest".into(), "--db".into(), cfg.db.clone().into()];
    if let Some(p) = &cfg.pm_path {
        v.extend(["--pm-path".into(), p.clone().into()]);
    }
    let pairs = [
        ("--pm-mode", args.pm_mode.clone()),
        ("--profile", cfg.profile.name().to_string()),
        ("--threads", cfg.threads.to_string()),
        ("--keys-per-thread", cfg.keys_per_thread.to_string()),
        (
            "--value-size",
            format!("{}..{}", cfg.min_value, cfg.max_value),
        ),
        ("--sync-percent", cfg.sync_percent.to_string()),
        ("--pmtable-size", cfg.pmtable_size.to_string()),
        ("--seed", cfg.seed.to_string()),
        ("--child", run.to_string()),
    ];
    for (flag, value) in pairs {
        v.extend([flag.into(), value.into()]);
    }
    if cfg.level0_in_pm {
        v.push("--level0-in-pm".into());
    }
    v.extend(["--state-dir".into(), cfg.state_dir.clone().into()]);
    v
}

/// Waits until the child prints `ready` (it has opened the database).
fn wait_ready(child: &mut Child) -> Result<(), String> {
    let stdout = child.stdout.take().ok_or("child has no stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    match rx.recv_timeout(OPEN_TIMEOUT) {
        Ok(line) if line.trim() == "ready" => Ok(()),
        Ok(_) => Err("child exited before opening the database (see its .stderr file)".into()),
        Err(_) => Err(format!(
            "child did not open the database within {OPEN_TIMEOUT:?}"
        )),
    }
}

/// Reopens the database, checks every key against the journals of `run`, then closes it and
/// makes the recovered state the next baseline.
fn verify_run(
    cfg: &Config,
    run: u32,
    baseline: &mut [Vec<KeyState>],
    totals: &mut Totals,
) -> Result<(), String> {
    let db = Db::open(&cfg.db, cfg.options()?).map_err(|e| format!("reopen: {e}"))?;
    let recovered = read_all_keys(&db, cfg)?;
    check_scan_agrees(&db, cfg, &recovered)?;
    for t in 0..cfg.threads {
        let ops = read_journal(&journal_path(&cfg.state_dir, run, t))?;
        let durable = durable_prefix(&ops);
        let got = &recovered[t as usize];
        let outcome = match_prefix(&baseline[t as usize], got, &ops, run, durable)
            .map_err(|e| format!("thread {t}: {e}"))?;
        totals.ops_verified += outcome.prefix as u64;
        totals.acked_non_sync += outcome.acked_non_sync as u64;
    }
    totals.keys_checked += u64::from(cfg.threads) * u64::from(cfg.keys_per_thread);
    db.close()
        .map_err(|e| format!("close after verification: {e}"))?;
    baseline.clone_from_slice(&recovered);
    Ok(())
}

/// `get` of every key; a value that is not exactly what some operation wrote is an error.
fn read_all_keys(db: &Db, cfg: &Config) -> Result<Vec<Vec<KeyState>>, String> {
    let ro = ReadOptions {
        verify_checksums: true,
        ..ReadOptions::default()
    };
    let mut all = Vec::with_capacity(cfg.threads as usize);
    for t in 0..cfg.threads {
        let mut keys = Vec::with_capacity(cfg.keys_per_thread as usize);
        for k in 0..cfg.keys_per_thread {
            let v = db
                .get_opt(user_key(t, k), &ro)
                .map_err(|e| format!("get thread {t} key {k}: {e}"))?;
            keys.push(match v {
                None => None,
                Some(v) => Some((
                    parse_value(&v, t, k).ok_or_else(|| {
                        format!(
                            "thread {t} key {k}: wrong data ({} bytes not written by any operation)",
                            v.len()
                        )
                    })?,
                    v.len(),
                )),
            });
        }
        all.push(keys);
    }
    Ok(all)
}

/// A full scan must return exactly the keys `get` found, with the same values, in order.
fn check_scan_agrees(db: &Db, cfg: &Config, recovered: &[Vec<KeyState>]) -> Result<(), String> {
    let mut it = db.iter().map_err(|e| e.to_string())?;
    let mut seen = 0usize;
    let mut last: Option<Vec<u8>> = None;
    while it.valid() {
        let (t, k) = parse_user_key(it.key())
            .filter(|&(t, k)| t < cfg.threads && k < cfg.keys_per_thread)
            .ok_or_else(|| {
                format!(
                    "scan returned unknown key {:?}",
                    String::from_utf8_lossy(it.key())
                )
            })?;
        if last.as_deref().is_some_and(|l| l >= it.key()) {
            return Err(format!("scan out of order at thread {t} key {k}"));
        }
        let v = parse_value(it.value(), t, k).map(|v| (v, it.value().len()));
        if v.is_none() || v != recovered[t as usize][k as usize] {
            return Err(format!(
                "scan and get disagree on thread {t} key {k}: scan {v:?}, get {:?}",
                recovered[t as usize][k as usize]
            ));
        }
        seen += 1;
        last = Some(it.key().to_vec());
        it.advance();
    }
    it.status().map_err(|e| format!("scan: {e}"))?;
    let present = recovered.iter().flatten().filter(|v| v.is_some()).count();
    if seen != present {
        return Err(format!("scan returned {seen} keys, get found {present}"));
    }
    Ok(())
}
