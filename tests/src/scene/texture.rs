//! Textures for scenes: upright RGBA images encoded into the PICA's texel formats and 8×8 Morton
//! tiling (with optional mip levels), plus the sampler parameters of a texture unit.
//!
//! Stage: host-side preparation of texture memory (what tex3ds or `C3D_TexUpload` produce).
//! Inputs: an [`Image`] (row 0 = top, RGBA8). Outputs: texture bytes exactly as the texture
//! units read them (`pica-raster.md` §5.2-§5.5) and the register values of
//! [`super::CommandList::bind_textures`]: TEXUNITi_BORDER_COLOR, _DIM, _PARAM, _LOD, _ADDR, _TYPE.
//!
//! Orientation: memory row 0 of a texture is the **top** of the image and texture coordinate
//! v = 0 samples the bottom row (§5.3), so an image stored top row first appears upright when
//! mapped with v increasing upwards.

use gpu_core::pixel::{encode_rgb5a1, encode_rgb565, encode_rgba4};
use gpu_core::tiling::tiled_index;
use pica_cmd::regs::texturing::{TextureFilter, TextureFormat, WrapMode};

use super::SceneError;

/// An RGBA8 image, row 0 at the top.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width × height` pixels, row-major from the top-left, each `[r, g, b, a]`.
    pub pixels: Vec<[u8; 4]>,
}

impl Image {
    /// An image whose pixel (x, y) (y from the top) is `f(x, y)`.
    pub fn from_fn(width: u32, height: u32, f: impl Fn(u32, u32) -> [u8; 4]) -> Self {
        let mut pixels = Vec::with_capacity((width * height) as usize);
        for y in 0..height {
            for x in 0..width {
                pixels.push(f(x, y));
            }
        }
        Image {
            width,
            height,
            pixels,
        }
    }

    /// Pixel (x, y), y from the top; transparent black outside.
    pub fn get(&self, x: u32, y: u32) -> [u8; 4] {
        if x >= self.width || y >= self.height {
            return [0; 4];
        }
        self.pixels
            .get((y * self.width + x) as usize)
            .copied()
            .unwrap_or([0; 4])
    }

    /// The next mip level: half size, each pixel the rounded mean of a 2×2 box.
    pub fn half(&self) -> Image {
        let (w, h) = ((self.width / 2).max(1), (self.height / 2).max(1));
        Image::from_fn(w, h, |x, y| {
            let p = [
                self.get(2 * x, 2 * y),
                self.get(2 * x + 1, 2 * y),
                self.get(2 * x, 2 * y + 1),
                self.get(2 * x + 1, 2 * y + 1),
            ];
            std::array::from_fn(|c| {
                let sum: u32 = p.iter().map(|q| u32::from(q[c])).sum();
                // ok: the mean of four u8 values fits in a u8.
                ((sum + 2) / 4) as u8
            })
        })
    }
}

/// Bits per texel of a texture format (`pica-raster.md` §5.2); `None` for unknown ids.
pub fn bits_per_texel(format: TextureFormat) -> Option<u32> {
    Some(match format {
        TextureFormat::Rgba8 => 32,
        TextureFormat::Rgb8 => 24,
        TextureFormat::Rgb5a1
        | TextureFormat::Rgb565
        | TextureFormat::Rgba4
        | TextureFormat::Ia8
        | TextureFormat::Hilo8 => 16,
        TextureFormat::I8 | TextureFormat::A8 | TextureFormat::Ia4 | TextureFormat::Etc1a4 => 8,
        TextureFormat::I4 | TextureFormat::A4 | TextureFormat::Etc1 => 4,
        TextureFormat::Unknown(_) => return None,
    })
}

/// Intensity of a pixel for the I/IA formats: the red channel (our convention; the hardware only
/// stores one value).
fn intensity(p: [u8; 4]) -> u8 {
    p[0]
}

/// A little-endian 16-bit texel as the first two bytes of a 4-byte buffer.
fn two(v: u16) -> ([u8; 4], usize) {
    let b = v.to_le_bytes();
    ([b[0], b[1], 0, 0], 2)
}

/// Encodes one level (width and height multiples of 8) into tiled texel bytes.
pub fn encode_level(image: &Image, format: TextureFormat) -> Result<Vec<u8>, SceneError> {
    let bits = bits_per_texel(format).ok_or(SceneError::UnsupportedTexture(format))?;
    let (w, h) = (image.width, image.height);
    if w % 8 != 0 || h % 8 != 0 || w == 0 || h == 0 {
        return Err(SceneError::TextureSize {
            width: w,
            height: h,
        });
    }
    let mut out = vec![0u8; (w * h * bits / 8) as usize];
    for y in 0..h {
        for x in 0..w {
            let p = image.get(x, y);
            let i = tiled_index(x, y, w) as usize;
            let (buf, n): ([u8; 4], usize) = match format {
                // Byte orders of §5.2.
                TextureFormat::Rgba8 => ([p[3], p[2], p[1], p[0]], 4),
                TextureFormat::Rgb8 => ([p[2], p[1], p[0], 0], 3),
                TextureFormat::Rgb5a1 => two(encode_rgb5a1(p)),
                TextureFormat::Rgb565 => two(encode_rgb565(p)),
                TextureFormat::Rgba4 => two(encode_rgba4(p)),
                TextureFormat::Ia8 => ([p[3], intensity(p), 0, 0], 2),
                TextureFormat::Hilo8 => ([p[1], p[0], 0, 0], 2),
                TextureFormat::I8 => ([intensity(p), 0, 0, 0], 1),
                TextureFormat::A8 => ([p[3], 0, 0, 0], 1),
                TextureFormat::Ia4 => ([(intensity(p) & 0xF0) | (p[3] >> 4), 0, 0, 0], 1),
                TextureFormat::I4 | TextureFormat::A4 => {
                    let v = if format == TextureFormat::I4 {
                        intensity(p) >> 4
                    } else {
                        p[3] >> 4
                    };
                    // Even Morton index in the low nibble.
                    if let Some(b) = out.get_mut(i / 2) {
                        *b |= if i.is_multiple_of(2) { v } else { v << 4 };
                    }
                    continue;
                }
                TextureFormat::Etc1 | TextureFormat::Etc1a4 | TextureFormat::Unknown(_) => {
                    return Err(SceneError::UnsupportedTexture(format));
                }
            };
            let bytes = &buf[..n];
            let start = i * bytes.len();
            if let Some(dst) = out.get_mut(start..start + bytes.len()) {
                dst.copy_from_slice(bytes);
            }
        }
    }
    Ok(out)
}

/// Sampler state of a texture unit (TEXUNITi_PARAM, _BORDER_COLOR, _LOD).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampler {
    /// Magnification filter.
    pub mag: TextureFilter,
    /// Minification filter.
    pub min: TextureFilter,
    /// Filter between mip levels.
    pub mip: TextureFilter,
    /// Wrap mode along s (u).
    pub wrap_s: WrapMode,
    /// Wrap mode along t (v).
    pub wrap_t: WrapMode,
    /// Border colour, `[r, g, b, a]`.
    pub border: [u8; 4],
    /// LOD bias in levels (fixed1.4.8 in the register).
    pub lod_bias: f32,
}

impl Default for Sampler {
    /// Linear filtering, clamp to edge (citro3d's `C3D_TexInit` defaults).
    fn default() -> Self {
        Sampler {
            mag: TextureFilter::Linear,
            min: TextureFilter::Linear,
            mip: TextureFilter::Nearest,
            wrap_s: WrapMode::ClampToEdge,
            wrap_t: WrapMode::ClampToEdge,
            border: [0; 4],
            lod_bias: 0.0,
        }
    }
}

impl Sampler {
    /// Nearest filtering with the given wrap mode on both axes.
    pub fn nearest(wrap: WrapMode) -> Self {
        Sampler {
            mag: TextureFilter::Nearest,
            min: TextureFilter::Nearest,
            wrap_s: wrap,
            wrap_t: wrap,
            ..Sampler::default()
        }
    }

    /// Linear filtering with the given wrap mode on both axes.
    pub fn linear(wrap: WrapMode) -> Self {
        Sampler {
            wrap_s: wrap,
            wrap_t: wrap,
            ..Sampler::default()
        }
    }
}

/// A texture placed in guest memory (handle returned by [`super::Scene::texture`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Texture {
    /// Physical address of the base level (multiple of 8).
    pub pa: u32,
    /// Bytes of all levels.
    pub size: u32,
    /// Base level width in texels.
    pub width: u32,
    /// Base level height in texels.
    pub height: u32,
    /// Texel format.
    pub format: TextureFormat,
    /// Highest mip level stored (0 = base level only).
    pub max_level: u32,
    /// Sampler state used when bound.
    pub sampler: Sampler,
}

impl Texture {
    /// The same texture sampled differently.
    pub fn with_sampler(mut self, sampler: Sampler) -> Self {
        self.sampler = sampler;
        self
    }
}

/// Encodes `image` and `levels − 1` box-filtered mip levels back to back (level n+1 right after
/// level n, §5.5). Every level must stay at least 8 × 8.
pub fn encode_mip_chain(
    image: &Image,
    format: TextureFormat,
    levels: u32,
) -> Result<Vec<u8>, SceneError> {
    let mut out = Vec::new();
    let mut level = image.clone();
    for n in 0..levels.max(1) {
        if n > 0 {
            level = level.half();
        }
        out.extend_from_slice(&encode_level(&level, format)?);
    }
    Ok(out)
}
