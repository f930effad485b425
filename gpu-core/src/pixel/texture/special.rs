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
    DecodedTexels, FILTER_FRAC_BITS, Gradients, NEAREST_TRUNCATES_TOWARD_ZERO, Sampler,
    footprint_sq_2d, lambda_2d, weight,
};
use crate::pixel::color::Rgba;
use crate::pixel::fastmath::{FLOOR_SMALL_LIMIT, floor_f32, floor_i32, floor_i64, floor_small};
use crate::pixel::isa;
use crate::pixel::raster::{FRAGMENT_BATCH, Fragment};

/// Wrap kind: clamp to edge.
const EDGE: u8 = 0;
/// Wrap kind: repeat on a power-of-two size (every level of the texture).
const REPEAT: u8 = 1;
/// Wrap kind: any mode through [`WrapMode::apply`] (border colour possible).
const ANY: u8 = 2;

/// A specialised lookup routine.
type RunFn = fn(&UnitLookup, &Fragment) -> (Rgba, u32);

/// A specialised lookup routine over a batch of fragments (see [`UnitLookup::sample_batch`]).
type BatchFn = fn(&UnitLookup, &[Fragment], &mut [Rgba]) -> u64;

/// The lane count of the batch routines' phase arrays: the fast traversal's batch size (longer
/// slices are processed in chunks of this many).
const LANES: usize = FRAGMENT_BATCH;

/// One mip level as the routines read it, with the per-sample conversions done up front.
#[derive(Clone, Copy, Debug, Default)]
struct LevelView {
    /// Index of the level's first texel in the decoded array.
    start: usize,
    /// Width in texels.
    w: u32,
    /// Height in texels.
    h: u32,
    /// `w as f32`, `h as f32`.
    wf: f32,
    hf: f32,
    /// `w·2^F`, `h·2^F` as f32 (the scale of the bilinear coordinates; see [`scaled`]).
    ws: f32,
    hs: f32,
    /// The upper clamp of the scaled bilinear coordinates, `w·2^F` and `h·2^F` (see [`taps32`]).
    hi_s: f32,
    hi_t: f32,
    /// The last texel index of each axis, `max(w, 1) − 1` and `max(h, 1) − 1` (the clamp
    /// limit of clamp to edge and the mask of power-of-two repeat).
    last_s: i32,
    last_t: i32,
    /// The end of the inner range of the scaled bilinear coordinates, `last_s·2^F` and
    /// `last_t·2^F` (see [`UnitLookup::bilinear`]).
    in_s: f32,
    in_t: f32,
}

/// The view of a level outside the chain (never read for valid layouts; every texel reads 0).
const NO_LEVEL: LevelView = LevelView {
    start: 0,
    w: 0,
    h: 0,
    wf: 0.0,
    hf: 0.0,
    ws: 0.0,
    hs: 0.0,
    hi_s: 0.0,
    hi_t: 0.0,
    last_s: 0,
    last_t: 0,
    in_s: 0.0,
    in_t: 0.0,
};

impl LevelView {
    fn new(start: usize, w: u32, h: u32) -> Self {
        let one = (1u32 << FILTER_FRAC_BITS) as f32;
        LevelView {
            start,
            w,
            h,
            wf: w as f32,
            hf: h as f32,
            // Exact: w, h ≤ 2047 and 2^F are small integers.
            ws: w as f32 * one,
            hs: h as f32 * one,
            hi_s: (w << FILTER_FRAC_BITS) as f32,
            hi_t: (h << FILTER_FRAC_BITS) as f32,
            // w, h ≤ 2047 for every layout: the casts are exact.
            last_s: (w.max(1) - 1) as i32,
            last_t: (h.max(1) - 1) as i32,
            // Exact: (w − 1)·2^F < 2^19.
            in_s: ((w.max(1) - 1) << FILTER_FRAC_BITS) as f32,
            in_t: ((h.max(1) - 1) << FILTER_FRAC_BITS) as f32,
        }
    }
}

/// The scaled bilinear coordinate `(c·n − 0.5)·2^F` of the generic filter, computed as
/// `c·(n·2^F) − 2^(F−1)` with `ns = n·2^F`: the same f32 for every input. Scaling by a power
/// of two is exact and commutes with rounding wherever the result is a normal number or
/// overflows (both forms give the same infinity); where `c·n` is subnormal or zero, both
/// differences round to exactly −0.5·2^F (the subnormal part is far below half an ulp of
/// 0.5), and NaN stays NaN.
#[inline(always)]
fn scaled(c: f32, ns: f32) -> f32 {
    c * ns - (1u32 << (FILTER_FRAC_BITS - 1)) as f32
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
    /// The batch form of `run` (same routine, same results).
    batch: BatchFn,
    /// The name of the chosen routine (tests and diagnostics).
    kind: &'static str,
    levels: [LevelView; MAX_LEVELS],
    /// `levels[min_level]` (the only level of the one-level routines).
    base: LevelView,
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
        by_wraps!($f, RunFn, [$($c),*], $ws, $wt)
    };
    ($f:ident, $t:ty, [$($c:expr),*], $ws:expr, $wt:expr) => {
        match ($ws, $wt) {
            (EDGE, EDGE) => $f::<$($c,)* EDGE, EDGE> as $t,
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
            levels[n] = LevelView::new(sampler.source().level_start(0, n), info.width, info.height);
            pow2 &= info.width.is_power_of_two() && info.height.is_power_of_two();
        }
        let (min_level, max_level) = sampler.level_range();
        let (ws, wt) = (wrap_kind(cfg.wrap_s, pow2), wrap_kind(cfg.wrap_t, pow2));
        let generic = cfg.texture_type != TextureType::Tex2D
            || cfg.mode == RenderMode::CitraSwrast
            || NEAREST_TRUNCATES_TOWARD_ZERO
            // The one-step bilinear sum fits a u32 only for weights of at most 8 bits.
            || FILTER_FRAC_BITS > 8;
        let lin = |f: Filter| f == Filter::Linear;
        // The per-fragment routine and its batch form are chosen together (the same const
        // parameters), so the two can never disagree on the configuration.
        let (run, batch, kind): (RunFn, BatchFn, &'static str) = if generic {
            (generic_lookup, generic_batch, "generic")
        } else if cfg.mag_filter == cfg.min_filter && min_level == max_level {
            // One level, one filter: the LOD cannot change anything.
            if lin(cfg.mag_filter) {
                (
                    by_wraps!(one_level, [true], ws, wt),
                    by_wraps!(one_level_batch, BatchFn, [true], ws, wt),
                    "one level bilinear",
                )
            } else {
                (
                    by_wraps!(one_level, [false], ws, wt),
                    by_wraps!(one_level_batch, BatchFn, [false], ws, wt),
                    "one level nearest",
                )
            }
        } else {
            macro_rules! mip {
                ($($c:expr),*) => {
                    (
                        by_wraps!(mipmapped, [$($c),*], ws, wt),
                        by_wraps!(mipmapped_batch, BatchFn, [$($c),*], ws, wt),
                    )
                };
            }
            let (f, b) = match (
                lin(cfg.mag_filter),
                lin(cfg.min_filter),
                lin(cfg.mip_filter),
            ) {
                (false, false, false) => mip!(false, false, false),
                (false, false, true) => mip!(false, false, true),
                (false, true, false) => mip!(false, true, false),
                (false, true, true) => mip!(false, true, true),
                (true, false, false) => mip!(true, false, false),
                (true, false, true) => mip!(true, false, true),
                (true, true, false) => mip!(true, true, false),
                (true, true, true) => mip!(true, true, true),
            };
            (f, b, "mipmapped")
        };
        UnitLookup {
            unit,
            tc: tc.min(2),
            run,
            batch,
            kind,
            levels,
            base: levels.get(min_level as usize).copied().unwrap_or(NO_LEVEL),
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

    /// [`UnitLookup::sample`] for every fragment of `frags`: `out[i]` receives the colour of
    /// `frags[i]` (as far as `out` reaches); returns the total texel count. The routine is
    /// resolved once per batch, and its per-fragment arithmetic (coordinate scaling, the
    /// inner-footprint test and taps, nearest wrapping, the LOD's squared footprint, and for
    /// bilinear lookups the texel addresses, gathers and blends) runs phase by phase over
    /// arrays of up to [`FRAGMENT_BATCH`] lanes: the same integers and floats as
    /// [`UnitLookup::sample`], so bit-identical colours and counts.
    #[inline]
    pub fn sample_batch(&self, frags: &[Fragment], out: &mut [Rgba]) -> u64 {
        (self.batch)(self, frags, out)
    }

    /// [`UnitLookup::sample_reference`] for every fragment of `frags` (as
    /// [`UnitLookup::sample_batch`]).
    pub fn sample_batch_reference(&self, frags: &[Fragment], out: &mut [Rgba]) -> u64 {
        generic_batch(self, frags, out)
    }

    /// The same through the generic [`Sampler::sample_counted`] (the oracle).
    pub fn sample_reference(&self, frag: &Fragment) -> (Rgba, u32) {
        generic_lookup(self, frag)
    }

    /// The texel at (x, y) of level `lv` by reference (texels outside the array read as 0).
    #[inline(always)]
    fn texel_ref<'t>(texels: &'t [Rgba], lv: &LevelView, x: u32, y: u32) -> &'t Rgba {
        texels
            .get(lv.start + y as usize * lv.w as usize + x as usize)
            .unwrap_or(&[0; 4])
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
        self.nearest_at::<WS, WT>(lv, floor_i32(u * lv.wf), floor_i32(v * lv.hf))
    }

    /// [`UnitLookup::nearest`] on the integer texel coordinates `s = ⌊u·w⌋`, `t = ⌊v·h⌋`.
    #[inline(always)]
    fn nearest_at<const WS: u8, const WT: u8>(&self, lv: &LevelView, s: i32, t: i32) -> Rgba {
        let (w, h) = (lv.w, lv.h);
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
    ///
    /// Inner footprints first: when both axes' two taps are neighbours `s0`, `s0 + 1` inside
    /// the level after wrapping ([`inner_taps`]), no clamp or border applies: the four
    /// texels are two adjacent pairs of two memory rows (texel row `t0` is memory row
    /// `h − 1 − t0 ≥ 1`, row `t0 + 1` the one before it), each read with one bounds check,
    /// and they are blended in lanes ([`bilinear_rows`], equal to [`bilinear_direct`]).
    /// Everything else (the texture's outer half texel, the seam of a repeat, border colour,
    /// a level whose texels lie beyond the decoded array) takes
    /// [`UnitLookup::bilinear_outer`].
    #[inline(always)]
    fn bilinear<const WS: u8, const WT: u8>(&self, lv: &LevelView, u: f32, v: f32) -> Rgba {
        self.bilinear_scaled::<WS, WT>(lv, scaled(u, lv.ws), scaled(v, lv.hs))
    }

    /// [`UnitLookup::bilinear`] on the scaled coordinates `fx`, `fy` of [`scaled`].
    #[inline(always)]
    fn bilinear_scaled<const WS: u8, const WT: u8>(
        &self,
        lv: &LevelView,
        fx: f32,
        fy: f32,
    ) -> Rgba {
        if let (Some((s0, fs)), Some((t0, ft))) = (
            inner_taps::<WS>(fx, lv.in_s, lv.last_s),
            inner_taps::<WT>(fy, lv.in_t, lv.last_t),
        ) {
            // t0 ≤ h − 2 (see `inner_taps`): the memory row `h − 1 − t0` is at least 1 and
            // the row before it starts at `a0 − w` ≥ `start`.
            let a0 = lv.start + (lv.h - 1 - t0) as usize * lv.w as usize + s0 as usize;
            let texels = self.sampler.source().texels();
            if let (Some(r0), Some(r1)) = (pair(texels, a0), pair(texels, a0 - lv.w as usize)) {
                return bilinear_rows(r0, r1, fs, ft).to_le_bytes();
            }
        }
        self.bilinear_outer::<WS, WT>(lv, fx, fy)
    }

    /// [`UnitLookup::bilinear`] outside the inner footprints, on the scaled coordinates: kept
    /// out of line so that the inner path stays small.
    #[inline(never)]
    fn bilinear_outer<const WS: u8, const WT: u8>(&self, lv: &LevelView, fx: f32, fy: f32) -> Rgba {
        let (w, h) = (lv.w, lv.h);
        let one = 1i64 << FILTER_FRAC_BITS;
        if let (Some((x0, x1, fs)), Some((t0, t1, ft))) = (
            taps32::<WS>(fx, lv.last_s, lv.hi_s),
            taps32::<WT>(fy, lv.last_t, lv.hi_t),
        ) {
            // Both axes resolved on 32-bit integers: texel rows are memory rows `h − 1 − t`.
            let (y0, y1) = (
                h.wrapping_sub(1).wrapping_sub(t0),
                h.wrapping_sub(1).wrapping_sub(t1),
            );
            let texels = self.sampler.source().texels();
            let tap = |x: u32, y: u32| Self::texel_ref(texels, lv, x, y);
            return bilinear_direct(tap(x0, y0), tap(x1, y0), tap(x0, y1), tap(x1, y1), fs, ft);
        }
        let sf = floor_i64(fx);
        let tf = floor_i64(fy);
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
        bilinear_direct(
            &tap(x0, y0),
            &tap(x1, y0),
            &tap(x0, y1),
            &tap(x1, y1),
            fs,
            ft,
        )
    }

    /// One level with one filter.
    #[inline(always)]
    fn filter<const LIN: bool, const WS: u8, const WT: u8>(
        &self,
        level: usize,
        u: f32,
        v: f32,
    ) -> (Rgba, u32) {
        self.filter_view::<LIN, WS, WT>(self.levels.get(level).unwrap_or(&NO_LEVEL), u, v)
    }

    /// [`UnitLookup::filter`] on a level already looked up.
    #[inline(always)]
    fn filter_view<const LIN: bool, const WS: u8, const WT: u8>(
        &self,
        lv: &LevelView,
        u: f32,
        v: f32,
    ) -> (Rgba, u32) {
        if LIN {
            (self.bilinear::<WS, WT>(lv, u, v), 4)
        } else {
            (self.nearest::<WS, WT>(lv, u, v), 1)
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

/// The two texel indices and the filter weight of one bilinear axis on 32-bit integers, for
/// wrap kinds [`EDGE`] and [`REPEAT`] on a side of `n` texels; `fx` is the scaled coordinate
/// `(c·n − 0.5)·2^FILTER_FRAC_BITS` of the generic filter and `hi` is `n·2^F`. `None` when the fast form does not
/// apply (wrap kind [`ANY`], or a repeat coordinate too large or NaN): the caller then takes
/// the 64-bit path of the generic filter. Equal to that path wherever it answers:
/// * clamp to edge clamps `fx` to `[−2^F, n·2^F]` first. Below the range both taps clamp to
///   texel 0 and above it both clamp to `n − 1`, before and after the clamp, and two equal
///   taps give the same blend whatever the weight (`c·(2^F − f) + c·f = c·2^F`), so only the
///   weight can differ and it does not matter; inside the range nothing changes. NaN, which
///   the generic path floors to 0 (taps 0 and 1, weight 0), is clamped to `−2^F` here (taps 0
///   and 0, weight 0): the second tap has weight 0 either way, so the blend is the same.
/// * repeat needs `|fx| < 2^22` (the range of the exact [`floor_small`]): the floor then
///   fits an i32 and the generic clamp of the integer coordinate to the i32 range does
///   nothing. Larger coordinates take the 64-bit path.
#[inline(always)]
fn taps32<const K: u8>(fx: f32, last: i32, hi: f32) -> Option<(u32, u32, u32)> {
    // `last` is `max(n, 1) − 1` (≥ 0): `max`/`min` below equal `clamp(0, last)`.
    let mask = (1i32 << FILTER_FRAC_BITS) - 1;
    match K {
        EDGE => {
            // `hi` is n·2^F (exact in an f32: n ≤ 2047).
            let lo = -((1u32 << FILTER_FRAC_BITS) as f32);
            // NaN goes to `lo` (see the doc above): |c| ≤ n·2^F < 2^22 afterwards. The negated
            // comparison is the point: it is true for NaN.
            #[allow(clippy::neg_cmp_op_on_partial_ord)]
            let c = if !(fx >= lo) {
                lo
            } else if fx > hi {
                hi
            } else {
                fx
            };
            let sf = floor_small(c);
            let s0 = sf >> FILTER_FRAC_BITS;
            Some((
                s0.max(0).min(last) as u32,
                (s0 + 1).max(0).min(last) as u32,
                (sf & mask) as u32,
            ))
        }
        REPEAT if fx.abs() < FLOOR_SMALL_LIMIT => {
            let sf = floor_small(fx);
            let s0 = sf >> FILTER_FRAC_BITS;
            // A power-of-two n: `last` is n − 1, the mask of the low bits.
            let m = last as u32;
            Some((s0 as u32 & m, (s0 + 1) as u32 & m, (sf & mask) as u32))
        }
        _ => None,
    }
}

/// The first tap `s0` and the weight of one bilinear axis when its two taps are the
/// neighbours `s0` and `s0 + 1` with `0 ≤ s0 ≤ n − 2` after wrapping, for wrap kind `K` on a
/// side of `n` texels (`last` = `max(n, 1) − 1`, `inner` = `last·2^F`); `fx` is the scaled
/// coordinate of [`scaled`]. `None` otherwise (the caller takes the general path). Equal to
/// the general path ([`taps32`] / [`wrap_pair`]) wherever it answers:
/// * [`EDGE`] and [`ANY`]: `fx` in `[0, (n − 1)·2^F)`. The floor is a truncating cast there
///   (non-negative, below 2^19), `s0 = ⌊fx⌋ >> F ≤ n − 2`, and every wrap mode is the
///   identity on `0..n` ([`WrapMode::apply`]). NaN fails the range test.
/// * [`REPEAT`] (power-of-two n): `|fx| < 2^22` (the range of the exact [`floor_small`],
///   the same as [`taps32`]), `s0 = (⌊fx⌋ >> F) & (n − 1)`, the general path's first tap;
///   its second tap `(⌊fx⌋ >> F) + 1 & (n − 1)` is `s0 + 1` exactly when `s0 ≠ n − 1`
///   (otherwise the repeat wraps to 0, the seam, left to the general path).
#[inline(always)]
fn inner_taps<const K: u8>(fx: f32, inner: f32, last: i32) -> Option<(u32, u32)> {
    let mask = (1u32 << FILTER_FRAC_BITS) - 1;
    if K == REPEAT {
        if fx.abs() < FLOOR_SMALL_LIMIT {
            let sf = floor_small(fx);
            let s0 = (sf >> FILTER_FRAC_BITS) as u32 & last as u32;
            if s0 < last as u32 {
                return Some((s0, sf as u32 & mask));
            }
        }
        None
    } else if fx >= 0.0 && fx < inner {
        let sf = fx as u32;
        Some((sf >> FILTER_FRAC_BITS, sf & mask))
    } else {
        None
    }
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
    l.filter_view::<LIN, WS, WT>(&l.base, u, v)
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
    mipmapped_at::<MAG, MIN, MIP, WS, WT>(l, u, v, lambda)
}

/// The level choice of a mipmapped lookup for one λ (see [`mip_pick`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct MipPick {
    /// Magnification (the biased, unclamped λ is ≤ 0 or NaN): the magnification filter on
    /// `first`; otherwise the minification filter.
    mag: bool,
    /// The level read first (the only one unless `second` is set).
    first: usize,
    /// The second level of a trilinear lookup and the mip weight of [`blend_levels`].
    second: Option<(usize, u32)>,
}

/// Which level(s) a mipmapped lookup with λ `lambda` reads (as [`Sampler::sample_face`]):
/// shared by [`mipmapped_at`] and the lane form in [`mipmapped_batch_body`], so both read
/// the same levels with the same weight.
#[inline(always)]
fn mip_pick<const MIP: bool>(l: &UnitLookup, lambda: f32) -> MipPick {
    let biased = lambda + l.bias;
    // Magnification when the biased, unclamped λ is ≤ 0 or NaN (see `Sampler::sample_face`).
    if biased.is_nan() || biased <= 0.0 {
        return MipPick {
            mag: true,
            first: l.min_level as usize,
            second: None,
        };
    }
    let lod = biased.clamp(l.min_level as f32, l.max_level as f32);
    if MIP {
        let l0 = (lod as u32).min(l.max_level);
        let l1 = (l0 + 1).min(l.max_level);
        let f = lod - l0 as f32;
        let second = (l1 != l0 && f > 0.0).then(|| (l1 as usize, weight(f)));
        MipPick {
            mag: false,
            first: l0 as usize,
            second,
        }
    } else {
        // Nearest level, round half down: ceil(λ + 0.5) − 1, with ceil(x) = −floor(−x)
        // (exact for every f32, no libm call).
        let level = if lod <= 0.5 {
            0.0
        } else {
            -floor_f32(-(lod + 0.5)) - 1.0
        };
        MipPick {
            mag: false,
            first: (level as u32).clamp(l.min_level, l.max_level) as usize,
            second: None,
        }
    }
}

/// [`mipmapped`] with the fragment's λ (`lambda_2d` of its gradients) computed.
#[inline(always)]
fn mipmapped_at<const MAG: bool, const MIN: bool, const MIP: bool, const WS: u8, const WT: u8>(
    l: &UnitLookup,
    u: f32,
    v: f32,
    lambda: f32,
) -> (Rgba, u32) {
    let pick = mip_pick::<MIP>(l, lambda);
    if pick.mag {
        return l.filter::<MAG, WS, WT>(pick.first, u, v);
    }
    let (a, na) = l.filter::<MIN, WS, WT>(pick.first, u, v);
    match pick.second {
        None => (a, na),
        Some((second, w)) => {
            let (b, nb) = l.filter::<MIN, WS, WT>(second, u, v);
            (blend_levels(a, b, w), na + nb)
        }
    }
}

/// The texture coordinates `tc` of a chunk of at most [`LANES`] fragments as two lane arrays
/// (structure of arrays); lanes past the chunk read 0 (computed and never stored).
#[inline(always)]
fn lane_coords(frags: &[Fragment], tc: usize) -> ([f32; LANES], [f32; LANES]) {
    // `min` lets the compiler drop the index check of every `f.tc[tc]`.
    let tc = tc.min(2);
    let (mut u, mut v) = ([0.0; LANES], [0.0; LANES]);
    for ((f, u), v) in frags.iter().zip(&mut u).zip(&mut v) {
        [*u, *v] = f.tc[tc];
    }
    (u, v)
}

/// [`generic_lookup`] over a batch (types other than 2D, and the reference path).
fn generic_batch(l: &UnitLookup, frags: &[Fragment], out: &mut [Rgba]) -> u64 {
    let mut texels = 0u64;
    for (o, f) in out.iter_mut().zip(frags) {
        let (c, n) = generic_lookup(l, f);
        *o = c;
        texels += u64::from(n);
    }
    texels
}

/// [`one_level`] over a batch: every lookup reads one level with one filter, so the texel
/// count is the fragment count times 4 (bilinear) or 1 (nearest).
/// Through the AVX2 copy where the CPU has it ([`crate::pixel::isa`]).
fn one_level_batch<const LIN: bool, const WS: u8, const WT: u8>(
    l: &UnitLookup,
    frags: &[Fragment],
    out: &mut [Rgba],
) -> u64 {
    isa::dispatch!(
        one_level_batch_avx2::<LIN, WS, WT>(l, frags, out),
        one_level_batch_body::<LIN, WS, WT>(l, frags, out)
    )
}

isa::avx2_fn! {
    fn one_level_batch_avx2<const LIN: bool, const WS: u8, const WT: u8>(
        l: &UnitLookup,
        frags: &[Fragment],
        out: &mut [Rgba],
    ) -> u64 {
        one_level_batch_body::<LIN, WS, WT>(l, frags, out)
    }
}

#[inline(always)]
fn one_level_batch_body<const LIN: bool, const WS: u8, const WT: u8>(
    l: &UnitLookup,
    frags: &[Fragment],
    out: &mut [Rgba],
) -> u64 {
    let n = frags.len().min(out.len());
    for (fr, out) in frags[..n].chunks(LANES).zip(out[..n].chunks_mut(LANES)) {
        let (u, v) = lane_coords(fr, l.tc);
        if LIN {
            let active = lanes_below(fr.len());
            if let Ok(out) = <&mut [Rgba; LANES]>::try_from(&mut *out) {
                // A full chunk: straight into the caller's colours.
                l.bilinear_lanes::<WS, WT>(|_| &l.base, &active, &u, &v, out);
            } else {
                let mut c = [[0u8; 4]; LANES];
                l.bilinear_lanes::<WS, WT>(|_| &l.base, &active, &u, &v, &mut c);
                for (o, c) in out.iter_mut().zip(&c) {
                    *o = *c;
                }
            }
        } else {
            l.nearest_lanes::<WS, WT>(&l.base, &u, &v, out);
        }
    }
    n as u64 * if LIN { 4 } else { 1 }
}

/// [`mipmapped`] over a batch. The squared footprint lengths of λ run across the lanes first
/// (plain float products, which vectorise); the logarithm stays the library's `log2` per
/// lane (no cheaper form is exact for every input, and λ feeds the level choice and the
/// mip weight bit for bit). With bilinear magnification and minification the level choice
/// runs per lane and the two levels' lookups across the lanes
/// ([`mipmapped_linear_lanes`]); other filter combinations run per lane.
/// Through the AVX2 copy where the CPU has it ([`crate::pixel::isa`]).
fn mipmapped_batch<
    const MAG: bool,
    const MIN: bool,
    const MIP: bool,
    const WS: u8,
    const WT: u8,
>(
    l: &UnitLookup,
    frags: &[Fragment],
    out: &mut [Rgba],
) -> u64 {
    isa::dispatch!(
        mipmapped_batch_avx2::<MAG, MIN, MIP, WS, WT>(l, frags, out),
        mipmapped_batch_body::<MAG, MIN, MIP, WS, WT>(l, frags, out)
    )
}

isa::avx2_fn! {
    fn mipmapped_batch_avx2<
        const MAG: bool,
        const MIN: bool,
        const MIP: bool,
        const WS: u8,
        const WT: u8,
    >(
        l: &UnitLookup,
        frags: &[Fragment],
        out: &mut [Rgba],
    ) -> u64 {
        mipmapped_batch_body::<MAG, MIN, MIP, WS, WT>(l, frags, out)
    }
}

#[inline(always)]
fn mipmapped_batch_body<
    const MAG: bool,
    const MIN: bool,
    const MIP: bool,
    const WS: u8,
    const WT: u8,
>(
    l: &UnitLookup,
    frags: &[Fragment],
    out: &mut [Rgba],
) -> u64 {
    let n = frags.len().min(out.len());
    let tc = l.tc.min(2);
    let (w, h) = (l.width as f32, l.height as f32);
    let mut texels = 0u64;
    for (fr, out) in frags[..n].chunks(LANES).zip(out[..n].chunks_mut(LANES)) {
        let (u, v) = lane_coords(fr, tc);
        let mut g = [[0.0f32; 4]; LANES];
        for (g, f) in g.iter_mut().zip(fr) {
            *g = f.tc_grad[tc];
        }
        let mut m = [0.0f32; LANES];
        for (m, g) in m.iter_mut().zip(&g) {
            *m = footprint_sq_2d(g[0], g[1], g[2], g[3], w, h);
        }
        let mut lambda = [0.0f32; LANES];
        for (lam, m) in lambda.iter_mut().zip(&m).take(fr.len()) {
            // As `lambda_2d`.
            *lam = 0.5 * m.log2();
        }
        if MAG && MIN {
            texels += mipmapped_linear_lanes::<MIP, WS, WT>(l, &u, &v, &lambda, out);
            continue;
        }
        for (((o, u), v), lambda) in out.iter_mut().zip(&u).zip(&v).zip(&lambda) {
            let (c, k) = mipmapped_at::<MAG, MIN, MIP, WS, WT>(l, *u, *v, *lambda);
            *o = c;
            texels += u64::from(k);
        }
    }
    texels
}

/// `[i < n; LANES]`.
#[inline(always)]
fn lanes_below(n: usize) -> [bool; LANES] {
    let mut a = [false; LANES];
    a[..n.min(LANES)].fill(true);
    a
}

/// [`mipmapped_at`] for up to [`LANES`] lookups (`out.len()` of them) whose magnification
/// and minification filters are both bilinear: the level choice per lane ([`mip_pick`]),
/// then [`UnitLookup::bilinear_lanes`] on each lane's first level, then on the second level
/// of the lanes that read two, and the mip blend. Returns the texel count (4 per level read).
#[inline(always)]
fn mipmapped_linear_lanes<const MIP: bool, const WS: u8, const WT: u8>(
    l: &UnitLookup,
    u: &[f32; LANES],
    v: &[f32; LANES],
    lambda: &[f32; LANES],
    out: &mut [Rgba],
) -> u64 {
    let n = out.len().min(LANES);
    let mut first = [0usize; LANES];
    let mut second = [0usize; LANES];
    let mut weights = [0u32; LANES];
    let mut two = [false; LANES];
    for i in 0..n {
        let pick = mip_pick::<MIP>(l, lambda[i]);
        first[i] = pick.first;
        if let Some((s, w)) = pick.second {
            (second[i], weights[i], two[i]) = (s, w, true);
        }
    }
    let level = |k: usize| l.levels.get(k).unwrap_or(&NO_LEVEL);
    let mut a = [[0u8; 4]; LANES];
    l.bilinear_lanes::<WS, WT>(|i| level(first[i]), &lanes_below(n), u, v, &mut a);
    let seconds = two.iter().filter(|&&t| t).count();
    if seconds == 0 {
        for (o, a) in out.iter_mut().zip(&a) {
            *o = *a;
        }
        return 4 * n as u64;
    }
    let mut b = [[0u8; 4]; LANES];
    l.bilinear_lanes::<WS, WT>(|i| level(second[i]), &two, u, v, &mut b);
    for (i, o) in out.iter_mut().enumerate().take(n) {
        *o = if two[i] {
            blend_levels(a[i], b[i], weights[i])
        } else {
            a[i]
        };
    }
    4 * (n + seconds) as u64
}

/// [`inner_taps`] as a lane operation: `(inner, s0, weight)` computed without branches for
/// every input (the compiler can run it across a batch), `inner` true exactly where
/// [`inner_taps`] answers `Some((s0, weight))`, and `s0`, `weight` equal to its answer there
/// (elsewhere they are some values the caller ignores):
/// * [`REPEAT`]: the same expressions ([`floor_small`] returns some i32 without panicking
///   outside its range, where the range test fails).
/// * [`EDGE`], [`ANY`]: `fx` clamped to `[0, inner]` before the floor, which changes nothing
///   inside the inner range `[0, inner)`, and there [`floor_small`] (exact below 2^22)
///   equals the truncating `u32` cast of [`inner_taps`] (non-negative, below 2^19). NaN
///   fails the range test (and the clamp makes it 0).
#[inline(always)]
fn inner_lane<const K: u8>(fx: f32, inner: f32, last: i32) -> (bool, u32, u32) {
    let mask = (1u32 << FILTER_FRAC_BITS) - 1;
    if K == REPEAT {
        let sf = floor_small(fx);
        let s0 = (sf >> FILTER_FRAC_BITS) as u32 & last as u32;
        (
            (fx.abs() < FLOOR_SMALL_LIMIT) & (s0 < last as u32),
            s0,
            sf as u32 & mask,
        )
    } else {
        // The clamped value lies in [0, 2^19]: `floor_small` is exact there, and cheaper
        // across lanes than the saturating cast.
        let sf = floor_small(fx.max(0.0).min(inner)) as u32;
        (
            (fx >= 0.0) & (fx < inner),
            sf >> FILTER_FRAC_BITS,
            sf & mask,
        )
    }
}

/// The texel index of integer coordinate `c` on an axis of wrap kind [`EDGE`] or [`REPEAT`]
/// (`last` = `max(n, 1) − 1`): [`wrap`] for those kinds, which always answer `Some`.
#[inline(always)]
fn wrap_lane<const K: u8>(c: i32, last: i32) -> u32 {
    if K == EDGE {
        c.clamp(0, last) as u32
    } else {
        c as u32 & last as u32
    }
}

impl UnitLookup {
    /// Bilinear lookups for the lanes `u`, `v` into `out`, lane `i` on level `lv_of(i)`, as
    /// [`UnitLookup::bilinear`] per lane for the lanes where `active[i]` (the others get
    /// some colour the caller ignores). Every phase but the last runs across all lanes: the
    /// scaled coordinates, the inner-footprint test and taps of both axes and the memory
    /// addresses of the two texel pairs; the two pair gathers (lanes outside the inner
    /// footprint read the array's first pair, ignored); the one-step blend
    /// ([`bilinear_words`], the same bytes as [`bilinear_rows`]). Last, per lane,
    /// [`UnitLookup::bilinear_outer`] for the active lanes outside the inner footprint.
    #[inline(always)]
    fn bilinear_lanes<'l, const WS: u8, const WT: u8>(
        &'l self,
        lv_of: impl Fn(usize) -> &'l LevelView,
        active: &[bool; LANES],
        u: &[f32; LANES],
        v: &[f32; LANES],
        out: &mut [Rgba; LANES],
    ) {
        let texels = self.sampler.source().texels();
        // A pair read at `a` needs `a + 1 < len`.
        let limit = texels.len().saturating_sub(1);
        let (mut fx, mut fy) = ([0.0f32; LANES], [0.0f32; LANES]);
        let mut good = [false; LANES];
        let (mut a0, mut a1) = ([0usize; LANES], [0usize; LANES]);
        let (mut fs, mut ft) = ([0u32; LANES], [0u32; LANES]);
        for i in 0..LANES {
            let lv = lv_of(i);
            fx[i] = scaled(u[i], lv.ws);
            fy[i] = scaled(v[i], lv.hs);
            let (a, s, f) = inner_lane::<WS>(fx[i], lv.in_s, lv.last_s);
            let (b, t, g) = inner_lane::<WT>(fy[i], lv.in_t, lv.last_t);
            // As in `bilinear`: inside the footprint t ≤ h − 2, so the memory row
            // `h − 1 − t` is at least 1 and the row before it starts at `p − w` ≥ `start`.
            // Outside it the wrapped values are ignored.
            let w = lv.w as usize;
            let row = lv.h.wrapping_sub(1).wrapping_sub(t) as usize;
            let p = lv
                .start
                .wrapping_add(row.wrapping_mul(w))
                .wrapping_add(s as usize);
            let q = p.wrapping_sub(w);
            let ok = active[i] & a & b & (p < limit) & (q < limit);
            good[i] = ok;
            a0[i] = if ok { p } else { 0 };
            a1[i] = if ok { q } else { 0 };
            (fs[i], ft[i]) = (f, g);
        }
        let mut c = [[0u32; LANES]; 4];
        if let Some(last) = texels.len().checked_sub(2) {
            // Each pair's start clamped to the last pair of the array (a no-op on the lanes
            // that use their texels, since a0, a1 < limit = len − 1) so that the gathers need
            // no bounds branch.
            let pair = |k: usize| {
                let k = k.min(last);
                let p = &texels[k..k + 2];
                (u32::from_le_bytes(p[0]), u32::from_le_bytes(p[1]))
            };
            for i in 0..LANES {
                (c[0][i], c[1][i]) = pair(a0[i]);
                (c[2][i], c[3][i]) = pair(a1[i]);
            }
        }
        for i in 0..LANES {
            // fs, ft ≤ 2^F − 1 on every lane (masked in `inner_lane`): no lane wraps.
            out[i] = bilinear_words(c[0][i], c[1][i], c[2][i], c[3][i], fs[i], ft[i]).to_le_bytes();
        }
        const _: () = assert!(LANES <= 32, "the outer-lane mask is a u32");
        let mut outer = 0u32;
        for i in 0..LANES {
            outer |= u32::from(active[i] & !good[i]) << i;
        }
        while outer != 0 {
            let i = outer.trailing_zeros() as usize % LANES;
            outer &= outer - 1;
            out[i] = self.bilinear_outer::<WS, WT>(lv_of(i), fx[i], fy[i]);
        }
    }

    /// Nearest lookups of level `lv` for the lanes `u`, `v` into `out` (at most [`LANES`]
    /// long), as [`UnitLookup::nearest`] per lane: the integer coordinates over all lanes,
    /// then (both axes [`EDGE`] or [`REPEAT`]) the wrapped texel and memory row over all lanes
    /// and the gathers, or (an axis of kind [`ANY`], border colour possible) the rest of
    /// [`UnitLookup::nearest_at`] per lane.
    #[inline(always)]
    fn nearest_lanes<const WS: u8, const WT: u8>(
        &self,
        lv: &LevelView,
        u: &[f32; LANES],
        v: &[f32; LANES],
        out: &mut [Rgba],
    ) {
        let (mut s, mut t) = ([0i32; LANES], [0i32; LANES]);
        for i in 0..LANES {
            s[i] = floor_i32(u[i] * lv.wf);
            t[i] = floor_i32(v[i] * lv.hf);
        }
        if WS == ANY || WT == ANY {
            for (i, o) in out.iter_mut().enumerate().take(LANES) {
                *o = self.nearest_at::<WS, WT>(lv, s[i], t[i]);
            }
            return;
        }
        let (mut x, mut y) = ([0u32; LANES], [0u32; LANES]);
        for i in 0..LANES {
            x[i] = wrap_lane::<WS>(s[i], lv.last_s);
            // The memory row of texel row t.
            y[i] =
                lv.h.wrapping_sub(1)
                    .wrapping_sub(wrap_lane::<WT>(t[i], lv.last_t));
        }
        let texels = self.sampler.source().texels();
        for (i, o) in out.iter_mut().enumerate().take(LANES) {
            *o = self.texel(texels, lv, x[i], y[i]);
        }
    }
}

/// The mip blend of the generic sampler (`sampler::blend`: `(a·(2^F − f) + b·f + 2^(F−1)) >> F`
/// per channel) on the four channels at once, in 16-bit lanes of a u64: with F = 8 and
/// `f ≤ 2^F` (what [`weight`] returns) each lane's sum is at most `255·256 + 128 < 2^16`, so no
/// lane carries into the next and the shifted, masked lanes are the per-channel results.
#[inline(always)]
fn blend_levels(a: Rgba, b: Rgba, f: u32) -> Rgba {
    const LOW: u64 = 0x00FF_00FF_00FF_00FF;
    const _: () = assert!(FILTER_FRAC_BITS <= 8, "the lane sums need F ≤ 8");
    let one = 1u64 << FILTER_FRAC_BITS;
    let f = u64::from(f);
    let half = 0x0001_0001_0001_0001u64 << (FILTER_FRAC_BITS - 1);
    let sum = spread(a) * (one - f) + spread(b) * f + half;
    gather((sum >> FILTER_FRAC_BITS) & LOW)
}

/// Texels `at` and `at + 1` as one u64 (the first in the low half), `None` past the array.
#[inline(always)]
fn pair(texels: &[Rgba], at: usize) -> Option<u64> {
    let [a, b] = texels.get(at..)?.first_chunk::<2>()?;
    Some(u64::from(u32::from_le_bytes(*a)) | (u64::from(u32::from_le_bytes(*b)) << 32))
}

/// [`bilinear_direct`] on the two texel pairs of a footprint, each as [`pair`] reads it
/// (`r0`: `c00 | c10 << 32`, row t0; `r1`: `c01 | c11 << 32`, row t1), in lanes of a u64;
/// returns the colour as `u32::from_le_bytes` would read it. Equal to the generic two-step
/// blend (`top·(2^F − ft) + bottom·ft + 2^(2F−1) >> 2F` with `top = c00·(2^F − fs) + c10·fs`
/// per channel, unrounded) because it computes exactly those integers, with F ≤ 8:
/// * Horizontal step, per row: the R and B bytes of both texels masked into four 16-bit
///   lanes (`c00.R, c00.B, c10.R, c10.B`), multiplied by `fs + (2^F − fs)·2^32`: the high
///   half of the product is `c00·(2^F − fs) + c10·fs` per lane (each at most
///   `255·2^F < 2^16`, so no lane carries, and the low half `c00·fs` stays below 2^32, so
///   nothing carries into the high half; what passes 2^64 is dropped). The same for G and A
///   (bytes shifted down by 8). The row is then `R, B, G, A` in four 16-bit lanes.
/// * Vertical step: R and G (lanes 0 and 2), then B and A (lanes 1 and 3), moved to 32-bit
///   lanes, `top·(2^F − ft) + bottom·ft + 2^(2F−1)` per lane (at most
///   `255·2^2F + 2^(2F−1) < 2^32`), and the bytes `>> 2F` gathered back into RGBA order.
#[inline(always)]
fn bilinear_rows(r0: u64, r1: u64, fs: u32, ft: u32) -> u32 {
    const _: () = assert!(FILTER_FRAC_BITS <= 8, "the lanes need F ≤ 8");
    const BYTES: u64 = 0x00FF_00FF_00FF_00FF;
    const LANES: u64 = 0x0000_FFFF_0000_FFFF;
    const HIGH: u64 = 0xFFFF_FFFF_0000_0000;
    const OUT: u64 = 0x0000_00FF_0000_00FF;
    let one = 1u64 << FILTER_FRAC_BITS;
    let shift = 2 * FILTER_FRAC_BITS;
    let half = 0x0000_0001_0000_0001u64 << (shift - 1);
    let (fs, ft) = (u64::from(fs), u64::from(ft));
    let k = fs | ((one - fs) << 32);
    // R, B, G, A in 16-bit lanes.
    let row =
        |r: u64| ((r & BYTES).wrapping_mul(k) >> 32) | ((r >> 8) & BYTES).wrapping_mul(k) & HIGH;
    let (top, bottom) = (row(r0), row(r1));
    let (it, ib) = (one - ft, ft);
    let rg = (top & LANES) * it + (bottom & LANES) * ib + half;
    let ba = ((top >> 16) & LANES) * it + ((bottom >> 16) & LANES) * ib + half;
    // R, B, G, A bytes at bits 0, 16, 32, 48.
    let x = ((rg >> shift) & OUT) | (((ba >> shift) & OUT) << 16);
    (x | (x >> 24)) as u32
}

/// The four channels of `c` in the low bytes of four 16-bit lanes (R lowest).
#[inline(always)]
fn spread(c: Rgba) -> u64 {
    let w = u64::from(u32::from_le_bytes(c));
    let t = (w | (w << 16)) & 0x0000_FFFF_0000_FFFF;
    (t | (t << 8)) & 0x00FF_00FF_00FF_00FF
}

/// The inverse of [`spread`] for lanes holding values 0..=255.
#[inline(always)]
fn gather(q: u64) -> Rgba {
    let t = (q | (q >> 8)) & 0x0000_FFFF_0000_FFFF;
    ((t | (t >> 16)) as u32).to_le_bytes()
}

/// The bilinear blend of the generic sampler in one step: `Σ c·w + 2^(2F−1) >> 2F` per
/// channel with the four tap weights `(2^F − fs)(2^F − ft)`, `fs(2^F − ft)`, `(2^F − fs)ft`,
/// `fs·ft`. The generic two-step blend rounds only once, at the end, and its integer sums are
/// exactly this sum (`top·(2^F − ft) + bottom·ft` expands to it), so every channel is equal.
/// Plain per-channel integer code: fewer instructions than spreading the channels into lanes
/// of a u64. See [`bilinear_words`].
#[inline(always)]
fn bilinear_direct(c00: &Rgba, c10: &Rgba, c01: &Rgba, c11: &Rgba, fs: u32, ft: u32) -> Rgba {
    let w = |c: &Rgba| u32::from_le_bytes(*c);
    bilinear_words(w(c00), w(c10), w(c01), w(c11), fs, ft).to_le_bytes()
}

/// [`bilinear_direct`] on texels as `u32::from_le_bytes` reads them (channel k in bits
/// 8k..8k+8), with `fs`, `ft` ≤ 2^F: the largest sum, `255·2^2F + 2^(2F−1)`, fits a u32 for
/// F ≤ 8, so nothing wraps. Only 32-bit integer operations, so a loop of it over lanes
/// vectorises ([`UnitLookup::bilinear_lanes`]).
#[inline(always)]
fn bilinear_words(c00: u32, c10: u32, c01: u32, c11: u32, fs: u32, ft: u32) -> u32 {
    const _: () = assert!(FILTER_FRAC_BITS <= 8, "the one-step sums need F ≤ 8");
    let one = 1u32 << FILTER_FRAC_BITS;
    let shift = 2 * FILTER_FRAC_BITS;
    let half = 1u32 << (shift - 1);
    let (w00, w10) = ((one - fs) * (one - ft), fs * (one - ft));
    let (w01, w11) = ((one - fs) * ft, fs * ft);
    let mut r = 0u32;
    for ch in 0..4 {
        let sh = 8 * ch;
        let sum = ((c00 >> sh) & 0xFF) * w00
            + ((c10 >> sh) & 0xFF) * w10
            + ((c01 >> sh) & 0xFF) * w01
            + ((c11 >> sh) & 0xFF) * w11
            + half;
        r |= ((sum >> shift) & 0xFF) << sh;
    }
    r
}

#[cfg(test)]
mod tests;
