//! Fog and gas (`pica-raster.md` §9.1, §9.4).
//!
//! Stage: after the alpha test, before the stencil and depth tests (§0.4 step 9). Input: a
//! [`FogConfig`] decoded once per draw by [`FogConfig::from_regs`] from the registers and the
//! 128-entry fog LUT; per fragment its final depth in [0, 1] (after the depth map and the
//! w-buffer product) and the combiner output. Output: the combiner output with its RGB blended
//! towards the fog colour (alpha unchanged).
//!
//! Registers read (through [`pica_cmd::regs::Regs`]): 0x0E0 TEXENV_UPDATE_BUFFER bits 0-2 (fog
//! mode) and bit 16 (z flip), 0x0E1 FOG_COLOR (RGB8). The LUT comes from the FOG_LUT_DATA ports
//! (stored in [`crate::lut::LookupTables::fog`]). [`GasConfig`] additionally decodes 0x0E0 bit 3,
//! 0x0E4 GAS_ATTENUATION, 0x0E5 GAS_ACCMAX, 0x120-0x122 and 0x126 for display.
//!
//! # Fog
//!
//! Exactly Citra's software rasteriser (the reference calls it "not fully accurate"; the
//! hardware's precision is unknown): `idx = (z_flip ? 1 − depth : depth)·128`,
//! `i = clamp(floor(idx), 0, 127)`, `f = clamp(value[i] + diff[i]·(idx − i), 0, 1)`, and per RGB
//! channel `trunc(f·c + (1 − f)·fog_colour)`.
//!
//! # Gas
//!
//! Gas rendering (fog mode 7, fragment operation mode 1) accumulates gas density into the
//! colour buffer and shades it in a second pass. No reference describes the algorithm: Citra
//! and Panda3DS do not implement it and 3dbrew only lists the register fields. It is therefore
//! **not modelled**: [`GAS_SUPPORT`] says so, [`GasConfig`] decodes the registers so the viewer
//! can show them, and the fragment pipeline reports `NotImplemented(Gas)` and discards gas
//! fragments (as Citra's GL path does).

use crate::pixel::color::Rgba;
use crate::pixel::isa;
use crate::pixel::raster::Fragment;
use pica_cmd::regs::framebuffer::{GasColorLutInput, GasDepthFunc};
use pica_cmd::regs::tev::{FogLutEntry, FogMode, GasDensitySource};
use pica_cmd::regs::{RegView as _, Regs};

/// Number of fog LUT entries.
pub const FOG_LUT_ENTRIES: usize = 128;

/// The fog LUT decoded to `[value, signed difference]` per entry (value bits 13-23, unsigned
/// fixed0.0.11; difference bits 0-12, signed fixed1.1.11; both /2047 as Citra, see
/// [`FogLutEntry`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FogLut {
    /// `[value, diff]` per entry.
    pub entries: [[f32; 2]; FOG_LUT_ENTRIES],
}

impl FogLut {
    /// Decodes 128 entry words as written through FOG_LUT_DATA.
    pub fn from_words(words: &[u32; FOG_LUT_ENTRIES]) -> Self {
        let mut entries = [[0.0; 2]; FOG_LUT_ENTRIES];
        for (e, &w) in entries.iter_mut().zip(words) {
            let d = FogLutEntry::from_raw(w);
            *e = [d.value(), d.diff()];
        }
        FogLut { entries }
    }

    /// The fog factor (weight of the fragment colour) for LUT coordinate `x` in [0, 1]:
    /// `clamp(value[i] + diff[i]·(128x − i), 0, 1)` with `i = clamp(floor(128x), 0, 127)`.
    /// NaN reads as 0.
    #[inline]
    pub fn factor(&self, x: f32) -> f32 {
        let idx = if x.is_nan() { 0.0 } else { x * 128.0 };
        // `clamp(floor(idx), 0, 127)` on integers: for idx ≥ 0 the truncating cast is the
        // floor (and saturates above 2^31, +∞ included, which the clamp takes to 127); every
        // idx < 0 (−∞ included) gives 0 both ways (floor ≤ −1 or a truncation to 0 clamped
        // to 0). NaN does not reach here. The same entry and the same `i` as an f32.
        let n = (idx as i32).clamp(0, FOG_LUT_ENTRIES as i32 - 1);
        let [v, d] = self.entries[n as usize];
        (v + d * (idx - n as f32)).clamp(0.0, 1.0)
    }
}

/// Fog (fog mode 5) of one draw.
#[derive(Clone, Debug, PartialEq)]
pub struct FogConfig {
    /// TEXENV_UPDATE_BUFFER bit 16: index the LUT with `1 − depth`.
    pub z_flip: bool,
    /// FOG_COLOR, RGB unsigned 8-bit.
    pub color: [u8; 3],
    /// The decoded fog LUT.
    pub lut: FogLut,
}

impl FogConfig {
    /// Decodes the fog configuration if `regs` selects fog mode 5; `None` otherwise.
    pub fn from_regs(regs: &[u32; 0x300], lut: &[u32; FOG_LUT_ENTRIES]) -> Option<Self> {
        let r = Regs::new(regs);
        let ub = r.texenv_update_buffer();
        (ub.fog_mode == FogMode::Fog).then(|| {
            let c = r.fog_color();
            FogConfig {
                z_flip: ub.fog_z_flip,
                color: [c.r, c.g, c.b],
                lut: FogLut::from_words(lut),
            }
        })
    }

    /// The fog factor for a fragment at `depth` (the [0, 1] depth of `pica-raster.md` §3.3).
    #[inline]
    pub fn factor(&self, depth: f32) -> f32 {
        let x = if self.z_flip { 1.0 - depth } else { depth };
        self.lut.factor(x)
    }

    /// Blends the RGB of `color` towards the fog colour for a fragment at `depth`.
    #[inline]
    pub fn apply(&self, depth: f32, color: &mut Rgba) {
        let f = self.factor(depth);
        for (c, &fc) in color.iter_mut().zip(&self.color) {
            // ok: both weights are in [0, 1], so the sum is in [0, 255]; `as` truncates.
            *c = (f * f32::from(*c) + (1.0 - f) * f32::from(fc)) as u8;
        }
    }
}

impl FogConfig {
    /// [`FogConfig::apply`] for the fragments `frags[k]` with bit k of `alive` set, on
    /// `colors[k]` (the other colours are left alone): the same arithmetic on every lane at
    /// once (LUT coordinate, entry, fraction, then [`fog_blend_lanes`] for the three channel
    /// blends over fixed-size arrays, which the compiler vectorises except for the table
    /// reads), then the results of the `alive` lanes kept. Bit-identical to `apply` per
    /// fragment.
    /// Through the AVX2 copy where the CPU has it ([`crate::pixel::isa`]).
    #[inline]
    pub fn apply_batch(&self, frags: &[Fragment], colors: &mut [Rgba; 16], alive: u32) {
        isa::dispatch!(
            self.apply_batch_avx2(frags, colors, alive),
            self.apply_batch_body(frags, colors, alive)
        )
    }

    isa::avx2_fn! {
        fn apply_batch_avx2(&self, frags: &[Fragment], colors: &mut [Rgba; 16], alive: u32) {
            self.apply_batch_body(frags, colors, alive);
        }
    }

    #[inline(always)]
    fn apply_batch_body(&self, frags: &[Fragment], colors: &mut [Rgba; 16], alive: u32) {
        const N: usize = 16;
        let mut x = [0.0f32; N];
        for (xi, f) in x.iter_mut().zip(frags) {
            *xi = if self.z_flip { 1.0 - f.depth } else { f.depth };
        }
        // `FogLut::factor` lane by lane: NaN reads as 0, the entry index is the clamped
        // truncation of 128x (see there).
        let idx = x.map(|v| if v.is_nan() { 0.0 } else { v * 128.0 });
        // `(i as i32).clamp(0, 127)`: for i ≥ 0 truncating and then taking at most 127 is
        // truncating `min(i, 127)` (127 is an integer); every i < 0 (−∞ included) gives 0 both
        // ways. `trunc_u32` is exact on [0, 127] and has no saturation cases to handle.
        let n = idx.map(|i| trunc_u32(i.min((FOG_LUT_ENTRIES - 1) as f32)) as i32);
        let mut f = [0.0f32; N];
        for ((fi, &i), &e) in f.iter_mut().zip(&idx).zip(&n) {
            let [v, d] = self.lut.entries[e as usize];
            *fi = (v + d * (i - e as f32)).clamp(0.0, 1.0);
        }
        let out = fog_blend_lanes(&f, self.color, colors);
        // Keep lane k where bit k of `alive` is set and a fragment exists (a select on the
        // words, no branch).
        let live = alive
            & if frags.len() >= 32 {
                u32::MAX
            } else {
                (1u32 << frags.len()) - 1
            };
        for (k, (c, o)) in colors.iter_mut().zip(&out).enumerate() {
            let keep = 0u32.wrapping_sub((live >> k) & 1);
            let old = u32::from_le_bytes(*c);
            *c = ((o & keep) | (old & !keep)).to_le_bytes();
        }
    }
}

/// The RGB blends of [`FogConfig::apply`] on 16 lanes: lane k is `colors[k]` with each RGB
/// channel `c` replaced by `trunc(f[k]·c + (1 − f[k])·fog)` (alpha kept), returned as the
/// little-endian word of the RGBA bytes. Channel by channel over arrays of words (channel
/// extraction, int → float, the blend, float → int and the repacking all vectorise).
///
/// `apply` casts the sum with `as u8`; here it is [`trunc_u32`], exact for NaN and every
/// value in [0, 2^23), on a value known to be NaN or to lie in [0, 256), so the same result
/// for every factor [`FogLut::factor`] can return:
/// * `f` in [0, 1]: `fl(f·c) ≤ c ≤ 255` and `fl(1 − f) ≤ 1`, so both products are in
///   [0, 255] and, with `fl(1 − f) ≤ 1 − f + 2^−25` and relative errors `u = 2^−24` per
///   product and sum, the rounded sum is at most `255·(1 + 2^−25)(1 + u)² < 256` (and
///   at least 0: every term is non-negative).
///   Both truncate toward zero there.
/// * `f` NaN (the clamp passes NaN through; a LUT difference of 0 times an infinite
///   fraction): the sum is NaN, which `as u8` and [`trunc_u32`] both map to 0.
///
/// `as u8` and `as i32` on an f32 compile to scalar conversions with saturation checks per
/// lane on SSE2 (LLVM does not vectorise the saturating cast there); [`trunc_u32`] is plain
/// packed float and integer arithmetic.
#[inline(always)]
pub(crate) fn fog_blend_lanes(f: &[f32; 16], fog: [u8; 3], colors: &[Rgba; 16]) -> [u32; 16] {
    const N: usize = 16;
    let words = colors.map(u32::from_le_bytes);
    // Alpha (the top byte) is kept.
    let mut out = words.map(|w| w & 0xFF00_0000);
    for (ch, &fc) in fog.iter().enumerate() {
        let fc = f32::from(fc);
        let shift = 8 * ch as u32;
        let mut r = [0u32; N];
        for k in 0..N {
            let c = ((words[k] >> shift) & 0xFF) as i32 as f32;
            // See the doc: the sum is NaN or in [0, 256).
            r[k] = trunc_u32(f[k] * c + (1.0 - f[k]) * fc);
        }
        for k in 0..N {
            out[k] |= r[k] << shift;
        }
    }
    out
}

/// `x as u32` (truncation toward zero) for NaN (→ 0), every negative `x` (→ 0, as the
/// saturating cast) and every `x` in [0, 2^23), without a float → int conversion: `x` is
/// raised to 0 (`max` also turns NaN into 0), then `y = x + 2^23` rounds x to the nearest
/// integer (ties to even: the ulp of y in [2^23, 2^24] is 1, or 2 at 2^24 itself, which only
/// x ≥ 2^23 − 0.5 reaches and which still encodes 2^23), whose value is the bit pattern of y
/// minus that of 2^23; `y − 2^23` is exact, so where the rounding went up (`y − 2^23 > x`)
/// one is taken off, which gives ⌊x⌋ = trunc(x). Above 2^23 the result is wrong: callers
/// guarantee the range. (The same form was checked against `as u8` for every f32 from 0 to
/// 256 when it was written.)
#[inline(always)]
pub(crate) fn trunc_u32(x: f32) -> u32 {
    const MAGIC: f32 = 8_388_608.0;
    let x = x.max(0.0);
    let y = x + MAGIC;
    let r = y.to_bits().wrapping_sub(MAGIC.to_bits());
    r.wrapping_sub(u32::from(y - MAGIC > x))
}

/// How much of gas rendering this crate models.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum GasSupport {
    /// Not modelled: no available reference describes the density accumulation or shading
    /// algorithm (see the module doc). Gas fragments are discarded and reported.
    NotModelled,
}

/// The state of gas support.
pub const GAS_SUPPORT: GasSupport = GasSupport::NotModelled;

/// The gas registers of a draw, decoded for display (the algorithm is not modelled).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GasConfig {
    /// TEXENV_UPDATE_BUFFER bit 3: density from plain density or depth.
    pub density_source: GasDensitySource,
    /// GAS_ATTENUATION (float16): density attenuation.
    pub attenuation: f32,
    /// GAS_ACCMAX (float16): maximum density accumulation.
    pub accumulation_max: f32,
    /// GAS_LIGHT_XY: planar shading minimum, maximum, attenuation (unsigned 8-bit).
    pub planar: [u8; 3],
    /// GAS_LIGHT_Z: view shading minimum, maximum, attenuation (unsigned 8-bit).
    pub view: [u8; 3],
    /// GAS_LIGHT_Z_COLOR bits 0-7: line-of-sight shading effect (unsigned 8-bit).
    pub line_of_sight: u8,
    /// GAS_LIGHT_Z_COLOR bit 8: colour-LUT input.
    pub color_lut_input: GasColorLutInput,
    /// GAS_DELTAZ_DEPTH bits 0-23: depth-direction attenuation (fixed0.16.8, raw / 256).
    pub delta_z: f32,
    /// GAS_DELTAZ_DEPTH bits 24-25: gas depth function.
    pub depth_func: GasDepthFunc,
    /// Always [`GasSupport::NotModelled`].
    pub support: GasSupport,
}

impl GasConfig {
    /// Decodes the gas registers.
    pub fn from_regs(regs: &[u32; 0x300]) -> Self {
        let r = Regs::new(regs);
        let xy = r.gas_light_xy();
        let z = r.gas_light_z();
        let zc = r.gas_light_z_color();
        let dz = r.gas_deltaz_depth();
        GasConfig {
            density_source: r.texenv_update_buffer().gas_density_source,
            attenuation: r.gas_attenuation().to_f32(),
            accumulation_max: r.gas_accmax().to_f32(),
            planar: [xy.min, xy.max, xy.attenuation],
            view: [z.min, z.max, z.attenuation],
            line_of_sight: zc.los_effect,
            color_lut_input: zc.lut_input,
            delta_z: dz.delta_z_raw as f32 / 256.0,
            depth_func: dz.depth_func,
            support: GAS_SUPPORT,
        }
    }
}

#[cfg(test)]
mod tests;
