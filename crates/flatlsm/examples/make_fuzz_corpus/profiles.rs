//! Seeds of the targets of the other profiles' files: write-ahead logs (`leveled`, `matrixkv`),
//! PM skiplists (`novelsm`, `slmdb`), the B+-tree (`slmdb`), the matrix container and its rows
//! (`matrixkv`), and from every profile its OPTIONS file, IDENTITY and an export of its pairs.
//! Each database is kept small (small regions, few keys) and each PM region is cut to the part
//! its decoder reads (`shrink.rs`), so seeds stay a few KiB (a B+-tree or a container holds at
//! least a few 4 KiB nodes or pages).

use super::{shrink, Res};
use flatlsm::fuzz_api::decode;
use flatlsm::kv_lines::LineFormat;
use flatlsm::{Db, Options, PmModeOption, Profile};
use std::path::Path;

/// Lines of one export seed.
const EXPORT_LINES: usize = 32;

const PROFILES: [(Profile, &str); 4] = [
    (Profile::Leveled, "leveled"),
    (Profile::NoveLsm, "novelsm"),
    (Profile::MatrixKv, "matrixkv"),
    (Profile::SlmDb, "slmdb"),
];

/// Builds one small database per profile under `tmp` and writes its seeds under `out`; the
/// number of seed files written.
pub fn write_seeds(out: &Path, tmp: &Path) -> Res<usize> {
    let mut seeds = Seeds { out, written: 0 };
    for (profile, name) in PROFILES {
        let dir = tmp.join(name);
        let db = Db::open(&dir, options(profile, &dir))?;
        write_rounds(&db)?;
        // The write buffer's log or skiplist, as a crash would leave it (close may flush it).
        seeds.buffers(name, &dir)?;
        db.close()?;
        seeds.regions(name, &dir)?;
        seeds.text_files(name, &dir)?;
        if profile == Profile::Leveled {
            // Every profile holds the same pairs: one export is enough.
            seeds.exports(name, &Db::open_read_only(&dir, options(profile, &dir))?)?;
        }
    }
    Ok(seeds.written)
}

/// Small regions and files, PM persisted with msync (ordinary files).
fn options(profile: Profile, dir: &Path) -> Options {
    let mut o = Options::default();
    o.profile = profile;
    o.pm_path = Some(dir.join("pm"));
    o.pm_mode = PmModeOption::Msync;
    o.pmtable_size = 64 << 10;
    o.target_file_size = 8 << 10;
    o.block_size = 1024;
    o.slmdb.btree_size = 5 * 4096;
    o.matrixkv.container_size = 64 * 4096;
    o.matrixkv.page_size = 4096;
    o
}

/// Three rounds of pairs; the first two flushed, the third left in the write buffer.
fn write_rounds(db: &Db) -> Res<()> {
    for round in 0..3 {
        for (k, v) in pairs(round) {
            db.put(k, v)?;
        }
        if round < 2 {
            db.flush()?;
        }
    }
    Ok(())
}

/// Round `round`'s pairs: ASCII keys, every eighth longer than a B+-tree slot holds inline,
/// every fourth value long, and in the first round an empty key and bytes an export must
/// escape.
fn pairs(round: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut v: Vec<(Vec<u8>, Vec<u8>)> = (0..40)
        .map(|i| {
            let n = round * 40 + i;
            let key = match n % 8 {
                0 => format!("long-key-{n:04}-{}", "x".repeat(30)),
                _ => format!("key{n:04}"),
            };
            // Every fourth value is long enough that a MatrixKV row spans two pages.
            let pad = if n.is_multiple_of(4) { 200 } else { 0 };
            let value = format!("value-{round}-{i}-{}", "v".repeat(pad));
            (key.into_bytes(), value.into_bytes())
        })
        .collect();
    if round == 0 {
        v.push((b"tab\tkey".to_vec(), b"line\nfeed\r".to_vec()));
        v.push(("clé".as_bytes().to_vec(), b"\x00\xff\\".to_vec()));
        v.push((Vec::new(), b"empty key".to_vec()));
    }
    v
}

/// Where seeds go.
struct Seeds<'a> {
    out: &'a Path,
    written: usize,
}

impl Seeds<'_> {
    /// Writes seed `name` of `target` once its decoder accepts it.
    fn add(&mut self, target: &str, name: &str, bytes: &[u8]) -> Res<()> {
        decode(target, bytes).map_err(|e| format!("{target} seed {name}: {e}"))?;
        let dir = self.out.join(target);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(format!("{name}-{}", bytes.len())), bytes)?;
        self.written += 1;
        Ok(())
    }

    /// The write-ahead logs (`leveled` in the database directory, `matrixkv` in `pm/wal`) and
    /// PM skiplists (`novelsm`, `slmdb`) of an open database, each cut to its used part.
    fn buffers(&mut self, profile: &str, dir: &Path) -> Res<()> {
        for wal_dir in [dir.to_path_buf(), dir.join("pm").join("wal")] {
            for (name, bytes) in files(&wal_dir, |n| n.ends_with(".log"))? {
                let cut = shrink::wal(&bytes);
                self.add("wal", &format!("{profile}-{name}"), &cut)?;
            }
        }
        for (name, bytes) in files(&dir.join("pm"), |n| n.ends_with(".pmskl"))? {
            let cut = shrink::skiplist(&bytes)?;
            self.add("pm_skiplist", &format!("{profile}-{name}"), &cut)?;
        }
        Ok(())
    }

    /// The B+-tree (`slmdb`), the matrix container and each of its rows (`matrixkv`).
    fn regions(&mut self, profile: &str, dir: &Path) -> Res<()> {
        let pm = dir.join("pm");
        for (name, bytes) in files(&pm, |n| n == "index.pmbt")? {
            self.add("pm_btree", &format!("{profile}-{name}"), &bytes)?;
        }
        for (name, bytes) in files(&pm, |n| n == "matrix.pmc")? {
            let (container, rows) = shrink::container(&bytes)?;
            self.add("matrix_container", &format!("{profile}-{name}"), &container)?;
            for (number, row) in rows {
                self.add("rowtable", &format!("{profile}-row{number}"), &row)?;
            }
        }
        Ok(())
    }

    /// The OPTIONS files and the IDENTITY (also in the first format, without a checksum).
    fn text_files(&mut self, profile: &str, dir: &Path) -> Res<()> {
        for (name, bytes) in files(dir, |n| n.starts_with("OPTIONS-"))? {
            self.add("options_file", &format!("{profile}-{name}"), &bytes)?;
        }
        // Only a database whose write buffers live in PM has one.
        let Ok(identity) = std::fs::read(dir.join("IDENTITY")) else {
            return Ok(());
        };
        self.add("identity", &format!("{profile}-IDENTITY"), &identity)?;
        let text = String::from_utf8(identity)?;
        let lines: Vec<&str> = text.lines().collect();
        let id = lines[0].trim_start_matches("flatlsm-id2 ");
        let first_format = format!("flatlsm-id {id}\n{}\n", lines[1]);
        self.add(
            "identity",
            &format!("{profile}-IDENTITY-v1"),
            first_format.as_bytes(),
        )
    }

    /// Every pair of `db` as `flatlsm export` writes it, in text and in hex, in seeds of
    /// [`EXPORT_LINES`] lines.
    fn exports(&mut self, profile: &str, db: &Db) -> Res<()> {
        let pairs = db.iter()?.collect::<flatlsm::Result<Vec<_>>>()?;
        db.close()?;
        for (format, name) in [(LineFormat::Text, "text"), (LineFormat::Hex, "hex")] {
            for (i, chunk) in pairs.chunks(EXPORT_LINES).enumerate() {
                let mut lines = Vec::new();
                for (k, v) in chunk {
                    format.write_pair(k, v, &mut lines);
                }
                self.add("export_format", &format!("{profile}-{name}{i}"), &lines)?;
            }
        }
        Ok(())
    }
}

/// The files of `dir` whose names `wanted` picks, sorted by name, with their bytes (none if
/// `dir` does not exist).
fn files(dir: &Path, wanted: impl Fn(&str) -> bool) -> Res<Vec<(String, Vec<u8>)>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for entry in entries {
        let path = entry?.path();
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if path.is_file() && wanted(&name) {
            out.push((name, std::fs::read(&path)?));
        }
    }
    out.sort();
    Ok(out)
}
