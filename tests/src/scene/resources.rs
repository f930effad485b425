//! Handles of guest-memory resources a scene allocates: vertex buffers, index buffers and render
//! targets (textures are in [`super::texture`]).
//!
//! Stage: host-side bookkeeping. Inputs: what [`super::Scene`] allocated. Outputs: physical
//! addresses and sizes that [`super::CommandList`] turns into register values and into the
//! memory ranges a draw reads. Registers read: none.

use std::sync::Arc;

use pica_cmd::regs::framebuffer::{ColorFormat, DepthFormat};
use pica_cmd::regs::pipeline::IndexFormat;

/// Vertex data in the linear heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VertexBuffer {
    /// Physical address.
    pub pa: u32,
    /// Size in bytes.
    pub len: u32,
}

/// Index data in the linear heap, with a host copy of the indices (to know which vertices a
/// draw reads).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexBuffer {
    /// Physical address.
    pub pa: u32,
    /// u8 or u16 indices.
    pub format: IndexFormat,
    /// The indices, widened.
    pub indices: Arc<[u16]>,
}

impl IndexBuffer {
    /// Bytes per index.
    pub fn index_size(&self) -> u32 {
        match self.format {
            IndexFormat::U8 => 1,
            _ => 2,
        }
    }
}

/// A colour buffer (and optional depth buffer) in VRAM, tiled 8×8 (libctru's render target).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenderTarget {
    /// Physical address of the colour buffer.
    pub color_pa: u32,
    /// Physical address of the depth buffer, if there is one.
    pub depth_pa: Option<u32>,
    /// Width in pixels (240 for both screens: the buffers are rotated).
    pub width: u32,
    /// Height in pixels (400 top, 320 bottom).
    pub height: u32,
    /// Colour format.
    pub color_format: ColorFormat,
    /// Depth format (meaningful when `depth_pa` is set).
    pub depth_format: DepthFormat,
}

/// Bytes per pixel of a colour-buffer format.
pub fn color_bytes(format: ColorFormat) -> u32 {
    match format {
        ColorFormat::Rgba8 => 4,
        ColorFormat::Rgb8 => 3,
        _ => 2,
    }
}

/// Bytes per pixel of a depth-buffer format.
pub fn depth_bytes(format: DepthFormat) -> u32 {
    match format {
        DepthFormat::D16 => 2,
        DepthFormat::D24 => 3,
        _ => 4,
    }
}

impl RenderTarget {
    /// Bytes of the colour buffer.
    pub fn color_size(&self) -> u32 {
        self.width * self.height * color_bytes(self.color_format)
    }

    /// Bytes of the depth buffer (0 without one).
    pub fn depth_size(&self) -> u32 {
        match self.depth_pa {
            Some(_) => self.width * self.height * depth_bytes(self.depth_format),
            None => 0,
        }
    }
}
