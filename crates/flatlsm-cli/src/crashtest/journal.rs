//! The expected-state journal: one append-only text file per (child run, thread) that survives
//! SIGKILL of the child.
//!
//! Before calling the database a thread appends `B <op> <sync> <updates...>`; after the call
//! returns `Ok` it appends `A <op>`. Each line goes out in one `write(2)` on an unbuffered file,
//! so the kernel holds it even if the process dies right after; a kill can only leave the last
//! line incomplete, and an incomplete line is ignored (an incomplete `B` means the operation was
//! never issued; an incomplete `A` means it is treated as in flight, which is weaker but true).

use super::workload::Update;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One operation as read back from a journal.
#[derive(Clone, Debug)]
pub struct JournalOp {
    /// Its updates in batch order.
    pub updates: Vec<Update>,
    /// Written with `sync: true`.
    pub sync: bool,
    /// The database call returned `Ok` (acknowledged).
    pub acked: bool,
}

/// Path of the journal of `thread` in child run `run`.
pub fn journal_path(dir: &Path, run: u32, thread: u32) -> PathBuf {
    dir.join(format!("run-{run:06}-thread-{thread:03}.journal"))
}

/// Appends records for one thread.
pub struct JournalWriter {
    file: File,
    line: String,
}

impl JournalWriter {
    /// Creates (truncates) the journal file.
    pub fn create(path: &Path) -> Result<Self, String> {
        let file =
            File::create(path).map_err(|e| format!("creating journal {}: {e}", path.display()))?;
        Ok(JournalWriter {
            file,
            line: String::new(),
        })
    }

    /// Records that operation `op` is about to be issued.
    pub fn begin(&mut self, op: u64, sync: bool, updates: &[Update]) -> Result<(), String> {
        use std::fmt::Write as _;
        self.line.clear();
        let _ = write!(self.line, "B {op} {}", u8::from(sync));
        for u in updates {
            let _ = match u {
                Update::Put { key, len } => write!(self.line, " p{key}:{len}"),
                Update::Delete { key } => write!(self.line, " d{key}"),
            };
        }
        self.line.push('\n');
        self.flush_line()
    }

    /// Records that operation `op` returned `Ok`.
    pub fn ack(&mut self, op: u64) -> Result<(), String> {
        self.line.clear();
        self.line.push_str(&format!("A {op}\n"));
        self.flush_line()
    }

    fn flush_line(&mut self) -> Result<(), String> {
        self.file
            .write_all(self.line.as_bytes())
            .map_err(|e| format!("writing journal: {e}"))
    }
}

/// Reads a journal; a missing file is an empty journal (the child died before creating it).
pub fn read_journal(path: &Path) -> Result<Vec<JournalOp>, String> {
    let text = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("reading journal {}: {e}", path.display())),
    };
    let complete = match text.iter().rposition(|&b| b == b'\n') {
        Some(end) => &text[..=end],
        None => &[][..],
    };
    let text = std::str::from_utf8(complete)
        .map_err(|e| format!("journal {} is not UTF-8: {e}", path.display()))?;
    let mut ops = Vec::new();
    for (n, line) in text.lines().enumerate() {
        parse_line(line, &mut ops)
            .map_err(|e| format!("journal {} line {}: {e}: {line:?}", path.display(), n + 1))?;
    }
    Ok(ops)
}

fn parse_line(line: &str, ops: &mut Vec<JournalOp>) -> Result<(), String> {
    let mut words = line.split(' ');
    let tag = words.next().unwrap_or("");
    let op: u64 = words
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or("missing operation index")?;
    match tag {
        "B" => {
            if op != ops.len() as u64 {
                return Err(format!("operation {op} out of order"));
            }
            let sync = words.next() == Some("1");
            let updates = words.map(parse_update).collect::<Result<_, _>>()?;
            ops.push(JournalOp {
                updates,
                sync,
                acked: false,
            });
        }
        "A" => match ops.get_mut(op as usize) {
            Some(o) => o.acked = true,
            None => return Err(format!("ack of unknown operation {op}")),
        },
        _ => return Err("unknown record".into()),
    }
    Ok(())
}

fn parse_update(w: &str) -> Result<Update, String> {
    let bad = || format!("bad update {w:?}");
    if let Some(rest) = w.strip_prefix('p') {
        let (k, l) = rest.split_once(':').ok_or_else(bad)?;
        Ok(Update::Put {
            key: k.parse().map_err(|_| bad())?,
            len: l.parse().map_err(|_| bad())?,
        })
    } else if let Some(k) = w.strip_prefix('d') {
        Ok(Update::Delete {
            key: k.parse().map_err(|_| bad())?,
        })
    } else {
        Err(bad())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_round_trips_and_ignores_a_torn_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = journal_path(dir.path(), 1, 2);
        let mut w = JournalWriter::create(&path).unwrap();
        let ups = vec![Update::Put { key: 4, len: 30 }, Update::Delete { key: 5 }];
        w.begin(0, true, &ups).unwrap();
        w.ack(0).unwrap();
        w.begin(1, false, &ups[1..]).unwrap();
        drop(w);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"A 1").unwrap();
        let ops = read_journal(&path).unwrap();
        assert_eq!(ops.len(), 2);
        assert!(ops[0].acked && ops[0].sync && !ops[1].acked && !ops[1].sync);
        assert_eq!(ops[0].updates, ups);
    }
}
