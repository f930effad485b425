//! Texture combiners ("TEV"): six colour/alpha combiner stages and the combiner buffer
//! (`pica-raster.md` §6).
//!
//! Stage: after texturing and fragment lighting, before the per-fragment operations.
//! Input: a [`TevInputs`] per fragment (primary colour, fragment-lighting colours, texture units
//! 0-3, all unsigned 8-bit per channel) and a [`TevConfig`] decoded once per draw.
//! Output: the combined RGBA colour (u8 per channel) that alpha test, fog and blending consume.
//!
//! Registers read (all in [`TevConfig::from_regs`]): stage i at base 0x0C0, 0x0C8, 0x0D0, 0x0D8,
//! 0x0F0, 0x0F8 (+0 SOURCE, +1 OPERAND, +2 COMBINER, +3 COLOR, +4 SCALE), 0x0E0
//! TEXENV_UPDATE_BUFFER bits 8-15, 0x0FD TEXENV_BUFFER_COLOR.
//!
//! Arithmetic is the 8-bit integer arithmetic of Citra's software rasteriser (§6.4): products are
//! divided by 255 with truncation, sums saturate, the stage scale (×1/×2/×4) is applied last and
//! saturates at 255. UNVERIFIED: Citra's GL path and Panda compute in float and round instead of
//! truncating, which differs by ±1 in places; which is bit-exact on hardware is not established.
//! The integer path is the one Citra checked against hardware screenshots for DOT3 (PR #767,
//! PR #2671), so it is our choice. DOT3 itself has its own, measured arithmetic (one's-complement
//! sign and magnitude, products rounded to nearest over 255; hardware fact TE-4): see [`dot3`].

use crate::debug::fragment::TevStageRecord;
use crate::pixel::color::Rgba;
use crate::pixel::isa;
use crate::pixel::raster::FRAGMENT_BATCH;
use pica_cmd::regs::Regs;

/// A combiner input source (TEXENVi_SOURCE, 4-bit fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum TevSource {
    /// 0: primary colour (the interpolated vertex colour).
    PrimaryColor,
    /// 1: primary fragment colour (fragment lighting diffuse; 0 without lighting).
    FragmentPrimary,
    /// 2: secondary fragment colour (fragment lighting specular; 0 without lighting).
    FragmentSecondary,
    /// 3: texture unit 0.
    Texture0,
    /// 4: texture unit 1.
    Texture1,
    /// 5: texture unit 2.
    Texture2,
    /// 6: texture unit 3 (procedural texture).
    Texture3,
    /// 13: the combiner buffer (one stage behind, see [`TevConfig::combine`]).
    PreviousBuffer,
    /// 14: this stage's constant colour.
    Constant,
    /// 15: the previous stage's output.
    Previous,
    /// 7-12: undocumented. UNVERIFIED: reads as (0, 0, 0, 0) (Citra logs and returns 0).
    Unknown(u8),
}

impl TevSource {
    /// Decodes a 4-bit source field.
    pub const fn from_bits(v: u32) -> Self {
        match v & 0xF {
            0 => Self::PrimaryColor,
            1 => Self::FragmentPrimary,
            2 => Self::FragmentSecondary,
            3 => Self::Texture0,
            4 => Self::Texture1,
            5 => Self::Texture2,
            6 => Self::Texture3,
            13 => Self::PreviousBuffer,
            14 => Self::Constant,
            15 => Self::Previous,
            n => Self::Unknown(n as u8),
        }
    }
}

/// An RGB operand modifier (TEXENVi_OPERAND, 4-bit fields at bits 0/4/8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ColorOperand {
    /// 0: (r, g, b).
    Rgb,
    /// 1: (255 − r, 255 − g, 255 − b).
    OneMinusRgb,
    /// 2: (a, a, a).
    Alpha,
    /// 3: 255 − a replicated.
    OneMinusAlpha,
    /// 4: r replicated.
    Red,
    /// 5: 255 − r replicated.
    OneMinusRed,
    /// 8: g replicated.
    Green,
    /// 9: 255 − g replicated.
    OneMinusGreen,
    /// 12: b replicated.
    Blue,
    /// 13: 255 − b replicated.
    OneMinusBlue,
    /// 6, 7, 10, 11, 14, 15: undocumented. UNVERIFIED: gives (0, 0, 0) (Citra has no case for
    /// them at all).
    Unknown(u8),
}

impl ColorOperand {
    /// Decodes a 4-bit RGB operand field.
    pub const fn from_bits(v: u32) -> Self {
        match v & 0xF {
            0 => Self::Rgb,
            1 => Self::OneMinusRgb,
            2 => Self::Alpha,
            3 => Self::OneMinusAlpha,
            4 => Self::Red,
            5 => Self::OneMinusRed,
            8 => Self::Green,
            9 => Self::OneMinusGreen,
            12 => Self::Blue,
            13 => Self::OneMinusBlue,
            n => Self::Unknown(n as u8),
        }
    }

    #[inline]
    fn apply(self, c: Rgba) -> [u8; 3] {
        let [r, g, b, a] = c;
        match self {
            Self::Rgb => [r, g, b],
            Self::OneMinusRgb => [255 - r, 255 - g, 255 - b],
            Self::Alpha => [a; 3],
            Self::OneMinusAlpha => [255 - a; 3],
            Self::Red => [r; 3],
            Self::OneMinusRed => [255 - r; 3],
            Self::Green => [g; 3],
            Self::OneMinusGreen => [255 - g; 3],
            Self::Blue => [b; 3],
            Self::OneMinusBlue => [255 - b; 3],
            Self::Unknown(_) => [0; 3],
        }
    }
}

/// An alpha operand modifier (TEXENVi_OPERAND, 3-bit fields at bits 12/16/20; all 8 defined).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum AlphaOperand {
    /// 0: a.
    Alpha,
    /// 1: 255 − a.
    OneMinusAlpha,
    /// 2: r.
    Red,
    /// 3: 255 − r.
    OneMinusRed,
    /// 4: g.
    Green,
    /// 5: 255 − g.
    OneMinusGreen,
    /// 6: b.
    Blue,
    /// 7: 255 − b.
    OneMinusBlue,
}

impl AlphaOperand {
    /// Decodes a 3-bit alpha operand field.
    pub const fn from_bits(v: u32) -> Self {
        match v & 7 {
            0 => Self::Alpha,
            1 => Self::OneMinusAlpha,
            2 => Self::Red,
            3 => Self::OneMinusRed,
            4 => Self::Green,
            5 => Self::OneMinusGreen,
            6 => Self::Blue,
            _ => Self::OneMinusBlue,
        }
    }

    #[inline]
    fn apply(self, c: Rgba) -> u8 {
        let [r, g, b, a] = c;
        match self {
            Self::Alpha => a,
            Self::OneMinusAlpha => 255 - a,
            Self::Red => r,
            Self::OneMinusRed => 255 - r,
            Self::Green => g,
            Self::OneMinusGreen => 255 - g,
            Self::Blue => b,
            Self::OneMinusBlue => 255 - b,
        }
    }
}

/// A combiner operation (TEXENVi_COMBINER, 4-bit fields: RGB bits 0-3, alpha bits 16-19).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum TevOp {
    /// 0: a.
    Replace,
    /// 1: a·b / 255.
    Modulate,
    /// 2: min(a + b, 255).
    Add,
    /// 3: clamp(a + b − 128, 0, 255).
    AddSigned,
    /// 4: (a·c + b·(255 − c)) / 255.
    Lerp,
    /// 5: max(a − b, 0).
    Subtract,
    /// 6: 3-component dot product of (a − ½)·(b − ½), replicated to R, G, B.
    Dot3Rgb,
    /// 7: as [`TevOp::Dot3Rgb`], and the result also replaces the alpha combiner's output.
    Dot3Rgba,
    /// 8: min((a·b + 255·c) / 255, 255).
    MultiplyAdd,
    /// 9: min(a + b, 255)·c / 255.
    AddMultiply,
    /// 10-15: undocumented. UNVERIFIED: gives 0 (Citra logs and returns 0).
    Unknown(u8),
}

impl TevOp {
    /// Decodes a 4-bit operation field.
    pub const fn from_bits(v: u32) -> Self {
        match v & 0xF {
            0 => Self::Replace,
            1 => Self::Modulate,
            2 => Self::Add,
            3 => Self::AddSigned,
            4 => Self::Lerp,
            5 => Self::Subtract,
            6 => Self::Dot3Rgb,
            7 => Self::Dot3Rgba,
            8 => Self::MultiplyAdd,
            9 => Self::AddMultiply,
            n => Self::Unknown(n as u8),
        }
    }

    /// How many of the three inputs the operation reads (0 for unknown operations).
    pub const fn arity(self) -> usize {
        match self {
            Self::Replace => 1,
            Self::Modulate
            | Self::Add
            | Self::AddSigned
            | Self::Subtract
            | Self::Dot3Rgb
            | Self::Dot3Rgba => 2,
            Self::Lerp | Self::MultiplyAdd | Self::AddMultiply => 3,
            Self::Unknown(_) => 0,
        }
    }
}

/// One channel of one of the element-wise operations (everything but DOT3), in u32 arithmetic.
#[inline]
fn op_channel(op: TevOp, a: u32, b: u32, c: u32) -> u8 {
    let r = match op {
        TevOp::Replace => a,
        TevOp::Modulate => a * b / 255,
        TevOp::Add => (a + b).min(255),
        // UNVERIFIED: 0.5 is represented as 128 (Citra's choice, with a TODO to verify it).
        TevOp::AddSigned => (a + b).saturating_sub(128).min(255),
        TevOp::Lerp => (a * c + b * (255 - c)) / 255,
        TevOp::Subtract => a.saturating_sub(b),
        TevOp::MultiplyAdd => ((a * b + 255 * c) / 255).min(255),
        TevOp::AddMultiply => (a + b).min(255) * c / 255,
        // DOT3 is handled by the caller; unknown operations give 0.
        TevOp::Dot3Rgb | TevOp::Dot3Rgba | TevOp::Unknown(_) => 0,
    };
    r as u8
}

/// The DOT3 value of two RGB triples: a sum of three signed per-channel terms, clamped to
/// 0..=255.
///
/// Number format: each 8-bit channel `x` stands for `(2x − 255)/255` in [−1, 1], held as a
/// sign and a magnitude (units of 1/255) in **one's complement**: with `d = 2x − 255`, it is `d`
/// for `x ≥ 0x80` and `!d = −d − 1 = 254 − 2x` for `x < 0x80` (so 0x7F has magnitude 0 and
/// 0x00 has 254, while 0x80 is +1 and 0xFF is +255). Each term multiplies the two magnitudes,
/// rounds the product divided by 255 to nearest (`(m·n + 127) / 255`; no ties are possible), and
/// if the two signs differ applies the one's complement again: `!r = −r − 1`. So a negative
/// product is one lower than its magnitude says, and 0x80·0x7F is −1, not 0.
///
/// HW: hardware fact TE-4 (`docs/hardware-behaviour.md`, Lectem's measured table in
/// `tests/fixtures/hw/dot3_rgb.tsv`): this reproduces all 2,816 measured entries (11 patterns ×
/// 256 inputs). The table pins the magnitudes (both signs, through (x,x,x)·(x,x,x)), the
/// rounding of positive products (divisor 255, not 256: 0x83·0xE4 = 7·201/255 = 5.52 → 6), and
/// `!0 = −1` for a negative zero-magnitude product. UNVERIFIED(TE-4): negative products with a
/// non-zero magnitude are only ever seen clamped away to 0 in the table, so `−r − 1` (rather than
/// `−r`) for them is the one's-complement reading, not a measurement; likewise the exact
/// divide-by-255 rounding is only checked on the products the table contains (an approximation
/// such as `(p + (p >> 8) + 128) >> 8` differs on 12 other products). Dot3_RGBA verified in
/// PR #2671.
#[inline]
pub fn dot3(a: [u8; 3], b: [u8; 3]) -> u8 {
    /// (negative, magnitude) of a channel in the one's-complement format above.
    #[inline]
    fn sign_magnitude(x: u8) -> (bool, i32) {
        let d = 2 * i32::from(x) - 255;
        if d < 0 { (true, !d) } else { (false, d) }
    }
    let mut sum = 0i32;
    for ch in 0..3 {
        let (neg_a, mag_a) = sign_magnitude(a[ch]);
        let (neg_b, mag_b) = sign_magnitude(b[ch]);
        let r = (mag_a * mag_b + 127) / 255;
        sum += if neg_a != neg_b { !r } else { r };
    }
    sum.clamp(0, 255) as u8
}

/// What "Previous" (source 15) reads in stage 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreviousInStage0 {
    /// (0, 0, 0, 0): Citra GL before PR #6921.
    Zero,
    /// The primary (vertex) colour: the console, Panda3DS, Citra since PR #6921.
    PrimaryColor,
}

/// The stage-0 "Previous" behaviour in use.
///
/// HW: hardware fact TE-1 (`docs/hardware-behaviour.md`): GPUCode's tev_test (Citra PR #6921)
/// draws the vertex colour on a 3DS where Citra drew black. (Before that fact, `pica-raster.md`
/// §6.6 recommended 0 for want of evidence.)
pub const PREVIOUS_IN_STAGE0: PreviousInStage0 = PreviousInStage0::PrimaryColor;

/// What DOT3 selected as the **alpha** operation (without Dot3_RGBA as the RGB operation) gives.
///
/// UNVERIFIED: Citra returns 0 (unimplemented); the hardware result is unknown. We do the same
/// and report it as a diagnostic.
const DOT3_AS_ALPHA_OP_RESULT: u8 = 0;

/// One decoded combiner stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TevStage {
    /// RGB sources 0/1/2 (SOURCE bits 0-3 / 4-7 / 8-11).
    pub rgb_source: [TevSource; 3],
    /// Alpha sources 0/1/2 (SOURCE bits 16-19 / 20-23 / 24-27).
    pub alpha_source: [TevSource; 3],
    /// RGB operands (OPERAND bits 0-3 / 4-7 / 8-11).
    pub rgb_operand: [ColorOperand; 3],
    /// Alpha operands (OPERAND bits 12-14 / 16-18 / 20-22).
    pub alpha_operand: [AlphaOperand; 3],
    /// RGB operation (COMBINER bits 0-3).
    pub rgb_op: TevOp,
    /// Alpha operation (COMBINER bits 16-19).
    pub alpha_op: TevOp,
    /// Constant colour (COLOR: R bits 0-7, G 8-15, B 16-23, A 24-31, unsigned 0.8).
    pub constant: Rgba,
    /// RGB scale: 1, 2 or 4 (SCALE bits 0-1: 0 → ×1, 1 → ×2, 2 → ×4, 3 → see [`scale_from_bits`]).
    pub rgb_scale: u8,
    /// Alpha scale (SCALE bits 16-17, same encoding).
    pub alpha_scale: u8,
    /// True if either scale field holds the reserved value 3.
    pub scale_reserved: bool,
}

/// Decodes a 2-bit combiner scale field to its factor.
///
/// UNVERIFIED: 3 is reserved; Citra uses ×1 and so do we.
pub const fn scale_from_bits(v: u32) -> u8 {
    match v & 3 {
        1 => 2,
        2 => 4,
        _ => 1,
    }
}

/// Register base of each combiner stage.
pub const TEV_STAGE_BASE: [usize; 6] = [0x0C0, 0x0C8, 0x0D0, 0x0D8, 0x0F0, 0x0F8];

impl TevStage {
    /// Decodes stage `i` (0-5; larger values read stage 5) from its five registers at
    /// [`TEV_STAGE_BASE`]`[i]`, through the catalogue's typed view.
    pub fn from_regs(regs: &[u32; 0x300], i: usize) -> Self {
        let r = Regs::new(regs);
        // `tev_stage` returns None only for stage ≥ 6, which `min(5)` rules out.
        let Some(v) = r.tev_stage(i.min(5)) else {
            return TevStage::PASS_THROUGH;
        };
        let src = |s: pica_cmd::regs::tev::TevSource| TevSource::from_bits(s.raw());
        let rgb_scale_raw = v.scales.rgb_scale.raw();
        let alpha_scale_raw = v.scales.alpha_scale.raw();
        TevStage {
            rgb_source: v.sources.rgb.map(src),
            alpha_source: v.sources.alpha.map(src),
            rgb_operand: v.operands.rgb.map(|o| ColorOperand::from_bits(o.raw())),
            alpha_operand: v.operands.alpha.map(|o| AlphaOperand::from_bits(o.raw())),
            rgb_op: TevOp::from_bits(v.combiner.rgb_op.raw()),
            alpha_op: TevOp::from_bits(v.combiner.alpha_op.raw()),
            constant: v.const_color.to_word().to_le_bytes(),
            rgb_scale: scale_from_bits(rgb_scale_raw),
            alpha_scale: scale_from_bits(alpha_scale_raw),
            scale_reserved: rgb_scale_raw == 3 || alpha_scale_raw == 3,
        }
    }

    /// A stage that passes the previous stage's output through unchanged.
    pub const PASS_THROUGH: TevStage = TevStage {
        rgb_source: [TevSource::Previous; 3],
        alpha_source: [TevSource::Previous; 3],
        rgb_operand: [ColorOperand::Rgb; 3],
        alpha_operand: [AlphaOperand::Alpha; 3],
        rgb_op: TevOp::Replace,
        alpha_op: TevOp::Replace,
        constant: [0; 4],
        rgb_scale: 1,
        alpha_scale: 1,
        scale_reserved: false,
    };

    /// True if the stage outputs exactly its "Previous" input (replace previous.rgb and
    /// previous.a, scale 1). Such stages are skipped in the per-fragment loop.
    pub fn is_pass_through(&self) -> bool {
        self.rgb_op == TevOp::Replace
            && self.rgb_source[0] == TevSource::Previous
            && self.rgb_operand[0] == ColorOperand::Rgb
            && self.rgb_scale == 1
            && self.alpha_op == TevOp::Replace
            && self.alpha_source[0] == TevSource::Previous
            && self.alpha_operand[0] == AlphaOperand::Alpha
            && self.alpha_scale == 1
    }

    /// The sources this stage actually reads (only the inputs its operations use).
    pub fn sources_read(&self) -> impl Iterator<Item = TevSource> + '_ {
        let n_rgb = self.rgb_op.arity();
        let n_a = if self.rgb_op == TevOp::Dot3Rgba {
            0
        } else {
            self.alpha_op.arity()
        };
        self.rgb_source[..n_rgb]
            .iter()
            .chain(&self.alpha_source[..n_a])
            .copied()
    }
}

/// The per-fragment inputs of the combiners (all unsigned 0.8 per channel).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TevInputs {
    /// Source 0: primary colour.
    pub primary: Rgba,
    /// Source 1: primary fragment colour (lighting).
    pub fragment_primary: Rgba,
    /// Source 2: secondary fragment colour (lighting).
    pub fragment_secondary: Rgba,
    /// Sources 3-6: texture units 0-3.
    pub texture: [Rgba; 4],
}

/// A configuration the combiners handle with a guess; reported once per draw.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, thiserror::Error,
)]
pub enum TevIssue {
    /// An undocumented source (7-12) is read.
    #[error("combiner stage {stage} reads undocumented source {value}")]
    UnknownSource {
        /// Stage 0-5.
        stage: u8,
        /// The source value.
        value: u8,
    },
    /// An undocumented RGB operand is used.
    #[error("combiner stage {stage} uses undocumented operand {value}")]
    UnknownOperand {
        /// Stage 0-5.
        stage: u8,
        /// The operand value.
        value: u8,
    },
    /// An undocumented operation (10-15) is used.
    #[error("combiner stage {stage} uses undocumented operation {value}")]
    UnknownOp {
        /// Stage 0-5.
        stage: u8,
        /// The operation value.
        value: u8,
    },
    /// DOT3 used as the alpha operation alone (result unknown, we give 0).
    #[error("combiner stage {stage} uses DOT3 as its alpha operation alone (alpha 0)")]
    Dot3AlphaOp {
        /// Stage 0-5.
        stage: u8,
    },
    /// Scale field value 3 (reserved).
    #[error("combiner stage {stage} uses the reserved scale value 3")]
    ReservedScale {
        /// Stage 0-5.
        stage: u8,
    },
}

/// The combiner configuration of a draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TevConfig {
    /// The six stages.
    pub stages: [TevStage; 6],
    /// Initial combiner-buffer colour (reg 0x0FD, R bits 0-7 … A bits 24-31, unsigned 0.8).
    pub buffer_color: Rgba,
    /// Bit i (0-3): stage i writes its RGB output to the combiner buffer (reg 0x0E0 bits 8-11).
    pub update_rgb: u8,
    /// Bit i (0-3): stage i writes its alpha output to the combiner buffer (reg 0x0E0 bits 12-15).
    pub update_alpha: u8,
}

impl TevConfig {
    /// Decodes the combiner registers (see the module doc) through the catalogue's views.
    pub fn from_regs(regs: &[u32; 0x300]) -> Self {
        let r = Regs::new(regs);
        let mut stages = [TevStage::PASS_THROUGH; 6];
        for (i, s) in stages.iter_mut().enumerate() {
            *s = TevStage::from_regs(regs, i);
        }
        let upd = r.texenv_update_buffer();
        TevConfig {
            stages,
            buffer_color: r.texenv_buffer_color().to_word().to_le_bytes(),
            update_rgb: upd.rgb_buffer_update & 0xF,
            update_alpha: upd.alpha_buffer_update & 0xF,
        }
    }

    /// True if any stage reads `src` (through an input its operation uses).
    ///
    /// Stages are considered even when a later stage ignores their output, so this is
    /// conservative: if it says `false`, the source's value cannot change the result.
    pub fn reads(&self, src: TevSource) -> bool {
        self.stages
            .iter()
            .any(|s| s.sources_read().any(|x| x == src))
    }

    /// Guesses and undocumented values in this configuration, for diagnostics.
    pub fn issues(&self) -> Vec<TevIssue> {
        let mut out = Vec::new();
        for (i, s) in self.stages.iter().enumerate() {
            let stage = i as u8;
            for src in s.sources_read() {
                if let TevSource::Unknown(value) = src {
                    out.push(TevIssue::UnknownSource { stage, value });
                }
            }
            for o in &s.rgb_operand[..s.rgb_op.arity()] {
                if let ColorOperand::Unknown(value) = o {
                    out.push(TevIssue::UnknownOperand {
                        stage,
                        value: *value,
                    });
                }
            }
            for op in [s.rgb_op, s.alpha_op] {
                if let TevOp::Unknown(value) = op {
                    out.push(TevIssue::UnknownOp { stage, value });
                }
            }
            if s.rgb_op != TevOp::Dot3Rgba && matches!(s.alpha_op, TevOp::Dot3Rgb | TevOp::Dot3Rgba)
            {
                out.push(TevIssue::Dot3AlphaOp { stage });
            }
            if s.scale_reserved {
                out.push(TevIssue::ReservedScale { stage });
            }
        }
        out.dedup();
        out
    }

    /// Runs the six stages for one fragment.
    ///
    /// The combiner buffer lags one stage (HW: verified by fincs, \[C\] PR #1261; `pica-raster.md`
    /// §6.5): stage 0 reads (0, 0, 0, 0) as "previous buffer", stage 1 reads
    /// [`TevConfig::buffer_color`], stage k ≥ 2 reads the buffer as updated by stages ≤ k − 2.
    /// Only stages 0-3 can update it.
    ///
    /// This is the readable reference; the pixel pipeline runs the equivalent compiled
    /// [`TevProgram`].
    pub fn combine(&self, inp: &TevInputs) -> Rgba {
        self.combine_inner(inp, None)
    }

    /// [`TevConfig::combine`] that also records, per stage, its inputs after operand
    /// selection, its output and the combiner buffer it read (pixel history).
    pub fn combine_traced(&self, inp: &TevInputs, trace: &mut [TevStageRecord; 6]) -> Rgba {
        self.combine_inner(inp, Some(trace))
    }

    fn combine_inner(&self, inp: &TevInputs, mut trace: Option<&mut [TevStageRecord; 6]>) -> Rgba {
        let mut prev: Rgba = match PREVIOUS_IN_STAGE0 {
            PreviousInStage0::Zero => [0; 4],
            PreviousInStage0::PrimaryColor => inp.primary,
        };
        let mut buffer: Rgba = [0; 4];
        let mut next_buffer = self.buffer_color;
        for (i, st) in self.stages.iter().enumerate() {
            let mut rec = trace.as_deref_mut().and_then(|t| t.get_mut(i));
            if let Some(r) = rec.as_deref_mut() {
                *r = TevStageRecord {
                    stage: i as u8,
                    active: !st.is_pass_through(),
                    buffer,
                    ..TevStageRecord::default()
                };
            }
            if !st.is_pass_through() {
                prev = eval_stage(st, inp, prev, buffer, rec.as_deref_mut());
            }
            if let Some(r) = rec {
                r.output = prev;
            }
            buffer = next_buffer;
            if i < 4 {
                if self.update_rgb & (1 << i) != 0 {
                    next_buffer[..3].copy_from_slice(&prev[..3]);
                }
                if self.update_alpha & (1 << i) != 0 {
                    next_buffer[3] = prev[3];
                }
            }
        }
        prev
    }
}

/// Which part of a combiner stage's output a [`TevSolo`] shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum SoloChannel {
    /// The stage's RGB, written opaque: `(r, g, b, 255)`.
    Color,
    /// The stage's alpha as grey, written opaque: `(a, a, a, 255)`.
    Alpha,
    /// The stage's RGBA as it is.
    Both,
}

/// A debugging override of the combiners (not a hardware feature): "solo" one stage, i.e. use
/// stage `stage`'s output (or a channel of it) as the fragment's final colour.
///
/// The pixel pipeline applies it on the reference path only (see
/// `PixelPipeline::set_tev_solo`): the fragment still goes through the alpha test (against the
/// **real** combiner output, so the same fragments survive as without the solo), the stencil
/// and depth tests and the colour write mask, but fog and blending / logic op are skipped, so
/// the colour buffer receives exactly [`TevSolo::value`] of stage `stage`'s output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct TevSolo {
    /// The stage 0-5 whose output is shown (larger values are treated as 5).
    pub stage: u8,
    /// What of its output is shown.
    pub channel: SoloChannel,
}

impl TevSolo {
    /// The colour written for a stage output `out`, per [`TevSolo::channel`].
    #[inline]
    pub const fn value(&self, out: Rgba) -> Rgba {
        let [r, g, b, a] = out;
        match self.channel {
            SoloChannel::Color => [r, g, b, 255],
            SoloChannel::Alpha => [a, a, a, 255],
            SoloChannel::Both => out,
        }
    }

    /// The combiner configuration whose final output is stage [`TevSolo::stage`]'s output:
    /// `cfg` with every later stage made a pass-through. (Buffer updates of later stages cannot
    /// change the previous stage's output, so they need no change.)
    pub fn config(&self, cfg: &TevConfig) -> TevConfig {
        let mut out = *cfg;
        let k = usize::from(self.stage.min(5));
        for st in &mut out.stages[k + 1..] {
            *st = TevStage::PASS_THROUGH;
        }
        out
    }
}

#[inline]
fn source(src: TevSource, st: &TevStage, inp: &TevInputs, prev: Rgba, buffer: Rgba) -> Rgba {
    match src {
        TevSource::PrimaryColor => inp.primary,
        TevSource::FragmentPrimary => inp.fragment_primary,
        TevSource::FragmentSecondary => inp.fragment_secondary,
        TevSource::Texture0 => inp.texture[0],
        TevSource::Texture1 => inp.texture[1],
        TevSource::Texture2 => inp.texture[2],
        TevSource::Texture3 => inp.texture[3],
        TevSource::PreviousBuffer => buffer,
        TevSource::Constant => st.constant,
        TevSource::Previous => prev,
        TevSource::Unknown(_) => [0; 4],
    }
}

/// Evaluates one stage: RGB and alpha combiners, then the scales (saturating at 255).
#[inline]
fn eval_stage(
    st: &TevStage,
    inp: &TevInputs,
    prev: Rgba,
    buffer: Rgba,
    rec: Option<&mut TevStageRecord>,
) -> Rgba {
    // Inputs the operation does not read are left at 0 (never fetched).
    let mut rgb_in = [[0u8; 3]; 3];
    for (k, slot) in rgb_in.iter_mut().enumerate().take(st.rgb_op.arity()) {
        *slot = st.rgb_operand[k].apply(source(st.rgb_source[k], st, inp, prev, buffer));
    }
    let rgb: [u8; 3] = match st.rgb_op {
        TevOp::Dot3Rgb | TevOp::Dot3Rgba => [dot3(rgb_in[0], rgb_in[1]); 3],
        op => {
            let mut r = [0u8; 3];
            for (ch, o) in r.iter_mut().enumerate() {
                *o = op_channel(
                    op,
                    u32::from(rgb_in[0][ch]),
                    u32::from(rgb_in[1][ch]),
                    u32::from(rgb_in[2][ch]),
                );
            }
            r
        }
    };

    let mut alpha_in = [0u8; 3];
    let alpha: u8 = if st.rgb_op == TevOp::Dot3Rgba {
        // HW: [C] PR #2671: the DOT3 result is also the alpha output; the alpha combiner is
        // skipped (its scale still applies below).
        rgb[0]
    } else {
        let mut a_in = [0u32; 3];
        for (k, slot) in a_in.iter_mut().enumerate().take(st.alpha_op.arity()) {
            *slot = u32::from(st.alpha_operand[k].apply(source(
                st.alpha_source[k],
                st,
                inp,
                prev,
                buffer,
            )));
        }
        for (d, &a) in alpha_in.iter_mut().zip(&a_in) {
            *d = a as u8;
        }
        match st.alpha_op {
            TevOp::Dot3Rgb | TevOp::Dot3Rgba => DOT3_AS_ALPHA_OP_RESULT,
            op => op_channel(op, a_in[0], a_in[1], a_in[2]),
        }
    };

    if let Some(r) = rec {
        r.rgb_in = rgb_in;
        r.alpha_in = alpha_in;
    }
    let rs = u32::from(st.rgb_scale);
    let as_ = u32::from(st.alpha_scale);
    [
        (u32::from(rgb[0]) * rs).min(255) as u8,
        (u32::from(rgb[1]) * rs).min(255) as u8,
        (u32::from(rgb[2]) * rs).min(255) as u8,
        (u32::from(alpha) * as_).min(255) as u8,
    ]
}

/// A combiner configuration compiled for fast per-fragment evaluation (decode once, run many).
///
/// Equivalent to [`TevConfig::combine`] (the readable reference, checked against this by a
/// differential test) but with every source, operand and pass-through decision resolved to
/// table indices up front: sources become slots of a 16-entry table indexed by the source
/// number, operands become channel selectors plus an XOR mask (`255 − c == c ^ 255` for u8).
#[derive(Clone, Copy, Debug)]
pub struct TevProgram {
    stages: [CompiledStage; 6],
    /// Number of leading entries of `stages` that are used.
    n: usize,
    buffer_color: Rgba,
    update_rgb: u8,
    update_alpha: u8,
    /// True if a used stage reads the combiner buffer (slot 13); otherwise the buffer
    /// bookkeeping is skipped.
    reads_buffer: bool,
    /// The active stages of `stages[..n]` in order (pass-through stages left out): what runs
    /// when the buffer is not read.
    active: [CompiledStage; 6],
    /// Number of leading entries of `active` that are used.
    n_active: usize,
}

#[derive(Clone, Copy, Debug)]
struct CompiledStage {
    /// Stage index 0-5 (buffer updates depend on it).
    index: u8,
    /// False for pass-through stages (they only take part in the buffer bookkeeping).
    active: bool,
    rgb_src: [u8; 3],
    /// Per input: channel index into `[r, g, b, a, 0]` for each of the three outputs.
    rgb_sel: [[u8; 3]; 3],
    rgb_xor: [u8; 3],
    alpha_src: [u8; 3],
    alpha_sel: [u8; 3],
    alpha_xor: [u8; 3],
    rgb_op: TevOp,
    alpha_op: TevOp,
    constant: Rgba,
    rgb_scale: u32,
    alpha_scale: u32,
    /// The stage resolved to a specialised form, if it has one.
    fast: FastStage,
}

/// Common stage shapes evaluated without operand selection: the RGB and alpha combiners use
/// the same operation on the same source slots, every operand read is the plain colour /
/// alpha, and both scales are 1. Same result as [`CompiledStage::eval`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FastStage {
    /// No specialised form: the generic evaluation.
    Generic,
    /// `REPLACE(t[a])`.
    Replace(u8),
    /// `MODULATE(t[a], t[b])`: `a·b/255` per channel.
    Modulate(u8, u8),
    /// `ADD(t[a], t[b])`: `min(a + b, 255)` per channel.
    Add(u8, u8),
}

/// Slot of the source table for source `s` (sources 7-12 map to an all-zero slot).
const fn slot(s: TevSource) -> u8 {
    match s {
        TevSource::PrimaryColor => 0,
        TevSource::FragmentPrimary => 1,
        TevSource::FragmentSecondary => 2,
        TevSource::Texture0 => 3,
        TevSource::Texture1 => 4,
        TevSource::Texture2 => 5,
        TevSource::Texture3 => 6,
        TevSource::Unknown(_) => 7,
        TevSource::PreviousBuffer => 13,
        TevSource::Constant => 14,
        TevSource::Previous => 15,
    }
}

const fn rgb_selector(o: ColorOperand) -> ([u8; 3], u8) {
    match o {
        ColorOperand::Rgb => ([0, 1, 2], 0),
        ColorOperand::OneMinusRgb => ([0, 1, 2], 255),
        ColorOperand::Alpha => ([3; 3], 0),
        ColorOperand::OneMinusAlpha => ([3; 3], 255),
        ColorOperand::Red => ([0; 3], 0),
        ColorOperand::OneMinusRed => ([0; 3], 255),
        ColorOperand::Green => ([1; 3], 0),
        ColorOperand::OneMinusGreen => ([1; 3], 255),
        ColorOperand::Blue => ([2; 3], 0),
        ColorOperand::OneMinusBlue => ([2; 3], 255),
        ColorOperand::Unknown(_) => ([4; 3], 0),
    }
}

const fn alpha_selector(o: AlphaOperand) -> (u8, u8) {
    match o {
        AlphaOperand::Alpha => (3, 0),
        AlphaOperand::OneMinusAlpha => (3, 255),
        AlphaOperand::Red => (0, 0),
        AlphaOperand::OneMinusRed => (0, 255),
        AlphaOperand::Green => (1, 0),
        AlphaOperand::OneMinusGreen => (1, 255),
        AlphaOperand::Blue => (2, 0),
        AlphaOperand::OneMinusBlue => (2, 255),
    }
}

impl TevProgram {
    /// Compiles `cfg`.
    pub fn new(cfg: &TevConfig) -> Self {
        let mut stages = [CompiledStage {
            index: 0,
            active: false,
            rgb_src: [15; 3],
            rgb_sel: [[0, 1, 2]; 3],
            rgb_xor: [0; 3],
            alpha_src: [15; 3],
            alpha_sel: [3; 3],
            alpha_xor: [0; 3],
            rgb_op: TevOp::Replace,
            alpha_op: TevOp::Replace,
            constant: [0; 4],
            rgb_scale: 1,
            alpha_scale: 1,
            fast: FastStage::Generic,
        }; 6];
        for (i, (c, st)) in stages.iter_mut().zip(&cfg.stages).enumerate() {
            c.index = i as u8;
            c.active = !st.is_pass_through();
            for k in 0..3 {
                c.rgb_src[k] = slot(st.rgb_source[k]);
                (c.rgb_sel[k], c.rgb_xor[k]) = rgb_selector(st.rgb_operand[k]);
                c.alpha_src[k] = slot(st.alpha_source[k]);
                (c.alpha_sel[k], c.alpha_xor[k]) = alpha_selector(st.alpha_operand[k]);
            }
            c.rgb_op = st.rgb_op;
            c.alpha_op = st.alpha_op;
            c.constant = st.constant;
            c.rgb_scale = u32::from(st.rgb_scale);
            c.alpha_scale = u32::from(st.alpha_scale);
            c.fast = c.specialise();
        }
        // Trailing pass-through stages beyond the last buffer-updating stage (0-3) and the last
        // active stage change nothing: drop them.
        let last_active = stages.iter().rposition(|c| c.active).map_or(0, |i| i + 1);
        let reads_buffer = stages[..last_active]
            .iter()
            .any(|c| c.active && (c.rgb_src.contains(&13) || c.alpha_src.contains(&13)));
        let mut active = stages;
        let mut n_active = 0;
        for c in stages[..last_active].iter().filter(|c| c.active) {
            active[n_active] = *c;
            n_active += 1;
        }
        TevProgram {
            stages,
            n: last_active,
            active,
            n_active,
            reads_buffer,
            buffer_color: cfg.buffer_color,
            update_rgb: cfg.update_rgb & 0xF,
            update_alpha: cfg.update_alpha & 0xF,
        }
    }

    /// Runs the combiners for one fragment (same result as [`TevConfig::combine`]).
    #[inline]
    pub fn run(&self, inp: &TevInputs) -> Rgba {
        let mut t: [Rgba; 16] = [[0; 4]; 16];
        t[0] = inp.primary;
        t[1] = inp.fragment_primary;
        t[2] = inp.fragment_secondary;
        t[3..7].copy_from_slice(&inp.texture);
        self.run_table(&mut t)
    }

    /// [`TevProgram::run`] on a source table the caller filled: entries 0-6 are sources 0-6
    /// (primary colour, the two fragment-lighting colours, textures 0-3); entries 7-12 must be
    /// zero; 13-15 are scratch. Building the table in place avoids a copy per fragment.
    #[inline(always)]
    pub fn run_table(&self, t: &mut [Rgba; 16]) -> Rgba {
        t[15] = match PREVIOUS_IN_STAGE0 {
            PreviousInStage0::Zero => [0; 4],
            PreviousInStage0::PrimaryColor => t[0],
        };
        if !self.reads_buffer {
            // No stage reads the buffer: its updates are unobservable, and the pass-through
            // stages change nothing.
            for c in &self.active[..self.n_active] {
                t[14] = c.constant;
                c.run_into(t);
            }
            return t[15];
        }
        t[13] = [0; 4];
        let mut next_buffer = self.buffer_color;
        for c in &self.stages[..self.n] {
            if c.active {
                t[14] = c.constant;
                c.run_into(t);
            }
            t[13] = next_buffer;
            let i = c.index;
            if self.update_rgb & (1 << i) != 0 {
                next_buffer[..3].copy_from_slice(&t[15][..3]);
            }
            if self.update_alpha & (1 << i) != 0 {
                next_buffer[3] = t[15][3];
            }
        }
        t[15]
    }

    /// [`TevProgram::run_table`] for fragments `0..n` of a batch, on the source table in
    /// structure-of-arrays form: `t[source][i]` is entry `source` of fragment `i`'s table, with
    /// the same contract per fragment as `run_table` (entries 7-12 zero, every entry the
    /// program reads written for fragments `0..n`, 13-15 scratch). `out[i]` receives fragment
    /// `i`'s combiner output, bit-identical to `run_table` on the column (the oracle of the
    /// batch kernels: `tev::tests`). Entries `n..` of every row are ignored.
    pub fn run_batch(&self, t: &mut BatchTable, n: usize, out: &mut [Rgba; FRAGMENT_BATCH]) {
        let n = n.min(FRAGMENT_BATCH);
        // Every stage runs over all FRAGMENT_BATCH lanes (fixed trip counts, so the per-stage
        // loops vectorise); lanes `n..` compute on whatever the rows hold, which is harmless
        // (u8 arithmetic that cannot panic) and never reaches `out`.
        t[15] = match PREVIOUS_IN_STAGE0 {
            PreviousInStage0::Zero => [[0; 4]; FRAGMENT_BATCH],
            PreviousInStage0::PrimaryColor => t[0],
        };
        if !self.reads_buffer {
            // As `run_table`: no stage reads the buffer, so only the active stages run.
            for c in &self.active[..self.n_active] {
                c.run_batch_into(t);
            }
        } else {
            t[13] = [[0; 4]; FRAGMENT_BATCH];
            // The buffer is per fragment: it takes the fragments' stage outputs.
            let mut next_buffer = [self.buffer_color; FRAGMENT_BATCH];
            for c in &self.stages[..self.n] {
                if c.active {
                    c.run_batch_into(t);
                }
                t[13] = next_buffer;
                let i = c.index;
                let rgb = self.update_rgb & (1 << i) != 0;
                let alpha = self.update_alpha & (1 << i) != 0;
                if rgb || alpha {
                    for (b, p) in next_buffer.iter_mut().zip(&t[15]) {
                        if rgb {
                            b[..3].copy_from_slice(&p[..3]);
                        }
                        if alpha {
                            b[3] = p[3];
                        }
                    }
                }
            }
        }
        out[..n].copy_from_slice(&t[15][..n]);
    }
}

/// One row of a [`BatchTable`]: one source's colour for every fragment of the batch.
type BatchRow = [Rgba; FRAGMENT_BATCH];

/// `p / 255` (truncating) for `p <= 255·255`, in u16 lanes without a division:
/// `(p + (p >> 8) + 1) >> 8` (checked against `/ 255` for every such `p` in `tev::tests`).
/// The sum stays below 65281, so it cannot overflow.
#[inline(always)]
fn div255(p: u16) -> u16 {
    (p + (p >> 8) + 1) >> 8
}

/// `out[i][ch] = f(a[i][ch], b[i][ch], c[i][ch])` for every fragment and channels `LO..HI`.
#[inline(always)]
fn lanes<const LO: usize, const HI: usize>(
    a: &BatchRow,
    b: &BatchRow,
    c: &BatchRow,
    out: &mut BatchRow,
    f: impl Fn(u8, u8, u8) -> u8,
) {
    for i in 0..FRAGMENT_BATCH {
        for ch in LO..HI {
            out[i][ch] = f(a[i][ch], b[i][ch], c[i][ch]);
        }
    }
}

/// [`op_channel`] over channels `LO..HI` of every fragment, the operation decided once: the
/// same integers in u16 lanes (`x·y / 255` as [`div255`]; `(a·b + 255·c) / 255` is
/// `c + a·b/255` exactly, since `255·c` divides evenly). DOT3 is the caller's; unknown
/// operations give 0 as in `op_channel`.
#[inline(always)]
fn op_lanes<const LO: usize, const HI: usize>(
    op: TevOp,
    [a, b, c]: &[BatchRow; 3],
    out: &mut BatchRow,
) {
    #[inline(always)]
    fn w(x: u8) -> u16 {
        u16::from(x)
    }
    match op {
        TevOp::Replace => lanes::<LO, HI>(a, b, c, out, |x, _, _| x),
        TevOp::Modulate => lanes::<LO, HI>(a, b, c, out, |x, y, _| div255(w(x) * w(y)) as u8),
        TevOp::Add => lanes::<LO, HI>(a, b, c, out, |x, y, _| x.saturating_add(y)),
        TevOp::AddSigned => lanes::<LO, HI>(a, b, c, out, |x, y, _| {
            (w(x) + w(y)).saturating_sub(128).min(255) as u8
        }),
        TevOp::Lerp => lanes::<LO, HI>(a, b, c, out, |x, y, z| {
            div255(w(x) * w(z) + w(y) * (255 - w(z))) as u8
        }),
        TevOp::Subtract => lanes::<LO, HI>(a, b, c, out, |x, y, _| x.saturating_sub(y)),
        TevOp::MultiplyAdd => lanes::<LO, HI>(a, b, c, out, |x, y, z| {
            z.saturating_add(div255(w(x) * w(y)) as u8)
        }),
        TevOp::AddMultiply => lanes::<LO, HI>(a, b, c, out, |x, y, z| {
            div255(w(x.saturating_add(y)) * w(z)) as u8
        }),
        TevOp::Dot3Rgb | TevOp::Dot3Rgba | TevOp::Unknown(_) => {
            lanes::<LO, HI>(a, b, c, out, |_, _, _| 0)
        }
    }
}

/// The combiners' source table of a batch of up to [`FRAGMENT_BATCH`] fragments, structure of
/// arrays: `t[source][fragment]` (sources numbered as in [`TevProgram::run_table`]).
pub type BatchTable = [[Rgba; FRAGMENT_BATCH]; 16];

impl CompiledStage {
    /// The specialised form of this stage (see [`FastStage`]).
    fn specialise(&self) -> FastStage {
        if self.rgb_op != self.alpha_op || self.rgb_scale != 1 || self.alpha_scale != 1 {
            return FastStage::Generic;
        }
        let arity = self.rgb_op.arity();
        let plain = (0..arity).all(|k| {
            self.rgb_src[k] == self.alpha_src[k]
                && self.rgb_sel[k] == [0, 1, 2]
                && self.rgb_xor[k] == 0
                && self.alpha_sel[k] == 3
                && self.alpha_xor[k] == 0
        });
        if !plain {
            return FastStage::Generic;
        }
        let [a, b, _] = self.rgb_src.map(|s| s & 15);
        match self.rgb_op {
            TevOp::Replace => FastStage::Replace(a),
            TevOp::Modulate => FastStage::Modulate(a, b),
            TevOp::Add => FastStage::Add(a, b),
            _ => FastStage::Generic,
        }
    }

    /// Evaluates the stage on the source table and stores its output in `t[15]`.
    ///
    /// Every arm stores its own result (rather than returning one value to a store after the
    /// `match`): merged, the arms' results went through a vector-to-word conversion of ~14
    /// instructions per stage. Slots are `& 15` (they are < 16 by construction, see [`slot`]),
    /// which removes the bounds checks.
    #[inline(always)]
    fn run_into(&self, t: &mut [Rgba; 16]) {
        t[15] = match self.fast {
            FastStage::Replace(a) => t[usize::from(a & 15)],
            FastStage::Modulate(a, b) => {
                let (x, y) = (t[usize::from(a & 15)], t[usize::from(b & 15)]);
                // Written out (not `array::map`, which is not always inlined).
                let m = |c: usize| (u32::from(x[c]) * u32::from(y[c]) / 255) as u8;
                [m(0), m(1), m(2), m(3)]
            }
            FastStage::Add(a, b) => {
                let (x, y) = (t[usize::from(a & 15)], t[usize::from(b & 15)]);
                [
                    x[0].saturating_add(y[0]),
                    x[1].saturating_add(y[1]),
                    x[2].saturating_add(y[2]),
                    x[3].saturating_add(y[3]),
                ]
            }
            FastStage::Generic => self.eval(t),
        };
    }

    /// [`CompiledStage::run_into`] for every fragment of a batch: writes the stage's
    /// constant to row 14 and the stage's output to row 15. The shape, sources, operand
    /// selections, operations and scales are decided once per stage, not per fragment.
    /// Through the AVX2 copy where the CPU has it ([`crate::pixel::isa`]).
    #[inline]
    fn run_batch_into(&self, t: &mut BatchTable) {
        isa::dispatch!(self.run_batch_into_avx2(t), self.run_batch_into_body(t))
    }

    isa::avx2_fn! {
        fn run_batch_into_avx2(&self, t: &mut BatchTable) {
            self.run_batch_into_body(t);
        }
    }

    #[inline(always)]
    fn run_batch_into_body(&self, t: &mut BatchTable) {
        t[14] = [self.constant; FRAGMENT_BATCH];
        let mut out = [[0u8; 4]; FRAGMENT_BATCH];
        match self.fast {
            FastStage::Replace(a) => out = t[usize::from(a & 15)],
            FastStage::Modulate(a, b) => {
                let (x, y) = (&t[usize::from(a & 15)], &t[usize::from(b & 15)]);
                op_lanes::<0, 4>(TevOp::Modulate, &[*x, *y, *y], &mut out);
            }
            FastStage::Add(a, b) => {
                let (x, y) = (&t[usize::from(a & 15)], &t[usize::from(b & 15)]);
                op_lanes::<0, 4>(TevOp::Add, &[*x, *y, *y], &mut out);
            }
            FastStage::Generic => self.eval_batch(t, &mut out),
        }
        t[15] = out;
    }

    /// [`CompiledStage::eval`] for every fragment of a batch, phase by phase: gather the
    /// operands (RGB selections in channels 0-2, the alpha selection in channel 3), run the
    /// operations, apply the scales.
    #[inline(always)]
    fn eval_batch(&self, t: &BatchTable, out: &mut BatchRow) {
        let dot3_rgba = self.rgb_op == TevOp::Dot3Rgba;
        // Operands the operations do not read stay 0, as in `eval`.
        let alpha_arity = if dot3_rgba { 0 } else { self.alpha_op.arity() };
        let mut ops = [[[0u8; 4]; FRAGMENT_BATCH]; 3];
        for (k, op) in ops.iter_mut().enumerate() {
            if k < self.rgb_op.arity() {
                let src = &t[usize::from(self.rgb_src[k] & 15)];
                let x = self.rgb_xor[k];
                for ch in 0..3 {
                    let sel = self.rgb_sel[k][ch];
                    if sel >= 4 {
                        // The all-zero selection (unknown operand, whose mask is 0).
                        continue;
                    }
                    let sel = usize::from(sel & 3);
                    for (o, s) in op.iter_mut().zip(src) {
                        o[ch] = s[sel] ^ x;
                    }
                }
            }
            if k < alpha_arity {
                let src = &t[usize::from(self.alpha_src[k] & 15)];
                let (sel, x) = (usize::from(self.alpha_sel[k] & 3), self.alpha_xor[k]);
                for (o, s) in op.iter_mut().zip(src) {
                    o[3] = s[sel] ^ x;
                }
            }
        }
        let rgb_dot3 = matches!(self.rgb_op, TevOp::Dot3Rgb | TevOp::Dot3Rgba);
        if rgb_dot3 {
            for (o, (a, b)) in out.iter_mut().zip(ops[0].iter().zip(&ops[1])) {
                let d = dot3([a[0], a[1], a[2]], [b[0], b[1], b[2]]);
                o[..3].fill(d);
                if dot3_rgba {
                    o[3] = d;
                }
            }
        } else if self.rgb_op == self.alpha_op {
            // One pass over all four channels (the alpha operands sit in channel 3).
            op_lanes::<0, 4>(self.rgb_op, &ops, out);
        } else {
            op_lanes::<0, 3>(self.rgb_op, &ops, out);
        }
        if !dot3_rgba && (rgb_dot3 || self.rgb_op != self.alpha_op) {
            match self.alpha_op {
                TevOp::Dot3Rgb | TevOp::Dot3Rgba => {
                    for o in out.iter_mut() {
                        o[3] = DOT3_AS_ALPHA_OP_RESULT;
                    }
                }
                op => op_lanes::<3, 4>(op, &ops, out),
            }
        }
        if self.rgb_scale != 1 || self.alpha_scale != 1 {
            // Scales are 1, 2 or 4: the products fit u16.
            let s = [
                self.rgb_scale,
                self.rgb_scale,
                self.rgb_scale,
                self.alpha_scale,
            ]
            .map(|x| x.min(4) as u16);
            for o in out.iter_mut() {
                for ch in 0..4 {
                    o[ch] = (u16::from(o[ch]) * s[ch]).min(255) as u8;
                }
            }
        }
    }

    #[inline]
    fn eval(&self, t: &[Rgba; 16]) -> Rgba {
        let mut a = [[0u8; 3]; 3];
        for k in 0..self.rgb_op.arity() {
            let [r, g, b, al] = t[usize::from(self.rgb_src[k] & 15)];
            let ext = [r, g, b, al, 0];
            let sel = self.rgb_sel[k];
            let x = self.rgb_xor[k];
            a[k] = [
                ext[usize::from(sel[0]) % 5] ^ x,
                ext[usize::from(sel[1]) % 5] ^ x,
                ext[usize::from(sel[2]) % 5] ^ x,
            ];
        }
        let rgb = match self.rgb_op {
            TevOp::Dot3Rgb | TevOp::Dot3Rgba => [dot3(a[0], a[1]); 3],
            op => {
                let mut r = [0u8; 3];
                for (ch, o) in r.iter_mut().enumerate() {
                    *o = op_channel(
                        op,
                        u32::from(a[0][ch]),
                        u32::from(a[1][ch]),
                        u32::from(a[2][ch]),
                    );
                }
                r
            }
        };
        let alpha = if self.rgb_op == TevOp::Dot3Rgba {
            rgb[0]
        } else {
            let mut v = [0u32; 3];
            for k in 0..self.alpha_op.arity() {
                let src = t[usize::from(self.alpha_src[k] & 15)];
                v[k] = u32::from(src[usize::from(self.alpha_sel[k] & 3)] ^ self.alpha_xor[k]);
            }
            match self.alpha_op {
                TevOp::Dot3Rgb | TevOp::Dot3Rgba => DOT3_AS_ALPHA_OP_RESULT,
                op => op_channel(op, v[0], v[1], v[2]),
            }
        };
        [
            (u32::from(rgb[0]) * self.rgb_scale).min(255) as u8,
            (u32::from(rgb[1]) * self.rgb_scale).min(255) as u8,
            (u32::from(rgb[2]) * self.rgb_scale).min(255) as u8,
            (u32::from(alpha) * self.alpha_scale).min(255) as u8,
        ]
    }
}

#[cfg(test)]
mod tests;
