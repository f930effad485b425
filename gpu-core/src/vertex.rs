//! The vertex records that flow between pipeline stages (`pica-core.md` §8, `pica-raster.md` §1-§3).
//!
//! * [`OutputVertex`]: a shader output vertex after the output map (SH_OUTMAP, 0x04F-0x056) has
//!   sorted its components by semantic; position in clip space. Produced by shading (VS or GS),
//!   consumed by primitive assembly and clipping.
//! * [`ScreenVertex`]: a clipped vertex after the perspective divide and the viewport transform
//!   (0x041, 0x043, 0x068); consumed by the rasterizer.

use serde::{Deserialize, Serialize};

/// A vertex by semantic, as the rasterizer stage receives it from the shader output map.
///
/// Semantics that no output component maps to are 0 (the choice of [C]; 3dbrew's "value of 1"
/// remark is ambiguous). All values are f32 holding what the shader unit computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OutputVertex {
    /// Clip-space position x, y, z, w (semantics 0x00-0x03).
    pub pos: [f32; 4],
    /// Normal quaternion x, y, z, w (semantics 0x04-0x07).
    pub quat: [f32; 4],
    /// Vertex colour r, g, b, a (semantics 0x08-0x0B), already made `min(|c|, 1)` per component.
    pub color: [f32; 4],
    /// Texture coordinate 0 u, v (semantics 0x0C, 0x0D).
    pub tc0: [f32; 2],
    /// Texture coordinate 1 u, v (semantics 0x0E, 0x0F).
    pub tc1: [f32; 2],
    /// Texture coordinate 2 u, v (semantics 0x16, 0x17).
    pub tc2: [f32; 2],
    /// Texture coordinate 0 w (semantic 0x10), used by cube and projective/shadow lookups.
    pub tc0_w: f32,
    /// View vector x, y, z (semantics 0x12-0x14).
    pub view: [f32; 3],
}

impl OutputVertex {
    /// Linear interpolation of every attribute: `self·(1 − t) + other·t` (clipping, §2.2).
    pub fn lerp(&self, other: &OutputVertex, t: f32) -> OutputVertex {
        fn l<const N: usize>(a: [f32; N], b: [f32; N], t: f32) -> [f32; N] {
            let mut r = a;
            for i in 0..N {
                r[i] = a[i] * (1.0 - t) + b[i] * t;
            }
            r
        }
        OutputVertex {
            pos: l(self.pos, other.pos, t),
            quat: l(self.quat, other.quat, t),
            color: l(self.color, other.color, t),
            tc0: l(self.tc0, other.tc0, t),
            tc1: l(self.tc1, other.tc1, t),
            tc2: l(self.tc2, other.tc2, t),
            tc0_w: self.tc0_w * (1.0 - t) + other.tc0_w * t,
            view: l(self.view, other.view, t),
        }
    }
}

/// A vertex in window coordinates, ready for rasterisation.
///
/// Window coordinates have their origin at the bottom-left of the render target and y growing
/// upwards; pixel centres are at integer + 0.5 (`pica-raster.md` §3.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ScreenVertex {
    /// Window x in pixels: `(x/w + 1)·halfW + corner.x`.
    pub x: f32,
    /// Window y in pixels: `(y/w + 1)·halfH + corner.y`.
    pub y: f32,
    /// `z/w` (in [−1, 0] after clipping); the depth map is applied per pixel by the rasterizer.
    pub z_over_w: f32,
    /// `1/w`, for perspective-correct interpolation and the w-buffer.
    pub inv_w: f32,
    /// The attributes, NOT premultiplied by `1/w` (the rasterizer does that itself).
    pub attrs: OutputVertex,
}
