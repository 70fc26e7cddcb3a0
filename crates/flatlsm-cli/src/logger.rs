//! A small stderr logger for the `log` facade, so that the engine's messages (write stalls and
//! slowdowns, recovery notes, background errors) reach the user.
//!
//! `RUST_LOG` sets the levels in env_logger's basic syntax: comma-separated directives, each a
//! level (`debug`: every target), a target prefix (`flatlsm::db`: all its levels) or both
//! (`flatlsm::db::stall=info`); the longest matching target prefix wins. Without `RUST_LOG` the
//! command's default applies (`flatlsm bench`: info, other commands: warn). Lines read
//! `[  12.345s WARN  flatlsm::db::stall] message`, the time counted from the logger's start so
//! a line can be placed on a benchmark's timeline.
//!
//! A line written while a progress bar is on screen suspends the bar (see [`set_active_bar`]),
//! so the bar is redrawn below the line instead of being overwritten.

use log::{LevelFilter, Log, Metadata, Record};
use std::str::FromStr;
use std::sync::Mutex;
use std::time::Instant;

/// One `RUST_LOG` directive: a target prefix (`None`: every target) and its level.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Directive {
    target: Option<String>,
    level: LevelFilter,
}

/// The stderr logger.
struct StderrLogger {
    /// Directives, longest target first, the global one (if any) last.
    directives: Vec<Directive>,
    start: Instant,
}

/// The progress bar on screen, if any.
static ACTIVE_BAR: Mutex<Option<indicatif::ProgressBar>> = Mutex::new(None);

/// Registers the progress bar now drawn on stderr (`None` once it is gone).
pub fn set_active_bar(bar: Option<indicatif::ProgressBar>) {
    *ACTIVE_BAR.lock().unwrap_or_else(|e| e.into_inner()) = bar;
}

/// Installs the logger with `RUST_LOG`'s directives, or `default` for every target when it is
/// unset or empty. A second call does nothing.
pub fn install(default: LevelFilter) {
    let spec = std::env::var("RUST_LOG").unwrap_or_default();
    let directives = match parse_spec(&spec) {
        d if d.is_empty() => vec![Directive {
            target: None,
            level: default,
        }],
        d => d,
    };
    let max = directives.iter().map(|d| d.level).max();
    let logger = StderrLogger {
        directives,
        start: Instant::now(),
    };
    if log::set_boxed_logger(Box::new(logger)).is_ok() {
        log::set_max_level(max.unwrap_or(LevelFilter::Off));
    }
}

/// Parses `RUST_LOG`; directives it cannot read are skipped (as env_logger does).
fn parse_spec(spec: &str) -> Vec<Directive> {
    let mut out: Vec<Directive> = spec
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .filter_map(parse_directive)
        .collect();
    // Longest target first; the global directive (no target) last.
    out.sort_by_key(|d| std::cmp::Reverse(d.target.as_ref().map_or(0, |t| t.len() + 1)));
    out
}

fn parse_directive(part: &str) -> Option<Directive> {
    match part.split_once('=') {
        Some((target, level)) => Some(Directive {
            target: Some(target.trim().to_string()),
            level: LevelFilter::from_str(level.trim()).ok()?,
        }),
        None => Some(match LevelFilter::from_str(part) {
            Ok(level) => Directive {
                target: None,
                level,
            },
            Err(_) => Directive {
                target: Some(part.to_string()),
                level: LevelFilter::Trace,
            },
        }),
    }
}

impl StderrLogger {
    /// The level of the first (longest) directive matching `target`.
    fn level_for(&self, target: &str) -> LevelFilter {
        self.directives
            .iter()
            .find(|d| d.target.as_deref().is_none_or(|t| target.starts_with(t)))
            .map_or(LevelFilter::Off, |d| d.level)
    }

    fn line(&self, r: &Record<'_>) -> String {
        format!(
            "[{:>9.3}s {:<5} {}] {}",
            self.start.elapsed().as_secs_f64(),
            r.level(),
            r.target(),
            r.args()
        )
    }
}

impl Log for StderrLogger {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        m.level() <= self.level_for(m.target())
    }

    fn log(&self, r: &Record<'_>) {
        if !self.enabled(r.metadata()) {
            return;
        }
        let line = self.line(r);
        let bar = ACTIVE_BAR.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match bar {
            Some(b) => b.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    fn flush(&self) {}
}

/// The default level of a command: the bench shows info (stall and slowdown lines), the
/// others only warnings and errors.
pub fn default_level(is_bench: bool) -> LevelFilter {
    if is_bench {
        LevelFilter::Info
    } else {
        LevelFilter::Warn
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use log::Level;

    /// True if a record at `level` from `target` would be printed under `spec`.
    fn would_print(spec: &str, target: &str, level: Level) -> bool {
        let logger = StderrLogger {
            directives: parse_spec(spec),
            start: Instant::now(),
        };
        level <= logger.level_for(target)
    }

    #[test]
    fn rust_log_levels_and_targets_follow_env_logger() {
        assert!(would_print("info", "flatlsm::db::stall", Level::Info));
        assert!(!would_print("warn", "flatlsm::db::stall", Level::Info));
        let spec = "warn,flatlsm::db=debug,flatlsm::db::stall=error";
        assert!(would_print(spec, "flatlsm::db::open", Level::Debug));
        assert!(!would_print(spec, "flatlsm::db::stall", Level::Warn));
        assert!(!would_print(spec, "flatlsm::pm", Level::Info));
        assert!(would_print("flatlsm", "flatlsm::pm", Level::Trace));
        assert!(!would_print("flatlsm", "other", Level::Error));
        assert!(!would_print("off", "flatlsm", Level::Error));
    }

    #[test]
    fn unreadable_directives_are_skipped() {
        assert_eq!(parse_spec(" , x=loud"), Vec::new());
        assert_eq!(
            parse_spec("debug"),
            vec![Directive {
                target: None,
                level: LevelFilter::Debug
            }]
        );
    }
}
