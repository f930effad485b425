//! Fragment-lighting setup for scenes: lights, the light environment and lighting lookup tables,
//! written the way citro3d's `C3D_LightEnv` / `C3D_Light` / `LightLut` code writes them
//! (register sequences learned from citro3d; code our own).
//!
//! Stage: host-side description of the fragment lighting unit (`pica-raster.md` §7). Inputs:
//! light colours, positions, LUT functions. Outputs: register words for
//! [`super::CommandList::set_light_env`]: 0x08F LIGHTING_ENABLE0 / 0x1C6 LIGHTING_ENABLE1,
//! 0x1C0 ambient, 0x1C2-0x1C4 light count and configuration, 0x1D0-0x1D2 LUT input abs flags,
//! selectors and scales, 0x1D9 light permutation, per light 0x140 + 0x10·n … +0xB (colours with
//! 8-bit channels in 10-bit fields B 0-9, G 10-19, R 20-29; position as three float16; spot
//! direction fixed1.1.11; config; distance attenuation float20), and the LUT data port
//! (0x1C5 index = table << 8, 0x1C8 data: value fixed0.0.12 in bits 0-11, difference to the next
//! entry in bits 12-23 as sign (bit 23) and magnitude fixed0.0.11 — the encoding citro3d writes).
//!
//! Register-field choices where the sources disagree (RB/RR disable bits in 0x1C4, colour field
//! width) are the register catalogue's, so they change in one place (`pica_cmd::regs::lighting`).

use pica_cmd::regs::RegView;
use pica_cmd::regs::lighting::{
    CONFIG1_RB_DISABLE_BIT, CONFIG1_RR_DISABLE_BIT, FresnelSelector, LightEnvConfig,
    LightingConfig0, LutInput, LutScale,
};
use shader_unit::float::{F16, F20};

use pica_cmd::regs::lighting::BumpMode;

/// A 256-entry lighting lookup table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LightLut {
    /// The register words (value bits 0-11, difference magnitude 12-22, difference sign 23).
    pub entries: [u32; 256],
}

impl LightLut {
    /// Samples `f` over the table's input range. Unsigned inputs (`signed = false`, the input
    /// is |x| or clamped to ≥ 0) index entry i with x = i/256; signed inputs index by the two's
    /// complement of x·128, so entries 0-127 hold x = i/128 and 128-255 hold x = (i − 256)/128.
    /// Each entry stores f(x) and the difference to the next sample, clamped to their fields.
    pub fn from_fn(signed: bool, f: impl Fn(f32) -> f32) -> Self {
        let mut entries = [0u32; 256];
        let x_of = |k: i32| {
            if signed {
                k as f32 / 128.0
            } else {
                k as f32 / 256.0
            }
        };
        for (i, e) in entries.iter_mut().enumerate() {
            // Signed tables: entry i is input k = i for i < 128, i − 256 above.
            let k = if signed && i >= 128 {
                i as i32 - 256
            } else {
                i as i32
            };
            let v0 = f(x_of(k));
            let v1 = f(x_of(k + 1));
            // ok: clamped to the 12-bit field before the cast.
            let value = (v0 * 4096.0).clamp(0.0, 4095.0) as u32;
            let d = v1 - v0;
            // ok: clamped to the 11-bit magnitude field before the cast.
            let magnitude = (d.abs() * 2048.0).min(2047.0) as u32;
            let sign = u32::from(d < 0.0 && magnitude != 0);
            *e = value | (magnitude << 12) | (sign << 23);
        }
        LightLut { entries }
    }

    /// `max(x, 0)^exponent` over unsigned inputs (a Phong-style highlight or a diffuse curve).
    pub fn power(exponent: f32) -> Self {
        LightLut::from_fn(false, |x| x.max(0.0).powf(exponent))
    }
}

/// A LUT with its input selector, sign mode and output scale.
#[derive(Clone, Debug, PartialEq)]
pub struct LutSlot {
    /// The table.
    pub lut: LightLut,
    /// What indexes it (N·H, V·H, N·V, L·N, spot, cos φ).
    pub input: LutInput,
    /// True: the input is used signed (LUTINPUT_ABS bit set); false: its absolute value.
    pub signed: bool,
    /// Output scale.
    pub scale: LutScale,
}

/// One light (colours already multiplied by the material, as citro3d does).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Light {
    /// Directional (position is the direction towards the light) or positional.
    pub directional: bool,
    /// Position or direction in view space.
    pub position: [f32; 3],
    /// Diffuse colour, 0-1 per channel (r, g, b).
    pub diffuse: [f32; 3],
    /// Ambient colour.
    pub ambient: [f32; 3],
    /// Specular 0 colour.
    pub specular0: [f32; 3],
    /// Specular 1 colour.
    pub specular1: [f32; 3],
    /// Two-sided diffuse (|N·L|).
    pub two_sided: bool,
}

/// The light environment: global ambient, up to 8 lights, the common LUTs and configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct LightEnv {
    /// Global ambient (material emission + ambient·scene ambient), 0-1 per channel.
    pub ambient: [f32; 3],
    /// The lights (at most 8 are used), light n in slot n.
    pub lights: Vec<Light>,
    /// Distribution 0 (specular 0) LUT.
    pub d0: Option<LutSlot>,
    /// Distribution 1 (specular 1) LUT.
    pub d1: Option<LutSlot>,
    /// Fresnel LUT.
    pub fr: Option<LutSlot>,
    /// Reflection LUTs (red, green, blue).
    pub rr: Option<LutSlot>,
    /// Reflection green.
    pub rg: Option<LutSlot>,
    /// Reflection blue.
    pub rb: Option<LutSlot>,
    /// Which LUTs the hardware evaluates (LIGHTING_CONFIG0 bits 4-7).
    pub config: LightEnvConfig,
    /// Where the Fresnel LUT's output goes.
    pub fresnel: FresnelSelector,
    /// Zero the specular terms where N·L ≤ 0.
    pub clamp_highlights: bool,
}

impl Default for LightEnv {
    /// No lights, no LUTs, configuration 0, highlights clamped (citro3d's `C3D_LightEnvInit`).
    fn default() -> Self {
        LightEnv {
            ambient: [0.0; 3],
            lights: Vec::new(),
            d0: None,
            d1: None,
            fr: None,
            rr: None,
            rg: None,
            rb: None,
            config: LightEnvConfig::Config0,
            fresnel: FresnelSelector::None,
            clamp_highlights: true,
        }
    }
}

/// A colour register: 8-bit channels (value·255, truncated, clamped) in 10-bit fields.
pub fn color_word(c: [f32; 3]) -> u32 {
    // ok: clamped to 0..=255 before the cast.
    let ch = |v: f32| (v * 255.0).clamp(0.0, 255.0) as u32;
    ch(c[2]) | (ch(c[1]) << 10) | (ch(c[0]) << 20)
}

/// LUT table ids of the common LUTs (LIGHTING_LUT_INDEX bits 8-12) in catalogue order.
pub const LUT_D0: u32 = 0;
/// D1 table id.
pub const LUT_D1: u32 = 1;
/// FR table id.
pub const LUT_FR: u32 = 3;
/// RB table id.
pub const LUT_RB: u32 = 4;
/// RG table id.
pub const LUT_RG: u32 = 5;
/// RR table id.
pub const LUT_RR: u32 = 6;

impl LightEnv {
    /// The LUTs present, with their table id (also their slot in the input registers: LUT
    /// `id` uses bits `4·id..` of 0x1D0-0x1D2).
    pub fn luts(&self) -> [(u32, Option<&LutSlot>); 6] {
        [
            (LUT_D0, self.d0.as_ref()),
            (LUT_D1, self.d1.as_ref()),
            (LUT_FR, self.fr.as_ref()),
            (LUT_RB, self.rb.as_ref()),
            (LUT_RG, self.rg.as_ref()),
            (LUT_RR, self.rr.as_ref()),
        ]
    }

    /// Number of lights used (at most 8).
    pub fn light_count(&self) -> usize {
        self.lights.len().min(8)
    }

    /// LIGHTING_CONFIG0: configuration, Fresnel selector, highlight clamp, and the fixed bits
    /// (4 in bits 8-11, bit 31) the SDK always sets.
    pub fn config0(&self) -> u32 {
        LightingConfig0 {
            shadow_factor: false,
            fresnel: self.fresnel,
            config: self.config,
            shadow_primary: false,
            shadow_secondary: false,
            shadow_invert: false,
            shadow_alpha: false,
            bump_unit: 0,
            shadow_unit: 0,
            clamp_highlights: self.clamp_highlights,
            bump_mode: BumpMode::None,
            disable_bump_renorm: false,
        }
        .to_raw()
            | (4 << 8)
            | (1 << 31)
    }

    /// LIGHTING_CONFIG1: everything disabled (shadows, spots, distance attenuation, the SP slot)
    /// except the LUTs that are present.
    pub fn config1(&self) -> u32 {
        let mut w = u32::MAX;
        let bit = |id: u32| match id {
            LUT_RB => u32::from(CONFIG1_RB_DISABLE_BIT),
            LUT_RR => u32::from(CONFIG1_RR_DISABLE_BIT),
            other => 16 + other,
        };
        for (id, slot) in self.luts() {
            if slot.is_some() {
                w &= !(1 << bit(id));
            }
        }
        w
    }

    /// LIGHTING_LUTINPUT_ABS, _SELECT, _SCALE. Absent LUTs keep the SDK's defaults (signed
    /// flag set, input N·H, scale 1; the SP slot selects the spot input).
    pub fn lut_input_words(&self) -> [u32; 3] {
        let mut abs = 0x0222_2222;
        let mut select = LutInput::SP.raw() << 8;
        let mut scale = 0;
        for (id, slot) in self.luts() {
            let Some(s) = slot else { continue };
            let shift = 4 * id;
            abs = (abs & !(2 << shift)) | (u32::from(s.signed) << (shift + 1));
            select = (select & !(7 << shift)) | ((s.input.raw() & 7) << shift);
            scale = (scale & !(7 << shift)) | ((s.scale.raw() & 7) << shift);
        }
        [abs, select, scale]
    }

    /// LIGHTING_LIGHT_PERMUTATION: light n in slot n.
    pub fn permutation(&self) -> u32 {
        (0..self.light_count() as u32).fold(0, |p, n| p | (n << (4 * n)))
    }
}

impl Light {
    /// The twelve words LIGHTn_SPECULAR0 … LIGHTn_ATTENUATION_SCALE (spot direction zero,
    /// attenuation off).
    pub fn words(&self) -> [u32; 12] {
        // Float16 by truncating the mantissa, like the SDK's conversions (\[LC\]/\[C3D\]).
        let f16 = |v: f32| F16::from_f32_truncate(v).to_bits();
        let p = self.position;
        [
            color_word(self.specular0),
            color_word(self.specular1),
            color_word(self.diffuse),
            color_word(self.ambient),
            f16(p[0]) | (f16(p[1]) << 16),
            f16(p[2]),
            0,
            0,
            0,
            u32::from(self.directional) | (u32::from(self.two_sided) << 1),
            F20::from_f32_truncate(0.0).to_bits(),
            F20::from_f32_truncate(0.0).to_bits(),
        ]
    }
}
