//! Texturing: texel formats, ETC1, texture-unit configuration, sampling and whole-texture
//! decoding (`pica-raster.md` §5).
//!
//! Stage: texture units 0-2 of the fragment pipeline (unit 3, the procedural texture, lives
//! elsewhere). Inputs: registers 0x080-0x09E (see [`config`]), texture data in [`PhysMem`]
//! (tiled 8×8 Morton, [`crate::pixel::tiling`]), per-fragment coordinates and derivatives. Outputs:
//! RGBA8 texel colours for the combiners, and RGBA8 images for the viewer.
//!
//! * [`format`](mod@format): the 14 texel formats, texel addressing and decoding.
//! * [`etc1`]: ETC1 / ETC1A4 blocks.
//! * [`config`]: [`TextureConfig`] and friends decoded from the register file; mip layout.
//! * [`sampler`]: wrap modes, border, nearest / bilinear filtering, mip selection from
//!   derivatives, cube maps, shadow compare.
//! * [`decode`]: whole-level decoding to RGBA8.
//! * [`special`]: per-draw specialised lookups over pre-decoded texels ([`UnitLookup`]).
//!
//! Typical use by the rasterizer, once per draw and unit:
//! `let s = Sampler::decoded(&mem, &TextureConfig::from_regs(&regs, 0))?;` then per fragment
//! `s.sample(u, v, w, &gradients)`.
//!
//! [`PhysMem`]: crate::memory::PhysMem

pub mod config;
pub mod decode;
pub mod etc1;
pub mod format;
pub mod sampler;
pub mod special;

pub use config::{
    CubeFace, Filter, LevelInfo, LevelLayout, LodConfig, RenderMode, ShadowConfig, TexUnitsControl,
    TextureConfig, TextureType, WrapMode,
};
pub use decode::{DecodedImage, decode_at, decode_level, decode_texture};
pub use format::TextureFormat;
pub use sampler::{DecodedTexels, Gradients, MemTexels, Sampler, TexelSource};
pub use special::UnitLookup;

/// Why a texture cannot be sampled or decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TextureError {
    /// The format id (TYPE bits 0-3) is 14 or 15.
    #[error("invalid texture format id {0}")]
    InvalidFormat(u32),
    /// Width or height is zero (or, for the decoders, larger than 2047).
    #[error("unusable texture size {width}x{height}")]
    EmptySize {
        /// Width in texels.
        width: u32,
        /// Height in texels.
        height: u32,
    },
    /// Texture data lies (partly) outside mapped memory.
    #[error("texture data at physical 0x{addr:08X}..+0x{len:X} is not in mapped memory")]
    Unmapped {
        /// First physical address of the range.
        addr: u32,
        /// Length of the range in bytes.
        len: u64,
    },
    /// A mip level beyond the chain was requested.
    #[error("mip level {level} requested but the texture has {levels} level(s)")]
    NoSuchLevel {
        /// Requested level.
        level: usize,
        /// Number of levels.
        levels: usize,
    },
}
