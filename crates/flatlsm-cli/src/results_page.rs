//! `flatlsm results-page`: generates the index of measured results (docs/results/README.md).
//!
//! Each dated directory (`YYYY-MM-DD`) under the results directory holds result files (`*.md`)
//! and report directories (a directory with a `report.md`, as `bench --preset flatlsm-paper
//! --report DIR` writes). The page lists every one of them, newest date first and by name
//! within a date: its date, its title (the first heading; a report directory's README.md
//! first, else its report.md), the command it ran and a link. The command is the first line,
//! indented or inside a fenced block, that starts with `flatlsm ` (or a path ending in
//! `/flatlsm`) or a script, joined with its `\` continuations; or a report's `- Command:` line.
//! The page depends on the files alone (sorted, no timestamps), so a test checks that the
//! committed one is current.

use std::fs;
use std::path::{Path, PathBuf};

/// The page's file name inside the results directory.
pub const PAGE_NAME: &str = "README.md";

/// The command that regenerates the page, as the page and a stale check tell it.
pub const REGENERATE: &str = "cargo run -p flatlsm-cli -- results-page";

/// Flags of `flatlsm results-page`.
#[derive(clap::Args, Debug)]
pub struct ResultsPageArgs {
    /// The results directory: dated subdirectories of result files and report directories.
    #[arg(default_value = "docs/results")]
    dir: PathBuf,
    /// Only check that DIR/README.md is current (exit code 1 if not); write nothing.
    #[arg(long)]
    check: bool,
}

/// One listed result: a result file or a report directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The dated directory's name (`YYYY-MM-DD`).
    pub date: String,
    /// The path relative to the results directory, `/`-separated; a directory ends in `/`.
    pub link: String,
    /// The first heading, else the file or directory name.
    pub title: String,
    /// The command the result came from, when the file states one.
    pub command: Option<String>,
}

/// Writes the page into the results directory, or with `--check` compares it with the page
/// there.
pub fn run(args: ResultsPageArgs) -> Result<(), String> {
    let entries = collect(&args.dir)?;
    let page = render(&entries);
    let path = args.dir.join(PAGE_NAME);
    if args.check {
        return check(&path, &page);
    }
    fs::write(&path, page).map_err(|e| format!("{}: {e}", path.display()))?;
    crate::emit(&format!(
        "wrote {} ({} results)",
        path.display(),
        entries.len()
    ));
    Ok(())
}

/// Fails, telling how to regenerate it, unless the page at `path` is `page`.
pub fn check(path: &Path, page: &str) -> Result<(), String> {
    let committed = fs::read_to_string(path).unwrap_or_default();
    if committed == page {
        return Ok(());
    }
    Err(format!(
        "{} is not what the files it lists generate: run `{REGENERATE}` and commit it",
        path.display()
    ))
}

/// Every result under `dir`, newest date first, by name within a date.
pub fn collect(dir: &Path) -> Result<Vec<Entry>, String> {
    let mut dates: Vec<String> = names_in(dir)?
        .into_iter()
        .filter(|n| is_date(n) && dir.join(n).is_dir())
        .collect();
    dates.sort_by(|a, b| b.cmp(a));
    let mut entries = Vec::new();
    for date in dates {
        entries.extend(entries_of_date(&dir.join(&date), &date)?);
    }
    Ok(entries)
}

/// The names in a directory, sorted.
fn names_in(dir: &Path) -> Result<Vec<String>, String> {
    let read = fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut names = Vec::new();
    for item in read {
        let item = item.map_err(|e| format!("{}: {e}", dir.display()))?;
        names.push(item.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}

/// Whether a name is a date: `YYYY-MM-DD`.
pub fn is_date(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        })
}

/// The result files and report directories of one dated directory, by name.
fn entries_of_date(dir: &Path, date: &str) -> Result<Vec<Entry>, String> {
    let mut entries = Vec::new();
    for name in names_in(dir)? {
        let path = dir.join(&name);
        if path.is_dir() && path.join("report.md").is_file() {
            entries.push(report_entry(&path, date, &name)?);
        } else if path.is_file() && name.ends_with(".md") {
            entries.push(file_entry(&path, date, &name)?);
        }
    }
    Ok(entries)
}

/// The entry of a result file.
fn file_entry(path: &Path, date: &str, name: &str) -> Result<Entry, String> {
    let text = read(path)?;
    Ok(Entry {
        date: date.to_string(),
        link: format!("{date}/{name}"),
        title: first_heading(&text).unwrap_or_else(|| name.to_string()),
        command: first_command(&text),
    })
}

/// The entry of a report directory: title and command from its README.md if it has them,
/// else from its report.md.
fn report_entry(dir: &Path, date: &str, name: &str) -> Result<Entry, String> {
    let readme = dir.join("README.md");
    let readme = if readme.is_file() {
        read(&readme)?
    } else {
        String::new()
    };
    let report = read(&dir.join("report.md"))?;
    Ok(Entry {
        date: date.to_string(),
        link: format!("{date}/{name}/"),
        title: first_heading(&readme)
            .or_else(|| first_heading(&report))
            .unwrap_or_else(|| name.to_string()),
        command: first_command(&readme).or_else(|| first_command(&report)),
    })
}

/// A file's text.
fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// A line of markdown with what the generator needs to know about it.
struct Line<'a> {
    /// The line as written.
    text: &'a str,
    /// Inside a fenced code block (the fence lines themselves excluded).
    fenced: bool,
}

/// The lines of a markdown text, each marked fenced or not.
fn lines(text: &str) -> Vec<Line<'_>> {
    let mut fenced = false;
    let mut out = Vec::new();
    for text in text.lines() {
        if text.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        out.push(Line { text, fenced });
    }
    out
}

/// The text of the first heading outside code: `#`s and a space, then the title.
pub fn first_heading(text: &str) -> Option<String> {
    lines(text).iter().filter(|l| !l.fenced).find_map(|l| {
        let rest = l.text.trim_start_matches('#');
        let is_heading = rest.len() < l.text.len() && rest.starts_with(' ');
        is_heading.then(|| rest.trim().to_string())
    })
}

/// The first command the text states: an indented or fenced command line with its `\`
/// continuations joined, or a report's `- Command: `…`` line, whichever comes first.
pub fn first_command(text: &str) -> Option<String> {
    let all = lines(text);
    (0..all.len()).find_map(|i| report_command(all[i].text).or_else(|| code_command(&all, i)))
}

/// The command of a report's `- Command: `…`` line.
fn report_command(line: &str) -> Option<String> {
    let inner = line
        .trim()
        .strip_prefix("- Command: `")?
        .strip_suffix('`')?;
    Some(inner.to_string())
}

/// The command starting at line `i`, if that line is code (indented or fenced) and starts one.
fn code_command(all: &[Line], i: usize) -> Option<String> {
    let line = &all[i];
    let indented = line.text.starts_with("    ") || line.text.starts_with('\t');
    let start = line.text.trim();
    if !(indented || line.fenced) || !is_command(start) {
        return None;
    }
    Some(join_continuations(&all[i..]))
}

/// The command line first in `rest` with the lines its trailing `\` continues to, as one line.
fn join_continuations(rest: &[Line]) -> String {
    let mut parts = Vec::new();
    for line in rest {
        let text = line.text.trim();
        match text.strip_suffix('\\') {
            Some(head) => parts.push(head.trim_end()),
            None => return [parts, vec![text]].concat().join(" "),
        }
    }
    parts.join(" ")
}

/// Whether a line (trimmed) runs flatlsm or a script, after any `NAME=value` assignments.
pub fn is_command(line: &str) -> bool {
    let mut words = line.split_whitespace().skip_while(|w| is_assignment(w));
    let Some(program) = words.next() else {
        return false;
    };
    let script = |w: &str| w.starts_with("scripts/") || w.starts_with("./scripts/");
    program == "flatlsm"
        || program.ends_with("/flatlsm")
        || script(program)
        || (program == "bash" && words.next().is_some_and(script))
}

/// Whether a word is a shell variable assignment (`NAME=value`).
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c == '_')
    })
}

/// The page: a header saying it is generated, then one table row per entry.
pub fn render(entries: &[Entry]) -> String {
    let mut page = String::from(HEADER);
    page.push_str("| date | title | command | link |\n|---|---|---|---|\n");
    for e in entries {
        let command = e.command.as_deref().map(code_span).unwrap_or_default();
        let link = format!("[{}]({})", e.link, e.link);
        let row = [e.date.as_str(), &cell(&e.title), &command, &link].join(" | ");
        page.push_str(&format!("| {row} |\n"));
    }
    page
}

/// The page's opening: its title and the note that it is generated.
const HEADER: &str = "# Measured results

**Generated by `flatlsm results-page` (`cargo run -p flatlsm-cli -- results-page` from the
repository root) from the files it lists: do not edit this page by hand.** A test
(`results_page_is_regenerated_from_the_files_it_lists`) fails while it is out of date.

Each result file, or report directory written by `flatlsm bench --report`, under a dated
directory holds one run or says which runs its tables come from, with the date, the machine and
the command. Ratios hold only within one run; never compare numbers across files. The commands,
what each preset measures and the discussion are in [docs/bench.md](../bench.md). Newest first;
within a date, by name.

";

/// Text made safe for a table cell: `|` escaped, line breaks as spaces.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// A command as inline code in a table cell (double backticks when it holds one).
fn code_span(command: &str) -> String {
    if command.contains('`') {
        return format!("`` {} ``", cell(command));
    }
    format!("`{}`", cell(command))
}

#[cfg(test)]
#[path = "results_page_tests.rs"]
mod tests;
