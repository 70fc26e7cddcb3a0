//! The `flatlsm` command-line tool: a db_bench-style benchmark and basic operations on a
//! database directory.

mod bench;
mod crashtest;

use clap::{Parser, Subcommand};
use flatlsm::{Db, Options, PmModeOption, ReadOptions, WriteOptions};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "flatlsm", version, about = "FlatLSM key-value store tool")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Where the database lives.
#[derive(clap::Args, Clone)]
struct DbArgs {
    /// Database directory.
    #[arg(long)]
    db: PathBuf,
    /// PM directory (default: <db>/pm).
    #[arg(long = "pm-path", alias = "pm_path")]
    pm_path: Option<PathBuf>,
    /// PM mode: auto, msync or emulated (DRAM; lost at reboot).
    #[arg(long = "pm-mode", alias = "pm_mode", default_value = "auto")]
    pm_mode: String,
}

impl DbArgs {
    fn options(&self) -> Result<Options, String> {
        Ok(Options {
            pm_path: self.pm_path.clone(),
            pm_mode: parse_pm_mode(&self.pm_mode)?,
            ..Options::default()
        })
    }
}

pub(crate) fn parse_pm_mode(s: &str) -> Result<PmModeOption, String> {
    match s {
        "auto" => Ok(PmModeOption::Auto),
        "msync" => Ok(PmModeOption::Msync),
        "emulated" => Ok(PmModeOption::Emulated),
        _ => Err(format!(
            "unknown PM mode {s:?}: expected auto, msync or emulated"
        )),
    }
}

#[derive(Subcommand)]
enum Command {
    /// Runs db_bench-style benchmarks (fillrandom, fillseq, readrandom, ...).
    Bench(bench::BenchArgs),
    /// Kills a writer process at random moments and verifies the database after each kill.
    Crashtest(crashtest::CrashtestArgs),
    /// Sets a key.
    Put {
        #[command(flatten)]
        db: DbArgs,
        key: String,
        value: String,
    },
    /// Prints a key's value.
    Get {
        #[command(flatten)]
        db: DbArgs,
        key: String,
    },
    /// Prints sizes, bytes written, write amplification and stalls.
    Stats {
        #[command(flatten)]
        db: DbArgs,
    },
}

fn run(cli: Cli) -> Result<(), String> {
    let open = |a: &DbArgs| -> Result<Db, String> {
        Db::open(&a.db, a.options()?).map_err(|e| e.to_string())
    };
    match cli.command {
        Command::Bench(args) => bench::run(args),
        Command::Crashtest(args) => crashtest::run(args),
        Command::Put { db, key, value } => open(&db)?
            .put(
                &WriteOptions { sync: true },
                key.as_bytes(),
                value.as_bytes(),
            )
            .map_err(|e| e.to_string()),
        Command::Get { db, key } => match open(&db)?
            .get(&ReadOptions::default(), key.as_bytes())
            .map_err(|e| e.to_string())?
        {
            Some(v) => {
                println!("{}", String::from_utf8_lossy(&v));
                Ok(())
            }
            None => Err(format!("key {key:?} not found")),
        },
        Command::Stats { db } => {
            println!("{}", open(&db)?.stats());
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("flatlsm: {e}");
            ExitCode::FAILURE
        }
    }
}
