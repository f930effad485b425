//! Rasterisation: triangle setup, coverage, depth and attribute interpolation
//! (`pica-raster.md` §3.3-§3.4, §4).
//!
//! Stage: after clipping and the viewport transform, before texturing and the colour combiners.
//! Input: a triangle of [`ScreenVertex`] (window coordinates, y up) and a [`RasterConfig`] decoded
//! once per draw from the registers. Output: one [`Fragment`] per covered pixel, handed to a
//! caller-supplied closure; nothing is allocated per triangle or per pixel.
//!
//! Registers read (all through [`RasterConfig::from_regs`], via the typed views of
//! [`pica_cmd::regs::Regs`]):
//! 0x040 FACECULLING_CONFIG, 0x065 SCISSORTEST_MODE, 0x066 SCISSORTEST_POS, 0x067 SCISSORTEST_DIM,
//! the depth map 0x04D/0x04E/0x06D (via [`crate::geometry::viewport::DepthMap`]) and the render-target
//! size from 0x11E FRAMEBUFFER_DIM (via [`crate::pixel::framebuffer::FramebufferConfig`]).
//!
//! # Method
//!
//! * Vertex x/y are converted to **12.4 fixed point** with `round(v·16)` and kept in signed
//!   integers (Citra stores them as u16 and wraps negative positions; we do not). Edge functions
//!   are evaluated in i64, so no input can overflow them.
//! * Culling and winding follow §4.2 ([`CullMode`]); zero-area triangles are never drawn.
//! * Coverage: the sample point of pixel (x, y) is its centre `(16x + 8, 16y + 8)`; a pixel is
//!   covered when the three biased edge functions are ≥ 0 ([`FILL_RULE`]).
//! * The bounding box is clipped to the render target (and to the scissor box in include mode)
//!   **before** any pixel is visited, so a huge triangle costs at most one pass over the target.
//! * Pixels are visited in 8×8 blocks aligned to the framebuffer's memory tiles (memory rows are
//!   `H − 1 − y`), so the fragment stage can keep one tile of colour and depth in a small cache.
//!   Blocks that lie entirely outside one edge are skipped without visiting their pixels.
//! * Depth: z/w interpolates linearly in screen space; `depth = zw·scale + offset`, times the
//!   perspective-correct w in w-buffer mode, clamped to [0, 1] (§3.3).
//! * Attributes: perspective-correct `Σ bᵢ·(Aᵢ/wᵢ) / Σ bᵢ·(1/wᵢ)` with the integer edge values
//!   bᵢ as weights, in the same order of f32 operations as Citra's software rasteriser (§4.4).
//!   The primary colour is rounded to u8 (round half away from zero); the quaternion is normalised
//!   per pixel; the view vector is not normalised.

use crate::geometry::viewport::{DepthMap, DepthMode};
use crate::pixel::framebuffer::FramebufferConfig;
use crate::vertex::ScreenVertex;
use pica_cmd::regs::Regs;

/// Bits of sub-pixel precision of the rasteriser (12.4 fixed point).
pub const SUBPIXEL_BITS: u32 = 4;
/// One pixel in fixed-point units.
const ONE: i64 = 1 << SUBPIXEL_BITS;
/// Half a pixel in fixed-point units (the pixel-centre offset).
const HALF: i64 = ONE / 2;
/// Largest magnitude of a fixed-point coordinate we accept (±2^24 units = ±1 Mi pixels). Larger
/// (or NaN) vertex positions make the triangle [`TriangleOutcome::Invalid`]; real positions after
/// clipping are within a few thousand pixels.
const MAX_FIXED: f32 = (1u32 << 24) as f32;

/// Which fill rule decides ownership of pixel centres that lie exactly on an edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FillRule {
    /// Left edges and flat-bottom edges (y up) own their pixels; right and flat-top edges do not
    /// (the vertical mirror of Direct3D's top-left rule; Citra's "PSP filling rules").
    BottomLeft,
    /// No bias: every pixel centre on any edge is covered (shared edges are drawn twice).
    Inclusive,
}

/// The fill rule in use.
///
/// UNVERIFIED: Citra's software rasteriser uses [`FillRule::BottomLeft`] and notes "These are the
/// PSP filling rules. Not sure if the 3DS uses the same ones" (`pica-raster.md` §4.3, §13.2). We
/// follow it: it is the only documented rule and it makes shared edges exact (no gaps, no double
/// hits). Citra decides "is the opposite vertex left of the edge" with a truncating integer
/// division; we use the exact sign of the cross product, which differs only for vertices within
/// 1/16 pixel of the opposite edge's line.
pub const FILL_RULE: FillRule = FillRule::BottomLeft;

/// Face culling mode (reg 0x040 FACECULLING_CONFIG bits 0-1, unsigned 2-bit enum).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum CullMode {
    /// 0: nothing is culled; clockwise triangles are drawn with their vertices reordered.
    None,
    /// 1: front faces (counter-clockwise in window coordinates, y up) are culled.
    Front,
    /// 2: back faces (clockwise) are culled.
    Back,
    /// 3: undocumented.
    /// UNVERIFIED: behaves as [`CullMode::Back`] (Citra's code path); hardware unknown.
    Reserved3,
}

impl CullMode {
    /// Decodes the 2-bit field.
    pub const fn from_bits(bits: u32) -> Self {
        match bits & 3 {
            0 => Self::None,
            1 => Self::Front,
            2 => Self::Back,
            _ => Self::Reserved3,
        }
    }
}

/// Scissor test mode (reg 0x065 SCISSORTEST_MODE bits 0-1, unsigned 2-bit enum).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ScissorMode {
    /// 0 (and 2, see [`ScissorMode::from_bits`]): no scissor test.
    Disabled,
    /// 1: pixels whose centre lies inside the box are discarded.
    Exclude,
    /// 3: pixels whose centre lies outside the box are discarded.
    Include,
}

impl ScissorMode {
    /// Decodes the 2-bit field.
    ///
    /// UNVERIFIED: value 2 is undocumented; Citra treats it as disabled and so do we.
    pub const fn from_bits(bits: u32) -> Self {
        match bits & 3 {
            1 => Self::Exclude,
            3 => Self::Include,
            _ => Self::Disabled,
        }
    }
}

/// Scissor box in window pixels, both corners inclusive (regs 0x066/0x067: x bits 0-9, y bits
/// 16-25, unsigned 10-bit integers).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct ScissorBox {
    /// Left column (inclusive).
    pub x1: u32,
    /// Bottom row (inclusive; window y grows up).
    pub y1: u32,
    /// Right column (inclusive).
    pub x2: u32,
    /// Top row (inclusive).
    pub y2: u32,
}

impl ScissorBox {
    /// True if the pixel (x, y) lies inside the box.
    #[inline]
    pub const fn contains(&self, x: u32, y: u32) -> bool {
        x >= self.x1 && x <= self.x2 && y >= self.y1 && y <= self.y2
    }
}

/// Which attributes the rasteriser interpolates (the rest are left at 0 in the [`Fragment`]).
///
/// Skipping unused attributes is pure speed: the values would not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Varyings {
    /// Texture coordinates 0/1/2 and texcoord0.w.
    pub texcoords: bool,
    /// Screen-space derivatives of the texture coordinates (for texture LOD).
    pub texcoord_gradients: bool,
    /// Normal quaternion and view vector (fragment lighting).
    pub lighting: bool,
    /// Of the texture coordinates only texcoord 0 (u, v) is read, and of the gradients only
    /// texcoord 0's (`tc_grad[0]`): with `texcoords` on and lighting off, the fast traversal
    /// interpolates the colour and texcoord 0 alone (and with `texcoord_gradients` its u, v
    /// gradients alone) and leaves texcoords 1 and 2, texcoord0.w and their gradients at 0. The
    /// reference traversal ignores it (it interpolates what `texcoords` asks for). Set by the
    /// pixel pipeline only when no stage of the draw reads the other coordinates (units 1 and 2
    /// unread, unit 0 a plain 2D texture, the procedural texture on texcoord 0, no lighting).
    pub texcoord0_only: bool,
    /// No stage reads the fragment's depth (no depth or stencil buffer access, no fog, normal
    /// fragment mode): the fast traversal leaves [`Fragment::depth`] at 0. The reference
    /// traversal ignores it.
    pub skip_depth: bool,
}

impl Varyings {
    /// Everything interpolated.
    pub const ALL: Varyings = Varyings {
        texcoords: true,
        texcoord_gradients: true,
        lighting: true,
        texcoord0_only: false,
        skip_depth: false,
    };
}

/// Rasteriser configuration, decoded once per draw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RasterConfig {
    /// Face culling.
    pub cull: CullMode,
    /// Scissor mode.
    pub scissor_mode: ScissorMode,
    /// Scissor box (used unless the mode is disabled).
    pub scissor: ScissorBox,
    /// The depth map (regs 0x04D, 0x04E, 0x06D), decoded by [`DepthMap::from_regs`].
    pub depth: DepthMap,
    /// Render-target width in pixels (pixels at x ≥ width are never produced).
    pub width: u32,
    /// Render-target height in pixels (pixels at y ≥ height are never produced).
    pub height: u32,
    /// Which attributes to interpolate.
    pub varyings: Varyings,
}

impl RasterConfig {
    /// Decodes the rasteriser registers (see the module doc). Everything is interpolated; callers
    /// that know better (the fragment pipeline) narrow [`RasterConfig::varyings`].
    pub fn from_regs(regs: &[u32; 0x300]) -> Self {
        let r = Regs::new(regs);
        let fb = FramebufferConfig::from_regs(regs);
        let sc = r.scissor();
        RasterConfig {
            cull: CullMode::from_bits(r.cull_mode().raw()),
            scissor_mode: ScissorMode::from_bits(sc.mode.raw()),
            scissor: ScissorBox {
                x1: u32::from(sc.x1),
                y1: u32::from(sc.y1),
                x2: u32::from(sc.x2),
                y2: u32::from(sc.y2),
            },
            depth: DepthMap::from_regs(regs),
            width: fb.width,
            height: fb.height,
            varyings: Varyings::ALL,
        }
    }
}

/// One covered pixel with its interpolated values.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fragment {
    /// Window x in pixels (0 = left).
    pub x: u32,
    /// Window y in pixels (0 = bottom; memory row `height − 1 − y`).
    pub y: u32,
    /// Depth in [0, 1] after the depth map (and the w-buffer product), clamped.
    pub depth: f32,
    /// Primary (vertex) colour, each channel `round(c·255)` (unsigned 0.8 fixed point).
    pub color: [u8; 4],
    /// Texture coordinates 0, 1, 2 as (u, v) (0 when not interpolated).
    pub tc: [[f32; 2]; 3],
    /// Texture coordinate 0 w (cube maps, projection and shadow textures).
    pub tc0_w: f32,
    /// Screen-space derivatives of each texture coordinate: `[du/dx, dv/dx, du/dy, dv/dy]` per
    /// pixel step (0 unless [`Varyings::texcoord_gradients`]). Exact derivatives of the
    /// perspective-correct interpolant, not finite differences; y is window y (up).
    pub tc_grad: [[f32; 4]; 3],
    /// Screen-space derivatives of texcoord0.w: `[dw/dx, dw/dy]` (as [`Fragment::tc_grad`]).
    pub tc0_w_grad: [f32; 2],
    /// Normal quaternion (x, y, z, w), normalised (0 when not interpolated or degenerate).
    pub quat: [f32; 4],
    /// View vector (x, y, z), not normalised.
    pub view: [f32; 3],
}

/// What happened to a triangle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriangleOutcome {
    /// Rasterised; `fragments` pixels were covered (after scissor and render-target clipping).
    Drawn {
        /// Covered pixels handed to the fragment closure.
        fragments: u64,
    },
    /// Removed by face culling.
    Culled,
    /// Zero area in 12.4 fixed point: covers nothing.
    Degenerate,
    /// A vertex position was NaN, infinite or absurdly far away (beyond ±2^20 pixels).
    Invalid,
}

/// Number of interpolated scalars: colour 4, tc0/tc1/tc2 6, tc0.w 1, quaternion 4, view 3.
const N_ATTR: usize = 18;
const A_COLOR: usize = 0;
const A_TC: usize = 4;
const A_TC0W: usize = 10;
// The gradient code treats A_TC..=A_TC0W as 7 consecutive scalars.
const _: () = assert!(A_TC0W == A_TC + 6);
const A_QUAT: usize = 11;
const A_VIEW: usize = 15;

/// The vertex's attributes in interpolation order. The quaternion is normalised only when it
/// is interpolated (`quat`; else its entries are never read and hold the raw values): the
/// square root and four divisions per vertex are a per-triangle cost of every unlit draw.
#[inline]
fn attr_array(v: &ScreenVertex, quat: bool) -> [f32; N_ATTR] {
    let a = &v.attrs;
    let q = if quat {
        unit_quaternion(a.quat)
    } else {
        a.quat
    };
    [
        a.color[0], a.color[1], a.color[2], a.color[3], a.tc0[0], a.tc0[1], a.tc1[0], a.tc1[1],
        a.tc2[0], a.tc2[1], a.tc0_w, q[0], q[1], q[2], q[3], a.view[0], a.view[1], a.view[2],
    ]
}

/// A vertex's normal quaternion normalised before interpolation.
///
/// HW: hardware fact CR-5 (yuriks' test, Citra PRs #2726/#2729): each vertex quaternion is
/// normalised, the unit quaternions are interpolated linearly and the fragment renormalises.
/// A zero, NaN or infinite length leaves the quaternion as it is (the fragment then gets 0).
#[inline]
fn unit_quaternion(q: [f32; 4]) -> [f32; 4] {
    let len = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if len > 0.0 && len.is_finite() {
        q.map(|c| c / len)
    } else {
        q
    }
}

/// Converts a window coordinate to signed 12.4 fixed point (`round(v·16)`).
#[inline]
fn to_fixed(v: f32) -> Option<i64> {
    let f = (v * ONE as f32).round();
    // NaN fails the comparison and is rejected like out-of-range values.
    if f.abs() <= MAX_FIXED {
        Some(f as i64)
    } else {
        None
    }
}

/// Signed doubled area of (a, b, c) in 1/256 px² (positive = counter-clockwise, y up).
#[inline]
fn area(a: [i64; 2], b: [i64; 2], c: [i64; 2]) -> i64 {
    (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
}

/// Bias of the edge (l1, l2) opposite vertex `v` of a counter-clockwise triangle: −1 if the edge
/// is a right edge or a flat-top edge (it does not own pixel centres on it), else 0.
#[inline]
fn edge_bias(v: [i64; 2], l1: [i64; 2], l2: [i64; 2]) -> i64 {
    if FILL_RULE == FillRule::Inclusive {
        return 0;
    }
    let dy = l2[1] - l1[1];
    let not_owned = if dy == 0 {
        // Horizontal edge: it is the top of the triangle when the opposite vertex is below it.
        v[1] < l1[1]
    } else {
        // "The opposite vertex lies left of the edge line at its own y" ⇔ the edge is a right
        // edge. Exact form of x_v < x_l1 + dx·(y_v − y_l1)/dy, multiplied through by dy.
        let c = (l2[0] - l1[0]) * (v[1] - l1[1]) - dy * (v[0] - l1[0]);
        (dy > 0 && c > 0) || (dy < 0 && c < 0)
    };
    if not_owned { -1 } else { 0 }
}

/// One edge function `b = bias + Area(a, b, p)` as `c0 + cx·px + cy·py` over pixel indices
/// (px, py), sample point = pixel centre.
#[derive(Clone, Copy, Debug)]
struct Edge {
    /// Value at pixel (0, 0).
    c0: i64,
    /// Change per pixel step in x.
    cx: i64,
    /// Change per pixel step in y.
    cy: i64,
}

impl Edge {
    fn new(a: [i64; 2], b: [i64; 2], bias: i64) -> Self {
        // Area(a, b, p) = (b.x − a.x)(p.y − a.y) − (b.y − a.y)(p.x − a.x), p = 16·px + 8.
        let dx = b[0] - a[0];
        let dy = b[1] - a[1];
        let c0 = bias + dx * (HALF - a[1]) - dy * (HALF - a[0]);
        Edge {
            c0,
            cx: -dy * ONE,
            cy: dx * ONE,
        }
    }

    #[inline]
    fn at(&self, px: i64, py: i64) -> i64 {
        self.c0 + self.cx * px + self.cy * py
    }
}

/// Per-triangle constants for interpolation.
struct Setup {
    /// Attributes of each vertex pre-multiplied by 1/w.
    attr_w: [[f32; N_ATTR]; 3],
    /// 1/w of each vertex.
    inv_w: [f32; 3],
    /// z/w of each vertex.
    z: [f32; 3],
    /// Number of leading attributes to interpolate.
    n_attr: usize,
    /// For gradients: Σ (∂bᵢ/∂x)·(Aᵢ/wᵢ) and Σ (∂bᵢ/∂y)·(Aᵢ/wᵢ) for the 6 texcoord scalars
    /// and texcoord0.w (attribute indices `A_TC..=A_TC0W`).
    n_dx: [f32; 7],
    n_dy: [f32; 7],
    /// Σ (∂bᵢ/∂x)/wᵢ and Σ (∂bᵢ/∂y)/wᵢ.
    d_dx: f32,
    d_dy: f32,
}

/// Rasterises one triangle, calling `emit` once per covered pixel.
///
/// Vertex order matters only for culling (§4.2). Work is bounded by the render-target area no
/// matter how large the triangle; NaN or absurd positions give [`TriangleOutcome::Invalid`].
pub fn rasterize_triangle<F: FnMut(&Fragment)>(
    cfg: &RasterConfig,
    tri: &[ScreenVertex; 3],
    emit: F,
) -> TriangleOutcome {
    rasterize_triangle_bands(cfg, tri, None, emit)
}

/// A share of the render target's memory tile rows (8 memory rows each, memory row
/// `H − 1 − y`): tile row `r` belongs to share `r % count`. The parallel pixel path gives each
/// worker one share, so no two workers touch the same 8×8 tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowBands {
    /// Number of shares (≥ 1).
    pub count: u32,
    /// This share, `0..count`.
    pub index: u32,
}

impl RowBands {
    /// True if memory tile row `tile_row` belongs to this share.
    #[inline]
    pub fn owns(self, tile_row: i64) -> bool {
        tile_row.rem_euclid(i64::from(self.count.max(1))) == i64::from(self.index)
    }
}

/// A triangle after culling, winding and clipping: what both traversals start from.
struct Prepared<'a> {
    /// The vertices in counter-clockwise order.
    sv: [&'a ScreenVertex; 3],
    /// Edge functions; `e[i]` is the edge opposite vertex `i`.
    e: [Edge; 3],
    /// Pixel bounding box, inclusive, clipped to the target (and the scissor in include mode).
    x0: i64,
    x1: i64,
    y0: i64,
    y1: i64,
}

/// Triangle setup (§4.2-§4.3): fixed-point conversion, culling, winding, the clipped bounding
/// box and the edge functions. `Err` carries the outcome of a triangle that covers nothing.
fn prepare<'a>(
    cfg: &RasterConfig,
    tri: &'a [ScreenVertex; 3],
) -> Result<Prepared<'a>, TriangleOutcome> {
    let mut pos = [[0i64; 2]; 3];
    for (p, v) in pos.iter_mut().zip(tri) {
        match (to_fixed(v.x), to_fixed(v.y)) {
            (Some(x), Some(y)) => *p = [x, y],
            _ => return Err(TriangleOutcome::Invalid),
        }
    }

    // Culling and winding (§4.2): end up with a counter-clockwise order (positive area).
    let a = area(pos[0], pos[1], pos[2]);
    let mut order = [0usize, 1, 2];
    match cfg.cull {
        CullMode::None => {
            if a == 0 {
                return Err(TriangleOutcome::Degenerate);
            }
            if a < 0 {
                order = [0, 2, 1];
            }
        }
        CullMode::Front => {
            // Keep clockwise triangles, drawn reversed.
            if a >= 0 {
                return Err(if a == 0 {
                    TriangleOutcome::Degenerate
                } else {
                    TriangleOutcome::Culled
                });
            }
            order = [0, 2, 1];
        }
        CullMode::Back | CullMode::Reserved3 => {
            if a <= 0 {
                return Err(if a == 0 {
                    TriangleOutcome::Degenerate
                } else {
                    TriangleOutcome::Culled
                });
            }
        }
    }
    let v = [pos[order[0]], pos[order[1]], pos[order[2]]];
    let sv = [&tri[order[0]], &tri[order[1]], &tri[order[2]]];

    // Pixel bounding box: min rounded down, max rounded up (exclusive), then clipped.
    let min_x = v[0][0].min(v[1][0]).min(v[2][0]);
    let max_x = v[0][0].max(v[1][0]).max(v[2][0]);
    let min_y = v[0][1].min(v[1][1]).min(v[2][1]);
    let max_y = v[0][1].max(v[1][1]).max(v[2][1]);
    let mut x0 = min_x.div_euclid(ONE);
    let mut x1 = (max_x + ONE - 1).div_euclid(ONE) - 1; // inclusive
    let mut y0 = min_y.div_euclid(ONE);
    let mut y1 = (max_y + ONE - 1).div_euclid(ONE) - 1;
    x0 = x0.max(0);
    y0 = y0.max(0);
    x1 = x1.min(i64::from(cfg.width) - 1);
    y1 = y1.min(i64::from(cfg.height) - 1);
    if cfg.scissor_mode == ScissorMode::Include {
        x0 = x0.max(i64::from(cfg.scissor.x1));
        y0 = y0.max(i64::from(cfg.scissor.y1));
        x1 = x1.min(i64::from(cfg.scissor.x2));
        y1 = y1.min(i64::from(cfg.scissor.y2));
    }
    if x0 > x1 || y0 > y1 {
        return Err(TriangleOutcome::Drawn { fragments: 0 });
    }

    // Edge functions (§4.3): bᵢ uses the edge opposite vertex i.
    let e = [
        Edge::new(v[1], v[2], edge_bias(v[0], v[1], v[2])),
        Edge::new(v[2], v[0], edge_bias(v[1], v[2], v[0])),
        Edge::new(v[0], v[1], edge_bias(v[2], v[0], v[1])),
    ];
    Ok(Prepared {
        sv,
        e,
        x0,
        x1,
        y0,
        y1,
    })
}

/// As [`rasterize_triangle`], visiting only the memory tile rows of `bands` (all rows for
/// `None`). Every fragment gets exactly the values it gets from [`rasterize_triangle`]: edge
/// values are evaluated per block from the triangle's integer setup, never accumulated across
/// rows. The outcome's kind does not depend on `bands`; its fragment count is this share's.
///
/// This is the fast traversal (see [`fast`]); [`rasterize_triangle_reference`] is the plain
/// per-pixel one it is tested against, and both hand out the same fragments in the same order.
pub fn rasterize_triangle_bands<F: FnMut(&Fragment)>(
    cfg: &RasterConfig,
    tri: &[ScreenVertex; 3],
    bands: Option<RowBands>,
    emit: F,
) -> TriangleOutcome {
    let mut emit = emit;
    rasterize_triangle_batched(cfg, tri, bands, |frags| {
        for f in frags {
            emit(f);
        }
    })
}

/// Fragments per batch of [`rasterize_triangle_batched`] (at most).
pub const FRAGMENT_BATCH: usize = fast::BATCH;

/// As [`rasterize_triangle_bands`], handing the fragments to `emit` in batches (slices of at
/// most [`FRAGMENT_BATCH`] fragments) instead of one call per fragment: the concatenation of
/// the batches is exactly the fragment sequence of [`rasterize_triangle_bands`]. The caller's
/// per-fragment code then runs in its own loop (no call per pixel).
pub fn rasterize_triangle_batched<F: FnMut(&[Fragment])>(
    cfg: &RasterConfig,
    tri: &[ScreenVertex; 3],
    bands: Option<RowBands>,
    emit: F,
) -> TriangleOutcome {
    match prepare(cfg, tri) {
        Ok(p) => fast::traverse(cfg, &p, bands, emit),
        Err(o) => o,
    }
}

/// The reference rasteriser: the same setup as [`rasterize_triangle`], then every pixel of
/// each 8×8 block that is not trivially rejected is tested against the three edge functions and
/// interpolated by the generic code. It is the oracle of the fast traversal and what the pixel
/// pipeline's [`crate::pixel::fragment::PixelPath::Reference`] path (and its debugging hooks)
/// run. Same fragments, same values, same order as [`rasterize_triangle`].
pub fn rasterize_triangle_reference<F: FnMut(&Fragment)>(
    cfg: &RasterConfig,
    tri: &[ScreenVertex; 3],
    mut emit: F,
) -> TriangleOutcome {
    let p = match prepare(cfg, tri) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let (e, x0, x1, y0, y1) = (p.e, p.x0, p.x1, p.y0, p.y1);
    let setup = make_setup(cfg, &p.sv, &e);

    // Traverse in 8×8 blocks aligned to memory tiles: memory row ym = H − 1 − y.
    let h = i64::from(cfg.height);
    let ym_lo = h - 1 - y1;
    let ym_hi = h - 1 - y0;
    let exclude = cfg.scissor_mode == ScissorMode::Exclude;
    let mut frag = Fragment::default();
    let mut count = 0u64;
    let mut tile_row = ym_lo >> 3;
    while tile_row <= ym_hi >> 3 {
        // Window rows of this tile row, intersected with [y0, y1].
        let by_hi = (h - 1 - (tile_row << 3)).min(y1);
        let by_lo = (h - 1 - ((tile_row << 3) + 7)).max(y0);
        let mut tile_col = x0 >> 3;
        while tile_col <= x1 >> 3 {
            let bx_lo = (tile_col << 3).max(x0);
            let bx_hi = ((tile_col << 3) + 7).min(x1);
            tile_col += 1;
            // Trivial reject: an edge function is affine, so its maximum over the block is at a
            // corner; if it is negative at all four, no pixel of the block is covered.
            if e.iter().any(|ed| {
                ed.at(bx_lo, by_lo) < 0
                    && ed.at(bx_hi, by_lo) < 0
                    && ed.at(bx_lo, by_hi) < 0
                    && ed.at(bx_hi, by_hi) < 0
            }) {
                continue;
            }
            let mut py = by_hi;
            while py >= by_lo {
                let mut b = [e[0].at(bx_lo, py), e[1].at(bx_lo, py), e[2].at(bx_lo, py)];
                for px in bx_lo..=bx_hi {
                    if b[0] >= 0 && b[1] >= 0 && b[2] >= 0 {
                        // ok: px, py are within [0, width) × [0, height), both ≤ 2047.
                        let (ux, uy) = (px as u32, py as u32);
                        if !(exclude && cfg.scissor.contains(ux, uy)) {
                            frag.x = ux;
                            frag.y = uy;
                            interpolate(cfg, &setup, b, &mut frag);
                            emit(&frag);
                            count += 1;
                        }
                    }
                    b[0] += e[0].cx;
                    b[1] += e[1].cx;
                    b[2] += e[2].cx;
                }
                py -= 1;
            }
        }
        tile_row += 1;
    }
    TriangleOutcome::Drawn { fragments: count }
}

fn make_setup(cfg: &RasterConfig, sv: &[&ScreenVertex; 3], e: &[Edge; 3]) -> Setup {
    let vary = cfg.varyings;
    let n_attr = if vary.lighting {
        N_ATTR
    } else if vary.texcoords || vary.texcoord_gradients {
        A_QUAT
    } else {
        A_TC
    };
    let mut attr_w = [[0f32; N_ATTR]; 3];
    let mut inv_w = [0f32; 3];
    let mut z = [0f32; 3];
    for i in 0..3 {
        let iw = sv[i].inv_w;
        inv_w[i] = iw;
        z[i] = sv[i].z_over_w;
        let a = attr_array(sv[i], n_attr == N_ATTR);
        for k in 0..n_attr {
            attr_w[i][k] = a[k] * iw;
        }
    }
    let mut s = Setup {
        attr_w,
        inv_w,
        z,
        n_attr,
        n_dx: [0.0; 7],
        n_dy: [0.0; 7],
        d_dx: 0.0,
        d_dy: 0.0,
    };
    if vary.texcoord_gradients {
        for i in 0..3 {
            let (bx, by) = (e[i].cx as f32, e[i].cy as f32);
            s.d_dx += bx * inv_w[i];
            s.d_dy += by * inv_w[i];
            for k in 0..7 {
                s.n_dx[k] += bx * s.attr_w[i][A_TC + k];
                s.n_dy[k] += by * s.attr_w[i][A_TC + k];
            }
        }
    }
    s
}

/// `round(y)` (half away from zero) saturated to 0..=255; NaN gives 0. Same result as
/// `y.round() as u8` without the libm call.
#[inline]
fn round_to_u8(y: f32) -> u8 {
    // NaN and y ≤ 0 both give 0.
    if y.is_nan() || y <= 0.0 {
        return 0;
    }
    if y >= 255.0 {
        return 255;
    }
    let i = y as u32; // 0..=254, truncated
    // y − i is exact (i = 0, or i ≥ y/2 and Sterbenz's lemma), so this is an exact half test.
    let up = u32::from(y - i as f32 >= 0.5);
    (i + up) as u8
}

#[inline(always)]
fn interpolate(cfg: &RasterConfig, s: &Setup, b: [i64; 3], f: &mut Fragment) {
    // The edge values are at most ~2^52 in magnitude; f32 keeps 24 bits of them, as Citra does.
    let w = [b[0] as f32, b[1] as f32, b[2] as f32];
    let wsum = w[0] + w[1] + w[2];
    // Σ bᵢ/wᵢ; positive for a covered pixel of a triangle with positive 1/w.
    let d = w[0] * s.inv_w[0] + w[1] * s.inv_w[1] + w[2] * s.inv_w[2];
    let inv_d = 1.0 / d;

    let zw = (s.z[0] * w[0] + s.z[1] * w[1] + s.z[2] * w[2]) / wsum;
    // w-buffer: z·scale + w·offset = (z/w·scale + offset)·w with w = wsum / Σ bᵢ/wᵢ.
    let w_pix = if cfg.depth.mode == DepthMode::WBuffer {
        inv_d * wsum
    } else {
        1.0
    };
    // Clamped to [0, 1]; NaN (degenerate 1/w) becomes 0.
    f.depth = cfg.depth.depth(zw, w_pix);

    let mut out = [0f32; N_ATTR];
    for (k, o) in out.iter_mut().enumerate().take(s.n_attr) {
        *o = (s.attr_w[0][k] * w[0] + s.attr_w[1][k] * w[1] + s.attr_w[2][k] * w[2]) * inv_d;
    }
    // Assembled in a register and stored once (byte-wise stores followed by a 4-byte load of
    // the colour would defeat store-to-load forwarding in the fragment stage).
    let mut rgba = 0u32;
    for c in 0..4 {
        rgba |= u32::from(round_to_u8(out[A_COLOR + c] * 255.0)) << (8 * c);
    }
    f.color = rgba.to_le_bytes();
    if s.n_attr > A_TC {
        f.tc = [
            [out[A_TC], out[A_TC + 1]],
            [out[A_TC + 2], out[A_TC + 3]],
            [out[A_TC + 4], out[A_TC + 5]],
        ];
        f.tc0_w = out[A_TC0W];
        if cfg.varyings.texcoord_gradients {
            // A = N/D  ⇒  ∂A/∂x = (∂N/∂x − A·∂D/∂x) / D.
            for unit in 0..3 {
                let (ku, kv) = (2 * unit, 2 * unit + 1);
                let (u, v) = (out[A_TC + ku], out[A_TC + kv]);
                f.tc_grad[unit] = [
                    (s.n_dx[ku] - u * s.d_dx) * inv_d,
                    (s.n_dx[kv] - v * s.d_dx) * inv_d,
                    (s.n_dy[ku] - u * s.d_dy) * inv_d,
                    (s.n_dy[kv] - v * s.d_dy) * inv_d,
                ];
            }
            let (k, w) = (A_TC0W - A_TC, out[A_TC0W]);
            f.tc0_w_grad = [
                (s.n_dx[k] - w * s.d_dx) * inv_d,
                (s.n_dy[k] - w * s.d_dy) * inv_d,
            ];
        }
    }
    if s.n_attr == N_ATTR {
        let q = [
            out[A_QUAT],
            out[A_QUAT + 1],
            out[A_QUAT + 2],
            out[A_QUAT + 3],
        ];
        let len = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
        f.quat = if len > 0.0 && len.is_finite() {
            [q[0] / len, q[1] / len, q[2] / len, q[3] / len]
        } else {
            [0.0; 4]
        };
        f.view = [out[A_VIEW], out[A_VIEW + 1], out[A_VIEW + 2]];
    }
}

mod fast;

#[cfg(test)]
mod tests;
