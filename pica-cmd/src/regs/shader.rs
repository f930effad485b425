//! Shader unit configuration registers: geometry shader 0x280-0x2AF and vertex shader
//! 0x2B0-0x2DF, both generated from one description (base + offset), including the aliased
//! data ports for float uniforms, program code and operand descriptors.
//!
//! Stage: shader-unit configuration and uploads (`pica-core.md` §2.5-§2.7). Inputs: register
//! words. Outputs: catalogue entries and typed getters on [`Regs`]. Registers (B = 0x280 GS,
//! 0x2B0 VS): B+0x00 BOOLUNIFORM, B+0x01-0x04 INTUNIFORM_I0-I3, B+0x09 INPUTBUFFER_CONFIG,
//! B+0x0A ENTRYPOINT, B+0x0B/0x0C ATTRIBUTES_PERMUTATION_LOW/HIGH, B+0x0D OUTMAP_MASK, B+0x0F
//! CODETRANSFER_END, B+0x10 FLOATUNIFORM_INDEX, B+0x11-0x18 FLOATUNIFORM_DATA, B+0x1B
//! CODETRANSFER_INDEX, B+0x1C-0x23 CODETRANSFER_DATA, B+0x25 OPDESCS_INDEX, B+0x26-0x2D
//! OPDESCS_DATA.

use super::FieldKind::*;
use super::{
    Block, Field, PortKind, RegDef, RegView, Regs, ShaderUnit, decode_array, encode_array,
};

pica_enum! {
    /// Shader unit mode (INPUTBUFFER_CONFIG bits 24-31).
    pub enum ShaderUnitMode {
        GeometryShader = 0x08 => "GEOMETRY_SHADER",
        VertexShader = 0xA0 => "VERTEX_SHADER",
    }
}

pica_enum! {
    /// Float uniform upload format (FLOATUNIFORM_INDEX bit 31).
    pub enum FloatUniformMode {
        /// Three words per vec4, packed float1.7.16, w first.
        Float24 = 0 => "FLOAT24",
        /// Four words per vec4, IEEE float32, w first.
        Float32 = 1 => "FLOAT32",
    }
}

/// First register of the geometry shader block.
pub const GSH_BASE: u16 = 0x280;
/// First register of the vertex shader block.
pub const VSH_BASE: u16 = 0x2B0;

/// Register offsets within a shader unit block (from [`GSH_BASE`] / [`VSH_BASE`]).
pub mod sh_offset {
    /// BOOLUNIFORM.
    pub const BOOLUNIFORM: u16 = 0x00;
    /// INTUNIFORM_I0 (I1-I3 follow).
    pub const INTUNIFORM_I0: u16 = 0x01;
    /// INPUTBUFFER_CONFIG.
    pub const INPUTBUFFER_CONFIG: u16 = 0x09;
    /// ENTRYPOINT.
    pub const ENTRYPOINT: u16 = 0x0A;
    /// ATTRIBUTES_PERMUTATION_LOW.
    pub const ATTRIBUTES_PERMUTATION_LOW: u16 = 0x0B;
    /// ATTRIBUTES_PERMUTATION_HIGH.
    pub const ATTRIBUTES_PERMUTATION_HIGH: u16 = 0x0C;
    /// OUTMAP_MASK.
    pub const OUTMAP_MASK: u16 = 0x0D;
    /// CODETRANSFER_END.
    pub const CODETRANSFER_END: u16 = 0x0F;
    /// FLOATUNIFORM_INDEX.
    pub const FLOATUNIFORM_INDEX: u16 = 0x10;
    /// FLOATUNIFORM_DATA[0] (8 aliases).
    pub const FLOATUNIFORM_DATA: u16 = 0x11;
    /// CODETRANSFER_INDEX.
    pub const CODETRANSFER_INDEX: u16 = 0x1B;
    /// CODETRANSFER_DATA[0] (8 aliases).
    pub const CODETRANSFER_DATA: u16 = 0x1C;
    /// OPDESCS_INDEX.
    pub const OPDESCS_INDEX: u16 = 0x25;
    /// OPDESCS_DATA[0] (8 aliases).
    pub const OPDESCS_DATA: u16 = 0x26;
}

layout! {
    /// Layout of *SH_BOOLUNIFORM.
    sh_booluniform {
        BOOLS: 0..=15, BitSet, "bools", "bit i = boolean uniform b_i";
        FIXED_7FFF: 16..=31, Const(0x7FFF), "fixed_7fff", "[3DB] always 0x7FFF";
    }
}

layout! {
    /// Layout of *SH_INTUNIFORM_I0-I3.
    sh_intuniform {
        X: 0..=7, Uint, "x", "unsigned 8-bit x (LOOP iteration count - 1)";
        Y: 8..=15, Uint, "y", "unsigned 8-bit y (LOOP initial aL)";
        Z: 16..=23, Uint, "z", "unsigned 8-bit z (LOOP aL increment; signedness on hardware unknown)";
        W: 24..=31, Uint, "w", "unsigned 8-bit w";
    }
}

layout! {
    /// Layout of *SH_INPUTBUFFER_CONFIG.
    sh_inputbuffer_config {
        INPUT_COUNT: 0..=3, Biased(1), "input_count", "unsigned number of input attributes, stored minus 1";
        INPUT_TO_UNIFORM: 8..=15, Uint, "input_to_uniform", "[C] 1 = GS inputs go to uniforms (variable/fixed primitive modes); [3DB] 'use reserved geometry shader subdivision'";
        FIXED_0: 16..=23, Const(0), "fixed_0", "[3DB] always 0";
        UNIT_MODE: 24..=31, Enum(ShaderUnitMode::NAMES), "unit_mode", "0x08 = geometry shader, 0xA0 = vertex shader";
    }
}

layout! {
    /// Layout of *SH_ENTRYPOINT.
    sh_entrypoint {
        ENTRY: 0..=15, Uint, "entry", "unsigned entry point offset in 32-bit program words";
        FIXED_7FFF: 16..=31, Const(0x7FFF), "fixed_7fff", "[3DB] always 0x7FFF";
    }
}

layout! {
    /// Layout of *SH_ATTRIBUTES_PERMUTATION_LOW (attributes 0-7).
    sh_permutation_low {
        A0: 0..=3, Uint, "attr0", "unsigned input register index v_n of attribute 0";
        A1: 4..=7, Uint, "attr1", "input register of attribute 1";
        A2: 8..=11, Uint, "attr2", "input register of attribute 2";
        A3: 12..=15, Uint, "attr3", "input register of attribute 3";
        A4: 16..=19, Uint, "attr4", "input register of attribute 4";
        A5: 20..=23, Uint, "attr5", "input register of attribute 5";
        A6: 24..=27, Uint, "attr6", "input register of attribute 6";
        A7: 28..=31, Uint, "attr7", "input register of attribute 7";
    }
}

layout! {
    /// Layout of *SH_ATTRIBUTES_PERMUTATION_HIGH (attributes 8-15).
    sh_permutation_high {
        A8: 0..=3, Uint, "attr8", "unsigned input register index v_n of attribute 8";
        A9: 4..=7, Uint, "attr9", "input register of attribute 9";
        A10: 8..=11, Uint, "attr10", "input register of attribute 10";
        A11: 12..=15, Uint, "attr11", "input register of attribute 11";
        A12: 16..=19, Uint, "attr12", "input register of attribute 12";
        A13: 20..=23, Uint, "attr13", "input register of attribute 13";
        A14: 24..=27, Uint, "attr14", "input register of attribute 14";
        A15: 28..=31, Uint, "attr15", "input register of attribute 15";
    }
}

layout! {
    /// Layout of *SH_OUTMAP_MASK.
    sh_outmap_mask {
        MASK: 0..=15, BitSet, "mask", "bit i = output register o_i enabled (o7-o15: vertex shader only)";
        FIXED_0: 16..=31, Const(0), "fixed_0", "[3DB] always 0";
    }
}

layout! {
    /// Layout of *SH_CODETRANSFER_END.
    sh_codetransfer_end {
        TRIGGER: 0..=31, Trigger, "trigger", "non-zero signals the end of a code upload (ignored by [C]/[P])";
    }
}

layout! {
    /// Layout of *SH_FLOATUNIFORM_INDEX.
    sh_floatuniform_index {
        INDEX: 0..=7, Uint, "index", "unsigned target float register c0-c95 ([C] decodes bits 0-6)";
        MODE: 31..=31, Enum(FloatUniformMode::NAMES), "mode", "0 = float24 (3 words per vec4), 1 = float32 (4 words)";
    }
}

layout! {
    /// Layout of *SH_FLOATUNIFORM_DATA[0-7].
    sh_floatuniform_data {
        DATA: 0..=31, Data, "data", "one uniform data word (format per FLOATUNIFORM_INDEX mode; vec4 components w first)";
    }
}

layout! {
    /// Layout of *SH_CODETRANSFER_INDEX and *SH_OPDESCS_INDEX.
    sh_transfer_index {
        OFFSET: 0..=11, Uint, "offset", "unsigned 12-bit target offset of the next data word";
    }
}

layout! {
    /// Layout of *SH_CODETRANSFER_DATA[0-7].
    sh_codetransfer_data {
        DATA: 0..=31, Data, "data", "one shader instruction word";
    }
}

layout! {
    /// Layout of *SH_OPDESCS_DATA[0-7].
    sh_opdescs_data {
        DATA: 0..=31, Data, "data", "one operand descriptor (bits 0-30 used)";
    }
}

macro_rules! shader_ids {
    ($( $(#[doc = $doc:literal])+ $name:ident = $val:expr; )*) => {
        /// Id constants of the shader unit registers (3dbrew names without `GPUREG_`).
        pub mod ids {
            use super::{GSH_BASE, VSH_BASE, sh_offset};
            $( $(#[doc = $doc])+ pub const $name: u16 = $val; )*
        }
        /// `(name, id)` of every constant in [`ids`], used to cross-check the table.
        pub const IDS: &[(&str, u16)] = &[$((stringify!($name), ids::$name)),*];
    };
}

shader_ids! {
    /// GS boolean uniforms b0-b15.
    GSH_BOOLUNIFORM = GSH_BASE + sh_offset::BOOLUNIFORM;
    /// GS integer uniform i0.
    GSH_INTUNIFORM_I0 = GSH_BASE + sh_offset::INTUNIFORM_I0;
    /// GS integer uniform i1.
    GSH_INTUNIFORM_I1 = GSH_BASE + sh_offset::INTUNIFORM_I0 + 1;
    /// GS integer uniform i2.
    GSH_INTUNIFORM_I2 = GSH_BASE + sh_offset::INTUNIFORM_I0 + 2;
    /// GS integer uniform i3.
    GSH_INTUNIFORM_I3 = GSH_BASE + sh_offset::INTUNIFORM_I0 + 3;
    /// GS input buffer configuration.
    GSH_INPUTBUFFER_CONFIG = GSH_BASE + sh_offset::INPUTBUFFER_CONFIG;
    /// GS entry point (applies to shader unit 3 even when it runs the VS).
    GSH_ENTRYPOINT = GSH_BASE + sh_offset::ENTRYPOINT;
    /// GS input permutation, attributes 0-7.
    GSH_ATTRIBUTES_PERMUTATION_LOW = GSH_BASE + sh_offset::ATTRIBUTES_PERMUTATION_LOW;
    /// GS input permutation, attributes 8-15.
    GSH_ATTRIBUTES_PERMUTATION_HIGH = GSH_BASE + sh_offset::ATTRIBUTES_PERMUTATION_HIGH;
    /// GS output register mask.
    GSH_OUTMAP_MASK = GSH_BASE + sh_offset::OUTMAP_MASK;
    /// GS code upload end signal.
    GSH_CODETRANSFER_END = GSH_BASE + sh_offset::CODETRANSFER_END;
    /// GS float uniform index and mode.
    GSH_FLOATUNIFORM_INDEX = GSH_BASE + sh_offset::FLOATUNIFORM_INDEX;
    /// GS code upload offset.
    GSH_CODETRANSFER_INDEX = GSH_BASE + sh_offset::CODETRANSFER_INDEX;
    /// GS operand descriptor upload offset.
    GSH_OPDESCS_INDEX = GSH_BASE + sh_offset::OPDESCS_INDEX;
    /// VS boolean uniforms b0-b15.
    VSH_BOOLUNIFORM = VSH_BASE + sh_offset::BOOLUNIFORM;
    /// VS integer uniform i0.
    VSH_INTUNIFORM_I0 = VSH_BASE + sh_offset::INTUNIFORM_I0;
    /// VS integer uniform i1.
    VSH_INTUNIFORM_I1 = VSH_BASE + sh_offset::INTUNIFORM_I0 + 1;
    /// VS integer uniform i2.
    VSH_INTUNIFORM_I2 = VSH_BASE + sh_offset::INTUNIFORM_I0 + 2;
    /// VS integer uniform i3.
    VSH_INTUNIFORM_I3 = VSH_BASE + sh_offset::INTUNIFORM_I0 + 3;
    /// VS input buffer configuration.
    VSH_INPUTBUFFER_CONFIG = VSH_BASE + sh_offset::INPUTBUFFER_CONFIG;
    /// VS entry point.
    VSH_ENTRYPOINT = VSH_BASE + sh_offset::ENTRYPOINT;
    /// VS input permutation, attributes 0-7.
    VSH_ATTRIBUTES_PERMUTATION_LOW = VSH_BASE + sh_offset::ATTRIBUTES_PERMUTATION_LOW;
    /// VS input permutation, attributes 8-15.
    VSH_ATTRIBUTES_PERMUTATION_HIGH = VSH_BASE + sh_offset::ATTRIBUTES_PERMUTATION_HIGH;
    /// VS output register mask.
    VSH_OUTMAP_MASK = VSH_BASE + sh_offset::OUTMAP_MASK;
    /// VS code upload end signal.
    VSH_CODETRANSFER_END = VSH_BASE + sh_offset::CODETRANSFER_END;
    /// VS float uniform index and mode.
    VSH_FLOATUNIFORM_INDEX = VSH_BASE + sh_offset::FLOATUNIFORM_INDEX;
    /// VS code upload offset.
    VSH_CODETRANSFER_INDEX = VSH_BASE + sh_offset::CODETRANSFER_INDEX;
    /// VS operand descriptor upload offset.
    VSH_OPDESCS_INDEX = VSH_BASE + sh_offset::OPDESCS_INDEX;
}

/// Id constants of the shader data ports (first alias of each; 8 aliases follow).
pub mod port_ids {
    use super::{GSH_BASE, VSH_BASE, sh_offset};
    /// GSH_FLOATUNIFORM_DATA[0] (0x291).
    pub const GSH_FLOATUNIFORM_DATA: u16 = GSH_BASE + sh_offset::FLOATUNIFORM_DATA;
    /// GSH_CODETRANSFER_DATA[0] (0x29C).
    pub const GSH_CODETRANSFER_DATA: u16 = GSH_BASE + sh_offset::CODETRANSFER_DATA;
    /// GSH_OPDESCS_DATA[0] (0x2A6).
    pub const GSH_OPDESCS_DATA: u16 = GSH_BASE + sh_offset::OPDESCS_DATA;
    /// VSH_FLOATUNIFORM_DATA[0] (0x2C1).
    pub const VSH_FLOATUNIFORM_DATA: u16 = VSH_BASE + sh_offset::FLOATUNIFORM_DATA;
    /// VSH_CODETRANSFER_DATA[0] (0x2CC).
    pub const VSH_CODETRANSFER_DATA: u16 = VSH_BASE + sh_offset::CODETRANSFER_DATA;
    /// VSH_OPDESCS_DATA[0] (0x2D6).
    pub const VSH_OPDESCS_DATA: u16 = VSH_BASE + sh_offset::OPDESCS_DATA;
    /// libctru's name for VSH_FLOATUNIFORM_INDEX (0x2C0).
    pub const VSH_FLOATUNIFORM_CONFIG: u16 = VSH_BASE + sh_offset::FLOATUNIFORM_INDEX;
    /// libctru's name for GSH_FLOATUNIFORM_INDEX (0x290).
    pub const GSH_FLOATUNIFORM_CONFIG: u16 = GSH_BASE + sh_offset::FLOATUNIFORM_INDEX;
}

macro_rules! shader_unit_regs {
    ($prefix:literal, $base:expr, $block:ident, $who:literal) => {
        &[
            shader_unit_regs!(@ $prefix, $base, $block, BOOLUNIFORM, 0, "BOOLUNIFORM", sh_booluniform,
                concat!($who, " boolean uniforms b0-b15 (copied into the unit on write).")),
            shader_unit_regs!(@ $prefix, $base, $block, INTUNIFORM_I0, 0, "INTUNIFORM_I0", sh_intuniform,
                concat!($who, " integer uniform i0 (x, y, z, w unsigned bytes).")),
            shader_unit_regs!(@ $prefix, $base, $block, INTUNIFORM_I0, 1, "INTUNIFORM_I1", sh_intuniform,
                concat!($who, " integer uniform i1.")),
            shader_unit_regs!(@ $prefix, $base, $block, INTUNIFORM_I0, 2, "INTUNIFORM_I2", sh_intuniform,
                concat!($who, " integer uniform i2.")),
            shader_unit_regs!(@ $prefix, $base, $block, INTUNIFORM_I0, 3, "INTUNIFORM_I3", sh_intuniform,
                concat!($who, " integer uniform i3.")),
            shader_unit_regs!(@ $prefix, $base, $block, INPUTBUFFER_CONFIG, 0, "INPUTBUFFER_CONFIG",
                sh_inputbuffer_config, concat!($who, " input buffer configuration.")),
            shader_unit_regs!(@ $prefix, $base, $block, ENTRYPOINT, 0, "ENTRYPOINT", sh_entrypoint,
                concat!($who, " entry point.")),
            shader_unit_regs!(@ $prefix, $base, $block, ATTRIBUTES_PERMUTATION_LOW, 0,
                "ATTRIBUTES_PERMUTATION_LOW", sh_permutation_low,
                concat!($who, " input permutation of attributes 0-7.")),
            shader_unit_regs!(@ $prefix, $base, $block, ATTRIBUTES_PERMUTATION_HIGH, 0,
                "ATTRIBUTES_PERMUTATION_HIGH", sh_permutation_high,
                concat!($who, " input permutation of attributes 8-15.")),
            shader_unit_regs!(@ $prefix, $base, $block, OUTMAP_MASK, 0, "OUTMAP_MASK", sh_outmap_mask,
                concat!($who, " output register mask.")),
            shader_unit_regs!(@ $prefix, $base, $block, CODETRANSFER_END, 0, "CODETRANSFER_END",
                sh_codetransfer_end, concat!($who, " code upload end signal.")),
            shader_unit_regs!(@ $prefix, $base, $block, FLOATUNIFORM_INDEX, 0, "FLOATUNIFORM_INDEX",
                sh_floatuniform_index,
                concat!($who, " float uniform target register and upload mode (libctru: FLOATUNIFORM_CONFIG).")),
            shader_unit_regs!(@ $prefix, $base, $block, CODETRANSFER_INDEX, 0, "CODETRANSFER_INDEX",
                sh_transfer_index,
                concat!($who, " program code upload offset (libctru: CODETRANSFER_CONFIG).")),
            shader_unit_regs!(@ $prefix, $base, $block, OPDESCS_INDEX, 0, "OPDESCS_INDEX", sh_transfer_index,
                concat!($who, " operand descriptor upload offset (libctru: OPDESCS_CONFIG).")),
        ]
    };
    (@ $prefix:literal, $base:expr, $block:ident, $off:ident, $plus:literal, $suffix:literal,
        $layout:ident, $doc:expr) => {
        RegDef {
            id: $base + sh_offset::$off + $plus,
            name: concat!($prefix, $suffix),
            block: Block::$block,
            fields: $layout::FIELDS,
            doc: $doc,
            port: None,
        }
    };
}

/// The geometry shader unit's configuration registers (0x280-0x2AF, ports excluded).
pub const GSH: &[RegDef] = shader_unit_regs!("GSH_", GSH_BASE, GeometryShader, "Geometry shader");
/// The vertex shader unit's configuration registers (0x2B0-0x2DF, ports excluded).
pub const VSH: &[RegDef] = shader_unit_regs!("VSH_", VSH_BASE, VertexShader, "Vertex shader");

/// GSH_FLOATUNIFORM_DATA[0-7] (0x291-0x298).
pub const GSH_FLOATUNIFORM_DATA: [RegDef; 8] = data_port!(
    port_ids::GSH_FLOATUNIFORM_DATA,
    "GSH_FLOATUNIFORM_DATA",
    PortKind::FloatUniform(ShaderUnit::Geometry),
    sh_floatuniform_data,
    "Geometry shader float uniform data FIFO: a complete vec4 (3 or 4 words) is stored at the index, which then increments."
);
/// GSH_CODETRANSFER_DATA[0-7] (0x29C-0x2A3).
pub const GSH_CODETRANSFER_DATA: [RegDef; 8] = data_port!(
    port_ids::GSH_CODETRANSFER_DATA,
    "GSH_CODETRANSFER_DATA",
    PortKind::Code(ShaderUnit::Geometry),
    sh_codetransfer_data,
    "Geometry shader program code FIFO: stores at the code offset, which then increments."
);
/// GSH_OPDESCS_DATA[0-7] (0x2A6-0x2AD).
pub const GSH_OPDESCS_DATA: [RegDef; 8] = data_port!(
    port_ids::GSH_OPDESCS_DATA,
    "GSH_OPDESCS_DATA",
    PortKind::OpDesc(ShaderUnit::Geometry),
    sh_opdescs_data,
    "Geometry shader operand descriptor FIFO: stores at the descriptor offset, which then increments."
);
/// VSH_FLOATUNIFORM_DATA[0-7] (0x2C1-0x2C8).
pub const VSH_FLOATUNIFORM_DATA: [RegDef; 8] = data_port!(
    port_ids::VSH_FLOATUNIFORM_DATA,
    "VSH_FLOATUNIFORM_DATA",
    PortKind::FloatUniform(ShaderUnit::Vertex),
    sh_floatuniform_data,
    "Vertex shader float uniform data FIFO: a complete vec4 (3 or 4 words) is stored at the index, which then increments."
);
/// VSH_CODETRANSFER_DATA[0-7] (0x2CC-0x2D3).
pub const VSH_CODETRANSFER_DATA: [RegDef; 8] = data_port!(
    port_ids::VSH_CODETRANSFER_DATA,
    "VSH_CODETRANSFER_DATA",
    PortKind::Code(ShaderUnit::Vertex),
    sh_codetransfer_data,
    "Vertex shader program code FIFO: stores at the code offset, which then increments."
);
/// VSH_OPDESCS_DATA[0-7] (0x2D6-0x2DD).
pub const VSH_OPDESCS_DATA: [RegDef; 8] = data_port!(
    port_ids::VSH_OPDESCS_DATA,
    "VSH_OPDESCS_DATA",
    PortKind::OpDesc(ShaderUnit::Vertex),
    sh_opdescs_data,
    "Vertex shader operand descriptor FIFO: stores at the descriptor offset, which then increments."
);

/// Every catalogue group of this module.
pub(crate) const GROUPS: &[&[RegDef]] = &[
    GSH,
    &GSH_FLOATUNIFORM_DATA,
    &GSH_CODETRANSFER_DATA,
    &GSH_OPDESCS_DATA,
    VSH,
    &VSH_FLOATUNIFORM_DATA,
    &VSH_CODETRANSFER_DATA,
    &VSH_OPDESCS_DATA,
];

view! {
    /// Decoded *SH_INTUNIFORM_Ii.
    pub struct IntUniform from sh_intuniform {
        x: u8 = X,
        y: u8 = Y,
        z: u8 = Z,
        w: u8 = W,
    }
}

view! {
    /// Decoded *SH_INPUTBUFFER_CONFIG.
    pub struct InputBufferConfig from sh_inputbuffer_config {
        input_count_minus_1: u8 = INPUT_COUNT,
        input_to_uniform: u8 = INPUT_TO_UNIFORM,
        unit_mode: ShaderUnitMode = UNIT_MODE,
    }
}

impl InputBufferConfig {
    /// Number of input attributes (stored value + 1).
    pub const fn input_count(&self) -> u32 {
        self.input_count_minus_1 as u32 + 1
    }
}

view! {
    /// Decoded *SH_FLOATUNIFORM_INDEX.
    pub struct FloatUniformIndex from sh_floatuniform_index {
        index: u8 = INDEX,
        mode: FloatUniformMode = MODE,
    }
}

const PERMUTATION_LOW: [Field; 8] = [
    sh_permutation_low::A0,
    sh_permutation_low::A1,
    sh_permutation_low::A2,
    sh_permutation_low::A3,
    sh_permutation_low::A4,
    sh_permutation_low::A5,
    sh_permutation_low::A6,
    sh_permutation_low::A7,
];
const PERMUTATION_HIGH: [Field; 8] = [
    sh_permutation_high::A8,
    sh_permutation_high::A9,
    sh_permutation_high::A10,
    sh_permutation_high::A11,
    sh_permutation_high::A12,
    sh_permutation_high::A13,
    sh_permutation_high::A14,
    sh_permutation_high::A15,
];

/// Decoded *SH_ATTRIBUTES_PERMUTATION_LOW: input register of attributes 0-7.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PermutationLow {
    /// Input register index per attribute.
    pub registers: [u8; 8],
}

impl RegView for PermutationLow {
    const LAYOUT: &'static [Field] = sh_permutation_low::FIELDS;
    #[inline]
    fn from_raw(raw: u32) -> Self {
        PermutationLow {
            registers: decode_array(raw, &PERMUTATION_LOW),
        }
    }
    #[inline]
    fn to_raw(&self) -> u32 {
        encode_array(&self.registers, &PERMUTATION_LOW)
    }
}

/// Decoded *SH_ATTRIBUTES_PERMUTATION_HIGH: input register of attributes 8-15.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PermutationHigh {
    /// Input register index per attribute.
    pub registers: [u8; 8],
}

impl RegView for PermutationHigh {
    const LAYOUT: &'static [Field] = sh_permutation_high::FIELDS;
    #[inline]
    fn from_raw(raw: u32) -> Self {
        PermutationHigh {
            registers: decode_array(raw, &PERMUTATION_HIGH),
        }
    }
    #[inline]
    fn to_raw(&self) -> u32 {
        encode_array(&self.registers, &PERMUTATION_HIGH)
    }
}

/// One shader unit's configuration, gathered from its registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ShaderConfig {
    /// Boolean uniforms (bit i = b_i).
    pub bool_uniforms: u16,
    /// Integer uniforms i0-i3.
    pub int_uniforms: [IntUniform; 4],
    /// Input buffer configuration.
    pub input: InputBufferConfig,
    /// Entry point in program words.
    pub entry_point: u16,
    /// Input register of attributes 0-15.
    pub permutation: [u8; 16],
    /// Output register mask (bit i = o_i).
    pub output_mask: u16,
    /// Float uniform upload index and mode.
    pub float_uniform_index: FloatUniformIndex,
    /// Program code upload offset.
    pub code_offset: u16,
    /// Operand descriptor upload offset.
    pub opdesc_offset: u16,
}

impl Regs<'_> {
    /// The configuration registers of shader unit `unit`.
    #[inline]
    pub fn shader_config(&self, unit: ShaderUnit) -> ShaderConfig {
        let base = match unit {
            ShaderUnit::Vertex => VSH_BASE,
            ShaderUnit::Geometry => GSH_BASE,
        };
        let low: PermutationLow = self.view(base + sh_offset::ATTRIBUTES_PERMUTATION_LOW);
        let high: PermutationHigh = self.view(base + sh_offset::ATTRIBUTES_PERMUTATION_HIGH);
        let mut permutation = [0u8; 16];
        permutation[..8].copy_from_slice(&low.registers);
        permutation[8..].copy_from_slice(&high.registers);
        ShaderConfig {
            bool_uniforms: self.field(base + sh_offset::BOOLUNIFORM, &sh_booluniform::BOOLS) as u16,
            int_uniforms: core::array::from_fn(|i| {
                self.view(base + sh_offset::INTUNIFORM_I0 + i as u16)
            }),
            input: self.view(base + sh_offset::INPUTBUFFER_CONFIG),
            entry_point: self.field(base + sh_offset::ENTRYPOINT, &sh_entrypoint::ENTRY) as u16,
            permutation,
            output_mask: self.field(base + sh_offset::OUTMAP_MASK, &sh_outmap_mask::MASK) as u16,
            float_uniform_index: self.view(base + sh_offset::FLOATUNIFORM_INDEX),
            code_offset: self.field(
                base + sh_offset::CODETRANSFER_INDEX,
                &sh_transfer_index::OFFSET,
            ) as u16,
            opdesc_offset: self.field(base + sh_offset::OPDESCS_INDEX, &sh_transfer_index::OFFSET)
                as u16,
        }
    }
}
