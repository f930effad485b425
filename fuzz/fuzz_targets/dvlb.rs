//! Fuzz target: see `picaview_fuzz::checks::dvlb`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| picaview_fuzz::checks::dvlb(data));
