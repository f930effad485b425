//! Fixed-function fragment state for scenes: the per-draw "effect" (depth map, culling, stencil,
//! depth test and write masks, alpha test, blending or logic op — citro3d's `C3D_Effect` group,
//! defaults as `C3D_Init` sets them), colour-combiner (TEV) stage helpers and the fog lookup
//! table.
//!
//! Stage: host-side description of rasterizer/fragment configuration. Inputs: typed values
//! (pica-cmd's register enums). Outputs: register words for [`super::CommandList`], all encoded
//! through the register catalogue's typed views so bit positions live in one place. Registers
//! the words are for: 0x040 FACECULLING_CONFIG, 0x04D/0x04E DEPTHMAP_SCALE/OFFSET (float24),
//! 0x061/0x062/0x06A/0x118 early depth, 0x06D DEPTHMAP_ENABLE, 0x100-0x107 fragment operations,
//! 0x126 GAS_DELTAZ_DEPTH bits 24-25, 0x130 FRAGOP_SHADOW (two float16), TEXENVi_* (0x0C0-0x0FC),
//! 0x0E6/0x0E8 fog LUT (entries: value fixed0.0.11 in bits 13-23, difference fixed1.1.11 in
//! bits 0-12).

use pica_cmd::regs::RegView;
use pica_cmd::regs::Rgba8;
use pica_cmd::regs::framebuffer::{
    AlphaTest, BlendEquation, BlendFactor, BlendFunc, CompareFunc, DepthColorMask, FragOpMode,
    LogicOp, StencilOp, StencilOps, StencilTest,
};
use pica_cmd::regs::rasterizer::{CullMode, EarlyDepthFunc};
use pica_cmd::regs::tev::{
    TevAlphaOperand, TevColorOperand, TevCombiner, TevOp, TevOperands, TevScale, TevScales,
    TevSource, TevSources, TevStage,
};
use shader_unit::float::{F16, F24};

/// Where the colour written to the framebuffer comes from after the fragment tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorOutput {
    /// Blending with [`Effect::blend`] (COLOR_OPERATION bit 8 = 1).
    Blend,
    /// A logic operation (COLOR_OPERATION bit 8 = 0).
    LogicOp(LogicOp),
}

/// The depth map (0x04D, 0x04E, 0x06D): `depth = z/w · scale + offset` (z-buffer) or
/// `(z · scale + w · offset)` (w-buffer).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DepthMap {
    /// True: z-buffer mode (DEPTHMAP_ENABLE = 1); false: w-buffer.
    pub z_buffer: bool,
    /// Scale (float24 in the register).
    pub scale: f32,
    /// Offset (float24 in the register).
    pub offset: f32,
}

/// Per-draw fragment state, written as one group by [`super::CommandList::set_effect`] (the
/// register sequence of citro3d's `C3Di_EffectBind`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Effect {
    /// Depth map.
    pub depth_map: DepthMap,
    /// Face culling.
    pub cull: CullMode,
    /// Stencil test.
    pub stencil: StencilTest,
    /// Stencil operations.
    pub stencil_ops: StencilOps,
    /// Constant blend colour `[r, g, b, a]`.
    pub blend_color: [u8; 4],
    /// Early depth test: enable, function, clear value (24-bit).
    pub early_depth: (bool, EarlyDepthFunc, u32),
    /// Depth test, depth write and colour write masks.
    pub depth: DepthColorMask,
    /// Alpha test.
    pub alpha_test: AlphaTest,
    /// Blend equations and factors (used with [`ColorOutput::Blend`]).
    pub blend: BlendFunc,
    /// Blending or logic op.
    pub output: ColorOutput,
    /// Fragment operation mode (default, gas, shadow).
    pub mode: FragOpMode,
    /// FRAGOP_SHADOW raw word (two float16: penumbra scale + bias, −scale).
    pub shadow: u32,
}

/// Blending `src · a + dst · (1 − a)` for colour and alpha (the usual transparency setup).
pub const ALPHA_BLEND: BlendFunc = BlendFunc {
    rgb_equation: BlendEquation::Add,
    alpha_equation: BlendEquation::Add,
    rgb_src: BlendFactor::SrcAlpha,
    rgb_dst: BlendFactor::OneMinusSrcAlpha,
    alpha_src: BlendFactor::SrcAlpha,
    alpha_dst: BlendFactor::OneMinusSrcAlpha,
};

/// Additive blending `src · a + dst`.
pub const ADDITIVE_BLEND: BlendFunc = BlendFunc {
    rgb_equation: BlendEquation::Add,
    alpha_equation: BlendEquation::Add,
    rgb_src: BlendFactor::SrcAlpha,
    rgb_dst: BlendFactor::One,
    alpha_src: BlendFactor::Zero,
    alpha_dst: BlendFactor::One,
};

/// Blending that replaces the destination (`src · 1 + dst · 0`).
pub const NO_BLEND: BlendFunc = BlendFunc {
    rgb_equation: BlendEquation::Add,
    alpha_equation: BlendEquation::Add,
    rgb_src: BlendFactor::One,
    rgb_dst: BlendFactor::Zero,
    alpha_src: BlendFactor::One,
    alpha_dst: BlendFactor::Zero,
};

/// DEPTH_COLOR_MASK with the given test, all colour channels written and depth written.
pub const fn depth_test(enable: bool, func: CompareFunc, depth_write: bool) -> DepthColorMask {
    DepthColorMask {
        depth_test: enable,
        depth_func: func,
        red_write: true,
        green_write: true,
        blue_write: true,
        alpha_write: true,
        depth_write,
    }
}

impl Default for Effect {
    /// The state `C3D_Init` establishes: z-buffer with scale −1 / offset 0 (depth 1 at the near
    /// plane), back faces culled with counter-clockwise front faces, no stencil, depth test
    /// GREATER writing everything, no alpha test, alpha blending, default fragment mode.
    fn default() -> Self {
        Effect {
            depth_map: DepthMap {
                z_buffer: true,
                scale: -1.0,
                offset: 0.0,
            },
            // Front faces counter-clockwise, so clockwise (back) faces are culled (citro3d's
            // GPU_CULL_BACK_CCW = 2).
            cull: CullMode::CullCw,
            stencil: StencilTest {
                enable: false,
                func: CompareFunc::Always,
                write_mask: 0,
                reference: 0,
                input_mask: 0xFF,
            },
            stencil_ops: StencilOps {
                fail: StencilOp::Keep,
                z_fail: StencilOp::Keep,
                z_pass: StencilOp::Keep,
            },
            blend_color: [0; 4],
            early_depth: (false, EarlyDepthFunc::Greater, 0),
            depth: depth_test(true, CompareFunc::Greater, true),
            alpha_test: AlphaTest {
                enable: false,
                func: CompareFunc::Always,
                reference: 0,
            },
            blend: ALPHA_BLEND,
            output: ColorOutput::Blend,
            mode: FragOpMode::Default,
            // f16(scale + bias) | f16(−scale) << 16 with scale 0, bias 1 (citro3d's default).
            shadow: F16::from_f32_truncate(1.0).to_bits()
                | (F16::from_f32_truncate(-0.0).to_bits() << 16),
        }
    }
}

impl Effect {
    /// A 2D/UI effect: no depth test or depth write, no culling, alpha blending.
    pub fn ui() -> Self {
        Effect {
            cull: CullMode::None,
            depth: depth_test(false, CompareFunc::Always, false),
            ..Effect::default()
        }
    }

    /// FACECULLING_CONFIG.
    pub fn cull_word(&self) -> u32 {
        self.cull.raw() & 3
    }

    /// DEPTHMAP_SCALE and DEPTHMAP_OFFSET (float24, mantissa truncated like \[LC\] `f32tof24`).
    pub fn depth_map_words(&self) -> [u32; 2] {
        [
            F24::from_f32_truncate(self.depth_map.scale).to_bits(),
            F24::from_f32_truncate(self.depth_map.offset).to_bits(),
        ]
    }

    /// FRAGOP_ALPHA_TEST, STENCIL_TEST, STENCIL_OP, DEPTH_COLOR_MASK (0x104-0x107).
    pub fn fragment_test_words(&self) -> [u32; 4] {
        [
            self.alpha_test.to_raw(),
            self.stencil.to_raw(),
            self.stencil_ops.to_raw(),
            self.depth.to_raw(),
        ]
    }

    /// COLOR_OPERATION (0x100): mode bits 0-1, blend bit 8, and the constant 0xE4 in bits 16-23
    /// that the SDK always writes.
    pub fn color_operation_word(&self) -> u32 {
        let blend = matches!(self.output, ColorOutput::Blend);
        0x00E4_0000 | self.mode.raw() | (u32::from(blend) << 8)
    }

    /// LOGIC_OP (0x102).
    pub fn logic_op_word(&self) -> u32 {
        match self.output {
            ColorOutput::LogicOp(op) => op.raw(),
            ColorOutput::Blend => LogicOp::Copy.raw(),
        }
    }

    /// BLEND_COLOR (0x103).
    pub fn blend_color_word(&self) -> u32 {
        let [r, g, b, a] = self.blend_color;
        Rgba8 { r, g, b, a }.to_word()
    }

    /// GAS_DELTAZ_DEPTH bits 24-25: the gas depth function derived from the depth test function
    /// (the SDK's mapping: NEVER/ALWAYS keep their ids 0/1, GREATER/GEQUAL → 2, others → 3).
    pub fn gas_depth_func(&self) -> u32 {
        (0xAF02 >> (self.depth.depth_func.raw() * 2)) & 3
    }
}

/// A TEV stage that passes the previous stage's output through (citro3d's `C3D_TexEnvInit`:
/// source PREVIOUS, REPLACE, constant colour white).
pub fn tev_passthrough() -> TevStage {
    tev_stage(
        [
            TevSource::Previous,
            TevSource::PrimaryColor,
            TevSource::PrimaryColor,
        ],
        TevOp::Replace,
        [0xFF; 4],
    )
}

/// A TEV stage computing `op` on `sources` for both RGB and alpha with default operands
/// (source colour / source alpha) and scale 1.
pub fn tev_stage(sources: [TevSource; 3], op: TevOp, constant: [u8; 4]) -> TevStage {
    let [r, g, b, a] = constant;
    TevStage {
        sources: TevSources {
            rgb: sources,
            alpha: sources,
        },
        operands: TevOperands {
            rgb: [TevColorOperand::SrcColor; 3],
            alpha: [TevAlphaOperand::SrcAlpha; 3],
        },
        combiner: TevCombiner {
            rgb_op: op,
            alpha_op: op,
        },
        const_color: Rgba8 { r, g, b, a },
        scales: TevScales {
            rgb_scale: TevScale::X1,
            alpha_scale: TevScale::X1,
        },
    }
}

/// `REPLACE(src)`.
pub fn tev_replace(src: TevSource) -> TevStage {
    tev_stage(
        [src, TevSource::PrimaryColor, TevSource::PrimaryColor],
        TevOp::Replace,
        [0xFF; 4],
    )
}

/// `MODULATE(a, b)` = a · b.
pub fn tev_modulate(a: TevSource, b: TevSource) -> TevStage {
    tev_stage([a, b, TevSource::PrimaryColor], TevOp::Modulate, [0xFF; 4])
}

/// The fog lookup table: 128 entries indexed by `depth · 128` (or `(1 − depth) · 128` with z
/// flip), each a fog factor (1 = no fog, 0 = only fog colour) and the difference to the next
/// entry (`pica-raster.md` §9.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FogLut {
    /// The 128 register words (value fixed0.0.11 in bits 13-23, difference fixed1.1.11 signed in
    /// bits 0-12).
    pub entries: [u32; 128],
}

impl FogLut {
    /// Samples `factor(x)` at x = i/128 for i = 0..=128: entry i holds `factor(i/128)` and the
    /// difference `factor((i+1)/128) − factor(i/128)`, both scaled by 2048 and clamped to their
    /// fields (value 0..=0x7FF, difference −0x1000..=0xFFF).
    pub fn from_fn(factor: impl Fn(f32) -> f32) -> Self {
        let mut entries = [0u32; 128];
        for (i, e) in entries.iter_mut().enumerate() {
            let v0 = factor(i as f32 / 128.0);
            let v1 = factor((i + 1) as f32 / 128.0);
            // ok: clamped to 0..=0x7FF before the cast.
            let value = (v0 * 2048.0).clamp(0.0, 2047.0) as u32;
            // ok: clamped to the 13-bit signed range before the cast.
            let diff = ((v1 - v0) * 2048.0).clamp(-4096.0, 4095.0) as i32;
            *e = (value << 13) | (diff as u32 & 0x1FFF);
        }
        FogLut { entries }
    }

    /// Exponential fog `exp(−density · distance)` over eye-space distance, for a perspective
    /// projection with the given near/far planes and the default depth map (depth 1 at near,
    /// 0 at far; no z flip). The eye distance of depth value x is `far·near / (near + x·(far −
    /// near))` — the inverse of the projection's depth.
    pub fn exponential(density: f32, near: f32, far: f32) -> Self {
        FogLut::from_fn(|x| {
            let distance = far * near / (near + x * (far - near));
            (-density * distance).exp()
        })
    }
}
