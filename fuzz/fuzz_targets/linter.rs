//! Fuzz target: see `picaview_fuzz::checks::linter`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| picaview_fuzz::checks::linter(data));
