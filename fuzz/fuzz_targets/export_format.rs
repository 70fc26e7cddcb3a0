//! Fuzzes `export_format` through `flatlsm::fuzz_api::check` (the input as given and, where the
//! format has checksums, resealed): no panic, hang or unbounded allocation; clean rejections.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flatlsm::fuzz_api::check("export_format", data));
