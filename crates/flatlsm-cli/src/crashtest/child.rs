//! The crash-test child: opens the database, prints `ready`, then writes from several threads
//! until the parent kills it, journaling every operation before and after it is issued.

use super::journal::{journal_path, JournalWriter};
use super::workload::{make_value, random_op, user_key, Update, Version};
use super::Config;
use flatlsm::{Db, WriteBatch, WriteOptions};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A child that the parent failed to kill (e.g. the parent died) exits after this long.
const CHILD_LIFETIME: Duration = Duration::from_secs(300);

/// Runs child run `run` until killed (or [`CHILD_LIFETIME`] passes).
pub fn run_child(cfg: &Config, run: u32) -> Result<(), String> {
    let db = Db::open(&cfg.db, cfg.options()?).map_err(|e| format!("child open: {e}"))?;
    let db = Arc::new(db);
    println!("ready");
    let _ = std::io::stdout().flush();
    let start = Instant::now();
    let handles: Vec<_> = (0..cfg.threads)
        .map(|t| {
            let db = db.clone();
            let cfg = cfg.clone();
            std::thread::spawn(move || write_loop(&db, &cfg, run, t, start))
        })
        .collect();
    for h in handles {
        h.join()
            .map_err(|_| "child writer thread panicked".to_string())??;
    }
    Ok(())
}

fn write_loop(db: &Db, cfg: &Config, run: u32, thread: u32, start: Instant) -> Result<(), String> {
    let seed = cfg.seed ^ (u64::from(run) << 32) ^ u64::from(thread).wrapping_mul(0x9e37_79b9);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut journal = JournalWriter::create(&journal_path(&cfg.state_dir, run, thread))?;
    let shape = cfg.shape();
    for op in 0u64.. {
        if start.elapsed() > CHILD_LIFETIME {
            break;
        }
        let (updates, sync) = random_op(&mut rng, &shape);
        let batch = build_batch(&updates, Version { run, op }, thread);
        journal.begin(op, sync, &updates)?;
        db.write_opt(
            &batch,
            &WriteOptions {
                sync,
                ..WriteOptions::default()
            },
        )
        .map_err(|e| format!("thread {thread} operation {op}: {e}"))?;
        journal.ack(op)?;
    }
    Ok(())
}

fn build_batch(updates: &[Update], version: Version, thread: u32) -> WriteBatch {
    let mut b = WriteBatch::new();
    for u in updates {
        match *u {
            Update::Put { key, len } => {
                b.put(user_key(thread, key), make_value(version, thread, key, len));
            }
            Update::Delete { key } => {
                b.delete(user_key(thread, key));
            }
        }
    }
    b
}
