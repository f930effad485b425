//! Per-draw specialised texture lookups (issue 14): a texture unit's format, wrap modes,
//! filters and level layout resolved once into a monomorphised sampling routine.
//!
//! Stage: texture units 0-2 of the fragment pipeline, on the specialised pixel path. Input: a
//! [`Sampler`] over pre-decoded RGBA8 texels ([`DecodedTexels`], decoded once per draw or
//! taken from the texture cache, so a draw that renders into a texture it samples reads the
//! texture as it was when the draw started, on every path and at every thread count) and the
//! fragment's texture coordinate and derivatives; output: the RGBA8 colour and the number of
//! texels the lookup read (for the cost table).
//!
//! [`UnitLookup::new`] picks one routine per unit and draw (a plain `fn` pointer, called once
//! per sample): the texel format is gone (texels are RGBA8 in one flat array), the wrap mode of
//! each axis is a const parameter (clamp to edge and power-of-two repeat are a `clamp` or a
//! mask; every other mode and size goes through [`WrapMode::apply`] with the border colour),
//! the filters and mip filter are const parameters, and a unit whose lookups can only ever
//! read one level with one filter skips the LOD computation entirely. Types other than plain
//! 2D (projective, cube, shadow), [`RenderMode::CitraSwrast`], a truncating nearest rounding
//! and filter weights of more than 8 bits go through the generic [`Sampler::sample_counted`].
//!
//! The generic [`Sampler`] stays as the oracle ([`UnitLookup::sample_reference`], used by the
//! reference pixel path); the tests compare both on random configurations and coordinates,
//! including NaN, infinities and huge values, bit for bit and texel count for texel count.
//!
//! Texel counts: 1 per nearest tap, 4 per bilinear tap (border taps included), summed over the
//! one or two levels a lookup reads (trilinear: 8, or 4 when the LOD falls on a level).

use std::sync::Arc;

use super::config::{Filter, MAX_LEVELS, RenderMode, TextureType, WrapMode};
use super::sampler::{
    DecodedTexels, FILTER_FRAC_BITS, Gradients, NEAREST_TRUNCATES_TOWARD_ZERO, Sampler, blend,
    lambda_2d, weight,
};
use crate::pixel::color::Rgba;
use crate::pixel::fastmath::{floor_f32, floor_i32, floor_i64};
use crate::pixel::raster::Fragment;

/// Wrap kind: clamp to edge.
const EDGE: u8 = 0;
/// Wrap kind: repeat on a power-of-two size (every level of the texture).
const REPEAT: u8 = 1;
/// Wrap kind: any mode through [`WrapMode::apply`] (border colour possible).
const ANY: u8 = 2;

/// A specialised lookup routine.
type RunFn = fn(&UnitLookup, &Fragment) -> (Rgba, u32);

/// One mip level as the routines read it.
#[derive(Clone, Copy, Debug, Default)]
struct LevelView {
    /// Index of the level's first texel in the decoded array.
    start: usize,
    /// Width in texels.
    w: u32,
    /// Height in texels.
    h: u32,
}

/// One texture unit of one draw, resolved for sampling (see the module doc).
#[derive(Clone)]
pub struct UnitLookup {
    sampler: Arc<Sampler<DecodedTexels>>,
    /// Unit 0-2 (unit 0 passes tc0.w and its derivatives to the generic routine).
    unit: usize,
    /// Texture coordinate set read (0-2).
    tc: usize,
    run: RunFn,
    /// The name of the chosen routine (tests and diagnostics).
    kind: &'static str,
    levels: [LevelView; MAX_LEVELS],
    wrap_s: WrapMode,
    wrap_t: WrapMode,
    border: Rgba,
    /// Level-0 size (the LOD's scale).
    width: u32,
    height: u32,
    bias: f32,
    min_level: u32,
    max_level: u32,
}

impl std::fmt::Debug for UnitLookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnitLookup")
            .field("unit", &self.unit)
            .field("tc", &self.tc)
            .field("kind", &self.kind)
            .finish()
    }
}

/// The wrap kind of `mode` for every level of `layout` (sizes `sizes`).
fn wrap_kind(mode: WrapMode, pow2: bool) -> u8 {
    match mode {
        WrapMode::ClampToEdge => EDGE,
        WrapMode::Repeat | WrapMode::Repeat6 | WrapMode::Repeat7 if pow2 => REPEAT,
        _ => ANY,
    }
}

/// Picks `$f::<..., WS, WT>` for the runtime wrap kinds `$ws`, `$wt`.
macro_rules! by_wraps {
    ($f:ident, [$($c:expr),*], $ws:expr, $wt:expr) => {
        match ($ws, $wt) {
            (EDGE, EDGE) => $f::<$($c,)* EDGE, EDGE> as RunFn,
            (EDGE, REPEAT) => $f::<$($c,)* EDGE, REPEAT>,
            (EDGE, _) => $f::<$($c,)* EDGE, ANY>,
            (REPEAT, EDGE) => $f::<$($c,)* REPEAT, EDGE>,
            (REPEAT, REPEAT) => $f::<$($c,)* REPEAT, REPEAT>,
            (REPEAT, _) => $f::<$($c,)* REPEAT, ANY>,
            (_, EDGE) => $f::<$($c,)* ANY, EDGE>,
            (_, REPEAT) => $f::<$($c,)* ANY, REPEAT>,
            _ => $f::<$($c,)* ANY, ANY>,
        }
    };
}

impl UnitLookup {
    /// Resolves unit `unit` (0-2), reading texture coordinate `tc`, sampled with `sampler`.
    pub fn new(sampler: Arc<Sampler<DecodedTexels>>, unit: usize, tc: usize) -> Self {
        let cfg = *sampler.config();
        let layout = *sampler.layout();
        let mut levels = [LevelView::default(); MAX_LEVELS];
        let mut pow2 = true;
        for (n, info) in layout.levels().iter().enumerate() {
            levels[n] = LevelView {
                start: sampler.source().level_start(0, n),
                w: info.width,
                h: info.height,
            };
            pow2 &= info.width.is_power_of_two() && info.height.is_power_of_two();
        }
        let (min_level, max_level) = sampler.level_range();
        let (ws, wt) = (wrap_kind(cfg.wrap_s, pow2), wrap_kind(cfg.wrap_t, pow2));
        let generic = cfg.texture_type != TextureType::Tex2D
            || cfg.mode == RenderMode::CitraSwrast
            || NEAREST_TRUNCATES_TOWARD_ZERO
            // The packed bilinear blend needs row values below 2^16.
            || FILTER_FRAC_BITS > 8;
        let lin = |f: Filter| f == Filter::Linear;
        let (run, kind): (RunFn, &'static str) = if generic {
            (generic_lookup, "generic")
        } else if cfg.mag_filter == cfg.min_filter && min_level == max_level {
            // One level, one filter: the LOD cannot change anything.
            if lin(cfg.mag_filter) {
                (by_wraps!(one_level, [true], ws, wt), "one level bilinear")
            } else {
                (by_wraps!(one_level, [false], ws, wt), "one level nearest")
            }
        } else {
            let f = match (
                lin(cfg.mag_filter),
                lin(cfg.min_filter),
                lin(cfg.mip_filter),
            ) {
                (false, false, false) => by_wraps!(mipmapped, [false, false, false], ws, wt),
                (false, false, true) => by_wraps!(mipmapped, [false, false, true], ws, wt),
                (false, true, false) => by_wraps!(mipmapped, [false, true, false], ws, wt),
                (false, true, true) => by_wraps!(mipmapped, [false, true, true], ws, wt),
                (true, false, false) => by_wraps!(mipmapped, [true, false, false], ws, wt),
                (true, false, true) => by_wraps!(mipmapped, [true, false, true], ws, wt),
                (true, true, false) => by_wraps!(mipmapped, [true, true, false], ws, wt),
                (true, true, true) => by_wraps!(mipmapped, [true, true, true], ws, wt),
            };
            (f, "mipmapped")
        };
        UnitLookup {
            unit,
            tc: tc.min(2),
            run,
            kind,
            levels,
            wrap_s: cfg.wrap_s,
            wrap_t: cfg.wrap_t,
            border: cfg.border,
            width: cfg.width,
            height: cfg.height,
            bias: cfg.lod.bias,
            min_level,
            max_level,
            sampler,
        }
    }

    /// The sampler (configuration, layout, decoded texels).
    pub fn sampler(&self) -> &Arc<Sampler<DecodedTexels>> {
        &self.sampler
    }

    /// The texture coordinate set this unit reads.
    pub fn texcoord(&self) -> usize {
        self.tc
    }

    /// The name of the routine chosen at draw setup ("one level bilinear", "one level
    /// nearest", "mipmapped" or "generic").
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// The colour for `frag` and the texels read, through the specialised routine.
    #[inline]
    pub fn sample(&self, frag: &Fragment) -> (Rgba, u32) {
        (self.run)(self, frag)
    }

    /// The same through the generic [`Sampler::sample_counted`] (the oracle).
    pub fn sample_reference(&self, frag: &Fragment) -> (Rgba, u32) {
        generic_lookup(self, frag)
    }

    #[inline(always)]
    fn texel(&self, texels: &[Rgba], lv: &LevelView, x: u32, y: u32) -> Rgba {
        texels
            .get(lv.start + y as usize * lv.w as usize + x as usize)
            .copied()
            .unwrap_or([0; 4])
    }

    /// Nearest texel of level `lv` at (u, v) (as the generic sampler's nearest filter).
    #[inline(always)]
    fn nearest<const WS: u8, const WT: u8>(&self, lv: &LevelView, u: f32, v: f32) -> Rgba {
        let (w, h) = (lv.w, lv.h);
        let s = floor_i32(u * w as f32);
        let t = floor_i32(v * h as f32);
        match (wrap::<WS>(self.wrap_s, s, w), wrap::<WT>(self.wrap_t, t, h)) {
            (Some(x), Some(t)) => self.texel(
                self.sampler.source().texels(),
                lv,
                x,
                h.wrapping_sub(1).wrapping_sub(t),
            ),
            _ => self.border,
        }
    }

    /// Bilinear filter of level `lv` at (u, v) (as the generic sampler's linear filter).
    #[inline(always)]
    fn bilinear<const WS: u8, const WT: u8>(&self, lv: &LevelView, u: f32, v: f32) -> Rgba {
        let (w, h) = (lv.w, lv.h);
        let one = 1i64 << FILTER_FRAC_BITS;
        let sf = floor_i64((u * w as f32 - 0.5) * one as f32);
        let tf = floor_i64((v * h as f32 - 0.5) * one as f32);
        let (s0, t0) = (sf >> FILTER_FRAC_BITS, tf >> FILTER_FRAC_BITS);
        let (fs, ft) = ((sf & (one - 1)) as u32, (tf & (one - 1)) as u32);
        // Memory rows of the two texel rows.
        let row = |t: Option<u32>| t.map(|t| h.wrapping_sub(1).wrapping_sub(t));
        let (x0, x1) = wrap_pair::<WS>(self.wrap_s, s0, w);
        let (y0, y1) = wrap_pair::<WT>(self.wrap_t, t0, h);
        let (y0, y1) = (row(y0), row(y1));
        let texels = self.sampler.source().texels();
        let tap = |x: Option<u32>, y: Option<u32>| match (x, y) {
            (Some(x), Some(y)) => self.texel(texels, lv, x, y),
            _ => self.border,
        };
        bilinear_packed(tap(x0, y0), tap(x1, y0), tap(x0, y1), tap(x1, y1), fs, ft)
    }

    /// One level with one filter.
    #[inline(always)]
    fn filter<const LIN: bool, const WS: u8, const WT: u8>(
        &self,
        level: usize,
        u: f32,
        v: f32,
    ) -> (Rgba, u32) {
        let lv = self.levels.get(level).copied().unwrap_or_default();
        if LIN {
            (self.bilinear::<WS, WT>(&lv, u, v), 4)
        } else {
            (self.nearest::<WS, WT>(&lv, u, v), 1)
        }
    }
}

/// `Some(index)` of integer coordinate `c` on a side of `n` texels for wrap kind `K`, `None`
/// for the border colour; equal to [`WrapMode::apply`] (kinds are only chosen where they are).
#[inline(always)]
fn wrap<const K: u8>(mode: WrapMode, c: i32, n: u32) -> Option<u32> {
    match K {
        // n ≤ 2047: `n − 1` fits an i32 (and n ≥ 1 for every valid layout).
        EDGE => Some(c.clamp(0, (n.max(1) - 1) as i32) as u32),
        // Two's complement: the low bits of c are those of c mod n for a power of two n.
        REPEAT => Some(c as u32 & (n.max(1) - 1)),
        _ => mode.apply(c, n),
    }
}

/// [`wrap`] of the two neighbouring integer coordinates `c` and `c + 1` of a bilinear tap,
/// `c` as the filter computed it (an i64): the generic sampler first limits `c` to
/// `i32::MIN..=i32::MAX − 1`. Clamp to edge clamps the i64 straight to `0..=n − 1`, the same
/// result since that range lies inside the i32 limits.
#[inline(always)]
fn wrap_pair<const K: u8>(mode: WrapMode, c: i64, n: u32) -> (Option<u32>, Option<u32>) {
    if K == EDGE {
        // n ≤ 2047: `n − 1` fits an i64 (and n ≥ 1 for every valid layout).
        let hi = i64::from(n.max(1) - 1);
        return (
            Some(c.clamp(0, hi) as u32),
            Some((c + 1).clamp(0, hi) as u32),
        );
    }
    let c = c.clamp(i32::MIN as i64, i32::MAX as i64 - 1) as i32;
    (wrap::<K>(mode, c, n), wrap::<K>(mode, c + 1, n))
}

/// The generic sampler (the oracle, and the routine of types other than 2D).
fn generic_lookup(l: &UnitLookup, frag: &Fragment) -> (Rgba, u32) {
    let [u, v] = frag.tc[l.tc];
    let g = frag.tc_grad[l.tc];
    if l.unit == 0 {
        let gr = Gradients {
            dx: [g[0], g[1], frag.tc0_w_grad[0]],
            dy: [g[2], g[3], frag.tc0_w_grad[1]],
        };
        l.sampler.sample_counted(u, v, frag.tc0_w, &gr)
    } else {
        l.sampler
            .sample_counted(u, v, 0.0, &Gradients::uv(g[0], g[1], g[2], g[3]))
    }
}

/// 2D lookups that can only read level `min_level` with one filter.
fn one_level<const LIN: bool, const WS: u8, const WT: u8>(
    l: &UnitLookup,
    frag: &Fragment,
) -> (Rgba, u32) {
    let [u, v] = frag.tc[l.tc];
    l.filter::<LIN, WS, WT>(l.min_level as usize, u, v)
}

/// Mipmapped 2D lookups (as [`Sampler::sample_face_counted`]) with the magnification,
/// minification and mip filters resolved.
fn mipmapped<const MAG: bool, const MIN: bool, const MIP: bool, const WS: u8, const WT: u8>(
    l: &UnitLookup,
    frag: &Fragment,
) -> (Rgba, u32) {
    let [u, v] = frag.tc[l.tc];
    let g = frag.tc_grad[l.tc];
    let lambda = lambda_2d(g[0], g[1], g[2], g[3], l.width, l.height);
    let biased = lambda + l.bias;
    // Magnification when the biased, unclamped λ is ≤ 0 or NaN (see `Sampler::sample_face`).
    if biased.is_nan() || biased <= 0.0 {
        return l.filter::<MAG, WS, WT>(l.min_level as usize, u, v);
    }
    let lod = biased.clamp(l.min_level as f32, l.max_level as f32);
    if MIP {
        let l0 = (lod as u32).min(l.max_level);
        let l1 = (l0 + 1).min(l.max_level);
        let f = lod - l0 as f32;
        let (a, na) = l.filter::<MIN, WS, WT>(l0 as usize, u, v);
        if l1 == l0 || f <= 0.0 {
            return (a, na);
        }
        let (b, nb) = l.filter::<MIN, WS, WT>(l1 as usize, u, v);
        (blend(a, b, weight(f)), na + nb)
    } else {
        // Nearest level, round half down: ceil(λ + 0.5) − 1, with ceil(x) = −floor(−x)
        // (exact for every f32, no libm call).
        let level = if lod <= 0.5 {
            0.0
        } else {
            -floor_f32(-(lod + 0.5)) - 1.0
        };
        let level = (level as u32).clamp(l.min_level, l.max_level);
        l.filter::<MIN, WS, WT>(level as usize, u, v)
    }
}

/// Spreads RGBA8 into one u64 with one channel per 16-bit lane (R, G, B, A from bit 0).
#[inline(always)]
fn spread16(c: Rgba) -> u64 {
    let x = u64::from(u32::from_le_bytes(c));
    let t = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    (t | (t << 8)) & 0x00FF_00FF_00FF_00FF
}

/// The bilinear blend of the generic sampler (`top·(1 − ft) + bottom·ft`, rounded, per
/// channel, weights in 1/2^FILTER_FRAC_BITS) on packed channels: the row blends on four
/// 16-bit lanes (a row value is at most 255·2^8 < 2^16), the column blend on two 32-bit lanes
/// per word (at most 255·2^16 + 2^15 < 2^32). No lane carries into another, so every channel
/// equals the generic per-channel arithmetic.
#[inline(always)]
fn bilinear_packed(c00: Rgba, c10: Rgba, c01: Rgba, c11: Rgba, fs: u32, ft: u32) -> Rgba {
    const EVEN: u64 = 0x0000_FFFF_0000_FFFF;
    let one = 1u64 << FILTER_FRAC_BITS;
    let shift = 2 * FILTER_FRAC_BITS;
    let half = 1u64 << (shift - 1);
    let half2 = half | (half << 32);
    let (fs, ft) = (u64::from(fs), u64::from(ft));
    let top = spread16(c00) * (one - fs) + spread16(c10) * fs;
    let bottom = spread16(c01) * (one - fs) + spread16(c11) * fs;
    // (R, B) and (G, A) on 32-bit lanes.
    let (te, to) = (top & EVEN, (top >> 16) & EVEN);
    let (be, bo) = (bottom & EVEN, (bottom >> 16) & EVEN);
    let re = (te * (one - ft) + be * ft + half2) >> shift;
    let ro = (to * (one - ft) + bo * ft + half2) >> shift;
    [re as u8, ro as u8, (re >> 32) as u8, (ro >> 32) as u8]
}

#[cfg(test)]
mod tests;
