//! Progress display: an indicatif bar when stderr is a terminal, otherwise a plain line at each
//! tenth of the run (or every 10 s for `--duration` runs) so logs stay readable.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// Progress of one benchmark.
pub struct Progress {
    name: String,
    total: Option<u64>,
    bar: Option<ProgressBar>,
    next_report: u64,
}

/// Seconds between plain lines when the total is unknown.
const PLAIN_PERIOD_SECS: u64 = 10;

impl Progress {
    /// A display for `name`; `total` operations if known.
    pub fn new(name: &str, total: Option<u64>) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = match total {
                Some(t) => ProgressBar::new(t),
                None => ProgressBar::new_spinner(),
            };
            let style = ProgressStyle::with_template(
                "{prefix:>12} [{elapsed_precise}] {wide_bar} {pos}/{len} ops, eta {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            b.set_style(style);
            b.set_prefix(name.to_string());
            // Log lines (e.g. write stalls) suspend the bar instead of breaking it.
            crate::logger::set_active_bar(Some(b.clone()));
            b
        });
        Progress {
            name: name.to_string(),
            total,
            bar,
            next_report: 1,
        }
    }

    /// Shows `done` operations after `elapsed`.
    pub fn update(&mut self, done: u64, elapsed: Duration) {
        if let Some(b) = &self.bar {
            b.set_position(done);
            return;
        }
        let step = match self.total {
            Some(t) if t > 0 => done * 10 / t,
            _ => elapsed.as_secs() / PLAIN_PERIOD_SECS,
        };
        if step >= self.next_report && (self.total.is_none() || step < 10) {
            self.next_report = step + 1;
            let of = self.total.map(|t| format!("/{t}")).unwrap_or_default();
            eprintln!(
                "... {}: {done}{of} ops after {:.1} s",
                self.name,
                elapsed.as_secs_f64()
            );
        }
    }

    /// Removes the bar (the result line follows on stdout).
    pub fn finish(&mut self, done: u64, _elapsed: Duration) {
        if let Some(b) = self.bar.take() {
            crate::logger::set_active_bar(None);
            b.set_position(done);
            b.finish_and_clear();
        }
    }
}
