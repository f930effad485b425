//! The PICA200 GPU model: physical memory, command processing, vertex loading, shading,
//! primitive assembly, clipping, rasterisation, texturing, colour combiners, fragment operations
//! and the external engines (memory fill, display transfer).
//!
//! All state lives in values owned by the caller; there is no global state and no callback into
//! GUI code. Observation happens through observer type parameters and event logs.
#![warn(missing_docs)]

pub mod assembly;
pub mod clip;
pub mod debug;
pub mod draw;
pub mod engines;
pub mod fog;
pub mod fragment;
pub mod framebuffer;
pub mod gpu;
pub mod lcd;
pub mod lighting;
pub mod lint;
pub mod memory;
pub mod pixel;
pub mod proctex;
pub mod raster;
pub mod replay;
pub mod shading;
pub mod shadow;
pub mod system;
pub mod tev;
pub mod texture;
pub mod tiling;
pub mod vertex;
pub mod vertex_loader;
pub mod viewport;
