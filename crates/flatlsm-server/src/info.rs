//! INFO's text: sections server, clients, stats, persistence (with the engine's statistics
//! and properties) and keyspace, in redis-server's `field:value` lines.

use crate::commands::estimate_keys;
use crate::shared::{Counters, Shared};
use std::fmt::Write;
use std::sync::atomic::Ordering;

/// The sections INFO knows, in the order INFO prints them.
pub const SECTIONS: &[&str] = &["server", "clients", "stats", "persistence", "keyspace"];

/// INFO's text for `sections` (lowercase names; `all`, `everything` and `default` mean all).
pub fn render(shared: &Shared, sections: &[String]) -> String {
    let everything = sections.is_empty()
        || sections
            .iter()
            .any(|s| matches!(s.as_str(), "all" | "everything" | "default"));
    let mut out = String::new();
    for &name in SECTIONS {
        if everything || sections.iter().any(|s| s == name) {
            if !out.is_empty() {
                out.push_str("\r\n");
            }
            section(shared, name, &mut out);
        }
    }
    out
}

fn section(shared: &Shared, name: &str, out: &mut String) {
    let title = format!("{}{}", name[..1].to_ascii_uppercase(), &name[1..]);
    let _ = write!(out, "# {title}\r\n");
    let fields = match name {
        "server" => server(shared),
        "clients" => clients(shared),
        "stats" => stats(shared),
        "persistence" => persistence(shared),
        _ => keyspace(shared),
    };
    for (field, value) in fields {
        let _ = write!(out, "{field}:{value}\r\n");
    }
}

type Fields = Vec<(String, String)>;

fn field(name: &str, value: impl ToString) -> (String, String) {
    (name.to_string(), value.to_string())
}

fn server(shared: &Shared) -> Fields {
    let uptime = shared.started.elapsed().as_secs();
    vec![
        field("redis_version", crate::commands::COMPATIBLE_REDIS_VERSION),
        field("flatlsm_version", env!("CARGO_PKG_VERSION")),
        field("redis_mode", "standalone"),
        field("arch_bits", usize::BITS),
        field("process_id", std::process::id()),
        field("tcp_port", shared.config.port),
        field("uptime_in_seconds", uptime),
        field("uptime_in_days", uptime / 86_400),
        field("flatlsm_profile", shared.db.stats().profile),
    ]
}

fn clients(shared: &Shared) -> Fields {
    vec![
        field("connected_clients", shared.clients.count()),
        field("maxclients", shared.config.max_clients),
        field("blocked_clients", 0),
    ]
}

fn stats(shared: &Shared) -> Fields {
    let c = &shared.counters;
    vec![
        field(
            "total_connections_received",
            Counters::get(&c.connections_received),
        ),
        field(
            "total_commands_processed",
            Counters::get(&c.commands_processed),
        ),
        field(
            "rejected_connections",
            Counters::get(&c.rejected_connections),
        ),
        field("total_net_input_bytes", Counters::get(&c.net_input_bytes)),
        field("total_net_output_bytes", Counters::get(&c.net_output_bytes)),
        field("total_error_replies", Counters::get(&c.error_replies)),
        field("total_protocol_errors", Counters::get(&c.protocol_errors)),
    ]
}

fn persistence(shared: &Shared) -> Fields {
    let s = &shared.saves;
    let stats = shared.db.stats();
    let mut fields = vec![
        field("loading", 0),
        field(
            "rdb_bgsave_in_progress",
            s.in_progress.load(Ordering::Relaxed) as u8,
        ),
        field(
            "rdb_last_save_time",
            s.last_save_unix.load(Ordering::Relaxed),
        ),
        field(
            "rdb_last_bgsave_status",
            if s.last_failed.load(Ordering::Relaxed) {
                "err"
            } else {
                "ok"
            },
        ),
        field("aof_enabled", 0),
        field("flatlsm_sync_writes", shared.config.sync as u8),
        field(
            "flatlsm_pm_mode",
            stats.pm_mode.map_or("none".into(), |m| m.to_string()),
        ),
        field("flatlsm_user_writes", stats.user_writes),
        field("flatlsm_user_bytes", stats.user_bytes),
        field(
            "flatlsm_write_amplification",
            format!("{:.2}", stats.write_amplification()),
        ),
        field("flatlsm_stall_count", stats.stall_count),
        field("flatlsm_stall_micros", stats.stall_micros),
        field("flatlsm_pmtables", stats.pmtables),
        field(
            "flatlsm_background_error",
            stats.background_error.as_deref().unwrap_or("none"),
        ),
    ];
    fields.extend(engine_properties(shared));
    fields
}

/// Every integer property of the engine (`flatlsm.num-files` as `flatlsm_num_files`).
pub fn engine_properties(shared: &Shared) -> Fields {
    let numbers = engine_numbers(shared).into_iter();
    numbers.map(|(name, v)| field(&name, v)).collect()
}

/// Every integer property of the engine by its INFO name, with its value (also the metrics
/// endpoint's gauges; values past `i64::MAX` are clamped).
pub fn engine_numbers(shared: &Shared) -> Vec<(String, i64)> {
    let mut numbers = Vec::new();
    let stats = shared.db.stats(); // one report for every property
    for name in property_names() {
        if let Some(v) = stats.property_int(&name) {
            let v = i64::try_from(v).unwrap_or(i64::MAX);
            numbers.push((name.replace(['.', '-'], "_"), v));
        }
    }
    numbers
}

/// The engine's property names, latency ones once per operation and per-level ones for level 0.
fn property_names() -> Vec<String> {
    let mut names = Vec::new();
    for name in flatlsm::PROPERTY_NAMES {
        match name.contains("<OP>") {
            true => names.extend(
                flatlsm::LATENCY_OPERATIONS
                    .iter()
                    .map(|op| name.replace("<OP>", op)),
            ),
            false => names.push(name.replace("<N>", "0")),
        }
    }
    names
}

fn keyspace(shared: &Shared) -> Fields {
    match estimate_keys(&shared.db) {
        Ok(0) => Vec::new(),
        Ok(keys) => vec![field("db0", format!("keys={keys},expires=0,avg_ttl=0"))],
        Err(e) => vec![field("db0_error", e.to_string().replace(['\r', '\n'], " "))],
    }
}
