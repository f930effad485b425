//! The PICA200 GPU model: physical memory, command processing, vertex loading, shading,
//! primitive assembly, clipping, rasterisation, texturing, colour combiners, fragment operations
//! and the external engines (memory fill, display transfer).
//!
//! All state lives in values owned by the caller; there is no global state and no callback into
//! GUI code. Observation happens through observer type parameters and event logs.
#![warn(missing_docs)]

pub mod debug;
pub mod memory;
pub mod vertex;
