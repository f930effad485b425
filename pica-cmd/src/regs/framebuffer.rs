//! Framebuffer / output-merger registers 0x100-0x13F: fragment operation mode, blending,
//! logic op, alpha / stencil / depth tests, write masks, buffer formats and locations, gas
//! lights and the shadow-map parameters.
//!
//! Stage: per-fragment operations and framebuffer access (`pica-raster.md` §9). Inputs:
//! register words. Outputs: catalogue entries and typed getters on [`Regs`]. Registers:
//! 0x100-0x107, 0x110-0x118, 0x11B-0x11E, 0x120-0x126, 0x130.

use super::FieldKind::*;
use super::{Block, F16, FieldKind, PhysAddr, Port, PortKind, RegDef, Regs, Rgba8, fixed};

pica_enum! {
    /// Fragment operation mode (COLOR_OPERATION bits 0-1).
    pub enum FragOpMode {
        Default = 0 => "DEFAULT",
        Gas = 1 => "GAS",
        /// Shadow-map rendering (`pica-raster.md` §9.2).
        Shadow = 3 => "SHADOW",
    }
}

pica_enum! {
    /// Blending or logic op (COLOR_OPERATION bit 8).
    pub enum BlendMode {
        LogicOp = 0 => "LOGIC_OP",
        Blend = 1 => "BLEND",
    }
}

pica_enum! {
    /// Blend equation (BLEND_FUNC bits 0-2 / 8-10). [3DB]: 5-7 behave as add.
    pub enum BlendEquation {
        Add = 0 => "ADD",
        Subtract = 1 => "SUBTRACT",
        ReverseSubtract = 2 => "REVERSE_SUBTRACT",
        Min = 3 => "MIN",
        Max = 4 => "MAX",
    }
}

pica_enum! {
    /// Blend factor (BLEND_FUNC 4-bit fields). 15 is undocumented ([P] treats it as ONE).
    pub enum BlendFactor {
        Zero = 0 => "ZERO",
        One = 1 => "ONE",
        SrcColor = 2 => "SRC_COLOR",
        OneMinusSrcColor = 3 => "ONE_MINUS_SRC_COLOR",
        DstColor = 4 => "DST_COLOR",
        OneMinusDstColor = 5 => "ONE_MINUS_DST_COLOR",
        SrcAlpha = 6 => "SRC_ALPHA",
        OneMinusSrcAlpha = 7 => "ONE_MINUS_SRC_ALPHA",
        DstAlpha = 8 => "DST_ALPHA",
        OneMinusDstAlpha = 9 => "ONE_MINUS_DST_ALPHA",
        ConstColor = 10 => "CONSTANT_COLOR",
        OneMinusConstColor = 11 => "ONE_MINUS_CONSTANT_COLOR",
        ConstAlpha = 12 => "CONSTANT_ALPHA",
        OneMinusConstAlpha = 13 => "ONE_MINUS_CONSTANT_ALPHA",
        SrcAlphaSaturate = 14 => "SRC_ALPHA_SATURATE",
    }
}

pica_enum! {
    /// Logic operation (LOGIC_OP bits 0-3), per 8-bit channel, s = source, d = destination.
    pub enum LogicOp {
        Clear = 0 => "CLEAR",
        And = 1 => "AND",
        /// s & !d.
        AndReverse = 2 => "AND_REVERSE",
        Copy = 3 => "COPY",
        Set = 4 => "SET",
        /// !s.
        CopyInverted = 5 => "COPY_INVERTED",
        Noop = 6 => "NOOP",
        /// !d.
        Invert = 7 => "INVERT",
        Nand = 8 => "NAND",
        Or = 9 => "OR",
        Nor = 10 => "NOR",
        Xor = 11 => "XOR",
        /// !(s ^ d).
        Equiv = 12 => "EQUIV",
        /// !s & d.
        AndInverted = 13 => "AND_INVERTED",
        /// s | !d.
        OrReverse = 14 => "OR_REVERSE",
        /// !s | d.
        OrInverted = 15 => "OR_INVERTED",
    }
}

pica_enum! {
    /// Compare function of the alpha, stencil and depth tests (3-bit fields). Depth compares
    /// `fragment OP stored`, stencil compares `reference OP stored` (`pica-raster.md` §9.5).
    pub enum CompareFunc {
        Never = 0 => "NEVER",
        Always = 1 => "ALWAYS",
        Equal = 2 => "EQUAL",
        NotEqual = 3 => "NOTEQUAL",
        Less = 4 => "LESS",
        LessEqual = 5 => "LEQUAL",
        Greater = 6 => "GREATER",
        GreaterEqual = 7 => "GEQUAL",
    }
}

pica_enum! {
    /// Stencil operation (STENCIL_OP 3-bit fields).
    pub enum StencilOp {
        Keep = 0 => "KEEP",
        Zero = 1 => "ZERO",
        Replace = 2 => "REPLACE",
        /// Increment, saturating at 255.
        Increment = 3 => "INCR",
        /// Decrement, saturating at 0.
        Decrement = 4 => "DECR",
        Invert = 5 => "INVERT",
        IncrementWrap = 6 => "INCR_WRAP",
        DecrementWrap = 7 => "DECR_WRAP",
    }
}

pica_enum! {
    /// Depth buffer format (DEPTHBUFFER_FORMAT bits 0-1); 1 is undocumented.
    pub enum DepthFormat {
        D16 = 0 => "D16",
        D24 = 2 => "D24",
        D24S8 = 3 => "D24S8",
    }
}

pica_enum! {
    /// Colour buffer format, PICA numbering (COLORBUFFER_FORMAT bits 16-18). Note: the external
    /// engines number RGB565 / RGB5A1 the other way round.
    pub enum ColorFormat {
        Rgba8 = 0 => "RGBA8",
        Rgb8 = 1 => "RGB8",
        Rgb5a1 = 2 => "RGB5A1",
        Rgb565 = 3 => "RGB565",
        Rgba4 = 4 => "RGBA4",
    }
}

pica_enum! {
    /// Colour buffer pixel size (COLORBUFFER_FORMAT bits 0-1).
    pub enum PixelSize {
        Bits16 = 0 => "16_BIT",
        Bits32 = 2 => "32_BIT",
    }
}

pica_enum! {
    /// Framebuffer tiling block size (FRAMEBUFFER_BLOCK32 bit 0).
    pub enum BlockMode {
        Block8 = 0 => "8X8",
        Block32 = 1 => "32X32",
    }
}

pica_enum! {
    /// Input of the gas colour LUT (GAS_LIGHT_Z_COLOR bit 8).
    pub enum GasColorLutInput {
        Density = 0 => "GAS_DENSITY",
        LightFactor = 1 => "LIGHT_FACTOR",
    }
}

pica_enum! {
    /// Gas depth function (GAS_DELTAZ_DEPTH bits 24-25).
    pub enum GasDepthFunc {
        Never = 0 => "NEVER",
        Always = 1 => "ALWAYS",
        /// Greater than / greater or equal.
        Greater = 2 => "GREATER_OR_GEQUAL",
        /// Less than / less or equal / equal / not equal.
        Less = 3 => "LESS_LEQUAL_EQUAL_NOTEQUAL",
    }
}

/// Whether the stencil reference (STENCIL_TEST bits 16-23) is shown signed. [3DB] and [P] say
/// signed; [C] compares it unsigned, and `pica-raster.md` §9.5 follows [C]. We choose unsigned
/// (the [C] behaviour most reference images come from). UNVERIFIED on hardware.
// UNVERIFIED: stencil reference signedness; alternative: signed ([3DB], [P]).
pub const STENCIL_REFERENCE_SIGNED: bool = false;

const STENCIL_REFERENCE_KIND: FieldKind = if STENCIL_REFERENCE_SIGNED { Int } else { Uint };

layout! {
    /// Layout of COLOR_OPERATION (0x100).
    color_operation {
        MODE: 0..=1, Enum(FragOpMode::NAMES), "frag_op_mode", "fragment operation mode (unsigned enum)";
        BLEND_MODE: 8..=8, Enum(BlendMode::NAMES), "blend_mode", "1 = blending, 0 = logic op";
        FIXED_0E4: 16..=25, Const(0x0E4), "fixed_0e4", "[3DB] always 0x0E4";
    }
}

// HW: [3DB] blend equations 5-7 behave as ADD; they decode as Unknown(5..7) here.
layout! {
    /// Layout of BLEND_FUNC (0x101).
    blend_func {
        RGB_EQUATION: 0..=2, Enum(BlendEquation::NAMES), "rgb_equation", "RGB blend equation (unsigned enum)";
        ALPHA_EQUATION: 8..=10, Enum(BlendEquation::NAMES), "alpha_equation", "alpha blend equation (unsigned enum)";
        RGB_SRC: 16..=19, Enum(BlendFactor::NAMES), "rgb_src", "RGB source factor (unsigned enum)";
        RGB_DST: 20..=23, Enum(BlendFactor::NAMES), "rgb_dst", "RGB destination factor (unsigned enum)";
        ALPHA_SRC: 24..=27, Enum(BlendFactor::NAMES), "alpha_src", "alpha source factor (unsigned enum)";
        ALPHA_DST: 28..=31, Enum(BlendFactor::NAMES), "alpha_dst", "alpha destination factor (unsigned enum)";
    }
}

layout! {
    /// Layout of LOGIC_OP (0x102).
    logic_op {
        OP: 0..=3, Enum(LogicOp::NAMES), "op", "logic operation (unsigned enum)";
    }
}

layout! {
    /// Layout of BLEND_COLOR (0x103).
    blend_color {
        COLOR: 0..=31, Rgba8, "color", "constant blend colour, unsigned 8 bits per channel: R 0-7, G 8-15, B 16-23, A 24-31";
    }
}

layout! {
    /// Layout of FRAGOP_ALPHA_TEST (0x104).
    alpha_test {
        ENABLE: 0..=0, Bool, "enable", "1 = alpha test enabled";
        FUNC: 4..=6, Enum(CompareFunc::NAMES), "func", "compare function: passes if alpha OP reference";
        REFERENCE: 8..=15, Uint, "reference", "unsigned 8-bit reference alpha";
    }
}

layout! {
    /// Layout of STENCIL_TEST (0x105).
    stencil_test {
        ENABLE: 0..=0, Bool, "enable", "1 = stencil test enabled (only effective with a D24S8 depth buffer)";
        FUNC: 4..=6, Enum(CompareFunc::NAMES), "func", "compare function: passes if (reference & mask) OP (stored & mask)";
        WRITE_MASK: 8..=15, Hex, "write_mask", "unsigned 8-bit mask of stencil bits written";
        REFERENCE: 16..=23, STENCIL_REFERENCE_KIND, "reference", "8-bit reference value ([3DB]/[P] signed, [C] unsigned; shown per STENCIL_REFERENCE_SIGNED)";
        INPUT_MASK: 24..=31, Hex, "input_mask", "unsigned 8-bit mask applied to reference and stored value before comparing";
    }
}

layout! {
    /// Layout of STENCIL_OP (0x106).
    stencil_op {
        FAIL: 0..=2, Enum(StencilOp::NAMES), "fail_op", "operation when the stencil test fails";
        Z_FAIL: 4..=6, Enum(StencilOp::NAMES), "z_fail_op", "operation when the stencil test passes and the depth test fails";
        Z_PASS: 8..=10, Enum(StencilOp::NAMES), "z_pass_op", "operation when both pass (also when the depth test is disabled)";
    }
}

// HW: [3DB] with the depth test disabled the depth buffer is still written (the test behaves
// as ALWAYS); only bit 12 stops depth writes.
layout! {
    /// Layout of DEPTH_COLOR_MASK (0x107).
    depth_color_mask {
        DEPTH_TEST: 0..=0, Bool, "depth_test_enable", "1 = depth test enabled; 0 behaves like ALWAYS and still writes depth [3DB]";
        DEPTH_FUNC: 4..=6, Enum(CompareFunc::NAMES), "depth_func", "depth compare function: passes if fragment OP stored";
        RED_WRITE: 8..=8, Bool, "red_write", "1 = red channel written";
        GREEN_WRITE: 9..=9, Bool, "green_write", "1 = green channel written";
        BLUE_WRITE: 10..=10, Bool, "blue_write", "1 = blue channel written";
        ALPHA_WRITE: 11..=11, Bool, "alpha_write", "1 = alpha channel written";
        DEPTH_WRITE: 12..=12, Bool, "depth_write", "1 = depth written";
    }
}

layout! {
    /// Layout of FRAMEBUFFER_INVALIDATE / FRAMEBUFFER_FLUSH (0x110 / 0x111).
    framebuffer_trigger {
        TRIGGER: 0..=0, Trigger, "trigger", "1 = invalidate / flush the framebuffer cache (no effect on an emulator)";
    }
}

layout! {
    /// Layout of COLORBUFFER_READ / COLORBUFFER_WRITE (0x112 / 0x113).
    colorbuffer_access {
        ENABLE: 0..=3, Hex, "enable", "unsigned 4-bit: 0 = access disabled, 0xF = enabled";
    }
}

layout! {
    /// Layout of DEPTHBUFFER_READ / DEPTHBUFFER_WRITE (0x114 / 0x115).
    depthbuffer_access {
        STENCIL: 0..=0, Bool, "stencil", "1 = stencil access enabled";
        DEPTH: 1..=1, Bool, "depth", "1 = depth access enabled ([C] treats any non-zero value as both)";
    }
}

layout! {
    /// Layout of DEPTHBUFFER_FORMAT (0x116).
    depthbuffer_format {
        FORMAT: 0..=1, Enum(DepthFormat::NAMES), "format", "depth buffer format (unsigned enum)";
    }
}

layout! {
    /// Layout of COLORBUFFER_FORMAT (0x117).
    colorbuffer_format {
        PIXEL_SIZE: 0..=1, Enum(PixelSize::NAMES), "pixel_size", "pixel size (unsigned enum)";
        FORMAT: 16..=18, Enum(ColorFormat::NAMES), "format", "colour format, PICA numbering (unsigned enum)";
    }
}

layout! {
    /// Layout of EARLYDEPTH_TEST2 (0x118).
    earlydepth_test2 {
        ENABLE: 0..=0, Bool, "enable", "1 = early depth test enabled";
    }
}

layout! {
    /// Layout of FRAMEBUFFER_BLOCK32 (0x11B).
    framebuffer_block32 {
        MODE: 0..=0, Enum(BlockMode::NAMES), "mode", "tiling block size (ignored by [C])";
    }
}

layout! {
    /// Layout of DEPTHBUFFER_LOC / COLORBUFFER_LOC (0x11C / 0x11D).
    buffer_loc {
        ADDR: 0..=27, Address { shift: 3 }, "addr", "physical address >> 3 (PA = field << 3)";
    }
}

// UNVERIFIED: bit 24 of FRAMEBUFFER_DIM ([3DB] "vertical flip?", 0 = enable); alternative: no
// effect (ignored by [C]).
layout! {
    /// Layout of FRAMEBUFFER_DIM (0x11E).
    framebuffer_dim {
        WIDTH: 0..=10, Uint, "width", "unsigned width in pixels";
        HEIGHT: 12..=21, Biased(1), "height", "unsigned height in pixels, stored minus 1";
        FLIP: 24..=24, Bool, "flip_bit", "[3DB] 'vertical flip?' (0 = enable, 1 = disable); ignored by [C]. UNVERIFIED";
    }
}

layout! {
    /// Layout of GAS_LIGHT_XY (0x120).
    gas_light_xy {
        MIN: 0..=7, Uint, "planar_min", "unsigned planar shading minimum intensity";
        MAX: 8..=15, Uint, "planar_max", "unsigned planar shading maximum intensity";
        ATTENUATION: 16..=23, Uint, "planar_attenuation", "unsigned planar shading density attenuation";
    }
}

layout! {
    /// Layout of GAS_LIGHT_Z (0x121).
    gas_light_z {
        MIN: 0..=7, Uint, "view_min", "unsigned view shading minimum intensity";
        MAX: 8..=15, Uint, "view_max", "unsigned view shading maximum intensity";
        ATTENUATION: 16..=23, Uint, "view_attenuation", "unsigned view shading density attenuation";
    }
}

layout! {
    /// Layout of GAS_LIGHT_Z_COLOR (0x122).
    gas_light_z_color {
        LOS_EFFECT: 0..=7, Uint, "los_effect", "unsigned view shading effect in the line-of-sight direction";
        LUT_INPUT: 8..=8, Enum(GasColorLutInput::NAMES), "lut_input", "gas colour LUT input";
    }
}

layout! {
    /// Layout of GAS_LUT_INDEX (0x123).
    gas_lut_index {
        INDEX: 0..=15, Uint, "index", "unsigned first entry written by the next GAS_LUT_DATA word";
    }
}

layout! {
    /// Layout of GAS_LUT_DATA (0x124).
    gas_lut_data {
        DATA: 0..=31, Data, "data", "one gas LUT entry: 8 signed then 8 unsigned RGB8 entries (R 0-7, G 8-15, B 16-23)";
    }
}

layout! {
    /// Layout of GAS_ACCMAX_FEEDBACK (0x125).
    gas_accmax_feedback {
        VALUE: 0..=31, Hex, "value", "[LC] name only; meaning undocumented (raw). UNVERIFIED";
    }
}

layout! {
    /// Layout of GAS_DELTAZ_DEPTH (0x126).
    gas_deltaz_depth {
        DELTA_Z: 0..=23, fixed(false, 16, 8), "delta_z", "depth-direction attenuation proportion, fixed0.16.8 unsigned (raw / 256)";
        DEPTH_FUNC: 24..=25, Enum(GasDepthFunc::NAMES), "depth_func", "gas depth function (unsigned enum)";
    }
}

layout! {
    /// Layout of FRAGOP_SHADOW (0x130).
    fragop_shadow {
        CONSTANT: 0..=15, Float16, "constant", "float1.5.10: penumbra scale + penumbra bias";
        LINEAR: 16..=31, Float16, "linear", "float1.5.10: penumbra scale with reversed sign";
    }
}

registers! {
    block: Framebuffer;
    /// Fragment operation mode and blend / logic-op selection.
    0x100 COLOR_OPERATION => color_operation;
    /// Blend equations and factors.
    0x101 BLEND_FUNC => blend_func;
    /// Logic operation.
    0x102 LOGIC_OP => logic_op;
    /// Constant blend colour.
    0x103 BLEND_COLOR => blend_color;
    /// Alpha test.
    0x104 FRAGOP_ALPHA_TEST => alpha_test;
    /// Stencil test.
    0x105 STENCIL_TEST => stencil_test;
    /// Stencil operations.
    0x106 STENCIL_OP => stencil_op;
    /// Depth test and colour / depth write masks.
    0x107 DEPTH_COLOR_MASK => depth_color_mask;
    /// Framebuffer cache invalidate trigger.
    0x110 FRAMEBUFFER_INVALIDATE => framebuffer_trigger;
    /// Framebuffer cache flush trigger.
    0x111 FRAMEBUFFER_FLUSH => framebuffer_trigger;
    /// Colour buffer read access.
    0x112 COLORBUFFER_READ => colorbuffer_access;
    /// Colour buffer write access.
    0x113 COLORBUFFER_WRITE => colorbuffer_access;
    /// Depth / stencil buffer read access.
    0x114 DEPTHBUFFER_READ => depthbuffer_access;
    /// Depth / stencil buffer write access.
    0x115 DEPTHBUFFER_WRITE => depthbuffer_access;
    /// Depth buffer format.
    0x116 DEPTHBUFFER_FORMAT => depthbuffer_format;
    /// Colour buffer format.
    0x117 COLORBUFFER_FORMAT => colorbuffer_format;
    /// Early depth test enable (second of two; see EARLYDEPTH_TEST1 0x062).
    0x118 EARLYDEPTH_TEST2 => earlydepth_test2;
    /// Framebuffer block (tile) size.
    0x11B FRAMEBUFFER_BLOCK32 => framebuffer_block32;
    /// Depth buffer physical address.
    0x11C DEPTHBUFFER_LOC => buffer_loc;
    /// Colour buffer physical address.
    0x11D COLORBUFFER_LOC => buffer_loc;
    /// Framebuffer dimensions.
    0x11E FRAMEBUFFER_DIM => framebuffer_dim;
    /// Gas light planar shading.
    0x120 GAS_LIGHT_XY => gas_light_xy;
    /// Gas light view shading.
    0x121 GAS_LIGHT_Z => gas_light_z;
    /// Gas line-of-sight shading and colour-LUT input.
    0x122 GAS_LIGHT_Z_COLOR => gas_light_z_color;
    /// Gas LUT start index.
    0x123 GAS_LUT_INDEX => gas_lut_index;
    /// [LC] name (3dbrew: GPUREG_0125); meaning undocumented.
    0x125 GAS_ACCMAX_FEEDBACK => gas_accmax_feedback;
    /// Gas depth-direction attenuation and depth function.
    0x126 GAS_DELTAZ_DEPTH => gas_deltaz_depth;
    /// Shadow-map penumbra parameters.
    0x130 FRAGOP_SHADOW => fragop_shadow;
}

/// Id constants of this module's data ports.
pub mod port_ids {
    /// GAS_LUT_DATA (0x124), a single-id data port.
    pub const GAS_LUT_DATA: u16 = 0x124;
}

/// GAS_LUT_DATA (0x124), declared separately because it is a data port.
pub const GAS_LUT_DATA: RegDef = RegDef {
    id: port_ids::GAS_LUT_DATA,
    name: "GAS_LUT_DATA",
    block: Block::Framebuffer,
    fields: gas_lut_data::FIELDS,
    doc: "Gas LUT data FIFO: stores at the GAS_LUT_INDEX index, which then increments.",
    port: Some(Port {
        kind: PortKind::GasLut,
        alias: 0,
    }),
};

/// Data-port entries of this block.
pub const PORTS: &[RegDef] = &[GAS_LUT_DATA];

view! {
    /// Decoded COLOR_OPERATION (0x100).
    pub struct ColorOperation from color_operation {
        frag_op_mode: FragOpMode = MODE,
        blend_mode: BlendMode = BLEND_MODE,
    }
}

view! {
    /// Decoded BLEND_FUNC (0x101).
    pub struct BlendFunc from blend_func {
        rgb_equation: BlendEquation = RGB_EQUATION,
        alpha_equation: BlendEquation = ALPHA_EQUATION,
        rgb_src: BlendFactor = RGB_SRC,
        rgb_dst: BlendFactor = RGB_DST,
        alpha_src: BlendFactor = ALPHA_SRC,
        alpha_dst: BlendFactor = ALPHA_DST,
    }
}

view! {
    /// Decoded FRAGOP_ALPHA_TEST (0x104).
    pub struct AlphaTest from alpha_test {
        enable: bool = ENABLE,
        func: CompareFunc = FUNC,
        reference: u8 = REFERENCE,
    }
}

view! {
    /// Decoded STENCIL_TEST (0x105). `reference` is the raw 8-bit value (see
    /// [`STENCIL_REFERENCE_SIGNED`]).
    pub struct StencilTest from stencil_test {
        enable: bool = ENABLE,
        func: CompareFunc = FUNC,
        write_mask: u8 = WRITE_MASK,
        reference: u8 = REFERENCE,
        input_mask: u8 = INPUT_MASK,
    }
}

view! {
    /// Decoded STENCIL_OP (0x106).
    pub struct StencilOps from stencil_op {
        fail: StencilOp = FAIL,
        z_fail: StencilOp = Z_FAIL,
        z_pass: StencilOp = Z_PASS,
    }
}

view! {
    /// Decoded DEPTH_COLOR_MASK (0x107).
    pub struct DepthColorMask from depth_color_mask {
        depth_test: bool = DEPTH_TEST,
        depth_func: CompareFunc = DEPTH_FUNC,
        red_write: bool = RED_WRITE,
        green_write: bool = GREEN_WRITE,
        blue_write: bool = BLUE_WRITE,
        alpha_write: bool = ALPHA_WRITE,
        depth_write: bool = DEPTH_WRITE,
    }
}

view! {
    /// Decoded DEPTHBUFFER_READ / DEPTHBUFFER_WRITE.
    pub struct DepthStencilAccess from depthbuffer_access {
        stencil: bool = STENCIL,
        depth: bool = DEPTH,
    }
}

view! {
    /// Decoded COLORBUFFER_FORMAT (0x117).
    pub struct ColorBufferFormat from colorbuffer_format {
        pixel_size: PixelSize = PIXEL_SIZE,
        format: ColorFormat = FORMAT,
    }
}

view! {
    /// Decoded FRAMEBUFFER_DIM (0x11E).
    pub struct FramebufferDim from framebuffer_dim {
        width: u16 = WIDTH,
        height_minus_1: u16 = HEIGHT,
        flip_bit: bool = FLIP,
    }
}

impl FramebufferDim {
    /// Height in pixels (stored value + 1).
    pub const fn height(&self) -> u32 {
        self.height_minus_1 as u32 + 1
    }
}

view! {
    /// Decoded GAS_LIGHT_XY (0x120).
    pub struct GasLightXy from gas_light_xy {
        min: u8 = MIN,
        max: u8 = MAX,
        attenuation: u8 = ATTENUATION,
    }
}

view! {
    /// Decoded GAS_LIGHT_Z (0x121).
    pub struct GasLightZ from gas_light_z {
        min: u8 = MIN,
        max: u8 = MAX,
        attenuation: u8 = ATTENUATION,
    }
}

view! {
    /// Decoded GAS_LIGHT_Z_COLOR (0x122).
    pub struct GasLightZColor from gas_light_z_color {
        los_effect: u8 = LOS_EFFECT,
        lut_input: GasColorLutInput = LUT_INPUT,
    }
}

view! {
    /// Decoded GAS_DELTAZ_DEPTH (0x126).
    pub struct GasDeltaZDepth from gas_deltaz_depth {
        delta_z_raw: u32 = DELTA_Z,
        depth_func: GasDepthFunc = DEPTH_FUNC,
    }
}

view! {
    /// Decoded FRAGOP_SHADOW (0x130).
    pub struct FragOpShadow from fragop_shadow {
        constant: F16 = CONSTANT,
        linear: F16 = LINEAR,
    }
}

impl Regs<'_> {
    /// COLOR_OPERATION (0x100).
    #[inline]
    pub fn color_operation(&self) -> ColorOperation {
        self.view(ids::COLOR_OPERATION)
    }

    /// BLEND_FUNC (0x101).
    #[inline]
    pub fn blend_func(&self) -> BlendFunc {
        self.view(ids::BLEND_FUNC)
    }

    /// LOGIC_OP (0x102).
    #[inline]
    pub fn logic_op(&self) -> LogicOp {
        LogicOp::from_raw(self.field(ids::LOGIC_OP, &logic_op::OP))
    }

    /// BLEND_COLOR (0x103).
    #[inline]
    pub fn blend_color(&self) -> Rgba8 {
        Rgba8::from_word(self.raw(ids::BLEND_COLOR))
    }

    /// FRAGOP_ALPHA_TEST (0x104).
    #[inline]
    pub fn alpha_test(&self) -> AlphaTest {
        self.view(ids::FRAGOP_ALPHA_TEST)
    }

    /// STENCIL_TEST (0x105).
    #[inline]
    pub fn stencil_test(&self) -> StencilTest {
        self.view(ids::STENCIL_TEST)
    }

    /// STENCIL_OP (0x106).
    #[inline]
    pub fn stencil_op(&self) -> StencilOps {
        self.view(ids::STENCIL_OP)
    }

    /// DEPTH_COLOR_MASK (0x107).
    #[inline]
    pub fn depth_color_mask(&self) -> DepthColorMask {
        self.view(ids::DEPTH_COLOR_MASK)
    }

    /// DEPTH_COLOR_MASK (0x107) bits 4-6: the depth compare function.
    #[inline]
    pub fn depth_func(&self) -> CompareFunc {
        CompareFunc::from_raw(self.field(ids::DEPTH_COLOR_MASK, &depth_color_mask::DEPTH_FUNC))
    }

    /// COLORBUFFER_READ (0x112) bits 0-3 (0 disabled, 0xF enabled).
    #[inline]
    pub fn colorbuffer_read(&self) -> u32 {
        self.field(ids::COLORBUFFER_READ, &colorbuffer_access::ENABLE)
    }

    /// COLORBUFFER_WRITE (0x113) bits 0-3 (0 disabled, 0xF enabled).
    #[inline]
    pub fn colorbuffer_write(&self) -> u32 {
        self.field(ids::COLORBUFFER_WRITE, &colorbuffer_access::ENABLE)
    }

    /// DEPTHBUFFER_READ (0x114).
    #[inline]
    pub fn depthbuffer_read(&self) -> DepthStencilAccess {
        self.view(ids::DEPTHBUFFER_READ)
    }

    /// DEPTHBUFFER_WRITE (0x115).
    #[inline]
    pub fn depthbuffer_write(&self) -> DepthStencilAccess {
        self.view(ids::DEPTHBUFFER_WRITE)
    }

    /// DEPTHBUFFER_FORMAT (0x116).
    #[inline]
    pub fn depth_format(&self) -> DepthFormat {
        DepthFormat::from_raw(self.field(ids::DEPTHBUFFER_FORMAT, &depthbuffer_format::FORMAT))
    }

    /// COLORBUFFER_FORMAT (0x117).
    #[inline]
    pub fn colorbuffer_format(&self) -> ColorBufferFormat {
        self.view(ids::COLORBUFFER_FORMAT)
    }

    /// EARLYDEPTH_TEST2 (0x118) bit 0.
    #[inline]
    pub fn early_depth_test2(&self) -> bool {
        self.field(ids::EARLYDEPTH_TEST2, &earlydepth_test2::ENABLE) != 0
    }

    /// FRAMEBUFFER_BLOCK32 (0x11B).
    #[inline]
    pub fn framebuffer_block_mode(&self) -> BlockMode {
        BlockMode::from_raw(self.field(ids::FRAMEBUFFER_BLOCK32, &framebuffer_block32::MODE))
    }

    /// DEPTHBUFFER_LOC (0x11C): depth buffer physical address.
    #[inline]
    pub fn depthbuffer_addr(&self) -> PhysAddr {
        PhysAddr(self.field(ids::DEPTHBUFFER_LOC, &buffer_loc::ADDR) << 3)
    }

    /// COLORBUFFER_LOC (0x11D): colour buffer physical address.
    #[inline]
    pub fn colorbuffer_addr(&self) -> PhysAddr {
        PhysAddr(self.field(ids::COLORBUFFER_LOC, &buffer_loc::ADDR) << 3)
    }

    /// FRAMEBUFFER_DIM (0x11E).
    #[inline]
    pub fn framebuffer_dim(&self) -> FramebufferDim {
        self.view(ids::FRAMEBUFFER_DIM)
    }

    /// GAS_LIGHT_XY (0x120).
    #[inline]
    pub fn gas_light_xy(&self) -> GasLightXy {
        self.view(ids::GAS_LIGHT_XY)
    }

    /// GAS_LIGHT_Z (0x121).
    #[inline]
    pub fn gas_light_z(&self) -> GasLightZ {
        self.view(ids::GAS_LIGHT_Z)
    }

    /// GAS_LIGHT_Z_COLOR (0x122).
    #[inline]
    pub fn gas_light_z_color(&self) -> GasLightZColor {
        self.view(ids::GAS_LIGHT_Z_COLOR)
    }

    /// GAS_LUT_INDEX (0x123).
    #[inline]
    pub fn gas_lut_index(&self) -> u32 {
        self.field(ids::GAS_LUT_INDEX, &gas_lut_index::INDEX)
    }

    /// GAS_DELTAZ_DEPTH (0x126).
    #[inline]
    pub fn gas_deltaz_depth(&self) -> GasDeltaZDepth {
        self.view(ids::GAS_DELTAZ_DEPTH)
    }

    /// FRAGOP_SHADOW (0x130).
    #[inline]
    pub fn fragop_shadow(&self) -> FragOpShadow {
        self.view(ids::FRAGOP_SHADOW)
    }
}

/// Every catalogue group of this module.
pub(crate) const GROUPS: &[&[super::RegDef]] = &[TABLE, PORTS];
