//! Texture sampling: coordinates → wrap/border → nearest or bilinear texels → mip levels
//! (`pica-raster.md` §5.5-§5.8).
//!
//! Stage: texture units 0-2 of the fragment pipeline. Inputs: a [`TextureConfig`] (decoded from
//! regs 0x080-0x09E), texture data (read from [`PhysMem`] through [`MemTexels`], or pre-decoded
//! [`DecodedTexels`]), per-fragment texture coordinates and their screen-space derivatives;
//! output: an RGBA8 colour for the combiners.
//!
//! Conventions: u, v are normalised coordinates with v = 0 at the **bottom** of the image; the
//! integer row t is converted to memory row `H − 1 − t` (`pica-raster.md` §5.3, hardware
//! behaviour both emulators reproduce). Texel centres are at `(i + 0.5) / size`.
//!
//! What is known and what is chosen:
//! * Citra's software rasterizer samples nearest only, ignores filters, LOD and mip levels
//!   (\[C\] rasterizer.cpp). Citra GL and Panda forward filters, LOD bias and clamps to OpenGL, and
//!   Citra PR #3910 states the PICA's LOD calculation "basically matches" OpenGL. We therefore
//!   implement the OpenGL model: `λ = log2(max(|∂(u·W, v·H)/∂x|, |∂(u·W, v·H)/∂y|))`, then
//!   `λ + bias` clamped to `[min_level, max_level]`; λ ≤ 0 uses the magnification filter on level
//!   0 (or min_level), λ > 0 the minification filter with the mip filter between levels.
//! * UNVERIFIED: the hardware's filter-weight precision and LOD rounding are undocumented (PR
//!   #3910's hardware test showed slightly different mip transition points than OpenGL). We use
//!   [`FILTER_FRAC_BITS`] fractional bits for bilinear and mip weights with round-to-nearest;
//!   the alternative is exact f32 weights (set the const to a larger value to approach it).
//! * UNVERIFIED: nearest sampling uses `floor(u·W)` (OpenGL, Citra GL, Panda); Citra SW truncates
//!   toward zero, which maps u ∈ (−1/W, 0) to texel 0 instead of −1. Switch with
//!   [`NEAREST_TRUNCATES_TOWARD_ZERO`]. [`RenderMode::CitraSwrast`] (set through
//!   [`TextureConfig::with_mode`]) always truncates, and samples nearest from level 0 only.

use crate::memory::PhysMem;
use crate::pixel::color::Rgba;
use crate::pixel::fastmath::{floor_i32, floor_i64};

use super::TextureError;
use super::config::{
    CubeFace, Filter, LevelLayout, MAX_LEVELS, RenderMode, TextureConfig, TextureType,
};
use super::format::TextureFormat;

/// Fractional bits of the bilinear and mip-blend weights.
///
/// UNVERIFIED: hardware precision unknown; 8 bits (weights in 1/256) is a guess typical of
/// fixed-function GPUs of the era. Valid range 1..=12 (larger values would overflow the u32
/// accumulators for 8-bit channels).
pub const FILTER_FRAC_BITS: u32 = 8;

/// Whether nearest sampling truncates `u·W` toward zero (Citra SW) instead of flooring
/// (OpenGL / Citra GL / Panda). UNVERIFIED either way; see the module doc.
pub const NEAREST_TRUNCATES_TOWARD_ZERO: bool = false;

/// Screen-space derivatives of the texture coordinates (u, v, w) of one fragment:
/// `dx[i] = ∂coord_i/∂x`, `dy[i] = ∂coord_i/∂y` (normalised units per pixel). `w` (tc0.w) is only
/// used by projective, cube and shadow lookups.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Gradients {
    /// Derivatives along window x.
    pub dx: [f32; 3],
    /// Derivatives along window y.
    pub dy: [f32; 3],
}

impl Gradients {
    /// No derivatives: λ = −∞, i.e. the magnification filter on the lowest allowed level.
    pub const ZERO: Gradients = Gradients {
        dx: [0.0; 3],
        dy: [0.0; 3],
    };

    /// Derivatives of (u, v) only.
    pub const fn uv(du_dx: f32, dv_dx: f32, du_dy: f32, dv_dy: f32) -> Self {
        Self {
            dx: [du_dx, dv_dx, 0.0],
            dy: [du_dy, dv_dy, 0.0],
        }
    }
}

/// Where a sampler gets texels from. `face` is a [`CubeFace`] index (0 for 2D textures),
/// `level` a valid level of the layout, `x < width`, `y < height` of that level, y a **memory
/// row** (0 = top).
pub trait TexelSource {
    /// The decoded texel.
    fn texel(&self, face: usize, level: usize, x: u32, y: u32) -> Rgba;
}

type FetchFn = fn(&PhysMem, u32, u32, u32, u32) -> Rgba;

/// Reads one texel of `F` (a [`TextureFormat`] id) from memory: `level_base` is the level's
/// physical address, `w` its width. Unreadable bytes read as zero (ranges are validated when the
/// sampler is built, so this only happens for inconsistent callers).
#[inline]
fn fetch_mem<const F: u32>(mem: &PhysMem, level_base: u32, x: u32, y: u32, w: u32) -> Rgba {
    // ok: F is one of the const ids 0..14 instantiated in `fetcher`.
    let format = TextureFormat::ALL[F as usize];
    let addr = level_base.wrapping_add(format.texel_offset(x, y, w));
    let n = format.fetch_bytes() as usize;
    let mut raw = [0u8; 16];
    match mem.slice_in_page(addr, n) {
        Some(s) => raw[..n].copy_from_slice(s),
        None => {
            if mem.read(addr, &mut raw[..n]).is_err() {
                raw = [0; 16];
            }
        }
    }
    format.fetch(&raw, x, y)
}

/// The monomorphised texel reader for `format` (format dispatch happens once, here).
fn fetcher(format: TextureFormat) -> FetchFn {
    use TextureFormat::*;
    match format {
        Rgba8 => fetch_mem::<0>,
        Rgb8 => fetch_mem::<1>,
        Rgb5a1 => fetch_mem::<2>,
        Rgb565 => fetch_mem::<3>,
        Rgba4 => fetch_mem::<4>,
        Ia8 => fetch_mem::<5>,
        Hilo8 => fetch_mem::<6>,
        I8 => fetch_mem::<7>,
        A8 => fetch_mem::<8>,
        Ia4 => fetch_mem::<9>,
        I4 => fetch_mem::<10>,
        A4 => fetch_mem::<11>,
        Etc1 => fetch_mem::<12>,
        Etc1a4 => fetch_mem::<13>,
    }
}

/// Texels read straight from physical memory on every fetch (no decoding up front; best for
/// few samples, e.g. a pixel picker, or for textures that change between draws).
#[derive(Clone, Copy)]
pub struct MemTexels<'m> {
    mem: &'m PhysMem,
    fetch: FetchFn,
    /// Base physical address of each level of each face.
    level_base: [[u32; MAX_LEVELS]; 6],
    widths: [u32; MAX_LEVELS],
}

impl std::fmt::Debug for MemTexels<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemTexels")
            .field("level_base", &self.level_base[0])
            .finish()
    }
}

impl TexelSource for MemTexels<'_> {
    #[inline]
    fn texel(&self, face: usize, level: usize, x: u32, y: u32) -> Rgba {
        let base = self
            .level_base
            .get(face)
            .and_then(|f| f.get(level))
            .copied()
            .unwrap_or(0);
        let w = self.widths.get(level).copied().unwrap_or(0);
        (self.fetch)(self.mem, base, x, y, w)
    }
}

/// Every level of every face decoded to RGBA8 once (memory row order); sampling is then a
/// plain array lookup. Best for draws that sample a texture many times.
#[derive(Clone, Debug, Default)]
pub struct DecodedTexels {
    texels: Vec<Rgba>,
    /// Start index into `texels` of each level of each face.
    start: [[usize; MAX_LEVELS]; 6],
    widths: [u32; MAX_LEVELS],
}

impl DecodedTexels {
    /// Every decoded texel (all levels of all faces, memory row order).
    pub(crate) fn texels(&self) -> &[Rgba] {
        &self.texels
    }

    /// Index into [`DecodedTexels::texels`] of the first texel of `level` of `face`.
    pub(crate) fn level_start(&self, face: usize, level: usize) -> usize {
        self.start
            .get(face)
            .and_then(|f| f.get(level))
            .copied()
            .unwrap_or(0)
    }
}

impl TexelSource for DecodedTexels {
    #[inline]
    fn texel(&self, face: usize, level: usize, x: u32, y: u32) -> Rgba {
        let start = self
            .start
            .get(face)
            .and_then(|f| f.get(level))
            .copied()
            .unwrap_or(0);
        let w = self.widths.get(level).copied().unwrap_or(0) as usize;
        self.texels
            .get(start + y as usize * w + x as usize)
            .copied()
            .unwrap_or([0; 4])
    }
}

/// A texture unit ready to sample: configuration, level layout and a texel source.
#[derive(Clone, Debug)]
pub struct Sampler<S> {
    source: S,
    config: TextureConfig,
    layout: LevelLayout,
    /// Highest usable level (min of the LOD max level and the last level of the layout).
    max_level: u32,
    /// Lowest usable level (LOD min level, at most `max_level`).
    min_level: u32,
    faces: usize,
}

/// Number of faces that a texture type reads.
fn face_count(t: TextureType) -> usize {
    if t.is_cube() { 6 } else { 1 }
}

/// Validates the configuration and memory ranges shared by both texel sources.
fn validate(
    mem: &PhysMem,
    config: &TextureConfig,
) -> Result<(TextureFormat, LevelLayout, usize), TextureError> {
    let format = config
        .format
        .ok_or(TextureError::InvalidFormat(config.format_id))?;
    if config.width == 0 || config.height == 0 {
        return Err(TextureError::EmptySize {
            width: config.width,
            height: config.height,
        });
    }
    let layout = LevelLayout::new(config.width, config.height, format, config.lod.max_level);
    let faces = face_count(config.texture_type);
    for &addr in &config.face_addresses[..faces] {
        if !mem.is_mapped(addr, layout.total_bytes) {
            return Err(TextureError::Unmapped {
                addr,
                len: layout.total_bytes,
            });
        }
    }
    Ok((format, layout, faces))
}

impl<S: TexelSource> Sampler<S> {
    fn with_source(source: S, config: TextureConfig, layout: LevelLayout, faces: usize) -> Self {
        let max_level = config.lod.max_level.min(layout.last() as u32);
        let min_level = config.lod.min_level.min(max_level);
        Self {
            source,
            config,
            layout,
            max_level,
            min_level,
            faces,
        }
    }

    /// The configuration this sampler was built from.
    pub fn config(&self) -> &TextureConfig {
        &self.config
    }

    /// The mip-level layout.
    pub fn layout(&self) -> &LevelLayout {
        &self.layout
    }

    /// The texel source.
    pub fn source(&self) -> &S {
        &self.source
    }

    /// The lowest and highest mip level lookups can use (LOD clamps within the chain).
    pub fn level_range(&self) -> (u32, u32) {
        (self.min_level, self.max_level)
    }

    /// Unbiased, unclamped λ = log2 ρ of a 2D lookup for level-0 size, from the derivatives of
    /// (u, v). Returns −∞ for zero derivatives.
    pub fn lambda(&self, g: &Gradients) -> f32 {
        lambda_2d(
            g.dx[0],
            g.dx[1],
            g.dy[0],
            g.dy[1],
            self.config.width,
            self.config.height,
        )
    }

    /// The level of detail actually used for `lambda`: `λ + bias` clamped to
    /// `[min_level, max_level]` (NaN becomes min_level).
    pub fn lod(&self, lambda: f32) -> f32 {
        let l = lambda + self.config.lod.bias;
        if l.is_nan() {
            self.min_level as f32
        } else {
            l.clamp(self.min_level as f32, self.max_level as f32)
        }
    }

    /// Samples a 2D texture (or one cube face) at (u, v) with a precomputed λ (see
    /// [`Sampler::lambda`]): wrap, border, filters and mip levels as configured.
    pub fn sample_face(&self, face: CubeFace, u: f32, v: f32, lambda: f32) -> Rgba {
        self.sample_face_counted(face, u, v, lambda).0
    }

    /// As [`Sampler::sample_face`], with the number of texels the filters read (see
    /// [`Sampler::sample_counted`]).
    pub fn sample_face_counted(&self, face: CubeFace, u: f32, v: f32, lambda: f32) -> (Rgba, u32) {
        let face = face.index().min(self.faces - 1);
        let lod = self.lod(lambda);
        // Magnification when the biased, *unclamped* λ is ≤ 0 (also for NaN).
        // UNVERIFIED: OpenGL decides on the λ already clamped to [min, max] LOD (so max level 0
        // would always magnify) and moves the boundary to 0.5 when mag = linear and
        // min = nearest-mip; we use the unclamped value and 0 in all cases, so single-level
        // textures still honour their minification filter.
        let biased = lambda + self.config.lod.bias;
        if biased.is_nan() || biased <= 0.0 {
            return self.filter_level(face, self.min_level as usize, self.config.mag_filter, u, v);
        }
        let min = self.config.min_filter;
        match self.config.mip_filter {
            Filter::Nearest => {
                // Nearest level: round half down (OpenGL: ceil(λ + 0.5) − 1).
                let level = if lod <= 0.5 {
                    0.0
                } else {
                    (lod + 0.5).ceil() - 1.0
                };
                let level = (level as u32).clamp(self.min_level, self.max_level);
                self.filter_level(face, level as usize, min, u, v)
            }
            Filter::Linear => {
                // `lod as u32` equals `lod.floor() as u32` (negative and NaN give 0 either
                // way) without the libm call.
                let l0 = (lod as u32).min(self.max_level);
                let l1 = (l0 + 1).min(self.max_level);
                let f = lod - l0 as f32;
                let (a, na) = self.filter_level(face, l0 as usize, min, u, v);
                if l1 == l0 || f <= 0.0 {
                    return (a, na);
                }
                let (b, nb) = self.filter_level(face, l1 as usize, min, u, v);
                (blend(a, b, weight(f)), na + nb)
            }
        }
    }

    /// Samples a 2D texture at (u, v) with λ computed from `g`.
    pub fn sample_2d(&self, u: f32, v: f32, g: &Gradients) -> Rgba {
        self.sample_face(CubeFace::PosX, u, v, self.lambda(g))
    }

    /// As [`Sampler::sample_2d`], with the number of texels read.
    pub fn sample_2d_counted(&self, u: f32, v: f32, g: &Gradients) -> (Rgba, u32) {
        self.sample_face_counted(CubeFace::PosX, u, v, self.lambda(g))
    }

    /// Samples one level with one filter; also returns the texels read (1 or 4).
    fn filter_level(
        &self,
        face: usize,
        level: usize,
        filter: Filter,
        u: f32,
        v: f32,
    ) -> (Rgba, u32) {
        let info = self.layout.levels.get(level).copied().unwrap_or_default();
        let (w, h) = (info.width, info.height);
        match filter {
            Filter::Nearest => {
                let (fu, fv) = (u * w as f32, v * h as f32);
                let (s, t) = if NEAREST_TRUNCATES_TOWARD_ZERO
                    || self.config.mode == RenderMode::CitraSwrast
                {
                    (fu as i32, fv as i32)
                } else {
                    (floor_i32(fu), floor_i32(fv))
                };
                (self.texel_wrapped(face, level, s, t, w, h), 1)
            }
            Filter::Linear => {
                let one = 1i64 << FILTER_FRAC_BITS;
                let sf = floor_i64((u * w as f32 - 0.5) * one as f32);
                let tf = floor_i64((v * h as f32 - 0.5) * one as f32);
                let (s0, t0) = (sf >> FILTER_FRAC_BITS, tf >> FILTER_FRAC_BITS);
                let (fs, ft) = ((sf & (one - 1)) as u32, (tf & (one - 1)) as u32);
                let s0 = s0.clamp(i32::MIN as i64, i32::MAX as i64 - 1) as i32;
                let t0 = t0.clamp(i32::MIN as i64, i32::MAX as i64 - 1) as i32;
                // Wrap each of the two columns and rows once; a tap whose column or row is
                // outside (border modes) reads the border colour.
                let (ws, wt) = (self.config.wrap_s, self.config.wrap_t);
                let xs = [ws.apply(s0, w), ws.apply(s0 + 1, w)];
                let ts = [wt.apply(t0, h), wt.apply(t0 + 1, h)];
                let tap = |x: Option<u32>, t: Option<u32>| match (x, t) {
                    (Some(x), Some(t)) => {
                        self.source
                            .texel(face, level, x, h.wrapping_sub(1).wrapping_sub(t))
                    }
                    _ => self.config.border,
                };
                let c00 = tap(xs[0], ts[0]);
                let c10 = tap(xs[1], ts[0]);
                let c01 = tap(xs[0], ts[1]);
                let c11 = tap(xs[1], ts[1]);
                (bilinear(c00, c10, c01, c11, fs, ft), 4)
            }
        }
    }

    /// Texel at integer coordinates (s, t) in the v-up convention, after wrapping; the border
    /// colour if the wrap mode says so.
    #[inline]
    fn texel_wrapped(&self, face: usize, level: usize, s: i32, t: i32, w: u32, h: u32) -> Rgba {
        match (
            self.config.wrap_s.apply(s, w),
            self.config.wrap_t.apply(t, h),
        ) {
            (Some(x), Some(t)) => {
                self.source
                    .texel(face, level, x, h.wrapping_sub(1).wrapping_sub(t))
            }
            _ => self.config.border,
        }
    }

    /// Samples a cube map with direction (u, v, w) = (tc0.u, tc0.v, tc0.w); `g` holds the
    /// derivatives of the direction (for the LOD).
    pub fn sample_cube(&self, u: f32, v: f32, w: f32, g: &Gradients) -> Rgba {
        self.sample_cube_counted(u, v, w, g).0
    }

    /// As [`Sampler::sample_cube`], with the number of texels read.
    pub fn sample_cube_counted(&self, u: f32, v: f32, w: f32, g: &Gradients) -> (Rgba, u32) {
        let c = cube_coords(u, v, w, g);
        let lambda = lambda_2d(
            c.ds_dx,
            c.dt_dx,
            c.ds_dy,
            c.dt_dy,
            self.config.width,
            self.config.height,
        );
        self.sample_face_counted(c.face, c.s, c.t, lambda)
    }

    /// Depth-compares a shadow texel (`pica-raster.md` §5.8): `z` is the fragment's shadow
    /// depth in [0, 1] (values above 1 are clamped), (u, v) the map coordinates.
    ///
    /// // HW-compatible with \[C\] SW: the texel (nearest, through wrap/border) is read as RGBA8 with
    /// A, B, G = depth bits 23-16, 15-8, 7-0 and R = intensity; the result is R if
    /// `depth_ref ≥ trunc(z · 0xFFFFFF) − bias`, else 0, in all four channels.
    /// UNVERIFIED: Citra GL instead passes only when `depth_ref > z`, clamps z at 0, returns 1.0
    /// outside the texture and blends the four nearest compare results bilinearly.
    pub fn shadow_compare_face(&self, face: CubeFace, u: f32, v: f32, z: f32) -> Rgba {
        let face = face.index().min(self.faces - 1);
        let info = self.layout.levels[0];
        let (fu, fv) = (u * info.width as f32, v * info.height as f32);
        let (s, t) = if self.config.mode == RenderMode::CitraSwrast {
            (fu as i32, fv as i32)
        } else {
            (floor_i32(fu), floor_i32(fv))
        };
        let texel = self.texel_wrapped(face, 0, s, t, info.width, info.height);
        let zq = (z.min(1.0) * 16_777_215.0) as i64 - i64::from(self.config.shadow.bias);
        let zref = (i64::from(texel[3]) << 16) | (i64::from(texel[2]) << 8) | i64::from(texel[1]);
        let r = if zref >= zq { texel[0] } else { 0 };
        [r; 4]
    }

    /// Samples unit 0 by its texture type with coordinates (u, v, w) = (tc0.u, tc0.v, tc0.w):
    /// 2D, projective (u/w, v/w), cube, shadow 2D (w = depth; u, v divided by w unless the
    /// orthographic bit is set), shadow cube; disabled and unknown types give (0, 0, 0, 0).
    /// Units 1 and 2 always take the 2D path.
    pub fn sample(&self, u: f32, v: f32, w: f32, g: &Gradients) -> Rgba {
        self.sample_counted(u, v, w, g).0
    }

    /// As [`Sampler::sample`], with the number of texels the lookup reads: 1 per nearest tap
    /// and shadow compare, 4 per bilinear tap (border taps included), summed over the one or
    /// two mip levels a trilinear lookup blends (so 1, 2, 4 or 8); 0 for disabled types.
    pub fn sample_counted(&self, u: f32, v: f32, w: f32, g: &Gradients) -> (Rgba, u32) {
        match self.config.texture_type {
            TextureType::Tex2D => self.sample_2d_counted(u, v, g),
            TextureType::Projection2D => {
                // UNVERIFIED: the projective LOD formula is unknown; we differentiate u/w, v/w.
                let (pu, pv) = (u / w, v / w);
                let d = |du: f32, dv: f32, dw: f32| {
                    ((du * w - u * dw) / (w * w), (dv * w - v * dw) / (w * w))
                };
                let (dux, dvx) = d(g.dx[0], g.dx[1], g.dx[2]);
                let (duy, dvy) = d(g.dy[0], g.dy[1], g.dy[2]);
                let pg = Gradients::uv(dux, dvx, duy, dvy);
                self.sample_face_counted(CubeFace::PosX, pu, pv, self.lambda(&pg))
            }
            TextureType::CubeMap => self.sample_cube_counted(u, v, w, g),
            TextureType::Shadow2D => {
                let (su, sv) = if self.config.shadow.orthographic {
                    (u, v)
                } else {
                    (u / w, v / w)
                };
                (self.shadow_compare_face(CubeFace::PosX, su, sv, w.abs()), 1)
            }
            TextureType::ShadowCube => {
                let c = cube_coords(u, v, w, &Gradients::ZERO);
                (self.shadow_compare_face(c.face, c.s, c.t, c.ma.abs()), 1)
            }
            // UNVERIFIED: types 6 and 7 are undocumented; treated like "disabled".
            TextureType::Disabled | TextureType::Unknown(_) => ([0; 4], 0),
        }
    }
}

impl<'m> Sampler<MemTexels<'m>> {
    /// A sampler reading texels from `mem` on every fetch. Fails if the format is invalid, the
    /// size is zero, or any level of any used face lies outside mapped memory.
    pub fn from_memory(mem: &'m PhysMem, config: &TextureConfig) -> Result<Self, TextureError> {
        let (format, layout, faces) = validate(mem, config)?;
        let mut level_base = [[0u32; MAX_LEVELS]; 6];
        let mut widths = [0u32; MAX_LEVELS];
        for (f, bases) in level_base.iter_mut().enumerate().take(faces) {
            for (n, info) in layout.levels().iter().enumerate() {
                bases[n] = config.face_addresses[f].wrapping_add(info.offset);
                widths[n] = info.width;
            }
        }
        let source = MemTexels {
            mem,
            fetch: fetcher(format),
            level_base,
            widths,
        };
        Ok(Self::with_source(source, *config, layout, faces))
    }
}

impl Sampler<DecodedTexels> {
    /// A sampler that decodes every level of every used face to RGBA8 now (one allocation per
    /// texture, none per sample). Same errors as [`Sampler::from_memory`].
    pub fn decoded(mem: &PhysMem, config: &TextureConfig) -> Result<Self, TextureError> {
        let (format, layout, faces) = validate(mem, config)?;
        let per_face: usize = layout
            .levels()
            .iter()
            .map(|l| l.width as usize * l.height as usize)
            .sum();
        let mut texels = Vec::with_capacity(per_face * faces);
        let mut start = [[0usize; MAX_LEVELS]; 6];
        let mut widths = [0u32; MAX_LEVELS];
        let mut bytes = Vec::new();
        for (f, starts) in start.iter_mut().enumerate().take(faces) {
            for (n, info) in layout.levels().iter().enumerate() {
                starts[n] = texels.len();
                widths[n] = info.width;
                let addr = config.face_addresses[f].wrapping_add(info.offset);
                bytes.resize(info.bytes as usize, 0);
                mem.read(addr, &mut bytes)
                    .map_err(|_| TextureError::Unmapped {
                        addr,
                        len: u64::from(info.bytes),
                    })?;
                let at = texels.len();
                texels.resize(at + info.width as usize * info.height as usize, [0; 4]);
                super::decode::decode_level_into(
                    format,
                    &bytes,
                    info.width,
                    info.height,
                    &mut texels[at..],
                );
            }
        }
        let source = DecodedTexels {
            texels,
            start,
            widths,
        };
        Ok(Self::with_source(source, *config, layout, faces))
    }
}

/// λ for a 2D lookup of a `w × h` level 0: `log2(max(|(∂u·W, ∂v·H)/∂x|, |(∂u·W, ∂v·H)/∂y|))`.
pub fn lambda_2d(du_dx: f32, dv_dx: f32, du_dy: f32, dv_dy: f32, w: u32, h: u32) -> f32 {
    // log2 of the longer footprint axis, computed on squared lengths (no square root).
    0.5 * footprint_sq_2d(du_dx, dv_dx, du_dy, dv_dy, w as f32, h as f32).log2()
}

/// The squared length of the longer footprint axis of [`lambda_2d`] (`w`, `h`: the level-0
/// size as f32): split out so that batch lookups compute it across fragments before the
/// logarithms.
#[inline(always)]
pub(crate) fn footprint_sq_2d(
    du_dx: f32,
    dv_dx: f32,
    du_dy: f32,
    dv_dy: f32,
    w: f32,
    h: f32,
) -> f32 {
    let rx2 = (du_dx * w) * (du_dx * w) + (dv_dx * h) * (dv_dx * h);
    let ry2 = (du_dy * w) * (du_dy * w) + (dv_dy * h) * (dv_dy * h);
    rx2.max(ry2)
}

/// Result of cube-face selection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubeCoords {
    /// Selected face.
    pub face: CubeFace,
    /// Face coordinate s in [0, 1].
    pub s: f32,
    /// Face coordinate t in [0, 1] (v-up convention like 2D lookups).
    pub t: f32,
    /// Signed major-axis component (the shadow depth of shadow cubes is |ma|).
    pub ma: f32,
    /// ∂s/∂x.
    pub ds_dx: f32,
    /// ∂t/∂x.
    pub dt_dx: f32,
    /// ∂s/∂y.
    pub ds_dy: f32,
    /// ∂t/∂y.
    pub dt_dy: f32,
}

/// Cube-face selection for direction (u, v, w) (`pica-raster.md` §5.6, \[C\] SW; equal to the
/// OpenGL convention): strict comparisons pick X if |u| > |v| and |u| > |w|, else Y if
/// |v| > |w|, else Z. Face coordinates (sc, tc, ma): +X (−w, −v, u), −X (−w, v, u),
/// +Y (u, w, v), −Y (−u, w, v), +Z (u, −v, w), −Z (u, v, w); `s = sc/ma·0.5 + 0.5`,
/// `t = tc/ma·0.5 + 0.5` with ma signed. Derivatives follow by the quotient rule.
pub fn cube_coords(u: f32, v: f32, w: f32, g: &Gradients) -> CubeCoords {
    let (au, av, aw) = (u.abs(), v.abs(), w.abs());
    // (face, sc, tc, ma) as functions of a direction, applied to the value and derivatives.
    type Pick = fn([f32; 3]) -> (f32, f32, f32);
    let (face, pick): (CubeFace, Pick) = if au > av && au > aw {
        if u >= 0.0 {
            (CubeFace::PosX, |d| (-d[2], -d[1], d[0]))
        } else {
            (CubeFace::NegX, |d| (-d[2], d[1], d[0]))
        }
    } else if av > aw {
        if v >= 0.0 {
            (CubeFace::PosY, |d| (d[0], d[2], d[1]))
        } else {
            (CubeFace::NegY, |d| (-d[0], d[2], d[1]))
        }
    } else if w >= 0.0 {
        (CubeFace::PosZ, |d| (d[0], -d[1], d[2]))
    } else {
        (CubeFace::NegZ, |d| (d[0], d[1], d[2]))
    };
    let (sc, tc, ma) = pick([u, v, w]);
    let (dsx, dtx, dmx) = pick(g.dx);
    let (dsy, dty, dmy) = pick(g.dy);
    let q = |n: f32, dn: f32, dm: f32| 0.5 * (dn * ma - n * dm) / (ma * ma);
    CubeCoords {
        face,
        s: sc / ma * 0.5 + 0.5,
        t: tc / ma * 0.5 + 0.5,
        ma,
        ds_dx: q(sc, dsx, dmx),
        dt_dx: q(tc, dtx, dmx),
        ds_dy: q(sc, dsy, dmy),
        dt_dy: q(tc, dty, dmy),
    }
}

/// A weight in [0, 1] quantised to [`FILTER_FRAC_BITS`] bits (truncating).
#[inline]
pub(crate) fn weight(f: f32) -> u32 {
    let one = 1u32 << FILTER_FRAC_BITS;
    ((f * one as f32) as u32).min(one)
}

/// `a·(1 − f) + b·f` per channel with an integer weight `f` in 1/2^FILTER_FRAC_BITS, rounded.
#[inline]
pub(crate) fn blend(a: Rgba, b: Rgba, f: u32) -> Rgba {
    let one = 1u32 << FILTER_FRAC_BITS;
    let half = one >> 1;
    let mut out = [0u8; 4];
    for i in 0..4 {
        out[i] =
            ((u32::from(a[i]) * (one - f) + u32::from(b[i]) * f + half) >> FILTER_FRAC_BITS) as u8;
    }
    out
}

/// Bilinear blend of four texels with integer weights `fs`, `ft` in 1/2^FILTER_FRAC_BITS.
#[inline]
pub(crate) fn bilinear(c00: Rgba, c10: Rgba, c01: Rgba, c11: Rgba, fs: u32, ft: u32) -> Rgba {
    let one = 1u32 << FILTER_FRAC_BITS;
    let shift = 2 * FILTER_FRAC_BITS;
    let half = 1u32 << (shift - 1);
    let mut out = [0u8; 4];
    for i in 0..4 {
        let top = u32::from(c00[i]) * (one - fs) + u32::from(c10[i]) * fs;
        let bottom = u32::from(c01[i]) * (one - fs) + u32::from(c11[i]) * fs;
        out[i] = ((top * (one - ft) + bottom * ft + half) >> shift) as u8;
    }
    out
}

#[cfg(test)]
mod tests;
