//! `flatlsm crashtest`: a black-box crash test (child process killed with SIGKILL, parent
//! reopens and verifies). Being built under issue 3; this module is its entry point.

/// Flags of `flatlsm crashtest`.
#[derive(clap::Args)]
pub struct CrashtestArgs {
    /// Number of kills.
    #[arg(long, default_value_t = 20)]
    kills: u32,
}

/// Runs the crash test.
pub fn run(args: CrashtestArgs) -> Result<(), String> {
    Err(format!(
        "crashtest ({} kills) is not built yet (issue 3)",
        args.kills
    ))
}
