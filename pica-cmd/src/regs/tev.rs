//! Procedural texture (unit 3), texture combiner (TEV) and fog / gas registers of the
//! texturing block: 0x0A8-0x0B7, 0x0C0-0x0FD.
//!
//! Stage: procedural texture, colour combiners, fog (`pica-raster.md` §6, §8, §9.4). Inputs:
//! register words. Outputs: catalogue entries, typed getters on [`Regs`] and decoders for the
//! LUT entry formats written through the data ports. Registers: 0x0A8-0x0AF PROCTEX*, 0x0B0-0x0B7
//! PROCTEX_LUT_DATA, TEV stages 0-5 (0x0C0, 0x0C8, 0x0D0, 0x0D8, 0x0F0, 0x0F8; 5 registers
//! each), 0x0E0 TEXENV_UPDATE_BUFFER, 0x0E1 FOG_COLOR, 0x0E4/0x0E5 gas, 0x0E6 FOG_LUT_INDEX,
//! 0x0E8-0x0EF FOG_LUT_DATA, 0x0FD TEXENV_BUFFER_COLOR.

use super::FieldKind::*;
use super::{
    Block, F16, Field, FieldKind, FieldValue, FixedDivisor, PortKind, RegDef, RegView, Regs, Rgb8,
    Rgba8, decode_array, encode_array,
};

pica_enum! {
    /// Procedural texture coordinate clamp (PROCTEX0 bits 0-2 / 3-5).
    pub enum ProcTexClamp {
        ToZero = 0 => "CLAMP_TO_ZERO",
        ToEdge = 1 => "CLAMP_TO_EDGE",
        SymmetricalRepeat = 2 => "SYMMETRICAL_REPEAT",
        MirroredRepeat = 3 => "MIRRORED_REPEAT",
        Pulse = 4 => "PULSE",
    }
}

pica_enum! {
    /// Procedural texture mapping function of (u, v) (PROCTEX0 bits 6-9 / 10-13).
    pub enum ProcTexMapping {
        U = 0 => "U",
        U2 = 1 => "U2",
        V = 2 => "V",
        V2 = 3 => "V2",
        /// (u + v) / 2.
        Add = 4 => "ADD",
        /// (u² + v²) / 2.
        Add2 = 5 => "ADD2",
        /// min(sqrt(u² + v²), 1).
        SqrtAdd2 = 6 => "SQRT2",
        Min = 7 => "MIN",
        Max = 8 => "MAX",
        /// min(((u + v) / 2 + sqrt(u² + v²)) / 2, 1).
        RMax = 9 => "RMAX",
    }
}

pica_enum! {
    /// Procedural texture row/column shift (PROCTEX0 bits 16-17 / 18-19).
    pub enum ProcTexShift {
        None = 0 => "NONE",
        Odd = 1 => "ODD",
        Even = 2 => "EVEN",
    }
}

pica_enum! {
    /// Procedural texture filter (PROCTEX4 bits 0-2).
    pub enum ProcTexFilter {
        Nearest = 0 => "NEAREST",
        Linear = 1 => "LINEAR",
        NearestMipNearest = 2 => "NEAREST_MIPMAP_NEAREST",
        LinearMipNearest = 3 => "LINEAR_MIPMAP_NEAREST",
        NearestMipLinear = 4 => "NEAREST_MIPMAP_LINEAR",
        LinearMipLinear = 5 => "LINEAR_MIPMAP_LINEAR",
    }
}

pica_enum! {
    /// Procedural texture LUT selected by PROCTEX_LUT bits 8-11.
    pub enum ProcTexLutTable {
        /// 128 entries: value + difference (see [`ProcTexLutEntry`]).
        Noise = 0 => "NOISE",
        /// 128 entries: value + difference.
        RgbMap = 2 => "RGB_MAP",
        /// 128 entries: value + difference.
        AlphaMap = 3 => "ALPHA_MAP",
        /// 256 RGBA8 entries.
        Color = 4 => "COLOR",
        /// 256 entries of signed half-differences (see [`ProcTexColorDiff`]).
        ColorDiff = 5 => "COLOR_DIFF",
    }
}

pica_enum! {
    /// TEV source (TEXENVi_SOURCE, 4 bits each). 7-12 are undocumented ([C] returns 0).
    pub enum TevSource {
        PrimaryColor = 0 => "PRIMARY_COLOR",
        /// Fragment lighting diffuse output (0 when lighting is disabled).
        FragmentPrimary = 1 => "FRAGMENT_PRIMARY_COLOR",
        /// Fragment lighting specular output (0 when lighting is disabled).
        FragmentSecondary = 2 => "FRAGMENT_SECONDARY_COLOR",
        Texture0 = 3 => "TEXTURE0",
        Texture1 = 4 => "TEXTURE1",
        Texture2 = 5 => "TEXTURE2",
        Texture3 = 6 => "TEXTURE3",
        /// The combiner buffer (one-stage lag, `pica-raster.md` §6.5).
        PreviousBuffer = 13 => "PREVIOUS_BUFFER",
        /// This stage's TEXENVi_COLOR.
        Constant = 14 => "CONSTANT",
        /// The previous stage's output.
        Previous = 15 => "PREVIOUS",
    }
}

pica_enum! {
    /// TEV RGB operand (TEXENVi_OPERAND bits 0-3 / 4-7 / 8-11).
    pub enum TevColorOperand {
        SrcColor = 0 => "SRC_COLOR",
        OneMinusSrcColor = 1 => "ONE_MINUS_SRC_COLOR",
        SrcAlpha = 2 => "SRC_ALPHA",
        OneMinusSrcAlpha = 3 => "ONE_MINUS_SRC_ALPHA",
        SrcRed = 4 => "SRC_R",
        OneMinusSrcRed = 5 => "ONE_MINUS_SRC_R",
        SrcGreen = 8 => "SRC_G",
        OneMinusSrcGreen = 9 => "ONE_MINUS_SRC_G",
        SrcBlue = 12 => "SRC_B",
        OneMinusSrcBlue = 13 => "ONE_MINUS_SRC_B",
    }
}

pica_enum! {
    /// TEV alpha operand (TEXENVi_OPERAND bits 12-14 / 16-18 / 20-22).
    pub enum TevAlphaOperand {
        SrcAlpha = 0 => "SRC_ALPHA",
        OneMinusSrcAlpha = 1 => "ONE_MINUS_SRC_ALPHA",
        SrcRed = 2 => "SRC_R",
        OneMinusSrcRed = 3 => "ONE_MINUS_SRC_R",
        SrcGreen = 4 => "SRC_G",
        OneMinusSrcGreen = 5 => "ONE_MINUS_SRC_G",
        SrcBlue = 6 => "SRC_B",
        OneMinusSrcBlue = 7 => "ONE_MINUS_SRC_B",
    }
}

pica_enum! {
    /// TEV combine operation (TEXENVi_COMBINER bits 0-3 / 16-19).
    pub enum TevOp {
        Replace = 0 => "REPLACE",
        Modulate = 1 => "MODULATE",
        Add = 2 => "ADD",
        AddSigned = 3 => "ADD_SIGNED",
        Interpolate = 4 => "INTERPOLATE",
        Subtract = 5 => "SUBTRACT",
        Dot3Rgb = 6 => "DOT3_RGB",
        /// The result also becomes the alpha output.
        Dot3Rgba = 7 => "DOT3_RGBA",
        MultiplyAdd = 8 => "MULTIPLY_ADD",
        AddMultiply = 9 => "ADD_MULTIPLY",
    }
}

pica_enum! {
    /// TEV output scale (TEXENVi_SCALE bits 0-1 / 16-17); 3 is undocumented ([C] uses 1x).
    pub enum TevScale {
        X1 = 0 => "1X",
        X2 = 1 => "2X",
        X4 = 2 => "4X",
    }
}

pica_enum! {
    /// Fog mode (TEXENV_UPDATE_BUFFER bits 0-2).
    pub enum FogMode {
        Disabled = 0 => "DISABLED",
        Fog = 5 => "FOG",
        Gas = 7 => "GAS",
    }
}

pica_enum! {
    /// Gas shading density source (TEXENV_UPDATE_BUFFER bit 3).
    pub enum GasDensitySource {
        Plain = 0 => "PLAIN_DENSITY",
        Depth = 1 => "DEPTH_DENSITY",
    }
}

/// Kind of the procedural-texture noise amplitude field: fixed1.3.12, raw / 4096 (the
/// notation; a format with integer bits represents 1.0 exactly this way). [C] divides by 4095.
/// UNVERIFIED on hardware; see [`PROCTEX_AMPLITUDE_DIVISOR`].
const PROCTEX_AMPLITUDE: FieldKind = Fixed {
    signed: true,
    int_bits: 3,
    frac_bits: 12,
    divisor: FixedDivisor::PowerOfTwo,
};

/// Divisor [`ProcTexNoise::amplitude`] uses: 4096 per the fixed1.3.12 notation ([C]: 4095).
// UNVERIFIED: noise amplitude divisor 4096; alternative 4095 ([C]).
pub const PROCTEX_AMPLITUDE_DIVISOR: f32 = 4096.0;

/// Divisor of the 12-bit values and differences of the procedural-texture noise/map LUT
/// entries and the 11-bit fog LUT entries: [C] divides by 2^n - 1 so that the largest value
/// is exactly 1.0; [3DB] calls them fixed0.0.12 / fixed0.0.11. We print the [C] value.
/// UNVERIFIED on hardware.
// UNVERIFIED: LUT value divisor 2^n - 1 ([C]); alternative 2^n (the fixed-point notation).
const LUT_DIVISOR: FixedDivisor = FixedDivisor::AllOnes;

layout! {
    /// Layout of TEXUNIT3_PROCTEX0 (0x0A8).
    proctex0 {
        U_CLAMP: 0..=2, Enum(ProcTexClamp::NAMES), "u_clamp", "u clamp mode (unsigned enum)";
        V_CLAMP: 3..=5, Enum(ProcTexClamp::NAMES), "v_clamp", "v clamp mode (unsigned enum)";
        RGB_FUNC: 6..=9, Enum(ProcTexMapping::NAMES), "rgb_func", "RGB mapping function (unsigned enum)";
        ALPHA_FUNC: 10..=13, Enum(ProcTexMapping::NAMES), "alpha_func", "alpha mapping function (unsigned enum)";
        SEPARATE_ALPHA: 14..=14, Bool, "separate_alpha", "1 = alpha from its own mapping function and LUT";
        NOISE_ENABLE: 15..=15, Bool, "noise_enable", "1 = noise enabled";
        U_SHIFT: 16..=17, Enum(ProcTexShift::NAMES), "u_shift", "u shift (unsigned enum)";
        V_SHIFT: 18..=19, Enum(ProcTexShift::NAMES), "v_shift", "v shift (unsigned enum)";
        LOD_BIAS_LOW: 20..=27, Hex, "lod_bias_low", "low 8 bits of the float1.5.10 LOD bias (high 8 bits: PROCTEX4 bits 19-26)";
    }
}

layout! {
    /// Layout of TEXUNIT3_PROCTEX1 / PROCTEX2 (0x0A9 / 0x0AA): noise of u / v.
    proctex_noise {
        AMPLITUDE: 0..=15, PROCTEX_AMPLITUDE, "amplitude", "noise amplitude, fixed1.3.12 signed (raw / 4096; [C] divides by 4095)";
        PHASE: 16..=31, Float16, "phase", "noise phase, float1.5.10";
    }
}

layout! {
    /// Layout of TEXUNIT3_PROCTEX3 (0x0AB).
    proctex3 {
        U_FREQUENCY: 0..=15, Float16, "u_frequency", "u noise frequency, float1.5.10";
        V_FREQUENCY: 16..=31, Float16, "v_frequency", "v noise frequency, float1.5.10";
    }
}

layout! {
    /// Layout of TEXUNIT3_PROCTEX4 (0x0AC).
    proctex4 {
        FILTER: 0..=2, Enum(ProcTexFilter::NAMES), "filter", "minification filter (unsigned enum)";
        MIN_LOD: 3..=6, Uint, "min_lod", "unsigned minimum LOD (usually 0)";
        MAX_LOD: 7..=10, Uint, "max_lod", "unsigned maximum LOD (usually 6)";
        LUT_WIDTH: 11..=18, Uint, "lut_width", "unsigned colour LUT width (entries used per level)";
        LOD_BIAS_HIGH: 19..=26, Hex, "lod_bias_high", "high 8 bits of the float1.5.10 LOD bias";
    }
}

layout! {
    /// Layout of TEXUNIT3_PROCTEX5 (0x0AD): colour-LUT offsets of mip levels 0-3.
    proctex5 {
        LEVEL0: 0..=7, Uint, "level0_offset", "unsigned colour-LUT offset of level 0 (usually 0)";
        LEVEL1: 8..=15, Uint, "level1_offset", "unsigned colour-LUT offset of level 1 (usually 0x80)";
        LEVEL2: 16..=23, Uint, "level2_offset", "unsigned colour-LUT offset of level 2 (usually 0xC0)";
        LEVEL3: 24..=31, Uint, "level3_offset", "unsigned colour-LUT offset of level 3 (usually 0xE0)";
    }
}

layout! {
    /// Layout of TEXUNIT3_PROCTEX6 (0x0AE, our name): colour-LUT offsets of mip levels 4-7.
    proctex6 {
        LEVEL4: 0..=7, Uint, "level4_offset", "unsigned colour-LUT offset of level 4 (0xF0 per [3DB]'s hard-wired value)";
        LEVEL5: 8..=15, Uint, "level5_offset", "unsigned colour-LUT offset of level 5 (0xF8)";
        LEVEL6: 16..=23, Uint, "level6_offset", "unsigned colour-LUT offset of level 6 (0xFC)";
        LEVEL7: 24..=31, Uint, "level7_offset", "unsigned colour-LUT offset of level 7 (0xFE)";
    }
}

layout! {
    /// Layout of PROCTEX_LUT (0x0AF).
    proctex_lut {
        INDEX: 0..=7, Uint, "index", "unsigned first entry written by the next PROCTEX_LUT_DATA word";
        TABLE: 8..=11, Enum(ProcTexLutTable::NAMES), "table", "LUT written through PROCTEX_LUT_DATA (unsigned enum)";
    }
}

layout! {
    /// Layout of PROCTEX_LUT_DATA[0-7] (0x0B0-0x0B7).
    proctex_lut_data {
        DATA: 0..=31, Data, "data", "one LUT entry; format depends on the table selected by PROCTEX_LUT (see ProcTexLutEntry, Rgba8, ProcTexColorDiff)";
    }
}

layout! {
    /// Entry format of the procedural-texture noise, RGB-map and alpha-map LUTs (not a
    /// register: the word written through PROCTEX_LUT_DATA).
    proctex_lut_entry {
        VALUE: 0..=11, Fixed { signed: false, int_bits: 0, frac_bits: 12, divisor: LUT_DIVISOR }, "value", "entry value, fixed0.0.12 unsigned ([C] divides by 4095)";
        DIFF: 12..=23, Fixed { signed: true, int_bits: 0, frac_bits: 11, divisor: FixedDivisor::PowerOfTwo }, "diff", "difference to the next entry, 12-bit two's complement; [C] divides the signed value by 4095 (shown here / 2048)";
    }
}

layout! {
    /// Entry format of the procedural-texture colour-difference LUT (not a register).
    proctex_color_diff_entry {
        R: 0..=7, Int, "r", "signed 8-bit: half the red difference to the next colour entry";
        G: 8..=15, Int, "g", "signed 8-bit: half the green difference";
        B: 16..=23, Int, "b", "signed 8-bit: half the blue difference";
        A: 24..=31, Int, "a", "signed 8-bit: half the alpha difference";
    }
}

layout! {
    /// Layout of TEXENVi_SOURCE.
    texenv_source {
        RGB0: 0..=3, Enum(TevSource::NAMES), "rgb_source0", "RGB source 0 (unsigned enum)";
        RGB1: 4..=7, Enum(TevSource::NAMES), "rgb_source1", "RGB source 1 (unsigned enum)";
        RGB2: 8..=11, Enum(TevSource::NAMES), "rgb_source2", "RGB source 2 (unsigned enum)";
        ALPHA0: 16..=19, Enum(TevSource::NAMES), "alpha_source0", "alpha source 0 (unsigned enum)";
        ALPHA1: 20..=23, Enum(TevSource::NAMES), "alpha_source1", "alpha source 1 (unsigned enum)";
        ALPHA2: 24..=27, Enum(TevSource::NAMES), "alpha_source2", "alpha source 2 (unsigned enum)";
    }
}

layout! {
    /// Layout of TEXENVi_OPERAND.
    texenv_operand {
        RGB0: 0..=3, Enum(TevColorOperand::NAMES), "rgb_operand0", "RGB operand 0 (unsigned enum)";
        RGB1: 4..=7, Enum(TevColorOperand::NAMES), "rgb_operand1", "RGB operand 1 (unsigned enum)";
        RGB2: 8..=11, Enum(TevColorOperand::NAMES), "rgb_operand2", "RGB operand 2 (unsigned enum)";
        ALPHA0: 12..=14, Enum(TevAlphaOperand::NAMES), "alpha_operand0", "alpha operand 0 (unsigned enum)";
        ALPHA1: 16..=18, Enum(TevAlphaOperand::NAMES), "alpha_operand1", "alpha operand 1 (unsigned enum)";
        ALPHA2: 20..=22, Enum(TevAlphaOperand::NAMES), "alpha_operand2", "alpha operand 2 (unsigned enum)";
    }
}

layout! {
    /// Layout of TEXENVi_COMBINER.
    texenv_combiner {
        RGB_OP: 0..=3, Enum(TevOp::NAMES), "rgb_op", "RGB combine operation (unsigned enum)";
        ALPHA_OP: 16..=19, Enum(TevOp::NAMES), "alpha_op", "alpha combine operation (unsigned enum)";
    }
}

layout! {
    /// Layout of TEXENVi_COLOR, TEXENV_BUFFER_COLOR (0x0FD).
    texenv_color {
        COLOR: 0..=31, Rgba8, "color", "constant colour, unsigned 8 bits per channel: R 0-7, G 8-15, B 16-23, A 24-31";
    }
}

layout! {
    /// Layout of TEXENVi_SCALE.
    texenv_scale {
        RGB_SCALE: 0..=1, Enum(TevScale::NAMES), "rgb_scale", "RGB output scale (unsigned enum)";
        ALPHA_SCALE: 16..=17, Enum(TevScale::NAMES), "alpha_scale", "alpha output scale (unsigned enum)";
    }
}

layout! {
    /// Layout of TEXENV_UPDATE_BUFFER (0x0E0), shared by fog/gas mode and combiner-buffer
    /// updates (games write the buffer bits with byte mask 0x2 and the fog bits with 0x5).
    texenv_update_buffer {
        FOG_MODE: 0..=2, Enum(FogMode::NAMES), "fog_mode", "fog mode (unsigned enum)";
        GAS_DENSITY: 3..=3, Enum(GasDensitySource::NAMES), "gas_density_source", "gas shading density source";
        RGB_UPDATE: 8..=11, BitSet, "rgb_buffer_update", "bit i: TEV stage i's RGB output becomes the combiner buffer ([3DB]: 'TexEnv i+1 RGB buffer input', 0 = previous buffer, 1 = previous)";
        ALPHA_UPDATE: 12..=15, BitSet, "alpha_buffer_update", "bit i: TEV stage i's alpha output becomes the combiner buffer alpha";
        FOG_Z_FLIP: 16..=16, Bool, "fog_z_flip", "1 = fog LUT indexed by 1 - depth";
        FIXED_0: 24..=25, Const(0), "fixed_0", "[3DB] always 0";
    }
}

layout! {
    /// Layout of FOG_COLOR (0x0E1).
    fog_color {
        COLOR: 0..=23, Rgb8, "color", "fog colour, unsigned 8 bits per channel: R 0-7, G 8-15, B 16-23";
    }
}

layout! {
    /// Layout of GAS_ATTENUATION (0x0E4) and GAS_ACCMAX (0x0E5).
    gas_f16 {
        VALUE: 0..=15, Float16, "value", "float1.5.10";
    }
}

layout! {
    /// Layout of FOG_LUT_INDEX (0x0E6).
    fog_lut_index {
        INDEX: 0..=15, Uint, "index", "unsigned first entry written by the next FOG_LUT_DATA word ([C] stores at index mod 128)";
    }
}

layout! {
    /// Layout of FOG_LUT_DATA[0-7] (0x0E8-0x0EF).
    fog_lut_data {
        DATA: 0..=23, Data, "data", "one fog LUT entry (see FogLutEntry)";
    }
}

layout! {
    /// Entry format of the 128-entry fog LUT (not a register: the word written through
    /// FOG_LUT_DATA).
    fog_lut_entry {
        DIFF: 0..=12, Fixed { signed: true, int_bits: 1, frac_bits: 11, divisor: LUT_DIVISOR }, "diff", "difference to the next entry, fixed1.1.11 signed ([C] divides by 2047)";
        VALUE: 13..=23, Fixed { signed: false, int_bits: 0, frac_bits: 11, divisor: LUT_DIVISOR }, "value", "entry value, fixed0.0.11 unsigned ([C] divides by 2047)";
    }
}

registers! {
    block: Texturing;
    /// Procedural texture clamp, mapping, noise enable and shift configuration.
    0x0A8 TEXUNIT3_PROCTEX0 => proctex0;
    /// Procedural texture u noise amplitude and phase.
    0x0A9 TEXUNIT3_PROCTEX1 => proctex_noise;
    /// Procedural texture v noise amplitude and phase.
    0x0AA TEXUNIT3_PROCTEX2 => proctex_noise;
    /// Procedural texture noise frequencies.
    0x0AB TEXUNIT3_PROCTEX3 => proctex3;
    /// Procedural texture filter, LOD range and LUT width.
    0x0AC TEXUNIT3_PROCTEX4 => proctex4;
    /// Procedural texture colour-LUT offsets of levels 0-3.
    0x0AD TEXUNIT3_PROCTEX5 => proctex5;
    /// Our name for 3dbrew's GPUREG_00AE. UNVERIFIED: colour-LUT offsets of mip levels 4-7;
    /// ctrulib's GPU reset sequence writes 0xFEFCF8F0 here, exactly the offsets 0xF0, 0xF8,
    /// 0xFC, 0xFE that [3DB] calls hard-wired. Alternative: an unused register.
    0x0AE TEXUNIT3_PROCTEX6 => proctex6;
    // UNVERIFIED: 0x0AE = mip levels 4-7 colour-LUT offsets (inferred from ctrulib's reset data).
    /// Procedural texture LUT select and start index.
    0x0AF PROCTEX_LUT => proctex_lut;
    /// TEV combiner-buffer update bits, fog mode and gas density source.
    0x0E0 TEXENV_UPDATE_BUFFER => texenv_update_buffer;
    /// Fog colour.
    0x0E1 FOG_COLOR => fog_color;
    /// Gas density attenuation (float16).
    0x0E4 GAS_ATTENUATION => gas_f16;
    /// Gas maximum density accumulation (float16).
    0x0E5 GAS_ACCMAX => gas_f16;
    /// Fog LUT start index.
    0x0E6 FOG_LUT_INDEX => fog_lut_index;
    /// Initial combiner-buffer colour.
    0x0FD TEXENV_BUFFER_COLOR => texenv_color;
}

/// Id constants of this module's data ports (first alias).
pub mod port_ids {
    /// PROCTEX_LUT_DATA[0] (0x0B0); aliases up to 0x0B7.
    pub const PROCTEX_LUT_DATA: u16 = 0x0B0;
    /// FOG_LUT_DATA[0] (0x0E8); aliases up to 0x0EF.
    pub const FOG_LUT_DATA: u16 = 0x0E8;
}

/// PROCTEX_LUT_DATA[0-7] (0x0B0-0x0B7).
pub const PROCTEX_LUT_DATA: [RegDef; 8] = data_port!(
    port_ids::PROCTEX_LUT_DATA,
    "PROCTEX_LUT_DATA",
    PortKind::ProcTexLut,
    proctex_lut_data,
    "Procedural texture LUT data FIFO: stores at the PROCTEX_LUT index, which then increments."
);

/// FOG_LUT_DATA[0-7] (0x0E8-0x0EF).
pub const FOG_LUT_DATA: [RegDef; 8] = data_port!(
    port_ids::FOG_LUT_DATA,
    "FOG_LUT_DATA",
    PortKind::FogLut,
    fog_lut_data,
    "Fog LUT data FIFO: stores at the FOG_LUT_INDEX index, which then increments."
);

/// First register (TEXENVi_SOURCE) of TEV stage `stage` (0-5; larger values wrap modulo 6).
pub const fn texenv(stage: usize) -> u16 {
    const BASES: [u16; 6] = [0x0C0, 0x0C8, 0x0D0, 0x0D8, 0x0F0, 0x0F8];
    BASES[stage % 6]
}

/// Offsets of the five registers of a TEV stage from [`texenv`].
pub mod texenv_offset {
    /// TEXENVi_SOURCE.
    pub const SOURCE: u16 = 0;
    /// TEXENVi_OPERAND.
    pub const OPERAND: u16 = 1;
    /// TEXENVi_COMBINER.
    pub const COMBINER: u16 = 2;
    /// TEXENVi_COLOR.
    pub const COLOR: u16 = 3;
    /// TEXENVi_SCALE.
    pub const SCALE: u16 = 4;
}

macro_rules! tev_stages {
    ($($n:literal)*) => {
        &[
            $(
                RegDef {
                    id: texenv($n) + texenv_offset::SOURCE,
                    name: concat!("TEXENV", $n, "_SOURCE"),
                    block: Block::Texturing,
                    fields: texenv_source::FIELDS,
                    doc: concat!("TEV stage ", $n, " RGB and alpha sources."),
                    port: None,
                },
                RegDef {
                    id: texenv($n) + texenv_offset::OPERAND,
                    name: concat!("TEXENV", $n, "_OPERAND"),
                    block: Block::Texturing,
                    fields: texenv_operand::FIELDS,
                    doc: concat!("TEV stage ", $n, " RGB and alpha operands."),
                    port: None,
                },
                RegDef {
                    id: texenv($n) + texenv_offset::COMBINER,
                    name: concat!("TEXENV", $n, "_COMBINER"),
                    block: Block::Texturing,
                    fields: texenv_combiner::FIELDS,
                    doc: concat!("TEV stage ", $n, " RGB and alpha combine operations."),
                    port: None,
                },
                RegDef {
                    id: texenv($n) + texenv_offset::COLOR,
                    name: concat!("TEXENV", $n, "_COLOR"),
                    block: Block::Texturing,
                    fields: texenv_color::FIELDS,
                    doc: concat!("TEV stage ", $n, " constant colour."),
                    port: None,
                },
                RegDef {
                    id: texenv($n) + texenv_offset::SCALE,
                    name: concat!("TEXENV", $n, "_SCALE"),
                    block: Block::Texturing,
                    fields: texenv_scale::FIELDS,
                    doc: concat!("TEV stage ", $n, " RGB and alpha output scales."),
                    port: None,
                },
            )*
        ]
    };
}

/// The registers of TEV stages 0-5, generated by stage index.
pub const TEV_STAGES: &[RegDef] = tev_stages!(0 1 2 3 4 5);

/// RGB source fields of TEXENVi_SOURCE in operand order.
const RGB_SOURCES: [Field; 3] = [
    texenv_source::RGB0,
    texenv_source::RGB1,
    texenv_source::RGB2,
];
/// Alpha source fields of TEXENVi_SOURCE in operand order.
const ALPHA_SOURCES: [Field; 3] = [
    texenv_source::ALPHA0,
    texenv_source::ALPHA1,
    texenv_source::ALPHA2,
];
/// RGB operand fields of TEXENVi_OPERAND.
const RGB_OPERANDS: [Field; 3] = [
    texenv_operand::RGB0,
    texenv_operand::RGB1,
    texenv_operand::RGB2,
];
/// Alpha operand fields of TEXENVi_OPERAND.
const ALPHA_OPERANDS: [Field; 3] = [
    texenv_operand::ALPHA0,
    texenv_operand::ALPHA1,
    texenv_operand::ALPHA2,
];

/// Decoded TEXENVi_SOURCE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TevSources {
    /// RGB sources 0-2.
    pub rgb: [TevSource; 3],
    /// Alpha sources 0-2.
    pub alpha: [TevSource; 3],
}

impl RegView for TevSources {
    const LAYOUT: &'static [Field] = texenv_source::FIELDS;
    #[inline]
    fn from_raw(raw: u32) -> Self {
        TevSources {
            rgb: decode_array(raw, &RGB_SOURCES),
            alpha: decode_array(raw, &ALPHA_SOURCES),
        }
    }
    #[inline]
    fn to_raw(&self) -> u32 {
        encode_array(&self.rgb, &RGB_SOURCES) | encode_array(&self.alpha, &ALPHA_SOURCES)
    }
}

/// Decoded TEXENVi_OPERAND.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TevOperands {
    /// RGB operands 0-2.
    pub rgb: [TevColorOperand; 3],
    /// Alpha operands 0-2.
    pub alpha: [TevAlphaOperand; 3],
}

impl RegView for TevOperands {
    const LAYOUT: &'static [Field] = texenv_operand::FIELDS;
    #[inline]
    fn from_raw(raw: u32) -> Self {
        TevOperands {
            rgb: decode_array(raw, &RGB_OPERANDS),
            alpha: decode_array(raw, &ALPHA_OPERANDS),
        }
    }
    #[inline]
    fn to_raw(&self) -> u32 {
        encode_array(&self.rgb, &RGB_OPERANDS) | encode_array(&self.alpha, &ALPHA_OPERANDS)
    }
}

view! {
    /// Decoded TEXENVi_COMBINER.
    pub struct TevCombiner from texenv_combiner {
        rgb_op: TevOp = RGB_OP,
        alpha_op: TevOp = ALPHA_OP,
    }
}

view! {
    /// Decoded TEXENVi_SCALE.
    pub struct TevScales from texenv_scale {
        rgb_scale: TevScale = RGB_SCALE,
        alpha_scale: TevScale = ALPHA_SCALE,
    }
}

/// One TEV stage: its five registers decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TevStage {
    /// TEXENVi_SOURCE.
    pub sources: TevSources,
    /// TEXENVi_OPERAND.
    pub operands: TevOperands,
    /// TEXENVi_COMBINER.
    pub combiner: TevCombiner,
    /// TEXENVi_COLOR.
    pub const_color: Rgba8,
    /// TEXENVi_SCALE.
    pub scales: TevScales,
}

impl TevStage {
    /// Decodes the five register words in id order (SOURCE, OPERAND, COMBINER, COLOR, SCALE).
    pub fn from_words(words: [u32; 5]) -> Self {
        TevStage {
            sources: TevSources::from_raw(words[0]),
            operands: TevOperands::from_raw(words[1]),
            combiner: TevCombiner::from_raw(words[2]),
            const_color: Rgba8::from_word(words[3]),
            scales: TevScales::from_raw(words[4]),
        }
    }

    /// Encodes back into the five register words.
    pub fn to_words(&self) -> [u32; 5] {
        [
            self.sources.to_raw(),
            self.operands.to_raw(),
            self.combiner.to_raw(),
            self.const_color.to_word(),
            self.scales.to_raw(),
        ]
    }
}

view! {
    /// Decoded TEXENV_UPDATE_BUFFER (0x0E0).
    pub struct TexEnvUpdateBuffer from texenv_update_buffer {
        fog_mode: FogMode = FOG_MODE,
        gas_density_source: GasDensitySource = GAS_DENSITY,
        rgb_buffer_update: u8 = RGB_UPDATE,
        alpha_buffer_update: u8 = ALPHA_UPDATE,
        fog_z_flip: bool = FOG_Z_FLIP,
    }
}

impl TexEnvUpdateBuffer {
    /// Whether TEV stage `stage` writes its RGB output to the combiner buffer (stages 0-3).
    pub const fn updates_rgb(&self, stage: usize) -> bool {
        stage < 4 && self.rgb_buffer_update & (1 << stage) != 0
    }

    /// Whether TEV stage `stage` writes its alpha output to the combiner buffer (stages 0-3).
    pub const fn updates_alpha(&self, stage: usize) -> bool {
        stage < 4 && self.alpha_buffer_update & (1 << stage) != 0
    }
}

view! {
    /// Decoded TEXUNIT3_PROCTEX0.
    pub struct ProcTex0 from proctex0 {
        u_clamp: ProcTexClamp = U_CLAMP,
        v_clamp: ProcTexClamp = V_CLAMP,
        rgb_func: ProcTexMapping = RGB_FUNC,
        alpha_func: ProcTexMapping = ALPHA_FUNC,
        separate_alpha: bool = SEPARATE_ALPHA,
        noise_enable: bool = NOISE_ENABLE,
        u_shift: ProcTexShift = U_SHIFT,
        v_shift: ProcTexShift = V_SHIFT,
        lod_bias_low: u8 = LOD_BIAS_LOW,
    }
}

view! {
    /// Decoded TEXUNIT3_PROCTEX1 / PROCTEX2 (noise of one direction).
    pub struct ProcTexNoise from proctex_noise {
        amplitude_raw: i32 = AMPLITUDE,
        phase: F16 = PHASE,
    }
}

impl ProcTexNoise {
    /// Noise amplitude: fixed1.3.12, raw / [`PROCTEX_AMPLITUDE_DIVISOR`].
    pub fn amplitude(&self) -> f32 {
        self.amplitude_raw as f32 / PROCTEX_AMPLITUDE_DIVISOR
    }
}

view! {
    /// Decoded TEXUNIT3_PROCTEX3.
    pub struct ProcTexFrequency from proctex3 {
        u: F16 = U_FREQUENCY,
        v: F16 = V_FREQUENCY,
    }
}

view! {
    /// Decoded TEXUNIT3_PROCTEX4.
    pub struct ProcTex4 from proctex4 {
        filter: ProcTexFilter = FILTER,
        min_lod: u8 = MIN_LOD,
        max_lod: u8 = MAX_LOD,
        lut_width: u8 = LUT_WIDTH,
        lod_bias_high: u8 = LOD_BIAS_HIGH,
    }
}

view! {
    /// Decoded TEXUNIT3_PROCTEX5: colour-LUT offsets of levels 0-3.
    pub struct ProcTexOffsets from proctex5 {
        level0: u8 = LEVEL0,
        level1: u8 = LEVEL1,
        level2: u8 = LEVEL2,
        level3: u8 = LEVEL3,
    }
}

view! {
    /// Decoded PROCTEX_LUT (0x0AF).
    pub struct ProcTexLut from proctex_lut {
        index: u8 = INDEX,
        table: ProcTexLutTable = TABLE,
    }
}

view! {
    /// A noise / RGB-map / alpha-map LUT entry as written through PROCTEX_LUT_DATA.
    pub struct ProcTexLutEntry from proctex_lut_entry {
        value_raw: u16 = VALUE,
        diff_raw: i32 = DIFF,
    }
}

impl ProcTexLutEntry {
    /// Entry value, raw / 4095 as [C] does.
    pub fn value(&self) -> f32 {
        f32::from(self.value_raw) / 4095.0
    }

    /// Difference to the next entry, signed raw / 4095 as [C] does.
    pub fn diff(&self) -> f32 {
        self.diff_raw as f32 / 4095.0
    }
}

view! {
    /// A colour-difference LUT entry: signed halves of the per-channel differences.
    pub struct ProcTexColorDiff from proctex_color_diff_entry {
        r: i32 = R,
        g: i32 = G,
        b: i32 = B,
        a: i32 = A,
    }
}

view! {
    /// A fog LUT entry as written through FOG_LUT_DATA.
    pub struct FogLutEntry from fog_lut_entry {
        diff_raw: i32 = DIFF,
        value_raw: u16 = VALUE,
    }
}

impl FogLutEntry {
    /// Entry value, raw / 2047 as [C] does.
    pub fn value(&self) -> f32 {
        f32::from(self.value_raw) / 2047.0
    }

    /// Difference to the next entry, signed raw / 2047 as [C] does.
    pub fn diff(&self) -> f32 {
        self.diff_raw as f32 / 2047.0
    }
}

/// The procedural texture unit's configuration registers (0x0A8-0x0AE) decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProcTex {
    /// PROCTEX0.
    pub config: ProcTex0,
    /// PROCTEX1: noise in u.
    pub noise_u: ProcTexNoise,
    /// PROCTEX2: noise in v.
    pub noise_v: ProcTexNoise,
    /// PROCTEX3: noise frequencies.
    pub frequency: ProcTexFrequency,
    /// PROCTEX4: filter, LOD range, LUT width.
    pub lut: ProcTex4,
    /// PROCTEX5: colour-LUT offsets of levels 0-3.
    pub offsets: ProcTexOffsets,
    /// PROCTEX6 (our name for 0x0AE): offsets of levels 4-7 as written (UNVERIFIED meaning).
    pub offsets_high: [u8; 4],
}

impl ProcTex {
    /// The LOD bias: float1.5.10 assembled from PROCTEX4 bits 19-26 (high byte) and PROCTEX0
    /// bits 20-27 (low byte).
    pub const fn lod_bias(&self) -> F16 {
        F16(((self.lut.lod_bias_high as u16) << 8) | self.config.lod_bias_low as u16)
    }
}

const PROCTEX6_LEVELS: [Field; 4] = [
    proctex6::LEVEL4,
    proctex6::LEVEL5,
    proctex6::LEVEL6,
    proctex6::LEVEL7,
];

impl Regs<'_> {
    /// The procedural texture configuration (0x0A8-0x0AE).
    #[inline]
    pub fn proctex(&self) -> ProcTex {
        ProcTex {
            config: self.view(ids::TEXUNIT3_PROCTEX0),
            noise_u: self.view(ids::TEXUNIT3_PROCTEX1),
            noise_v: self.view(ids::TEXUNIT3_PROCTEX2),
            frequency: self.view(ids::TEXUNIT3_PROCTEX3),
            lut: self.view(ids::TEXUNIT3_PROCTEX4),
            offsets: self.view(ids::TEXUNIT3_PROCTEX5),
            offsets_high: decode_array(self.raw(ids::TEXUNIT3_PROCTEX6), &PROCTEX6_LEVELS),
        }
    }

    /// PROCTEX_LUT (0x0AF): LUT select and index.
    #[inline]
    pub fn proctex_lut_select(&self) -> ProcTexLut {
        self.view(ids::PROCTEX_LUT)
    }

    /// TEV stage `stage` (0-5); `None` for other stages.
    #[inline]
    pub fn tev_stage(&self, stage: usize) -> Option<TevStage> {
        (stage < 6).then(|| {
            let base = texenv(stage);
            TevStage::from_words(core::array::from_fn(|i| self.raw(base + i as u16)))
        })
    }

    /// All six TEV stages in order.
    #[inline]
    pub fn tev_stages(&self) -> [TevStage; 6] {
        core::array::from_fn(|stage| {
            let base = texenv(stage);
            TevStage::from_words(core::array::from_fn(|i| self.raw(base + i as u16)))
        })
    }

    /// TEXENV_UPDATE_BUFFER (0x0E0): buffer update bits, fog mode, z flip.
    #[inline]
    pub fn texenv_update_buffer(&self) -> TexEnvUpdateBuffer {
        self.view(ids::TEXENV_UPDATE_BUFFER)
    }

    /// TEXENV_BUFFER_COLOR (0x0FD): initial combiner-buffer colour.
    #[inline]
    pub fn texenv_buffer_color(&self) -> Rgba8 {
        Rgba8::from_word(self.raw(ids::TEXENV_BUFFER_COLOR))
    }

    /// FOG_COLOR (0x0E1).
    #[inline]
    pub fn fog_color(&self) -> Rgb8 {
        Rgb8::from_bits(
            self.field(ids::FOG_COLOR, &fog_color::COLOR),
            &fog_color::COLOR,
        )
    }

    /// FOG_LUT_INDEX (0x0E6).
    #[inline]
    pub fn fog_lut_index(&self) -> u32 {
        self.field(ids::FOG_LUT_INDEX, &fog_lut_index::INDEX)
    }

    /// GAS_ATTENUATION (0x0E4).
    #[inline]
    pub fn gas_attenuation(&self) -> F16 {
        F16::from_raw(self.field(ids::GAS_ATTENUATION, &gas_f16::VALUE))
    }

    /// GAS_ACCMAX (0x0E5).
    #[inline]
    pub fn gas_accmax(&self) -> F16 {
        F16::from_raw(self.field(ids::GAS_ACCMAX, &gas_f16::VALUE))
    }
}

/// Every catalogue group of this module.
pub(crate) const GROUPS: &[&[super::RegDef]] =
    &[TABLE, TEV_STAGES, &PROCTEX_LUT_DATA, &FOG_LUT_DATA];
