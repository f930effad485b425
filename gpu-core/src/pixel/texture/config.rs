//! Texture-unit configuration decoded from the PICA registers (`pica-raster.md` §5.1, §5.5).
//!
//! Stage: register read-out for texturing. Input: the register file (`&[u32; 0x300]`, indexed
//! by register id); output: [`TexUnitsControl`] and one [`TextureConfig`] per unit, plus the mip
//! [`LevelLayout`] derived from them. Registers read:
//!
//! | Reg (unit 0 / 1 / 2) | Name | Fields used |
//! |---|---|---|
//! | 0x080 | TEXUNIT_CONFIG | unit enables, unit 2 / unit 3 coordinate sources, unit 3 enable |
//! | 0x081 / 0x091 / 0x099 | BORDER_COLOR | R 0-7, G 8-15, B 16-23, A 24-31 (u8 each) |
//! | 0x082 / 0x092 / 0x09A | DIM | height bits 0-10, width bits 16-26 (texels, unsigned) |
//! | 0x083 / 0x093 / 0x09B | PARAM | filters, wrap modes, shadow bit, mip filter, type (unit 0) |
//! | 0x084 / 0x094 / 0x09C | LOD | bias bits 0-12 (fixed1.4.8 signed), max level 16-19, min 24-27 |
//! | 0x085 / 0x095 / 0x09D | ADDR1 | bits 0-27 = PA >> 3 |
//! | 0x086-0x08A | TEXUNIT0_ADDR2-6 | cube faces −X, +Y, −Y, +Z, −Z: bits 0-21 of PA >> 3 |
//! | 0x08B | TEXUNIT0_SHADOW | bit 0 orthographic, bits 1-23 depth bias (upper 23 of 24 bits) |
//! | 0x08E / 0x096 / 0x09E | TYPE | texel format bits 0-3 |
//!
//! The registers are read through pica-cmd's register catalogue (`pica_cmd::regs::Regs` and
//! the typed views of `pica_cmd::regs::texturing`), the single source of their bit layouts;
//! this module maps the catalogue's field values to the sampler's types.

use pica_cmd::regs::texturing as cat;
use pica_cmd::regs::{REG_COUNT, RegView, Regs};

use crate::pixel::color::Rgba;

use super::format::TextureFormat;

/// Largest mip level index the LOD fields can express (4 bits).
pub const MAX_LEVEL_FIELD: u32 = 15;

/// Smallest level width/height that is still used as a mip level.
///
/// UNVERIFIED: 3dbrew says at most 8 levels (1024 → 8) and Citra GL refuses chains whose
/// smallest level is not a multiple of 8; levels below 8×8 cannot be laid out in whole 8×8
/// tiles. We therefore stop the chain at the last level whose sides are both ≥ 8; the
/// alternative is to continue down to 1×1 with partial tiles.
pub const MIN_LEVEL_SIZE: u32 = 8;

/// Texture-coordinate wrap mode (PARAM bits 8-10 for t, 12-14 for s).
///
/// Modes 4-7 were observed on hardware by Citra's developers (`regs_texturing.h`): 4 and 5 clamp
/// on the positive side but repeat negative coordinates, 6 and 7 repeat.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum WrapMode {
    /// 0: clamp to the edge texel.
    ClampToEdge,
    /// 1: outside [0, size) returns the border colour.
    ClampToBorder,
    /// 2: repeat.
    Repeat,
    /// 3: mirrored repeat.
    MirroredRepeat,
    /// 4: clamp to edge for coordinates ≥ 0, repeat for negative ones.
    EdgeOrRepeat,
    /// 5: border colour for coordinates ≥ size, repeat for negative ones.
    BorderOrRepeat,
    /// 6: behaves as repeat.
    Repeat6,
    /// 7: behaves as repeat.
    Repeat7,
}

impl WrapMode {
    /// Mode from its 3-bit field.
    pub const fn from_bits(bits: u32) -> Self {
        match bits & 7 {
            0 => Self::ClampToEdge,
            1 => Self::ClampToBorder,
            2 => Self::Repeat,
            3 => Self::MirroredRepeat,
            4 => Self::EdgeOrRepeat,
            5 => Self::BorderOrRepeat,
            6 => Self::Repeat6,
            _ => Self::Repeat7,
        }
    }

    /// The 3-bit field value.
    pub const fn bits(self) -> u32 {
        self as u32
    }

    /// Resolves integer texel coordinate `c` for a side of `size` texels: `Some(index)` in
    /// `0..size`, or `None` when the border colour applies. `size` must be non-zero.
    #[inline]
    pub fn apply(self, c: i32, size: u32) -> Option<u32> {
        let n = size.max(1) as i64;
        let c = i64::from(c);
        // Power-of-two sizes (all valid textures) wrap with a mask, others with a division.
        let repeat = |c: i64| {
            if n & (n - 1) == 0 {
                (c & (n - 1)) as u32
            } else {
                c.rem_euclid(n) as u32
            }
        };
        match self {
            Self::ClampToEdge => Some(c.clamp(0, n - 1) as u32),
            Self::ClampToBorder => (0..n).contains(&c).then_some(c as u32),
            Self::Repeat | Self::Repeat6 | Self::Repeat7 => Some(repeat(c)),
            Self::MirroredRepeat => {
                let m = if n & (n - 1) == 0 {
                    c & (2 * n - 1)
                } else {
                    c.rem_euclid(2 * n)
                };
                Some(if m >= n {
                    (2 * n - 1 - m) as u32
                } else {
                    m as u32
                })
            }
            Self::EdgeOrRepeat => Some(if c < 0 {
                repeat(c)
            } else {
                c.min(n - 1) as u32
            }),
            Self::BorderOrRepeat => {
                if c >= n {
                    None
                } else {
                    Some(repeat(c))
                }
            }
        }
    }

    /// Human-readable name.
    pub const fn name(self) -> &'static str {
        match self {
            Self::ClampToEdge => "clamp to edge",
            Self::ClampToBorder => "clamp to border",
            Self::Repeat => "repeat",
            Self::MirroredRepeat => "mirrored repeat",
            Self::EdgeOrRepeat => "edge (+) / repeat (−)",
            Self::BorderOrRepeat => "border (+) / repeat (−)",
            Self::Repeat6 => "repeat (6)",
            Self::Repeat7 => "repeat (7)",
        }
    }
}

/// Nearest or linear filtering (PARAM bit 1 mag, bit 2 min, bit 24 mip).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Filter {
    /// 0: nearest texel / nearest level.
    Nearest,
    /// 1: bilinear within a level / linear between levels.
    Linear,
}

impl Filter {
    /// Filter from one register bit.
    pub const fn from_bit(bit: bool) -> Self {
        if bit { Self::Linear } else { Self::Nearest }
    }
}

/// Texture type of unit 0 (PARAM bits 28-30); units 1 and 2 are always [`TextureType::Tex2D`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum TextureType {
    /// 0: plain 2D.
    Tex2D,
    /// 1: cube map (six faces).
    CubeMap,
    /// 2: 2D shadow map (depth compare).
    Shadow2D,
    /// 3: projective 2D (u, v divided by tc0.w).
    Projection2D,
    /// 4: cube shadow map.
    ShadowCube,
    /// 5: disabled, returns (0, 0, 0, 0).
    Disabled,
    /// 6 or 7: undocumented.
    Unknown(u8),
}

impl TextureType {
    /// Type from the 3-bit field.
    pub const fn from_bits(bits: u32) -> Self {
        match bits & 7 {
            0 => Self::Tex2D,
            1 => Self::CubeMap,
            2 => Self::Shadow2D,
            3 => Self::Projection2D,
            4 => Self::ShadowCube,
            5 => Self::Disabled,
            b => Self::Unknown(b as u8),
        }
    }

    /// True for the two cube types.
    pub const fn is_cube(self) -> bool {
        matches!(self, Self::CubeMap | Self::ShadowCube)
    }

    /// True for the two shadow types.
    pub const fn is_shadow(self) -> bool {
        matches!(self, Self::Shadow2D | Self::ShadowCube)
    }
}

/// A cube-map face, in address-register order (+X uses ADDR1, then ADDR2..6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum CubeFace {
    /// +X (ADDR1, 0x085).
    PosX,
    /// −X (ADDR2, 0x086).
    NegX,
    /// +Y (ADDR3, 0x087).
    PosY,
    /// −Y (ADDR4, 0x088).
    NegY,
    /// +Z (ADDR5, 0x089).
    PosZ,
    /// −Z (ADDR6, 0x08A).
    NegZ,
}

impl CubeFace {
    /// All faces in register order.
    pub const ALL: [CubeFace; 6] = [
        Self::PosX,
        Self::NegX,
        Self::PosY,
        Self::NegY,
        Self::PosZ,
        Self::NegZ,
    ];

    /// Index 0-5 in register order.
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// Shadow-texture parameters (reg 0x08B, unit 0 only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ShadowConfig {
    /// Bit 0: 1 = orthographic (no divide by w), 0 = perspective.
    pub orthographic: bool,
    /// Depth bias as a 24-bit unsigned value (`field(bits 1-23) << 1`).
    pub bias: u32,
}

/// Level of detail parameters (LOD register).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LodConfig {
    /// Bias in levels: bits 0-12 as fixed1.4.8 signed (13-bit two's complement) / 256.
    pub bias: f32,
    /// Highest level that may be used (bits 16-19, unsigned).
    pub max_level: u32,
    /// Lowest level that may be used (bits 24-27, unsigned).
    pub min_level: u32,
}

impl LodConfig {
    /// Decodes the LOD register word.
    pub fn from_word(w: u32) -> Self {
        Self::from_view(&cat::TexLod::from_raw(w))
    }

    fn from_view(v: &cat::TexLod) -> Self {
        Self {
            bias: v.bias(),
            max_level: u32::from(v.max_level),
            min_level: u32::from(v.min_level),
        }
    }
}

/// Global texture-unit control (reg 0x080 TEXUNIT_CONFIG).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TexUnitsControl {
    /// Bits 0-2: units 0, 1, 2 enabled.
    pub enabled: [bool; 3],
    /// Bit 13: unit 2 samples with texcoord1 instead of texcoord2.
    pub unit2_uses_texcoord1: bool,
    /// Bit 10: unit 3 (procedural texture) enabled.
    pub proctex_enabled: bool,
    /// Bits 8-9: unit 3 coordinate source (0 = texcoord0, 1 = texcoord1, 2 = texcoord2, 3 is
    /// undocumented).
    pub proctex_texcoord: u8,
}

impl TexUnitsControl {
    /// Decodes reg 0x080.
    pub fn from_word(w: u32) -> Self {
        let v = cat::TexUnitConfig::from_raw(w);
        Self {
            enabled: [v.tex0_enable, v.tex1_enable, v.tex2_enable],
            unit2_uses_texcoord1: v.tex2_coords == cat::Tex2Coords::Texcoord1,
            proctex_enabled: v.tex3_enable,
            proctex_texcoord: match v.tex3_coords {
                cat::Tex3Coords::Texcoord0 => 0,
                cat::Tex3Coords::Texcoord1 => 1,
                cat::Tex3Coords::Texcoord2 => 2,
                cat::Tex3Coords::Unknown(raw) => raw as u8,
            },
        }
    }

    /// Reads reg 0x080 from a register file.
    pub fn from_regs(regs: &[u32; REG_COUNT]) -> Self {
        Self::from_word(Regs::new(regs).texunit_config().to_raw())
    }
}

/// Everything needed to sample one texture unit (0-2).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TextureConfig {
    /// Unit number 0-2.
    pub unit: u8,
    /// Width in texels (DIM bits 16-26).
    pub width: u32,
    /// Height in texels (DIM bits 0-10).
    pub height: u32,
    /// Physical address of level 0 (+X face for cube maps): ADDR1 bits 0-27 · 8.
    pub address: u32,
    /// Physical addresses of the six cube faces in [`CubeFace`] order (unit 0; for other units
    /// every entry equals `address`).
    pub face_addresses: [u32; 6],
    /// Raw texel format id (TYPE bits 0-3).
    pub format_id: u32,
    /// Decoded format; `None` for the invalid ids 14 and 15.
    pub format: Option<TextureFormat>,
    /// Wrap mode in s (PARAM bits 12-14).
    pub wrap_s: WrapMode,
    /// Wrap mode in t (PARAM bits 8-10).
    pub wrap_t: WrapMode,
    /// Magnification filter (PARAM bit 1).
    pub mag_filter: Filter,
    /// Minification filter (PARAM bit 2).
    pub min_filter: Filter,
    /// Filter between mip levels (PARAM bit 24).
    pub mip_filter: Filter,
    /// Border colour (BORDER_COLOR), RGBA u8.
    pub border: Rgba,
    /// LOD bias and clamps.
    pub lod: LodConfig,
    /// Texture type (unit 0 PARAM bits 28-30; always 2D for units 1 and 2).
    pub texture_type: TextureType,
    /// PARAM bit 20 ("shadow" flag of unit 0; informational, the type selects the behaviour).
    pub shadow_flag: bool,
    /// Shadow parameters (reg 0x08B; unit 0).
    pub shadow: ShadowConfig,
    /// PARAM bits 4-5 (2 for ETC1 in Citra's notes; informational only).
    pub etc_hint: u8,
    /// How the sampler reads this texture: hardware-faithful (the default) or the
    /// simplifications of Citra's software renderer (see [`RenderMode`]). Not a register:
    /// set by the pipeline's configuration ([`TextureConfig::with_mode`]).
    pub mode: RenderMode,
}

/// How texture units 0-2 sample: the sampler configuration both fragment paths read.
///
/// [`RenderMode::CitraSwrast`] reproduces the documented simplifications of Citra's software
/// rasteriser (`pica-raster.md` §5.7, §13.1, §14 item 8; checked against
/// citra-emu/citra `src/video_core/swrasterizer/rasterizer.cpp`, whose texturing loop has a
/// "TODO: Apply the min and mag filters" and reads only the base-level address): every lookup
/// is nearest, from level 0, with the coordinate truncated toward zero (`int(u·W)`, f32
/// product); filters, mip levels, the LOD bias and the LOD clamps are ignored. Wrap modes,
/// the border colour, cube-map face selection and the shadow compare (nearest, level 0) are
/// unchanged. It is meant for comparing picaview with Citra frame for frame; the default
/// [`RenderMode::Hardware`] stays hardware-faithful.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum RenderMode {
    /// Filters, mip levels and LOD as the hardware applies them (the default).
    #[default]
    Hardware,
    /// Citra's software renderer: nearest from the base level, truncating coordinates.
    CitraSwrast,
}

impl TextureConfig {
    /// Decodes unit `unit` (0-2; larger values are treated as 2) from the register file.
    pub fn from_regs(regs: &[u32; REG_COUNT], unit: usize) -> Self {
        let unit = unit.min(2);
        let r = Regs::new(regs);
        let Some(t) = r.texture_unit(unit) else {
            // ok: unreachable, `unit` ≤ 2 always names a texture unit; degrade to an empty
            // texture rather than panicking.
            return Self {
                unit: unit as u8,
                ..Self::new_2d(0, 0, 0, TextureFormat::Rgba8)
            };
        };
        let address = t.addr.0;
        let mut face_addresses = [address; 6];
        if unit == 0 {
            for (slot, face) in face_addresses.iter_mut().zip(CubeFace::ALL) {
                *slot = r.cube_face_addr(face.to_catalogue()).0;
            }
        }
        let (format, format_id) = map_format(t.format);
        let shadow = r.texture0_shadow();
        let p = t.param;
        Self {
            unit: unit as u8,
            width: u32::from(t.dim.width),
            height: u32::from(t.dim.height),
            address,
            face_addresses,
            format_id,
            format,
            wrap_s: WrapMode::from_catalogue(p.wrap_s),
            wrap_t: WrapMode::from_catalogue(p.wrap_t),
            mag_filter: Filter::from_catalogue(p.mag_filter),
            min_filter: Filter::from_catalogue(p.min_filter),
            mip_filter: Filter::from_catalogue(p.mip_filter),
            border: [
                t.border_color.r,
                t.border_color.g,
                t.border_color.b,
                t.border_color.a,
            ],
            lod: LodConfig::from_view(&t.lod),
            texture_type: if unit == 0 {
                TextureType::from_catalogue(p.texture_type)
            } else {
                TextureType::Tex2D
            },
            shadow_flag: unit == 0 && p.shadow,
            shadow: if unit == 0 {
                ShadowConfig {
                    orthographic: shadow.orthographic,
                    bias: shadow.bias24(),
                }
            } else {
                ShadowConfig::default()
            },
            etc_hint: p.etc1,
            mode: RenderMode::Hardware,
        }
    }

    /// A plain 2D configuration (for tools and tests): nearest filters, clamp to edge, one level.
    pub fn new_2d(address: u32, width: u32, height: u32, format: TextureFormat) -> Self {
        Self {
            unit: 0,
            width,
            height,
            address,
            face_addresses: [address; 6],
            format_id: format.id(),
            format: Some(format),
            wrap_s: WrapMode::ClampToEdge,
            wrap_t: WrapMode::ClampToEdge,
            mag_filter: Filter::Nearest,
            min_filter: Filter::Nearest,
            mip_filter: Filter::Nearest,
            border: [0; 4],
            lod: LodConfig::default(),
            texture_type: TextureType::Tex2D,
            shadow_flag: false,
            shadow: ShadowConfig::default(),
            etc_hint: 0,
            mode: RenderMode::Hardware,
        }
    }

    /// This configuration as sampled in `mode`. For [`RenderMode::CitraSwrast`]: nearest
    /// filters (mag, min, mip), LOD bias 0 and levels clamped to 0, so only the base level is
    /// read (and needed in memory); the sampler also truncates coordinates toward zero.
    pub fn with_mode(mut self, mode: RenderMode) -> Self {
        self.mode = mode;
        if mode == RenderMode::CitraSwrast {
            self.mag_filter = Filter::Nearest;
            self.min_filter = Filter::Nearest;
            self.mip_filter = Filter::Nearest;
            self.lod = LodConfig {
                bias: 0.0,
                max_level: 0,
                min_level: 0,
            };
        }
        self
    }

    /// The mip-level layout implied by size, format and max level (`None` for invalid formats).
    pub fn layout(&self) -> Option<LevelLayout> {
        self.format
            .map(|f| LevelLayout::new(self.width, self.height, f, self.lod.max_level))
    }

    /// Physical address of `face` (only meaningful for cube types; [`CubeFace::PosX`] is the
    /// base address).
    pub fn face_address(&self, face: CubeFace) -> u32 {
        self.face_addresses[face.index()]
    }
}

/// The sampler's format for the catalogue's value, with the raw id (`None` for 14 and 15).
fn map_format(f: cat::TextureFormat) -> (Option<TextureFormat>, u32) {
    use cat::TextureFormat as C;
    let id = match f {
        C::Rgba8 => 0,
        C::Rgb8 => 1,
        C::Rgb5a1 => 2,
        C::Rgb565 => 3,
        C::Rgba4 => 4,
        C::Ia8 => 5,
        C::Hilo8 => 6,
        C::I8 => 7,
        C::A8 => 8,
        C::Ia4 => 9,
        C::I4 => 10,
        C::A4 => 11,
        C::Etc1 => 12,
        C::Etc1a4 => 13,
        C::Unknown(raw) => raw,
    };
    (TextureFormat::from_id(id), id)
}

impl WrapMode {
    /// From the catalogue's field value (every 3-bit value is known).
    pub fn from_catalogue(w: cat::WrapMode) -> Self {
        use cat::WrapMode as C;
        match w {
            C::ClampToEdge => Self::ClampToEdge,
            C::ClampToBorder => Self::ClampToBorder,
            C::Repeat => Self::Repeat,
            C::MirroredRepeat => Self::MirroredRepeat,
            C::EdgeOrRepeat => Self::EdgeOrRepeat,
            C::BorderOrRepeat => Self::BorderOrRepeat,
            C::Repeat6 => Self::Repeat6,
            C::Repeat7 => Self::Repeat7,
            C::Unknown(raw) => Self::from_bits(raw),
        }
    }
}

impl Filter {
    /// From the catalogue's field value (a 1-bit field: unknown values cannot occur and are
    /// read as nearest).
    pub fn from_catalogue(f: cat::TextureFilter) -> Self {
        Self::from_bit(f == cat::TextureFilter::Linear)
    }
}

impl TextureType {
    /// From the catalogue's field value.
    pub fn from_catalogue(t: cat::TextureType) -> Self {
        use cat::TextureType as C;
        match t {
            C::Texture2D => Self::Tex2D,
            C::CubeMap => Self::CubeMap,
            C::Shadow2D => Self::Shadow2D,
            C::Projection => Self::Projection2D,
            C::ShadowCube => Self::ShadowCube,
            C::Disabled => Self::Disabled,
            C::Unknown(raw) => Self::from_bits(raw),
        }
    }
}

impl CubeFace {
    /// The catalogue's name for this face.
    pub fn to_catalogue(self) -> cat::CubeFace {
        match self {
            Self::PosX => cat::CubeFace::PositiveX,
            Self::NegX => cat::CubeFace::NegativeX,
            Self::PosY => cat::CubeFace::PositiveY,
            Self::NegY => cat::CubeFace::NegativeY,
            Self::PosZ => cat::CubeFace::PositiveZ,
            Self::NegZ => cat::CubeFace::NegativeZ,
        }
    }
}

/// One mip level: size and byte offset from the texture (or face) base address.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LevelInfo {
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// Byte offset of the level from the base address.
    pub offset: u32,
    /// Size of the level in bytes (`width · height · bits / 8` for sides that are multiples of
    /// 8; see [`TextureFormat::level_span`] for others).
    pub bytes: u32,
}

/// Maximum number of levels a [`LevelLayout`] holds (level 0 plus the 4-bit max level).
pub const MAX_LEVELS: usize = MAX_LEVEL_FIELD as usize + 1;

/// The mip chain of a texture: level n+1 follows level n directly in memory, half its size
/// // HW: \[3DB-I\], \[C\] gl_rasterizer_cache.cpp.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LevelLayout {
    /// Levels in use (`count` of them are valid).
    pub levels: [LevelInfo; MAX_LEVELS],
    /// Number of valid levels (≥ 1).
    pub count: usize,
    /// Total bytes of all levels of one face.
    pub total_bytes: u64,
}

impl LevelLayout {
    /// Layout of a `width × height` texture of `format` whose LOD max level is `max_level`.
    /// The chain stops early at the last level with both sides ≥ [`MIN_LEVEL_SIZE`] (level 0 is
    /// always present).
    pub fn new(width: u32, height: u32, format: TextureFormat, max_level: u32) -> Self {
        let mut levels = [LevelInfo::default(); MAX_LEVELS];
        let mut offset: u64 = 0;
        let mut count = 0;
        let (mut w, mut h) = (width, height);
        for (n, slot) in levels.iter_mut().enumerate() {
            if n > 0 && (n as u32 > max_level || w < MIN_LEVEL_SIZE || h < MIN_LEVEL_SIZE) {
                break;
            }
            let bytes = format.level_span(w, h);
            // ok: widths/heights are 11-bit fields, so offsets stay far below u32::MAX.
            *slot = LevelInfo {
                width: w,
                height: h,
                offset: offset as u32,
                bytes: bytes as u32,
            };
            offset += bytes;
            count += 1;
            w /= 2;
            h /= 2;
        }
        Self {
            levels,
            count,
            total_bytes: offset,
        }
    }

    /// The valid levels.
    pub fn levels(&self) -> &[LevelInfo] {
        &self.levels[..self.count]
    }

    /// Index of the last valid level.
    pub fn last(&self) -> usize {
        self.count - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_unit0_registers() {
        let mut regs = [0u32; 0x300];
        regs[0x080] = 0b101 | (1 << 13) | (2 << 8) | (1 << 10);
        regs[0x081] = 0x4433_2211;
        regs[0x082] = (128 << 16) | 64; // width 128, height 64
        regs[0x083] = 2 | 4 | (3 << 8) | (1 << 12) | (1 << 24) | (1 << 28) | (1 << 20);
        regs[0x084] = 0x1F00 | (5 << 16) | (1 << 24); // bias −1.0
        regs[0x085] = 0x0300_0000 | (0x1000 >> 3);
        regs[0x086] = 0x0000_0400;
        regs[0x08B] = 1 | (0x1234 << 1);
        regs[0x08E] = 12;
        let c = TextureConfig::from_regs(&regs, 0);
        assert_eq!((c.width, c.height), (128, 64));
        assert_eq!(c.address, 0x1800_1000);
        // −X face: upper 6 bits of ADDR1 (0x3000000 >> 22 = 0xC) with the 22-bit field.
        assert_eq!(c.face_address(CubeFace::NegX), (0x0300_0000 | 0x400) * 8);
        assert_eq!(c.format, Some(TextureFormat::Etc1));
        assert_eq!(c.wrap_t, WrapMode::MirroredRepeat);
        assert_eq!(c.wrap_s, WrapMode::ClampToBorder);
        assert_eq!(
            (c.mag_filter, c.min_filter, c.mip_filter),
            (Filter::Linear, Filter::Linear, Filter::Linear)
        );
        assert_eq!(c.border, [0x11, 0x22, 0x33, 0x44]);
        assert_eq!(c.lod.bias, -1.0);
        assert_eq!((c.lod.max_level, c.lod.min_level), (5, 1));
        assert_eq!(c.texture_type, TextureType::CubeMap);
        assert!(c.shadow_flag);
        assert_eq!(
            c.shadow,
            ShadowConfig {
                orthographic: true,
                bias: 0x1234 << 1
            }
        );
        let ctl = TexUnitsControl::from_regs(&regs);
        assert_eq!(ctl.enabled, [true, false, true]);
        assert!(ctl.unit2_uses_texcoord1 && ctl.proctex_enabled);
        assert_eq!(ctl.proctex_texcoord, 2);
    }

    #[test]
    fn units_1_and_2_are_2d() {
        let mut regs = [0u32; 0x300];
        regs[0x093] = 1 << 28 | 1 << 20;
        regs[0x09E] = 15;
        let c1 = TextureConfig::from_regs(&regs, 1);
        assert_eq!(c1.texture_type, TextureType::Tex2D);
        assert!(!c1.shadow_flag);
        let c2 = TextureConfig::from_regs(&regs, 2);
        assert_eq!(c2.format, None);
        assert_eq!(c2.format_id, 15);
        // Out-of-range unit numbers are clamped to unit 2.
        let c = TextureConfig::from_regs(&regs, 7);
        assert_eq!((c.unit, c.format_id), (2, 15));
    }

    #[test]
    fn lod_bias_fixed_point() {
        assert_eq!(LodConfig::from_word(0x0080).bias, 0.5);
        assert_eq!(LodConfig::from_word(0x0FFF).bias, 4095.0 / 256.0);
        assert_eq!(LodConfig::from_word(0x1000).bias, -16.0);
        assert_eq!(LodConfig::from_word(0x1FFF).bias, -1.0 / 256.0);
    }

    #[test]
    fn wrap_modes() {
        use WrapMode::*;
        let n = 8;
        assert_eq!(ClampToEdge.apply(-3, n), Some(0));
        assert_eq!(ClampToEdge.apply(9, n), Some(7));
        assert_eq!(ClampToBorder.apply(-1, n), None);
        assert_eq!(ClampToBorder.apply(8, n), None);
        assert_eq!(ClampToBorder.apply(7, n), Some(7));
        assert_eq!(Repeat.apply(-1, n), Some(7));
        assert_eq!(Repeat.apply(17, n), Some(1));
        assert_eq!(MirroredRepeat.apply(8, n), Some(7));
        assert_eq!(MirroredRepeat.apply(9, n), Some(6));
        assert_eq!(MirroredRepeat.apply(-1, n), Some(0));
        assert_eq!(MirroredRepeat.apply(-9, n), Some(7));
        assert_eq!(EdgeOrRepeat.apply(-1, n), Some(7));
        assert_eq!(EdgeOrRepeat.apply(20, n), Some(7));
        assert_eq!(BorderOrRepeat.apply(-1, n), Some(7));
        assert_eq!(BorderOrRepeat.apply(8, n), None);
        assert_eq!(Repeat6.apply(9, n), Some(1));
        assert_eq!(Repeat7.apply(i32::MIN, n), Some(0));
        assert_eq!(MirroredRepeat.apply(i32::MAX, n), Some(0));
    }

    #[test]
    fn mip_layout() {
        let l = LevelLayout::new(64, 32, TextureFormat::Rgba8, 15);
        // 64×32, 32×16, 16×8; 8×4 would be below 8.
        assert_eq!(l.count, 3);
        assert_eq!(
            l.levels()[1],
            LevelInfo {
                width: 32,
                height: 16,
                offset: 8192,
                bytes: 2048
            }
        );
        assert_eq!(l.levels()[2].offset, 8192 + 2048);
        assert_eq!(l.total_bytes, 8192 + 2048 + 512);
        let l = LevelLayout::new(1024, 1024, TextureFormat::Etc1, 2);
        assert_eq!(l.count, 3);
        assert_eq!(l.levels()[2].offset, 512 * 1024 + 128 * 1024);
        // Degenerate sizes keep level 0.
        let l = LevelLayout::new(0, 0, TextureFormat::I4, 5);
        assert_eq!(l.count, 1);
        assert_eq!(l.total_bytes, 0);
    }
}
