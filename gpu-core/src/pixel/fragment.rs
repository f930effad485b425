//! Per-fragment operations and the pixel pipeline (`pica-raster.md` §0.4, §9).
//!
//! Stage: everything after rasterisation. Input: [`Fragment`]s from [`crate::pixel::raster`];
//! output: colour, depth and stencil values written into the render target in [`PhysMem`].
//!
//! Per fragment, in order (§0.4): texture units 0-2 (through a [`TextureSampler`]) and the
//! procedural texture, fragment lighting, the six combiner stages ([`crate::pixel::tev`]), then either
//! shadow-map rendering or: alpha test, fog, stencil test, depth test and depth write, the
//! stencil depth-pass operation, blending or logic op, the colour write mask and the colour write.
//! Fragment lighting, procedural textures, fog, gas and shadow rendering are implemented
//! elsewhere and plugged in through [`FragmentHooks`]; without a hook they are reported as
//! [`PipelineDiag::NotImplemented`] and the fragment continues with neutral values.
//!
//! Registers read (all in [`FragmentOps::from_regs`] and [`PipelineConfig::from_regs`], via the
//! typed views of [`pica_cmd::regs::Regs`]):
//! 0x061 EARLYDEPTH_FUNC, 0x062 EARLYDEPTH_TEST1, 0x06A EARLYDEPTH_DATA, 0x080 TEXUNIT_CONFIG
//! (unit enables), 0x08F LIGHTING_ENABLE0, 0x0E0 fog mode bits 0-2, 0x100 COLOR_OPERATION,
//! 0x101 BLEND_FUNC, 0x102 LOGIC_OP, 0x103 BLEND_COLOR, 0x104 FRAGOP_ALPHA_TEST,
//! 0x105 STENCIL_TEST, 0x106 STENCIL_OP, 0x107 DEPTH_COLOR_MASK, 0x118 EARLYDEPTH_TEST2, plus the
//! registers of [`RasterConfig`], [`TevConfig`] and [`FramebufferConfig`].
//!
//! All arithmetic is integer on u8 channels exactly as `pica-raster.md` §9 gives it (Citra's
//! software rasteriser): blend products are divided by 255 with truncation and clamped.
//!
//! Entry points: [`PixelPipeline::for_draw_cached`] (what the command processor calls once per
//! draw, with a [`TextureCache`] kept across draws), then [`PixelPipeline::draw_triangle`] per
//! triangle; [`draw_triangle`] is a one-shot convenience. Colour and depth are accessed through
//! one-tile write-back caches ([`crate::pixel::framebuffer::TileCache`]) flushed after every triangle.
//! Nothing is allocated per triangle or per pixel.
//!
//! **Early depth** (regs 0x061-0x063, 0x06A, 0x118) is decoded into [`EarlyDepth`] for display
//! but not applied: it is a hierarchical early rejection whose visible result equals the late
//! depth test in normal use, and no source documents a visible difference (§9.5; Citra and
//! Panda3DS do not emulate it either). UNVERIFIED.

use crate::debug::{DebugBuffers, DiagKind, Diagnostic};
use crate::memory::PhysMem;
use crate::pixel::color::{ColorFormat, DepthFormat, Rgba};
use crate::pixel::framebuffer::{BufferKey, FramebufferConfig, TileCache};
use crate::pixel::isa;
use crate::pixel::raster::{
    FRAGMENT_BATCH, Fragment, RasterConfig, RowBands, TriangleOutcome, rasterize_triangle,
    rasterize_triangle_batched, rasterize_triangle_reference,
};
use crate::pixel::tev::{BatchTable, TevConfig, TevIssue, TevProgram, TevSolo, TevSource};
use crate::pixel::texture::TextureError;

pub mod parallel;
pub mod probe;
pub mod specialized;
pub mod textures;
pub mod timing;
use crate::vertex::ScreenVertex;
use pica_cmd::regs::Regs;
use pica_cmd::regs::framebuffer::BlendMode;
use probe::{Recorder, Soloed};
pub use specialized::{ColorStage, PixelPath};
pub use textures::{NoTextures, TextureCache, TextureSampler, TextureUnits};
pub use timing::PixelTimer;
// The hooks are defined next to their implementation; re-exported here, where they are called.
pub use crate::pixel::stages::{FragmentHooks, lighting_enabled};

/// A comparison function (alpha, stencil, depth and early-depth tests; 3-bit field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum CompareFunc {
    /// 0: never passes.
    Never,
    /// 1: always passes.
    Always,
    /// 2: `a == b`.
    Equal,
    /// 3: `a != b`.
    NotEqual,
    /// 4: `a < b`.
    Less,
    /// 5: `a <= b`.
    LessEqual,
    /// 6: `a > b`.
    Greater,
    /// 7: `a >= b`.
    GreaterEqual,
}

impl CompareFunc {
    /// Decodes a 3-bit function field.
    pub const fn from_bits(v: u32) -> Self {
        match v & 7 {
            0 => Self::Never,
            1 => Self::Always,
            2 => Self::Equal,
            3 => Self::NotEqual,
            4 => Self::Less,
            5 => Self::LessEqual,
            6 => Self::Greater,
            _ => Self::GreaterEqual,
        }
    }

    /// Evaluates `a OP b`.
    #[inline]
    pub fn test<T: Ord>(self, a: T, b: T) -> bool {
        match self {
            Self::Never => false,
            Self::Always => true,
            Self::Equal => a == b,
            Self::NotEqual => a != b,
            Self::Less => a < b,
            Self::LessEqual => a <= b,
            Self::Greater => a > b,
            Self::GreaterEqual => a >= b,
        }
    }
}

/// A stencil operation (reg 0x106, 3-bit fields; all 8 defined).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum StencilOp {
    /// 0: keep the stored value.
    Keep,
    /// 1: 0.
    Zero,
    /// 2: the reference value (not masked by the input mask).
    Replace,
    /// 3: +1, saturating at 255.
    Increment,
    /// 4: −1, saturating at 0.
    Decrement,
    /// 5: bitwise NOT.
    Invert,
    /// 6: +1, wrapping.
    IncrementWrap,
    /// 7: −1, wrapping.
    DecrementWrap,
}

impl StencilOp {
    /// Decodes a 3-bit operation field.
    pub const fn from_bits(v: u32) -> Self {
        match v & 7 {
            0 => Self::Keep,
            1 => Self::Zero,
            2 => Self::Replace,
            3 => Self::Increment,
            4 => Self::Decrement,
            5 => Self::Invert,
            6 => Self::IncrementWrap,
            _ => Self::DecrementWrap,
        }
    }

    /// The new stencil value (before the write mask).
    #[inline]
    pub const fn apply(self, old: u8, reference: u8) -> u8 {
        match self {
            Self::Keep => old,
            Self::Zero => 0,
            Self::Replace => reference,
            Self::Increment => old.saturating_add(1),
            Self::Decrement => old.saturating_sub(1),
            Self::Invert => !old,
            Self::IncrementWrap => old.wrapping_add(1),
            Self::DecrementWrap => old.wrapping_sub(1),
        }
    }
}

/// A blend equation (reg 0x101 bits 0-2 RGB, 8-10 alpha).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum BlendEquation {
    /// 0: `(s·sf + d·df) / 255`.
    Add,
    /// 1: `(s·sf − d·df) / 255`.
    Subtract,
    /// 2: `(d·df − s·sf) / 255`.
    ReverseSubtract,
    /// 3: `min(s·sf, d·df) / 255`. HW: hardware fact FO-5 (Subv's gpu_blend_factors test,
    /// Citra issue #2684 / PR #6925): the factors apply first, unlike OpenGL.
    Min,
    /// 4: `max(s·sf, d·df) / 255` (FO-5, as [`BlendEquation::Min`]).
    Max,
    /// 5-7: behave as [`BlendEquation::Add`] on hardware according to \[3DB-I\] (Citra leaves them
    /// unimplemented).
    Reserved(u8),
}

impl BlendEquation {
    /// Decodes a 3-bit equation field.
    pub const fn from_bits(v: u32) -> Self {
        match v & 7 {
            0 => Self::Add,
            1 => Self::Subtract,
            2 => Self::ReverseSubtract,
            3 => Self::Min,
            4 => Self::Max,
            n => Self::Reserved(n as u8),
        }
    }
}

/// A blend factor (reg 0x101, 4-bit fields at bits 16/20/24/28).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum BlendFactor {
    /// 0: 0.
    Zero,
    /// 1: 255 (1.0).
    One,
    /// 2: source colour (per channel).
    SourceColor,
    /// 3: 255 − source colour.
    OneMinusSourceColor,
    /// 4: destination colour.
    DestColor,
    /// 5: 255 − destination colour.
    OneMinusDestColor,
    /// 6: source alpha.
    SourceAlpha,
    /// 7: 255 − source alpha.
    OneMinusSourceAlpha,
    /// 8: destination alpha.
    DestAlpha,
    /// 9: 255 − destination alpha.
    OneMinusDestAlpha,
    /// 10: constant colour (BLEND_COLOR).
    ConstantColor,
    /// 11: 255 − constant colour.
    OneMinusConstantColor,
    /// 12: constant alpha.
    ConstantAlpha,
    /// 13: 255 − constant alpha.
    OneMinusConstantAlpha,
    /// 14: RGB: min(source alpha, 255 − destination alpha); alpha: 255.
    SourceAlphaSaturate,
    /// 15: undocumented. UNVERIFIED: treated as [`BlendFactor::One`] (Panda3DS).
    Reserved15,
}

impl BlendFactor {
    /// Decodes a 4-bit factor field.
    pub const fn from_bits(v: u32) -> Self {
        match v & 0xF {
            0 => Self::Zero,
            1 => Self::One,
            2 => Self::SourceColor,
            3 => Self::OneMinusSourceColor,
            4 => Self::DestColor,
            5 => Self::OneMinusDestColor,
            6 => Self::SourceAlpha,
            7 => Self::OneMinusSourceAlpha,
            8 => Self::DestAlpha,
            9 => Self::OneMinusDestAlpha,
            10 => Self::ConstantColor,
            11 => Self::OneMinusConstantColor,
            12 => Self::ConstantAlpha,
            13 => Self::OneMinusConstantAlpha,
            14 => Self::SourceAlphaSaturate,
            _ => Self::Reserved15,
        }
    }

    /// The factor for channel `ch` (0-3), an unsigned 0.8 value.
    #[inline]
    pub fn value(self, ch: usize, src: Rgba, dst: Rgba, constant: Rgba) -> u32 {
        let v = match self {
            Self::Zero => 0,
            Self::One | Self::Reserved15 => 255,
            Self::SourceColor => src[ch],
            Self::OneMinusSourceColor => 255 - src[ch],
            Self::DestColor => dst[ch],
            Self::OneMinusDestColor => 255 - dst[ch],
            Self::SourceAlpha => src[3],
            Self::OneMinusSourceAlpha => 255 - src[3],
            Self::DestAlpha => dst[3],
            Self::OneMinusDestAlpha => 255 - dst[3],
            Self::ConstantColor => constant[ch],
            Self::OneMinusConstantColor => 255 - constant[ch],
            Self::ConstantAlpha => constant[3],
            Self::OneMinusConstantAlpha => 255 - constant[3],
            Self::SourceAlphaSaturate => {
                if ch == 3 {
                    255
                } else {
                    src[3].min(255 - dst[3])
                }
            }
        };
        u32::from(v)
    }
}

/// A logic operation (reg 0x102 bits 0-3; all 16 defined), applied per 8-bit channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum LogicOp {
    /// 0: 0.
    Clear,
    /// 1: s & d.
    And,
    /// 2: s & !d.
    AndReverse,
    /// 3: s.
    Copy,
    /// 4: 255.
    Set,
    /// 5: !s.
    CopyInverted,
    /// 6: d.
    NoOp,
    /// 7: !d.
    Invert,
    /// 8: !(s & d).
    Nand,
    /// 9: s | d.
    Or,
    /// 10: !(s | d).
    Nor,
    /// 11: s ^ d.
    Xor,
    /// 12: !(s ^ d).
    Equiv,
    /// 13: !s & d.
    AndInverted,
    /// 14: s | !d.
    OrReverse,
    /// 15: !s | d.
    OrInverted,
}

impl LogicOp {
    /// Decodes the 4-bit field.
    pub const fn from_bits(v: u32) -> Self {
        match v & 0xF {
            0 => Self::Clear,
            1 => Self::And,
            2 => Self::AndReverse,
            3 => Self::Copy,
            4 => Self::Set,
            5 => Self::CopyInverted,
            6 => Self::NoOp,
            7 => Self::Invert,
            8 => Self::Nand,
            9 => Self::Or,
            10 => Self::Nor,
            11 => Self::Xor,
            12 => Self::Equiv,
            13 => Self::AndInverted,
            14 => Self::OrReverse,
            _ => Self::OrInverted,
        }
    }

    /// Applies the operation to one channel.
    #[inline]
    pub const fn apply(self, s: u8, d: u8) -> u8 {
        match self {
            Self::Clear => 0,
            Self::And => s & d,
            Self::AndReverse => s & !d,
            Self::Copy => s,
            Self::Set => 255,
            Self::CopyInverted => !s,
            Self::NoOp => d,
            Self::Invert => !d,
            Self::Nand => !(s & d),
            Self::Or => s | d,
            Self::Nor => !(s | d),
            Self::Xor => s ^ d,
            Self::Equiv => !(s ^ d),
            Self::AndInverted => !s & d,
            Self::OrReverse => s | !d,
            Self::OrInverted => !s | d,
        }
    }
}

/// Blending parameters (regs 0x101 BLEND_FUNC, 0x103 BLEND_COLOR).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Blend {
    /// RGB equation (bits 0-2).
    pub rgb_eq: BlendEquation,
    /// Alpha equation (bits 8-10).
    pub alpha_eq: BlendEquation,
    /// RGB source factor (bits 16-19).
    pub rgb_src: BlendFactor,
    /// RGB destination factor (bits 20-23).
    pub rgb_dst: BlendFactor,
    /// Alpha source factor (bits 24-27).
    pub alpha_src: BlendFactor,
    /// Alpha destination factor (bits 28-31).
    pub alpha_dst: BlendFactor,
    /// Constant colour (0x103: R bits 0-7, G 8-15, B 16-23, A 24-31, unsigned 0.8).
    pub color: Rgba,
}

impl Blend {
    /// Decodes BLEND_FUNC and BLEND_COLOR.
    pub const fn from_words(func: u32, color: u32) -> Self {
        Blend {
            rgb_eq: BlendEquation::from_bits(func),
            alpha_eq: BlendEquation::from_bits(func >> 8),
            rgb_src: BlendFactor::from_bits(func >> 16),
            rgb_dst: BlendFactor::from_bits(func >> 20),
            alpha_src: BlendFactor::from_bits(func >> 24),
            alpha_dst: BlendFactor::from_bits(func >> 28),
            color: color.to_le_bytes(),
        }
    }

    /// Blends source `src` (combiner output) over destination `dst` (decoded framebuffer pixel).
    #[inline]
    pub fn apply(&self, src: Rgba, dst: Rgba) -> Rgba {
        let mut out = [0u8; 4];
        for (ch, o) in out.iter_mut().enumerate() {
            let (eq, sf, df) = if ch < 3 {
                (self.rgb_eq, self.rgb_src, self.rgb_dst)
            } else {
                (self.alpha_eq, self.alpha_src, self.alpha_dst)
            };
            let s = u32::from(src[ch]);
            let d = u32::from(dst[ch]);
            // Products are at most 255·255, sums at most 2·255·255: no overflow in i32.
            let sp = (s * sf.value(ch, src, dst, self.color)) as i32;
            let dp = (d * df.value(ch, src, dst, self.color)) as i32;
            let r = match eq {
                BlendEquation::Add | BlendEquation::Reserved(_) => (sp + dp) / 255,
                // `/` truncates toward zero, then the clamp removes negatives (as Citra).
                BlendEquation::Subtract => (sp - dp) / 255,
                BlendEquation::ReverseSubtract => (dp - sp) / 255,
                // HW: FO-5: MIN/MAX compare the products (a MAX with factors Zero/One keeps
                // the destination: libstarlight's "knockout").
                BlendEquation::Min => sp.min(dp) / 255,
                BlendEquation::Max => sp.max(dp) / 255,
            };
            *o = r.clamp(0, 255) as u8;
        }
        out
    }
}

/// What the colour stage does (COLOR_OPERATION 0x100 bit 8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ColorOutput {
    /// Bit 8 = 1: blending.
    Blend(Blend),
    /// Bit 8 = 0: a logic operation.
    Logic(LogicOp),
}

/// Fragment operation mode (COLOR_OPERATION 0x100 bits 0-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum FragmentMode {
    /// 0: the normal pipeline.
    Default,
    /// 1: gas rendering (implemented elsewhere, see [`FragmentHooks::gas_render`]).
    Gas,
    /// 2: undocumented. UNVERIFIED: treated as [`FragmentMode::Default`] and reported.
    Reserved2,
    /// 3: shadow-map rendering (see [`FragmentHooks::shadow`]).
    Shadow,
}

impl FragmentMode {
    /// Decodes the 2-bit field.
    pub const fn from_bits(v: u32) -> Self {
        match v & 3 {
            0 => Self::Default,
            1 => Self::Gas,
            2 => Self::Reserved2,
            _ => Self::Shadow,
        }
    }
}

/// Fog mode (TEXENV_UPDATE_BUFFER 0x0E0 bits 0-2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum FogMode {
    /// 0: no fog.
    Off,
    /// 5: fog.
    Fog,
    /// 7: gas.
    Gas,
    /// 1-4, 6: undocumented. UNVERIFIED: treated as off (Citra does the same) and reported.
    Other(u8),
}

impl FogMode {
    /// Decodes the 3-bit field.
    pub const fn from_bits(v: u32) -> Self {
        match v & 7 {
            0 => Self::Off,
            5 => Self::Fog,
            7 => Self::Gas,
            n => Self::Other(n as u8),
        }
    }
}

/// Alpha test (reg 0x104 FRAGOP_ALPHA_TEST).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct AlphaTest {
    /// Bit 0.
    pub enabled: bool,
    /// Bits 4-6: passes if `alpha OP reference`.
    pub func: CompareFunc,
    /// Bits 8-15: reference, unsigned 0.8.
    pub reference: u8,
}

/// How the stencil reference value is compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StencilSignedness {
    /// Unsigned 8-bit comparisons (Citra).
    Unsigned,
    /// Reference and stored value as signed 8-bit (3dbrew calls the reference "signed"; Panda).
    Signed,
}

/// The stencil comparison in use.
///
/// UNVERIFIED (`pica-raster.md` §13.2): Citra compares unsigned; Panda3DS and 3dbrew treat the
/// reference as signed. Only the ordering functions (<, ≤, >, ≥) differ, and only when bit 7 of
/// either masked value is set. We follow Citra, whose stencil path matches games' behaviour.
pub const STENCIL_SIGNEDNESS: StencilSignedness = StencilSignedness::Unsigned;

/// Stencil test (regs 0x105 STENCIL_TEST, 0x106 STENCIL_OP).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct StencilTest {
    /// 0x105 bit 0 (active only with a D24S8 depth buffer).
    pub enabled: bool,
    /// 0x105 bits 4-6: passes if `(reference & input_mask) OP (stored & input_mask)`.
    pub func: CompareFunc,
    /// 0x105 bits 8-15: which stencil bits a stencil operation may change.
    pub write_mask: u8,
    /// 0x105 bits 16-23: the reference value (8-bit, see [`STENCIL_SIGNEDNESS`]).
    pub reference: u8,
    /// 0x105 bits 24-31: the mask applied to both sides of the comparison.
    pub input_mask: u8,
    /// 0x106 bits 0-2: operation when the stencil test fails.
    pub fail: StencilOp,
    /// 0x106 bits 4-6: operation when the stencil test passes and the depth test fails.
    pub depth_fail: StencilOp,
    /// 0x106 bits 8-10: operation when both pass (also when the depth test is disabled).
    pub depth_pass: StencilOp,
}

impl StencilTest {
    /// True if the stencil test passes against stored value `stored`.
    #[inline]
    pub fn passes(&self, stored: u8) -> bool {
        let r = self.reference & self.input_mask;
        let d = stored & self.input_mask;
        match STENCIL_SIGNEDNESS {
            StencilSignedness::Unsigned => self.func.test(r, d),
            StencilSignedness::Signed => self.func.test(r as i8, d as i8),
        }
    }

    /// The stencil value after `op`, with the write mask applied.
    #[inline]
    pub fn update(&self, op: StencilOp, old: u8) -> u8 {
        let new = op.apply(old, self.reference);
        (new & self.write_mask) | (old & !self.write_mask)
    }
}

/// Depth test and colour/depth write masks (reg 0x107 DEPTH_COLOR_MASK).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct DepthTest {
    /// Bit 0: depth test enabled. When clear the test behaves as "always" and depth is still
    /// written if [`DepthTest::write`] is set (HW: \[3DB-I\], `pica-raster.md` §9.5).
    pub enabled: bool,
    /// Bits 4-6: passes if `fragment OP stored`.
    pub func: CompareFunc,
    /// Bit 12: depth write enable.
    pub write: bool,
}

/// Early depth configuration (decoded for display only, see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct EarlyDepth {
    /// 0x062 bit 0 (EARLYDEPTH_TEST1) and 0x118 bit 0 (EARLYDEPTH_TEST2).
    pub enabled: [bool; 2],
    /// 0x061 bits 0-1: 0 ≥, 1 >, 2 ≤, 3 <.
    pub func: u8,
    /// 0x06A bits 0-23: clear value (unsigned 24-bit).
    pub clear_value: u32,
}

/// The per-fragment operations of a draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct FragmentOps {
    /// COLOR_OPERATION bits 0-1.
    pub mode: FragmentMode,
    /// Fog mode (0x0E0 bits 0-2).
    pub fog: FogMode,
    /// Alpha test.
    pub alpha_test: AlphaTest,
    /// Stencil test.
    pub stencil: StencilTest,
    /// Depth test.
    pub depth: DepthTest,
    /// Blend or logic op.
    pub output: ColorOutput,
    /// Colour write mask R, G, B, A (0x107 bits 8, 9, 10, 11).
    pub color_mask: [bool; 4],
    /// Early depth (not applied).
    pub early_depth: EarlyDepth,
}

impl FragmentOps {
    /// Decodes the fragment-operation registers (see the module doc) through the catalogue's
    /// typed views.
    pub fn from_regs(regs: &[u32; 0x300]) -> Self {
        let r = Regs::new(regs);
        let cop = r.color_operation();
        let at = r.alpha_test();
        let st = r.stencil_test();
        let so = r.stencil_op();
        let dc = r.depth_color_mask();
        let bf = r.blend_func();
        FragmentOps {
            mode: FragmentMode::from_bits(cop.frag_op_mode.raw()),
            fog: FogMode::from_bits(r.texenv_update_buffer().fog_mode.raw()),
            alpha_test: AlphaTest {
                enabled: at.enable,
                func: CompareFunc::from_bits(at.func.raw()),
                reference: at.reference,
            },
            stencil: StencilTest {
                enabled: st.enable,
                func: CompareFunc::from_bits(st.func.raw()),
                write_mask: st.write_mask,
                reference: st.reference,
                input_mask: st.input_mask,
                fail: StencilOp::from_bits(so.fail.raw()),
                depth_fail: StencilOp::from_bits(so.z_fail.raw()),
                depth_pass: StencilOp::from_bits(so.z_pass.raw()),
            },
            depth: DepthTest {
                enabled: dc.depth_test,
                func: CompareFunc::from_bits(dc.depth_func.raw()),
                write: dc.depth_write,
            },
            output: if cop.blend_mode == BlendMode::Blend {
                ColorOutput::Blend(Blend {
                    rgb_eq: BlendEquation::from_bits(bf.rgb_equation.raw()),
                    alpha_eq: BlendEquation::from_bits(bf.alpha_equation.raw()),
                    rgb_src: BlendFactor::from_bits(bf.rgb_src.raw()),
                    rgb_dst: BlendFactor::from_bits(bf.rgb_dst.raw()),
                    alpha_src: BlendFactor::from_bits(bf.alpha_src.raw()),
                    alpha_dst: BlendFactor::from_bits(bf.alpha_dst.raw()),
                    color: r.blend_color().to_word().to_le_bytes(),
                })
            } else {
                ColorOutput::Logic(LogicOp::from_bits(r.logic_op().raw()))
            },
            color_mask: [dc.red_write, dc.green_write, dc.blue_write, dc.alpha_write],
            early_depth: EarlyDepth {
                enabled: [r.early_depth_test1(), r.early_depth_test2()],
                func: (r.early_depth_func().raw() & 3) as u8,
                clear_value: r.early_depth_data() & 0xFF_FFFF,
            },
        }
    }
}

/// A pipeline feature implemented outside this module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Feature {
    /// Texture units 0-2 (the sampler).
    Textures,
    /// Texture unit 3 (procedural texture).
    ProceduralTexture,
    /// Fragment lighting (primary/secondary fragment colours).
    Lighting,
    /// Fog (fog mode 5).
    Fog,
    /// Gas (fog mode 7 or fragment mode 1).
    Gas,
    /// Shadow-map rendering (fragment mode 3).
    ShadowRendering,
}

impl std::fmt::Display for Feature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Feature::Textures => "texturing",
            Feature::ProceduralTexture => "the procedural texture",
            Feature::Lighting => "fragment lighting",
            Feature::Fog => "fog",
            Feature::Gas => "gas rendering",
            Feature::ShadowRendering => "shadow-map rendering",
        })
    }
}

/// Something about a draw's pixel processing that the user should know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PipelineDiag {
    /// A feature the draw uses has no implementation plugged in; neutral values were used
    /// (texture/lighting colours 0, fog and gas skipped, shadow and gas fragments discarded).
    #[error("{0} is not implemented in this pipeline (neutral values used)")]
    NotImplemented(Feature),
    /// A texture unit read by the combiners cannot be sampled (invalid format, zero size,
    /// data outside memory); it reads as (0, 0, 0, 0).
    #[error("texture unit {unit} cannot be sampled (reads 0): {error}")]
    Texture {
        /// Unit 0-2.
        unit: u8,
        /// Why.
        error: TextureError,
    },
    /// The colour buffer format id is unknown (5-7): colour writes were skipped.
    #[error("unknown colour buffer format {0} (colour writes skipped)")]
    UnknownColorFormat(u32),
    /// The depth buffer format id is unknown (1): depth and stencil were skipped (tests pass).
    #[error("unknown depth buffer format {0} (depth and stencil skipped)")]
    UnknownDepthFormat(u32),
    /// A combiner configuration handled by a guess.
    #[error("{0}")]
    Tev(TevIssue),
    /// Blend equation 5-7 (treated as add).
    #[error("reserved blend equation {0} (treated as add)")]
    ReservedBlendEquation(u8),
    /// Blend factor 15 (treated as one).
    #[error("reserved blend factor 15 (treated as one)")]
    ReservedBlendFactor,
    /// Fragment mode 2 (treated as default).
    #[error("reserved fragment mode 2 (treated as default)")]
    ReservedFragmentMode,
    /// Fog mode 1-4 or 6 (treated as off).
    #[error("unknown fog mode {0} (fog off)")]
    UnknownFogMode(u8),
    /// Triangles with NaN, infinite or absurd window positions were skipped.
    #[error("{0} triangles with NaN, infinite or absurd window positions skipped")]
    InvalidTriangles(u64),
    /// Colour-buffer pixel accesses hit unmapped memory and were dropped.
    #[error(
        "{pixels} colour-buffer pixel accesses at unmapped memory (buffer {addr:#010x}) dropped"
    )]
    UnmappedColorBuffer {
        /// The colour buffer's physical address.
        addr: u32,
        /// Number of pixel accesses dropped.
        pixels: u64,
    },
    /// Depth-buffer pixel accesses hit unmapped memory and were dropped.
    #[error(
        "{pixels} depth-buffer pixel accesses at unmapped memory (buffer {addr:#010x}) dropped"
    )]
    UnmappedDepthBuffer {
        /// The depth buffer's physical address.
        addr: u32,
        /// Number of pixel accesses dropped.
        pixels: u64,
    },
}

impl PipelineDiag {
    /// Converts to the event log's [`Diagnostic`].
    pub fn to_diagnostic(&self, draw: Option<u64>) -> Diagnostic {
        let kind = match self {
            Self::UnmappedColorBuffer { addr, .. } | Self::UnmappedDepthBuffer { addr, .. } => {
                DiagKind::UnmappedWrite {
                    addr: *addr,
                    len: 0,
                }
            }
            Self::InvalidTriangles(_) => DiagKind::Other,
            Self::Texture {
                error: TextureError::Unmapped { addr, len },
                ..
            } => DiagKind::UnmappedRead {
                addr: *addr,
                len: *len,
            },
            _ => DiagKind::Unsupported,
        };
        Diagnostic {
            kind,
            draw,
            detail: format!("pixel pipeline: {self}"),
        }
    }
}

/// Counters of one draw's pixel processing.
///
/// The per-fragment cost counters ([`PixelStats::alpha_failed`], [`PixelStats::stencil_failed`],
/// [`PixelStats::depth_failed`], [`PixelStats::texels`]) are kept only while
/// [`PixelPipeline::set_costs`] is on (the default; the draw driver turns it off when no
/// observer wants costs, [`crate::debug::Observer::wants_costs`]) and stay 0 otherwise. The
/// other counters are kept in every mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PixelStats {
    /// Triangles rasterised (not culled, not degenerate).
    pub triangles_drawn: u64,
    /// Triangles removed by face culling.
    pub triangles_culled: u64,
    /// Fragments produced by the rasteriser.
    pub fragments: u64,
    /// Fragments discarded by the alpha test (a cost counter: 0 with costs off).
    pub alpha_failed: u64,
    /// Fragments discarded by the stencil test (a cost counter: 0 with costs off).
    pub stencil_failed: u64,
    /// Fragments discarded by the depth test (a cost counter: 0 with costs off).
    pub depth_failed: u64,
    /// Fragments that reached the colour write (whether or not colour writes are enabled).
    pub fragments_passed: u64,
    /// Texels read by texture units 0-2 ([`TextureSampler::sample_counted`]: 1 per nearest
    /// tap, 4 per bilinear tap, summed over the mip levels a lookup reads; a cost counter: 0
    /// with costs off).
    #[serde(default)]
    pub texels: u64,
}

/// Everything a draw's pixel processing needs, decoded once from the registers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PipelineConfig {
    /// Rasteriser.
    pub raster: RasterConfig,
    /// Combiners.
    pub tev: TevConfig,
    /// Fragment operations.
    pub ops: FragmentOps,
    /// Render target.
    pub fb: FramebufferConfig,
    /// Fragment lighting enabled ([`lighting_enabled`]).
    pub lighting: bool,
    /// Texture unit 3 (procedural texture) enabled (reg 0x080 bit 10).
    pub proctex: bool,
}

impl PipelineConfig {
    /// Decodes the configuration of a draw.
    pub fn from_regs(regs: &[u32; 0x300]) -> Self {
        PipelineConfig {
            raster: RasterConfig::from_regs(regs),
            tev: TevConfig::from_regs(regs),
            ops: FragmentOps::from_regs(regs),
            fb: FramebufferConfig::from_regs(regs),
            lighting: lighting_enabled(regs),
            proctex: Regs::new(regs).texunit_config().tex3_enable,
        }
    }
}

/// Which inputs the combiners actually read (so unused ones are never computed).
#[derive(Clone, Copy, Debug, Default)]
struct Needs {
    tex: [bool; 3],
    proctex: bool,
    lighting: bool,
}

/// The per-fragment decisions of the specialised path that depend only on the draw's state,
/// resolved once per triangle batch (see [`FragCtx::process_fast`]).
#[derive(Clone, Copy, Debug)]
struct FastPlan {
    /// The stencil/depth stage reads or writes the depth buffer (a depth format is known and a
    /// stencil test on a D24S8 buffer, the depth test or depth writes are on); otherwise it
    /// passes every fragment without touching memory.
    depth_stencil: bool,
    /// The colour format when the colour write can change memory (format known, colour
    /// writes allowed, some channel enabled); `None`: nothing is written.
    color: Option<ColorFormat>,
    /// The specialised blend / logic op and write mask.
    stage: ColorStage,
    /// [`TileCache::word_mask`] of the colour buffer's pixel size.
    color_word_mask: u32,
    /// Normal fragment mode (not shadow or gas rendering).
    default_mode: bool,
    /// RGBA8 colour buffer, alpha over on all channels, every channel written: the colour
    /// write of [`FragCtx::process_fast::<true>`].
    over_rgba8: bool,
    /// The colour buffer's tile-cache key ([`TileCache::pixel4_keyed`]).
    color_key: BufferKey,
    /// The depth buffer's tile-cache key.
    depth_key: BufferKey,
    /// Shade whole batches phase by phase ([`FragCtx::process_batch`]): normal fragment mode,
    /// and no colour buffer sharing bytes with a depth buffer the stencil/depth stage uses.
    /// The batch form runs the depth/stencil stage of a batch's fragments before their colour
    /// writes, which only gives the per-fragment order's bytes when the two tile caches never
    /// see each other's tiles; shadow and gas rendering stay on the per-fragment code.
    batch: bool,
}

/// The batch path's scratch ([`FragCtx::process_batch`]): the combiners' source table and
/// room for the survivors of early depth/stencil. A pipeline keeps one for the whole draw
/// (zeroed once when it is made, not per triangle): the table's contract (rows 7-12 zero, the
/// rows the combiners read written for every survivor before they are read, 13-15 scratch)
/// holds across triangles as across batches, as the rows written depend only on the draw's
/// [`Needs`]; `live` entries are written before they are read.
#[derive(Clone)]
pub(super) struct BatchScratch {
    table: BatchTable,
    live: [Fragment; FRAGMENT_BATCH],
}

impl BatchScratch {
    /// A zeroed scratch, on the heap (3 KB: the pipeline is moved by value).
    pub(super) fn boxed() -> Box<Self> {
        Box::new(BatchScratch {
            table: [[[0; 4]; FRAGMENT_BATCH]; 16],
            live: [Fragment::default(); FRAGMENT_BATCH],
        })
    }
}

/// The tile positions of a batch's pixels, for the batch accesses of a buffer through
/// [`TileCache::tile_keyed`]: per lane the tile's x and memory row (in 8×8 tiles) and the
/// pixel's Morton index in its tile. Lanes past the batch stay 0.
struct LaneTiles {
    /// The tile's x (low 32 bits) and memory tile row (high 32 bits): equal keys are equal
    /// tile positions.
    key: [u64; FRAGMENT_BATCH],
    mi: [u32; FRAGMENT_BATCH],
}

impl LaneTiles {
    /// The positions of `frags` (at most [`FRAGMENT_BATCH`]) in a buffer `h` rows high.
    #[inline(always)]
    fn new(frags: &[Fragment], h: u32) -> Self {
        let mut lt = LaneTiles {
            key: [0; FRAGMENT_BATCH],
            mi: [0; FRAGMENT_BATCH],
        };
        for (k, f) in frags.iter().take(FRAGMENT_BATCH).enumerate() {
            lt.key[k] = u64::from(f.x >> 3)
                | (u64::from(crate::pixel::tiling::flip_row(f.y, h) >> 3) << 32);
            // ok: a Morton index is at most 63.
            lt.mi[k] = TileCache::tile_index(f.x, f.y, h) as u32;
        }
        lt
    }

    /// The first run of `rest` (not 0): its lowest lane `k0` and the lanes of `rest` from
    /// `k0` up to the first one in another tile (one tile lookup serves them, in the order
    /// the per-pixel code visits them).
    #[inline(always)]
    fn next_run(&self, rest: u32) -> (usize, u32) {
        let k0 = rest.trailing_zeros() as usize;
        let key0 = self.key[k0 % FRAGMENT_BATCH];
        let mut same = 0u32;
        for (k, &key) in self.key.iter().enumerate() {
            same |= u32::from(key == key0) << k;
        }
        let other = rest & !same;
        let run = if other == 0 {
            rest
        } else {
            rest & ((1u32 << other.trailing_zeros()) - 1)
        };
        (k0, run)
    }

    /// Each lane's byte offset in its tile for pixels of `bpp` bytes.
    #[inline(always)]
    fn offsets(&self, bpp: usize) -> [usize; FRAGMENT_BATCH] {
        let mut off = [0usize; FRAGMENT_BATCH];
        for (o, &i) in off.iter_mut().zip(&self.mi) {
            *o = i as usize * bpp;
        }
        off
    }

    /// The lanes whose pixel is in mapped memory, from a tile's mapped-pixel mask.
    #[inline(always)]
    fn mapped_lanes(&self, mapped: u64) -> u32 {
        if mapped == u64::MAX {
            // The usual case: the whole tile is mapped.
            return lanes_below(FRAGMENT_BATCH);
        }
        let mut ok = 0u32;
        for (k, &i) in self.mi.iter().enumerate() {
            ok |= (((mapped >> i) & 1) as u32) << k;
        }
        ok
    }
}

// The batch masks are `u32` with a bit per lane and the batch hooks take 16 lanes.
const _: () = assert!(FRAGMENT_BATCH == 16);

/// The mask of lanes `0..n` of a batch (`n` ≤ [`FRAGMENT_BATCH`] = 16; larger counts as 16).
#[inline(always)]
const fn lanes_below(n: usize) -> u32 {
    if n >= FRAGMENT_BATCH {
        (1u32 << FRAGMENT_BATCH) - 1
    } else {
        (1u32 << n) - 1
    }
}

/// True if the stencil/depth stage of `cfg` reads or writes the depth buffer (see
/// [`FastPlan::depth_stencil`]).
fn depth_stencil_active(cfg: &PipelineConfig) -> bool {
    let ops = &cfg.ops;
    cfg.fb.depth_format.is_some_and(|df| {
        (ops.stencil.enabled && df == DepthFormat::D24S8) || ops.depth.enabled || ops.depth.write
    })
}

impl FastPlan {
    /// The plan of `cfg` on the specialised path (`stage` is the pipeline's colour stage).
    fn new(cfg: &PipelineConfig, stage: ColorStage, color_word_mask: u32) -> Self {
        let ops = &cfg.ops;
        let fb = &cfg.fb;
        let depth_stencil = depth_stencil_active(cfg);
        let color = fb
            .color_format
            .filter(|_| fb.color_write && ops.color_mask != [false; 4]);
        let default_mode = matches!(ops.mode, FragmentMode::Default | FragmentMode::Reserved2);
        let color_bpp = (32 - color_word_mask.leading_zeros()).div_ceil(8);
        let depth_bpp = fb.depth_format.map_or(4, |f| f.bytes_per_pixel() as u32);
        let overlap =
            depth_stencil && color.is_some() && parallel::buffers_overlap(fb, color_bpp, depth_bpp);
        FastPlan {
            depth_stencil,
            color,
            batch: default_mode && !overlap,
            stage,
            color_word_mask,
            over_rgba8: color == Some(ColorFormat::Rgba8) && stage.is_alpha_over_all_unmasked(),
            default_mode,
            color_key: BufferKey::new(fb, fb.color_addr),
            depth_key: BufferKey::new(fb, fb.depth_addr),
        }
    }
}

/// The pixel pipeline of one draw: configuration decoded once, tile caches, counters and
/// diagnostics. Build it with [`PixelPipeline::new`] at the start of a draw, feed every triangle
/// to [`PixelPipeline::draw_triangle`] (or `_with`), then read [`PixelPipeline::stats`] and
/// [`PixelPipeline::take_diagnostics`].
///
/// Memory is up to date after every `draw_triangle` call (the tile caches are flushed).
pub struct PixelPipeline<S: TextureSampler = NoTextures> {
    cfg: PipelineConfig,
    tev: TevProgram,
    sampler: S,
    needs: Needs,
    color_cache: TileCache,
    depth_cache: TileCache,
    stats: PixelStats,
    /// Keep the per-fragment cost counters ([`PixelPipeline::set_costs`]).
    costs: bool,
    diags: Vec<PipelineDiag>,
    /// Bit per [`Feature`] already reported as not implemented.
    reported: u32,
    invalid_triangles: u64,
    /// The specialised colour stage, or `None` on the [`PixelPath::Reference`] path.
    color_stage: Option<ColorStage>,
    /// Stage timing (benchmarks only).
    timer: Option<PixelTimer>,
    /// Pixel-history recording (see [`PixelPipeline::set_probe`]); `None` normally.
    probe: Option<Box<probe::ProbeState>>,
    /// The combiner solo (debugging), if set: see [`PixelPipeline::set_tev_solo`].
    solo: Option<SoloProgram>,
    /// [`FastPlan::new`] of the draw with [`PixelPipeline::color_stage`] (`None` with none),
    /// made once per draw (and again when the path or solo changes).
    plan: Option<FastPlan>,
    /// The batch path's scratch, kept across the draw's triangles; made by the first triangle
    /// drawn here (the shares of the parallel path have their own, so a draw whose pixels
    /// wait for a group never makes one).
    scratch: Option<Box<BatchScratch>>,
}

/// A [`TevSolo`] with the combiner program that computes the soloed stage's output.
#[derive(Clone, Copy, Debug)]
struct SoloProgram {
    solo: TevSolo,
    tev: TevProgram,
}

impl PixelPipeline<NoTextures> {
    /// A pipeline for the draw configured in `regs`, without a texture sampler (enabled
    /// texture units read as 0 and are reported).
    pub fn new(regs: &[u32; 0x300]) -> Self {
        let tc = Regs::new(regs).texunit_config();
        let enabled = [tc.tex0_enable, tc.tex1_enable, tc.tex2_enable];
        let mut p = Self::with_sampler(regs, NoTextures);
        // Report enabled units that are read but cannot be sampled.
        if (0..3).any(|u| enabled[u] && p.cfg.tev.reads(tex_source(u))) {
            p.not_implemented(Feature::Textures);
        }
        p
    }
}

impl PixelPipeline<TextureUnits> {
    /// The pipeline for a draw: decodes the registers and the textures the combiners read
    /// (from `mem`, as they are now). This is what the command processor calls at each draw.
    ///
    /// Decodes every texture anew; callers drawing many draws should keep a [`TextureCache`]
    /// and use [`PixelPipeline::for_draw_cached`].
    pub fn for_draw(mem: &PhysMem, regs: &[u32; 0x300]) -> Self {
        Self::for_draw_cached(mem, regs, &mut TextureCache::new(0))
    }

    /// As [`PixelPipeline::for_draw`], reusing decoded textures from `cache` (which keeps them
    /// for later draws).
    pub fn for_draw_cached(mem: &PhysMem, regs: &[u32; 0x300], cache: &mut TextureCache) -> Self {
        Self::for_draw_template(mem, regs, cache, &PipelineTemplate::from_regs(regs))
    }

    /// As [`PixelPipeline::for_draw_cached`], with the register-only part of the set-up
    /// already decoded: `template` must be [`PipelineTemplate::from_regs`] of registers whose
    /// [`PipelineTemplate::KEY`] words equal `regs`' (the command processor keeps recent
    /// templates and reuses them; the textures are still looked up for every draw).
    pub fn for_draw_template(
        mem: &PhysMem,
        regs: &[u32; 0x300],
        cache: &mut TextureCache,
        template: &PipelineTemplate,
    ) -> Self {
        let mut units = TextureUnits::from_regs_cached(mem, regs, template.wanted, cache);
        let errors = std::mem::take(&mut units.errors);
        let mut p = Self::with_template(regs, units, template);
        for (unit, error) in errors {
            p.diags.push(PipelineDiag::Texture { unit, error });
        }
        p
    }
}

/// The part of a draw's pixel-pipeline set-up that depends only on the registers
/// [`PipelineTemplate::KEY`] (not on memory): the decoded configuration, the combiner program,
/// the texture units the draw reads and the diagnostics the configuration alone gives.
/// Decoding it costs several thousand instructions per draw; the command processor keeps the
/// recent ones (`draw.rs`) so that draws with a recurring configuration decode it once.
#[derive(Clone, Debug)]
pub struct PipelineTemplate {
    cfg: PipelineConfig,
    tev: TevProgram,
    /// Texture units 0-3 that fragment lighting reads ([`lighting_texture_units`]).
    light_tex: [bool; 4],
    /// Texture units 0-2 the combiners or lighting read (decoded when enabled).
    wanted: [bool; 3],
    /// [`PixelPipeline`]'s configuration diagnostics, in order.
    diags: Vec<PipelineDiag>,
}

impl PipelineTemplate {
    /// The registers a template is decoded from: 0x040-0x1FF (rasteriser, texturing,
    /// combiners, fragment operations, framebuffer, lighting). A test checks that changing any
    /// other register never changes the template.
    pub const KEY: std::ops::Range<usize> = 0x040..0x200;

    /// Decodes the template of the draw configured in `regs`.
    pub fn from_regs(regs: &[u32; 0x300]) -> Self {
        let cfg = PipelineConfig::from_regs(regs);
        let light_tex = lighting_texture_units(regs, &cfg.tev);
        let wanted = [0, 1, 2].map(|u| cfg.tev.reads(tex_source(u)) || light_tex[u]);
        PipelineTemplate {
            tev: TevProgram::new(&cfg.tev),
            diags: static_diagnostics(&cfg),
            cfg,
            light_tex,
            wanted,
        }
    }
}

/// The diagnostics a pipeline configuration alone gives (unknown formats, combiner issues,
/// reserved blend and fragment-mode values), in the order [`PixelPipeline`] reports them.
fn static_diagnostics(cfg: &PipelineConfig) -> Vec<PipelineDiag> {
    let mut diags = Vec::new();
    if cfg.fb.color_format.is_none() && cfg.fb.color_write {
        diags.push(PipelineDiag::UnknownColorFormat(cfg.fb.color_format_id));
    }
    let uses_depth = cfg.ops.depth.enabled || cfg.ops.depth.write || cfg.ops.stencil.enabled;
    if cfg.fb.depth_format.is_none() && uses_depth {
        diags.push(PipelineDiag::UnknownDepthFormat(cfg.fb.depth_format_id));
    }
    for issue in cfg.tev.issues() {
        diags.push(PipelineDiag::Tev(issue));
    }
    if let ColorOutput::Blend(b) = cfg.ops.output {
        for eq in [b.rgb_eq, b.alpha_eq] {
            if let BlendEquation::Reserved(n) = eq {
                diags.push(PipelineDiag::ReservedBlendEquation(n));
            }
        }
        if [b.rgb_src, b.rgb_dst, b.alpha_src, b.alpha_dst].contains(&BlendFactor::Reserved15) {
            diags.push(PipelineDiag::ReservedBlendFactor);
        }
    }
    if cfg.ops.mode == FragmentMode::Reserved2 {
        diags.push(PipelineDiag::ReservedFragmentMode);
    }
    if let FogMode::Other(n) = cfg.ops.fog {
        diags.push(PipelineDiag::UnknownFogMode(n));
    }
    diags.dedup();
    diags
}

/// Texture units 0-3 that fragment lighting reads (bump/tangent map, shadow factor) when it
/// runs for this draw (enabled and read by the combiners), so they are sampled even if no
/// combiner reads them (see [`crate::pixel::stages::lighting::texture_units_read`]).
fn lighting_texture_units(regs: &[u32; 0x300], tev: &TevConfig) -> [bool; 4] {
    let used = lighting_enabled(regs)
        && (tev.reads(TevSource::FragmentPrimary) || tev.reads(TevSource::FragmentSecondary));
    if used {
        crate::pixel::stages::lighting::texture_units_read(regs)
    } else {
        [false; 4]
    }
}

/// True if of the texture coordinates only texcoord 0 (u, v) is read by this draw's fragment
/// stages ([`crate::pixel::raster::Varyings::texcoord0_only`]): units 1 and 2 unread, unit 0
/// (if read) a plain 2D texture (no texcoord0.w), the procedural texture (if read) on texcoord
/// 0, no fragment lighting, and the normal fragment mode with fog off or plain fog (the hooks of
/// shadow, gas and gas fog are not restricted to the values they read today).
fn texcoord0_only(regs: &[u32; 0x300], cfg: &PipelineConfig, needs: &Needs) -> bool {
    use crate::pixel::texture::config::{TextureConfig, TextureType};
    use pica_cmd::regs::texturing::Tex3Coords;
    !needs.tex[1]
        && !needs.tex[2]
        && !needs.lighting
        && (!needs.tex[0] || TextureConfig::from_regs(regs, 0).texture_type == TextureType::Tex2D)
        && (!needs.proctex || Regs::new(regs).texunit_config().tex3_coords == Tex3Coords::Texcoord0)
        && matches!(
            cfg.ops.mode,
            FragmentMode::Default | FragmentMode::Reserved2
        )
        && matches!(cfg.ops.fog, FogMode::Off | FogMode::Fog | FogMode::Other(_))
}

fn tex_source(unit: usize) -> TevSource {
    match unit {
        0 => TevSource::Texture0,
        1 => TevSource::Texture1,
        _ => TevSource::Texture2,
    }
}

impl<S: TextureSampler> PixelPipeline<S> {
    /// A pipeline for the draw configured in `regs` that samples textures with `sampler`.
    pub fn with_sampler(regs: &[u32; 0x300], sampler: S) -> Self {
        Self::with_template(regs, sampler, &PipelineTemplate::from_regs(regs))
    }

    /// As [`PixelPipeline::with_sampler`] with the register-only set-up decoded already
    /// (`template` decoded from registers whose [`PipelineTemplate::KEY`] words equal `regs`').
    fn with_template(regs: &[u32; 0x300], sampler: S, template: &PipelineTemplate) -> Self {
        let mut cfg = template.cfg;
        let tev = &cfg.tev;
        let light_tex = template.light_tex;
        let needs = Needs {
            tex: [0, 1, 2]
                .map(|u| sampler.enabled(u) && (tev.reads(tex_source(u)) || light_tex[u])),
            proctex: cfg.proctex && (tev.reads(TevSource::Texture3) || light_tex[3]),
            lighting: cfg.lighting
                && (tev.reads(TevSource::FragmentPrimary)
                    || tev.reads(TevSource::FragmentSecondary)),
        };
        cfg.raster.varyings.texcoords = needs.tex.iter().any(|&t| t) || needs.proctex;
        cfg.raster.varyings.texcoord_gradients = (needs.tex.iter().any(|&t| t)
            && sampler.needs_gradients())
            || (needs.proctex && crate::pixel::stages::proctex::needs_gradients(regs));
        cfg.raster.varyings.lighting = needs.lighting;
        cfg.raster.varyings.texcoord0_only = texcoord0_only(regs, &cfg, &needs);
        // The depth is read by the stencil/depth stage, fog, gas and shadow rendering only.
        cfg.raster.varyings.skip_depth =
            matches!(
                cfg.ops.mode,
                FragmentMode::Default | FragmentMode::Reserved2
            ) && matches!(cfg.ops.fog, FogMode::Off | FogMode::Other(_))
                && !depth_stencil_active(&cfg);

        let color_bpp = match cfg.ops.mode {
            // Shadow rendering treats the colour buffer as 4 bytes per pixel (§9.2).
            FragmentMode::Shadow => 4,
            _ => cfg
                .fb
                .color_format
                .map_or(4, |f| f.bytes_per_pixel() as u32),
        };
        let depth_bpp = cfg
            .fb
            .depth_format
            .map_or(4, |f| f.bytes_per_pixel() as u32);
        let color_stage = Some(ColorStage::new(cfg.ops.output, cfg.ops.color_mask));
        let color_cache = TileCache::new(color_bpp);
        let plan = color_stage.map(|s| FastPlan::new(&cfg, s, color_cache.word_mask()));
        PixelPipeline {
            tev: template.tev,
            cfg,
            sampler,
            needs,
            color_cache,
            depth_cache: TileCache::new(depth_bpp),
            stats: PixelStats::default(),
            costs: true,
            diags: template.diags.clone(),
            reported: 0,
            invalid_triangles: 0,
            color_stage,
            timer: None,
            solo: None,
            probe: None,
            plan,
            scratch: None,
        }
    }

    fn not_implemented(&mut self, f: Feature) {
        let bit = 1u32 << (f as u32);
        if self.reported & bit == 0 {
            self.reported |= bit;
            self.diags.push(PipelineDiag::NotImplemented(f));
        }
    }

    /// Selects the implementation of the per-fragment operations (default:
    /// [`PixelPath::Specialized`]); both give bit-identical results.
    pub fn set_path(&mut self, path: PixelPath) {
        self.sampler.set_path(path);
        self.color_stage = match path {
            PixelPath::Specialized => Some(ColorStage::new(
                self.cfg.ops.output,
                self.cfg.ops.color_mask,
            )),
            PixelPath::Reference => None,
        };
        self.refresh_plan();
    }

    /// Recomputes [`PixelPipeline::plan`] after the colour stage or the configuration
    /// changed.
    fn refresh_plan(&mut self) {
        self.plan = self
            .color_stage
            .map(|s| FastPlan::new(&self.cfg, s, self.color_cache.word_mask()));
    }

    /// Sets (or clears) a combiner solo for this draw: every fragment writes stage
    /// `solo.stage`'s output (see [`TevSolo`]) instead of the blended combiner output. A solo
    /// switches the pipeline to the [`PixelPath::Reference`] path (call this after
    /// [`PixelPipeline::set_path`]); clearing it does not switch back. Shadow-map and gas
    /// fragments ignore the solo. With a solo, [`PixelPipeline::config`] reports fog off and a
    /// replacing blend (how the value is written).
    pub fn set_tev_solo(&mut self, solo: Option<TevSolo>) {
        self.solo = solo.map(|solo| SoloProgram {
            solo,
            tev: TevProgram::new(&solo.config(&self.cfg.tev)),
        });
        if self.solo.is_some() {
            self.color_stage = None;
            // The soloed value is written as it is: no fog, and a blend that replaces
            // (`src·1 + dst·0`; the colour write mask still applies). The per-fragment code is
            // unchanged but for taking the value after the alpha test.
            self.cfg.ops.fog = FogMode::Off;
            self.cfg.ops.output = ColorOutput::Blend(Blend::from_words(0x0101_0000, 0));
        }
        self.refresh_plan();
    }

    /// True if this draw's fragments run the stencil and depth tests (with their writes and
    /// counters) before texturing, lighting and the combiners when drawn with `hooks`: on the
    /// specialised path, in the normal fragment mode, with the alpha test off, no gas fog, a
    /// stencil or depth test that can discard, and hooks that may be skipped
    /// ([`FragmentHooks::skippable`]). Then nothing before the tests can change their outcome
    /// or be observed, so the result is the same as running them in the hardware's order.
    pub fn early_depth<H: FragmentHooks>(&self, hooks: &H) -> bool {
        let ops = &self.cfg.ops;
        let Some(df) = self.cfg.fb.depth_format else {
            return false;
        };
        let stencil_on = ops.stencil.enabled && df == DepthFormat::D24S8;
        self.color_stage.is_some()
            && self.solo.is_none()
            && self.probe.is_none()
            && matches!(ops.mode, FragmentMode::Default | FragmentMode::Reserved2)
            && !ops.alpha_test.enabled
            && matches!(ops.fog, FogMode::Off | FogMode::Fog | FogMode::Other(_))
            && (stencil_on || ops.depth.enabled)
            && hooks.skippable()
    }

    /// Turns the per-fragment cost counters on or off (on by default; see [`PixelStats`]).
    /// Off, the specialised per-fragment routine is compiled without them, and early depth
    /// ([`PixelPipeline::early_depth`]) skips the texture lookups of the fragments it kills
    /// (they are run, colours dropped, only to count their texels while costs are on). Images,
    /// depth/stencil and the other counters are the same either way.
    pub fn set_costs(&mut self, on: bool) {
        self.costs = on;
    }

    /// True if the per-fragment cost counters are kept ([`PixelPipeline::set_costs`]).
    pub fn costs(&self) -> bool {
        self.costs
    }

    /// The combiner solo in use.
    pub fn tev_solo(&self) -> Option<TevSolo> {
        self.solo.map(|s| s.solo)
    }

    /// Starts timing the pipeline's stages (see [`PixelTimer`]); off by default.
    pub fn enable_timing(&mut self) {
        self.timer.get_or_insert_with(PixelTimer::default);
    }

    /// The times so far, if timing is enabled.
    pub fn timer(&self) -> Option<&PixelTimer> {
        self.timer.as_ref()
    }

    /// The implementation of the per-fragment operations in use.
    pub fn path(&self) -> PixelPath {
        if self.color_stage.is_some() {
            PixelPath::Specialized
        } else {
            PixelPath::Reference
        }
    }

    /// The decoded configuration.
    pub fn config(&self) -> &PipelineConfig {
        &self.cfg
    }

    /// Counters so far.
    pub fn stats(&self) -> PixelStats {
        self.stats
    }

    /// The diagnostics so far (each reported once per pipeline), leaving the list empty.
    /// Unmapped-memory and invalid-triangle counts are included.
    pub fn take_diagnostics(&mut self) -> Vec<PipelineDiag> {
        if self.color_cache.unmapped_pixels > 0 {
            self.diags.push(PipelineDiag::UnmappedColorBuffer {
                addr: self.cfg.fb.color_addr,
                pixels: self.color_cache.unmapped_pixels,
            });
            self.color_cache.unmapped_pixels = 0;
        }
        if self.depth_cache.unmapped_pixels > 0 {
            self.diags.push(PipelineDiag::UnmappedDepthBuffer {
                addr: self.cfg.fb.depth_addr,
                pixels: self.depth_cache.unmapped_pixels,
            });
            self.depth_cache.unmapped_pixels = 0;
        }
        if self.invalid_triangles > 0 {
            self.diags
                .push(PipelineDiag::InvalidTriangles(self.invalid_triangles));
            self.invalid_triangles = 0;
        }
        std::mem::take(&mut self.diags)
    }

    /// Rasterises and shades one triangle with no hooks (see [`FragmentHooks`]).
    pub fn draw_triangle(&mut self, mem: &mut PhysMem, tri: &[ScreenVertex; 3]) -> TriangleOutcome {
        self.draw_triangle_with(mem, tri, &mut ())
    }

    /// Rasterises and shades one triangle, calling `hooks` for the features implemented
    /// elsewhere. Memory holds the result when this returns.
    pub fn draw_triangle_with<H: FragmentHooks>(
        &mut self,
        mem: &mut PhysMem,
        tri: &[ScreenVertex; 3],
        hooks: &mut H,
    ) -> TriangleOutcome {
        if self.probe.is_some() {
            return self.draw_triangle_probed(mem, tri, hooks);
        }
        let cfg = self.cfg;
        let mut missing = 0u32;
        let start = self.timer.is_some().then(std::time::Instant::now);
        let fast = self.color_stage.is_some();
        let early_depth = self.early_depth(hooks);
        let outcome = {
            let mut ctx = FragCtx {
                cfg: &cfg,
                tev: &self.tev,
                sampler: &self.sampler,
                needs: self.needs,
                color_cache: &mut self.color_cache,
                depth_cache: &mut self.depth_cache,
                stats: &mut self.stats,
                costs: self.costs,
                missing: &mut missing,
                mem: &mut *mem,
                hooks: &mut *hooks,
                color_stage: self.color_stage,
                early_depth,
                solo: self.solo.as_ref(),
                sampling: false,
                input_time: std::time::Duration::ZERO,
            };
            let soloed = self.solo.is_some();
            if let Some(timer) = self.timer.as_mut() {
                if soloed {
                    ctx.shade_timed(fast, tri, timer, Soloed(()))
                } else {
                    ctx.shade_timed(fast, tri, timer, ())
                }
            } else if let Some(plan) = self.plan.filter(|_| !soloed) {
                // The replay path: no solo, no stage timing and no recording (a probe
                // returned above), so no debugging code runs per fragment. The plan was made
                // once for the draw.
                let scratch = &mut **self.scratch.get_or_insert_with(BatchScratch::boxed);
                if ctx.costs {
                    ctx.shade_fast::<true>(tri, &plan, scratch)
                } else {
                    ctx.shade_fast::<false>(tri, &plan, scratch)
                }
            } else if soloed {
                // A solo: the generic code with the solo compiled in (see `probe::Soloed`).
                rasterize_for_path(fast, &cfg.raster, tri, |f| ctx.process(f, Soloed(())))
            } else {
                rasterize_for_path(fast, &cfg.raster, tri, |f| ctx.process(f, ()))
            }
        };
        self.color_cache.flush(mem);
        self.depth_cache.flush(mem);
        if let (Some(timer), Some(t)) = (self.timer.as_mut(), start) {
            timer.total += t.elapsed();
        }
        self.finish_triangle(outcome, missing)
    }

    /// Counts a rasterised triangle's outcome and reports features it missed.
    fn finish_triangle(&mut self, outcome: TriangleOutcome, missing: u32) -> TriangleOutcome {
        match outcome {
            TriangleOutcome::Drawn { fragments } => {
                self.stats.triangles_drawn += 1;
                self.stats.fragments += fragments;
            }
            TriangleOutcome::Culled => self.stats.triangles_culled += 1,
            TriangleOutcome::Invalid => self.invalid_triangles += 1,
            TriangleOutcome::Degenerate => {}
        }
        for f in [
            Feature::Textures,
            Feature::ProceduralTexture,
            Feature::Lighting,
            Feature::Fog,
            Feature::Gas,
            Feature::ShadowRendering,
        ] {
            if missing & (1 << (f as u32)) != 0 {
                self.not_implemented(f);
            }
        }
        outcome
    }
}

impl<S: TextureSampler> PixelPipeline<S> {
    /// Texture units (0-3, the procedural texture included) this draw samples for every
    /// fragment (those the combiners or fragment lighting read).
    pub fn sampled_units(&self) -> u32 {
        self.needs.tex.iter().filter(|&&t| t).count() as u32 + u32::from(self.needs.proctex)
    }

    /// As [`PixelPipeline::draw_triangle_with`], and also records every fragment in `debug`
    /// (primitive-ID and overdraw buffers, [`DebugBuffers`]). Runs the generic reference code
    /// whatever [`PixelPipeline::set_path`] chose (the draw driver selects
    /// [`PixelPath::Reference`] while recording) and does not time stages.
    pub fn draw_triangle_recorded<H: FragmentHooks>(
        &mut self,
        mem: &mut PhysMem,
        tri: &[ScreenVertex; 3],
        hooks: &mut H,
        debug: &mut DebugBuffers,
    ) -> TriangleOutcome {
        let cfg = self.cfg;
        let mut missing = 0u32;
        let outcome = {
            let mut ctx = FragCtx {
                cfg: &cfg,
                tev: &self.tev,
                sampler: &self.sampler,
                needs: self.needs,
                color_cache: &mut self.color_cache,
                depth_cache: &mut self.depth_cache,
                stats: &mut self.stats,
                costs: self.costs,
                missing: &mut missing,
                mem: &mut *mem,
                hooks: &mut *hooks,
                color_stage: None,
                early_depth: false,
                sampling: false,
                input_time: std::time::Duration::ZERO,
                solo: self.solo.as_ref(),
            };
            let soloed = ctx.solo.is_some();
            rasterize_triangle_reference(&cfg.raster, tri, |f| {
                let before = ctx.stats.fragments_passed;
                if soloed {
                    ctx.process(f, Soloed(()));
                } else {
                    ctx.process(f, ());
                }
                debug.fragment(f.x, f.y, ctx.stats.fragments_passed != before);
            })
        };
        self.color_cache.flush(mem);
        self.depth_cache.flush(mem);
        self.finish_triangle(outcome, missing)
    }
}

/// One-shot convenience: decodes the registers, draws one triangle without textures or hooks,
/// and returns the outcome with the diagnostics. Callers drawing many triangles should keep a
/// [`PixelPipeline`] for the whole draw instead.
pub fn draw_triangle(
    mem: &mut PhysMem,
    regs: &[u32; 0x300],
    tri: &[ScreenVertex; 3],
) -> (TriangleOutcome, Vec<PipelineDiag>) {
    let mut p = PixelPipeline::new(regs);
    let o = p.draw_triangle(mem, tri);
    (o, p.take_diagnostics())
}

/// Rasterises `tri` with the fast block traversal ([`rasterize_triangle`], `fast`) or the
/// reference traversal ([`rasterize_triangle_reference`], the [`PixelPath::Reference`] path).
/// Both hand out the same fragments in the same order.
#[inline]
fn rasterize_for_path<F: FnMut(&Fragment)>(
    fast: bool,
    cfg: &RasterConfig,
    tri: &[ScreenVertex; 3],
    emit: F,
) -> TriangleOutcome {
    if fast {
        rasterize_triangle(cfg, tri, emit)
    } else {
        rasterize_triangle_reference(cfg, tri, emit)
    }
}

/// Applies a stencil operation to the pixel bytes; true if stencil writes are allowed (and so
/// the bytes may have changed).
#[inline]
fn stencil_op(
    cfg: &PipelineConfig,
    df: DepthFormat,
    px: &mut [u8; 4],
    op: StencilOp,
    old: u8,
) -> bool {
    if !cfg.fb.stencil_write {
        return false;
    }
    *px = df.encode_stencil(*px, cfg.ops.stencil.update(op, old));
    true
}

/// Borrowed state for processing the fragments of one triangle.
struct FragCtx<'a, S: TextureSampler, H: FragmentHooks> {
    cfg: &'a PipelineConfig,
    tev: &'a TevProgram,
    sampler: &'a S,
    needs: Needs,
    color_cache: &'a mut TileCache,
    depth_cache: &'a mut TileCache,
    stats: &'a mut PixelStats,
    /// Keep the per-fragment cost counters (see [`PixelPipeline::set_costs`]); the generic
    /// code tests this, the specialised routine takes it as a const parameter.
    costs: bool,
    /// Bits of [`Feature`]s that were needed but not implemented.
    missing: &'a mut u32,
    mem: &'a mut PhysMem,
    hooks: &'a mut H,
    /// The specialised colour stage (`None`: the generic reference code).
    color_stage: Option<ColorStage>,
    /// Run the stencil and depth tests before texturing and the combiners (see
    /// [`PixelPipeline::early_depth`]); false on the reference path.
    early_depth: bool,
    /// The combiner solo (reference path only; `None` in normal replay).
    solo: Option<&'a SoloProgram>,
    /// True while a fragment sampled by the [`PixelTimer`] runs.
    sampling: bool,
    /// Time of the sampled fragments' texture and lighting inputs (unscaled).
    input_time: std::time::Duration,
}

impl<S: TextureSampler, H: FragmentHooks> FragCtx<'_, S, H> {
    #[inline]
    fn miss(&mut self, f: Feature) {
        *self.missing |= 1 << (f as u32);
    }

    /// Rasterises `tri` through the specialised per-fragment routine
    /// ([`FragCtx::process_fast`]) with `plan`, its colour write and cost counting chosen
    /// once here. `COSTS` must equal [`FragCtx::costs`].
    #[inline(always)]
    fn shade_fast<const COSTS: bool>(
        &mut self,
        tri: &[ScreenVertex; 3],
        plan: &FastPlan,
        scratch: &mut BatchScratch,
    ) -> TriangleOutcome {
        self.shade_plan::<COSTS>(tri, None, plan, scratch)
    }

    /// [`FragCtx::shade_fast`] on the memory tile rows of `bands` (all for `None`): the fast
    /// traversal hands the fragments over in batches ([`rasterize_triangle_batched`]) and
    /// [`FragCtx::process_fast`] runs on each in a loop, with no call per fragment.
    #[inline(always)]
    pub(super) fn shade_plan<const COSTS: bool>(
        &mut self,
        tri: &[ScreenVertex; 3],
        bands: Option<RowBands>,
        plan: &FastPlan,
        scratch: &mut BatchScratch,
    ) -> TriangleOutcome {
        let cfg = self.cfg;
        if plan.batch {
            // The combiners' source table in batch form and room for the survivors of early
            // depth/stencil, kept across the draw's triangles (see `BatchScratch`).
            let BatchScratch { table: bt, live } = scratch;
            return if plan.over_rgba8 {
                rasterize_triangle_batched(&cfg.raster, tri, bands, |frags| {
                    self.process_batches::<true, COSTS>(frags, plan, bt, live);
                })
            } else {
                rasterize_triangle_batched(&cfg.raster, tri, bands, |frags| {
                    self.process_batches::<false, COSTS>(frags, plan, bt, live);
                })
            };
        }
        // The combiners' source table, kept across the triangle's fragments (see
        // `process_fast`: every entry a fragment reads is written for it).
        let mut t: [Rgba; 16] = [[0; 4]; 16];
        if plan.over_rgba8 {
            rasterize_triangle_batched(&cfg.raster, tri, bands, |frags| {
                for f in frags {
                    self.process_fast::<true, COSTS>(f, plan, &mut t);
                }
            })
        } else {
            rasterize_triangle_batched(&cfg.raster, tri, bands, |frags| {
                for f in frags {
                    self.process_fast::<false, COSTS>(f, plan, &mut t);
                }
            })
        }
    }

    /// [`FragCtx::process_batch`] on each [`FRAGMENT_BATCH`] of `frags`, through the AVX2
    /// copy where the CPU has it ([`isa`]).
    #[inline(always)]
    fn process_batches<const OVER_RGBA8: bool, const COSTS: bool>(
        &mut self,
        frags: &[Fragment],
        plan: &FastPlan,
        bt: &mut BatchTable,
        live: &mut [Fragment; FRAGMENT_BATCH],
    ) {
        isa::dispatch!(
            self.process_batches_avx2::<OVER_RGBA8, COSTS>(frags, plan, bt, live),
            self.process_batches_body::<OVER_RGBA8, COSTS>(frags, plan, bt, live),
        )
    }

    isa::avx2_fn! {
        fn process_batches_avx2<const OVER_RGBA8: bool, const COSTS: bool>(
            &mut self,
            frags: &[Fragment],
            plan: &FastPlan,
            bt: &mut BatchTable,
            live: &mut [Fragment; FRAGMENT_BATCH],
        ) {
            self.process_batches_body::<OVER_RGBA8, COSTS>(frags, plan, bt, live);
        }
    }

    #[inline(always)]
    fn process_batches_body<const OVER_RGBA8: bool, const COSTS: bool>(
        &mut self,
        frags: &[Fragment],
        plan: &FastPlan,
        bt: &mut BatchTable,
        live: &mut [Fragment; FRAGMENT_BATCH],
    ) {
        for chunk in frags.chunks(FRAGMENT_BATCH) {
            self.process_batch::<OVER_RGBA8, COSTS>(chunk, plan, bt, live);
        }
    }

    /// Rasterises `tri` through the generic per-fragment code ([`FragCtx::process`] with
    /// `rec`, `()` or [`Soloed`]) while timing stages with `timer`.
    #[inline(always)]
    fn shade_timed<R: Recorder + Copy>(
        &mut self,
        fast: bool,
        tri: &[ScreenVertex; 3],
        timer: &mut PixelTimer,
        rec: R,
    ) -> TriangleOutcome {
        let cfg = self.cfg;
        let o = rasterize_for_path(fast, &cfg.raster, tri, |f| {
            if timer.tick() {
                self.sampling = true;
                timer.sample(|| self.process(f, rec));
                self.sampling = false;
            } else {
                self.process(f, rec);
            }
        });
        timer.texture += PixelTimer::scaled(self.input_time);
        o
    }

    /// Every stage of one fragment through the generic code, recording into `rec` (a no-op
    /// for `()`); the draw's combiner solo is applied only when `R::SOLO` (a [`Soloed`]
    /// recorder), so the code for `()` has no solo test.
    fn process<R: Recorder>(&mut self, frag: &Fragment, mut rec: R) {
        let cfg = self.cfg;
        let ops = &cfg.ops;

        // Early depth/stencil (specialised path only, see `PixelPipeline::early_depth`): the
        // same test, counters and writes as below, before the work whose result cannot change
        // the fragment's fate; a fragment it kills skips texturing, lighting and the combiners.
        let early = !R::ON && self.early_depth;
        if early && !self.depth_stencil(frag, &mut rec) {
            // The hardware samples the textures before the depth/stencil stage, so with costs
            // on the cost counter (`texels`) counts these lookups as the reference path does;
            // only the colours are dropped. Lighting, proctex and the combiners are skipped,
            // and with costs off the lookups too.
            if self.costs {
                for unit in 0..3 {
                    if self.needs.tex[unit] {
                        let (_, texels) = self.sampler.sample_counted(self.mem, unit, frag);
                        self.stats.texels += u64::from(texels);
                    }
                }
            }
            return;
        }

        // The combiners' source table (see `TevProgram::run_table`): slot 0 primary colour,
        // 1-2 fragment lighting, 3-6 textures 0-3, 7-12 zero.
        let mut t: [Rgba; 16] = [[0; 4]; 16];
        t[0] = frag.color;
        let inputs_start = self.sampling.then(std::time::Instant::now);

        // Texture units 0-2 and 3.
        for unit in 0..3 {
            if self.needs.tex[unit] {
                let (c, texels) = self.sampler.sample_counted(self.mem, unit, frag);
                t[3 + unit] = c;
                if self.costs {
                    self.stats.texels += u64::from(texels);
                }
                if R::ON {
                    rec.texel(self.sampler.describe(unit, frag), unit, t[3 + unit]);
                }
            }
        }
        if self.needs.proctex {
            match self.hooks.procedural_texture(frag) {
                Some(c) => t[6] = c,
                None => self.miss(Feature::ProceduralTexture),
            }
            if R::ON {
                rec.texel(None, 3, t[6]);
            }
        }

        // Fragment lighting.
        if self.needs.lighting {
            let tex = [t[3], t[4], t[5], t[6]];
            match self.hooks.lighting(frag, &tex) {
                Some([p, s]) => {
                    t[1] = p;
                    t[2] = s;
                }
                None => self.miss(Feature::Lighting),
            }
            if R::ON {
                rec.lighting([t[1], t[2]]);
            }
        }

        if let Some(s) = inputs_start {
            self.input_time += s.elapsed();
        }
        let mut color = if R::ON {
            rec.combiners(&cfg.tev, &t)
        } else {
            self.tev.run_table(&mut t)
        };
        // The soloed stage's output, from the same source table (entries 13-15 are scratch).
        let solo = if R::SOLO {
            self.solo.map(|s| s.solo.value(s.tev.run_table(&mut t)))
        } else {
            None
        };

        match ops.mode {
            FragmentMode::Shadow | FragmentMode::Gas => {
                rec.fate(probe::FragmentFate::SpecialMode);
                self.special_mode(frag, color, ops.mode);
                return;
            }
            FragmentMode::Default | FragmentMode::Reserved2 => {}
        }

        // Alpha test (§9.3).
        if ops.alpha_test.enabled && !ops.alpha_test.func.test(color[3], ops.alpha_test.reference) {
            if self.costs {
                self.stats.alpha_failed += 1;
            }
            rec.fate(probe::FragmentFate::AlphaTest);
            return;
        }
        let before_fog = color;

        // Solo: the stage's value from here on (fog is off and blending replaces, see
        // `PixelPipeline::set_tev_solo`).
        if let Some(value) = solo {
            color = value;
        }

        // Fog (§9.4), RGB only.
        match ops.fog {
            FogMode::Fog => {
                if !self.hooks.fog(frag, &mut color) {
                    self.miss(Feature::Fog);
                }
            }
            FogMode::Gas => {
                if !self.hooks.gas_fog(frag, &mut color) {
                    self.miss(Feature::Gas);
                    // UNVERIFIED: Citra GL discards gas fragments; we do the same without a hook.
                    rec.fate(probe::FragmentFate::Discarded);
                    return;
                }
            }
            FogMode::Off | FogMode::Other(_) => {}
        }
        if R::ON && matches!(ops.fog, FogMode::Fog | FogMode::Gas) {
            rec.fog(self.hooks.fog_factor(frag), before_fog, color);
        }

        if !early && !self.depth_stencil(frag, &mut rec) {
            return;
        }
        self.stats.fragments_passed += 1;
        self.color_write(frag, color, &mut rec);
    }

    /// [`FragCtx::process`] on the specialised path without recording, solo or stage timing,
    /// with the draw-constant decisions taken from `plan`: the same stages in the same order,
    /// the same counters and memory writes, but no call into the stencil/depth stage when it
    /// cannot do anything, no checks of the colour-write state per fragment, and the RGBA8
    /// colour format's decode/encode inlined.
    ///
    /// `OVER_RGBA8` must equal [`FastPlan::over_rgba8`]: with it the colour write is alpha over
    /// on the RGBA8 word, with no per-fragment choice of blend, mask or format. `COSTS` must
    /// equal [`FragCtx::costs`]: without it the code has no cost counters, and early depth
    /// skips the texture lookups of the fragments it kills.
    ///
    /// `t` is the combiners' source table, reused from fragment to fragment (no clearing per
    /// fragment): entries 7-12 must be zero (nothing writes them), every other entry a
    /// fragment's combiners can read is written here for it (the units the draw does not read
    /// stay zero; a missing procedural texture or lighting hook writes zero, as a fresh table
    /// has), and 13-15 are scratch that [`TevProgram::run_table`] writes before reading.
    #[inline(always)]
    fn process_fast<const OVER_RGBA8: bool, const COSTS: bool>(
        &mut self,
        frag: &Fragment,
        plan: &FastPlan,
        t: &mut [Rgba; 16],
    ) {
        let cfg = self.cfg;
        let ops = &cfg.ops;
        let early = self.early_depth;
        if early && plan.depth_stencil && !self.depth_stencil_fast::<COSTS>(frag, plan.depth_key) {
            // As `process`: with costs on, the killed fragment's texel lookups are counted.
            if COSTS {
                for unit in 0..3 {
                    if self.needs.tex[unit] {
                        let (_, texels) = self.sampler.sample_counted(self.mem, unit, frag);
                        self.stats.texels += u64::from(texels);
                    }
                }
            }
            return;
        }
        t[0] = frag.color;
        for unit in 0..3 {
            if self.needs.tex[unit] {
                let (c, texels) = self.sampler.sample_counted(self.mem, unit, frag);
                t[3 + unit] = c;
                if COSTS {
                    self.stats.texels += u64::from(texels);
                }
            }
        }
        if self.needs.proctex {
            match self.hooks.procedural_texture(frag) {
                Some(c) => t[6] = c,
                None => {
                    t[6] = [0; 4];
                    self.miss(Feature::ProceduralTexture);
                }
            }
        }
        if self.needs.lighting {
            let tex = [t[3], t[4], t[5], t[6]];
            match self.hooks.lighting(frag, &tex) {
                Some([p, s]) => {
                    t[1] = p;
                    t[2] = s;
                }
                None => {
                    t[1] = [0; 4];
                    t[2] = [0; 4];
                    self.miss(Feature::Lighting);
                }
            }
        }
        let mut color = self.tev.run_table(t);
        if !plan.default_mode {
            self.special_mode(frag, color, ops.mode);
            return;
        }
        if ops.alpha_test.enabled && !ops.alpha_test.func.test(color[3], ops.alpha_test.reference) {
            if COSTS {
                self.stats.alpha_failed += 1;
            }
            return;
        }
        match ops.fog {
            FogMode::Fog => {
                if !self.hooks.fog(frag, &mut color) {
                    self.miss(Feature::Fog);
                }
            }
            FogMode::Gas => {
                if !self.hooks.gas_fog(frag, &mut color) {
                    self.miss(Feature::Gas);
                    return;
                }
            }
            FogMode::Off | FogMode::Other(_) => {}
        }
        if !early && plan.depth_stencil && !self.depth_stencil_fast::<COSTS>(frag, plan.depth_key) {
            return;
        }
        self.stats.fragments_passed += 1;
        let Some(cf) = plan.color else {
            return;
        };
        let fb = &cfg.fb;
        let mask = plan.color_word_mask;
        let Some(px) = self.color_cache.pixel4_keyed(
            self.mem,
            fb,
            fb.color_addr,
            plan.color_key,
            frag.x,
            frag.y,
        ) else {
            return;
        };
        let old = TileCache::load_word(px, mask);
        let enc = if OVER_RGBA8 {
            // RGBA8 is stored A, B, G, R: the byte order is reversed inside the routine.
            specialized::over_rgba8_stored(color, old)
        } else if cf == ColorFormat::Rgba8 {
            // RGBA8 is stored A, B, G, R: decoding and encoding are a byte swap of the word.
            let dst = u32::from_le_bytes(old).swap_bytes();
            let out = plan.stage.apply_word(u32::from_le_bytes(color), dst);
            out.swap_bytes().to_le_bytes()
        } else {
            cf.encode_word(plan.stage.apply(color, cf.decode_word(old)))
        };
        if TileCache::store_word(px, enc, mask) {
            self.color_cache.mark_dirty();
        }
    }

    /// [`FragCtx::process_fast`] on a batch of up to [`FRAGMENT_BATCH`] fragments of one
    /// triangle, phase by phase: the same results, counters, diagnostics and memory writes.
    /// Within a triangle every pixel is covered at most once, so the fragments' depth/stencil
    /// and colour accesses touch different pixels and each tile cache sees the same pixel
    /// sequence as per fragment (the plan excludes colour and depth buffers sharing bytes);
    /// the hooks are called in fragment order per hook.
    ///
    /// 1. Early depth/stencil (when allowed) picks the survivors; with `COSTS` the killed
    ///    fragments' texel lookups are still counted (as [`FragCtx::process`] does).
    /// 2. The combiners' sources for the survivors in [`BatchTable`] form: primary colour,
    ///    each needed texture unit by [`TextureSampler::sample_batch`], the procedural
    ///    texture by [`FragmentHooks::procedural_texture_batch`], lighting per fragment.
    /// 3. [`TevProgram::run_batch`].
    /// 4. Alpha test ([`specialized::alpha_pass_mask`]), fog ([`FragmentHooks::fog_batch`])
    ///    and late depth/stencil as phases over the batch, leaving a mask of the fragments
    ///    that reach the colour write.
    /// 5. The colour write of those fragments ([`FragCtx::write_batch`]).
    ///
    /// `bt` keeps the contract of `process_fast`'s table per column (rows 7-12 zero, the rows
    /// the combiners read written for every survivor); `live` is scratch for the survivors
    /// (used only when early depth/stencil kills some).
    #[inline(always)]
    fn process_batch<const OVER_RGBA8: bool, const COSTS: bool>(
        &mut self,
        frags: &[Fragment],
        plan: &FastPlan,
        bt: &mut BatchTable,
        live: &mut [Fragment; FRAGMENT_BATCH],
    ) {
        let cfg = self.cfg;
        let ops = &cfg.ops;
        let n = frags.len().min(FRAGMENT_BATCH);
        let frags = &frags[..n];
        let early = self.early_depth;

        // 1. Early depth/stencil: `idx[..m]` are the survivors' indices in `frags`.
        let mut idx = [0u8; FRAGMENT_BATCH];
        let mut m = 0;
        if early && plan.depth_stencil {
            let pass = self.depth_mask::<COSTS>(frags, lanes_below(n), plan);
            for i in 0..n {
                // ok: i < FRAGMENT_BATCH = 16.
                idx[m] = i as u8;
                m += ((pass >> i) & 1) as usize;
            }
        } else {
            for (i, d) in idx.iter_mut().enumerate() {
                // ok: i < FRAGMENT_BATCH = 16.
                *d = i as u8;
            }
            m = n;
        }
        let all = m == n;
        if !all && m > 0 {
            for (l, &i) in live.iter_mut().zip(&idx[..m]) {
                *l = frags[usize::from(i)];
            }
        }
        // The survivors, in order.
        let sf: &[Fragment] = if all { frags } else { &live[..m] };

        // 2. The combiners' sources.
        for unit in 0..3 {
            if !self.needs.tex[unit] {
                continue;
            }
            if COSTS && !all {
                // The hardware samples before the depth/stencil stage: the killed fragments'
                // lookups count too, so the whole batch is sampled and the survivors' colours
                // kept.
                let mut all_c = [[0u8; 4]; FRAGMENT_BATCH];
                self.stats.texels += self.sampler.sample_batch(self.mem, unit, frags, &mut all_c);
                for (o, &i) in bt[3 + unit].iter_mut().zip(&idx[..m]) {
                    *o = all_c[usize::from(i)];
                }
            } else if m > 0 {
                let texels = self
                    .sampler
                    .sample_batch(self.mem, unit, sf, &mut bt[3 + unit][..m]);
                if COSTS {
                    self.stats.texels += texels;
                }
            }
        }
        if m == 0 {
            return;
        }
        for (o, f) in bt[0].iter_mut().zip(sf) {
            *o = f.color;
        }
        if self.needs.proctex && !self.hooks.procedural_texture_batch(sf, &mut bt[6][..m]) {
            self.miss(Feature::ProceduralTexture);
        }
        if self.needs.lighting {
            for (k, f) in sf.iter().enumerate() {
                let tex = [bt[3][k], bt[4][k], bt[5][k], bt[6][k]];
                let (p, s) = match self.hooks.lighting(f, &tex) {
                    Some([p, s]) => (p, s),
                    None => {
                        self.miss(Feature::Lighting);
                        ([0; 4], [0; 4])
                    }
                };
                bt[1][k] = p;
                bt[2][k] = s;
            }
        }

        // 3. The combiners.
        let mut colors: [Rgba; FRAGMENT_BATCH] = [[0u8; 4]; FRAGMENT_BATCH];
        self.tev.run_batch(bt, m, &mut colors);

        // 4. Alpha test, fog and late depth/stencil as phases over the batch: bit k of `alive`
        // set = survivor `sf[k]` still goes on. Each phase decides its mode once for the batch;
        // the fragments of one triangle touch different pixels and the hooks are called in
        // fragment order per hook, so the phases give the per-fragment order's results.
        let full = lanes_below(m);
        let mut alive = full;
        if ops.alpha_test.enabled {
            let a = &ops.alpha_test;
            alive &= specialized::alpha_pass_mask(a.func, a.reference, &colors);
            if COSTS {
                self.stats.alpha_failed += u64::from((full & !alive).count_ones());
            }
        }
        match ops.fog {
            FogMode::Fog => {
                if !self.hooks.fog_batch(sf, &mut colors, alive) {
                    self.miss(Feature::Fog);
                }
            }
            FogMode::Gas => {
                let mut rest = alive;
                while rest != 0 {
                    let k = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    if !self.hooks.gas_fog(&sf[k], &mut colors[k]) {
                        self.miss(Feature::Gas);
                        alive &= !(1 << k);
                    }
                }
            }
            FogMode::Off | FogMode::Other(_) => {}
        }
        if !early && plan.depth_stencil && alive != 0 {
            alive = self.depth_mask::<COSTS>(sf, alive, plan);
        }
        self.stats.fragments_passed += u64::from(alive.count_ones());

        // 5. The colour write.
        if let Some(cf) = plan.color
            && alive != 0
        {
            self.write_batch::<OVER_RGBA8>(sf, alive, &colors, plan, cf);
        }
    }

    /// The colour write of [`FragCtx::process_fast`] for the fragments `sf[k]` with bit k of
    /// `alive` set, source colour `colors[k]`, in order: each run of consecutive such
    /// fragments in one tile looks the tile up once ([`TileCache::tile_keyed`]), loads the
    /// destination words, blends them and stores them back, with the same bytes, unmapped
    /// pixel counts and dirty marks as the per-pixel write (the fragments of one triangle are
    /// different pixels, so the order of the stores inside a run does not matter). Tile
    /// positions and offsets are computed for all lanes at once. With `OVER_RGBA8` the blend is
    /// [`specialized::over_rgba8_stored_batch`] on all 16 lanes at once (vector code; lanes
    /// outside the run are computed and ignored); otherwise [`ColorStage::apply_word`] (RGBA8)
    /// or the decoded [`ColorStage::apply`] per written pixel.
    #[inline(always)]
    fn write_batch<const OVER_RGBA8: bool>(
        &mut self,
        sf: &[Fragment],
        alive: u32,
        colors: &[Rgba; FRAGMENT_BATCH],
        plan: &FastPlan,
        cf: ColorFormat,
    ) {
        let fb = &self.cfg.fb;
        let h = fb.height;
        let mask = plan.color_word_mask;
        let bpp = self.color_cache.bpp() as usize;
        let lt = LaneTiles::new(sf, h);
        let off = lt.offsets(bpp);
        let src: [u32; FRAGMENT_BATCH] = colors.map(u32::from_le_bytes);
        let mut unmapped = 0u32;
        let mut rest = alive & lanes_below(FRAGMENT_BATCH);
        while rest != 0 {
            let (k0, run) = lt.next_run(rest);
            rest &= !run;
            let f0 = &sf[k0];
            let (data, mapped) = self.color_cache.tile_keyed(
                self.mem,
                fb,
                fb.color_addr,
                plan.color_key,
                f0.x,
                f0.y,
            );
            let ok = lt.mapped_lanes(mapped);
            let wr = run & ok;
            unmapped += (run & !ok).count_ones();
            let mut dirty = false;
            if OVER_RGBA8 {
                let mut dst = [0u32; FRAGMENT_BATCH];
                for (d, &o) in dst.iter_mut().zip(&off) {
                    *d = TileCache::tile_load(data, o, mask);
                }
                let out = specialized::over_rgba8_stored_batch(&src, &dst);
                let mut wl = wr;
                while wl != 0 {
                    let k = wl.trailing_zeros() as usize;
                    wl &= wl - 1;
                    dirty |= TileCache::tile_store(data, off[k], out[k], mask);
                }
            } else {
                let mut wl = wr;
                while wl != 0 {
                    let k = wl.trailing_zeros() as usize;
                    wl &= wl - 1;
                    let dst = TileCache::tile_load(data, off[k], mask);
                    let out = if cf == ColorFormat::Rgba8 {
                        // RGBA8 is stored A, B, G, R: decoding and encoding are a byte swap.
                        plan.stage.apply_word(src[k], dst.swap_bytes()).swap_bytes()
                    } else {
                        let d = cf.decode_word(dst.to_le_bytes());
                        u32::from_le_bytes(cf.encode_word(plan.stage.apply(colors[k], d)))
                    };
                    dirty |= TileCache::tile_store(data, off[k], out, mask);
                }
            }
            if dirty {
                self.color_cache.mark_dirty();
            }
        }
        self.color_cache.unmapped_pixels += u64::from(unmapped);
    }

    /// Stencil test, depth test, depth write and stencil operations (§9.5). Returns false if
    /// the fragment is discarded.
    fn depth_stencil<R: Recorder>(&mut self, frag: &Fragment, rec: &mut R) -> bool {
        if !R::ON && self.color_stage.is_some() {
            let key = BufferKey::new(&self.cfg.fb, self.cfg.fb.depth_addr);
            return if self.costs {
                self.depth_stencil_fast::<true>(frag, key)
            } else {
                self.depth_stencil_fast::<false>(frag, key)
            };
        }
        let cfg = self.cfg;
        let ops = &cfg.ops;
        let fb = &cfg.fb;
        let Some(df) = fb.depth_format else {
            // Unknown depth format: no depth buffer access, every test passes (reported).
            return true;
        };
        // HW: [C], [3DB-I]: stencil is active only with the test enabled and a D24S8 buffer.
        let stencil_on = ops.stencil.enabled && df == DepthFormat::D24S8;
        if !(stencil_on || ops.depth.enabled || ops.depth.write) {
            return true;
        }
        let (x, y) = (frag.x, frag.y);
        let Some(px) = self.depth_cache.pixel(self.mem, fb, fb.depth_addr, x, y) else {
            // Unmapped depth buffer: counted by the cache; the fragment proceeds untested.
            return true;
        };
        let mut b = [0u8; 4];
        let n = px.len().min(4);
        b[..n].copy_from_slice(&px[..n]);
        let old_stencil = df.decode_stencil(b);
        let stored_z = df.decode_depth(b);
        let mut new = b;
        let mut dirty = false;

        let mut result = true;
        if stencil_on && !ops.stencil.passes(old_stencil) {
            if self.costs {
                self.stats.stencil_failed += 1;
            }
            rec.fate(probe::FragmentFate::Stencil);
            dirty |= stencil_op(cfg, df, &mut new, ops.stencil.fail, old_stencil);
            result = false;
        } else {
            // HW: [C] rasterizer.cpp: `trunc(depth · (2^bits − 1))` (depth already in [0, 1]).
            let z = (frag.depth * df.max_depth() as f32) as u32;
            // Depth test disabled behaves as "always" (HW: [3DB-I]).
            if ops.depth.enabled && !ops.depth.func.test(z, stored_z) {
                if self.costs {
                    self.stats.depth_failed += 1;
                }
                rec.fate(probe::FragmentFate::Depth);
                if stencil_on {
                    dirty |= stencil_op(cfg, df, &mut new, ops.stencil.depth_fail, old_stencil);
                }
                result = false;
            } else {
                if ops.depth.write && fb.depth_write {
                    new = df.encode_depth(new, z);
                    dirty = true;
                }
                // HW: [C]: the depth-pass operation runs even when the depth test is disabled.
                if stencil_on {
                    dirty |= stencil_op(cfg, df, &mut new, ops.stencil.depth_pass, old_stencil);
                }
            }
        }
        if R::ON {
            rec.depth_stencil(probe::DepthStencilRecord {
                fragment_depth: (frag.depth * df.max_depth() as f32) as u32,
                depth_before: stored_z,
                depth_after: df.decode_depth(new),
                stencil_before: old_stencil,
                stencil_after: df.decode_stencil(new),
            });
        }
        if dirty && new != b {
            px[..n].copy_from_slice(&new[..n]);
            self.depth_cache.mark_dirty();
        }
        result
    }

    /// [`FragCtx::depth_stencil_fast`] for the fragments `frags[k]` with bit k of `lanes` set,
    /// in order: the lanes that pass. With the stencil test on, fragment by fragment;
    /// otherwise [`FragCtx::depth_batch`].
    #[inline(always)]
    fn depth_mask<const COSTS: bool>(
        &mut self,
        frags: &[Fragment],
        lanes: u32,
        plan: &FastPlan,
    ) -> u32 {
        if let Some(pass) = self.depth_batch::<COSTS>(frags, lanes, plan) {
            return pass;
        }
        let mut pass = lanes;
        let mut rest = lanes;
        while rest != 0 {
            let k = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            if !self.depth_stencil_fast::<COSTS>(&frags[k], plan.depth_key) {
                pass &= !(1 << k);
            }
        }
        pass
    }

    /// [`FragCtx::depth_stencil_fast`] for the fragments `frags[k]` with bit k of `lanes` set,
    /// in order, when the stencil test is off (`None` otherwise: [`FragCtx::depth_mask`] runs
    /// the per-fragment code): returns the lanes that pass, with the same counters, unmapped
    /// pixel counts, tile loads and stores and dirty marks. The fragments are different
    /// pixels (one triangle's), so each depth word is read before any lane writes it whatever
    /// the order; each run of lanes in one tile looks the tile up once
    /// ([`TileCache::tile_keyed`], the same tile sequence as per fragment), the depth values
    /// and the compare run across the lanes with the function chosen once per batch.
    #[inline(always)]
    fn depth_batch<const COSTS: bool>(
        &mut self,
        frags: &[Fragment],
        lanes: u32,
        plan: &FastPlan,
    ) -> Option<u32> {
        let cfg = self.cfg;
        let ops = &cfg.ops;
        let fb = &cfg.fb;
        let lanes = lanes & lanes_below(frags.len());
        let Some(df) = fb.depth_format else {
            return Some(lanes);
        };
        if ops.stencil.enabled && df == DepthFormat::D24S8 {
            return None;
        }
        if !(ops.depth.enabled || ops.depth.write) {
            return Some(lanes);
        }
        let h = fb.height;
        let mask = self.depth_cache.word_mask();
        let bpp = self.depth_cache.bpp() as usize;
        // The depth bits of a stored word (`DepthFormat::decode_depth`) and `encode_depth` as
        // a word operation: the depth's low bytes replace the word's, the rest stays.
        let depth_bits: u32 = match df {
            DepthFormat::D16 => 0xFFFF,
            DepthFormat::D24 | DepthFormat::D24S8 => 0xFF_FFFF,
        };
        let max = df.max_depth() as f32;
        let write = ops.depth.write && fb.depth_write;
        let lt = LaneTiles::new(frags, h);
        let mut z = [0u32; FRAGMENT_BATCH];
        for (z, f) in z.iter_mut().zip(frags) {
            // As `depth_stencil_fast` (saturating cast).
            *z = (f.depth * max) as u32;
        }
        let off = lt.offsets(bpp);
        let (mut pass, mut failed, mut unmapped) = (0u32, 0u32, 0u32);
        let mut rest = lanes;
        while rest != 0 {
            let (k0, run) = lt.next_run(rest);
            rest &= !run;
            let f0 = &frags[k0];
            let (data, mapped) = self.depth_cache.tile_keyed(
                self.mem,
                fb,
                fb.depth_addr,
                plan.depth_key,
                f0.x,
                f0.y,
            );
            let ok = lt.mapped_lanes(mapped);
            // Unmapped pixels pass without a depth access (as `depth_stencil_fast`).
            pass |= run & !ok;
            unmapped += (run & !ok).count_ones();
            let live = run & ok;
            let mut old = [0u32; FRAGMENT_BATCH];
            for (d, &o) in old.iter_mut().zip(&off) {
                *d = TileCache::tile_load(data, o, mask);
            }
            let tested = if ops.depth.enabled {
                let mut stored = [0u32; FRAGMENT_BATCH];
                for (s, &w) in stored.iter_mut().zip(&old) {
                    *s = w & depth_bits;
                }
                specialized::depth_pass_mask(ops.depth.func, &z, &stored)
            } else {
                u32::MAX
            };
            let ok_lanes = live & tested;
            failed += (live & !tested).count_ones();
            pass |= ok_lanes;
            if write {
                let mut dirty = false;
                let mut wl = ok_lanes;
                while wl != 0 {
                    let k = wl.trailing_zeros() as usize;
                    wl &= wl - 1;
                    let new = (old[k] & !depth_bits) | (z[k] & depth_bits);
                    dirty |= TileCache::tile_store(data, off[k], new, mask);
                }
                if dirty {
                    self.depth_cache.mark_dirty();
                }
            }
        }
        self.depth_cache.unmapped_pixels += u64::from(unmapped);
        if COSTS {
            self.stats.depth_failed += u64::from(failed);
        }
        Some(pass)
    }

    /// [`FragCtx::depth_stencil`] on the specialised path (no recording): the same tests,
    /// counters (when `COSTS`) and writes, with the pixel bytes loaded and stored as one word.
    /// `key` is [`BufferKey::new`] of the depth buffer.
    #[inline(always)]
    fn depth_stencil_fast<const COSTS: bool>(&mut self, frag: &Fragment, key: BufferKey) -> bool {
        let cfg = self.cfg;
        let ops = &cfg.ops;
        let fb = &cfg.fb;
        let Some(df) = fb.depth_format else {
            return true;
        };
        let stencil_on = ops.stencil.enabled && df == DepthFormat::D24S8;
        if !(stencil_on || ops.depth.enabled || ops.depth.write) {
            return true;
        }
        let mask = self.depth_cache.word_mask();
        let Some(px) =
            self.depth_cache
                .pixel4_keyed(self.mem, fb, fb.depth_addr, key, frag.x, frag.y)
        else {
            return true;
        };
        let b = TileCache::load_word(px, mask);
        let old_stencil = df.decode_stencil(b);
        let mut new = b;
        let mut dirty = false;
        let mut result = true;
        if stencil_on && !ops.stencil.passes(old_stencil) {
            if COSTS {
                self.stats.stencil_failed += 1;
            }
            dirty |= stencil_op(cfg, df, &mut new, ops.stencil.fail, old_stencil);
            result = false;
        } else {
            let z = (frag.depth * df.max_depth() as f32) as u32;
            if ops.depth.enabled && !ops.depth.func.test(z, df.decode_depth(b)) {
                if COSTS {
                    self.stats.depth_failed += 1;
                }
                if stencil_on {
                    dirty |= stencil_op(cfg, df, &mut new, ops.stencil.depth_fail, old_stencil);
                }
                result = false;
            } else {
                if ops.depth.write && fb.depth_write {
                    new = df.encode_depth(new, z);
                    dirty = true;
                }
                if stencil_on {
                    dirty |= stencil_op(cfg, df, &mut new, ops.stencil.depth_pass, old_stencil);
                }
            }
        }
        if dirty && new != b && TileCache::store_word(px, new, mask) {
            self.depth_cache.mark_dirty();
        }
        result
    }

    /// Blending / logic op, write mask and colour write (§9.6).
    fn color_write<R: Recorder>(&mut self, frag: &Fragment, src: Rgba, rec: &mut R) {
        let cfg = self.cfg;
        let fb = &cfg.fb;
        let ops = &cfg.ops;
        let Some(cf) = fb.color_format else {
            rec.fate(probe::FragmentFate::WriteMask);
            return;
        };
        if !fb.color_write || ops.color_mask == [false; 4] {
            rec.fate(probe::FragmentFate::WriteMask);
            return;
        }
        rec.fate(probe::FragmentFate::Passed);
        // UNVERIFIED: the destination is always read, ignoring COLORBUFFER_READ (as Citra).
        if let Some(stage) = self.color_stage {
            let mask = self.color_cache.word_mask();
            let Some(px) = self
                .color_cache
                .pixel4(self.mem, fb, fb.color_addr, frag.x, frag.y)
            else {
                return;
            };
            let dst = cf.decode_word(TileCache::load_word(px, mask));
            let enc = cf.encode_word(stage.apply(src, dst));
            if TileCache::store_word(px, enc, mask) {
                self.color_cache.mark_dirty();
            }
            return;
        }
        let Some(px) = self
            .color_cache
            .pixel(self.mem, fb, fb.color_addr, frag.x, frag.y)
        else {
            return;
        };
        let mut b = [0u8; 4];
        let n = px.len().min(4);
        b[..n].copy_from_slice(&px[..n]);
        let dst = cf.decode_word(b);
        let out = match ops.output {
            ColorOutput::Blend(bl) => bl.apply(src, dst),
            ColorOutput::Logic(op) => [
                op.apply(src[0], dst[0]),
                op.apply(src[1], dst[1]),
                op.apply(src[2], dst[2]),
                op.apply(src[3], dst[3]),
            ],
        };
        let mut res = dst;
        for ch in 0..4 {
            if ops.color_mask[ch] {
                res[ch] = out[ch];
            }
        }
        let enc = cf.encode_word(res);
        if R::ON {
            rec.blend(probe::blend_record(
                ops.output,
                src,
                dst,
                out,
                cf.decode_word(enc),
                ops.color_mask,
            ));
        }
        if enc[..n] != b[..n] {
            px[..n].copy_from_slice(&enc[..n]);
            self.color_cache.mark_dirty();
        }
    }

    /// Shadow-map or gas rendering: hand the pixel's colour-buffer bytes to the hook.
    fn special_mode(&mut self, frag: &Fragment, color: Rgba, mode: FragmentMode) {
        let fb = &self.cfg.fb;
        let Some(px) = self
            .color_cache
            .pixel(self.mem, fb, fb.color_addr, frag.x, frag.y)
        else {
            return;
        };
        let (result, feature) = if mode == FragmentMode::Shadow {
            // The colour cache holds 4-byte pixels in shadow mode (see `with_sampler`).
            (self.hooks.shadow(frag, color, px), Feature::ShadowRendering)
        } else {
            (self.hooks.gas_render(frag, color, px), Feature::Gas)
        };
        match result {
            Some(true) => self.color_cache.mark_dirty(),
            Some(false) => {}
            None => self.miss(feature),
        }
    }
}

#[cfg(test)]
mod tests;
