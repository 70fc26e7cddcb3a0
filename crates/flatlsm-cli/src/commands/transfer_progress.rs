//! The progress bar of `export` and `import` on stderr: pairs and bytes so far, and for an
//! import from a file the share of it read. Nothing is drawn when stderr is not a terminal or
//! with `--quiet`; log lines written meanwhile suspend the bar (`logger::set_active_bar`).

use indicatif::{HumanBytes, ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// A progress display that may be hidden.
pub struct TransferProgress {
    bar: Option<ProgressBar>,
}

impl TransferProgress {
    /// A spinner (`total` unknown) or a bar over `total` input bytes, labelled `verb`.
    pub fn new(verb: &str, quiet: bool, total: Option<u64>) -> TransferProgress {
        let shown = !quiet && std::io::stderr().is_terminal();
        TransferProgress {
            bar: shown.then(|| bar(verb, total)),
        }
    }

    /// Shows `pairs` pairs of `bytes` key and value bytes, `read` bytes of the input read.
    pub fn update(&self, pairs: u64, bytes: u64, read: u64) {
        if let Some(b) = &self.bar {
            b.set_position(read);
            b.set_message(format!("{pairs} pairs, {}", HumanBytes(bytes)));
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            crate::logger::set_active_bar(None);
            b.finish_and_clear();
        }
    }
}

fn bar(verb: &str, total: Option<u64>) -> ProgressBar {
    let (b, template) = match total {
        Some(t) => (
            ProgressBar::new(t),
            "{prefix} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} read, {msg}",
        ),
        None => (
            ProgressBar::new_spinner(),
            "{prefix} [{elapsed_precise}] {spinner} {msg}",
        ),
    };
    let style =
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar());
    b.set_style(style);
    b.set_prefix(verb.to_string());
    b.enable_steady_tick(std::time::Duration::from_millis(200));
    crate::logger::set_active_bar(Some(b.clone()));
    b
}
