//! cargo-fuzz targets for picaview's parsers; the target bodies live in [`checks`] so that the
//! stable test suite can run the same checks on the minimised inputs.

pub mod checks;
