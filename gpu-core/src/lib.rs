//! The PICA200 GPU model: physical memory, command processing, vertex loading, shading,
//! primitive assembly, clipping, rasterisation, texturing, colour combiners, fragment operations
//! and the external engines (memory fill, display transfer).
//!
//! All state lives in values owned by the caller; there is no global state and no callback into
//! GUI code. Observation happens through observer type parameters and event logs.
//!
//! The modules follow the data flow (see `ARCHITECTURE.md`), each depending only on those below
//! it in this list (`.ci/check-cycles` enforces that there are no cycles):
//!
//! * [`replay`]: trace replay, keyframes, seeking, and the trace linter ([`replay::lint`]).
//! * [`command`]: the command processor ([`command::gpu::Gpu`], the register files, shader
//!   memories, command lists) and the external register side effects.
//! * [`engines`]: memory fill, display transfer / texture copy, LCD scan-out.
//! * [`draw`]: one draw from a borrowed [`draw::DrawRequest`] through [`geometry`] and [`pixel`].
//! * [`pixel`]: rasteriser, fragment pipeline, combiners, texturing, the fixed-function stages,
//!   framebuffer, pixel formats, tiling (the rasteriser takes its depth
//!   map from [`geometry::viewport`]).
//! * [`geometry`]: vertex loading, shading glue, primitive assembly, clipping, viewport.
//! * Shared leaves: [`debug`] (the observer interface, events, diagnostics), [`budget`] (work
//!   budgets per submission, frame and trace), [`vertex`] (vertex
//!   records between stages), [`lut`] (lookup tables), [`regs`] (register map), [`memory`]
//!   (physical memory).
#![warn(missing_docs)]

pub mod budget;
pub mod command;
pub mod debug;
pub mod draw;
pub mod engines;
pub mod geometry;
pub mod history;
pub mod lut;
pub mod memory;
pub mod pixel;
pub mod regs;
pub mod replay;
pub mod vertex;

// The flat module paths of the previous layout (`gpu_core::gpu`, `gpu_core::texture`, ...),
// kept so that dependants' imports stay valid.
pub use command::gpu;
pub use engines::lcd;
pub use geometry::{assembly, clip, shading, vertex_loader, viewport};
pub use pixel::stages::{fog, lighting, proctex, shadow};
pub use pixel::{fragment, framebuffer, raster, tev, texture, tiling};
pub use replay::lint;

// The types most dependants start from.
pub use command::gpu::Gpu;
pub use debug::{EventLog, Observer};
pub use memory::PhysMem;
pub use replay::Replay;
