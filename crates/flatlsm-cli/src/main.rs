//! The `flatlsm` command-line tool: operate, inspect and benchmark FlatLSM databases.
//!
//! Every command that takes `--db` refuses a missing directory (unless `put` or `import` with
//! `--create-if-missing`), a directory that is not a FlatLSM database, a database locked by
//! another process and a PM directory that is not the database's, each with a one-line message
//! and exit code 1, and without modifying anything.

mod bench;
mod commands;
mod crashtest;
mod db_args;
mod logger;
mod results_page;

use clap::{Parser, Subcommand};
use commands::{
    approxsize, backup, check, dump, export, import, keys, maintenance, scan, serve, stats,
};
use flatlsm::PmModeOption;
use std::process::ExitCode;

/// The process's allocator (with the crate's `override`, C and C++ code's too): glibc's malloc
/// was 7% of the server's CPU in pipelined GETs, and mimalloc read 9% more keys per second in
/// the batched point-read benchmark.
/// Built without transparent huge pages (docs/design-decisions.md, "The read path per key").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "flatlsm",
    version,
    about = "FlatLSM key-value store: operate, inspect and benchmark a database",
    after_help = "Example: flatlsm put --db /tmp/mydb --create-if-missing hello world"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
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
    /// Sets a key (synced before returning).
    Put(keys::PutArgs),
    /// Prints a key's value (exit code 1 if it is missing).
    Get(keys::KeyArgs),
    /// Deletes a key (synced before returning).
    Delete(keys::KeyArgs),
    /// Deletes every key in [START, END) with one range tombstone (synced before returning).
    #[command(alias = "deleterange")]
    DeleteRange(keys::RangeArgs),
    /// Prints keys and values in order: a range, a prefix, a limit.
    Scan(scan::ScanArgs),
    /// Writes every key-value pair of a range as lines (text or hex) to stdout or a file.
    Export(export::ExportArgs),
    /// Reads key-value pairs as `export` writes them and puts them in write batches.
    Import(import::ImportArgs),
    /// Prints about how many bytes a key range takes in table files and value logs.
    #[command(alias = "approximate-size")]
    Approxsize(approxsize::ApproxSizeArgs),
    /// Prints PMTables, levels, value logs and their garbage, write amplification, PM mode.
    Stats(stats::StatsArgs),
    /// Verifies every checksum in PM Logs, SSTs, manifest and value logs (exit 1 on damage).
    Check(check::CheckArgs),
    /// Prints one SST, PM Log, manifest or value-log file record by record.
    Dump(dump::DumpArgs),
    /// Flushes, then compacts a key range (default: everything) into L2.
    Compact(maintenance::CompactArgs),
    /// Flushes every PMTable to the Ordered-L1.
    Flush(maintenance::FlushArgs),
    /// Makes an openable copy of the database in a new directory (hard links where possible).
    Checkpoint(backup::CheckpointArgs),
    /// Copies the database into the next numbered backup of a backup directory.
    Backup(backup::BackupArgs),
    /// Copies a backup (default: the newest) to a new database directory.
    Restore(backup::RestoreArgs),
    /// Rebuilds a lost or damaged manifest from the files present (exit 1 if any was lost).
    Repair(commands::repair::RepairArgs),
    /// Runs db_bench-style benchmarks (fillrandom, fillseq, readrandom, ...).
    Bench(bench::BenchArgs),
    /// Serves the database over the Redis protocol (RESP2/RESP3) until SHUTDOWN or SIGTERM.
    Serve(serve::ServeArgs),
    /// Kills a writer process at random moments and verifies the database after each kill.
    Crashtest(crashtest::CrashtestArgs),
    /// Writes docs/results/README.md, the generated index of measured results (--check: compare).
    ResultsPage(results_page::ResultsPageArgs),
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Put(a) => keys::put(a),
        Command::Get(a) => keys::get(a),
        Command::Delete(a) => keys::delete(a),
        Command::DeleteRange(a) => keys::delete_range(a),
        Command::Scan(a) => scan::scan(a),
        Command::Export(a) => export::export(a),
        Command::Import(a) => import::import(a),
        Command::Approxsize(a) => approxsize::approxsize(a),
        Command::Stats(a) => stats::stats(a),
        Command::Check(a) => check::check(a),
        Command::Dump(a) => dump::dump(a),
        Command::Compact(a) => maintenance::compact(a),
        Command::Flush(a) => maintenance::flush(a),
        Command::Checkpoint(a) => backup::checkpoint(a),
        Command::Backup(a) => backup::backup(a),
        Command::Restore(a) => backup::restore(a),
        Command::Repair(a) => commands::repair::repair(a),
        Command::Bench(args) => bench::run(args),
        Command::Crashtest(args) => crashtest::run(args),
        Command::Serve(a) => serve::serve(a),
        Command::ResultsPage(a) => results_page::run(a),
    }
}

/// Prints a line to stdout; a closed pipe (e.g. `| head`) is not an error.
pub(crate) fn emit(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    logger::install(logger::default_level(matches!(
        cli.command,
        Command::Bench(_) | Command::Serve(_)
    )));
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("flatlsm: {e}");
            ExitCode::FAILURE
        }
    }
}
