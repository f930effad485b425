//! Texture unit registers 0x080-0x09E (units 0-2) and LIGHTING_ENABLE0 (0x08F).
//!
//! Stage: texture sampling (`pica-raster.md` §5.1-§5.8). Inputs: register words. Outputs:
//! catalogue entries and typed getters on [`Regs`]. Registers: 0x080 TEXUNIT_CONFIG,
//! 0x081-0x08B / 0x08E unit 0 (incl. cube-face addresses and shadow parameters), 0x08F
//! LIGHTING_ENABLE0, 0x091-0x096 unit 1, 0x099-0x09E unit 2.

use super::FieldKind::*;
use super::{PhysAddr, Regs, Rgba8, fixed};

pica_enum! {
    /// Texture coordinate source of the procedural texture unit 3 (TEXUNIT_CONFIG bits 8-9).
    pub enum Tex3Coords {
        Texcoord0 = 0 => "TEXCOORD0",
        Texcoord1 = 1 => "TEXCOORD1",
        Texcoord2 = 2 => "TEXCOORD2",
    }
}

pica_enum! {
    /// Texture coordinate source of texture unit 2 (TEXUNIT_CONFIG bit 13).
    pub enum Tex2Coords {
        Texcoord2 = 0 => "TEXCOORD2",
        Texcoord1 = 1 => "TEXCOORD1",
    }
}

pica_enum! {
    /// Magnification / minification / mipmap filter (TEXUNITi_PARAM bits 1, 2, 24).
    pub enum TextureFilter {
        Nearest = 0 => "NEAREST",
        Linear = 1 => "LINEAR",
    }
}

// HW: [C] observed wrap modes 4-7 on hardware (see the variant docs); [3DB] documents 0-3.
pica_enum! {
    /// Texture wrap mode (TEXUNITi_PARAM bits 8-10 / 12-14). [3DB] documents 0-3; [C] observed
    /// 4-7 on hardware ("weird result and may be just invalid").
    pub enum WrapMode {
        ClampToEdge = 0 => "CLAMP_TO_EDGE",
        ClampToBorder = 1 => "CLAMP_TO_BORDER",
        Repeat = 2 => "REPEAT",
        MirroredRepeat = 3 => "MIRRORED_REPEAT",
        /// [C]: clamp to edge for positive coordinates, repeat for negative ones.
        EdgeOrRepeat = 4 => "CLAMP_TO_EDGE_NEG_REPEAT",
        /// [C]: clamp to border for positive (>= size) coordinates, repeat for negative ones.
        BorderOrRepeat = 5 => "CLAMP_TO_BORDER_NEG_REPEAT",
        /// [C]: behaves as repeat.
        Repeat6 = 6 => "REPEAT_6",
        /// [C]: behaves as repeat.
        Repeat7 = 7 => "REPEAT_7",
    }
}

pica_enum! {
    /// Texture type of unit 0 (TEXUNIT0_PARAM bits 28-30); units 1 and 2 are always 2D.
    pub enum TextureType {
        Texture2D = 0 => "2D",
        CubeMap = 1 => "CUBE_MAP",
        Shadow2D = 2 => "SHADOW_2D",
        Projection = 3 => "PROJECTION",
        ShadowCube = 4 => "SHADOW_CUBE",
        Disabled = 5 => "DISABLED",
    }
}

pica_enum! {
    /// Texel format (TEXUNITi_TYPE bits 0-3); 14 and 15 are invalid.
    pub enum TextureFormat {
        Rgba8 = 0 => "RGBA8",
        Rgb8 = 1 => "RGB8",
        Rgb5a1 = 2 => "RGB5A1",
        Rgb565 = 3 => "RGB565",
        Rgba4 = 4 => "RGBA4",
        Ia8 = 5 => "IA8",
        /// Also called RG8.
        Hilo8 = 6 => "HILO8",
        I8 = 7 => "I8",
        A8 = 8 => "A8",
        Ia4 = 9 => "IA4",
        I4 = 10 => "I4",
        A4 = 11 => "A4",
        Etc1 = 12 => "ETC1",
        Etc1a4 = 13 => "ETC1A4",
    }
}

/// A cube-map face of texture unit 0 (selects ADDR1-ADDR6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CubeFace {
    /// +X, TEXUNIT0_ADDR1.
    PositiveX,
    /// -X, TEXUNIT0_ADDR2.
    NegativeX,
    /// +Y, TEXUNIT0_ADDR3.
    PositiveY,
    /// -Y, TEXUNIT0_ADDR4.
    NegativeY,
    /// +Z, TEXUNIT0_ADDR5.
    PositiveZ,
    /// -Z, TEXUNIT0_ADDR6.
    NegativeZ,
}

layout! {
    /// Layout of TEXUNIT_CONFIG (0x080).
    texunit_config {
        TEX0_ENABLE: 0..=0, Bool, "tex0_enable", "1 = texture unit 0 enabled";
        TEX1_ENABLE: 1..=1, Bool, "tex1_enable", "1 = texture unit 1 enabled";
        TEX2_ENABLE: 2..=2, Bool, "tex2_enable", "1 = texture unit 2 enabled";
        FIXED_0: 3..=3, Const(0), "fixed_0", "[3DB] always 0";
        TEX3_COORDS: 8..=9, Enum(Tex3Coords::NAMES), "tex3_coords", "procedural texture (unit 3) coordinate source (unsigned enum)";
        TEX3_ENABLE: 10..=10, Bool, "tex3_enable", "1 = procedural texture unit 3 enabled";
        FIXED_1: 12..=12, Const(1), "fixed_1", "[3DB] always 1";
        TEX2_COORDS: 13..=13, Enum(Tex2Coords::NAMES), "tex2_coords", "texture unit 2 coordinate source: 0 texcoord2, 1 texcoord1";
        CLEAR_CACHE: 16..=16, Trigger, "clear_cache", "1 = clear the texture cache (ignored by [C])";
    }
}

layout! {
    /// Layout of TEXUNITi_BORDER_COLOR (0x081, 0x091, 0x099).
    border_color {
        COLOR: 0..=31, Rgba8, "color", "border colour, unsigned 8 bits per channel: R 0-7, G 8-15, B 16-23, A 24-31";
    }
}

layout! {
    /// Layout of TEXUNITi_DIM (0x082, 0x092, 0x09A).
    texunit_dim {
        HEIGHT: 0..=10, Uint, "height", "unsigned height in texels (note: height is the low field)";
        WIDTH: 16..=26, Uint, "width", "unsigned width in texels";
    }
}

layout! {
    /// Layout of TEXUNITi_PARAM (0x083, 0x093, 0x09B).
    texunit_param {
        MAG_FILTER: 1..=1, Enum(TextureFilter::NAMES), "mag_filter", "magnification filter";
        MIN_FILTER: 2..=2, Enum(TextureFilter::NAMES), "min_filter", "minification filter";
        ETC1: 4..=5, Uint, "etc1", "unsigned: 2 for ETC1 textures, 0 otherwise (still 0 for ETC1A4); informational";
        WRAP_T: 8..=10, Enum(WrapMode::NAMES), "wrap_t", "wrap mode along t (unsigned enum)";
        WRAP_S: 12..=14, Enum(WrapMode::NAMES), "wrap_s", "wrap mode along s (unsigned enum)";
        SHADOW: 20..=20, Bool, "shadow", "1 = shadow texture (unit 0 only)";
        MIP_FILTER: 24..=24, Enum(TextureFilter::NAMES), "mip_filter", "mipmap filter";
        TYPE: 28..=30, Enum(TextureType::NAMES), "type", "texture type (unit 0 only; unsigned enum)";
    }
}

layout! {
    /// Layout of TEXUNITi_LOD (0x084, 0x094, 0x09C).
    texunit_lod {
        BIAS: 0..=12, fixed(true, 4, 8), "bias", "LOD bias, fixed1.4.8 signed (raw / 256)";
        MAX_LEVEL: 16..=19, Uint, "max_level", "unsigned highest mipmap level used";
        MIN_LEVEL: 24..=27, Uint, "min_level", "unsigned lowest mipmap level used";
    }
}

layout! {
    /// Layout of TEXUNITi_ADDR1 (0x085, 0x095, 0x09D).
    texunit_addr {
        ADDR: 0..=27, Address { shift: 3 }, "addr", "physical address >> 3 (PA = field << 3) of the base level (cube: +X face)";
    }
}

layout! {
    /// Layout of TEXUNIT0_ADDR2-ADDR6 (0x086-0x08A).
    texunit_face_addr {
        ADDR_LOW: 0..=21, Hex, "addr_low", "low 22 bits of (face PA >> 3); bits 22-27 come from TEXUNIT0_ADDR1 (face PA = ((ADDR1 & ~0x3FFFFF) | field) << 3)";
    }
}

layout! {
    /// Layout of TEXUNIT0_SHADOW (0x08B).
    texunit_shadow {
        ORTHOGRAPHIC: 0..=0, Bool, "orthographic", "1 = no perspective divide by w (orthographic), 0 = perspective";
        BIAS: 1..=23, fixed(false, 0, 23), "bias", "depth bias: upper 23 bits of a fixed0.0.24 value (bias24 = field << 1; value = field / 2^23)";
    }
}

layout! {
    /// Layout of TEXUNITi_TYPE (0x08E, 0x096, 0x09E).
    texunit_type {
        FORMAT: 0..=3, Enum(TextureFormat::NAMES), "format", "texel format (unsigned enum)";
    }
}

layout! {
    /// Layout of LIGHTING_ENABLE0 (0x08F).
    lighting_enable0 {
        ENABLE: 0..=0, Bool, "enable", "1 = fragment lighting enabled ([P] reads this; [C] reads LIGHTING_ENABLE1 0x1C6)";
    }
}

registers! {
    block: Texturing;
    /// Texture unit enables and coordinate sources.
    0x080 TEXUNIT_CONFIG => texunit_config;
    /// Texture unit 0 border colour.
    0x081 TEXUNIT0_BORDER_COLOR => border_color;
    /// Texture unit 0 dimensions.
    0x082 TEXUNIT0_DIM => texunit_dim;
    /// Texture unit 0 filter, wrap and type parameters.
    0x083 TEXUNIT0_PARAM => texunit_param;
    /// Texture unit 0 level of detail.
    0x084 TEXUNIT0_LOD => texunit_lod;
    /// Texture unit 0 address (cube map: +X face).
    0x085 TEXUNIT0_ADDR1 => texunit_addr;
    /// Texture unit 0 cube face -X address (low bits).
    0x086 TEXUNIT0_ADDR2 => texunit_face_addr;
    /// Texture unit 0 cube face +Y address (low bits).
    0x087 TEXUNIT0_ADDR3 => texunit_face_addr;
    /// Texture unit 0 cube face -Y address (low bits).
    0x088 TEXUNIT0_ADDR4 => texunit_face_addr;
    /// Texture unit 0 cube face +Z address (low bits).
    0x089 TEXUNIT0_ADDR5 => texunit_face_addr;
    /// Texture unit 0 cube face -Z address (low bits).
    0x08A TEXUNIT0_ADDR6 => texunit_face_addr;
    /// Texture unit 0 shadow parameters.
    0x08B TEXUNIT0_SHADOW => texunit_shadow;
    /// Texture unit 0 texel format.
    0x08E TEXUNIT0_TYPE => texunit_type;
    /// Fragment lighting enable (first of two; see LIGHTING_ENABLE1 0x1C6).
    0x08F LIGHTING_ENABLE0 => lighting_enable0;
    /// Texture unit 1 border colour.
    0x091 TEXUNIT1_BORDER_COLOR => border_color;
    /// Texture unit 1 dimensions.
    0x092 TEXUNIT1_DIM => texunit_dim;
    /// Texture unit 1 filter and wrap parameters.
    0x093 TEXUNIT1_PARAM => texunit_param;
    /// Texture unit 1 level of detail.
    0x094 TEXUNIT1_LOD => texunit_lod;
    /// Texture unit 1 address.
    0x095 TEXUNIT1_ADDR => texunit_addr;
    /// Texture unit 1 texel format.
    0x096 TEXUNIT1_TYPE => texunit_type;
    /// Texture unit 2 border colour.
    0x099 TEXUNIT2_BORDER_COLOR => border_color;
    /// Texture unit 2 dimensions.
    0x09A TEXUNIT2_DIM => texunit_dim;
    /// Texture unit 2 filter and wrap parameters.
    0x09B TEXUNIT2_PARAM => texunit_param;
    /// Texture unit 2 level of detail.
    0x09C TEXUNIT2_LOD => texunit_lod;
    /// Texture unit 2 address.
    0x09D TEXUNIT2_ADDR => texunit_addr;
    /// Texture unit 2 texel format.
    0x09E TEXUNIT2_TYPE => texunit_type;
}

view! {
    /// Decoded TEXUNIT_CONFIG.
    pub struct TexUnitConfig from texunit_config {
        tex0_enable: bool = TEX0_ENABLE,
        tex1_enable: bool = TEX1_ENABLE,
        tex2_enable: bool = TEX2_ENABLE,
        tex3_coords: Tex3Coords = TEX3_COORDS,
        tex3_enable: bool = TEX3_ENABLE,
        tex2_coords: Tex2Coords = TEX2_COORDS,
        clear_cache: bool = CLEAR_CACHE,
    }
}

view! {
    /// Decoded TEXUNITi_DIM.
    pub struct TexDim from texunit_dim {
        height: u16 = HEIGHT,
        width: u16 = WIDTH,
    }
}

view! {
    /// Decoded TEXUNITi_PARAM.
    pub struct TexParam from texunit_param {
        mag_filter: TextureFilter = MAG_FILTER,
        min_filter: TextureFilter = MIN_FILTER,
        etc1: u8 = ETC1,
        wrap_t: WrapMode = WRAP_T,
        wrap_s: WrapMode = WRAP_S,
        shadow: bool = SHADOW,
        mip_filter: TextureFilter = MIP_FILTER,
        texture_type: TextureType = TYPE,
    }
}

view! {
    /// Decoded TEXUNITi_LOD.
    pub struct TexLod from texunit_lod {
        bias_raw: i32 = BIAS,
        max_level: u8 = MAX_LEVEL,
        min_level: u8 = MIN_LEVEL,
    }
}

impl TexLod {
    /// LOD bias in levels (fixed1.4.8: raw / 256).
    pub fn bias(&self) -> f32 {
        self.bias_raw as f32 / 256.0
    }
}

view! {
    /// Decoded TEXUNIT0_SHADOW.
    pub struct TexShadow from texunit_shadow {
        orthographic: bool = ORTHOGRAPHIC,
        bias_raw: u32 = BIAS,
    }
}

impl TexShadow {
    /// The 24-bit depth bias (field << 1), in units of 1/2^24.
    pub const fn bias24(&self) -> u32 {
        self.bias_raw << 1
    }
}

/// Everything about one of the texture units 0-2, gathered from its registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TextureUnit {
    /// The enable bit in TEXUNIT_CONFIG.
    pub enabled: bool,
    /// Border colour.
    pub border_color: Rgba8,
    /// Dimensions.
    pub dim: TexDim,
    /// Filters, wrap modes, type.
    pub param: TexParam,
    /// Level of detail.
    pub lod: TexLod,
    /// Base level physical address (cube maps: +X face).
    pub addr: PhysAddr,
    /// Texel format.
    pub format: TextureFormat,
}

/// First register (BORDER_COLOR) of each texture unit and the id of its TYPE register.
const UNIT_BASE: [(u16, u16, u16); 3] = [
    (
        ids::TEXUNIT0_BORDER_COLOR,
        ids::TEXUNIT0_ADDR1,
        ids::TEXUNIT0_TYPE,
    ),
    (
        ids::TEXUNIT1_BORDER_COLOR,
        ids::TEXUNIT1_ADDR,
        ids::TEXUNIT1_TYPE,
    ),
    (
        ids::TEXUNIT2_BORDER_COLOR,
        ids::TEXUNIT2_ADDR,
        ids::TEXUNIT2_TYPE,
    ),
];

impl Regs<'_> {
    /// TEXUNIT_CONFIG (0x080).
    #[inline]
    pub fn texunit_config(&self) -> TexUnitConfig {
        self.view(ids::TEXUNIT_CONFIG)
    }

    /// Texture unit `unit` (0-2); `None` for other units (unit 3 is the procedural texture,
    /// see [`Regs::proctex`]).
    #[inline]
    pub fn texture_unit(&self, unit: usize) -> Option<TextureUnit> {
        let &(base, addr, ty) = UNIT_BASE.get(unit)?;
        let config = self.texunit_config();
        // ok: `unit` < 3, checked by `UNIT_BASE.get` above.
        let enabled = [config.tex0_enable, config.tex1_enable, config.tex2_enable][unit];
        Some(TextureUnit {
            enabled,
            border_color: Rgba8::from_word(self.raw(base)),
            dim: self.view(base + 1),
            param: self.view(base + 2),
            lod: self.view(base + 3),
            addr: PhysAddr(self.field(addr, &texunit_addr::ADDR) << 3),
            format: TextureFormat::from_raw(self.field(ty, &texunit_type::FORMAT)),
        })
    }

    /// Physical address of cube face `face` of texture unit 0: +X is TEXUNIT0_ADDR1; the other
    /// faces combine bits 22-27 of ADDR1 with their own bits 0-21, times 8.
    #[inline]
    pub fn cube_face_addr(&self, face: CubeFace) -> PhysAddr {
        let base = self.field(ids::TEXUNIT0_ADDR1, &texunit_addr::ADDR);
        let addr = match face {
            CubeFace::PositiveX => base,
            other => {
                let id = ids::TEXUNIT0_ADDR2 + (other as u16 - 1);
                let low_mask = texunit_face_addr::ADDR_LOW.mask();
                (base & !low_mask) | self.field(id, &texunit_face_addr::ADDR_LOW)
            }
        };
        PhysAddr(addr << 3)
    }

    /// TEXUNIT0_SHADOW (0x08B).
    #[inline]
    pub fn texture0_shadow(&self) -> TexShadow {
        self.view(ids::TEXUNIT0_SHADOW)
    }

    /// LIGHTING_ENABLE0 (0x08F) bit 0.
    #[inline]
    pub fn lighting_enable0(&self) -> bool {
        self.field(ids::LIGHTING_ENABLE0, &lighting_enable0::ENABLE) != 0
    }
}

/// Every catalogue group of this module.
pub(crate) const GROUPS: &[&[super::RegDef]] = &[TABLE];
