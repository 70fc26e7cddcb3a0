//! Fuzzes the `vlog_redirect` decoder (see `flatlsm::fuzz_api`): it must never panic, and may
//! reject bytes only with a corruption error.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flatlsm::fuzz_api::check("vlog_redirect", data));
