//! Builds the seed corpus of the fuzz targets in `fuzz/` from real databases.
//!
//! `cargo run -p flatlsm --example make_fuzz_corpus [-- OUT_DIR]` (default `fuzz/corpus`) creates
//! a database with data in PM Logs, L1 and L2 SSTables, the manifest and value logs, then copies
//! each file (or the piece a target decodes) into `OUT_DIR/<target>/`; then small databases of
//! the other profiles give the seeds of the other targets (`profiles.rs`).

mod profiles;
mod shrink;

use flatlsm::{Db, Options, PmModeOption, WriteBatch, WriteOptions};
use flatlsm_core::sst::{decode_footer, Block, BlockHandle, FOOTER_LEN};
use std::error::Error;
use std::path::{Path, PathBuf};

type Res<T> = Result<T, Box<dyn Error>>;

fn main() -> Res<()> {
    let out = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "fuzz/corpus".into()),
    );
    let tmp = tempfile::tempdir()?;
    let db = tmp.path().join("db");
    build_database(&db)?;
    let mut written = 0;
    for entry in std::fs::read_dir(&db)?.chain(std::fs::read_dir(db.join("pm"))?) {
        let path = entry?.path();
        if !path.is_file() {
            continue;
        }
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let bytes = std::fs::read(&path)?;
        for (target, piece) in pieces(&name, &bytes)? {
            let dir = out.join(target);
            std::fs::create_dir_all(&dir)?;
            std::fs::write(dir.join(format!("{name}-{}", piece.len())), piece)?;
            written += 1;
        }
    }
    written += profiles::write_seeds(&out, tmp.path())?;
    println!("wrote {written} corpus files under {}", out.display());
    Ok(())
}

/// A database with every file kind: L2 (compact_range), L1 (flush), unflushed PM Logs, value logs.
fn build_database(path: &Path) -> Res<()> {
    let opts = {
        let mut o = Options::default();
        o.pm_path = Some(path.join("pm"));
        o.pm_mode = PmModeOption::Msync;
        o.pmtable_size = 64 << 10;
        o.flush_immutable_num = 1;
        o.max_write_buffer_number = 3;
        o.target_file_size = 8 << 10;
        o.block_size = 1024;
        o
    };
    let db = Db::open(path, opts)?;
    let w = WriteOptions::default();
    let value = |i: usize| vec![b'a' + (i % 26) as u8; if i.is_multiple_of(3) { 700 } else { 40 }];
    for i in 0..300 {
        db.put_opt(format!("key{i:05}").as_bytes(), value(i), &w)?;
    }
    db.compact_range(None, None)?;
    for i in (0..300).step_by(5) {
        let mut b = WriteBatch::new();
        b.put(format!("key{i:05}"), value(i + 1))
            .delete(format!("key{:05}", i + 1));
        db.write_opt(&b, &w)?;
    }
    db.flush()?;
    for i in 300..340 {
        db.put_opt(format!("key{i:05}").as_bytes(), value(i), &w)?;
    }
    db.close()?;
    Ok(())
}

/// The corpus entries one file yields: (target, bytes).
fn pieces(name: &str, bytes: &[u8]) -> Res<Vec<(&'static str, Vec<u8>)>> {
    let mut v = Vec::new();
    if name.ends_with(".pmlog") {
        let used = u64::from_le_bytes(bytes[16..24].try_into()?) as usize;
        v.push(("pm_log", bytes[..used.min(bytes.len())].to_vec()));
    } else if name.ends_with(".vlog") {
        v.push(("vlog", bytes[..bytes.len().min(64 << 10)].to_vec()));
    } else if name.ends_with(".vredir") {
        v.push(("vlog_redirect", bytes.to_vec()));
    } else if name.ends_with(".sst") {
        sst_pieces(name, bytes, &mut v)?;
    } else if name.starts_with("MANIFEST-") {
        v.push(("manifest", bytes.to_vec()));
        let mut pos = 0;
        while pos + 8 <= bytes.len() {
            let len = u32::from_le_bytes(bytes[pos + 4..pos + 8].try_into()?) as usize;
            let end = (pos + 8 + len).min(bytes.len());
            v.push(("version_edit", bytes[pos + 8..end].to_vec()));
            pos = end;
        }
    }
    Ok(v)
}

/// Whole table, footer (prefixed by its offset), index, filter and data blocks.
fn sst_pieces(name: &str, bytes: &[u8], v: &mut Vec<(&'static str, Vec<u8>)>) -> Res<()> {
    let path = Path::new(name);
    let footer_at = bytes.len() - FOOTER_LEN;
    let footer = decode_footer(&bytes[footer_at..], path, footer_at as u64)?;
    v.push(("sst_table", bytes.to_vec()));
    let mut f = (footer_at as u64).to_le_bytes().to_vec();
    f.extend_from_slice(&bytes[footer_at..]);
    v.push(("sst_footer", f));
    let contents = |h: BlockHandle| bytes[h.offset as usize..(h.offset + h.size) as usize].to_vec();
    let index = contents(footer.index);
    if footer.has_filter() {
        v.push(("sst_bloom", contents(footer.filter)));
    }
    let block = Block::decode(index.clone(), path, footer.index.offset)?;
    for i in 0..block.len().min(3) {
        // Only blocks stored raw (the trailer's type byte 0): a compressed block's bytes are
        // not a block the `sst_block` decoder takes.
        let raw = |h: &BlockHandle| bytes.get((h.offset + h.size) as usize) == Some(&0);
        if let Some(h) = BlockHandle::decode_varint(block.value(i)).filter(raw) {
            v.push(("sst_block", contents(h)));
        }
    }
    v.push(("sst_block", index));
    Ok(())
}
