//! `stats`: the shape of the tree (PMTables, levels, value logs and their garbage) and the
//! engine's counters (block cache, bloom filters, per-operation latency histograms since this
//! open), for people or as JSON.

use crate::db_args::DbArgs;
use flatlsm::{Profile, Stats};
use serde_json::{json, Value};

/// Flags of `flatlsm stats`.
#[derive(clap::Args, Debug)]
pub struct StatsArgs {
    #[command(flatten)]
    db: DbArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// Prints the statistics of the database.
pub fn stats(a: StatsArgs) -> Result<(), String> {
    let db = a.db.open_read_only()?;
    let s = db.stats();
    if a.json {
        let text = serde_json::to_string_pretty(&to_json(&s)).map_err(|e| e.to_string())?;
        crate::emit(&text);
    } else {
        crate::emit(human(&s).trim_end());
    }
    db.close().map_err(|e| e.to_string())
}

fn garbage_bytes(s: &Stats) -> u64 {
    s.vlogs
        .iter()
        .map(|v| v.total_bytes - v.live_bytes.min(v.total_bytes))
        .sum()
}

/// The statistics as a JSON object: `Stats` as serde writes it (field names are stable; sizes
/// in bytes), plus the figures derived from it under `derived`.
pub fn to_json(s: &Stats) -> Value {
    let mut v = serde_json::to_value(s).unwrap_or_else(|e| json!({ "error": e.to_string() }));
    v["derived"] = json!({
        "ssd_bytes_written": s.ssd_bytes_written(),
        "write_amplification": s.write_amplification(),
        "flush_bytes": s.flush_bytes(),
        "vlog_garbage_bytes": garbage_bytes(s),
    });
    v
}

fn human(s: &Stats) -> String {
    let mut out = String::new();
    let mode = s.pm_mode.map(|m| m.to_string()).unwrap_or_default();
    out += &format!("PM mode:        {mode}\n");
    out += &format!(
        "PMTables:       {} ({} bytes of PM Log)\n",
        s.pmtables, s.pmtable_bytes
    );
    for (i, l) in s.levels.iter().enumerate() {
        let label = match (s.profile, i) {
            (Profile::FlatLsm, 0) => format!("L1 runs ({}):", s.l1_runs),
            (Profile::FlatLsm, 1) => "L1 (Ordered):".to_string(),
            _ => format!("{}:", l.name),
        };
        let (files, bytes, data) = (l.files, l.bytes, l.data_bytes);
        out += &format!("{label:<16}{files} files, {bytes} bytes, {data} data bytes\n");
    }
    let total: u64 = s.vlogs.iter().map(|v| v.total_bytes).sum();
    let garbage = garbage_bytes(s);
    let pct = if total == 0 {
        0.0
    } else {
        100.0 * garbage as f64 / total as f64
    };
    out += &format!(
        "value logs:     {} files, {total} bytes, {garbage} garbage ({pct:.1}%), {} redirected\n",
        s.vlogs.len(),
        s.vlog_redirects
    );
    out += &format!("last sequence:  {}\n", s.last_sequence);
    out += &format!(
        "since open:     {} user bytes, write amplification {:.3}, stalls {} us\n",
        s.user_bytes,
        s.write_amplification(),
        s.stall_micros
    );
    let c = &s.block_cache;
    out += &format!(
        "block cache:    {} of {} bytes, {} hits, {} misses, {} inserts, {} evictions\n",
        c.usage, c.capacity, c.hits, c.misses, c.inserts, c.evictions
    );
    let b = &s.bloom;
    out += &format!(
        "bloom filters:  {} checked, {} useful, {} false positives\n",
        b.checked, b.useful, b.false_positives
    );
    out += &format!("{}\n", s.latency);
    if let Some(e) = &s.background_error {
        out += &format!("background error: {e}\n");
    }
    out
}
