//! The pixel half of a draw: from screen-space triangles to bytes in the colour and depth
//! buffers (`pica-raster.md` §3.3-§9).
//!
//! Input: triangles of [`crate::vertex::ScreenVertex`] from [`crate::geometry`], the register
//! file, the lookup tables ([`crate::lut`]) and texture data in [`crate::memory::PhysMem`].
//! Output: colour, depth and stencil values written to the render target in physical memory,
//! and per-draw diagnostics. Registers read: 0x040, 0x04D-0x06D (rasteriser, depth map), 0x080-0x0FD
//! (textures, procedural texture, combiners, fog), 0x100-0x130 (fragment operations,
//! framebuffer, shadow), 0x140-0x1D9 (fragment lighting); each module names its own. This
//! folder does not depend on the command processor: everything comes in as values.
//!
//! In data-flow order:
//! * [`raster`]: triangle setup, coverage, interpolation, depth.
//! * [`fragment`]: the per-fragment pipeline ([`fragment::PixelPipeline`]) that runs the rest.
//! * [`texture`]: texture units 0-2 (formats, configuration, sampling, decoding).
//! * [`stages`]: the fixed-function stages plugged into the pipeline: fragment lighting,
//!   procedural texture (unit 3), fog, shadow-map rendering.
//! * [`tev`]: the six colour combiner stages.
//! * [`framebuffer`]: the render target in memory.
//! * Shared with [`crate::engines`]: [`color`] (pixel formats, re-exported here) and [`tiling`]
//!   (tiled and linear addressing).
//! * [`fastmath`]: exact libm-free `floor`/`round` conversions for per-fragment code.
//! * [`isa`]: the hot kernels' AVX2 copies and their run-time choice.

pub mod raster;

pub mod fragment;

pub mod texture;

pub mod stages;

pub mod tev;

pub mod framebuffer;

pub mod color;

pub mod tiling;

pub mod fastmath;

pub mod isa;

pub use color::*;
