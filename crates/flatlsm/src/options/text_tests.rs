//! Unit tests of the stored options' text: every field round-trips, values decode exactly.

use super::*;
use crate::options::LeveledOptions;
use crate::options::MatrixKvOptions;
use crate::options::SlmDbOptions;

/// Fields of `Options` (stored or not), of `LeveledOptions`, `MatrixKvOptions`, `SlmDbOptions`.
const FIELD_COUNTS: [usize; 4] = [47, 6, 6, 9];
/// The fields of `Options` the OPTIONS file does not hold (module docs).
const NOT_STORED: [&str; 6] = [
    "create_if_missing",
    "error_if_exists",
    "allow_missing_pm",
    "wal_point_in_time_recovery",
    "file_system",
    "pm_device",
];

/// Options with every field other than its default. Written as struct literals without `..`,
/// so a new field stops this file from compiling until it is added here (and to the table in
/// `text.rs`, or to `NOT_STORED`, with `FIELD_COUNTS` updated).
pub(crate) fn every_field_changed() -> Options {
    Options {
        profile: Profile::MatrixKv,
        wal_dir: Some(PathBuf::from("/wal dir/with \"quotes\"")),
        leveled: LeveledOptions {
            max_bytes_for_level_base: 3 << 20,
            max_bytes_for_level_multiplier: 7.5,
            level0_file_num_compaction_trigger: 3,
            level0_slowdown_writes_trigger: 9,
            level0_stop_writes_trigger: 11,
            level0_in_pm: true,
        },
        matrixkv: MatrixKvOptions {
            container_size: 64 << 20,
            receiver_limit: 0.45,
            page_size: 16 << 10,
            column_lower_bound: 1 << 20,
            column_upper_bound: 3 << 20,
            column_threads: 61,
        },
        slmdb: SlmDbOptions {
            btree_size: 32 << 20,
            live_key_threshold: 0.65,
            leaf_node_threshold: 12,
            compaction_trigger: 5,
            max_compaction_files: 7,
            slowdown_candidates: 17,
            stop_candidates: 40,
            range_subrange_keys: 31,
            sequentiality_threshold: 9,
        },
        create_if_missing: false,
        error_if_exists: true,
        pm_path: Some(PathBuf::from(OsString::from_vec(
            b"/pm/\xff\x01\\".to_vec(),
        ))),
        allow_missing_pm: true,
        wal_point_in_time_recovery: true,
        pm_mode: PmModeOption::Emulated,
        pm_write_latency_ns: 500,
        pm_read_latency_ns: 300,
        memtable_placement: Placement::Pm,
        block_cache_placement: Placement::Pm,
        pm_persist_interval_ms: 250,
        pmtable_size: 8 << 20,
        flush_immutable_num: 3,
        max_write_buffer_number: 9,
        slowdown_immutable_num: Some(5),
        delayed_write_rate: Some(1 << 20),
        l1_merge_trigger: 6,
        pmtable_gc_ratio: f64::INFINITY,
        l1_capacity: 5 << 30,
        l1_data_ratio: 0.25,
        target_file_size: 3 << 20,
        flush_threads: 199,
        kv_separation_threshold: 1024,
        vlog_direct_writes: true,
        vlog_cache_written: true,
        vlog_mmap_reads: false,
        value_cache: true,
        block_size: 8192,
        bloom_bits_per_key: 14,
        block_cache_size: 0,
        max_open_files: Some(77),
        vlog_gc_garbage_ratio: 0.1,
        vlog_gc_total_garbage_ratio: 0.75,
        vlog_gc_quiet_garbage_ratio: 0.5,
        vlog_gc_slowdown_garbage_ratio: 0.625,
        quiet_cleanup: false,
        background_work: false,
        background_nice: 0,
        write_breakdown: true,
        max_log_file_size: 0,
        keep_log_file_num: 3,
        compression: Compression::Zstd { level: 9 },
        compression_per_level: vec![
            Compression::None,
            Compression::Lz4,
            Compression::Zstd { level: 3 },
        ],
        file_system: None,
        pm_device: None,
    }
}

#[test]
fn every_field_is_stored_or_named_as_not_stored() {
    let stored = stored_values(&Options::default());
    let total: usize = FIELD_COUNTS.iter().sum();
    assert_eq!(stored.len() + NOT_STORED.len(), total);
    assert_eq!(stored[0].0, MAIN_SECTION);
    let names: Vec<&str> = stored.iter().map(|(_, n, _)| *n).collect();
    assert!(NOT_STORED.iter().all(|n| !names.contains(n)));
}

#[test]
fn every_stored_field_round_trips_a_non_default_value() {
    let (changed, default) = (every_field_changed(), Options::default());
    let mut decoded = Options::default();
    for ((section, name, text), (_, _, default_text)) in stored_values(&changed)
        .into_iter()
        .zip(stored_values(&default))
    {
        assert_ne!(
            text, default_text,
            "{section}.{name} keeps its default in the test"
        );
        assert_eq!(set_stored(&mut decoded, section, name, &text), Ok(true));
    }
    assert_eq!(stored_values(&decoded), stored_values(&changed));
    assert_eq!(
        decoded.pm_path, changed.pm_path,
        "a non-UTF-8 path comes back byte for byte"
    );
    assert_eq!(decoded.leveled, changed.leveled);
    assert_eq!(decoded.matrixkv, changed.matrixkv);
    assert_eq!(decoded.slmdb, changed.slmdb);
}

#[test]
fn floats_come_back_bit_for_bit() {
    for x in [0.1, 1.0 / 3.0, 8.0, f64::INFINITY, 1e-300, 0.0] {
        assert_eq!(
            f64::decode(&x.encode()).unwrap().to_bits(),
            x.to_bits(),
            "{x}"
        );
    }
}

#[test]
fn quoted_strings_escape_quotes_backslashes_controls_and_invalid_bytes() {
    let raw = b"a \"b\" \\c\n\x00\xfe d\xc3\xa9";
    let text = quote(raw);
    assert_eq!(text, r#""a \"b\" \\c\x0a\x00\xfe dé""#);
    assert_eq!(unquote(&text).unwrap(), raw);
    for bad in ["", "\"", "abc", "\"a\"b\"", "\"\\q\"", "\"\\x4\""] {
        assert!(unquote(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn bad_values_say_what_was_expected_and_unknown_names_are_not_errors() {
    let mut o = Options::default();
    let err = set_stored(&mut o, MAIN_SECTION, "pmtable_size", "big").unwrap_err();
    assert!(err.contains("an integer"), "{err}");
    let err = set_stored(&mut o, MAIN_SECTION, "pm_mode", "\"fast\"").unwrap_err();
    assert!(err.contains("auto, msync, emulated"), "{err}");
    let err = set_stored(&mut o, MAIN_SECTION, "profile", "\"rocks\"").unwrap_err();
    assert!(err.contains("unknown profile"), "{err}");
    assert_eq!(
        set_stored(&mut o, MAIN_SECTION, "future_knob", "1"),
        Ok(false)
    );
    assert_eq!(
        set_stored(&mut o, "future_section", "pmtable_size", "1"),
        Ok(false)
    );
    assert_eq!(o.pmtable_size, Options::default().pmtable_size);
}
