//! Fragment lighting (`pica-raster.md` §7): the per-pixel Phong-style lighting unit that turns
//! the interpolated normal quaternion and view vector into the primary (diffuse) and secondary
//! (specular) fragment colours the combiners read as sources 1 and 2.
//!
//! Stage: after texture units 0-3 (their colours feed bump/tangent mapping and the shadow
//! factor), before the combiners (§0.4 step 5). Inputs: a [`LightingConfig`] decoded once per
//! draw by [`LightingConfig::from_regs`] from the registers and the 24 lighting LUTs; per
//! fragment the normalised quaternion, the (unnormalised) view vector and the four texture
//! colours. Output: `[primary, secondary]`, RGBA unsigned 8-bit per channel.
//!
//! Registers read (through [`pica_cmd::regs::Regs`]): LIGHTn_* for the enabled lights
//! (0x140 + 0x10·n: SPECULAR0/1, DIFFUSE, AMBIENT colours, XY/Z position as float16,
//! SPOTDIR_XY/Z fixed1.1.11, CONFIG, ATTENUATION_BIAS/SCALE float20), 0x1C0 LIGHTING_AMBIENT,
//! 0x1C2 LIGHTING_NUM_LIGHTS, 0x1C3 LIGHTING_CONFIG0, 0x1C4 LIGHTING_CONFIG1,
//! 0x1D0 LIGHTING_LUTINPUT_ABS, 0x1D1 LIGHTING_LUTINPUT_SELECT, 0x1D2 LIGHTING_LUTINPUT_SCALE,
//! 0x1D9 LIGHTING_LIGHT_PERMUTATION. The LUT contents come from the LIGHTING_LUT_DATA ports
//! (stored by the command processor in [`crate::lut::LookupTables::lighting`]). Whether
//! lighting runs at all is decided by [`crate::pixel::fragment::lighting_enabled`].
//!
//! # Method
//!
//! All maths is f32, in the order of Citra's software rasteriser (the only executable
//! description), with the later hardware-tested corrections noted below. Nothing allocates per
//! fragment; LUT entries are decoded to f32 once per draw ([`LightingLut`]).
//!
//! Where the sources disagree the choice is a constant of this module, easy to flip:
//! * [`ABS_INPUT_RULE`]: in abs mode Citra makes the input `|x|` for two-sided lights and
//!   `max(x, 0)` otherwise (issue #3482 reports a hardware mismatch; unresolved).
//! * [`DA_DISTANCE`]: the distance fed to distance attenuation (Citra PR #6366, hardware tested).
//! * [`SHADOW_TERM`]: whether the shadow factor also darkens the light's ambient term (Citra
//!   PR #7404, matched against hardware screenshots).
//! * [`UNKNOWN_ENV_CONFIG`]: which LUTs an undocumented CONFIG0 bits 4-7 value makes available.
//! * The CONFIG1 RB/RR disable bits follow 3dbrew/libctru (bit 20 = RB, 22 = RR), decided in the
//!   register catalogue: [`pica_cmd::regs::lighting::CONFIG1_RB_DISABLE_BIT`].
//! * The light colour field width (8 bits per 3dbrew, 10 per Citra) and the spot direction
//!   divisor (2048, Citra 2047) are the catalogue's choices too
//!   ([`pica_cmd::regs::lighting::LIGHT_COLOR_BITS`], [`pica_cmd::regs::lighting::SPOTDIR_DIVISOR`]).

use crate::pixel::color::Rgba;
use crate::pixel::isa;
use pica_cmd::regs::RegView as _;
use pica_cmd::regs::Regs;
use pica_cmd::regs::lighting::{
    BumpMode, FresnelSelector, LightEnvConfig, LightingLutEntry, LutInput, LutScale,
};

type Vec3 = [f32; 3];

/// Number of lighting LUTs (ids 0-23; 2 and 7 are unused).
pub const LUT_COUNT: usize = 24;
/// Entries per lighting LUT.
pub const LUT_ENTRIES: usize = 256;

/// How abs-mode LUT inputs (LIGHTING_LUTINPUT_ABS flag = 0) are made non-negative.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbsInputRule {
    /// `|x|` if the light is two-sided-diffuse (LIGHTn_CONFIG bit 1), else `max(x, 0)` (Citra).
    TwoSidedSelects,
    /// Always `|x|` (what the register's "absolute value" name suggests).
    AlwaysAbs,
}

/// The abs-mode rule in use.
// UNVERIFIED(LI-9): Citra ([C] lighting.cpp, still in 2024) ties abs mode to the two-sided flag;
// issue #3482 shows a hardware difference with two-sided lights and reflection LUTs that was
// never explained. Alternative: AbsInputRule::AlwaysAbs. We keep Citra's rule because most
// reference images come from it.
pub const ABS_INPUT_RULE: AbsInputRule = AbsInputRule::TwoSidedSelects;

/// Which distance feeds a light's distance attenuation LUT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DaDistance {
    /// `|L|` before normalisation: `|position + view|` for positional lights, `|position|`
    /// for directional ones (Citra PR #6366, checked with hardware tests).
    LightVector,
    /// `|−view − position|` for every light type (Citra 2021 snapshot, `pica-raster.md` §7.6).
    PositionPlusView,
}

/// The distance used for distance attenuation.
// HW: Citra PR #6366 (hardware tests with positional and directional lights, attenuation on
// and off) found the unnormalised light vector; the older Citra formula is the alternative.
pub const DA_DISTANCE: DaDistance = DaDistance::LightVector;

/// Which part of a light's diffuse contribution the shadow factor attenuates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShadowTerm {
    /// `(diffuse·N·L·S + ambient)·DA·SP`: ambient is not shadowed (Citra PR #7404, 2024).
    DiffuseOnly,
    /// `(diffuse·N·L + ambient)·DA·SP·S`: everything (Citra 2021, `pica-raster.md` §7.6).
    DiffuseAndAmbient,
}

/// The shadow-term rule in use.
// UNVERIFIED: Citra PR #7404 changed the rule to DiffuseOnly after comparing Captain Toad with
// hardware screenshots (issue #3920); no register-level hardware test. Alternative:
// ShadowTerm::DiffuseAndAmbient (the reference document's formula).
pub const SHADOW_TERM: ShadowTerm = ShadowTerm::DiffuseOnly;

/// What an undocumented light-environment configuration (CONFIG0 bits 4-7 = 7 or 9-15) makes
/// available.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnknownEnvConfig {
    /// Citra's availability test (written with `!=` against the documented values): D0, D1, SP,
    /// FR, RR available; RG and RB not.
    AsCitra,
    /// Every LUT available.
    All,
}

/// The rule for undocumented configurations.
// UNVERIFIED: no source says what the hardware does; Citra's result is an accident of how its
// table is written. Alternative: UnknownEnvConfig::All.
pub const UNKNOWN_ENV_CONFIG: UnknownEnvConfig = UnknownEnvConfig::AsCitra;

/// The LUTs with a shared input control (the slot order of LIGHTING_LUTINPUT_ABS/SELECT/SCALE),
/// plus distance attenuation (which has no input control).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum LutSlot {
    /// Distribution 0 (specular 0), LUT id 0.
    D0,
    /// Distribution 1 (specular 1), LUT id 1.
    D1,
    /// Spotlight, LUT ids 8 + n.
    Sp,
    /// Fresnel, LUT id 3.
    Fr,
    /// Reflection blue, LUT id 4.
    Rb,
    /// Reflection green, LUT id 5.
    Rg,
    /// Reflection red, LUT id 6.
    Rr,
    /// Distance attenuation, LUT ids 16 + n (always available).
    Da,
}

impl std::fmt::Display for LutSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::D0 => "D0",
            Self::D1 => "D1",
            Self::Sp => "SP",
            Self::Fr => "FR",
            Self::Rb => "RB",
            Self::Rg => "RG",
            Self::Rr => "RR",
            Self::Da => "DA",
        })
    }
}

impl LutSlot {
    /// Position in the LUT-input registers (D0, D1, SP, FR, RB, RG, RR); `None` for DA.
    pub const fn input_index(self) -> Option<usize> {
        match self {
            Self::D0 => Some(0),
            Self::D1 => Some(1),
            Self::Sp => Some(2),
            Self::Fr => Some(3),
            Self::Rb => Some(4),
            Self::Rg => Some(5),
            Self::Rr => Some(6),
            Self::Da => None,
        }
    }

    /// The LUT id (LIGHTING_LUT_INDEX bits 8-12) this slot reads for light `light` (0-7).
    pub const fn lut_id(self, light: usize) -> usize {
        match self {
            Self::D0 => 0,
            Self::D1 => 1,
            Self::Fr => 3,
            Self::Rb => 4,
            Self::Rg => 5,
            Self::Rr => 6,
            Self::Sp => 8 + (light & 7),
            Self::Da => 16 + (light & 7),
        }
    }
}

/// True if the light environment configuration `config` (CONFIG0 bits 4-7) provides the LUT of
/// `slot` (`pica-raster.md` §7.5; [3DB-I]: an unavailable LUT reads as 1.0).
pub const fn lut_available(config: LightEnvConfig, slot: LutSlot) -> bool {
    use LightEnvConfig as C;
    use LutSlot as S;
    match (config, slot) {
        (_, S::Da) => true,
        (C::Config0, S::D0 | S::Rr | S::Sp) => true,
        (C::Config1, S::Fr | S::Rr | S::Sp) => true,
        (C::Config2, S::D0 | S::D1 | S::Rr) => true,
        (C::Config3, S::D0 | S::D1 | S::Fr) => true,
        (C::Config4, s) => !matches!(s, S::Fr),
        (C::Config5, s) => !matches!(s, S::D1),
        (C::Config6, s) => !matches!(s, S::Rb | S::Rg),
        (C::Config7, _) => true,
        (C::Unknown(_), s) => match UNKNOWN_ENV_CONFIG {
            UnknownEnvConfig::AsCitra => !matches!(s, S::Rb | S::Rg),
            UnknownEnvConfig::All => true,
        },
        _ => false,
    }
}

/// A lighting LUT decoded to f32: per entry `[value, signed difference to the next entry]`.
///
/// Entry word (bits 0-23, [`LightingLutEntry`]): value bits 0-11 unsigned, /4095; difference
/// magnitude bits 12-22, /2047, negative if bit 23 is set (sign-magnitude, as Citra reads it;
/// 3dbrew calls bits 12-23 one "fixed1.0.11" value).
#[derive(Clone, Debug, PartialEq)]
pub struct LightingLut {
    /// `[value, diff]` per entry.
    pub entries: [[f32; 2]; LUT_ENTRIES],
}

impl Default for LightingLut {
    fn default() -> Self {
        LightingLut {
            entries: [[0.0; 2]; LUT_ENTRIES],
        }
    }
}

impl LightingLut {
    /// Decodes 256 entry words as written through LIGHTING_LUT_DATA.
    pub fn from_words(words: &[u32; LUT_ENTRIES]) -> Self {
        let mut lut = LightingLut::default();
        for (e, &w) in lut.entries.iter_mut().zip(words) {
            let d = LightingLutEntry::from_raw(w);
            *e = [d.value(), d.diff()];
        }
        lut
    }

    /// `value[index] + diff[index]·delta`.
    #[inline]
    pub fn sample(&self, index: u8, delta: f32) -> f32 {
        let [v, d] = self.entries[usize::from(index)];
        v + d * delta
    }

    /// Abs-mode / unit-range lookup of a non-negative input: `i = clamp(floor(x·256), 0, 255)`,
    /// `δ = x·256 − i`. NaN reads as 0.
    #[inline]
    pub fn sample_unsigned(&self, x: f32) -> f32 {
        let p = x * 256.0;
        // Truncation equals floor after the clamp to 0..=255 (p in (−1, 0) truncates to 0 and
        // floors to −1, both clamp to 0), and avoids a libm `floor` call on baseline x86-64.
        // ok: `as` saturates and maps NaN to 0; the clamp keeps the index in 0..=255.
        let i = (p as i32).clamp(0, 255);
        let d = if x.is_nan() { 0.0 } else { p - i as f32 };
        self.sample(i as u8, d)
    }

    /// Signed-mode lookup of an input in [−1, 1]: `si = clamp(floor(x·128), −128, 127)`,
    /// `δ = x·128 − si`, entry `si` as a two's-complement byte (entries 0-127 cover [0, 1),
    /// 128-255 cover [−1, 0)). NaN reads as 0.
    #[inline]
    pub fn sample_signed(&self, x: f32) -> f32 {
        let p = x * 128.0;
        // floor(p) from the truncation (saturating, NaN → 0), then clamped.
        let t = p as i32;
        let fl = if (t as f32) > p { t - 1 } else { t };
        let si = fl.clamp(-128, 127);
        let d = if x.is_nan() { 0.0 } else { p - si as f32 };
        self.sample(si as i8 as u8, d)
    }
}

/// The input, mode and scale of one LUT lookup, plus which decoded table it reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LutUse {
    /// Input selector (LIGHTING_LUTINPUT_SELECT).
    pub input: LutInput,
    /// True: signed input (LIGHTING_LUTINPUT_ABS flag 1); false: abs mode.
    pub signed: bool,
    /// Output scale (LIGHTING_LUTINPUT_SCALE): 0.25-8; 0 for the undocumented encodings 4, 5.
    pub scale: f32,
    /// Index into [`LightingConfig::tables`].
    pub table: u8,
}

/// Distance attenuation of one light.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistanceAttenuation {
    /// LIGHTn_ATTENUATION_SCALE (float20).
    pub scale: f32,
    /// LIGHTn_ATTENUATION_BIAS (float20).
    pub bias: f32,
    /// Index into [`LightingConfig::tables`] (LUT 16 + n).
    pub table: u8,
}

/// One enabled light, decoded.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LightParams {
    /// Light id 0-7 (from the permutation register).
    pub id: u8,
    /// Specular 0 colour, each channel raw / 255.
    pub specular0: Vec3,
    /// Specular 1 colour.
    pub specular1: Vec3,
    /// Diffuse colour.
    pub diffuse: Vec3,
    /// Ambient colour.
    pub ambient: Vec3,
    /// Position (positional) or direction towards the light (directional), view space, float16.
    pub position: Vec3,
    /// The spot-direction register (the negated spot direction), fixed1.1.11.
    pub spot_direction: Vec3,
    /// LIGHTn_CONFIG bit 0.
    pub directional: bool,
    /// LIGHTn_CONFIG bit 1: two-sided diffuse (|N·L|).
    pub two_sided: bool,
    /// LIGHTn_CONFIG bit 2: geometric factor on specular 0.
    pub geometric0: bool,
    /// LIGHTn_CONFIG bit 3: geometric factor on specular 1.
    pub geometric1: bool,
    /// Spotlight lookup (enabled in CONFIG1 bits 8-15 and available), else 1.0.
    pub spot: Option<LutUse>,
    /// Distance attenuation (enabled in CONFIG1 bits 24-31), else 1.0.
    pub distance_attenuation: Option<DistanceAttenuation>,
    /// The shadow factor applies to this light (CONFIG1 bit n clear).
    pub shadowed: bool,
}

/// The shadow factor's source and where it applies (LIGHTING_CONFIG0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShadowFactor {
    /// Texture unit 0-3 supplying the factor (bits 24-25).
    pub unit: u8,
    /// Bit 18: use `1 − S`.
    pub invert: bool,
    /// Bit 16: attenuates the diffuse (primary) colour of shadowed lights.
    pub primary: bool,
    /// Bit 17: attenuates the specular (secondary) colour.
    pub secondary: bool,
    /// Bit 19: attenuates the alpha channels selected by the Fresnel selector (bits 2-3).
    pub alpha: bool,
}

/// The per-fragment surface frame source (LIGHTING_CONFIG0 bits 22-23, 28-30).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bump {
    /// Normal (0, 0, 1), tangent (1, 0, 0) in the quaternion's frame.
    None,
    /// Normal from texture `unit`; z recomputed from x, y if `renormalize` (bit 30 clear).
    NormalMap {
        /// Texture unit 0-3.
        unit: u8,
        /// Recompute `z = sqrt(max(1 − x² − y², 0))`.
        renormalize: bool,
    },
    /// Tangent from texture `unit` (renormalisation has no effect).
    TangentMap {
        /// Texture unit 0-3.
        unit: u8,
    },
    /// Undocumented mode 3.
    // UNVERIFIED: Citra logs an error and leaves the local normal and tangent at zero, so only
    // ambient terms remain; we do the same. Alternative: behave as Bump::None.
    Unknown,
}

/// Something a draw's lighting configuration leaves to a guess (for diagnostics).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, thiserror::Error,
)]
pub enum LightingIssue {
    /// CONFIG0 bits 4-7 hold an undocumented configuration (see [`UNKNOWN_ENV_CONFIG`]).
    #[error("undocumented LUT configuration {0} (CONFIG0 bits 4-7)")]
    UnknownEnvConfig(u32),
    /// A LUT in use has an undocumented input selector (6 or 7); it reads input 0.
    #[error("lookup table {0} uses undocumented input selector {1} (read as input 0)")]
    UnknownLutInput(LutSlot, u32),
    /// A LUT in use has an undocumented scale (4 or 5); its output is 0 (as Citra).
    #[error("lookup table {0} uses undocumented scale {1} (output 0)")]
    UnknownLutScale(LutSlot, u32),
    /// CONFIG0 bits 28-29 = 3 (see [`Bump::Unknown`]).
    #[error("undocumented bump mode 3 (CONFIG0 bits 28-29; normal and tangent left at zero)")]
    UnknownBumpMode,
}

/// Everything fragment lighting needs for one draw, decoded once.
#[derive(Clone, Debug, PartialEq)]
pub struct LightingConfig {
    /// CONFIG0 bits 4-7.
    pub env: LightEnvConfig,
    /// The enabled lights in slot order; only the first [`LightingConfig::num_lights`] count.
    pub lights: [LightParams; 8],
    /// Number of enabled lights, 1-8 (LIGHTING_NUM_LIGHTS + 1).
    pub num_lights: usize,
    /// D0 lookup if enabled and available.
    pub d0: Option<LutUse>,
    /// D1 lookup.
    pub d1: Option<LutUse>,
    /// Fresnel lookup (evaluated for the last light slot only).
    pub fr: Option<LutUse>,
    /// Reflection red lookup (1.0 if absent).
    pub rr: Option<LutUse>,
    /// Reflection green lookup (RR's value if absent).
    pub rg: Option<LutUse>,
    /// Reflection blue lookup (RR's value if absent).
    pub rb: Option<LutUse>,
    /// CONFIG0 bit 2: Fresnel (and shadow alpha) writes the primary alpha.
    pub fresnel_primary: bool,
    /// CONFIG0 bit 3: Fresnel (and shadow alpha) writes the secondary alpha.
    pub fresnel_secondary: bool,
    /// Shadow factor (CONFIG0 bit 0), if enabled.
    pub shadow: Option<ShadowFactor>,
    /// Surface frame source.
    pub bump: Bump,
    /// CONFIG0 bit 27: specular is 0 where N·L = 0.
    pub clamp_highlights: bool,
    /// LIGHTING_AMBIENT, raw / 255.
    pub global_ambient: Vec3,
    /// The cos φ (CP) input exists only in configuration "7" (raw 8); else it reads 0 (Citra).
    pub cp_available: bool,
    /// Bit k set: LUT input selector k (0 N·H … 5 cos φ) is read by some LUT in use (the
    /// others are not computed per fragment).
    pub used_inputs: u8,
    /// The decoded LUTs referenced by the [`LutUse`]s and [`DistanceAttenuation`]s.
    pub tables: Vec<LightingLut>,
    /// Guesses this configuration relies on.
    pub issues: Vec<LightingIssue>,
}

/// The texture units (0-3) fragment lighting reads in the configuration of `regs` (the shadow
/// factor's and the bump/tangent map's), without decoding any LUT. All false when CONFIG0
/// enables neither feature. (Whether lighting runs at all is decided elsewhere.)
pub fn texture_units_read(regs: &[u32; 0x300]) -> [bool; 4] {
    let c0 = Regs::new(regs).lighting_config0();
    let mut out = [false; 4];
    if c0.shadow_factor {
        out[usize::from(c0.shadow_unit & 3)] = true;
    }
    if matches!(c0.bump_mode, BumpMode::NormalMap | BumpMode::TangentMap) {
        out[usize::from(c0.bump_unit & 3)] = true;
    }
    out
}

/// The LUTs decoded so far for one configuration (each table decoded at most once).
struct TableSet<'a> {
    raw: &'a [[u32; LUT_ENTRIES]; LUT_COUNT],
    decoded: Vec<LightingLut>,
    index_of: [Option<u8>; LUT_COUNT],
}

impl<'a> TableSet<'a> {
    fn new(raw: &'a [[u32; LUT_ENTRIES]; LUT_COUNT]) -> Self {
        TableSet {
            raw,
            decoded: Vec::new(),
            index_of: [None; LUT_COUNT],
        }
    }

    /// The index in `decoded` of LUT `id` (0-23), decoding it on first use.
    fn get(&mut self, id: usize) -> u8 {
        let id = id % LUT_COUNT;
        if let Some(t) = self.index_of[id] {
            return t;
        }
        let t = self.decoded.len() as u8; // ok: at most 24 tables
        self.decoded.push(LightingLut::from_words(&self.raw[id]));
        self.index_of[id] = Some(t);
        t
    }
}

/// The shared LUT input controls (LIGHTING_LUTINPUT_ABS/SELECT/SCALE) and the environment.
struct InputControls {
    env: LightEnvConfig,
    abs: [bool; 7],
    select: [LutInput; 7],
    scales: [LutScale; 7],
}

impl InputControls {
    /// The lookup of `slot` for light `light`, if `enabled` in CONFIG1 and available in the
    /// environment configuration (§7.5: otherwise the LUT reads 1.0).
    fn lut_use(
        &self,
        slot: LutSlot,
        enabled: bool,
        light: usize,
        tables: &mut TableSet<'_>,
        issues: &mut Vec<LightingIssue>,
    ) -> Option<LutUse> {
        if !(enabled && lut_available(self.env, slot)) {
            return None;
        }
        let k = slot.input_index()?;
        let input = self.select[k];
        if let LutInput::Unknown(v) = input {
            issues.push(LightingIssue::UnknownLutInput(slot, v));
        }
        let scale = self.scales[k].factor().unwrap_or_else(|| {
            issues.push(LightingIssue::UnknownLutScale(slot, self.scales[k].raw()));
            // UNVERIFIED: Citra's GetScale returns 0 for the undocumented encodings 4 and 5.
            0.0
        });
        Some(LutUse {
            input,
            signed: self.abs[k],
            scale,
            table: tables.get(slot.lut_id(light)),
        })
    }
}

impl LightingConfig {
    /// Decodes the lighting registers of `regs` and the LUTs they use from `luts` (the 24 tables
    /// of [`crate::lut::LookupTables::lighting`], entry words bits 0-23).
    pub fn from_regs(regs: &[u32; 0x300], luts: &[[u32; LUT_ENTRIES]; LUT_COUNT]) -> Self {
        let r = Regs::new(regs);
        let c0 = r.lighting_config0();
        let c1 = r.lighting_config1();
        let abs = r.lut_input_abs();
        let select = r.lut_input_select();
        let scales = r.lut_input_scale();
        let perm = r.light_permutation();
        let env = c0.config;

        let mut issues = Vec::new();
        if let LightEnvConfig::Unknown(v) = env {
            issues.push(LightingIssue::UnknownEnvConfig(v));
        }
        let mut tables = TableSet::new(luts);
        let inputs = InputControls {
            env,
            abs: abs.signed,
            select: select.inputs,
            scales: scales.scales,
        };
        let mut lut_use = |slot: LutSlot, enabled: bool, light: usize| {
            inputs.lut_use(slot, enabled, light, &mut tables, &mut issues)
        };
        let d0 = lut_use(LutSlot::D0, !c1.d0_disable, 0);
        let d1 = lut_use(LutSlot::D1, !c1.d1_disable, 0);
        let fr = lut_use(LutSlot::Fr, !c1.fr_disable, 0);
        let rr = lut_use(LutSlot::Rr, !c1.rr_disable, 0);
        let rg = lut_use(LutSlot::Rg, !c1.rg_disable, 0);
        let rb = lut_use(LutSlot::Rb, !c1.rb_disable, 0);

        let num_lights = r.lighting_num_lights().clamp(1, 8) as usize;
        let mut lights = [LightParams::default(); 8];
        for (slot, lp) in lights.iter_mut().enumerate().take(num_lights) {
            let id = usize::from(perm.slots[slot] & 7);
            let Some(l) = r.light(id) else { continue };
            let spot = inputs.lut_use(
                LutSlot::Sp,
                !c1.spot_disabled(id),
                id,
                &mut tables,
                &mut issues,
            );
            let distance_attenuation = (!c1.dist_atten_disabled(id)).then(|| DistanceAttenuation {
                scale: l.attenuation_scale.to_f32(),
                bias: l.attenuation_bias.to_f32(),
                table: tables.get(LutSlot::Da.lut_id(id)),
            });
            *lp = LightParams {
                id: id as u8,
                specular0: l.specular0.to_f32(),
                specular1: l.specular1.to_f32(),
                diffuse: l.diffuse.to_f32(),
                ambient: l.ambient.to_f32(),
                position: l.position.map(|p| p.to_f32()),
                spot_direction: l.spot_direction(),
                directional: l.config.directional,
                two_sided: l.config.two_sided_diffuse,
                geometric0: l.config.geometric_factor0,
                geometric1: l.config.geometric_factor1,
                spot,
                distance_attenuation,
                shadowed: !c1.shadow_disabled(id),
            };
        }

        let (fresnel_primary, fresnel_secondary) = match c0.fresnel {
            FresnelSelector::None => (false, false),
            FresnelSelector::PrimaryAlpha => (true, false),
            FresnelSelector::SecondaryAlpha => (false, true),
            FresnelSelector::Both => (true, true),
            // ok: a 2-bit field has no other value; keep the bit meaning anyway.
            FresnelSelector::Unknown(v) => (v & 1 != 0, v & 2 != 0),
        };
        let bump = match c0.bump_mode {
            BumpMode::None => Bump::None,
            BumpMode::NormalMap => Bump::NormalMap {
                unit: c0.bump_unit & 3,
                renormalize: !c0.disable_bump_renorm,
            },
            BumpMode::TangentMap => Bump::TangentMap {
                unit: c0.bump_unit & 3,
            },
            BumpMode::Unknown(_) => {
                issues.push(LightingIssue::UnknownBumpMode);
                Bump::Unknown
            }
        };
        issues.dedup();
        let mut used_inputs = 0u8;
        let spots = lights.iter().take(num_lights).filter_map(|l| l.spot);
        for u in [d0, d1, fr, rr, rg, rb].into_iter().flatten().chain(spots) {
            if u.input.raw() < 6 {
                used_inputs |= 1 << u.input.raw();
            }
        }
        LightingConfig {
            env,
            lights,
            num_lights,
            d0,
            d1,
            fr,
            rr,
            rg,
            rb,
            fresnel_primary,
            fresnel_secondary,
            shadow: c0.shadow_factor.then_some(ShadowFactor {
                unit: c0.shadow_unit & 3,
                invert: c0.shadow_invert,
                primary: c0.shadow_primary,
                secondary: c0.shadow_secondary,
                alpha: c0.shadow_alpha,
            }),
            bump,
            clamp_highlights: c0.clamp_highlights,
            global_ambient: r.lighting_ambient().to_f32(),
            cp_available: env == LightEnvConfig::Config7,
            used_inputs,
            tables: tables.decoded,
            issues,
        }
    }

    /// The texture units (0-3) whose colours [`LightingConfig::shade`] reads.
    pub fn texture_units_read(&self) -> [bool; 4] {
        let mut out = [false; 4];
        if let Some(s) = self.shadow {
            out[usize::from(s.unit & 3)] = true;
        }
        match self.bump {
            Bump::NormalMap { unit, .. } | Bump::TangentMap { unit } => {
                out[usize::from(unit & 3)] = true;
            }
            Bump::None | Bump::Unknown => {}
        }
        out
    }

    /// One LUT lookup with the input mode rules of §7.4.
    #[inline]
    fn lookup(&self, u: LutUse, inputs: &Inputs, two_sided: bool) -> f32 {
        let x = inputs.get(u.input);
        let Some(t) = self.tables.get(usize::from(u.table)) else {
            return 1.0;
        };
        let v = if u.signed {
            t.sample_signed(x)
        } else {
            let x = match ABS_INPUT_RULE {
                AbsInputRule::TwoSidedSelects if !two_sided => x.max(0.0),
                _ => x.abs(),
            };
            t.sample_unsigned(x)
        };
        u.scale * v
    }

    /// The primary and secondary fragment colours for one fragment.
    ///
    /// `quat` is the interpolated normal quaternion (x, y, z, w; normalised by the rasteriser),
    /// `view` the interpolated view vector (not normalised), `tex` the colours of texture units
    /// 0-3 (read for bump mapping and the shadow factor).
    ///
    /// Through the AVX2 copy where the CPU has it ([`crate::pixel::isa`]).
    pub fn shade(&self, quat: [f32; 4], view: Vec3, tex: &[Rgba; 4]) -> [Rgba; 2] {
        isa::dispatch!(
            self.shade_avx2(quat, view, tex),
            self.shade_body(quat, view, tex)
        )
    }

    isa::avx2_fn! {
        fn shade_avx2(&self, quat: [f32; 4], view: Vec3, tex: &[Rgba; 4]) -> [Rgba; 2] {
            self.shade_body(quat, view, tex)
        }
    }

    #[inline(always)]
    fn shade_body(&self, quat: [f32; 4], view: Vec3, tex: &[Rgba; 4]) -> [Rgba; 2] {
        // 1. Shadow factor (§7.6 step 1).
        let shadow = match self.shadow {
            Some(s) => {
                let c = tex[usize::from(s.unit & 3)];
                let mut f = c.map(|x| f32::from(x) / 255.0);
                if s.invert {
                    f = f.map(|x| 1.0 - x);
                }
                f
            }
            None => [1.0; 4],
        };

        // 2. Surface frame in the quaternion's space, rotated to view space.
        let (n_local, t_local) = match self.bump {
            Bump::None => ([0.0, 0.0, 1.0], [1.0, 0.0, 0.0]),
            Bump::NormalMap { unit, renormalize } => {
                let mut p = perturbation(tex[usize::from(unit & 3)]);
                if renormalize {
                    p[2] = (1.0 - (p[0] * p[0] + p[1] * p[1])).max(0.0).sqrt();
                }
                (p, [1.0, 0.0, 0.0])
            }
            Bump::TangentMap { unit } => {
                ([0.0, 0.0, 1.0], perturbation(tex[usize::from(unit & 3)]))
            }
            Bump::Unknown => ([0.0; 3], [0.0; 3]),
        };
        let normal = rotate(quat, n_local);
        let tangent = rotate(quat, t_local);
        let norm_view = normalize(view).0;

        let mut diffuse_sum = [0.0f32, 0.0, 0.0, 1.0];
        let mut specular_sum = [0.0f32, 0.0, 0.0, 1.0];
        let last = self.num_lights.saturating_sub(1);
        for (k, light) in self.lights.iter().take(self.num_lights).enumerate() {
            let unnormalized = if light.directional {
                light.position
            } else {
                add(light.position, view)
            };
            let (l, length) = normalize(unnormalized);
            let half = add(norm_view, l);

            let dist_atten = match light.distance_attenuation {
                Some(da) => {
                    let d = match DA_DISTANCE {
                        DaDistance::LightVector => length,
                        DaDistance::PositionPlusView => len(add(view, light.position)),
                    };
                    let x = (da.scale * d + da.bias).clamp(0.0, 1.0);
                    self.tables
                        .get(usize::from(da.table))
                        .map_or(1.0, |t| t.sample_unsigned(x))
                }
                None => 1.0,
            };

            let inputs = Inputs::new(
                normal,
                tangent,
                norm_view,
                l,
                half,
                light.spot_direction,
                self.cp_available,
                self.used_inputs,
            );
            let spot = light
                .spot
                .map_or(1.0, |u| self.lookup(u, &inputs, light.two_sided));
            let d0 = self
                .d0
                .map_or(1.0, |u| self.lookup(u, &inputs, light.two_sided));
            let mut spec0 = mul(light.specular0, d0);
            let rr = self
                .rr
                .map_or(1.0, |u| self.lookup(u, &inputs, light.two_sided));
            let rg = self
                .rg
                .map_or(rr, |u| self.lookup(u, &inputs, light.two_sided));
            let rb = self
                .rb
                .map_or(rr, |u| self.lookup(u, &inputs, light.two_sided));
            let d1 = self
                .d1
                .map_or(1.0, |u| self.lookup(u, &inputs, light.two_sided));
            let mut spec1 = [
                d1 * rr * light.specular1[0],
                d1 * rg * light.specular1[1],
                d1 * rb * light.specular1[2],
            ];

            // [C]: only the last light slot applies the Fresnel factor (§7.6, §14).
            if k == last
                && let Some(u) = self.fr
            {
                let f = self.lookup(u, &inputs, light.two_sided);
                if self.fresnel_primary {
                    diffuse_sum[3] = f;
                }
                if self.fresnel_secondary {
                    specular_sum[3] = f;
                }
            }

            let mut n_dot_l = dot(l, normal);
            n_dot_l = if light.two_sided {
                n_dot_l.abs()
            } else {
                n_dot_l.max(0.0)
            };
            let clamp_highlights = if self.clamp_highlights && n_dot_l == 0.0 {
                0.0
            } else {
                1.0
            };
            if light.geometric0 || light.geometric1 {
                let g = dot(half, half);
                let g = if g == 0.0 {
                    0.0
                } else {
                    (n_dot_l / g).min(1.0)
                };
                if light.geometric0 {
                    spec0 = mul(spec0, g);
                }
                if light.geometric1 {
                    spec1 = mul(spec1, g);
                }
            }

            let (shadow_diffuse, shadow_specular) = match self.shadow {
                Some(s) if light.shadowed => (
                    if s.primary { shadow } else { [1.0; 4] },
                    if s.secondary { shadow } else { [1.0; 4] },
                ),
                _ => ([1.0; 4], [1.0; 4]),
            };
            for c in 0..3 {
                // Multiplied in Citra's order (left to right) so the results round alike.
                let diffuse = match SHADOW_TERM {
                    ShadowTerm::DiffuseOnly => {
                        (light.diffuse[c] * n_dot_l * shadow_diffuse[c] + light.ambient[c])
                            * dist_atten
                            * spot
                    }
                    ShadowTerm::DiffuseAndAmbient => {
                        (light.diffuse[c] * n_dot_l + light.ambient[c])
                            * dist_atten
                            * spot
                            * shadow_diffuse[c]
                    }
                };
                let specular = (spec0[c] + spec1[c])
                    * clamp_highlights
                    * dist_atten
                    * spot
                    * shadow_specular[c];
                diffuse_sum[c] += diffuse;
                specular_sum[c] += specular;
            }
        }

        // 5. Shadow alpha, through the Fresnel selector bits.
        if let Some(s) = self.shadow
            && s.alpha
        {
            if self.fresnel_primary {
                diffuse_sum[3] *= shadow[3];
            }
            if self.fresnel_secondary {
                specular_sum[3] *= shadow[3];
            }
        }
        // 6. Global ambient.
        for (d, a) in diffuse_sum.iter_mut().zip(self.global_ambient) {
            *d += a;
        }
        // 7. UNVERIFIED: the hardware's conversion is unknown; Citra SW truncates
        // `clamp(x, 0, 1)·255` (Citra GL keeps floats, i.e. rounds later). NaN gives 0.
        [to_u8x4(diffuse_sum), to_u8x4(specular_sum)]
    }
}

/// The six LUT inputs of one light (§7.3 selectors 0-5).
struct Inputs {
    v: [f32; 6],
}

impl Inputs {
    /// Computes the inputs whose bit (selector number) is set in `used`; the others stay 0.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn new(
        normal: Vec3,
        tangent: Vec3,
        norm_view: Vec3,
        l: Vec3,
        half: Vec3,
        spot_dir: Vec3,
        cp_available: bool,
        used: u8,
    ) -> Self {
        let mut v = [0.0; 6];
        if used == 0 {
            return Inputs { v };
        }
        // N·H, V·H and cos φ need the normalised half vector.
        let hn = if used & 0b10_0011 != 0 {
            normalize(half).0
        } else {
            [0.0; 3]
        };
        let n_dot_h = dot(normal, hn);
        v[0] = n_dot_h;
        if used & 0b10 != 0 {
            v[1] = dot(norm_view, hn);
        }
        if used & 0b100 != 0 {
            v[2] = dot(normal, norm_view);
        }
        if used & 0b1000 != 0 {
            v[3] = dot(l, normal);
        }
        if used & 0b1_0000 != 0 {
            v[4] = dot(l, spot_dir);
        }
        if used & 0b10_0000 != 0 && cp_available {
            // Projection of H onto the tangent plane, not renormalised ([C] "confirmed").
            let proj = sub(hn, mul(normal, n_dot_h));
            v[5] = dot(proj, tangent);
        }
        Inputs { v }
    }

    #[inline]
    fn get(&self, input: LutInput) -> f32 {
        match input {
            LutInput::NH => self.v[0],
            LutInput::VH => self.v[1],
            LutInput::NV => self.v[2],
            LutInput::LN => self.v[3],
            LutInput::SP => self.v[4],
            LutInput::CP => self.v[5],
            // UNVERIFIED: undocumented selectors 6, 7 read 0 (Citra: "unknown input", 0).
            LutInput::Unknown(_) => 0.0,
        }
    }
}

/// Texture colour → perturbation vector `rgb / 127.5 − 1` (each in [−1, 1]).
#[inline]
fn perturbation(c: Rgba) -> Vec3 {
    [
        f32::from(c[0]) / 127.5 - 1.0,
        f32::from(c[1]) / 127.5 - 1.0,
        f32::from(c[2]) / 127.5 - 1.0,
    ]
}

/// Rotates `v` by the unit quaternion `q` (x, y, z, w):
/// `v + 2·cross(q.xyz, cross(q.xyz, v) + q.w·v)`.
#[inline]
pub fn rotate(q: [f32; 4], v: Vec3) -> Vec3 {
    let qv = [q[0], q[1], q[2]];
    let t = add(cross(qv, v), mul(v, q[3]));
    add(v, mul(cross(qv, t), 2.0))
}

#[inline]
fn dot(a: Vec3, b: Vec3) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline]
fn add(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

#[inline]
fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[inline]
fn mul(a: Vec3, s: f32) -> Vec3 {
    [a[0] * s, a[1] * s, a[2] * s]
}

#[inline]
fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

#[inline]
fn len(a: Vec3) -> f32 {
    dot(a, a).sqrt()
}

/// `(a / |a|, |a|)`; a zero or non-finite length gives the zero vector.
// UNVERIFIED: what the hardware does with a zero view or light vector is unknown (Citra divides
// by zero and produces NaN, which its u8 conversion then makes undefined); zero is a neutral
// deterministic choice.
#[inline]
fn normalize(a: Vec3) -> (Vec3, f32) {
    let l = len(a);
    if l > 0.0 && l.is_finite() {
        // Three divisions (not one reciprocal) to round exactly as Citra's `Normalize`.
        ([a[0] / l, a[1] / l, a[2] / l], l)
    } else {
        ([0.0; 3], l)
    }
}

/// `trunc(clamp(x, 0, 1)·255)` per channel; NaN gives 0 (Rust's saturating float cast).
#[inline]
fn to_u8x4(v: [f32; 4]) -> Rgba {
    v.map(|x| (x.clamp(0.0, 1.0) * 255.0) as u8)
}

#[cfg(test)]
mod tests;
