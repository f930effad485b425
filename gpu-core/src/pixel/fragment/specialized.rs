//! Per-draw specialisation of the fragment operations (issue 14).
//!
//! Stage: the end of the fragment pipeline, blending / logic op and the colour write mask
//! (`pica-raster.md` §9.6), plus the byte handling of colour and depth pixels. Input: the
//! [`ColorOutput`] and colour write mask a draw decoded once ([`super::FragmentOps`]); output: a
//! [`ColorStage`] whose per-fragment work has no `match` on register state left except the one
//! chosen at draw setup. Registers read: none directly (everything comes decoded).
//!
//! The generic code in [`super`] ([`super::Blend::apply`], [`super::LogicOp::apply`] and the
//! per-channel write mask) stays as the oracle: [`PixelPath::Reference`] selects it for a whole
//! pipeline, and the tests check the specialised forms against it exhaustively (every equation
//! and factor pair) and end to end (every demo trace rendered both ways).
//!
//! The specialisations, all bit-identical to the generic arithmetic:
//! * **copy**: blending `src·1 + dst·0` on every channel (or logic op `copy`) is the source;
//! * **alpha over**: RGB `src·αs + dst·(1 − αs)` with any alpha equation, or the same on all
//!   four channels;
//! * **blend**: any other blend, with each factor resolved once per fragment instead of per
//!   channel;
//! * **logic**: a logic operation;
//!   and the write mask applied as one 32-bit select.

use super::{Blend, BlendEquation, BlendFactor, ColorOutput, CompareFunc, LogicOp};
use crate::pixel::color::Rgba;

/// Which implementation of the per-fragment operations a pixel pipeline runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PixelPath {
    /// State resolved once per draw ([`ColorStage`]); the default.
    #[default]
    Specialized,
    /// The generic per-fragment code: the oracle the specialised path is tested against.
    Reference,
}

/// The blend / logic operation of a draw, resolved once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Copy,
    /// Alpha over on all four channels (the usual transparency setup).
    AlphaOverAll,
    AlphaOver,
    /// RGB `src·αs + dst·1` (additive with source alpha), any alpha equation.
    AlphaAdd,
    Blend,
    Logic(LogicOp),
}

/// The colour stage of one draw: blend or logic op and the colour write mask, specialised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColorStage {
    kind: Kind,
    blend: Blend,
    /// 0xFF in every byte whose channel the colour write mask enables.
    mask: u32,
}

/// True if `f` is the factor 1 (255).
fn is_one(f: BlendFactor) -> bool {
    matches!(f, BlendFactor::One | BlendFactor::Reserved15)
}

/// True if `eq` adds the two products.
fn is_add(eq: BlendEquation) -> bool {
    matches!(eq, BlendEquation::Add | BlendEquation::Reserved(_))
}

impl ColorStage {
    /// Resolves the colour output `output` and the write mask `color_mask` (R, G, B, A).
    pub fn new(output: ColorOutput, color_mask: [bool; 4]) -> Self {
        let mut mask = 0u32;
        for (ch, on) in color_mask.iter().enumerate() {
            if *on {
                mask |= 0xFF << (8 * ch);
            }
        }
        let (kind, blend) = match output {
            ColorOutput::Logic(LogicOp::Copy) => (Kind::Copy, Blend::from_words(0, 0)),
            ColorOutput::Logic(op) => (Kind::Logic(op), Blend::from_words(0, 0)),
            ColorOutput::Blend(b) => {
                let copy = is_add(b.rgb_eq)
                    && is_add(b.alpha_eq)
                    && is_one(b.rgb_src)
                    && is_one(b.alpha_src)
                    && b.rgb_dst == BlendFactor::Zero
                    && b.alpha_dst == BlendFactor::Zero;
                let over = is_add(b.rgb_eq)
                    && b.rgb_src == BlendFactor::SourceAlpha
                    && b.rgb_dst == BlendFactor::OneMinusSourceAlpha;
                let alpha_over = is_add(b.alpha_eq)
                    && b.alpha_src == BlendFactor::SourceAlpha
                    && b.alpha_dst == BlendFactor::OneMinusSourceAlpha;
                let add =
                    is_add(b.rgb_eq) && b.rgb_src == BlendFactor::SourceAlpha && is_one(b.rgb_dst);
                let kind = if copy {
                    Kind::Copy
                } else if over && alpha_over {
                    Kind::AlphaOverAll
                } else if over {
                    Kind::AlphaOver
                } else if add {
                    Kind::AlphaAdd
                } else {
                    Kind::Blend
                };
                (kind, b)
            }
        };
        ColorStage { kind, blend, mask }
    }

    /// The colour written for source `src` over destination `dst` (decoded pixel), write mask
    /// applied: equal to the generic blend / logic op followed by the per-channel mask.
    #[inline(always)]
    pub fn apply(&self, src: Rgba, dst: Rgba) -> Rgba {
        let out = match self.kind {
            Kind::Copy => src,
            Kind::AlphaOverAll => alpha_over_all(src, dst),
            Kind::AlphaOver => alpha_over(&self.blend, src, dst),
            Kind::AlphaAdd => alpha_add(&self.blend, src, dst),
            Kind::Blend => blend(&self.blend, src, dst),
            Kind::Logic(op) => [
                op.apply(src[0], dst[0]),
                op.apply(src[1], dst[1]),
                op.apply(src[2], dst[2]),
                op.apply(src[3], dst[3]),
            ],
        };
        let o = u32::from_le_bytes(out);
        let d = u32::from_le_bytes(dst);
        ((o & self.mask) | (d & !self.mask)).to_le_bytes()
    }
}

impl ColorStage {
    /// True if this stage is alpha over on all four channels with every channel written
    /// (then [`alpha_over_word`] is the whole stage).
    pub fn is_alpha_over_all_unmasked(&self) -> bool {
        self.kind == Kind::AlphaOverAll && self.mask == u32::MAX
    }

    /// [`ColorStage::apply`] on colours as little-endian words (R in the low byte): the same
    /// result (`apply_word(s, d) == u32::from_le_bytes(apply(s, d))` for the byte forms), with
    /// copy and alpha over computed on the words directly (no byte-array round trip).
    #[inline(always)]
    pub fn apply_word(&self, src: u32, dst: u32) -> u32 {
        let out = match self.kind {
            Kind::Copy => src,
            Kind::AlphaOverAll => alpha_over_word(src, dst),
            _ => {
                return u32::from_le_bytes(self.apply(src.to_le_bytes(), dst.to_le_bytes()));
            }
        };
        (out & self.mask) | (dst & !self.mask)
    }
}

/// Alpha over on all four channels of little-endian colour words (R in the low byte): the
/// word form of [`alpha_over_all`].
#[inline(always)]
pub fn alpha_over_word(src: u32, dst: u32) -> u32 {
    let a = u64::from(src >> 24);
    gather_word(div255_lanes(
        spread_word(src) * a + spread_word(dst) * (255 - a),
    ))
}

/// Alpha over on all four channels of an RGBA8 source colour over an RGBA8 colour-buffer
/// pixel as stored (bytes A, B, G, R), returning the stored bytes: the stored form of
/// [`alpha_over_word`] (`over_rgba8_stored(c, p)` is `alpha_over_word(c, p as a swapped word)`
/// swapped back), written per channel on 16-bit values so that the compiler keeps the four
/// channels in one vector register: each sum `s·α + d·(255 − α)` is at most 255·255 and fits
/// a u16, and `/ 255` truncates exactly as [`div255_lanes`] does. Tested exhaustively over
/// α, source and destination values against the word form.
#[inline(always)]
pub fn over_rgba8_stored(src: Rgba, stored: [u8; 4]) -> [u8; 4] {
    let dst = [stored[3], stored[2], stored[1], stored[0]];
    let a = u16::from(src[3]);
    let mut out = [0u8; 4];
    for (i, o) in out.iter_mut().enumerate() {
        let x = u16::from(src[i]) * a + u16::from(dst[i]) * (255 - a);
        // ok: x ≤ 255·255, so x / 255 ≤ 255.
        *o = (x / 255) as u8;
    }
    [out[3], out[2], out[1], out[0]]
}

/// [`over_rgba8_stored`] on 16 lanes at once: `src[i]` a source colour as a little-endian
/// word (R in the low byte), `stored[i]` an RGBA8 colour-buffer pixel as stored (bytes A, B,
/// G, R read as a little-endian word, so A in the low byte); returns the stored words. Written
/// on fixed-size arrays with no branch, so the compiler runs the 16 lanes in vector registers
/// (the batch colour write computes all 16 lanes and stores only the ones it covers). Each
/// channel sum `s·α + d·(255 − α)` is at most 255·255, and `/ 255` is the exact
/// `((x + 1) + ((x + 1) >> 8)) >> 8` of [`div255_lanes`] (below 2^16, so 16-bit lanes do).
/// Tested against [`over_rgba8_stored`] on random and extreme values.
#[inline(always)]
pub fn over_rgba8_stored_batch<const N: usize>(src: &[u32; N], stored: &[u32; N]) -> [u32; N] {
    let mut out = [0u32; N];
    for ((o, &s), &d) in out.iter_mut().zip(src).zip(stored) {
        let a = (s >> 24) as u16;
        let na = 255 - a;
        let mut w = 0u32;
        for c in 0..4 {
            // Channel c of the source is byte c; of the stored pixel, byte 3 − c.
            let sc = ((s >> (8 * c)) & 0xFF) as u16;
            let dc = ((d >> (24 - 8 * c)) & 0xFF) as u16;
            let x = sc * a + dc * na + 1;
            let q = (x + (x >> 8)) >> 8;
            w |= u32::from(q) << (24 - 8 * c);
        }
        *o = w;
    }
    out
}

/// The alpha test over a batch: bit k set if `colors[k]`'s alpha passes `alpha func
/// reference` ([`CompareFunc::test`]), for all 16 lanes (the caller masks the lanes it uses).
/// The function is chosen once, outside the lane loop.
#[inline(always)]
pub fn alpha_pass_mask(func: CompareFunc, reference: u8, colors: &[Rgba; 16]) -> u32 {
    #[inline(always)]
    fn lanes(colors: &[Rgba; 16], pass: impl Fn(u8) -> bool) -> u32 {
        let mut m = 0u32;
        for (k, c) in colors.iter().enumerate() {
            m |= u32::from(pass(c[3])) << k;
        }
        m
    }
    let r = reference;
    match func {
        CompareFunc::Never => 0,
        CompareFunc::Always => 0xFFFF,
        CompareFunc::Equal => lanes(colors, |a| a == r),
        CompareFunc::NotEqual => lanes(colors, |a| a != r),
        CompareFunc::Less => lanes(colors, |a| a < r),
        CompareFunc::LessEqual => lanes(colors, |a| a <= r),
        CompareFunc::Greater => lanes(colors, |a| a > r),
        CompareFunc::GreaterEqual => lanes(colors, |a| a >= r),
    }
}

/// The lanes `k` whose depth `z[k] OP stored[k]` passes (bit k), `OP` = `func` chosen once
/// for the batch ([`CompareFunc::test`] per lane).
#[inline(always)]
pub fn depth_pass_mask(func: CompareFunc, z: &[u32; 16], stored: &[u32; 16]) -> u32 {
    #[inline(always)]
    fn lanes(z: &[u32; 16], stored: &[u32; 16], pass: impl Fn(u32, u32) -> bool) -> u32 {
        let mut m = 0u32;
        for (k, (&a, &b)) in z.iter().zip(stored).enumerate() {
            m |= u32::from(pass(a, b)) << k;
        }
        m
    }
    match func {
        CompareFunc::Never => 0,
        CompareFunc::Always => 0xFFFF,
        CompareFunc::Equal => lanes(z, stored, |a, b| a == b),
        CompareFunc::NotEqual => lanes(z, stored, |a, b| a != b),
        CompareFunc::Less => lanes(z, stored, |a, b| a < b),
        CompareFunc::LessEqual => lanes(z, stored, |a, b| a <= b),
        CompareFunc::Greater => lanes(z, stored, |a, b| a > b),
        CompareFunc::GreaterEqual => lanes(z, stored, |a, b| a >= b),
    }
}

/// One channel of a blend equation on precomputed factors (the generic [`Blend::apply`]'s
/// arithmetic: products divided by 255 truncating toward zero, then clamped).
#[inline(always)]
fn combine(eq: BlendEquation, s: u32, d: u32, sf: u32, df: u32) -> u8 {
    let sp = (s * sf) as i32;
    let dp = (d * df) as i32;
    let r = match eq {
        BlendEquation::Add | BlendEquation::Reserved(_) => (sp + dp) / 255,
        BlendEquation::Subtract => (sp - dp) / 255,
        BlendEquation::ReverseSubtract => (dp - sp) / 255,
        // Min/max compare the products (FO-5, as the generic blend).
        BlendEquation::Min => sp.min(dp) / 255,
        BlendEquation::Max => sp.max(dp) / 255,
    };
    r.clamp(0, 255) as u8
}

/// The RGB values of factor `f` (one `match` for the three channels).
#[inline(always)]
fn rgb_factors(f: BlendFactor, src: Rgba, dst: Rgba, k: Rgba) -> [u32; 3] {
    let splat = |v: u8| [u32::from(v); 3];
    let each = |c: Rgba| [u32::from(c[0]), u32::from(c[1]), u32::from(c[2])];
    let inv = |c: Rgba| {
        [
            u32::from(255 - c[0]),
            u32::from(255 - c[1]),
            u32::from(255 - c[2]),
        ]
    };
    match f {
        BlendFactor::Zero => [0; 3],
        BlendFactor::One | BlendFactor::Reserved15 => [255; 3],
        BlendFactor::SourceColor => each(src),
        BlendFactor::OneMinusSourceColor => inv(src),
        BlendFactor::DestColor => each(dst),
        BlendFactor::OneMinusDestColor => inv(dst),
        BlendFactor::SourceAlpha => splat(src[3]),
        BlendFactor::OneMinusSourceAlpha => splat(255 - src[3]),
        BlendFactor::DestAlpha => splat(dst[3]),
        BlendFactor::OneMinusDestAlpha => splat(255 - dst[3]),
        BlendFactor::ConstantColor => each(k),
        BlendFactor::OneMinusConstantColor => inv(k),
        BlendFactor::ConstantAlpha => splat(k[3]),
        BlendFactor::OneMinusConstantAlpha => splat(255 - k[3]),
        BlendFactor::SourceAlphaSaturate => splat(src[3].min(255 - dst[3])),
    }
}

/// The alpha result of blend `b` (shared by the general and the alpha-over forms).
#[inline(always)]
fn alpha_channel(b: &Blend, src: Rgba, dst: Rgba) -> u8 {
    let sf = b.alpha_src.value(3, src, dst, b.color);
    let df = b.alpha_dst.value(3, src, dst, b.color);
    combine(b.alpha_eq, u32::from(src[3]), u32::from(dst[3]), sf, df)
}

/// Any blend, factors resolved once per fragment.
#[inline]
fn blend(b: &Blend, src: Rgba, dst: Rgba) -> Rgba {
    let sf = rgb_factors(b.rgb_src, src, dst, b.color);
    let df = rgb_factors(b.rgb_dst, src, dst, b.color);
    let c = |ch: usize| {
        combine(
            b.rgb_eq,
            u32::from(src[ch]),
            u32::from(dst[ch]),
            sf[ch],
            df[ch],
        )
    };
    [c(0), c(1), c(2), alpha_channel(b, src, dst)]
}

/// RGB `(s·αs + d·(255 − αs)) / 255` (the sum of two non-negative products: no clamp needed).
#[inline]
fn alpha_over(b: &Blend, src: Rgba, dst: Rgba) -> Rgba {
    let mut out = alpha_over_all(src, dst);
    out[3] = alpha_channel(b, src, dst);
    out
}

/// RGB `min((s·αs + d·255) / 255, 255)`, which is `min(d + s·αs/255, 255)` (255·d divides
/// exactly), on 16-bit lanes: the quotients by [`div255_lanes`], the sums at most 510, then
/// every lane of 256 or more set to 255. Alpha by the blend's own alpha equation.
#[inline]
fn alpha_add(b: &Blend, src: Rgba, dst: Rgba) -> Rgba {
    const ONES: u64 = 0x0001_0001_0001_0001;
    const LOW: u64 = 0x00FF_00FF_00FF_00FF;
    let a = u64::from(src[3]);
    let sum = div255_lanes(spread(src) * a) + spread(dst);
    // Lanes of 256..=510 have bit 8 set: OR-ing 255 into their low byte and masking gives 255.
    let over = (sum >> 8) & ONES;
    let mut out = gather((sum | (over * 0xFF)) & LOW);
    out[3] = alpha_channel(b, src, dst);
    out
}

/// The four channels of `c` in the low bytes of four 16-bit lanes.
#[inline(always)]
fn spread(c: Rgba) -> u64 {
    spread_word(u32::from_le_bytes(c))
}

/// [`spread`] of a colour as a little-endian word.
#[inline(always)]
fn spread_word(c: u32) -> u64 {
    // Halves to 32-bit lanes, then bytes to 16-bit lanes.
    let w = u64::from(c);
    let t = (w | (w << 16)) & 0x0000_FFFF_0000_FFFF;
    (t | (t << 8)) & 0x00FF_00FF_00FF_00FF
}

/// The inverse of [`spread`] for lanes holding values 0..=255.
#[inline(always)]
fn gather(q: u64) -> Rgba {
    gather_word(q).to_le_bytes()
}

/// [`gather`] to a little-endian word.
#[inline(always)]
fn gather_word(q: u64) -> u32 {
    // The inverse steps of `spread_word` (the lanes' high bytes are zero).
    let t = (q | (q >> 8)) & 0x0000_FFFF_0000_FFFF;
    (t | (t >> 16)) as u32
}

/// `x / 255` (truncating) in each 16-bit lane of `x`, every lane at most 255·255:
/// `((x + 1) + ((x + 1) >> 8)) >> 8` is exact on 0..=65025 (tested exhaustively), the sums
/// stay below 2^16 so no lane carries into the next, and the masks keep each lane's bits.
#[inline(always)]
fn div255_lanes(x: u64) -> u64 {
    const ONES: u64 = 0x0001_0001_0001_0001;
    const LOW: u64 = 0x00FF_00FF_00FF_00FF;
    let t = x + ONES;
    let u = t + ((t >> 8) & LOW);
    (u >> 8) & LOW
}

/// All four channels `(s·αs + d·(255 − αs)) / 255`, the four channels at once in 16-bit lanes
/// of a u64 (each product sum is at most 255·255, so lanes never carry).
#[inline(always)]
fn alpha_over_all(src: Rgba, dst: Rgba) -> Rgba {
    let a = u64::from(src[3]);
    gather(div255_lanes(spread(src) * a + spread(dst) * (255 - a)))
}

/// The first `min(len, 4)` bytes of a pixel, zero-padded to four (no slice copy, no `memcpy`).
#[inline(always)]
pub fn load_pixel(px: &[u8]) -> [u8; 4] {
    match *px {
        [a, b, c, d, ..] => [a, b, c, d],
        [a, b, c] => [a, b, c, 0],
        [a, b] => [a, b, 0, 0],
        [a] => [a, 0, 0, 0],
        [] => [0; 4],
    }
}

/// Stores the first `min(len, 4)` bytes of `v` into `px`; true if any stored byte changed.
#[inline(always)]
pub fn store_pixel(px: &mut [u8], v: [u8; 4]) -> bool {
    let n = px.len().min(4);
    let mask = if n == 4 {
        u32::MAX
    } else {
        (1u32 << (8 * n)) - 1
    };
    let old = u32::from_le_bytes(load_pixel(px));
    if (old ^ u32::from_le_bytes(v)) & mask == 0 {
        return false;
    }
    match px {
        [a, b, c, d, ..] => [*a, *b, *c, *d] = v,
        [a, b, c] => [*a, *b, *c] = [v[0], v[1], v[2]],
        [a, b] => [*a, *b] = [v[0], v[1]],
        [a] => *a = v[0],
        [] => {}
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift32).
    struct Rng(u32);
    impl Rng {
        fn next(&mut self) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 17;
            self.0 ^= self.0 << 5;
            self.0
        }
        fn rgba(&mut self) -> Rgba {
            // Mostly random, sometimes the extremes that exercise clamps and saturations.
            match self.next() % 8 {
                0 => [0; 4],
                1 => [255; 4],
                _ => self.next().to_le_bytes(),
            }
        }
    }

    /// The render target and combiners of the random draws: colour and depth buffers at
    /// random VRAM addresses, a depth format drawn from `depth_formats`, a buffer of 8..=40 by
    /// 8..=40 pixels, every buffer access allowed, and stage 0 = the primary colour with
    /// stages 1-5 passing it through.
    fn random_target_and_primary_tev(r: &mut [u32; 0x300], rng: &mut Rng, depth_formats: &[u32]) {
        r[0x11D] = (crate::memory::VRAM.base + (rng.next() % 0x100) * 8) >> 3;
        r[0x11C] = (crate::memory::VRAM.base + 0x4000 + (rng.next() % 0x100) * 8) >> 3;
        r[0x117] = (rng.next() % 5) << 16;
        r[0x116] = depth_formats[rng.next() as usize % depth_formats.len()];
        let (w, h) = (8 + rng.next() % 33, 8 + rng.next() % 33);
        r[0x11E] = w | ((h - 1) << 12) | (1 << 24);
        r[0x112] = 0xF;
        r[0x113] = 0xF;
        r[0x114] = 3;
        r[0x115] = 3;
        r[0x04D] = 0xBF_0000;
        r[0x06D] = 1;
        r[0x0C0] = 0;
        r[0x0C1] = 0;
        for s in [0x0C8, 0x0D0, 0x0D8, 0x0F0, 0x0F8] {
            r[s] = 15 | (15 << 16);
        }
    }

    fn reference(output: ColorOutput, mask: [bool; 4], src: Rgba, dst: Rgba) -> Rgba {
        let out = match output {
            ColorOutput::Blend(b) => b.apply(src, dst),
            ColorOutput::Logic(op) => std::array::from_fn(|c| op.apply(src[c], dst[c])),
        };
        std::array::from_fn(|c| if mask[c] { out[c] } else { dst[c] })
    }

    #[test]
    fn every_blend_matches_the_generic_blend() {
        let mut rng = Rng(0x1234_5678);
        let mut kinds = std::collections::BTreeSet::new();
        for eq in 0..8u32 {
            for sf in 0..16u32 {
                for df in 0..16u32 {
                    // RGB and alpha use different (but related) settings so both paths mix.
                    let func = eq
                        | (((eq + 3) % 8) << 8)
                        | (sf << 16)
                        | (df << 20)
                        | (((sf + df) % 16) << 24)
                        | (((df + 5) % 16) << 28);
                    let b = Blend::from_words(func, rng.next());
                    let b_same_alpha = Blend::from_words(
                        eq | (eq << 8) | (sf << 16) | (df << 20) | (sf << 24) | (df << 28),
                        rng.next(),
                    );
                    for b in [b, b_same_alpha] {
                        let mask = [
                            rng.next() & 1 == 0,
                            rng.next() & 1 == 0,
                            rng.next() & 1 == 0,
                            rng.next() & 1 == 0,
                        ];
                        for mask in [mask, [true; 4]] {
                            let stage = ColorStage::new(ColorOutput::Blend(b), mask);
                            kinds.insert(format!("{:?}", stage.kind));
                            for _ in 0..24 {
                                let (src, dst) = (rng.rgba(), rng.rgba());
                                let want = reference(ColorOutput::Blend(b), mask, src, dst);
                                assert_eq!(
                                    stage.apply(src, dst),
                                    want,
                                    "{b:?} {mask:?} {src:?} {dst:?}"
                                );
                                assert_eq!(
                                    stage.apply_word(
                                        u32::from_le_bytes(src),
                                        u32::from_le_bytes(dst)
                                    ),
                                    u32::from_le_bytes(want),
                                    "word form: {b:?} {mask:?} {src:?} {dst:?}"
                                );
                            }
                        }
                    }
                }
            }
        }
        // Every specialisation was exercised.
        for k in ["Copy", "AlphaOverAll", "AlphaOver", "AlphaAdd", "Blend"] {
            assert!(kinds.contains(k), "{k} not exercised: {kinds:?}");
        }
    }

    #[test]
    fn alpha_over_matches_on_every_source_alpha_and_channel_value() {
        // Alpha over on all channels, on RGB only (alpha: one/zero), and additive RGB.
        for (func, kind) in [
            (0x7676_0000, Kind::AlphaOverAll),
            (0x0176_0000, Kind::AlphaOver),
            // Additive with source alpha (geoshader's particles), alpha kept / blended.
            (0x1016_0000, Kind::AlphaAdd),
            (0x7616_0000, Kind::AlphaAdd),
        ] {
            let b = Blend::from_words(func, 0);
            let stage = ColorStage::new(ColorOutput::Blend(b), [true; 4]);
            assert_eq!(stage.kind, kind);
            assert_eq!(
                stage.is_alpha_over_all_unmasked(),
                kind == Kind::AlphaOverAll
            );
            // A write mask leaves channels alone: not the unmasked form.
            let masked = ColorStage::new(ColorOutput::Blend(b), [true, true, true, false]);
            assert!(!masked.is_alpha_over_all_unmasked());
            for a in 0..=255u8 {
                for s in (0..=255u8).step_by(3) {
                    for d in (0..=255u8).step_by(5) {
                        let (src, dst) = ([s, 255 - s, s / 2, a], [d, d / 3, 255 - d, d]);
                        assert_eq!(stage.apply(src, dst), b.apply(src, dst));
                        assert_eq!(
                            stage.apply_word(u32::from_le_bytes(src), u32::from_le_bytes(dst)),
                            u32::from_le_bytes(b.apply(src, dst))
                        );
                        if kind == Kind::AlphaOverAll {
                            assert_eq!(
                                alpha_over_word(u32::from_le_bytes(src), u32::from_le_bytes(dst)),
                                u32::from_le_bytes(b.apply(src, dst))
                            );
                        }
                    }
                }
            }
        }
    }

    /// The stored-byte alpha over equals the generic blend (on the decoded RGBA8 bytes) for
    /// every α, source and destination value, each channel varied beside the others.
    #[test]
    fn stored_rgba8_alpha_over_equals_the_generic_blend() {
        let b = Blend::from_words(0x7676_0000, 0);
        assert!(ColorStage::new(ColorOutput::Blend(b), [true; 4]).is_alpha_over_all_unmasked());
        for a in 0..=255u8 {
            for s in 0..=255u8 {
                for d in 0..=255u8 {
                    let src = [s, s ^ 0x5A, 255 - s, a];
                    let dst = [d, d ^ 0x33, 255 - d, d.wrapping_mul(7)];
                    let stored = [dst[3], dst[2], dst[1], dst[0]];
                    let want = b.apply(src, dst);
                    assert_eq!(
                        over_rgba8_stored(src, stored),
                        [want[3], want[2], want[1], want[0]],
                        "{src:?} {dst:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn spread_and_gather_are_inverse() {
        let mut rng = Rng(7);
        for _ in 0..10_000 {
            let c = rng.rgba();
            let q = spread(c);
            assert_eq!(q & 0xFF00_FF00_FF00_FF00, 0);
            assert_eq!((q >> 48) as u8, c[3]);
            assert_eq!(gather(q), c);
        }
    }

    #[test]
    fn lane_division_by_255_is_exact() {
        for x in 0..=255u64 * 255 {
            // The same value in every lane, and different values in neighbouring lanes.
            let y = 255 * 255 - x;
            let lanes = x | (y << 16) | (x << 32) | (y << 48);
            let q = div255_lanes(lanes);
            assert_eq!(q & 0xFFFF, x / 255, "{x}");
            assert_eq!((q >> 16) & 0xFFFF, y / 255, "{y}");
            assert_eq!((q >> 32) & 0xFFFF, x / 255, "{x}");
            assert_eq!(q >> 48, y / 255, "{y}");
        }
    }

    /// The 16-lane stored-form alpha over equals the per-pixel one on random and extreme
    /// colours (every α with random channels, and the all-0 / all-255 corners).
    #[test]
    fn batch_over_rgba8_matches_the_per_pixel_form() {
        let mut rng = Rng(0x5EED_0016);
        let edge = [
            0u32,
            0xFFFF_FFFF,
            0xFF00_0000,
            0x00FF_FFFF,
            0x8080_8080,
            0x0100_00FF,
        ];
        for round in 0..20_000u32 {
            let src: [u32; 16] = std::array::from_fn(|i| match (round + i as u32) % 7 {
                0 => edge[rng.next() as usize % edge.len()],
                // Every α value in turn with random colour channels.
                1 => (rng.next() & 0x00FF_FFFF) | ((round & 0xFF) << 24),
                _ => rng.next(),
            });
            let stored: [u32; 16] = std::array::from_fn(|i| match (round + i as u32) % 5 {
                0 => edge[rng.next() as usize % edge.len()],
                _ => rng.next(),
            });
            let got = over_rgba8_stored_batch(&src, &stored);
            for i in 0..16 {
                let want = over_rgba8_stored(src[i].to_le_bytes(), stored[i].to_le_bytes());
                assert_eq!(
                    got[i].to_le_bytes(),
                    want,
                    "{:08x} over {:08x}",
                    src[i],
                    stored[i]
                );
            }
        }
    }

    #[test]
    fn every_logic_op_matches_the_generic_op() {
        let mut rng = Rng(99);
        for op in 0..16u32 {
            let op = LogicOp::from_bits(op);
            for mask_bits in 0..16u32 {
                let mask = std::array::from_fn(|c| mask_bits & (1 << c) != 0);
                let stage = ColorStage::new(ColorOutput::Logic(op), mask);
                for _ in 0..64 {
                    let (src, dst) = (rng.rgba(), rng.rgba());
                    let want = reference(ColorOutput::Logic(op), mask, src, dst);
                    assert_eq!(stage.apply(src, dst), want);
                    assert_eq!(
                        stage.apply_word(u32::from_le_bytes(src), u32::from_le_bytes(dst)),
                        u32::from_le_bytes(want)
                    );
                }
            }
        }
    }

    /// Random register files (every colour and depth format, blend, logic op, masks, tests,
    /// stencil) and random triangles over random memory: both paths leave identical bytes.
    #[test]
    fn random_draws_match_the_reference_path() {
        use crate::memory::{PhysMem, VRAM};
        use crate::pixel::fragment::PixelPipeline;
        use crate::vertex::{OutputVertex, ScreenVertex};
        let mut rng = Rng(0x0BAD_F00D);
        let mut noise = vec![0u8; 0x8000];
        for b in noise.iter_mut() {
            *b = rng.next() as u8;
        }
        let mut base = PhysMem::new();
        base.write(VRAM.base, &noise).unwrap();
        let mut written = 0;
        for case in 0..400 {
            let mut r = Box::new([0u32; 0x300]);
            for w in r[0x100..0x108].iter_mut() {
                *w = rng.next();
            }
            // Default fragment mode (gas and shadow are hooks, not fragment operations here).
            r[0x100] &= !3;
            if case % 2 == 0 {
                // The blends games use most: alpha over, copy, additive; blending on.
                r[0x101] = [0x7676_0000, 0x0101_0000, 0x1016_0000][case % 3];
                r[0x100] |= 1 << 8;
            }
            r[0x0E0] = 0;
            random_target_and_primary_tev(&mut r, &mut rng, &[0, 2, 3]);
            let mut tris = Vec::new();
            for _ in 0..6 {
                let mut tri = [ScreenVertex::default(); 3];
                for v in &mut tri {
                    let mut f = |scale: f32| (rng.next() % 10_000) as f32 / 10_000.0 * scale;
                    *v = ScreenVertex {
                        x: f(48.0) - 4.0,
                        y: f(48.0) - 4.0,
                        z_over_w: -f(1.0),
                        inv_w: 1.0,
                        attrs: OutputVertex {
                            color: [f(1.0), f(1.0), f(1.0), f(1.0)],
                            ..Default::default()
                        },
                    };
                }
                tris.push(tri);
            }
            let run = |path: PixelPath| {
                let mut mem = base.clone();
                let mut p = PixelPipeline::new(&r);
                p.set_path(path);
                assert_eq!(p.path(), path);
                for t in &tris {
                    p.draw_triangle(&mut mem, t);
                }
                let mut out = vec![0u8; 0x8000];
                mem.read(VRAM.base, &mut out).unwrap();
                (out, p.stats(), p.take_diagnostics())
            };
            let fast = run(PixelPath::Specialized);
            let reference = run(PixelPath::Reference);
            assert!(fast.0 == reference.0, "case {case}: memory differs");
            assert_eq!(fast.1, reference.1, "case {case}: counters differ");
            assert_eq!(fast.2, reference.2, "case {case}: diagnostics differ");
            written += fast.1.fragments_passed;
        }
        // The cases reach the colour write often enough to mean something.
        assert!(written > 20_000, "only {written} fragments written");
    }

    /// Random depth/stencil states over overlapping random triangles, drawn with the
    /// fixed-function hooks (which allow early depth/stencil) and fog on or off: the specialised
    /// path, which runs the stencil and depth tests before texturing and the combiners whenever
    /// [`PixelPipeline::early_depth`] allows it, leaves the same memory, counters and
    /// diagnostics as the reference path, which runs them in the hardware's order.
    #[test]
    fn random_draws_with_early_depth_match_the_reference_path() {
        use crate::lut::LookupTables;
        use crate::memory::{PhysMem, VRAM};
        use crate::pixel::fragment::PixelPipeline;
        use crate::pixel::stages::FixedFunctionStages;
        use crate::vertex::{OutputVertex, ScreenVertex};
        let luts = LookupTables::default();
        let mut rng = Rng(0x00EA_21D0);
        let mut noise = vec![0u8; 0x8000];
        for b in noise.iter_mut() {
            *b = rng.next() as u8;
        }
        let mut base = PhysMem::new();
        base.write(VRAM.base, &noise).unwrap();
        let (mut early_cases, mut killed) = (0, 0);
        for case in 0..400 {
            let mut r = Box::new([0u32; 0x300]);
            for w in r[0x100..0x108].iter_mut() {
                *w = rng.next();
            }
            r[0x100] &= !3;
            if case % 4 != 0 {
                // Alpha test off (early depth allowed), depth and stencil tests often on.
                r[0x104] &= !1;
                r[0x107] |= u32::from(case % 3 != 0);
            }
            if case % 2 == 0 {
                r[0x101] = [0x7676_0000, 0x0101_0000, 0x1016_0000][case % 3];
                r[0x100] |= 1 << 8;
            }
            // Fog (mode 5) sometimes: the fog hook then runs after early depth.
            r[0x0E0] = if case % 5 == 0 { 5 } else { 0 };
            random_target_and_primary_tev(&mut r, &mut rng, &[0, 2, 3, 3]);
            let mut tris = Vec::new();
            for _ in 0..8 {
                let mut tri = [ScreenVertex::default(); 3];
                for v in &mut tri {
                    let mut f = |scale: f32| (rng.next() % 10_000) as f32 / 10_000.0 * scale;
                    *v = ScreenVertex {
                        x: f(48.0) - 4.0,
                        y: f(48.0) - 4.0,
                        z_over_w: -f(1.0),
                        inv_w: 1.0,
                        attrs: OutputVertex {
                            color: [f(1.0), f(1.0), f(1.0), f(1.0)],
                            ..Default::default()
                        },
                    };
                }
                tris.push(tri);
            }
            let run = |path: PixelPath| {
                let mut mem = base.clone();
                let mut p = PixelPipeline::new(&r);
                p.set_path(path);
                let mut hooks = FixedFunctionStages::for_draw(&r, &luts);
                let early = p.early_depth(&hooks);
                for t in &tris {
                    p.draw_triangle_with(&mut mem, t, &mut hooks);
                }
                let mut out = vec![0u8; 0x8000];
                mem.read(VRAM.base, &mut out).unwrap();
                (out, p.stats(), p.take_diagnostics(), early)
            };
            let fast = run(PixelPath::Specialized);
            let reference = run(PixelPath::Reference);
            assert!(!reference.3, "the reference path never tests early");
            assert!(fast.0 == reference.0, "case {case}: memory differs");
            assert_eq!(fast.1, reference.1, "case {case}: counters differ");
            assert_eq!(fast.2, reference.2, "case {case}: diagnostics differ");
            if fast.3 {
                early_cases += 1;
                killed += fast.1.stencil_failed + fast.1.depth_failed;
            }
        }
        // Early depth/stencil really ran, and really discarded fragments.
        assert!(early_cases > 100, "only {early_cases} cases tested early");
        assert!(killed > 5_000, "only {killed} fragments discarded early");
    }

    /// Hooks whose procedural texture and lighting are missing for some fragments (the
    /// pipeline then uses zero for them and reports the feature once).
    struct Patchy;
    impl crate::pixel::stages::FragmentHooks for Patchy {
        fn procedural_texture(&mut self, f: &crate::pixel::raster::Fragment) -> Option<Rgba> {
            (!(f.x + 2 * f.y).is_multiple_of(3))
                .then(|| [(f.x * 37) as u8, (f.y * 11) as u8, 90, 200])
        }
        fn lighting(
            &mut self,
            f: &crate::pixel::raster::Fragment,
            _textures: &[Rgba; 4],
        ) -> Option<[Rgba; 2]> {
            (f.x % 2 == 1).then(|| [[(f.y * 5) as u8, 60, 7, 128], [3, (f.x * 9) as u8, 40, 9]])
        }
    }

    /// The specialised path reuses the combiners' source table from fragment to fragment: a
    /// fragment whose procedural texture or lighting colours are missing must read zero there
    /// (as the reference path's fresh table has), not the previous fragment's colours. The
    /// combiners add the procedural texture and both lighting colours, with hooks that leave
    /// them out for some pixels; both paths leave the same memory, counters and diagnostics.
    #[test]
    fn missing_hook_colours_read_zero_on_both_paths() {
        use crate::memory::{PhysMem, VRAM};
        use crate::pixel::fragment::PixelPipeline;
        use crate::vertex::{OutputVertex, ScreenVertex};
        let mut rng = Rng(0x7AB1_E5ED);
        let mut base = PhysMem::new();
        base.write(VRAM.base, &[0x40u8; 0x8000]).unwrap();
        let mut written = 0;
        for case in 0..40 {
            let mut r = Box::new([0u32; 0x300]);
            // Colour RGBA8 at VRAM, no depth test or writes, 32×32, blending alpha over or copy.
            r[0x100] = if case % 2 == 0 { 1 << 8 } else { 0 };
            r[0x101] = 0x7676_0000;
            r[0x11D] = VRAM.base >> 3;
            r[0x11C] = (VRAM.base + 0x4000) >> 3;
            r[0x117] = 0;
            r[0x116] = 0;
            r[0x11E] = 32 | (31 << 12) | (1 << 24);
            r[0x112] = 0xF;
            r[0x113] = 0xF;
            r[0x114] = 3;
            r[0x115] = 3;
            r[0x107] = 0xF << 8; // colour write mask on, depth test off
            r[0x04D] = 0xBF_0000;
            r[0x06D] = 1;
            r[0x080] = 1 << 10; // procedural texture on
            r[0x08F] = 1; // fragment lighting on
            // Stage 0: ADD(proctex, fragment primary); stage 1: ADD(previous, fragment
            // secondary); stages 2-5: pass-through.
            r[0x0C0] = 6 | (1 << 4) | (6 << 16) | (1 << 20);
            r[0x0C1] = 0;
            r[0x0C2] = 2 | (2 << 16);
            r[0x0C8] = 15 | (2 << 4) | (15 << 16) | (2 << 20);
            r[0x0C9] = 0;
            r[0x0CA] = 2 | (2 << 16);
            for s in [0x0D0, 0x0D8, 0x0F0, 0x0F8] {
                r[s] = 15 | (15 << 16);
            }
            let mut tri = [ScreenVertex::default(); 3];
            for v in &mut tri {
                let mut f = |scale: f32| (rng.next() % 10_000) as f32 / 10_000.0 * scale;
                *v = ScreenVertex {
                    x: f(40.0) - 4.0,
                    y: f(40.0) - 4.0,
                    z_over_w: -f(1.0),
                    inv_w: 1.0,
                    attrs: OutputVertex {
                        color: [f(1.0), f(1.0), f(1.0), f(1.0)],
                        ..Default::default()
                    },
                };
            }
            let run = |path: PixelPath| {
                let mut mem = base.clone();
                let mut p = PixelPipeline::new(&r);
                p.set_path(path);
                p.draw_triangle_with(&mut mem, &tri, &mut Patchy);
                let mut out = vec![0u8; 0x1000];
                mem.read(VRAM.base, &mut out).unwrap();
                (out, p.stats(), p.take_diagnostics())
            };
            let fast = run(PixelPath::Specialized);
            let reference = run(PixelPath::Reference);
            assert!(fast.0 == reference.0, "case {case}: memory differs");
            assert_eq!(fast.1, reference.1, "case {case}: counters differ");
            assert_eq!(fast.2, reference.2, "case {case}: diagnostics differ");
            written += fast.1.fragments_passed;
        }
        assert!(written > 2_000, "only {written} fragments written");
    }

    /// A texture sampler for units 0 and 1 whose colours and texel counts vary per fragment
    /// (so a survivor taking another fragment's colour, or a lost count, shows).
    struct Noise;
    impl crate::pixel::fragment::TextureSampler for Noise {
        fn enabled(&self, unit: usize) -> bool {
            unit < 2
        }
        fn needs_gradients(&self) -> bool {
            false
        }
        fn sample(
            &self,
            _m: &crate::memory::PhysMem,
            unit: usize,
            f: &crate::pixel::raster::Fragment,
        ) -> Rgba {
            let u = (f.tc[unit][0] * 251.0) as u32;
            let v = (f.tc[unit][1] * 241.0) as u32;
            let h = (u.wrapping_mul(0x9E37_79B9) ^ v.wrapping_mul(0x85EB_CA6B))
                .wrapping_add(unit as u32 * 0x27D4_EB2F);
            (h ^ (h >> 15)).to_le_bytes()
        }
        fn sample_counted(
            &self,
            m: &crate::memory::PhysMem,
            unit: usize,
            f: &crate::pixel::raster::Fragment,
        ) -> (Rgba, u32) {
            (
                self.sample(m, unit, f),
                1 + (f.x + 3 * f.y + unit as u32) % 4,
            )
        }
    }

    /// Hooks that always answer and may be skipped (so early depth/stencil runs): procedural
    /// texture, lighting and fog that depend on the fragment.
    struct Skippy;
    impl crate::pixel::stages::FragmentHooks for Skippy {
        fn procedural_texture(&mut self, f: &crate::pixel::raster::Fragment) -> Option<Rgba> {
            Some([
                (f.x * 29) as u8,
                (f.y * 13) as u8,
                (f.x ^ f.y) as u8,
                (f.x * f.y) as u8,
            ])
        }
        fn lighting(
            &mut self,
            f: &crate::pixel::raster::Fragment,
            t: &[Rgba; 4],
        ) -> Option<[Rgba; 2]> {
            Some([
                [t[0][1], (f.y * 7) as u8, t[3][0], (f.x * 3) as u8],
                [9, t[1][2], 40, 200],
            ])
        }
        fn fog(&mut self, f: &crate::pixel::raster::Fragment, c: &mut Rgba) -> bool {
            let k = (f.depth * 255.0) as u8;
            c[0] = c[0].wrapping_add(k);
            c[2] ^= k;
            true
        }
        fn skippable(&self) -> bool {
            true
        }
    }

    /// The batch path's phases against the reference path's per-fragment order, with what the
    /// plain random draws don't reach: two texture units (per-fragment colours and texel
    /// counts), the procedural texture and lighting, batches with some or all fragments
    /// killed by early depth/stencil (costs on: the killed fragments' texels still count;
    /// costs off: not sampled), alpha-test kills, fog, every colour format, blend shape,
    /// logic op and write mask. Memory, counters and diagnostics must be identical.
    #[test]
    fn textured_batches_with_kills_match_the_reference_path() {
        use crate::memory::{PhysMem, VRAM};
        use crate::pixel::fragment::PixelPipeline;
        use crate::vertex::{OutputVertex, ScreenVertex};
        let mut rng = Rng(0xBA7C_4ED5);
        let mut noise = vec![0u8; 0x8000];
        for b in noise.iter_mut() {
            *b = rng.next() as u8;
        }
        let mut base = PhysMem::new();
        base.write(VRAM.base, &noise).unwrap();
        let (mut early_cases, mut early_killed, mut alpha_killed, mut written) = (0, 0, 0, 0);
        let mut texels = 0;
        for case in 0..300 {
            let mut r = Box::new([0u32; 0x300]);
            for w in r[0x100..0x108].iter_mut() {
                *w = rng.next();
            }
            r[0x100] &= !3;
            if case % 4 != 0 {
                // Alpha test off (early depth allowed), depth or stencil test often on.
                r[0x104] &= !1;
                r[0x107] |= u32::from(case % 3 != 0);
            }
            if case % 2 == 0 {
                r[0x101] = [0x7676_0000, 0x0101_0000, 0x1016_0000][case % 3];
                r[0x100] |= 1 << 8;
            }
            if case % 8 == 1 {
                // Every channel written (the RGBA8 alpha-over fast write when also RGBA8).
                r[0x107] |= 0xF << 8;
            }
            r[0x0E0] = if case % 5 == 0 { 5 } else { 0 };
            r[0x11D] = (VRAM.base + (rng.next() % 0x100) * 8) >> 3;
            r[0x11C] = (VRAM.base + 0x4000 + (rng.next() % 0x100) * 8) >> 3;
            r[0x117] = (rng.next() % 5) << 16;
            r[0x116] = [0, 2, 3, 3][rng.next() as usize % 4];
            let (w, h) = (8 + rng.next() % 33, 8 + rng.next() % 33);
            r[0x11E] = w | ((h - 1) << 12) | (1 << 24);
            r[0x112] = 0xF;
            r[0x113] = 0xF;
            r[0x114] = 3;
            r[0x115] = 3;
            r[0x04D] = 0xBF_0000;
            r[0x06D] = 1;
            r[0x080] = 1 << 10; // procedural texture on
            r[0x08F] = 1; // fragment lighting on
            // ADD(tex0, tex1); MODULATE(previous, primary); ADD(previous, proctex);
            // ADD(previous, fragment primary); pass-through.
            r[0x0C0] = 3 | (4 << 4) | (3 << 16) | (4 << 20);
            r[0x0C2] = 2 | (2 << 16);
            r[0x0C8] = 15 | (15 << 16);
            r[0x0CA] = 1 | (1 << 16);
            r[0x0D0] = 15 | (6 << 4) | (15 << 16) | (6 << 20);
            r[0x0D2] = 2 | (2 << 16);
            r[0x0D8] = 15 | (1 << 4) | (15 << 16) | (1 << 20);
            r[0x0DA] = 2 | (2 << 16);
            for s in [0x0F0, 0x0F8] {
                r[s] = 15 | (15 << 16);
            }
            let mut tris = Vec::new();
            for _ in 0..8 {
                let mut tri = [ScreenVertex::default(); 3];
                for v in &mut tri {
                    let mut f = |scale: f32| (rng.next() % 10_000) as f32 / 10_000.0 * scale;
                    *v = ScreenVertex {
                        x: f(48.0) - 4.0,
                        y: f(48.0) - 4.0,
                        z_over_w: -f(1.0),
                        inv_w: 1.0,
                        attrs: OutputVertex {
                            color: [f(1.0), f(1.0), f(1.0), f(1.0)],
                            tc0: [f(1.0), f(1.0)],
                            tc1: [f(2.0), f(1.0)],
                            ..Default::default()
                        },
                    };
                }
                tris.push(tri);
            }
            for costs in [true, false] {
                let run = |path: PixelPath| {
                    let mut mem = base.clone();
                    let mut p = PixelPipeline::with_sampler(&r, Noise);
                    p.set_path(path);
                    p.set_costs(costs);
                    let early = p.early_depth(&Skippy);
                    for t in &tris {
                        p.draw_triangle_with(&mut mem, t, &mut Skippy);
                    }
                    let mut out = vec![0u8; 0x8000];
                    mem.read(VRAM.base, &mut out).unwrap();
                    (out, p.stats(), p.take_diagnostics(), early)
                };
                let fast = run(PixelPath::Specialized);
                let reference = run(PixelPath::Reference);
                assert!(
                    fast.0 == reference.0,
                    "case {case} costs {costs}: memory differs"
                );
                assert_eq!(
                    fast.1, reference.1,
                    "case {case} costs {costs}: counters differ"
                );
                assert_eq!(
                    fast.2, reference.2,
                    "case {case} costs {costs}: diagnostics"
                );
                if costs {
                    if fast.3 {
                        early_cases += 1;
                        early_killed += fast.1.stencil_failed + fast.1.depth_failed;
                    }
                    alpha_killed += fast.1.alpha_failed;
                    written += fast.1.fragments_passed;
                    texels += fast.1.texels;
                }
            }
        }
        assert!(early_cases > 80, "only {early_cases} cases tested early");
        assert!(
            early_killed > 3_000,
            "only {early_killed} fragments killed early"
        );
        assert!(alpha_killed > 1_000, "only {alpha_killed} alpha-test kills");
        assert!(written > 20_000, "only {written} fragments written");
        assert!(texels > 50_000, "only {texels} texels counted");
    }

    /// The batch alpha test against [`CompareFunc::test`] for every function, every
    /// reference and every alpha (16 lanes at a time).
    #[test]
    fn alpha_pass_mask_matches_the_compare_function() {
        for func in 0..8 {
            let func = CompareFunc::from_bits(func);
            for reference in 0..=255u8 {
                for base in (0..256).step_by(16) {
                    let colors: [Rgba; 16] =
                        std::array::from_fn(|k| [k as u8, 7, 99, (base + k) as u8]);
                    let mask = alpha_pass_mask(func, reference, &colors);
                    for (k, c) in colors.iter().enumerate() {
                        assert_eq!(
                            mask & (1 << k) != 0,
                            func.test(c[3], reference),
                            "{func:?} ref {reference} alpha {}",
                            c[3]
                        );
                    }
                    assert_eq!(mask >> 16, 0, "{func:?}: no bits past lane 15");
                }
            }
        }
    }

    /// Fog across a batch ([`FogConfig::apply_batch`]) against [`FogConfig::apply`] per
    /// fragment: random LUTs (values and signed differences, the extremes included), both z
    /// flips, depths including NaN, ±∞, ±0, 1, values outside [0, 1], the LUT entry edges and
    /// random ones; random lane masks and partial batches (lanes outside the mask or past
    /// the fragments untouched).
    #[test]
    fn depth_pass_mask_matches_the_compare_function() {
        let mut rng = Rng(0xDE97_4A5C);
        let edges = [0u32, 1, 0xFFFF, 0x1_0000, 0xFF_FFFF, 0x100_0000, u32::MAX];
        for func in 0..8 {
            let func = CompareFunc::from_bits(func);
            for round in 0..200 {
                let z: [u32; 16] = std::array::from_fn(|k| match round % 3 {
                    0 => edges[(k + round) % edges.len()],
                    1 => rng.next() % 8,
                    _ => rng.next(),
                });
                let stored: [u32; 16] = std::array::from_fn(|k| match round % 3 {
                    0 => edges[(k * 3 + round / 3) % edges.len()],
                    1 => rng.next() % 8,
                    _ => rng.next() & 0xFF_FFFF,
                });
                let mask = depth_pass_mask(func, &z, &stored);
                for k in 0..16 {
                    assert_eq!(
                        mask >> k & 1 == 1,
                        func.test(z[k], stored[k]),
                        "{func:?} z {} stored {}",
                        z[k],
                        stored[k]
                    );
                }
                assert_eq!(mask >> 16, 0);
            }
        }
    }

    #[test]
    fn fog_batch_matches_fog_per_fragment() {
        use crate::pixel::raster::Fragment;
        use crate::pixel::stages::fog::FogConfig;
        let mut rng = Rng(0xF06F_06F0);
        let special = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            1.0,
            -1.0,
            2.0,
            0.5,
            1.0 / 128.0,
            127.0 / 128.0,
            127.5 / 128.0,
            f32::MIN_POSITIVE,
            1.0 - f32::EPSILON,
            1.0e30,
            -1.0e30,
        ];
        for case in 0..400 {
            let mut words = [0u32; 128];
            for w in words.iter_mut() {
                *w = match rng.next() % 8 {
                    0 => 0,
                    1 => 0xFF_FFFF,
                    2 => 0x7FF << 13,
                    _ => rng.next() & 0xFF_FFFF,
                };
            }
            let mut regs = Box::new([0u32; 0x300]);
            regs[0x0E0] = 5 | (u32::from(case % 2 == 1) << 16);
            regs[0x0E1] = rng.next() & 0xFF_FFFF;
            let fog = FogConfig::from_regs(&regs, &words).expect("fog mode 5");
            assert_eq!(fog.z_flip, case % 2 == 1);
            let n = 1 + (rng.next() % 16) as usize;
            let frags: Vec<Fragment> = (0..n)
                .map(|k| Fragment {
                    x: k as u32,
                    depth: if rng.next().is_multiple_of(2) {
                        special[rng.next() as usize % special.len()]
                    } else {
                        (rng.next() % 100_000) as f32 / 100_000.0
                    },
                    ..Default::default()
                })
                .collect();
            let colors: [Rgba; 16] = std::array::from_fn(|_| rng.rgba());
            let alive = if case % 3 == 0 {
                0xFFFF
            } else {
                rng.next() & 0xFFFF
            };
            let mut got = colors;
            fog.apply_batch(&frags, &mut got, alive);
            let mut want = colors;
            for (k, f) in frags.iter().enumerate() {
                if alive & (1 << k) != 0 {
                    fog.apply(f.depth, &mut want[k]);
                }
            }
            assert_eq!(got, want, "case {case}");
        }
    }

    /// The batch phases with the fixed-function hooks (fog across the batch with a random
    /// fog LUT and colour, both z flips), every alpha-test function with random references,
    /// random stencil functions and operations (D24S8 often), depth functions and writes,
    /// early depth/stencil where allowed, partial batches at small triangles' edges and
    /// depths at the range ends (vertices at z 0 and 1): memory, counters and diagnostics
    /// equal the reference path's.
    #[test]
    fn batch_phases_with_fog_and_every_alpha_function_match_the_reference_path() {
        use crate::lut::LookupTables;
        use crate::memory::{PhysMem, VRAM};
        use crate::pixel::fragment::PixelPipeline;
        use crate::pixel::stages::FixedFunctionStages;
        use crate::vertex::{OutputVertex, ScreenVertex};
        let mut rng = Rng(0x0A1F_A7E5);
        let mut noise = vec![0u8; 0x8000];
        for b in noise.iter_mut() {
            *b = rng.next() as u8;
        }
        let mut base = PhysMem::new();
        base.write(VRAM.base, &noise).unwrap();
        let (mut alpha_killed, mut written, mut fogged, mut ds_killed) = (0, 0, 0, 0);
        let mut funcs_killing = [0u64; 8];
        for case in 0..480 {
            let mut luts = LookupTables::default();
            for w in luts.fog.iter_mut() {
                *w = rng.next() & 0xFF_FFFF;
            }
            let mut r = Box::new([0u32; 0x300]);
            for w in r[0x100..0x108].iter_mut() {
                *w = rng.next();
            }
            r[0x100] &= !3;
            let func = (case % 8) as u32;
            // Alpha test: every function in turn, on in 3 rounds of 4 (off: early depth).
            r[0x104] = u32::from((case / 8) % 4 != 3) | (func << 4) | ((rng.next() & 0xFF) << 8);
            if case % 2 == 0 {
                r[0x101] = [0x7676_0000, 0x0101_0000, 0x1016_0000][case % 3];
                r[0x100] |= 1 << 8;
            }
            if case % 3 == 0 {
                r[0x107] |= 0xF << 8;
            }
            // Fog (mode 5) in 2 cases of 3, z flip sometimes.
            let fog_mode = if case % 3 != 2 { 5 } else { 0 };
            r[0x0E0] = fog_mode | ((rng.next() & 1) << 16);
            r[0x0E1] = rng.next() & 0xFF_FFFF;
            random_target_and_primary_tev(&mut r, &mut rng, &[0, 2, 3, 3]);
            let mut tris = Vec::new();
            for t in 0..10 {
                // Small triangles (partial batches) and large ones.
                let scale = if t % 2 == 0 { 6.0 } else { 48.0 };
                let (ox, oy) = ((rng.next() % 40) as f32, (rng.next() % 40) as f32);
                let mut tri = [ScreenVertex::default(); 3];
                for v in &mut tri {
                    let z_kind = rng.next() % 4;
                    let mut f = |scale: f32| (rng.next() % 10_000) as f32 / 10_000.0 * scale;
                    let z = match z_kind {
                        0 => 0.0,
                        1 => -1.0,
                        _ => -f(1.0),
                    };
                    let (x, y) = if scale < 10.0 {
                        (ox + f(scale) - 4.0, oy + f(scale) - 4.0)
                    } else {
                        (f(scale) - 4.0, f(scale) - 4.0)
                    };
                    *v = ScreenVertex {
                        x,
                        y,
                        z_over_w: z,
                        inv_w: 1.0,
                        attrs: OutputVertex {
                            color: [f(1.0), f(1.0), f(1.0), f(1.0)],
                            ..Default::default()
                        },
                    };
                }
                tris.push(tri);
            }
            for costs in [true, false] {
                let run = |path: PixelPath| {
                    let mut mem = base.clone();
                    let mut p = PixelPipeline::new(&r);
                    p.set_path(path);
                    p.set_costs(costs);
                    let mut hooks = FixedFunctionStages::for_draw(&r, &luts);
                    for t in &tris {
                        p.draw_triangle_with(&mut mem, t, &mut hooks);
                    }
                    let mut out = vec![0u8; 0x8000];
                    mem.read(VRAM.base, &mut out).unwrap();
                    (out, p.stats(), p.take_diagnostics())
                };
                let fast = run(PixelPath::Specialized);
                let reference = run(PixelPath::Reference);
                assert!(fast.0 == reference.0, "case {case} costs {costs}: memory");
                assert_eq!(fast.1, reference.1, "case {case} costs {costs}: counters");
                assert_eq!(
                    fast.2, reference.2,
                    "case {case} costs {costs}: diagnostics"
                );
                if costs {
                    alpha_killed += fast.1.alpha_failed;
                    funcs_killing[func as usize] += fast.1.alpha_failed;
                    written += fast.1.fragments_passed;
                    ds_killed += fast.1.stencil_failed + fast.1.depth_failed;
                    if r[0x0E0] & 7 == 5 {
                        fogged += fast.1.fragments_passed;
                    }
                }
            }
        }
        assert!(alpha_killed > 5_000, "only {alpha_killed} alpha-test kills");
        // Never and every function but Always discard some fragments.
        for (f, &k) in funcs_killing.iter().enumerate() {
            assert!(f == 1 || k > 0, "alpha function {f} never discarded");
        }
        assert!(written > 20_000, "only {written} fragments written");
        assert!(fogged > 10_000, "only {fogged} fogged fragments written");
        assert!(ds_killed > 3_000, "only {ds_killed} depth/stencil kills");
    }

    #[test]
    fn pixel_bytes_round_trip_for_every_width() {
        for n in 0..=5usize {
            let mut px = vec![7u8; n];
            let v = [1, 2, 3, 4];
            let changed = store_pixel(&mut px, v);
            assert_eq!(changed, n > 0, "width {n}");
            let k = n.min(4);
            assert_eq!(&px[..k], &v[..k]);
            if n == 5 {
                assert_eq!(px[4], 7, "bytes past the fourth are untouched");
            }
            let mut want = [0u8; 4];
            want[..k].copy_from_slice(&v[..k]);
            assert_eq!(load_pixel(&px), want);
            assert!(!store_pixel(&mut px, v), "same bytes: unchanged");
            // Bytes past the pixel's width are ignored by the comparison.
            if (1..4).contains(&n) {
                let mut w = v;
                w[3] = 99;
                assert!(!store_pixel(&mut px, w));
            }
        }
    }
}
