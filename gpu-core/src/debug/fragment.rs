//! Pixel-history records: what the pixel pipeline did to the fragments at one probed pixel.
//!
//! A [`PixelProbe`] names a small rectangle of one render target (by its memory address, so a
//! draw into another target at the same window position is not recorded). While a probe is set
//! (see `Replay::set_pixel_probe`), draws into that target run the reference fragment path and
//! hand one [`FragmentRecord`] per fragment inside the rectangle to
//! [`crate::debug::Observer::fragment`]: the interpolated inputs, each texture unit's texel, each
//! combiner stage's inputs and output, the fragment-lighting colours, fog, which test ended the
//! fragment ([`FragmentFate`]) and the blend inputs and written value. Triangles that covered
//! the pixel but were culled, fragments the scissor test removed, and triangles (or parts of
//! triangles) that clipping removed although their projection covers the pixel
//! ([`FragmentFate::ClippedAway`], found with [`positive_w_fan`]) are recorded too.
//!
//! Plain data only (no pipeline types), so that every module can report through it. All colour
//! values are exact 8-bit channels as the pipeline computed them; depth and stencil are the raw
//! stored bits.

use serde::{Deserialize, Serialize};

use crate::vertex::OutputVertex;

/// Which buffer of a render target the probe watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProbeBuffer {
    /// The colour buffer at this physical address.
    Color(u32),
    /// The depth/stencil buffer at this physical address.
    Depth(u32),
}

/// A rectangle of one render target whose fragments are recorded (window coordinates, y up,
/// as the rasteriser produces them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PixelProbe {
    /// The buffer watched: only draws whose colour (or depth) buffer lies at this address are
    /// recorded.
    pub buffer: ProbeBuffer,
    /// Left column.
    pub x: u32,
    /// Bottom row (window y grows up).
    pub y: u32,
    /// Width in pixels (at least 1; at most [`PixelProbe::MAX_SIDE`]).
    pub w: u32,
    /// Height in pixels (at least 1; at most [`PixelProbe::MAX_SIDE`]).
    pub h: u32,
}

impl PixelProbe {
    /// Largest side of a probe rectangle: recording is meant for one pixel or a few.
    pub const MAX_SIDE: u32 = 16;
    /// Most records one draw keeps; the rest are counted and reported as a diagnostic
    /// ("pixel history: N fragment records not kept ...") before the draw ends.
    pub const MAX_RECORDS_PER_DRAW: usize = 4096;

    /// A probe of one pixel.
    pub fn pixel(buffer: ProbeBuffer, x: u32, y: u32) -> Self {
        Self {
            buffer,
            x,
            y,
            w: 1,
            h: 1,
        }
    }

    /// The rectangle clamped to 1..=[`PixelProbe::MAX_SIDE`] on each side.
    pub fn clamped(self) -> Self {
        Self {
            w: self.w.clamp(1, Self::MAX_SIDE),
            h: self.h.clamp(1, Self::MAX_SIDE),
            ..self
        }
    }

    /// True if window pixel (x, y) lies in the rectangle.
    #[inline]
    pub fn contains(&self, x: u32, y: u32) -> bool {
        x.wrapping_sub(self.x) < self.w && y.wrapping_sub(self.y) < self.h
    }

    /// True if a render target with this colour and depth address is the watched one.
    pub fn watches(&self, color_addr: u32, depth_addr: u32) -> bool {
        match self.buffer {
            ProbeBuffer::Color(a) => a == color_addr,
            ProbeBuffer::Depth(a) => a == depth_addr,
        }
    }
}

/// What ended a fragment (or let it through).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FragmentFate {
    /// The triangle covered the pixel but was removed by face culling before rasterisation.
    Culled,
    /// Clipping removed the triangle (or the part of it over this pixel) before rasterisation:
    /// its projection (the part with w > 0, through the viewport transform, as the rasteriser
    /// would have seen it) covers the pixel. The record's `triangle` is the index of the
    /// assembled triangle (`DrawDetail::assembled`), since no piece of it reached the
    /// rasteriser at this pixel; its inputs are interpolated over that projection (depth may
    /// lie outside [0, 1]).
    ClippedAway,
    /// Removed by the scissor test.
    Scissor,
    /// Removed by the alpha test.
    AlphaTest,
    /// Removed by the stencil test.
    Stencil,
    /// Removed by the depth test.
    Depth,
    /// Passed every test, but colour writes are disabled (write mask all off, COLORBUFFER_WRITE
    /// off, or an unknown colour format), so the colour buffer did not change.
    WriteMask,
    /// Discarded: gas fog without an implementation.
    Discarded,
    /// Handed to shadow-map or gas rendering (which writes the pixel its own way).
    SpecialMode,
    /// Passed every test and the colour was written (through blending or a logic op and the
    /// write mask).
    Passed,
}

impl FragmentFate {
    /// A short name for people.
    pub fn label(self) -> &'static str {
        match self {
            Self::Culled => "culled before raster",
            Self::ClippedAway => "clipped before raster",
            Self::Scissor => "scissor test",
            Self::AlphaTest => "alpha test",
            Self::Stencil => "stencil test",
            Self::Depth => "depth test",
            Self::WriteMask => "colour write disabled",
            Self::Discarded => "discarded (gas)",
            Self::SpecialMode => "shadow/gas rendering",
            Self::Passed => "passed",
        }
    }
}

/// The interpolated inputs of a fragment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FragmentInputs {
    /// Depth in [0, 1] after the depth map.
    pub depth: f32,
    /// Perspective-correct w at the pixel centre (1 / interpolated 1/w).
    pub w: f32,
    /// Primary colour, unsigned 0.8.
    pub primary: [u8; 4],
    /// Texture coordinates 0-2 (u, v).
    pub texcoord: [[f32; 2]; 3],
    /// Texture coordinate 0 w.
    pub texcoord0_w: f32,
}

/// What one texture unit returned for a fragment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TexelRecord {
    /// Unit 0-3 (3 = procedural texture).
    pub unit: u8,
    /// The filtered colour the combiners see (RGBA8).
    pub color: [u8; 4],
    /// Physical address of level 0 (0 for the procedural texture).
    pub addr: u32,
    /// Raw format id (0-13 valid; 0xFF for the procedural texture).
    pub format: u32,
    /// Level of detail used (after bias and clamping); mip level `level.round()` for nearest
    /// mip filtering.
    pub lod: f32,
    /// The mip level the nearest texel is taken from.
    pub level: u32,
    /// Physical address of that level.
    pub level_addr: u32,
    /// Texel coordinates in that level before wrapping: (u·width, v·height).
    pub texel: [f32; 2],
}

/// One combiner stage as evaluated for a fragment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TevStageRecord {
    /// Stage 0-5.
    pub stage: u8,
    /// False for a pass-through stage (it only forwards "previous").
    pub active: bool,
    /// The three RGB inputs after source and operand selection (unused inputs are 0).
    pub rgb_in: [[u8; 3]; 3],
    /// The three alpha inputs after source and operand selection (unused inputs are 0).
    pub alpha_in: [u8; 3],
    /// The stage's output (after scaling).
    pub output: [u8; 4],
    /// The combiner buffer value this stage reads as "previous buffer".
    pub buffer: [u8; 4],
}

/// Fog applied to a fragment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FogRecord {
    /// Fog factor (1 = no fog), when the fog stage reports it.
    pub factor: Option<f32>,
    /// Fog colour (RGB).
    pub color: [u8; 3],
    /// Combiner output before fog.
    pub before: [u8; 4],
    /// After fog.
    pub after: [u8; 4],
}

/// The colour stage of a fragment that reached the colour write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlendRecord {
    /// True for blending, false for a logic operation.
    pub blend: bool,
    /// The source colour (combiner output after fog).
    pub src: [u8; 4],
    /// The destination colour read from the buffer (decoded to RGBA8).
    pub dst: [u8; 4],
    /// Source factor per channel (unsigned 0.8; 0 for logic ops).
    pub src_factor: [u8; 4],
    /// Destination factor per channel (unsigned 0.8; 0 for logic ops).
    pub dst_factor: [u8; 4],
    /// The blend or logic-op result before the write mask.
    pub result: [u8; 4],
    /// The value written (after the write mask, decoded back from the stored format).
    pub written: [u8; 4],
    /// The colour write mask R, G, B, A.
    pub mask: [bool; 4],
}

/// Depth and stencil of the pixel around the fragment's depth/stencil stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepthStencilRecord {
    /// The fragment's depth in buffer units (`trunc(depth · (2^bits − 1))`).
    pub fragment_depth: u32,
    /// Stored depth before.
    pub depth_before: u32,
    /// Stored depth after.
    pub depth_after: u32,
    /// Stored stencil before.
    pub stencil_before: u8,
    /// Stored stencil after.
    pub stencil_after: u8,
}

/// Everything the pipeline did to one fragment at a probed pixel.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FragmentRecord {
    /// Draw index (0-based over the whole replay).
    pub draw: u64,
    /// Index of the triangle in the draw as handed to the rasteriser (after clipping: the fan
    /// triangles of a clipped polygon count individually; the index of
    /// `DrawDetail::clipped`).
    pub triangle: u32,
    /// Window x.
    pub x: u32,
    /// Window y (up).
    pub y: u32,
    /// What ended it.
    pub fate: Option<FragmentFate>,
    /// Interpolated inputs.
    pub inputs: FragmentInputs,
    /// Texture units that were sampled.
    pub texels: Vec<TexelRecord>,
    /// Fragment lighting primary and secondary colours, when lighting ran.
    pub lighting: Option<[[u8; 4]; 2]>,
    /// Combiner stages (empty for fragments culled or scissored before the combiners).
    pub tev: Vec<TevStageRecord>,
    /// The combiner output.
    pub combiner_output: [u8; 4],
    /// Fog, when it ran.
    pub fog: Option<FogRecord>,
    /// Depth and stencil, when the depth/stencil stage accessed the buffer.
    pub depth_stencil: Option<DepthStencilRecord>,
    /// Blending or logic op, when the fragment reached the colour write.
    pub blend: Option<BlendRecord>,
}

/// Lower bound of w for [`positive_w_fan`]: the clipper's guard-plane value
/// (`geometry::clip::W_MIN`), repeated here because `debug` sits below `geometry`.
pub const PROJECTION_W_MIN: f32 = 1e-5;

/// The part of a clip-space triangle with `w >= PROJECTION_W_MIN` (the part that has a
/// well-defined projection to the screen), as a fan of at most two triangles in the input's
/// winding; `None` entries are unused. Only the w plane is applied (not the frustum or user
/// planes): this is the triangle as the rasteriser would have seen it had clipping not
/// removed it, used to report [`FragmentFate::ClippedAway`] at a probed pixel. Triangles with a
/// non-finite position give nothing.
pub fn positive_w_fan(tri: &[OutputVertex; 3]) -> [Option<[OutputVertex; 3]>; 2] {
    if tri.iter().any(|v| v.pos.iter().any(|c| !c.is_finite())) {
        return [None, None];
    }
    let d = |v: &OutputVertex| v.pos[3] - PROJECTION_W_MIN;
    // Sutherland–Hodgman against one plane: a triangle gains at most one vertex.
    let mut out = [OutputVertex::default(); 4];
    let mut n = 0;
    for k in 0..3 {
        let (a, b) = (&tri[k], &tri[(k + 1) % 3]);
        let (da, db) = (d(a), d(b));
        if da >= 0.0 {
            out[n] = *a;
            n += 1;
        }
        if (da >= 0.0) != (db >= 0.0) {
            out[n] = a.lerp(b, da / (da - db));
            n += 1;
        }
    }
    match n {
        3 => [Some([out[0], out[1], out[2]]), None],
        4 => [
            Some([out[0], out[1], out[2]]),
            Some([out[0], out[2], out[3]]),
        ],
        _ => [None, None],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f32, w: f32) -> OutputVertex {
        OutputVertex {
            pos: [x, 0.0, 0.0, w],
            ..OutputVertex::default()
        }
    }

    #[test]
    fn positive_w_fan_keeps_cuts_and_drops() {
        let all = [v(0.0, 1.0), v(1.0, 2.0), v(2.0, 3.0)];
        let [a, b] = positive_w_fan(&all);
        assert_eq!(a.map(|t| t[2].pos), Some([2.0, 0.0, 0.0, 3.0]));
        assert!(b.is_none());
        // One vertex behind the eye: the plane cuts two edges, a quad (two triangles).
        let one = [v(0.0, 1.0), v(1.0, 1.0), v(2.0, -1.0)];
        let [a, b] = positive_w_fan(&one);
        let (a, b) = (a.expect("first"), b.expect("second"));
        for t in [a, b] {
            assert!(t.iter().all(|p| p.pos[3] >= PROJECTION_W_MIN * 0.999));
        }
        // Two behind: one smaller triangle.
        let two = [v(0.0, 1.0), v(1.0, -1.0), v(2.0, -1.0)];
        let [a, b] = positive_w_fan(&two);
        assert!(a.is_some() && b.is_none());
        // All behind, or NaN: nothing.
        assert_eq!(positive_w_fan(&[v(0.0, -1.0); 3]), [None, None]);
        assert_eq!(positive_w_fan(&[v(f32::NAN, 1.0); 3]), [None, None]);
    }
}
