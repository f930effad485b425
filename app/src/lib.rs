//! The picaview library: the desktop viewer (`viewer`), shared by the `picaview` binary and the
//! viewer's UI tests.
#![warn(missing_docs)]

pub mod viewer;
