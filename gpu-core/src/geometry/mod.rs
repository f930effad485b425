//! The geometry half of a draw: from vertex arrays in memory to screen-space triangles
//! (`pica-core.md` §3-§8, `pica-raster.md` §1-§3).
//!
//! Input: the register file, vertex and index buffers in [`crate::memory::PhysMem`], the fixed
//! attributes, and the shader units (programs and uniforms, run by `shader-unit`). Output:
//! triangles of [`crate::vertex::ScreenVertex`] for the rasteriser ([`crate::pixel`]). The
//! driver that runs these stages in order for one draw is [`crate::draw`].
//!
//! In data-flow order:
//! * [`vertex_loader`]: attribute buffers → shader input attributes (0x200-0x22A).
//! * [`shading`]: input permutation, the vertex and geometry shader units, output mask and map
//!   (0x242-0x2DF, 0x04F-0x056).
//! * [`assembly`]: primitive assembly (0x25E, 0x25F).
//! * [`clip`]: clipping against the clip volume and the user plane (0x047-0x04B).
//! * [`viewport`]: perspective divide, viewport transform, depth-map parameters (0x041-0x044,
//!   0x04D, 0x04E, 0x068, 0x06D).

pub mod vertex_loader;

pub mod shading;

pub mod assembly;

pub mod clip;

pub mod viewport;
