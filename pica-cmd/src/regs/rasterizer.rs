//! Rasterizer registers 0x040-0x07F: culling, viewport, user clip plane, depth map, shader
//! output map, early depth, scissor, render-buffer size and output-attribute clocks.
//!
//! Stage: primitive assembly hand-off, clipping, viewport transform, rasterizer setup
//! (`pica-core.md` §2.2-§2.3, §8; `pica-raster.md` §1, §3.1). Inputs: register words. Outputs:
//! catalogue entries and typed getters on [`Regs`]. Registers: 0x040-0x044, 0x047-0x04B,
//! 0x04D-0x056, 0x061-0x068, 0x06A, 0x06D-0x06F.

use super::FieldKind::*;
use super::{F24, F31, Regs};

pica_enum! {
    /// Face culling mode (FACECULLING_CONFIG bits 0-1). Winding is judged in window
    /// coordinates with y up (`pica-raster.md` §4.2).
    pub enum CullMode {
        /// Nothing is culled.
        None = 0 => "NONE",
        /// [3DB] "front face (counter clockwise)": counter-clockwise triangles are culled;
        /// [C] calls it KeepClockWise.
        CullCcw = 1 => "CULL_CCW",
        /// Clockwise triangles are culled ([C] KeepCounterClockWise).
        CullCw = 2 => "CULL_CW",
    }
}

pica_enum! {
    /// Vertex output semantic of one output-register component (SH_OUTMAP_Oi, 5-bit fields).
    /// 0x11 and 0x15 are padding slots [C] accepts; 0x18-0x1E are invalid ([C] asserts).
    pub enum OutputSemantic {
        PositionX = 0x00 => "POSITION_X",
        PositionY = 0x01 => "POSITION_Y",
        PositionZ = 0x02 => "POSITION_Z",
        PositionW = 0x03 => "POSITION_W",
        QuatX = 0x04 => "NORMQUAT_X",
        QuatY = 0x05 => "NORMQUAT_Y",
        QuatZ = 0x06 => "NORMQUAT_Z",
        QuatW = 0x07 => "NORMQUAT_W",
        ColorR = 0x08 => "COLOR_R",
        ColorG = 0x09 => "COLOR_G",
        ColorB = 0x0A => "COLOR_B",
        ColorA = 0x0B => "COLOR_A",
        Texcoord0U = 0x0C => "TEXCOORD0_U",
        Texcoord0V = 0x0D => "TEXCOORD0_V",
        Texcoord1U = 0x0E => "TEXCOORD1_U",
        Texcoord1V = 0x0F => "TEXCOORD1_V",
        Texcoord0W = 0x10 => "TEXCOORD0_W",
        ViewX = 0x12 => "VIEW_X",
        ViewY = 0x13 => "VIEW_Y",
        ViewZ = 0x14 => "VIEW_Z",
        Texcoord2U = 0x16 => "TEXCOORD2_U",
        Texcoord2V = 0x17 => "TEXCOORD2_V",
        /// The component is not used (dropped).
        Unused = 0x1F => "UNUSED",
    }
}

pica_enum! {
    /// Early depth test function (EARLYDEPTH_FUNC bits 0-1, [3DB]). Not emulated by [C]/[P].
    pub enum EarlyDepthFunc {
        GreaterEqual = 0 => "GEQUAL",
        Greater = 1 => "GREATER",
        LessEqual = 2 => "LEQUAL",
        Less = 3 => "LESS",
    }
}

// UNVERIFIED: scissor mode 1 = exclude ([C]); alternative: undocumented / disabled.
pica_enum! {
    /// Scissor test mode (SCISSORTEST_MODE bits 0-1). [3DB] documents 0 and 3 only; mode 1 is
    /// [C]'s "exclude"; [C] treats 2 as disabled.
    pub enum ScissorMode {
        Disabled = 0 => "DISABLED",
        /// UNVERIFIED ([C] only): pixels inside the box are discarded.
        Exclude = 1 => "EXCLUDE",
        /// Pixels outside the box are discarded.
        Include = 3 => "INCLUDE",
    }
}

pica_enum! {
    /// Depth mapping mode (DEPTHMAP_ENABLE bit 0). [C]: 1 = depth from z/w (z-buffer), 0 =
    /// depth multiplied by w (w-buffer); [3DB] only says "enable depth range".
    pub enum DepthMapMode {
        WBuffer = 0 => "W_BUFFER",
        ZBuffer = 1 => "Z_BUFFER",
    }
}

layout! {
    /// Layout of FACECULLING_CONFIG (0x040).
    faceculling_config {
        MODE: 0..=1, Enum(CullMode::NAMES), "mode", "culling mode (unsigned enum; 3 is undocumented, [C] treats it like 2)";
    }
}

layout! {
    /// Layout of the float24 registers VIEWPORT_WIDTH/HEIGHT (0x041/0x043),
    /// DEPTHMAP_SCALE/OFFSET (0x04D/0x04E).
    f24_word {
        VALUE: 0..=23, Float24, "value", "float1.7.16";
    }
}

layout! {
    /// Layout of VIEWPORT_INVW / VIEWPORT_INVH (0x042/0x044).
    viewport_inv {
        VALUE: 1..=31, Float31, "value", "float1.7.23 in bits 1-31: 2 / width (or 2 / height); ignored by [C]/[P]";
    }
}

layout! {
    /// Layout of FRAGOP_CLIP (0x047).
    fragop_clip {
        ENABLE: 0..=0, Bool, "enable", "1 = user clip plane enabled";
    }
}

layout! {
    /// Layout of FRAGOP_CLIP_DATA0-3 (0x048-0x04B).
    fragop_clip_data {
        COEFFICIENT: 0..=23, Float24, "coefficient", "float1.7.16 plane coefficient; a vertex is inside when a·x + b·y + c·z + d·w >= 0";
    }
}

layout! {
    /// Layout of SH_OUTMAP_TOTAL (0x04F).
    sh_outmap_total {
        COUNT: 0..=2, Uint, "count", "unsigned: number of SH_OUTMAP_Oi registers in use (1-7)";
    }
}

layout! {
    /// Layout of SH_OUTMAP_O0-O6 (0x050-0x056).
    sh_outmap {
        X: 0..=4, Enum(OutputSemantic::NAMES), "x", "semantic of component x (5-bit unsigned enum)";
        Y: 8..=12, Enum(OutputSemantic::NAMES), "y", "semantic of component y (5-bit unsigned enum)";
        Z: 16..=20, Enum(OutputSemantic::NAMES), "z", "semantic of component z (5-bit unsigned enum)";
        W: 24..=28, Enum(OutputSemantic::NAMES), "w", "semantic of component w (5-bit unsigned enum)";
    }
}

layout! {
    /// Layout of EARLYDEPTH_FUNC (0x061).
    earlydepth_func {
        FUNC: 0..=1, Enum(EarlyDepthFunc::NAMES), "func", "early depth function (unsigned enum)";
    }
}

layout! {
    /// Layout of single-bit enable registers EARLYDEPTH_TEST1 (0x062), SH_OUTATTR_MODE (0x064).
    enable_bit {
        ENABLE: 0..=0, Bool, "enable", "1 = enabled";
    }
}

layout! {
    /// Layout of EARLYDEPTH_CLEAR (0x063).
    earlydepth_clear {
        TRIGGER: 0..=0, Trigger, "trigger", "1 = clear the early-depth data";
    }
}

layout! {
    /// Layout of SH_OUTATTR_MODE (0x064).
    sh_outattr_mode {
        USE_TEXCOORDS: 0..=0, Bool, "use_texcoords", "1 = texture coordinates are used";
    }
}

layout! {
    /// Layout of SCISSORTEST_MODE (0x065).
    scissortest_mode {
        MODE: 0..=1, Enum(ScissorMode::NAMES), "mode", "scissor mode (unsigned enum)";
    }
}

layout! {
    /// Layout of SCISSORTEST_POS (0x066).
    scissortest_pos {
        X1: 0..=9, Uint, "x1", "unsigned pixel x of the first corner";
        Y1: 16..=25, Uint, "y1", "unsigned pixel y of the first corner";
    }
}

layout! {
    /// Layout of SCISSORTEST_DIM (0x067).
    scissortest_dim {
        X2: 0..=9, Uint, "x2", "unsigned pixel x of the second corner (inclusive)";
        Y2: 16..=25, Uint, "y2", "unsigned pixel y of the second corner (inclusive)";
    }
}

layout! {
    /// Layout of VIEWPORT_XY (0x068).
    viewport_xy {
        X: 0..=9, Int, "x", "signed 10-bit viewport corner x (pixels)";
        Y: 16..=25, Int, "y", "signed 10-bit viewport corner y (pixels)";
    }
}

layout! {
    /// Layout of EARLYDEPTH_DATA (0x06A).
    earlydepth_data {
        CLEAR_VALUE: 0..=23, Uint, "clear_value", "unsigned 24-bit early-depth clear value";
    }
}

layout! {
    /// Layout of DEPTHMAP_ENABLE (0x06D).
    depthmap_enable {
        MODE: 0..=0, Enum(DepthMapMode::NAMES), "mode", "1 = z-buffer (depth from z/w), 0 = w-buffer ([C] semantics)";
    }
}

layout! {
    /// Layout of RENDERBUF_DIM (0x06E).
    renderbuf_dim {
        WIDTH: 0..=10, Uint, "width", "unsigned width in pixels";
        HEIGHT: 12..=21, Biased(1), "height", "unsigned height in pixels, stored minus 1";
        FIXED_1: 24..=24, Const(1), "fixed_1", "[3DB] always 1";
    }
}

layout! {
    /// Layout of SH_OUTATTR_CLOCK (0x06F).
    sh_outattr_clock {
        POSITION_Z: 0..=0, Bool, "position_z", "1 = position.z present";
        COLOR: 1..=1, Bool, "color", "1 = colour present";
        TEXCOORD0: 8..=8, Bool, "texcoord0", "1 = texcoord0 present";
        TEXCOORD1: 9..=9, Bool, "texcoord1", "1 = texcoord1 present";
        TEXCOORD2: 10..=10, Bool, "texcoord2", "1 = texcoord2 present";
        TEXCOORD0_W: 16..=16, Bool, "texcoord0_w", "1 = texcoord0.w present";
        NORMQUAT_VIEW: 24..=24, Bool, "normquat_or_view", "1 = normal quaternion or view vector present";
    }
}

registers! {
    block: Rasterizer;
    /// Face culling configuration.
    0x040 FACECULLING_CONFIG => faceculling_config;
    /// Viewport width / 2 (float24).
    0x041 VIEWPORT_WIDTH => f24_word;
    /// 2 / viewport width (float31 in bits 1-31).
    0x042 VIEWPORT_INVW => viewport_inv;
    /// Viewport height / 2 (float24).
    0x043 VIEWPORT_HEIGHT => f24_word;
    /// 2 / viewport height (float31 in bits 1-31).
    0x044 VIEWPORT_INVH => viewport_inv;
    /// User clip plane enable.
    0x047 FRAGOP_CLIP => fragop_clip;
    /// User clip plane coefficient a (float24).
    0x048 FRAGOP_CLIP_DATA0 => fragop_clip_data;
    /// User clip plane coefficient b (float24).
    0x049 FRAGOP_CLIP_DATA1 => fragop_clip_data;
    /// User clip plane coefficient c (float24).
    0x04A FRAGOP_CLIP_DATA2 => fragop_clip_data;
    /// User clip plane coefficient d (float24).
    0x04B FRAGOP_CLIP_DATA3 => fragop_clip_data;
    /// Depth map scale, near - far (float24; [C] `viewport_depth_range`).
    0x04D DEPTHMAP_SCALE => f24_word;
    /// Depth map offset, near + polygon offset (float24; [C] `viewport_depth_near_plane`).
    0x04E DEPTHMAP_OFFSET => f24_word;
    /// Number of output-map registers in use.
    0x04F SH_OUTMAP_TOTAL => sh_outmap_total;
    /// Output map of output register slot 0.
    0x050 SH_OUTMAP_O0 => sh_outmap;
    /// Output map of output register slot 1.
    0x051 SH_OUTMAP_O1 => sh_outmap;
    /// Output map of output register slot 2.
    0x052 SH_OUTMAP_O2 => sh_outmap;
    /// Output map of output register slot 3.
    0x053 SH_OUTMAP_O3 => sh_outmap;
    /// Output map of output register slot 4.
    0x054 SH_OUTMAP_O4 => sh_outmap;
    /// Output map of output register slot 5.
    0x055 SH_OUTMAP_O5 => sh_outmap;
    /// Output map of output register slot 6.
    0x056 SH_OUTMAP_O6 => sh_outmap;
    /// Early depth test function.
    0x061 EARLYDEPTH_FUNC => earlydepth_func;
    /// Early depth test enable (first of two enables; see EARLYDEPTH_TEST2 0x118).
    0x062 EARLYDEPTH_TEST1 => enable_bit;
    /// Early depth clear trigger.
    0x063 EARLYDEPTH_CLEAR => earlydepth_clear;
    /// Shader output attribute mode.
    0x064 SH_OUTATTR_MODE => sh_outattr_mode;
    /// Scissor test mode.
    0x065 SCISSORTEST_MODE => scissortest_mode;
    /// Scissor box first corner.
    0x066 SCISSORTEST_POS => scissortest_pos;
    /// Scissor box second corner (inclusive; [C] adds 1 internally).
    0x067 SCISSORTEST_DIM => scissortest_dim;
    /// Viewport corner (signed 10-bit x, y).
    0x068 VIEWPORT_XY => viewport_xy;
    /// Early depth clear value.
    0x06A EARLYDEPTH_DATA => earlydepth_data;
    /// Depth map mode (z-buffer / w-buffer).
    0x06D DEPTHMAP_ENABLE => depthmap_enable;
    /// Render buffer dimensions ([C] uses FRAMEBUFFER_DIM 0x11E instead).
    0x06E RENDERBUF_DIM => renderbuf_dim;
    /// Output attribute clock enables (clock gating hints; unused by emulators).
    0x06F SH_OUTATTR_CLOCK => sh_outattr_clock;
}

view! {
    /// Decoded SH_OUTMAP_Oi: the semantic of each component of one output register slot.
    pub struct OutMap from sh_outmap {
        x: OutputSemantic = X,
        y: OutputSemantic = Y,
        z: OutputSemantic = Z,
        w: OutputSemantic = W,
    }
}

impl OutMap {
    /// The four semantics in component order x, y, z, w.
    pub const fn components(&self) -> [OutputSemantic; 4] {
        [self.x, self.y, self.z, self.w]
    }
}

view! {
    /// Decoded SCISSORTEST_POS.
    pub struct ScissorPos from scissortest_pos {
        x1: u16 = X1,
        y1: u16 = Y1,
    }
}

view! {
    /// Decoded SCISSORTEST_DIM.
    pub struct ScissorDim from scissortest_dim {
        x2: u16 = X2,
        y2: u16 = Y2,
    }
}

view! {
    /// Decoded VIEWPORT_XY (signed 10-bit corner).
    pub struct ViewportXy from viewport_xy {
        x: i32 = X,
        y: i32 = Y,
    }
}

view! {
    /// Decoded RENDERBUF_DIM.
    pub struct RenderbufDim from renderbuf_dim {
        width: u16 = WIDTH,
        height_minus_1: u16 = HEIGHT,
    }
}

impl RenderbufDim {
    /// Height in pixels (stored value + 1).
    pub const fn height(&self) -> u32 {
        self.height_minus_1 as u32 + 1
    }
}

view! {
    /// Decoded SH_OUTATTR_CLOCK.
    pub struct OutAttrClock from sh_outattr_clock {
        position_z: bool = POSITION_Z,
        color: bool = COLOR,
        texcoord0: bool = TEXCOORD0,
        texcoord1: bool = TEXCOORD1,
        texcoord2: bool = TEXCOORD2,
        texcoord0_w: bool = TEXCOORD0_W,
        normquat_or_view: bool = NORMQUAT_VIEW,
    }
}

/// The complete scissor configuration (0x065-0x067).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scissor {
    /// Mode.
    pub mode: ScissorMode,
    /// First corner x (pixels).
    pub x1: u16,
    /// First corner y (pixels).
    pub y1: u16,
    /// Second corner x, inclusive.
    pub x2: u16,
    /// Second corner y, inclusive.
    pub y2: u16,
}

impl Regs<'_> {
    /// FACECULLING_CONFIG (0x040) culling mode.
    #[inline]
    pub fn cull_mode(&self) -> CullMode {
        CullMode::from_raw(self.field(ids::FACECULLING_CONFIG, &faceculling_config::MODE))
    }

    /// VIEWPORT_WIDTH (0x041) as stored: half the viewport width in pixels (float24).
    #[inline]
    pub fn viewport_width_f24(&self) -> F24 {
        F24::from_raw(self.field(ids::VIEWPORT_WIDTH, &f24_word::VALUE))
    }

    /// VIEWPORT_WIDTH (0x041) as f32: **half** the viewport width in pixels (the register's
    /// value; the viewport transform multiplies `x/w + 1` by it).
    #[inline]
    pub fn viewport_width(&self) -> f32 {
        self.viewport_width_f24().to_f32()
    }

    /// VIEWPORT_HEIGHT (0x043) as stored: half the viewport height in pixels (float24).
    #[inline]
    pub fn viewport_height_f24(&self) -> F24 {
        F24::from_raw(self.field(ids::VIEWPORT_HEIGHT, &f24_word::VALUE))
    }

    /// VIEWPORT_HEIGHT (0x043) as f32: **half** the viewport height in pixels.
    #[inline]
    pub fn viewport_height(&self) -> f32 {
        self.viewport_height_f24().to_f32()
    }

    /// VIEWPORT_INVW (0x042): 2 / width (float31; ignored by [C]/[P]).
    #[inline]
    pub fn viewport_inv_width(&self) -> F31 {
        F31::from_raw(self.field(ids::VIEWPORT_INVW, &viewport_inv::VALUE))
    }

    /// VIEWPORT_INVH (0x044): 2 / height (float31; ignored by [C]/[P]).
    #[inline]
    pub fn viewport_inv_height(&self) -> F31 {
        F31::from_raw(self.field(ids::VIEWPORT_INVH, &viewport_inv::VALUE))
    }

    /// VIEWPORT_XY (0x068): signed viewport corner in pixels.
    #[inline]
    pub fn viewport_xy(&self) -> ViewportXy {
        self.view(ids::VIEWPORT_XY)
    }

    /// FRAGOP_CLIP (0x047) bit 0: user clip plane enabled.
    #[inline]
    pub fn user_clip_enabled(&self) -> bool {
        self.field(ids::FRAGOP_CLIP, &fragop_clip::ENABLE) != 0
    }

    /// FRAGOP_CLIP_DATA0-3 (0x048-0x04B): plane coefficients (a, b, c, d) as float24.
    #[inline]
    pub fn user_clip_plane(&self) -> [F24; 4] {
        core::array::from_fn(|i| {
            F24::from_raw(self.field(
                ids::FRAGOP_CLIP_DATA0 + i as u16,
                &fragop_clip_data::COEFFICIENT,
            ))
        })
    }

    /// DEPTHMAP_SCALE (0x04D) as f32 (near - far).
    #[inline]
    pub fn depthmap_scale(&self) -> f32 {
        F24::from_raw(self.field(ids::DEPTHMAP_SCALE, &f24_word::VALUE)).to_f32()
    }

    /// DEPTHMAP_OFFSET (0x04E) as f32 (near + polygon offset).
    #[inline]
    pub fn depthmap_offset(&self) -> f32 {
        F24::from_raw(self.field(ids::DEPTHMAP_OFFSET, &f24_word::VALUE)).to_f32()
    }

    /// DEPTHMAP_ENABLE (0x06D): z-buffer or w-buffer depth.
    #[inline]
    pub fn depthmap_mode(&self) -> DepthMapMode {
        DepthMapMode::from_raw(self.field(ids::DEPTHMAP_ENABLE, &depthmap_enable::MODE))
    }

    /// SH_OUTMAP_TOTAL (0x04F): number of output-map registers in use (raw 3-bit value).
    #[inline]
    pub fn sh_outmap_total(&self) -> u32 {
        self.field(ids::SH_OUTMAP_TOTAL, &sh_outmap_total::COUNT)
    }

    /// SH_OUTMAP_O`slot` (0x050 + slot) for slot 0-6; `None` for other slots.
    #[inline]
    pub fn sh_outmap(&self, slot: usize) -> Option<OutMap> {
        (slot < 7).then(|| self.view(ids::SH_OUTMAP_O0 + slot as u16))
    }

    /// EARLYDEPTH_FUNC (0x061).
    #[inline]
    pub fn early_depth_func(&self) -> EarlyDepthFunc {
        EarlyDepthFunc::from_raw(self.field(ids::EARLYDEPTH_FUNC, &earlydepth_func::FUNC))
    }

    /// EARLYDEPTH_TEST1 (0x062) bit 0.
    #[inline]
    pub fn early_depth_test1(&self) -> bool {
        self.field(ids::EARLYDEPTH_TEST1, &enable_bit::ENABLE) != 0
    }

    /// EARLYDEPTH_DATA (0x06A): 24-bit clear value.
    #[inline]
    pub fn early_depth_data(&self) -> u32 {
        self.field(ids::EARLYDEPTH_DATA, &earlydepth_data::CLEAR_VALUE)
    }

    /// SH_OUTATTR_MODE (0x064) bit 0: texture coordinates used.
    #[inline]
    pub fn sh_outattr_use_texcoords(&self) -> bool {
        self.field(ids::SH_OUTATTR_MODE, &sh_outattr_mode::USE_TEXCOORDS) != 0
    }

    /// SH_OUTATTR_CLOCK (0x06F).
    #[inline]
    pub fn sh_outattr_clock(&self) -> OutAttrClock {
        self.view(ids::SH_OUTATTR_CLOCK)
    }

    /// Scissor configuration (0x065-0x067).
    #[inline]
    pub fn scissor(&self) -> Scissor {
        let pos: ScissorPos = self.view(ids::SCISSORTEST_POS);
        let dim: ScissorDim = self.view(ids::SCISSORTEST_DIM);
        Scissor {
            mode: ScissorMode::from_raw(self.field(ids::SCISSORTEST_MODE, &scissortest_mode::MODE)),
            x1: pos.x1,
            y1: pos.y1,
            x2: dim.x2,
            y2: dim.y2,
        }
    }

    /// RENDERBUF_DIM (0x06E).
    #[inline]
    pub fn renderbuf_dim(&self) -> RenderbufDim {
        self.view(ids::RENDERBUF_DIM)
    }
}

/// Every catalogue group of this module.
pub(crate) const GROUPS: &[&[super::RegDef]] = &[TABLE];
