//! The first nine targets: the PM Log, SSTable parts, the manifest and its records, value logs
//! and their redirect tables (checked as given; no [`super::reseal`]).

use super::{path, MemFile};
use crate::designs::version_extension;
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use crate::iter::InternalIterator;
use crate::pmtable::log::{decode_header, for_each_entry_in};
use crate::sst::{decode_footer, Block, BloomFilter, Table, FOOTER_LEN};
use crate::types::ValuePointer;
use crate::version::edit::VersionEdit;
use crate::version::manifest::replay;
use crate::vlog::{check_header, decode_record, redirect, VLOG_HEADER_LEN};
use std::sync::Arc;

/// Runs one of the first nine targets.
pub(super) fn decode(target: &str, data: &[u8]) -> Result<()> {
    match target {
        "pm_log" => pm_log(data),
        "sst_footer" => sst_footer(data),
        "sst_block" => Block::decode(data.to_vec(), path("b.sst"), 0).map(drop),
        "sst_bloom" => sst_bloom(data),
        "sst_table" => sst_table(data),
        "manifest" => replay(data, path("MANIFEST-000001"), &version_extension).map(drop),
        "version_edit" => VersionEdit::decode(data, path("MANIFEST-000001"), 0).map(drop),
        "vlog" => vlog(data),
        "vlog_redirect" => vlog_redirect(data),
        _ => Err(Error::InvalidArgument(format!(
            "unknown fuzz target {target}"
        ))),
    }
}

/// A PM Log: header, then every entry recovery accepts (clamped to the bytes given).
fn pm_log(data: &[u8]) -> Result<()> {
    let p = path("000001.pmlog");
    let h = decode_header(data, p)?;
    for_each_entry_in(data, &h, p, |_, _| Ok(())).map(|_| ())
}

/// A footer: the first 8 bytes (LE) are the offset the footer was read at, the rest the
/// footer itself.
fn sst_footer(data: &[u8]) -> Result<()> {
    let offset = super::u64_at(data, 0);
    decode_footer(data.get(8..).unwrap_or_default(), path("f.sst"), offset).map(drop)
}

/// A bloom filter block, probed with a few keys.
fn sst_bloom(data: &[u8]) -> Result<()> {
    let f = BloomFilter::decode(data.to_vec(), path("b.sst"), 0)?;
    for k in [&b""[..], b"a", b"key", data.get(..8).unwrap_or(b"")] {
        let _ = f.may_contain(k);
    }
    Ok(())
}

/// A whole SSTable file: open (footer, index, filter), verify every block, then iterate,
/// seek and get.
fn sst_table(data: &[u8]) -> Result<()> {
    if data.len() < FOOTER_LEN {
        // Table::open reports this too; checked here to keep the input space relevant.
        return decode_footer(data, path("000001.sst"), 0).map(drop);
    }
    let file: Arc<dyn RandomAccessFile> = Arc::new(MemFile(data.to_vec()));
    let t = Table::open(file, "000001.sst".into(), 1, data.len() as u64, None)?;
    t.verify()?;
    let mut it = t.iter();
    it.seek_to_first();
    let mut first = None;
    while it.valid() {
        first.get_or_insert_with(|| it.key().to_vec());
        it.next();
    }
    it.status()?;
    if let Some(k) = first {
        it.seek(&k);
        it.status()?;
        t.get(&k)?;
    }
    Ok(())
}

/// A value log: file header, then every record to the end.
fn vlog(data: &[u8]) -> Result<()> {
    let p = path("000001.vlog");
    check_header(data, p)?;
    let mut pos = VLOG_HEADER_LEN as usize;
    while pos < data.len() {
        let (_, _, len) = decode_record(&data[pos..], p, pos as u64)?;
        pos += len;
    }
    Ok(())
}

/// A value-log redirect table, then a translation of every entry and of an offset it lacks.
fn vlog_redirect(data: &[u8]) -> Result<()> {
    let t = redirect::decode(data, path("000001.vredir"), 1)?;
    for e in t.entries() {
        let ptr = ValuePointer {
            file_number: t.victim(),
            offset: e.old_offset,
            value_len: e.value_len,
            record_len: e.record_len,
        };
        t.translate(&ptr)?;
    }
    let missing = ValuePointer {
        file_number: t.victim(),
        offset: 0,
        value_len: 0,
        record_len: 0,
    };
    match t.translate(&missing) {
        Err(e) if e.is_corruption() => Ok(()),
        other => Err(Error::InvalidState(format!(
            "offset 0 translated: {other:?}"
        ))),
    }
}
